//===- CudaEmitter.h - blockscale ops to CUDA sources -----------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The emitter writes a small CUDA translation unit per kernel: the spec line
// the runtime reads, the operand-type macro, an include of the kernel
// template family, and an extern "C" __global__ that instantiates it with the
// op's layouts, dtypes and tile configuration as template arguments.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_TARGET_CUDA_CUDAEMITTER_H
#define BLOCKSCALE_TARGET_CUDA_CUDAEMITTER_H

#include "blockscale/Runtime/KernelFamily.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

namespace mlir::blockscale {
class MatmulOp;
class QuantizeOp;
class QuantizeDualOp;
class GroupedMatmulOp;
class GroupedMatmulKOp;
class QuantizeGroupedTokensOp;

struct EmittedKernel {
  ::blockscale::KernelSpec spec;
  ::blockscale::GemmLaunchConfig launch; // GEMMs only
  std::string source;
};

/// The runtime's enums for the element type of an FP8 tensor (e4m3fn or
/// e5m2) and of a bf16 / f16 / f32 tensor.
::blockscale::Fp8Type toRuntimeFp8(Type fp8ElementType);
::blockscale::DType toRuntimeDType(Type floatElementType);

/// Needs a `tile` attribute (run --blockscale-select-tiles first). `debug`:
/// DebugOption flags compiled into the kernel.
FailureOr<EmittedKernel> emitGemmKernel(MatmulOp op, unsigned debug = 0);
FailureOr<EmittedKernel> emitQuantizeKernel(QuantizeOp op, unsigned debug = 0);
/// The dual-layout cast (QuantKernelSpec::dual): the spec's block is the
/// in-order result's, in the input's frame.
FailureOr<EmittedKernel> emitQuantizeDualKernel(QuantizeDualOp op,
                                                unsigned debug = 0);
/// The grouped kernel (gemm_grouped.cuh) of a grouped matmul with a tile
/// attribute; one kernel serves both groupings (they differ at launch).
FailureOr<EmittedKernel> emitGroupedGemmKernel(GroupedMatmulOp op,
                                               unsigned debug = 0);

/// The k-grouped kernel (gemm_kgrouped.cuh) of a grouped_matmul_k with a
/// tile attribute: the spec and source planGroupedGemm gives the equivalent
/// GroupedGemmDesc (grouping KContiguous).
FailureOr<EmittedKernel> emitGroupedGemmKKernel(GroupedMatmulKOp op,
                                                unsigned debug = 0);
/// The group-aware cast (cast_grouped.cuh) of a quantize_grouped_tokens:
/// GroupedQuantFamily::plan's spec and planGroupedQuantize's source.
FailureOr<EmittedKernel> emitGroupedQuantizeKernel(QuantizeGroupedTokensOp op,
                                                   unsigned debug = 0);

/// Emits every kernel op of `module` in order (matmul, grouped_matmul,
/// grouped_matmul_k, quantize, quantize_dual, quantize_grouped_tokens) and
/// hands each to `fn`, after the layout checks of
/// --blockscale-verify-layouts; fails on the first error, and on a module
/// with no kernel op. The one walk the translations and blockscale-gen share.
LogicalResult
forEachKernel(ModuleOp module,
              llvm::function_ref<LogicalResult(const EmittedKernel &)> fn,
              unsigned debug = 0);

/// Every matmul, grouped matmul (m- or k-grouped), quantize, quantize_dual
/// and quantize_grouped_tokens op of `module`,
/// in order, one source each, separated by `// ----- kernel <name>` lines.
LogicalResult translateModuleToCuda(ModuleOp module, llvm::raw_ostream &os);

/// Registers --blockscale-emit-cuda (and --blockscale-emit-ptx, which also
/// runs NVRTC) with the translation registry.
void registerToCudaTranslations();

} // namespace mlir::blockscale

#endif
