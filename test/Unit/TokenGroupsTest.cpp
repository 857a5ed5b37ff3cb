//===- TokenGroupsTest.cpp - the padded token groups, on the host --------===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The cursor over token groups that the group-aware cast and the k-grouped
// GEMM share (token_groups.cuh) is plain integer code: compiled here for the
// host, it must give well-formed offsets their exact groups, keep any
// offsets inside the capacity the launches allocate, and find every padded
// block's group from any position.
//
//===----------------------------------------------------------------------===//

#include "blockscale/Runtime/Gemm.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <random>
#include <vector>

#define __device__
#define __forceinline__ inline
namespace bs {
using std::max;
using std::min;
template <class T> T __ldg(const T *p) { return *p; }
} // namespace bs
#include "blockscale/Target/Cuda/Kernels/token_groups.cuh"
#undef __device__
#undef __forceinline__

using namespace blockscale;

namespace {
struct Group {
  int r0, r1, b0, nb;
};

std::vector<Group> walk(const std::vector<int> &offs, int limit) {
  bs::TokenGroupCursor c(offs.data(), int(offs.size()), limit);
  std::vector<Group> gs;
  while (c.next())
    gs.push_back({c.r0, c.r1, c.b0, c.nb});
  return gs;
}
} // namespace

TEST(TokenGroups, WellFormedOffsetsGiveTheirGroups) {
  std::vector<int> sizes = {0, 1, 127, 128, 129, 0, 300, 5};
  std::vector<int> offs;
  int t = 0;
  for (int s : sizes)
    offs.push_back(t += s);
  const int64_t cap = groupedTokenCapacity(t, int64_t(sizes.size()));
  const int limit = int(cap - 128 * int64_t(sizes.size()));
  std::vector<Group> gs = walk(offs, limit);
  ASSERT_EQ(gs.size(), sizes.size());
  int r = 0, b = 0;
  for (size_t g = 0; g < sizes.size(); ++g) {
    EXPECT_EQ(gs[g].r0, r);
    EXPECT_EQ(gs[g].r1, r + sizes[g]);
    EXPECT_EQ(gs[g].b0, b);
    EXPECT_EQ(gs[g].nb, (sizes[g] + 127) / 128);
    r += sizes[g];
    b += (sizes[g] + 127) / 128;
  }
  bs::TokenGroupCursor c(offs.data(), int(offs.size()), limit);
  EXPECT_EQ(c.totalBlocks(), b);
}

TEST(TokenGroups, AnyOffsetsStayInsideTheCapacity) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    const int G = 1 + int(rng() % 40);
    const int tokens = int(rng() % 5000);
    std::vector<int> offs(G);
    for (int &o : offs) // anything: negative, decreasing, past the tokens
      o = int(rng() % 12000) - 3000;
    const int64_t cap = groupedTokenCapacity(tokens, G);
    const int limit = int(cap - 128 * int64_t(G));
    std::vector<Group> gs = walk(offs, limit);
    ASSERT_EQ(int(gs.size()), G);
    int prevEnd = 0, blocks = 0;
    for (const Group &g : gs) {
      EXPECT_EQ(g.r0, prevEnd);
      EXPECT_GE(g.r1, g.r0);
      EXPECT_LE(g.r1, limit);
      EXPECT_EQ(g.b0, blocks);
      blocks += g.nb;
      prevEnd = g.r1;
    }
    EXPECT_LE(int64_t(blocks) * 128, cap) << "trial " << trial;
    // Every padded block is found from any earlier or later position, and
    // lies in its group's tokens.
    bs::TokenGroupCursor c(offs.data(), G, limit);
    for (int k = 0; k < 8 && blocks > 0; ++k) {
      const int b = int(rng() % blocks);
      ASSERT_TRUE(c.seek(b));
      EXPECT_GE(b, c.b0);
      EXPECT_LT(b, c.b0 + c.nb);
      EXPECT_LT(c.r0 + (b - c.b0) * 128, c.r1);
    }
    EXPECT_FALSE(c.seek(blocks));
  }
}
