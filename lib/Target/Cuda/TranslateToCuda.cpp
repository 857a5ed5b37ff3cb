//===- TranslateToCuda.cpp - blockscale ops to CUDA sources -----*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "blockscale/Dialect/BlockScale/IR/BlockScale.h"
#include "blockscale/Dialect/BlockScale/Transforms/Passes.h"
#include "blockscale/Runtime/Nvrtc.h"
#include "blockscale/Target/Cuda/CudaEmitter.h"
#include "blockscale/Target/Cuda/Kernels/params.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::blockscale;
namespace bsrt = ::blockscale;

bsrt::Fp8Type mlir::blockscale::toRuntimeFp8(Type t) {
  return *getFP8Format(t) == FP8Format::e4m3fn ? bsrt::Fp8Type::E4M3
                                               : bsrt::Fp8Type::E5M2;
}

bsrt::DType mlir::blockscale::toRuntimeDType(Type t) {
  if (t.isF32())
    return bsrt::DType::F32;
  if (t.isF16())
    return bsrt::DType::F16;
  return bsrt::DType::BF16;
}

FailureOr<EmittedKernel> mlir::blockscale::emitGemmKernel(MatmulOp op,
                                                         unsigned debug) {
  TileConfigAttr tile = op.getTileAttr();
  if (!tile)
    return op.emitOpError() << "expected a tile attribute but got none; run "
                               "--blockscale-select-tiles (or "
                               "--blockscale-jit-pipeline) first";
  if (op.getALayout() != Layout::row_major ||
      op.getBLayout() != Layout::col_major || !op.getAScaleLayoutAttr() ||
      !op.getBScaleLayoutAttr())
    return op.emitOpError() << "expected verified layouts (row_major A, "
                               "col_major B, scale layouts set) but got "
                               "others; run --blockscale-jit-pipeline";
  EmittedKernel k;
  k.spec.kind = bsrt::KernelKind::Gemm;
  bsrt::GemmKernelSpec &g = k.spec.gemm;
  // Forward and grad-input are the same kernel (128x128 B scales): one
  // binary serves both.
  g.form = op.getForm() == GemmForm::wgrad ? bsrt::GemmForm::Wgrad
                                           : bsrt::GemmForm::Fwd;
  g.a = toRuntimeFp8(op.getA().getType().getElementType());
  g.b = toRuntimeFp8(op.getB().getType().getElementType());
  g.out = toRuntimeDType(op.getC().getType().getElementType());
  g.accumulate = static_cast<bool>(op.getAcc());
  g.bm = tile.getBm();
  g.bn = tile.getBn();
  g.stages = tile.getStages();
  g.cluster = tile.getCluster();
  g.ksplit = tile.getKsplit();
  // Forward tiles may be specialized for a static K (the kernel falls back
  // to its run-time K loop for a launch with workspace splits, so the
  // specialization only costs a kernel per K).
  int64_t kStatic = op.getA().getType().getShape()[1];
  if (!ShapedType::isDynamic(kStatic))
    g.kblocks = bsrt::stageAlignedKBlocks(g, kStatic, tile.getSplits());
  k.spec.debug = debug;
  k.spec.name = bsrt::kernelName(k.spec);
  k.launch.splits = tile.getSplits();
  k.launch.raster = tile.getRaster();
  std::string comment =
      llvm::formatv("blockscale.matmul {0}: A {1} 1x128, B {2} {3}, C {4}{5}",
                    stringifyGemmForm(op.getForm()), bsrt::toString(g.a),
                    bsrt::toString(g.b), g.wgrad() ? "128x1" : "128x128",
                    bsrt::toString(g.out), g.accumulate ? " (+=)" : "")
          .str();
  k.source = bsrt::generateCudaSource(k.spec, comment);
  return k;
}

