//===- DistributedTest.cpp - device plans and process groups --------------===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "blockscale/Distributed/Executor.h"
#include "blockscale/JIT/Plan.h"

#include "gtest/gtest.h"

using namespace blockscale::dist;

namespace {

std::string errorText(llvm::Error e) { return llvm::toString(std::move(e)); }

TEST(Grid, IndexIsRowMajor) {
  EXPECT_EQ(gridSize({2, 3, 2}), 12);
  EXPECT_EQ(gridIndex({2, 3, 2}, 0), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(gridIndex({2, 3, 2}, 7), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(gridIndex({2, 3, 2}, 11), (std::vector<int64_t>{1, 2, 1}));
}

TEST(Grid, GroupsShareTheOtherCoordinates) {
  // 2x2 (dp, tp): a tp collective pairs ranks of one row, dp of one column.
  EXPECT_EQ(groupRanks({2, 2}, {1}, 3), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(groupRanks({2, 2}, {1}, 0), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(groupRanks({2, 2}, {0}, 1), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(groupRanks({2, 2}, {0, 1}, 2),
            (std::vector<int64_t>{0, 1, 2, 3}));
  // Order follows the coordinates on the group's axes (the shard order).
  EXPECT_EQ(groupRanks({2, 3, 2}, {1}, 7), (std::vector<int64_t>{7, 9, 11}));
  EXPECT_EQ(groupRanks({2, 3, 2}, {2, 0}, 4),
            (std::vector<int64_t>{4, 10, 5, 11}));
  // Every member computes the same group.
  for (int64_t r : groupRanks({2, 3, 2}, {0, 1}, 5))
    EXPECT_EQ(groupRanks({2, 3, 2}, {0, 1}, r),
              groupRanks({2, 3, 2}, {0, 1}, 5));
}

constexpr const char *kFsdp = R"mlir(
shard.grid @dp(shape = 2)
func.func @fsdp(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>,
                %b: tensor<1024x512xf8E4M3FN>, %bs: tensor<8x4xf32>) -> tensor<256x512xbf16> {
  %s_a = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %s_b = shard.sharding @dp split_axes = [[], [0]] : !shard.sharding
  %s_full = shard.sharding @dp split_axes = [[]] : !shard.sharding
  %a0 = shard.shard %a to %s_a : tensor<256x1024xf8E4M3FN>
  %as0 = shard.shard %as to %s_a : tensor<256x8xf32>
  %b0 = shard.shard %b to %s_b : tensor<1024x512xf8E4M3FN>
  %bs0 = shard.shard %bs to %s_b : tensor<8x4xf32>
  %b1 = shard.shard %b0 to %s_full annotate_for_users : tensor<1024x512xf8E4M3FN>
  %bs1 = shard.shard %bs0 to %s_full annotate_for_users : tensor<8x4xf32>
  %c = blockscale.matmul %a0[%as0], %b1[%bs1] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<1024x512xf8E4M3FN>, tensor<8x4xf32> -> tensor<256x512xbf16>
  %s_c = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %c0 = shard.shard %c to %s_c : tensor<256x512xbf16>
  return %c0 : tensor<256x512xbf16>
}
)mlir";

TEST(Plan, FsdpGathersWeightsBeforeTheGemm) {
  auto part = partitionProgram(kFsdp);
  ASSERT_TRUE(bool(part)) << errorText(part.takeError());
  auto plan = buildDevicePlan(*part);
  ASSERT_TRUE(bool(plan)) << errorText(plan.takeError());
  EXPECT_EQ(plan->gridShape, (std::vector<int64_t>{2}));
  int gathers = 0, gemms = 0;
  for (const Step &s : plan->steps) {
    if (s.kind == Step::Kind::AllGather) {
      ++gathers;
      EXPECT_EQ(gemms, 0) << "the weight must be gathered before the GEMM";
      EXPECT_EQ(s.gridAxes, (std::vector<int>{0}));
      EXPECT_EQ(s.axis, 1);
    }
    if (s.kind == Step::Kind::Gemm) {
      ++gemms;
      EXPECT_EQ(s.gemm.m, 128);
      EXPECT_EQ(s.gemm.n, 512);
      EXPECT_EQ(s.gemm.k, 1024);
    }
  }
  EXPECT_EQ(gathers, 2) << plan->str(); // data and scales
  EXPECT_EQ(gemms, 1) << plan->str();
}

TEST(Plan, RejectsDynamicSizes) {
  auto plan = buildDevicePlan(R"mlir(
func.func @f(%a: tensor<?x1024xf8E4M3FN>, %as: tensor<?x8xf32>,
             %b: tensor<1024x512xf8E4M3FN>, %bs: tensor<8x4xf32>) -> tensor<?x512xbf16> {
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<?x1024xf8E4M3FN>, tensor<?x8xf32>, tensor<1024x512xf8E4M3FN>, tensor<8x4xf32> -> tensor<?x512xbf16>
  return %c : tensor<?x512xbf16>
}
)mlir");
  ASSERT_FALSE(bool(plan));
  EXPECT_NE(errorText(plan.takeError()).find("dynamic size"),
            std::string::npos);
}

TEST(Plan, ReportsParseErrorsWithTheirLocation) {
  auto plan = buildDevicePlan("func.func @f(%a: tensor<4xf32>) {\n  bogus\n}");
  ASSERT_FALSE(bool(plan));
  std::string e = errorText(plan.takeError());
  EXPECT_NE(e.find("cannot parse"), std::string::npos) << e;
  EXPECT_NE(e.find(":2:"), std::string::npos) << e;
}

} // namespace
