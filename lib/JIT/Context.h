//===- Context.h - the MLIR context of the JIT and the planner --*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Internal to BlockScaleJIT.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_LIB_JIT_CONTEXT_H
#define BLOCKSCALE_LIB_JIT_CONTEXT_H

#include "mlir/IR/MLIRContext.h"

#include <mutex>

namespace blockscale::detail {

/// The process's one MLIR context for the JIT (GEMM and cast plans) and the
/// sharding planner, with every dialect and interface either builds or
/// parses. MLIR work is serialized on `mu` (about a millisecond per kernel
/// plan); NVRTC compilation runs outside it. Threading is off: a host
/// program (a Python training process, say) gets no MLIR thread pool.
struct JitContext {
  std::mutex mu;
  mlir::MLIRContext ctx;
  static JitContext &get();

private:
  JitContext();
};

} // namespace blockscale::detail

#endif
