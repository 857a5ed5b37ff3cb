//===- BlockScaleOps.cpp - blockscale operations ----------------*- C++ -*-===//

#include "blockscale/Dialect/BlockScale/IR/BlockScale.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::blockscale;

/// True when `actual` equals `expected`, a dynamic expected dim matching only
/// a dynamic actual dim.
static bool shapesMatch(ArrayRef<int64_t> expected, ArrayRef<int64_t> actual) {
  return expected.size() == actual.size() &&
         llvm::all_of(llvm::zip(expected, actual), [](auto p) {
           return std::get<0>(p) == std::get<1>(p);
         });
}

//===----------------------------------------------------------------------===//
// QuantizeOp
//===----------------------------------------------------------------------===//

LogicalResult QuantizeOp::verify() {
  ArrayRef<int64_t> in = getInput().getType().getShape();
  SmallVector<int64_t> expected(in.begin(), in.end());
  if (getTranspose())
    std::swap(expected[0], expected[1]);
  ArrayRef<int64_t> res = getResult().getType().getShape();
  if (!shapesMatch(expected, res))
    return emitOpError() << "expected result shape " << shapeToString(expected)
                         << (getTranspose() ? " (the input transposed)" : "")
                         << " but got " << shapeToString(res);

  ArrayRef<int64_t> scale = getScale().getType().getShape();
  SmallVector<int64_t> expScale = getScaleShape(expected, getRecipe());
  if (!shapesMatch(expScale, scale))
    return emitOpError() << "expected scale shape " << shapeToString(expScale)
                         << " for " << getRecipeDisplayName(getRecipe())
                         << " blocks of a " << shapeToString(expected)
                         << " result but got " << shapeToString(scale);
  if (getScaleLayout() && getRecipe() == ScaleRecipe::tensorwise)
    return emitOpError() << "expected no scale_layout for a tensorwise "
                            "(scalar) scale but got "
                         << getScaleLayoutAttr();
  return success();
}

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::verify() {
  ArrayRef<int64_t> a = getA().getType().getShape();
  ArrayRef<int64_t> b = getB().getType().getShape();
  int64_t m = a[0], k = a[1], n = b[1];

  if (!ShapedType::isDynamic(k) && !ShapedType::isDynamic(b[0]) && b[0] != k)
    return emitOpError() << "expected B with K = " << k << " rows (A is "
                         << shapeToString(a) << ") but got "
                         << shapeToString(b);
  if (ShapedType::isDynamic(k) != ShapedType::isDynamic(b[0]))
    return emitOpError() << "expected A and B to agree on whether K is "
                            "dynamic but got "
                         << shapeToString(a) << " and " << shapeToString(b);

  ScaleRecipe ra = getARecipe(), rb = getBRecipe();
  bool pairOk = ra == ScaleRecipe::blk_1x128 &&
                (rb == ScaleRecipe::blk_128x128 || rb == ScaleRecipe::blk_128x1);
  if (!pairOk)
    return emitOpError() << "unsupported recipe pair ("
                         << getRecipeDisplayName(ra) << ", "
                         << getRecipeDisplayName(rb)
                         << "): expected 1x128 x 128x128 (fwd, dgrad) or "
                            "1x128 x 128x1 (wgrad)";
  ScaleRecipe wantB = getForm() == GemmForm::wgrad ? ScaleRecipe::blk_128x1
                                                   : ScaleRecipe::blk_128x128;
  if (rb != wantB)
    return emitOpError() << "expected B recipe " << getRecipeDisplayName(wantB)
                         << " for form " << stringifyGemmForm(getForm())
                         << " but got " << getRecipeDisplayName(rb);

  ArrayRef<int64_t> as = getAScale().getType().getShape();
  SmallVector<int64_t> expAs = getScaleShape(a, ra);
  if (!shapesMatch(expAs, as))
    return emitOpError() << "expected A scales of shape "
                         << shapeToString(expAs) << " ("
                         << getRecipeDisplayName(ra) << " blocks of "
                         << shapeToString(a) << ") but got "
                         << shapeToString(as);
  ArrayRef<int64_t> bs = getBScale().getType().getShape();
  SmallVector<int64_t> expBs = getScaleShape(b, rb);
  if (!shapesMatch(expBs, bs))
    return emitOpError() << "expected B scales of shape "
                         << shapeToString(expBs) << " ("
                         << getRecipeDisplayName(rb) << " blocks of "
                         << shapeToString(b) << ") but got "
                         << shapeToString(bs);

  ArrayRef<int64_t> c = getC().getType().getShape();
  SmallVector<int64_t> expC = {m, n};
  if (!shapesMatch(expC, c))
    return emitOpError() << "expected result shape " << shapeToString(expC)
                         << " but got " << shapeToString(c);

  if (Value acc = getAcc()) {
    if (acc.getType() != getC().getType())
      return emitOpError() << "expected acc of type " << getC().getType()
                           << " (the result type) but got " << acc.getType();
    if (!getC().getType().getElementType().isF32())
      return emitOpError() << "expected an f32 result when accumulating but "
                              "got "
                           << getC().getType().getElementType();
  }

  if (TileConfigAttr tile = getTileAttr()) {
    if (!ShapedType::isDynamic(k)) {
      int64_t kBlocks = llvm::divideCeil(k, 128);
      if (tile.getSplits() > kBlocks)
        return emitOpError() << "expected tile splits <= " << kBlocks
                             << " (K-blocks of 128) but got "
                             << tile.getSplits();
    }
  }
  return success();
}

#define GET_OP_CLASSES
#include "blockscale/Dialect/BlockScale/IR/BlockScaleOps.cpp.inc"