// The casts' kernel template has hang checks but no timeline stamps (the
// runtime's QuantDesc refuses the flag the same way).
static LogicalResult checkCastDebug(Operation *op, unsigned debug) {
  if (debug & ~unsigned(bsrt::DebugHang))
    return op->emitOpError()
           << "expected debug options from hang (casts have no timeline "
              "stamps) but got "
           << ((debug & bsrt::DebugTimeline) ? std::string("timeline")
                                             : "flags " + std::to_string(debug))
           << "; drop it for the cast kernels";
  return success();
}

FailureOr<EmittedKernel>
mlir::blockscale::emitQuantizeKernel(QuantizeOp op, unsigned debug) {
  if (op.getRecipe() == ScaleRecipe::tensorwise)
    return op.emitOpError() << "expected a blockwise recipe (1x128, 128x1, "
                               "128x128) but got tensorwise, which has no "
                               "kernel template";
  if (failed(checkCastDebug(op, debug)))
    return failure();
  EmittedKernel k;
  k.spec.kind = bsrt::KernelKind::Quantize;
  bsrt::QuantKernelSpec &q = k.spec.quant;
  q.in = toRuntimeDType(op.getInput().getType().getElementType());
  q.out = toRuntimeFp8(op.getResult().getType().getElementType());
  auto [lr, lc] = getBlockShape(op.getRecipe());
  // The kernel works in the input's frame.
  q.br = op.getTranspose() ? lc : lr;
  q.bc = op.getTranspose() ? lr : lc;
  q.transposed = op.writesTransposed();
  k.spec.debug = debug;
  k.spec.name = bsrt::kernelName(k.spec);
  std::string comment =
      llvm::formatv("blockscale.quantize {0}{1}, result {2}",
                    getRecipeDisplayName(op.getRecipe()),
                    op.getTranspose() ? " of the transpose" : "",
                    stringifyLayout(op.getLayout()))
          .str();
  k.source = bsrt::generateCudaSource(k.spec, comment);
  return k;
}

FailureOr<EmittedKernel>
mlir::blockscale::emitQuantizeDualKernel(QuantizeDualOp op, unsigned debug) {
  // (The verifier's rules; the kernel template has no other form.)
  auto [br, bc] = op.getInputFrameBlock();
  if (op.writesTransposed() || !((br == 1 || br == 128) && bc == 128))
    return op.emitOpError()
           << "expected the result in input order with 1x128 or 128x128 "
              "blocks in the input's frame but got "
           << (op.writesTransposed() ? "a transposed result" : "other blocks")
           << "; use two blockscale.quantize ops";
  if (failed(checkCastDebug(op, debug)))
    return failure();
  EmittedKernel k;
  k.spec.kind = bsrt::KernelKind::Quantize;
  bsrt::QuantKernelSpec &q = k.spec.quant;
  q.in = toRuntimeDType(op.getInput().getType().getElementType());
  q.out = toRuntimeFp8(op.getResult().getType().getElementType());
  // The in-order result's blocks in the input's frame; the transposed
  // result's are those rotated, which the spec implies.
  q.br = br;
  q.bc = bc;
  q.transposed = false;
  q.dual = true;
  k.spec.debug = debug;
  k.spec.name = bsrt::kernelName(k.spec);
  std::string comment =
      llvm::formatv("blockscale.quantize_dual {0}{1}, result {2}, and its "
                    "transpose",
                    getRecipeDisplayName(op.getRecipe()),
                    op.getTranspose() ? " of the transpose" : "",
                    stringifyLayout(op.getLayout()))
          .str();
  k.source = bsrt::generateCudaSource(k.spec, comment);
  return k;
}

