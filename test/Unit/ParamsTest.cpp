//===- ParamsTest.cpp - host/device helpers of params.h ---------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "blockscale/Target/Cuda/Kernels/params.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace {

// bs::fastDiv replaces every `/` of the GEMM's work-unit decode; it must be
// exact for all dividends below 2^31.
void expectExact(int d, const std::vector<int> &ns) {
  const bs::FastDiv f = bs::makeFastDiv(d);
  for (int n : ns)
    ASSERT_EQ(bs::fastDiv(n, f), n / d) << n << " / " << d;
}

std::vector<int> dividendsFor(int d, std::mt19937 &rng) {
  const int64_t top = (int64_t(1) << 31) - 1;
  std::vector<int> ns = {0, 1, d - 1, d, int(top), int(top - 1)};
  if (d < top)
    ns.push_back(d + 1);
  // Around the multiples of d near the top, where the error term is largest.
  for (int64_t q = top / d; q > top / d - 4 && q >= 0; --q)
    for (int64_t e = -1; e <= 1; ++e)
      if (q * d + e >= 0 && q * d + e <= top)
        ns.push_back(int(q * d + e));
  std::uniform_int_distribution<int64_t> any(0, top);
  for (int i = 0; i < 200; ++i)
    ns.push_back(int(any(rng)));
  return ns;
}

TEST(FastDiv, ExactForSmallDivisors) {
  std::mt19937 rng(7);
  std::vector<int> small;
  for (int n = 0; n < 20000; ++n)
    small.push_back(n);
  for (int d = 1; d <= 2048; ++d) {
    expectExact(d, small);
    expectExact(d, dividendsFor(d, rng));
  }
}

TEST(FastDiv, ExactForLargeDivisors) {
  std::mt19937 rng(11);
  std::vector<int> ds = {(1 << 30) - 1, 1 << 30, (1 << 30) + 1, 0x7fffffff,
                         0x7ffffffe};
  for (int s = 11; s < 31; ++s)
    for (int e = -1; e <= 1; ++e)
      ds.push_back((1 << s) + e);
  std::uniform_int_distribution<int> any(2049, 0x7fffffff);
  for (int i = 0; i < 300; ++i)
    ds.push_back(any(rng));
  for (int d : ds)
    expectExact(d, dividendsFor(d, rng));
}

TEST(FastDiv, OneAndPowersOfTwo) {
  // d = 1 passes n through; d = 2^s needs mul = 2^31 and shift s - 1.
  EXPECT_EQ(bs::makeFastDiv(1).mul, 0u);
  EXPECT_EQ(bs::makeFastDiv(1).keep, ~0u);
  for (int s = 1; s < 31; ++s) {
    const bs::FastDiv f = bs::makeFastDiv(1 << s);
    EXPECT_EQ(f.mul, 1u << 31) << s;
    EXPECT_EQ(f.shift, s - 1) << s;
    EXPECT_EQ(f.keep, 0u) << s;
  }
}

} // namespace
