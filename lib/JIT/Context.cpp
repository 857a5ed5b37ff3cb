//===- Context.cpp - the MLIR context of the JIT and the planner -*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Context.h"
#include "blockscale/Dialect/BlockScale/Transforms/ShardingInterfaceImpl.h"

using namespace blockscale::detail;

static mlir::DialectRegistry makeRegistry() {
  mlir::DialectRegistry r;
  mlir::blockscale::registerBlockScaleProgramDialects(r);
  return r;
}

JitContext::JitContext()
    : ctx(makeRegistry(), mlir::MLIRContext::Threading::DISABLED) {
  ctx.loadAllAvailableDialects();
}

JitContext &JitContext::get() {
  static JitContext c;
  return c;
}