FailureOr<EmittedKernel>
mlir::blockscale::emitGroupedGemmKernel(GroupedMatmulOp op, unsigned debug) {
  TileConfigAttr tile = op.getTileAttr();
  if (!tile)
    return op.emitOpError() << "expected a tile attribute but got none; run "
                               "--blockscale-select-tiles (or "
                               "--blockscale-jit-pipeline) first";
  if (op.getALayout() != Layout::row_major ||
      op.getBLayout() != Layout::col_major)
    return op.emitOpError()
           << "expected row_major A and col_major (K-contiguous) B for the "
              "grouped kernel but got a_layout = "
           << stringifyLayout(op.getALayout())
           << ", b_layout = " << stringifyLayout(op.getBLayout());
  bsrt::Fp8Type at = toRuntimeFp8(op.getA().getType().getElementType());
  bsrt::Fp8Type bt = toRuntimeFp8(op.getB().getType().getElementType());
  bsrt::DType out = toRuntimeDType(op.getC().getType().getElementType());
  // A's rows (contiguous: (rows, K); masked: (G, mMax, K)) are K deep.
  int64_t kStatic = op.getA().getType().getShape().back();
  auto spec = bsrt::GroupedGemmFamily::specFor(
      at, bt, out, int(tile.getBm()), int(tile.getBn()),
      int(tile.getStages()), debug, /*kGrouped=*/false, /*accumulate=*/false,
      ShapedType::isDynamic(kStatic) ? 0 : kStatic, int(tile.getCluster()));
  if (!spec)
    return op.emitOpError() << llvm::toString(spec.takeError());
  EmittedKernel k;
  k.spec = *spec;
  k.launch.splits = 1;
  k.launch.raster = int(tile.getRaster());
  k.source = bsrt::generateCudaSource(
      k.spec, bsrt::describeGroupedGemm(op.getGrouping() == Grouping::m_masked
                                            ? bsrt::Grouping::Masked
                                            : bsrt::Grouping::Contiguous,
                                        at, bt, out, /*accumulate=*/false));
  return k;
}

FailureOr<EmittedKernel>
mlir::blockscale::emitGroupedGemmKKernel(GroupedMatmulKOp op, unsigned debug) {
  TileConfigAttr tile = op.getTileAttr();
  if (!tile)
    return op.emitOpError() << "expected a tile attribute but got none; run "
                               "--blockscale-select-tiles (or "
                               "--blockscale-jit-pipeline) first";
  bsrt::Fp8Type at = toRuntimeFp8(
      cast<RankedTensorType>(op.getA().getType()).getElementType());
  bsrt::Fp8Type bt = toRuntimeFp8(
      cast<RankedTensorType>(op.getB().getType()).getElementType());
  bsrt::DType out = toRuntimeDType(
      cast<RankedTensorType>(op.getC().getType()).getElementType());
  bool accumulate = static_cast<bool>(op.getAcc());
  auto spec = bsrt::GroupedGemmFamily::specFor(
      at, bt, out, int(tile.getBm()), int(tile.getBn()), int(tile.getStages()),
      debug, /*kGrouped=*/true, accumulate);
  if (!spec)
    return op.emitOpError() << llvm::toString(spec.takeError());
  EmittedKernel k;
  k.spec = *spec;
  k.launch.splits = 1;
  k.launch.raster = int(tile.getRaster());
  // The comment planGroupedGemm writes, so that both paths give one source.
  k.source = bsrt::generateCudaSource(
      k.spec, bsrt::describeGroupedGemm(bsrt::Grouping::KContiguous, at, bt,
                                        out, accumulate));
  return k;
}

FailureOr<EmittedKernel>
mlir::blockscale::emitGroupedQuantizeKernel(QuantizeGroupedTokensOp op,
                                            unsigned debug) {
  auto in = cast<RankedTensorType>(op.getInput().getType());
  bsrt::GroupedQuantDesc d;
  d.in = toRuntimeDType(in.getElementType());
  d.out = toRuntimeFp8(
      cast<RankedTensorType>(op.getResult().getType()).getElementType());
  d.cols = in.getDimSize(1);
  d.groups = op.getNumGroups();
  d.debug = debug;
  // The runtime family's plan: its checks and its spec.
  auto spec = bsrt::GroupedQuantFamily::plan(d);
  if (!spec)
    return op.emitOpError() << llvm::toString(spec.takeError());
  EmittedKernel k;
  k.spec = *spec;
  k.source = bsrt::generateCudaSource(
      k.spec, bsrt::describeGroupedQuantize(d.in, d.out));
  return k;
}

