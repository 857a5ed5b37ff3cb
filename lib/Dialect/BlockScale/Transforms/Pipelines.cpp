//===- Pipelines.cpp - named pipelines --------------------------*- C++ -*-===//

#include "blockscale/Dialect/BlockScale/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::blockscale;

void mlir::blockscale::buildJitPipeline(OpPassManager &pm,
                                        const JitPipelineOptions &options) {
  pm.addPass(createBlockScalePadScales());
  pm.addPass(createBlockScaleVerifyLayouts());
  BlockScaleSelectTilesOptions sel;
  sel.numSMs = options.numSMs;
  sel.smemBytes = options.smemBytes;
  sel.mHint = options.mHint;
  sel.force = options.force;
  pm.addPass(createBlockScaleSelectTiles(sel));
}

void mlir::blockscale::registerBlockScalePassesAndPipelines() {
  registerBlockScalePasses();
  PassPipelineRegistration<JitPipelineOptions>(
      "blockscale-jit-pipeline",
      "What the JIT runs before emitting CUDA: pad-scales, verify-layouts, "
      "select-tiles",
      buildJitPipeline);
}
