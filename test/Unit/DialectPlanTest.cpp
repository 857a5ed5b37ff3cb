// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The grouped kernels are planned by their runtime families directly (no
// module); the dialect's ops for them must give the same kernels: the same
// spec and the same source (one cache entry and one binary), here for the
// k-grouped weight gradient and its group-aware cast.
#include "blockscale/Dialect/BlockScale/IR/BlockScale.h"
#include "blockscale/Dialect/BlockScale/Transforms/Passes.h"
#include "blockscale/JIT/Jit.h"
#include "blockscale/Target/Cuda/CudaEmitter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"

#include "gtest/gtest.h"

using namespace blockscale;
namespace mbs = mlir::blockscale;

namespace {
struct DialectKernels {
  std::vector<mbs::EmittedKernel> kernels;
  std::string error;
};

/// Parses `ir`, runs the JIT pipeline (default device) and emits every
/// kernel of the module, in order.
DialectKernels emitThroughDialect(const std::string &ir) {
  DialectKernels out;
  mlir::MLIRContext ctx;
  ctx.loadDialect<mbs::BlockScaleDialect, mlir::func::FuncDialect>();
  std::string diags;
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
    diags += d.str() + "\n";
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(ir, &ctx);
  if (!module) {
    out.error = "parse: " + diags;
    return out;
  }
  mlir::PassManager pm(&ctx);
  mbs::buildJitPipeline(pm, TilingOptions());
  if (mlir::failed(pm.run(*module))) {
    out.error = "pipeline: " + diags;
    return out;
  }
  module->walk([&](mlir::Operation *op) {
    mlir::FailureOr<mbs::EmittedKernel> k = mlir::failure();
    if (auto g = llvm::dyn_cast<mbs::GroupedMatmulKOp>(op))
      k = mbs::emitGroupedGemmKKernel(g);
    else if (auto q = llvm::dyn_cast<mbs::QuantizeGroupedTokensOp>(op))
      k = mbs::emitGroupedQuantizeKernel(q);
    else
      return;
    if (mlir::failed(k))
      out.error += "emit: " + diags;
    else
      out.kernels.push_back(*k);
  });
  return out;
}

const char *mlirFp8(Fp8Type t) {
  return t == Fp8Type::E4M3 ? "f8E4M3FN" : "f8E5M2";
}
const char *mlirFloat(DType t) {
  return t == DType::F32 ? "f32" : t == DType::F16 ? "f16" : "bf16";
}
} // namespace