LogicalResult mlir::blockscale::forEachKernel(
    ModuleOp module, function_ref<LogicalResult(const EmittedKernel &)> fn,
    unsigned debug) {
  // No kernel for IR that --blockscale-verify-layouts rejects.
  if (failed(verifyKernelLayouts(module)))
    return failure();
  int kernels = 0;
  WalkResult r = module.walk([&](Operation *op) {
    FailureOr<EmittedKernel> k = failure();
    if (auto mm = dyn_cast<MatmulOp>(op))
      k = emitGemmKernel(mm, debug);
    else if (auto q = dyn_cast<QuantizeOp>(op))
      k = emitQuantizeKernel(q, debug);
    else if (auto d = dyn_cast<QuantizeDualOp>(op))
      k = emitQuantizeDualKernel(d, debug);
    else if (auto g = dyn_cast<GroupedMatmulOp>(op))
      k = emitGroupedGemmKernel(g, debug);
    else if (auto gk = dyn_cast<GroupedMatmulKOp>(op))
      k = emitGroupedGemmKKernel(gk, debug);
    else if (auto gq = dyn_cast<QuantizeGroupedTokensOp>(op))
      k = emitGroupedQuantizeKernel(gq, debug);
    else
      return WalkResult::advance();
    ++kernels;
    if (failed(k) || failed(fn(*k)))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (r.wasInterrupted())
    return failure();
  // An empty result would otherwise look like success (a wrong file, or a
  // function whose ops were all folded away).
  if (kernels == 0) {
    // An implicit module has no location of its own: point at its first op.
    Location loc = module.getBody()->empty()
                       ? module.getLoc()
                       : module.getBody()->front().getLoc();
    return emitError(loc)
           << "expected at least one blockscale kernel op (matmul, "
              "grouped_matmul, grouped_matmul_k, quantize, quantize_dual or "
              "quantize_grouped_tokens) in the module but got none";
  }
  return success();
}

LogicalResult mlir::blockscale::translateModuleToCuda(ModuleOp module,
                                                      raw_ostream &os) {
  return forEachKernel(module, [&](const EmittedKernel &k) -> LogicalResult {
    os << "// ----- kernel " << k.spec.name << "\n" << k.source;
    if (k.spec.kind == bsrt::KernelKind::Gemm)
      os << "// launch: splits=" << k.launch.splits
         << " raster=" << k.launch.raster << "\n";
    else if (k.spec.kind == bsrt::KernelKind::GroupedGemm)
      os << "// launch: raster=" << k.launch.raster << "\n";
    return success();
  });
}

static void registerDialects(DialectRegistry &registry) {
  registry.insert<BlockScaleDialect, func::FuncDialect, arith::ArithDialect,
                  tensor::TensorDialect, shard::ShardDialect>();
}

void mlir::blockscale::registerToCudaTranslations() {
  TranslateFromMLIRRegistration emitCuda(
      "blockscale-emit-cuda",
      "Emit the CUDA source of every blockscale kernel in the module",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError() << "expected a builtin.module";
        return translateModuleToCuda(module, os);
      },
      registerDialects);
  TranslateFromMLIRRegistration emitPtx(
      "blockscale-emit-ptx",
      "Emit the CUDA source of every kernel and compile it to sm_90a PTX "
      "with NVRTC",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError() << "expected a builtin.module";
        return forEachKernel(module, [&](const EmittedKernel &k) -> LogicalResult {
          bsrt::CompileOptions opts;
          opts.ptx = true;
          auto out = bsrt::compileCuda(k.source, k.spec.name, opts);
          if (!out)
            return module.emitError()
                   << "NVRTC: " << llvm::toString(out.takeError());
          os << "// ----- kernel " << k.spec.name << "\n" << out->binary;
          return success();
        });
      },
      registerDialects);
}
