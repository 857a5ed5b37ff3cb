//===- PlanHardeningTest.cpp - the device planner on bad programs ---------===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Issue 31: the planner rejects, with a message, programs it used to read
// out of bounds or compute with wrapped sizes.
//
//===----------------------------------------------------------------------===//

#include "blockscale/JIT/Plan.h"

#include "gtest/gtest.h"

using namespace blockscale::dist;

namespace {

std::string errorText(llvm::Error e) { return llvm::toString(std::move(e)); }

template <class T> std::string failureOf(llvm::Expected<T> r) {
  if (r)
    return "";
  return errorText(r.takeError());
}

constexpr const char *kGemm = R"mlir(
func.func @f(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>,
             %b: tensor<1024x512xf8E4M3FN>, %bs: tensor<8x4xf32>) -> tensor<256x512xbf16> {
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<1024x512xf8E4M3FN>, tensor<8x4xf32> -> tensor<256x512xbf16>
  return %c : tensor<256x512xbf16>
}
)mlir";

TEST(PlanHardening, RejectsTwoGrids) {
  std::string p = std::string("shard.grid @a(shape = 2)\n"
                              "shard.grid @b(shape = 4)\n") +
                  kGemm;
  std::string e = failureOf(buildDevicePlan(p));
  EXPECT_NE(e.find("expected one shard.grid"), std::string::npos) << e;
  EXPECT_NE(e.find("@a and @b"), std::string::npos) << e;
  e = failureOf(describeShardings(p));
  EXPECT_NE(e.find("expected one shard.grid"), std::string::npos) << e;
}

TEST(PlanHardening, RejectsUnusableGrids) {
  for (const char *grid : {"shard.grid @g(shape = 0x2)\n",
                           "shard.grid @g(shape = ?x2)\n"}) {
    std::string e = failureOf(buildDevicePlan(std::string(grid) + kGemm));
    EXPECT_NE(e.find("to be static and >= 1"), std::string::npos) << e;
  }
  // 2^62 x 4 wraps int64; 2^21 does not, but is past the planner's limit.
  for (const char *grid : {"shard.grid @g(shape = 4611686018427387904x4)\n",
                           "shard.grid @g(shape = 2097152)\n"}) {
    std::string e = failureOf(buildDevicePlan(std::string(grid) + kGemm));
    EXPECT_NE(e.find("devices but its shape"), std::string::npos) << e;
  }
  EXPECT_EQ(failureOf(buildDevicePlan(std::string("shard.grid @g(shape = 2x2)\n") +
                                      kGemm)),
            "");
}

TEST(PlanHardening, RejectsCollectiveAxesOutsideTheGrid) {
  // A partitioned program whose all_reduce names an axis twice (the
  // verifier or the planner rejects it; the executor would build a group
  // from it).
  std::string e = failureOf(buildDevicePlan(R"mlir(
shard.grid @g(shape = 2)
func.func @f(%a: tensor<256x512xf8E4M3FN>, %as: tensor<256x4xf32>,
             %b: tensor<512x512xf8E4M3FN>, %bs: tensor<4x4xf32>) -> tensor<256x512xbf16> {
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<256x512xf8E4M3FN>, tensor<256x4xf32>, tensor<512x512xf8E4M3FN>, tensor<4x4xf32> -> tensor<256x512xbf16>
  %r = shard.all_reduce %c on @g grid_axes = [0, 0] : tensor<256x512xbf16> -> tensor<256x512xbf16>
  return %r : tensor<256x512xbf16>
}
)mlir"));
  EXPECT_FALSE(e.empty());
}

TEST(PlanHardening, DynamicSizesAreRejectedWithoutArithmetic) {
  // Plan.RejectsDynamicSizes under UBSan: ld * kDynamic used to overflow.
  std::string e = failureOf(buildDevicePlan(R"mlir(
func.func @f(%a: tensor<?x1024xf8E4M3FN>, %as: tensor<?x8xf32>,
             %b: tensor<1024x?xf8E4M3FN>, %bs: tensor<8x?xf32>) -> tensor<?x?xbf16> {
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<?x1024xf8E4M3FN>, tensor<?x8xf32>, tensor<1024x?xf8E4M3FN>, tensor<8x?xf32> -> tensor<?x?xbf16>
  return %c : tensor<?x?xbf16>
}
)mlir"));
  EXPECT_NE(e.find("dynamic size"), std::string::npos) << e;
}

} // namespace
