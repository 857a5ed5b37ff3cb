//===- Pipelines.cpp - named pipelines --------------------------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "blockscale/Dialect/BlockScale/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::blockscale;

::blockscale::TilingOptions JitPipelineOptions::tiling() const {
  ::blockscale::TilingOptions t;
  t.numSMs = numSMs;
  t.smemBytes = smemBytes;
  t.mHint = mHint;
  t.force = force;
  return t;
}

void mlir::blockscale::buildJitPipeline(
    OpPassManager &pm, const ::blockscale::TilingOptions &options) {
  // Before pad-scales, so that the dual casts' scale results get their
  // consumers' layouts.
  pm.addPass(createBlockScaleFuseDualQuantize());
  pm.addPass(createBlockScalePadScales());
  pm.addPass(createBlockScaleVerifyLayouts());
  BlockScaleSelectTilesOptions sel;
  sel.numSMs = options.numSMs;
  sel.smemBytes = options.smemBytes;
  sel.mHint = options.mHint;
  sel.force = options.force;
  pm.addPass(createBlockScaleSelectTiles(sel));
}

void mlir::blockscale::buildShardPipeline(OpPassManager &pm,
                                          const ShardPipelineOptions &options) {
  // The upstream shard passes crash on some inputs their verifiers accept
  // (docs/upstream-shard-issues.md): a guard before each.
  pm.addPass(createBlockScaleCheckShardings());
  pm.addNestedPass<func::FuncOp>(shard::createShardingPropagation());
  BlockScaleCheckShardAlignmentOptions align;
  align.allowPadding = options.allowPadding;
  pm.addPass(createBlockScaleCheckShardAlignment(align));
  BlockScaleCheckShardingsOptions guard;
  guard.beforePartition = true;
  pm.addPass(createBlockScaleCheckShardings(guard));
  pm.addNestedPass<func::FuncOp>(shard::createPartition());
  pm.addPass(createCanonicalizerPass());
}

void mlir::blockscale::registerBlockScalePassesAndPipelines() {
  registerBlockScalePasses();
  PassPipelineRegistration<ShardPipelineOptions>(
      "blockscale-shard-pipeline",
      "Sharded program -> per-device program: blockscale-check-shardings, "
      "sharding-propagation, blockscale-check-shard-alignment, "
      "blockscale-check-shardings{before-partition}, shard-partition, canonicalize",
      buildShardPipeline);
  PassPipelineRegistration<JitPipelineOptions>(
      "blockscale-jit-pipeline",
      "What the JIT runs before emitting CUDA: fuse-dual-quantize, "
      "pad-scales, verify-layouts, select-tiles",
      [](OpPassManager &pm, const JitPipelineOptions &options) {
        buildJitPipeline(pm, options.tiling());
      });
}
