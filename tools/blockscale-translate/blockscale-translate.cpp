//===- blockscale-translate.cpp - MLIR to CUDA / PTX ------------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "blockscale/Target/Cuda/CudaEmitter.h"
#include "blockscale/VersionPrinter.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  blockscale::installVersionPrinter();
  mlir::blockscale::registerToCudaTranslations();
  return mlir::failed(mlir::mlirTranslateMain(
      argc, argv, "blockscale translation driver (CUDA / PTX emission)"));
}
