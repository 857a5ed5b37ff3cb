//===- BlockScale.h - blockscale dialect ------------------------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_DIALECT_BLOCKSCALE_IR_BLOCKSCALE_H
#define BLOCKSCALE_DIALECT_BLOCKSCALE_IR_BLOCKSCALE_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "blockscale/Dialect/BlockScale/IR/BlockScaleDialect.h.inc"
#include "blockscale/Dialect/BlockScale/IR/BlockScaleEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "blockscale/Dialect/BlockScale/IR/BlockScaleAttrs.h.inc"

#define GET_OP_CLASSES
#include "blockscale/Dialect/BlockScale/IR/BlockScaleOps.h.inc"

namespace mlir::blockscale {

/// Block extent (rows, cols) of a recipe; tensorwise is {0, 0}.
std::pair<int64_t, int64_t> getBlockShape(ScaleRecipe recipe);

/// Logical scale shape for a tensor of logical `shape` quantized with
/// `recipe` (ceil-div per block; dynamic stays dynamic). Tensorwise gives {}.
SmallVector<int64_t> getScaleShape(ArrayRef<int64_t> shape, ScaleRecipe recipe);

/// The FP8 format of an element type, if it is one.
std::optional<FP8Format> getFP8Format(Type type);

/// Largest finite value of an FP8 format (448 for e4m3fn, 57344 for e5m2).
double getFP8Max(FP8Format format);

/// "1x128" etc., for diagnostics.
StringRef getRecipeDisplayName(ScaleRecipe recipe);

/// Prints a shape as "4096x?x7" for diagnostics.
std::string shapeToString(ArrayRef<int64_t> shape);

/// One FP8 result of a cast with its scales: a `blockscale.quantize`, or
/// either half of a `blockscale.quantize_dual`. Passes that follow operands
/// back to their cast see both ops through it.
struct CastResult {
  Operation *op = nullptr;
  ScaleRecipe recipe = ScaleRecipe::tensorwise;
  Layout layout = Layout::row_major;
  bool transpose = false;
  Value data, scale;
  /// The attribute of `op` that holds the layout of `scale`.
  StringAttr scaleLayoutName;

  explicit operator bool() const { return op != nullptr; }
  ScaleLayoutAttr getScaleLayout() const;
  void setScaleLayout(ScaleLayoutAttr layout) const;
  /// True when the kernel writes `data` physically transposed.
  bool writesTransposed() const {
    return transpose != (layout == Layout::col_major);
  }
};

/// The cast whose FP8 result or scales `v` is; an empty CastResult when `v`
/// is not defined by a cast.
CastResult getProducingCast(Value v);

} // namespace mlir::blockscale

#endif // BLOCKSCALE_DIALECT_BLOCKSCALE_IR_BLOCKSCALE_H
