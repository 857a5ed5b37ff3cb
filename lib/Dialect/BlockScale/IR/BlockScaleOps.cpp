//===- BlockScaleOps.cpp - blockscale operations ----------------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "blockscale/Dialect/BlockScale/IR/BlockScale.h"

#include "blockscale/Target/Cuda/Kernels/params.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/Support/CheckedArithmetic.h"

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

/// Every ranked tensor the op reads or writes holds at most 2^63 - 1 bytes
/// (static dimensions; dynamic ones are checked where they become known), so
/// that sizes, element and byte counts derived from the types do not wrap.
static LogicalResult checkTensorBytes(Operation *op) {
  auto check = [&](Type type, StringRef kind, unsigned idx) -> LogicalResult {
    auto t = dyn_cast<RankedTensorType>(type);
    if (!t || !t.getElementType().isIntOrFloat())
      return success();
    std::optional<int64_t> bytes =
        llvm::divideCeil(t.getElementType().getIntOrFloatBitWidth(), 8);
    for (int64_t d : t.getShape())
      if (bytes && !ShapedType::isDynamic(d))
        bytes = llvm::checkedMul<int64_t>(*bytes, d);
    if (bytes)
      return success();
    return op->emitOpError() << "expected " << kind << " #" << idx
                             << " to hold at most 2^63 - 1 bytes but got "
                             << type;
  };
  for (auto [i, t] : llvm::enumerate(op->getOperandTypes()))
    if (failed(check(t, "operand", i)))
      return failure();
  for (auto [i, t] : llvm::enumerate(op->getResultTypes()))
    if (failed(check(t, "result", i)))
      return failure();
  return success();
}

/// The scale tensor `scale` of role `what` must be ranked before its shape
/// is read (the op's type constraint admits `tensor<*xf32>`).
static LogicalResult checkRankedScale(Operation *op, StringRef what,
                                      Value scale,
                                      ArrayRef<int64_t> expected) {
  if (isa<RankedTensorType>(scale.getType()))
    return success();
  return op->emitOpError() << "expected " << what << " of shape "
                           << shapeToString(expected)
                           << " (a ranked tensor) but got " << scale.getType();
}

/// A scale layout must describe a buffer whose size fits in int64 for the
/// logical scale shape `shape` (static dimensions only).
static LogicalResult checkScaleLayoutFits(Operation *op, StringRef name,
                                          ScaleLayoutAttr layout,
                                          ArrayRef<int64_t> shape) {
  if (!layout || shape.size() != 2)
    return success();
  if (layout.getAllocatedElements(shape) != -1)
    return success();
  return op->emitOpError() << "expected " << name << " " << layout
                           << " to give " << shapeToString(shape)
                           << " scales a buffer of at most 2^63 - 1 bytes "
                              "but its padded size overflows int64";
}

//===----------------------------------------------------------------------===//
// QuantizeOp
//===----------------------------------------------------------------------===//

namespace {
/// How the diagnostics of one cast result name its parts.
struct CastResultNames {
  StringRef result;      // "result shape"
  StringRef scale;       // "scale shape"
  StringRef scales;      // "scales of shape" (a ranked tensor)
  StringRef scaleLayout; // its scale layout attribute
};
} // namespace

/// The rules of one cast result: `result` is `input` (transposed with
/// `transpose`) quantized with `recipe`, and `scale` holds its scales in
/// `scaleLayout`.
static LogicalResult verifyCastResult(Operation *op, Value input,
                                      ScaleRecipe recipe, bool transpose,
                                      Value result, Value scale,
                                      ScaleLayoutAttr scaleLayout,
                                      const CastResultNames &names) {
  ArrayRef<int64_t> in = cast<RankedTensorType>(input.getType()).getShape();
  SmallVector<int64_t> expected(in.begin(), in.end());
  if (transpose)
    std::swap(expected[0], expected[1]);
  ArrayRef<int64_t> res = cast<RankedTensorType>(result.getType()).getShape();
  if (!shapesMatch(expected, res))
    return op->emitOpError() << "expected " << names.result << " shape "
                             << shapeToString(expected)
                             << (transpose ? " (the input transposed)" : "")
                             << " but got " << shapeToString(res);

  SmallVector<int64_t> expScale = getScaleShape(expected, recipe);
  if (failed(checkRankedScale(op, names.scales, scale, expScale)))
    return failure();
  ArrayRef<int64_t> scaleShape =
      cast<RankedTensorType>(scale.getType()).getShape();
  if (!shapesMatch(expScale, scaleShape))
    return op->emitOpError()
           << "expected " << names.scale << " shape " << shapeToString(expScale)
           << " for " << getRecipeDisplayName(recipe) << " blocks of a "
           << shapeToString(expected) << " " << names.result << " but got "
           << shapeToString(scaleShape);
  if (scaleLayout && recipe == ScaleRecipe::tensorwise)
    return op->emitOpError()
           << "expected no " << names.scaleLayout
           << " for a tensorwise (scalar) scale but got " << scaleLayout;
  // The scale buffer's elements and the result's bytes fit in int64.
  return checkScaleLayoutFits(op, names.scaleLayout, scaleLayout, scaleShape);
}

