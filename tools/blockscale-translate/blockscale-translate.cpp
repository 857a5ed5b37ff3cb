//===- blockscale-translate.cpp - MLIR to CUDA / PTX ------------*- C++ -*-===//

#include "blockscale/Target/Cuda/CudaEmitter.h"
#include "blockscale/VersionPrinter.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  blockscale::installVersionPrinter();
  mlir::blockscale::registerToCudaTranslations();
  return mlir::failed(mlir::mlirTranslateMain(
      argc, argv, "blockscale translation driver (CUDA / PTX emission)"));
}
