//===- blockscale-translate.cpp - MLIR to CUDA / PTX ------------*- C++ -*-===//

#include "blockscale/Target/Cuda/CudaEmitter.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::blockscale::registerToCudaTranslations();
  return mlir::failed(mlir::mlirTranslateMain(
      argc, argv, "blockscale translation driver (CUDA / PTX emission)"));
}