LogicalResult QuantizeOp::verify() {
  if (failed(checkTensorBytes(*this)))
    return failure();
  return verifyCastResult(*this, getInput(), getRecipe(), getTranspose(),
                          getResult(), getScale(), getScaleLayoutAttr(),
                          {"result", "scale", "scales", "scale_layout"});
}

//===----------------------------------------------------------------------===//
// QuantizeDualOp
//===----------------------------------------------------------------------===//

std::pair<int64_t, int64_t> QuantizeDualOp::getInputFrameBlock() {
  auto [rows, cols] = getBlockShape(getRecipe());
  if (getTranspose())
    return {cols, rows};
  return {rows, cols};
}

LogicalResult QuantizeDualOp::verify() {
  if (failed(checkTensorBytes(*this)))
    return failure();
  if (failed(verifyCastResult(*this, getInput(), getRecipe(), getTranspose(),
                              getResult(), getScale(), getScaleLayoutAttr(),
                              {"result", "scale", "scales", "scale_layout"})) ||
      failed(verifyCastResult(
          *this, getInput(), getRecipe(), !getTranspose(), getTResult(),
          getTScale(), getTScaleLayoutAttr(),
          {"t_result", "t_scale", "t_scales", "t_scale_layout"})))
    return failure();

  Type fp8 = getResult().getType().getElementType();
  Type fp8T = getTResult().getType().getElementType();
  if (fp8 != fp8T)
    return emitOpError() << "expected t_result with the FP8 type of result ("
                         << fp8 << ") but got " << fp8T
                         << "; use two blockscale.quantize ops";
  // One read of an input tile feeds both results only when the first is
  // written where the tile was read and the second is its transpose.
  if (writesTransposed())
    return emitOpError()
           << "expected result in input order (transpose and layout = "
              "col_major agree) but got "
           << (getTranspose() ? "transpose" : "no transpose")
           << " with layout = " << stringifyLayout(getLayout())
           << "; swap the results (negate transpose)";
  // The kernel's tiles are 128 rows of the input: the in-order result's
  // blocks must not span rows (1x128) or must span the tile (128x128).
  auto [br, bc] = getInputFrameBlock();
  if (!((br == 1 || br == 128) && bc == 128))
    return emitOpError()
           << "expected result blocks of 1x128 or 128x128 in the input's "
              "frame but got "
           << (getRecipe() == ScaleRecipe::tensorwise
                   ? std::string("tensorwise")
                   : std::to_string(br) + "x" + std::to_string(bc))
           << "; use two blockscale.quantize ops";
  return success();
}

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::verify() {
  if (failed(checkTensorBytes(*this)))
    return failure();
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

  SmallVector<int64_t> expAs = getScaleShape(a, ra);
  if (failed(checkRankedScale(*this, "A scales", getAScale(), expAs)))
    return failure();
  ArrayRef<int64_t> as = getAScale().getType().getShape();
  if (!shapesMatch(expAs, as))
    return emitOpError() << "expected A scales of shape "
                         << shapeToString(expAs) << " ("
                         << getRecipeDisplayName(ra) << " blocks of "
                         << shapeToString(a) << ") but got "
                         << shapeToString(as);
  SmallVector<int64_t> expBs = getScaleShape(b, rb);
  if (failed(checkRankedScale(*this, "B scales", getBScale(), expBs)))
    return failure();
  ArrayRef<int64_t> bs = getBScale().getType().getShape();
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

  if (failed(checkScaleLayoutFits(*this, "a_scale_layout",
                                  getAScaleLayoutAttr(), as)) ||
      failed(checkScaleLayoutFits(*this, "b_scale_layout",
                                  getBScaleLayoutAttr(), bs)))
    return failure();

  // Leading dimensions: positive, and the buffer they describe (ld times
  // the outer extent of the operand's physical order, in bytes) fits in
  // int64. verify-layouts checks them against the extents and TMA's rules.
  auto elemBytes = [](Type t) -> int64_t {
    return llvm::divideCeil(t.getIntOrFloatBitWidth(), 8);
  };
  struct Ld {
    StringRef name;
    IntegerAttr attr;
    int64_t outer;
    Type elem;
  } lds[] = {
      {"lda", getLdaAttr(), getALayout() == Layout::row_major ? m : k,
       getA().getType().getElementType()},
      {"ldb", getLdbAttr(), getBLayout() == Layout::col_major ? n : k,
       getB().getType().getElementType()},
      {"ldc", getLdcAttr(), m, getC().getType().getElementType()}};
  for (const Ld &ld : lds) {
    if (!ld.attr)
      continue;
    int64_t v = ld.attr.getInt();
    if (v < 1)
      return emitOpError() << "expected " << ld.name
                           << " (a leading dimension in elements) >= 1 but "
                              "got "
                           << v;
    std::optional<int64_t> bytes = llvm::checkedMul<int64_t>(v, elemBytes(ld.elem));
    if (bytes && !ShapedType::isDynamic(ld.outer))
      bytes = llvm::checkedMul<int64_t>(*bytes, ld.outer);
    if (!bytes)
      return emitOpError() << "expected " << ld.name << " = " << v
                           << " to describe a buffer of at most 2^63 - 1 "
                              "bytes but "
                           << ld.name << " x " << shapeToString({ld.outer})
                           << " rows x "
                           << elemBytes(ld.elem)
                           << " bytes overflows int64";
  }

  if (TileConfigAttr tile = getTileAttr()) {
    if (!ShapedType::isDynamic(k)) {
      int64_t kBlocks = llvm::divideCeil(k, 128);
      if (tile.getSplits() > kBlocks)
        return emitOpError() << "expected tile splits <= " << kBlocks
                             << " (K-blocks of 128) but got "
                             << tile.getSplits();
    }
    // The kernel's ring, staging and scales in the opt-in shared memory of
    // sm_90 (what gemm_config.cuh static_asserts at NVRTC time, without a
    // location). The attribute's verifier bounds every size here.
    int outBytes = getC().getType().getElementType().isF32() ? 4 : 2;
    bool wgrad = getForm() == GemmForm::wgrad;
    int smem = bs::gemmSmemBytes(int(tile.getBm()), int(tile.getBn()),
                                 int(tile.getStages()), outBytes, wgrad,
                                 int(tile.getKsplit()));
    if (smem > bs::kMaxDynamicSmemBytes)
      return emitOpError() << "expected a tile whose " << tile.getStages()
                           << "-stage ring and output staging fit in "
                           << bs::kMaxDynamicSmemBytes
                           << " bytes of shared memory (sm_90) but bm="
                           << tile.getBm() << ",bn=" << tile.getBn() << " with "
                           << (outBytes == 4 ? "f32" : "bf16")
                           << " output needs " << smem
                           << "; use fewer stages (at most "
                           << bs::gemmMaxStages(int(tile.getBm()),
                                                int(tile.getBn()), outBytes,
                                                wgrad, bs::kMaxDynamicSmemBytes,
                                                int(tile.getKsplit()))
                           << ") or a smaller tile";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// GroupedMatmulOp
//===----------------------------------------------------------------------===//

/// ceil(d / 128), dynamic staying dynamic.
static int64_t kBlocksOf(int64_t d) {
  return ShapedType::isDynamic(d) ? d : llvm::divideCeil(d, 128);
}

LogicalResult GroupedMatmulOp::verify() {
  if (failed(checkTensorBytes(*this)))
    return failure();
  bool masked = getGrouping() == Grouping::m_masked;
  StringRef kind = stringifyGrouping(getGrouping());
  auto aType = dyn_cast<RankedTensorType>(getA().getType());
  int64_t aRank = masked ? 3 : 2;
  if (!aType || aType.getRank() != aRank)
    return emitOpError() << "expected A of rank " << aRank << " ("
                         << (masked ? "G, Mmax, K" : "M, K") << ") for "
                         << kind << " grouping but got " << getA().getType();
  ArrayRef<int64_t> a = aType.getShape();
  ArrayRef<int64_t> b = getB().getType().getShape();
  int64_t g = b[0], k = b[1], n = b[2];

  if (!shapesMatch({k}, {a.back()}))
    return emitOpError() << "expected A with K = " << shapeToString({k})
                         << " columns (B is " << shapeToString(b)
                         << ", G x K x N) but got " << shapeToString(a);
  if (masked && !shapesMatch({g}, {a[0]}))
    return emitOpError() << "expected A with G = " << shapeToString({g})
                         << " groups (B is " << shapeToString(b)
                         << ") but got " << shapeToString(a);
  if (ShapedType::isDynamic(g) || ShapedType::isDynamic(k) ||
      ShapedType::isDynamic(n))
    return emitOpError() << "expected B with static G, K and N (one "
                            "kernel serves every split of the rows) but got "
                         << shapeToString(b);
  if (g < 1)
    return emitOpError() << "expected at least one group but got B of shape "
                         << shapeToString(b);

  ArrayRef<int64_t> groups = getGroups().getType().getShape();
  if (!shapesMatch({g}, groups))
    return emitOpError() << "expected groups of shape " << shapeToString({g})
                         << " (one i32 per group: "
                         << (masked ? "its valid rows" : "its rows' end offset")
                         << ") but got " << shapeToString(groups);

  SmallVector<int64_t> expAs(a.begin(), a.end());
  expAs.back() = kBlocksOf(k);
  if (failed(checkRankedScale(*this, "A scales", getAScale(), expAs)))
    return failure();
  ArrayRef<int64_t> as = getAScale().getType().getShape();
  if (!shapesMatch(expAs, as))
    return emitOpError() << "expected A scales of shape "
                         << shapeToString(expAs) << " (1x128 blocks of "
                         << shapeToString(a) << ") but got "
                         << shapeToString(as);
  SmallVector<int64_t> expBs = {g, kBlocksOf(k), kBlocksOf(n)};
  if (failed(checkRankedScale(*this, "B scales", getBScale(), expBs)))
    return failure();
  ArrayRef<int64_t> bs = getBScale().getType().getShape();
  if (!shapesMatch(expBs, bs))
    return emitOpError() << "expected B scales of shape "
                         << shapeToString(expBs)
                         << " (128x128 blocks of each group's K x N) but got "
                         << shapeToString(bs);

  auto cType = dyn_cast<RankedTensorType>(getC().getType());
  SmallVector<int64_t> expC(a.begin(), a.end());
  expC.back() = n;
  if (!cType || !shapesMatch(expC, cType.getShape()))
    return emitOpError() << "expected result shape " << shapeToString(expC)
                         << " but got " << getC().getType();

  if (TileConfigAttr tile = getTileAttr()) {
    if (tile.getSplits() != 1 || tile.getKsplit() != 1)
      return emitOpError() << "expected a tile without split-K (splits = 1, "
                              "ksplit = 1) for a grouped matmul but got "
                           << tile;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// k-grouped ops
//===----------------------------------------------------------------------===//

/// `v` must be a ranked tensor of rank `rank` whose element type passes
/// `elemOk`; `expected` describes it in the diagnostic (e.g. "A of rank 2
/// (M, capacity) with an FP8 element type"). The k-grouped ops check their
/// types here rather than in ODS so that every rule names what it expected.
static FailureOr<RankedTensorType> checkTensor(Operation *op, Value v,
                                               int64_t rank,
                                               function_ref<bool(Type)> elemOk,
                                               const Twine &expected) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (t && t.getRank() == rank && elemOk(t.getElementType()))
    return t;
  return op->emitOpError() << "expected " << expected << " but got "
                           << v.getType();
}

static bool isFP8(Type t) { return isa<Float8E4M3FNType, Float8E5M2Type>(t); }

/// The offsets of a k-grouped op: G cumulative end offsets, `tensor<Gxi32>`
/// with a static G >= 1. Returns G.
static FailureOr<int64_t> checkOffsets(Operation *op, Value offsets) {
  FailureOr<RankedTensorType> t = checkTensor(
      op, offsets, 1, [](Type e) { return e.isSignlessInteger(32); },
      "offsets of type tensor<Gxi32> (the groups' cumulative end offsets)");
  if (failed(t))
    return failure();
  int64_t g = t->getDimSize(0);
  if (ShapedType::isDynamic(g) || g < 1)
    return op->emitOpError()
           << "expected offsets with a static group count G >= 1 (the "
              "kernel and the capacity depend on it) but got "
           << offsets.getType();
  return g;
}

/// A static capacity is a multiple of 128 tokens of at least `minimum`.
static LogicalResult checkCapacity(Operation *op, StringRef what,
                                   int64_t capacity, int64_t minimum,
                                   const Twine &why) {
  if (ShapedType::isDynamic(capacity))
    return success();
  if (capacity % 128 != 0 || capacity < minimum)
    return op->emitOpError()
           << "expected " << what << " a multiple of 128 of at least "
           << minimum << " (" << why << ") but got " << capacity;
  return success();
}

LogicalResult QuantizeGroupedTokensOp::verify() {
  if (failed(checkTensorBytes(*this)))
    return failure();
  FailureOr<RankedTensorType> in = checkTensor(
      *this, getInput(), 2,
      [](Type e) { return e.isBF16() || e.isF16() || e.isF32(); },
      "input of rank 2 (T, C) of bf16, f16 or f32");
  if (failed(in))
    return failure();
  FailureOr<int64_t> g = checkOffsets(*this, getOffsets());
  if (failed(g))
    return failure();
  int64_t t = in->getDimSize(0), c = in->getDimSize(1);
  if (ShapedType::isDynamic(c))
    return emitOpError() << "expected input with static C columns (one "
                            "kernel per width) but got "
                         << getInput().getType();
  FailureOr<RankedTensorType> res =
      checkTensor(*this, getResult(), 2, isFP8,
                  "result of rank 2 (C, capacity) with an FP8 element type");
  if (failed(res))
    return failure();
  int64_t cap = res->getDimSize(1);
  if (res->getDimSize(0) != c)
    return emitOpError() << "expected result with C = " << c
                         << " rows (the input transposed) but got "
                         << getResult().getType();
  // Every group may pad up to 127 tokens: round_up(T, 128) + 128 G holds
  // any split (the runtime's groupedTokenCapacity).
  int64_t minCap =
      ShapedType::isDynamic(t) ? 128 * *g : llvm::alignTo(t, 128) + 128 * *g;
  if (failed(checkCapacity(*this, "result capacity", cap, minCap,
                           ShapedType::isDynamic(t)
                               ? "128 G: every group starts a block"
                               : "round_up(T, 128) + 128 G: every group "
                                 "starts a block")))
    return failure();
  SmallVector<int64_t> expS = {c, kBlocksOf(cap)};
  FailureOr<RankedTensorType> sc = checkTensor(
      *this, getScale(), 2, [](Type e) { return e.isF32(); },
      "scales of type tensor<" + shapeToString(expS) + "xf32>");
  if (failed(sc))
    return failure();
  if (!shapesMatch(expS, sc->getShape()))
    return emitOpError() << "expected scale shape " << shapeToString(expS)
                         << " (one per row of the result per 128-token "
                            "block) but got "
                         << shapeToString(sc->getShape());
  return checkScaleLayoutFits(*this, "scale_layout", getScaleLayoutAttr(),
                              sc->getShape());
}

LogicalResult GroupedMatmulKOp::verify() {
  if (failed(checkTensorBytes(*this)))
    return failure();
  FailureOr<RankedTensorType> a =
      checkTensor(*this, getA(), 2, isFP8,
                  "A of rank 2 (M, capacity: dY^T) with an FP8 element type");
  if (failed(a))
    return failure();
  FailureOr<RankedTensorType> b =
      checkTensor(*this, getB(), 2, isFP8,
                  "B of rank 2 (N, capacity: X^T) with an FP8 element type");
  if (failed(b))
    return failure();
  FailureOr<int64_t> g = checkOffsets(*this, getOffsets());
  if (failed(g))
    return failure();
  int64_t m = a->getDimSize(0), n = b->getDimSize(0);
  int64_t cap = a->getDimSize(1);
  if (ShapedType::isDynamic(m) || ShapedType::isDynamic(n))
    return emitOpError() << "expected static M and N (the rows of A and B: "
                            "one kernel per output shape) but got "
                         << getA().getType() << " and " << getB().getType();
  if (!shapesMatch({cap}, {b->getDimSize(1)}))
    return emitOpError() << "expected B with A's capacity of "
                         << shapeToString({cap}) << " tokens (A is "
                         << getA().getType() << ") but got "
                         << getB().getType();
  if (failed(checkCapacity(*this, "capacity", cap, 128 * *g,
                           "128 G: every group starts a 128-token block")))
    return failure();

  auto isF32 = [](Type e) { return e.isF32(); };
  struct {
    StringRef name;
    Value scale;
    int64_t rows;
  } scales[] = {{"A", getAScale(), m}, {"B", getBScale(), n}};
  for (const auto &s : scales) {
    SmallVector<int64_t> exp = {s.rows, kBlocksOf(cap)};
    FailureOr<RankedTensorType> t = checkTensor(
        *this, s.scale, 2, isF32,
        s.name + " scales of type tensor<" + shapeToString(exp) + "xf32>");
    if (failed(t))
      return failure();
    if (!shapesMatch(exp, t->getShape()))
      return emitOpError() << "expected " << s.name << " scales of shape "
                           << shapeToString(exp)
                           << " (one per row per 128-token block) but got "
                           << shapeToString(t->getShape());
  }

  FailureOr<RankedTensorType> c = checkTensor(
      *this, getC(), 3, [](Type e) { return e.isBF16() || e.isF32(); },
      "a result of rank 3 (G, M, N) of bf16 or f32");
  if (failed(c))
    return failure();
  SmallVector<int64_t> expC = {*g, m, n};
  if (!shapesMatch(expC, c->getShape()))
    return emitOpError() << "expected result shape " << shapeToString(expC)
                         << " (G, M, N) but got "
                         << shapeToString(c->getShape());
  if (Value acc = getAcc()) {
    if (acc.getType() != getC().getType())
      return emitOpError() << "expected acc of type " << getC().getType()
                           << " (the result type) but got " << acc.getType();
    if (!c->getElementType().isF32())
      return emitOpError() << "expected an f32 result when accumulating but "
                              "got "
                           << c->getElementType();
  }
  if (TileConfigAttr tile = getTileAttr()) {
    if (tile.getSplits() != 1 || tile.getKsplit() != 1 ||
        tile.getCluster() != 1)
      return emitOpError() << "expected a tile without split-K or clusters "
                              "(splits = 1, ksplit = 1, cluster = 1) for a "
                              "k-grouped matmul but got "
                           << tile;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Casts
//===----------------------------------------------------------------------===//

CastResult mlir::blockscale::getProducingCast(Value v) {
  CastResult c;
  if (auto q = v.getDefiningOp<QuantizeOp>()) {
    c.op = q;
    c.recipe = q.getRecipe();
    c.layout = q.getLayout();
    c.transpose = q.getTranspose();
    c.data = q.getResult();
    c.scale = q.getScale();
    c.scaleLayoutName = q.getScaleLayoutAttrName();
    return c;
  }
  if (auto d = v.getDefiningOp<QuantizeDualOp>()) {
    bool second = v == d.getTResult() || v == d.getTScale();
    c.op = d;
    c.recipe = d.getRecipe();
    c.layout = d.getLayout();
    c.transpose = d.getTranspose() != second;
    c.data = second ? d.getTResult() : d.getResult();
    c.scale = second ? d.getTScale() : d.getScale();
    c.scaleLayoutName =
        second ? d.getTScaleLayoutAttrName() : d.getScaleLayoutAttrName();
    return c;
  }
  return c;
}

ScaleLayoutAttr CastResult::getScaleLayout() const {
  return op ? op->getAttrOfType<ScaleLayoutAttr>(scaleLayoutName)
            : ScaleLayoutAttr();
}

void CastResult::setScaleLayout(ScaleLayoutAttr layout) const {
  if (layout)
    op->setAttr(scaleLayoutName, layout);
  else
    op->removeAttr(scaleLayoutName);
}

#define GET_OP_CLASSES
#include "blockscale/Dialect/BlockScale/IR/BlockScaleOps.cpp.inc"
