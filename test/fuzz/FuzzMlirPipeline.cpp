//===- FuzzMlirPipeline.cpp - libFuzzer: parse, pipelines, emitter --------===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The MLIR entry surface of blockscale (issue 31): the fuzz input is MLIR
// text. It is parsed and verified in a context holding every dialect a
// blockscale program uses; then
//   - blockscale-fuzz-jit runs --blockscale-jit-pipeline
//     (fuse-dual-quantize, pad-scales, verify-layouts, select-tiles;
//     options from the input's first byte)
//     and the CUDA emitter (translateModuleToCuda) on what it produced;
//   - blockscale-fuzz-shard runs --blockscale-shard-pipeline (the guards,
//     sharding-propagation, the alignment check, shard-partition; the
//     input's first byte picks allow-padding).
// Diagnostics are expected and swallowed; a crash, a sanitizer report, a
// leak or a timeout is a finding. Built with -DBLOCKSCALE_FUZZ=ON and clang;
// scripts/fuzz.sh runs them time-boxed from the lit inputs as seeds.
//
//===----------------------------------------------------------------------===//

#include "blockscale/Dialect/BlockScale/Transforms/Passes.h"
#include "blockscale/Dialect/BlockScale/Transforms/ShardingInterfaceImpl.h"
#include "blockscale/Target/Cuda/CudaEmitter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#ifndef BLOCKSCALE_FUZZ_SHARD
#define BLOCKSCALE_FUZZ_SHARD 0
#endif

using namespace mlir;

static MLIRContext &context() {
  static MLIRContext *ctx = [] {
    DialectRegistry registry;
    mlir::blockscale::registerBlockScaleProgramDialects(registry);
    auto *c = new MLIRContext(registry, MLIRContext::Threading::DISABLED);
    c->loadAllAvailableDialects();
    // Swallow diagnostics: invalid input is the common case.
    c->getDiagEngine().registerHandler([](Diagnostic &) { return success(); });
    return c;
  }();
  return *ctx;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > 64 * 1024)
    return 0;
  MLIRContext &ctx = context();
  uint8_t knobs = data[0];
  // The MLIR parser recurses once per nesting level and overflows the stack
  // at a few thousand levels under ASan (~20000 without): an upstream
  // limitation (docs/upstream-shard-issues.md), skipped here so that the
  // fuzzer looks for blockscale's bugs.
  int depth = 0, maxDepth = 0;
  for (size_t i = 1; i < size; ++i) {
    char c = char(data[i]);
    depth += (c == '(' || c == '[' || c == '{' || c == '<') -
             (c == ')' || c == ']' || c == '}' || c == '>');
    maxDepth = std::max(maxDepth, depth);
  }
  if (maxDepth > 256)
    return 0;
  // MLIR's lexer reads up to a terminating NUL (as the tools' and the
  // planner's std::string / MemoryBuffer inputs have): copy.
  std::string text(reinterpret_cast<const char *>(data) + 1, size - 1);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &ctx);
  if (!module || failed(verify(*module)))
    return 0;
  PassManager pm(&ctx);
#if BLOCKSCALE_FUZZ_SHARD
  mlir::blockscale::ShardPipelineOptions opts;
  opts.allowPadding = knobs & 1;
  mlir::blockscale::buildShardPipeline(pm, opts);
  (void)failed(pm.run(*module));
#else
  // A few option values, good and bad, from the first byte.
  static const int64_t sms[] = {132, 1, 0, -5, 2, 4294967428LL, 66, 132};
  static const int64_t hints[] = {4096, 1, 0, -1, 128, 2147483648LL, 7, 4096};
  static const char *forces[] = {"", "bm=64,bn=16", "splits=3", "bm=,",
                                 "bm=256,bn=128,cluster=2", "", "", ""};
  ::blockscale::TilingOptions opts;
  opts.numSMs = sms[knobs & 7];
  opts.mHint = hints[(knobs >> 3) & 7];
  opts.force = forces[(knobs >> 5) & 7];
  mlir::blockscale::buildJitPipeline(pm, opts);
  if (succeeded(pm.run(*module))) {
    std::string cuda;
    llvm::raw_string_ostream os(cuda);
    (void)failed(mlir::blockscale::translateModuleToCuda(*module, os));
  }
#endif
  return 0;
}
