//===- Context.cpp - the MLIR context of the JIT and the planner -*- C++
//-*-===//

#include "Context.h"
#include "blockscale/Dialect/BlockScale/IR/BlockScale.h"
#include "blockscale/Dialect/BlockScale/Transforms/ShardingInterfaceImpl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/Extensions/ShardingExtensions.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/Extensions/ShardingExtensions.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace blockscale::detail;

static mlir::DialectRegistry makeRegistry() {
  mlir::DialectRegistry r;
  r.insert<mlir::blockscale::BlockScaleDialect, mlir::func::FuncDialect,
           mlir::tensor::TensorDialect, mlir::arith::ArithDialect,
           mlir::shard::ShardDialect>();
  mlir::blockscale::registerShardingInterfaceExternalModels(r);
  mlir::func::registerShardingInterfaceExternalModels(r);
  mlir::tensor::registerShardingInterfaceExternalModels(r);
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
