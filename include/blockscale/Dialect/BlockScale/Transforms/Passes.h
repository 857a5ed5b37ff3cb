//===- Passes.h - blockscale passes -----------------------------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_DIALECT_BLOCKSCALE_TRANSFORMS_PASSES_H
#define BLOCKSCALE_DIALECT_BLOCKSCALE_TRANSFORMS_PASSES_H

#include "blockscale/Dialect/BlockScale/IR/BlockScale.h"
#include "blockscale/Dialect/BlockScale/Transforms/TileModel.h"
#include "blockscale/Target/Cuda/Kernels/params.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::blockscale {

#define GEN_PASS_DECL
#include "blockscale/Dialect/BlockScale/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "blockscale/Dialect/BlockScale/Transforms/Passes.h.inc"

/// Options of the pipeline the JIT runs before emitting CUDA.
struct JitPipelineOptions : public PassPipelineOptions<JitPipelineOptions> {
  PassOptions::Option<int64_t> numSMs{
      *this, "num-sms", llvm::cl::desc("SM count of the target GPU"),
      llvm::cl::init(bs::kDefaultNumSMs)};
  PassOptions::Option<int64_t> smemBytes{
      *this, "smem-bytes", llvm::cl::desc("Dynamic shared memory per CTA"),
      llvm::cl::init(bs::kMaxDynamicSmemBytes)};
  PassOptions::Option<int64_t> mHint{
      *this, "m-hint",
      llvm::cl::desc("M to plan for when M is dynamic (0: none)"),
      llvm::cl::init(0)};
  PassOptions::Option<std::string> force{
      *this, "force", llvm::cl::desc("Forced tile configuration"),
      llvm::cl::init("")};

  ::blockscale::TilingOptions tiling() const;
};

/// Options of the sharding pipeline.
struct ShardPipelineOptions : public PassPipelineOptions<ShardPipelineOptions> {
  PassOptions::Option<bool> allowPadding{
      *this, "allow-padding",
      llvm::cl::desc("Pad shards to whole scale blocks instead of failing"),
      llvm::cl::init(false)};
};

/// check-shardings -> sharding-propagation -> check-shard-alignment ->
/// check-shardings{before-partition} -> shard-partition -> canonicalize: a
/// sharded program becomes the program of one device, with shard
/// collectives where data moves. The guards turn inputs the upstream passes
/// crash on into diagnostics.
void buildShardPipeline(OpPassManager &pm, const ShardPipelineOptions &options);

/// fuse-dual-quantize -> pad-scales -> verify-layouts -> select-tiles: what
/// the JIT runs, and what blockscale-opt --blockscale-jit-pipeline runs on a
/// whole program.
void buildJitPipeline(OpPassManager &pm,
                      const ::blockscale::TilingOptions &options);

/// Registers every pass and `--blockscale-jit-pipeline` for blockscale-opt.
void registerBlockScalePassesAndPipelines();

/// The checks of --blockscale-verify-layouts on every blockscale op nested
/// in `root` (or `root` itself): operand orders, row strides and leading
/// dimensions against TMA's rules, scale layouts against what the kernels
/// read, sizes and launch counts against the kernels' 32-bit parameters.
/// Emits one error per failing op and fails if any did; never rewrites IR.
/// The CUDA/PTX translations call it too, so that no kernel is emitted for
/// IR the pass rejects.
LogicalResult verifyKernelLayouts(Operation *root);

/// The checks of --blockscale-check-shardings on `module` (see Passes.td):
/// one error per offending op; failure if any.
LogicalResult checkShardings(ModuleOp module, bool beforePartition);

/// The scale layout the Hopper kernels read for an operand quantized with
/// `recipe` and playing the role of `isA ? A : B`.
ScaleLayoutAttr getRequiredScaleLayout(MLIRContext *ctx, ScaleRecipe recipe,
                                       bool isA);

} // namespace mlir::blockscale

#endif // BLOCKSCALE_DIALECT_BLOCKSCALE_TRANSFORMS_PASSES_H
