// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Description -> MLIR pipeline -> CUDA source, without compiling.
#include "blockscale/JIT/Jit.h"

#include "gtest/gtest.h"

using namespace blockscale;

TEST(Jit, PlansEveryForm) {
  for (GemmForm form : {GemmForm::Fwd, GemmForm::Dgrad, GemmForm::Wgrad}) {
    GemmDesc d;
    d.form = form;
    d.m = -1;
    d.n = 4096;
    d.k = 7168;
    d.numSMs = 132;
    auto plan = planGemm(d);
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
    EXPECT_EQ(plan->spec.gemm.wgrad(), form == GemmForm::Wgrad);
    EXPECT_NE(plan->ir.find("blockscale.matmul"), std::string::npos);
    EXPECT_NE(plan->ir.find("tile = #blockscale.tile<"), std::string::npos);
    EXPECT_NE(plan->ir.find("tensor<?x7168xf8E4M3FN>"), std::string::npos)
        << "M stays dynamic";
    EXPECT_NE(plan->source.find(plan->spec.name), std::string::npos);
    EXPECT_GT(plan->predictedSeconds, 0);
  }
}

TEST(Jit, SameConfigurationSameSource) {
  // Shapes are run-time arguments: two descriptions that select the same
  // tile share one source, hence one cache entry and one binary.
  GemmDesc a, b;
  a.n = 4096;
  a.k = 7168;
  b.n = 4096;
  b.k = 8192;
  a.forceTile = b.forceTile = "bm=128,bn=128,stages=4";
  auto pa = planGemm(a), pb = planGemm(b);
  ASSERT_TRUE(bool(pa) && bool(pb));
  EXPECT_EQ(pa->source, pb->source);
}

TEST(Jit, ForcedTileErrorsComeFromThePass) {
  GemmDesc d;
  d.n = 4096;
  d.k = 4096;
  d.forceTile = "bm=128,bn=176";
  auto plan = planGemm(d);
  ASSERT_FALSE(bool(plan));
  std::string e = llvm::toString(plan.takeError());
  EXPECT_NE(e.find("expected a forced tile the kernels implement"), std::string::npos) << e;
  d.forceTile = "bm=128,bn=192,stages=9";
  plan = planGemm(d);
  ASSERT_FALSE(bool(plan));
  e = llvm::toString(plan.takeError());
  EXPECT_NE(e.find("expected stages in [2, 4]"), std::string::npos) << e;
  d.forceTile = "tile=big";
  plan = planGemm(d);
  ASSERT_FALSE(bool(plan));
  EXPECT_NE(llvm::toString(plan.takeError()).find("expected key=integer"),
            std::string::npos);
}

TEST(Jit, CastKernelsForTheFiveCasts) {
  struct Case {
    int br, bc;
    bool transpose, colMajor;
    int kbr, kbc; // block in the input frame
    bool physT;
  } cases[] = {
      {1, 128, false, false, 1, 128, false},   // activations (LHS)
      {128, 1, false, true, 128, 1, true},     // activations 128x1 col-major
      {1, 128, true, false, 128, 1, true},     // dY^T 1x128
      {128, 128, true, true, 128, 128, false}, // W as the fwd B operand
      {128, 128, false, true, 128, 128, true}, // W^T as the dgrad B operand
  };
  for (const Case &c : cases) {
    QuantDesc q;
    q.blockRows = c.br;
    q.blockCols = c.bc;
    q.transpose = c.transpose;
    q.colMajor = c.colMajor;
    q.rows = 4096;
    q.cols = 7168;
    auto plan = planQuantize(q);
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
    EXPECT_EQ(plan->spec.quant.br, c.kbr);
    EXPECT_EQ(plan->spec.quant.bc, c.kbc);
    EXPECT_EQ(plan->spec.quant.transposed, c.physT);
    EXPECT_NE(plan->ir.find("scale_layout"), std::string::npos);
  }
}

TEST(Jit, DualCastsOfDyAndTheWeight) {
  struct Case {
    int br, bc;
    bool transpose, colMajor;
    int kbr, kbc; // the in-order result's block in the input frame
  } cases[] = {
      {1, 128, false, false, 1, 128},   // dY, and dY^T 1x128
      {128, 128, true, true, 128, 128}, // W as the fwd and dgrad B operands
      {128, 1, true, true, 1, 128},     // x^T 128x1 in order, x 128x1 col-major
  };
  for (const Case &c : cases) {
    QuantDesc q;
    q.blockRows = c.br;
    q.blockCols = c.bc;
    q.transpose = c.transpose;
    q.colMajor = c.colMajor;
    q.rows = 4096;
    q.cols = 7168;
    q.dual = true;
    auto plan = planQuantize(q);
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
    EXPECT_TRUE(plan->spec.quant.dual);
    EXPECT_FALSE(plan->spec.quant.transposed);
    EXPECT_EQ(plan->spec.quant.br, c.kbr);
    EXPECT_EQ(plan->spec.quant.bc, c.kbc);
    EXPECT_NE(plan->ir.find("blockscale.quantize_dual"), std::string::npos);
    EXPECT_NE(plan->ir.find("t_scale_layout"), std::string::npos);
    EXPECT_NE(plan->source.find("/*DUAL=*/true"), std::string::npos);
    EXPECT_NE(plan->source.find(plan->spec.name), std::string::npos);
  }
  // The single cast of the same description is unchanged.
  QuantDesc single;
  single.rows = 4096;
  single.cols = 7168;
  auto plan = planQuantize(single);
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  EXPECT_FALSE(plan->spec.quant.dual);
  EXPECT_EQ(plan->ir.find("quantize_dual"), std::string::npos);
}

TEST(Jit, DualCastWithATransposedFirstResultFails) {
  // dY^T first: the in-order result must come first.
  QuantDesc q;
  q.transpose = true;
  q.rows = 4096;
  q.cols = 7168;
  q.dual = true;
  auto plan = planQuantize(q);
  ASSERT_FALSE(bool(plan));
  llvm::consumeError(plan.takeError());
}

TEST(Jit, InvalidDescriptionsFailBeforeMlir) {
  GemmDesc d;
  d.n = 4096;
  d.k = 1000;
  auto plan = planGemm(d);
  ASSERT_FALSE(bool(plan));
  EXPECT_NE(llvm::toString(plan.takeError()).find("pad K to 1008"), std::string::npos);
}
