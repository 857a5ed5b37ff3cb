// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "blockscale/Runtime/Gemm.h"
#include "blockscale/Runtime/Runtime.h"

#include "gtest/gtest.h"

using namespace blockscale;

static std::string error(llvm::Error e) { return llvm::toString(std::move(e)); }

TEST(GemmDesc, ValidShapesPass) {
  GemmDesc d;
  d.n = 2112;
  d.k = 7168;
  EXPECT_FALSE(bool(d.validate()));
  d.m = 77;
  EXPECT_FALSE(bool(d.validate()));
}

TEST(GemmDesc, BadShapesNameTheFix) {
  GemmDesc d;
  d.n = 2112;
  d.k = 1000;
  std::string e = error(d.validate());
  EXPECT_NE(e.find("K to be a multiple of 16"), std::string::npos) << e;
  EXPECT_NE(e.find("pad K to 1008"), std::string::npos) << e;
  d.k = 1024;
  d.n = 100;
  e = error(d.validate());
  EXPECT_NE(e.find("pad N to 104"), std::string::npos) << e;
  d.n = 128;
  d.m = 0;
  e = error(d.validate());
  EXPECT_NE(e.find("0 < M < 2^31 or M = -1"), std::string::npos) << e;
  d.m = int64_t(1) << 40; // sizes the kernel cannot count are refused
  e = error(d.validate());
  EXPECT_NE(e.find("0 < M < 2^31"), std::string::npos) << e;
  d.m = -1;
  d.mHint = 0;
  e = error(d.validate());
  EXPECT_NE(e.find("mHint"), std::string::npos) << e;
  d.mHint = 4096;
  d.m = 128;
  d.accumulate = true;
  e = error(d.validate());
  EXPECT_NE(e.find("needs out = f32"), std::string::npos) << e;
  d.out = DType::F16;
  d.accumulate = false;
  e = error(d.validate());
  EXPECT_NE(e.find("bf16 or f32"), std::string::npos) << e;
}

TEST(GemmDesc, KeysDistinguishDescriptions) {
  GemmDesc a, b;
  a.n = b.n = 256;
  a.k = b.k = 256;
  EXPECT_EQ(a.key(), b.key());
  b.form = GemmForm::Dgrad;
  EXPECT_NE(a.key(), b.key());
  b = a;
  b.forceTile = "bm=64";
  EXPECT_NE(a.key(), b.key());
}

TEST(QuantDesc, Validation) {
  QuantDesc q;
  q.cols = 256;
  EXPECT_FALSE(bool(q.validate()));
  q.blockRows = 64;
  EXPECT_NE(error(q.validate()).find("1x128, 128x1 or 128x128"), std::string::npos);
  q.blockRows = 1;
  q.cols = 100;
  EXPECT_NE(error(q.validate()).find("pad cols to 104"), std::string::npos);
  q.cols = 256;
  q.colMajor = true; // physically transposed: rows become FP8 rows
  q.rows = 100;
  EXPECT_NE(error(q.validate()).find("rows to be a multiple of 16"), std::string::npos);
}

TEST(QuantDesc, ScaleGeometryFollowsPadScales) {
  QuantDesc q;
  q.cols = 1000;
  q.rows = 300;
  q.blockRows = 128; // 128x1 of the logical (300, 1000): row-major (3, 1000)
  q.blockCols = 1;
  ScaleGeometry g = llvm::cantFail(quantScaleGeometry(q, 300, 0));
  EXPECT_EQ(g.rows, 3);
  EXPECT_EQ(g.cols, 1000);
  EXPECT_EQ(g.strideRow, 1000);
  EXPECT_EQ(g.strideCol, 1);
  q.blockRows = q.blockCols = 128;
  q.transpose = true; // logical (1000, 300): 8 x 3 blocks, K-major padded
  g = llvm::cantFail(quantScaleGeometry(q, 300, 0));
  EXPECT_EQ(g.rows, 8);
  EXPECT_EQ(g.cols, 3);
  EXPECT_EQ(g.strideRow, 1);
  EXPECT_EQ(g.strideCol, 8);
  EXPECT_EQ(g.allocElements, 24);
}

TEST(ScaleLayout, OneRuleForEveryRecipe) {
  // 1x128 and 128x128: dim 0 contiguous; 128x1: dim 1; ld padded to 4.
  ScaleGeometry a = llvm::cantFail(scaleGeometry(1, 128, 4097, 7168));
  EXPECT_EQ(a.rows, 4097);
  EXPECT_EQ(a.cols, 56);
  EXPECT_EQ(a.strideRow, 1);
  EXPECT_EQ(a.strideCol, 4100);
  EXPECT_EQ(a.allocElements, 4100 * 56);
  ScaleGeometry w = llvm::cantFail(scaleGeometry(128, 1, 7168, 2111));
  EXPECT_EQ(w.rows, 56);
  EXPECT_EQ(w.cols, 2111);
  EXPECT_EQ(w.strideRow, 2112);
  EXPECT_EQ(w.strideCol, 1);
  ScaleGeometry b = llvm::cantFail(scaleGeometry(128, 128, 7168, 2112));
  EXPECT_EQ(b.strideRow, 1);
  EXPECT_EQ(b.strideCol, 56);
  EXPECT_TRUE(scaleRowMajor(128, 1));
  EXPECT_FALSE(scaleRowMajor(1, 128));
  EXPECT_FALSE(scaleRowMajor(128, 128));
}

TEST(ScaleLayout, BadInputIsAnErrorNotAWrappedSize) {
  std::string e = error(scaleGeometry(64, 128, 10, 10).takeError());
  EXPECT_NE(e.find("1x128, 128x1 or 128x128"), std::string::npos) << e;
  e = error(scaleGeometry(1, 128, -1, 10).takeError());
  EXPECT_NE(e.find("sizes >= 0"), std::string::npos) << e;
  e = error(scaleGeometry(1, 128, 100, 256, 50).takeError());
  EXPECT_NE(e.find("multiple of 4"), std::string::npos) << e;
  e = error(scaleGeometry(1, 128, 100, 256, 96).takeError());
  EXPECT_NE(e.find(">= 100"), std::string::npos) << e;
  // The allocation would wrap int64: refused.
  e = error(scaleGeometry(1, 128, int64_t(1) << 62, int64_t(1) << 40)
                .takeError());
  EXPECT_NE(e.find("overflow"), std::string::npos) << e;
  e = error(scaleGeometry(128, 1, 128, INT64_MAX).takeError());
  EXPECT_NE(e.find("overflow"), std::string::npos) << e;
}
