//===- BlockScaleDialect.cpp - blockscale dialect, attributes ---*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "blockscale/Dialect/BlockScale/IR/BlockScale.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::blockscale;

#include "blockscale/Dialect/BlockScale/IR/BlockScaleDialect.cpp.inc"
#include "blockscale/Dialect/BlockScale/IR/BlockScaleEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "blockscale/Dialect/BlockScale/IR/BlockScaleAttrs.cpp.inc"

void BlockScaleDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "blockscale/Dialect/BlockScale/IR/BlockScaleOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "blockscale/Dialect/BlockScale/IR/BlockScaleAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

std::pair<int64_t, int64_t> mlir::blockscale::getBlockShape(ScaleRecipe recipe) {
  switch (recipe) {
  case ScaleRecipe::blk_1x128:
    return {1, 128};
  case ScaleRecipe::blk_128x128:
    return {128, 128};
  case ScaleRecipe::blk_128x1:
    return {128, 1};
  case ScaleRecipe::tensorwise:
    return {0, 0};
  }
  llvm_unreachable("unknown recipe");
}

SmallVector<int64_t> mlir::blockscale::getScaleShape(ArrayRef<int64_t> shape,
                                                     ScaleRecipe recipe) {
  if (recipe == ScaleRecipe::tensorwise)
    return {};
  auto [br, bc] = getBlockShape(recipe);
  auto ceilDiv = [](int64_t d, int64_t b) {
    return ShapedType::isDynamic(d)
               ? ShapedType::kDynamic
               : static_cast<int64_t>(llvm::divideCeil(d, b));
  };
  return {ceilDiv(shape[0], br), ceilDiv(shape[1], bc)};
}

std::optional<FP8Format> mlir::blockscale::getFP8Format(Type type) {
  if (isa<Float8E4M3FNType>(type))
    return FP8Format::e4m3fn;
  if (isa<Float8E5M2Type>(type))
    return FP8Format::e5m2;
  return std::nullopt;
}

double mlir::blockscale::getFP8Max(FP8Format format) {
  return format == FP8Format::e4m3fn ? 448.0 : 57344.0;
}

StringRef mlir::blockscale::getRecipeDisplayName(ScaleRecipe recipe) {
  switch (recipe) {
  case ScaleRecipe::blk_1x128:
    return "1x128";
  case ScaleRecipe::blk_128x128:
    return "128x128";
  case ScaleRecipe::blk_128x1:
    return "128x1";
  case ScaleRecipe::tensorwise:
    return "tensorwise";
  }
  llvm_unreachable("unknown recipe");
}

std::string mlir::blockscale::shapeToString(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleave(
      shape, os,
      [&](int64_t d) {
        if (ShapedType::isDynamic(d))
          os << "?";
        else
          os << d;
      },
      "x");
  return s;
}

//===----------------------------------------------------------------------===//
// ScaleLayoutAttr
//===----------------------------------------------------------------------===//

LogicalResult
ScaleLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        Layout order, int64_t align) {
  if (align < 1 || !llvm::isPowerOf2_64(align))
    return emitError() << "expected scale_layout align to be a power of two "
                          ">= 1 but got "
                       << align;
  return success();
}

int64_t ScaleLayoutAttr::getLeadingStride(ArrayRef<int64_t> shape) const {
  if (shape.size() != 2)
    return -1;
  int64_t contiguous = getOrder() == Layout::row_major ? shape[1] : shape[0];
  if (ShapedType::isDynamic(contiguous))
    return ShapedType::kDynamic;
  int64_t align = getAlign();
  if (contiguous < 0 || align < 1)
    return -1;
  // ceil(contiguous / align) * align, checked.
  int64_t blocks = contiguous / align + (contiguous % align != 0);
  std::optional<int64_t> ld = llvm::checkedMul<int64_t>(blocks, align);
  return ld ? *ld : -1;
}

int64_t ScaleLayoutAttr::getAllocatedElements(ArrayRef<int64_t> shape) const {
  int64_t ld = getLeadingStride(shape);
  if (ld == -1)
    return -1;
  int64_t outer = getOrder() == Layout::row_major ? shape[0] : shape[1];
  if (ShapedType::isDynamic(ld) || ShapedType::isDynamic(outer))
    return ShapedType::kDynamic;
  // Elements, and their bytes (f32), fit in int64.
  std::optional<int64_t> n = llvm::checkedMul<int64_t>(ld, outer);
  if (!n || !llvm::checkedMul<int64_t>(*n, 4))
    return -1;
  return *n;
}

//===----------------------------------------------------------------------===//
// TileConfigAttr
//===----------------------------------------------------------------------===//

LogicalResult
TileConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       int64_t bm, int64_t bn, int64_t bk, int64_t stages,
                       int64_t cluster, int64_t swizzle, int64_t splits,
                       int64_t raster, int64_t ksplit) {
  // One consumer warpgroup computes 64 rows with m64nNk32 wgmma (bm = 256:
  // two such waves each).
  if (bm != 64 && bm != 128 && bm != 256)
    return emitError() << "expected tile bm = 64, 128 or 256 (one or two "
                          "consumer warpgroups of m64 wgmma, one or two "
                          "waves) but got "
                       << bm;
  // A tile may straddle at most two 128-wide scale blocks of B; with bn a
  // multiple of 16 that holds for bn <= 128 and for 144, 160, 192.
  bool bnOk = bn >= 16 && bn % 16 == 0 &&
              (bn <= 128 || bn == 144 || bn == 160 || bn == 192);
  if (!bnOk)
    return emitError() << "expected tile bn in {16, 32, ..., 128, 144, 160, "
                          "192} but got "
                       << bn;
  if (bm == 256 && bn > 128)
    return emitError() << "expected tile bn <= 128 with bm = 256 (two "
                          "accumulators per thread) but got "
                       << bn;
  if (bk != 128)
    return emitError() << "expected tile bk = 128 (one scale block per "
                          "pipeline stage) but got "
                       << bk;
  if (stages < 2 || stages > 16)
    return emitError() << "expected tile stages in [2, 16] but got " << stages;
  if (cluster != 1 && cluster != 2)
    return emitError() << "expected tile cluster = 1 or 2 (CTA pairs sharing "
                          "A through TMA multicast) but got "
                       << cluster;
  if (swizzle != 128)
    return emitError() << "expected tile swizzle = 128 (bk = 128 FP8 bytes per "
                          "row) but got "
                       << swizzle;
  // The launch configuration and the kernel parameters are 32-bit ints.
  constexpr int64_t kInt32Max = 2147483647;
  if (splits < 1 || splits > kInt32Max)
    return emitError() << "expected tile splits in [1, 2147483647] (a 32-bit "
                          "launch parameter) but got "
                       << splits;
  if (raster < 1 || raster > kInt32Max)
    return emitError() << "expected tile raster in [1, 2147483647] (a 32-bit "
                          "launch parameter) but got "
                       << raster;
  if (ksplit != 1) {
    if (ksplit < 2 || ksplit > 8 || ksplit != splits)
      return emitError() << "expected tile ksplit = 1 or ksplit = splits in "
                            "[2, 8] (a portable cluster of the splits) but got "
                            "ksplit = "
                         << ksplit << " with splits = " << splits;
    if (cluster != 1)
      return emitError() << "expected tile cluster = 1 with ksplit = " << ksplit
                         << " (a cluster either shares A or sums splits) but "
                            "got cluster = "
                         << cluster;
  }
  return success();
}