TEST(DialectPlan, KGroupedGemmMatchesTheFamilysPlan) {
  struct Case {
    int64_t groups, m, n, capacity;
    Fp8Type a, b;
    DType out;
    bool accumulate;
  } cases[] = {
      {8, 4096, 7168, 9216, Fp8Type::E4M3, Fp8Type::E4M3, DType::F32, false},
      {8, 4096, 7168, -1, Fp8Type::E4M3, Fp8Type::E4M3, DType::F32, true},
      {4, 2048, 1024, 4096, Fp8Type::E4M3, Fp8Type::E5M2, DType::BF16, false},
      {1, 128, 256, 128, Fp8Type::E5M2, Fp8Type::E4M3, DType::BF16, false},
      {64, 1536, 512, -1, Fp8Type::E4M3, Fp8Type::E4M3, DType::F32, true},
      // 4096 tokens per group with f32 output: the 128 x 192 tile.
      {4, 4096, 7168, 16896, Fp8Type::E4M3, Fp8Type::E4M3, DType::F32, true},
  };
  for (const Case &c : cases) {
    GroupedGemmDesc d;
    d.grouping = Grouping::KContiguous;
    d.groups = c.groups;
    d.m = c.m;
    d.n = c.n;
    d.a = c.a;
    d.b = c.b;
    d.out = c.out;
    d.accumulate = c.accumulate;
    // The tokens per group select-tiles sees: the capacity less one padding
    // block per group; a dynamic capacity without m-hint is planned as the
    // runtime plans a description without a hint.
    d.mPerGroupHint =
        c.capacity < 0
            ? 0
            : std::max(c.capacity - 128 * c.groups, c.groups) / c.groups;
    auto plan = planGroupedGemm(d);
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());

    std::string cap = c.capacity < 0 ? "?" : std::to_string(c.capacity);
    std::string scaleCols =
        c.capacity < 0 ? "?" : std::to_string(c.capacity / 128);
    std::string aT =
        llvm::formatv("tensor<{0}x{1}x{2}>", c.m, cap, mlirFp8(c.a));
    std::string asT = llvm::formatv("tensor<{0}x{1}xf32>", c.m, scaleCols);
    std::string bT =
        llvm::formatv("tensor<{0}x{1}x{2}>", c.n, cap, mlirFp8(c.b));
    std::string bsT = llvm::formatv("tensor<{0}x{1}xf32>", c.n, scaleCols);
    std::string oT = llvm::formatv("tensor<{0}xi32>", c.groups);
    std::string cT = llvm::formatv("tensor<{0}x{1}x{2}x{3}>", c.groups, c.m,
                                   c.n, mlirFloat(c.out));
    std::string ir = llvm::formatv(
        "func.func @f(%a: {0}, %as: {1}, %b: {2}, %bs: {3}, %o: {4}{6}) -> "
        "{5} {{\n"
        "  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%o : "
        "{4}){7} : {0}, {1}, {2}, {3} -> {5}\n"
        "  return %c : {5}\n}\n",
        aT, asT, bT, bsT, oT, cT, c.accumulate ? ", %acc: " + cT : "",
        c.accumulate ? " acc(%acc : " + cT + ")" : "");
    DialectKernels k = emitThroughDialect(ir);
    ASSERT_TRUE(k.error.empty()) << k.error << ir;
    ASSERT_EQ(k.kernels.size(), 1u) << ir;
    EXPECT_EQ(k.kernels[0].spec.serialize(), plan->spec.serialize()) << ir;
    EXPECT_EQ(k.kernels[0].spec.name, plan->spec.name);
    EXPECT_EQ(k.kernels[0].source, plan->source) << ir;
  }
}

TEST(DialectPlan, GroupedCastMatchesTheFamilysPlan) {
  struct Case {
    int64_t tokens, cols, groups, capacity;
    DType in;
    Fp8Type out;
  } cases[] = {
      {8192, 4096, 8, 9216, DType::BF16, Fp8Type::E4M3},
      {-1, 7168, 8, -1, DType::BF16, Fp8Type::E5M2},
      {1000, 256, 3, 1408, DType::F32, Fp8Type::E4M3},
      {-1, 512, 64, -1, DType::F16, Fp8Type::E4M3},
  };
  for (const Case &c : cases) {
    GroupedQuantDesc d;
    d.in = c.in;
    d.out = c.out;
    d.cols = c.cols;
    d.groups = c.groups;
    auto plan = planGroupedQuantize(d);
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());

    std::string t = c.tokens < 0 ? "?" : std::to_string(c.tokens);
    std::string cap = c.capacity < 0 ? "?" : std::to_string(c.capacity);
    std::string blocks =
        c.capacity < 0 ? "?" : std::to_string(c.capacity / 128);
    std::string xT =
        llvm::formatv("tensor<{0}x{1}x{2}>", t, c.cols, mlirFloat(c.in));
    std::string qT =
        llvm::formatv("tensor<{0}x{1}x{2}>", c.cols, cap, mlirFp8(c.out));
    std::string sT = llvm::formatv("tensor<{0}x{1}xf32>", c.cols, blocks);
    std::string oT = llvm::formatv("tensor<{0}xi32>", c.groups);
    std::string ir = llvm::formatv(
        "func.func @f(%x: {0}, %o: {1}) -> ({2}, {3}) {{\n"
        "  %q, %s = blockscale.quantize_grouped_tokens %x offsets(%o : {1}) "
        ": {0} -> {2}, {3}\n"
        "  return %q, %s : {2}, {3}\n}\n",
        xT, oT, qT, sT);
    DialectKernels k = emitThroughDialect(ir);
    ASSERT_TRUE(k.error.empty()) << k.error << ir;
    ASSERT_EQ(k.kernels.size(), 1u) << ir;
    EXPECT_EQ(k.kernels[0].spec.serialize(), plan->spec.serialize()) << ir;
    EXPECT_EQ(k.kernels[0].source, plan->source) << ir;
  }
}
