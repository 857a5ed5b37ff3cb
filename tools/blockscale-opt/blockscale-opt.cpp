//===- blockscale-opt.cpp - blockscale pass driver --------------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "blockscale/Dialect/BlockScale/Transforms/Passes.h"
#include "blockscale/Dialect/BlockScale/Transforms/ShardingInterfaceImpl.h"
#include "blockscale/VersionPrinter.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  blockscale::installVersionPrinter();
  mlir::DialectRegistry registry;
  mlir::blockscale::registerBlockScaleProgramDialects(registry);
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::blockscale::registerBlockScalePassesAndPipelines();
  mlir::shard::registerShardPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "blockscale optimizer driver\n", registry));
}
