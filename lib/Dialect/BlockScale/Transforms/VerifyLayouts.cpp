//===- VerifyLayouts.cpp - check layouts against the kernels ----*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "blockscale/Dialect/BlockScale/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/CheckedArithmetic.h"

namespace mlir::blockscale {
#define GEN_PASS_DEF_BLOCKSCALEVERIFYLAYOUTS
#include "blockscale/Dialect/BlockScale/Transforms/Passes.h.inc"
} // namespace mlir::blockscale

using namespace mlir;
using namespace mlir::blockscale;

static int64_t elementBytes(Type t) {
  return llvm::divideCeil(t.getIntOrFloatBitWidth(), 8);
}

/// The kernels take sizes as 32-bit ints (bs::GemmParams, bs::QuantParams).
static constexpr int64_t kMaxKernelDim = 2147483647;
/// cuTensorMapEncodeTiled: global strides are below 2^40 bytes.
static constexpr int64_t kMaxTmaStrideBytes = int64_t(1) << 40;

/// `x` rounded up to a multiple of `m` (> 0), or -1 when that overflows.
static int64_t roundUp(int64_t x, int64_t m) {
  std::optional<int64_t> r =
      llvm::checkedMul<int64_t>(x / m + (x % m != 0), m);
  return r ? *r : -1;
}

/// A static size the kernels take must fit their 32-bit parameters.
static LogicalResult checkKernelDim(Operation *op, StringRef name,
                                    int64_t size) {
  if (ShapedType::isDynamic(size) || size <= kMaxKernelDim)
    return success();
  return op->emitOpError() << "expected " << name
                           << " <= 2147483647 (2^31 - 1: the kernels take "
                              "32-bit sizes) but got "
                           << name << " = " << size << "; split the tensor";
}

/// TMA rule: every global stride but the innermost is a multiple of 16 bytes
/// (and below 2^40 bytes). `extent` is the contiguous extent, `ld` an
/// optional explicit stride.
static LogicalResult checkRowStride(Operation *op, StringRef what,
                                    StringRef ldName, StringRef extentName,
                                    int64_t extent, std::optional<int64_t> ld,
                                    Type elemType) {
  int64_t bytes = elementBytes(elemType);
  int64_t perRow = 16 / bytes;
  if (ld) {
    if (*ld < 1)
      return op->emitOpError() << "expected " << ldName << " >= 1 but got "
                               << *ld;
    if (!ShapedType::isDynamic(extent) && *ld < extent)
      return op->emitOpError()
             << "expected " << ldName << " >= " << extentName << " = "
             << extent << " but got " << *ld;
    std::optional<int64_t> rowBytes = llvm::checkedMul<int64_t>(*ld, bytes);
    if (!rowBytes || *rowBytes >= kMaxTmaStrideBytes)
      return op->emitOpError()
             << "expected the row stride of " << what
             << " to be below 2^40 bytes (TMA limit) but got " << ldName
             << " = " << *ld << " elements of " << elemType;
    if (*rowBytes % 16 != 0)
      return op->emitOpError()
             << "expected the row stride of " << what
             << " to be a multiple of 16 bytes (TMA rule) but got " << ldName
             << " = " << *ld << " (" << *rowBytes << " bytes of " << elemType
             << "); use " << ldName << " = " << roundUp(*ld, perRow);
    return success();
  }
  if (ShapedType::isDynamic(extent))
    return success(); // checked by the runtime when the size is known
  std::optional<int64_t> rowBytes = llvm::checkedMul<int64_t>(extent, bytes);
  if (!rowBytes || *rowBytes >= kMaxTmaStrideBytes)
    return op->emitOpError()
           << "expected the row stride of " << what
           << " to be below 2^40 bytes (TMA limit) but got " << extentName
           << " = " << extent << " elements of " << elemType;
  if (*rowBytes % 16 != 0)
    return op->emitOpError()
           << "expected the row stride of " << what
           << " to be a multiple of 16 bytes (TMA rule) but got "
           << extentName << " = " << extent << " (" << *rowBytes
           << " bytes of " << elemType << "); pad the rows and set " << ldName
           << " = " << roundUp(extent, perRow);
  return success();
}

static std::optional<int64_t> optI64(IntegerAttr a) {
  if (!a)
    return std::nullopt;
  return a.getInt();
}

static LogicalResult verifyMatmul(MatmulOp op) {
  MLIRContext *ctx = op.getContext();
  if (op.getALayout() != Layout::row_major)
    return op.emitOpError()
           << "expected A to be row_major (K-contiguous, the only FP8 operand "
              "order wgmma reads) but got "
           << stringifyLayout(op.getALayout())
           << "; quantize it with layout = #blockscale.layout<row_major>";
  if (op.getBLayout() != Layout::col_major)
    return op.emitOpError()
           << "expected B to be col_major (K-contiguous, i.e. the weight as "
              "(N, K) row-major) but got "
           << stringifyLayout(op.getBLayout())
           << "; quantize it with layout = #blockscale.layout<col_major>";

  int64_t m = op.getM(), n = op.getN(), k = op.getK();
  if (failed(checkKernelDim(op, "M", m)) || failed(checkKernelDim(op, "N", n)) ||
      failed(checkKernelDim(op, "K", k)))
    return failure();
  Type fp8A = op.getA().getType().getElementType();
  Type fp8B = op.getB().getType().getElementType();
  Type outT = op.getC().getType().getElementType();
  if (failed(checkRowStride(op, "A", "lda", "K", k, optI64(op.getLdaAttr()),
                            fp8A)) ||
      failed(checkRowStride(op, "B", "ldb", "K", k, optI64(op.getLdbAttr()),
                            fp8B)) ||
      failed(checkRowStride(op, "C", "ldc", "N", n, optI64(op.getLdcAttr()),
                            outT)))
    return failure();

  // Scales.
  struct Role {
    StringRef name;
    Value data, scale;
    ScaleRecipe recipe;
    ScaleLayoutAttr layout;
    Layout dataLayout;
  } roles[] = {{"A", op.getA(), op.getAScale(), op.getARecipe(),
                op.getAScaleLayoutAttr(), op.getALayout()},
               {"B", op.getB(), op.getBScale(), op.getBRecipe(),
                op.getBScaleLayoutAttr(), op.getBLayout()}};
  for (const Role &r : roles) {
    if (!r.layout)
      return op.emitOpError()
             << "expected " << (r.name == "A" ? "a_scale_layout" : "b_scale_layout")
             << " but got none; run --blockscale-pad-scales";
    ScaleLayoutAttr need =
        getRequiredScaleLayout(ctx, r.recipe, r.name == "A");
    bool anyOrder = r.recipe == ScaleRecipe::blk_128x128;
    if (anyOrder ? r.layout.getAlign() < 1
                 : (r.layout.getOrder() != need.getOrder() ||
                    r.layout.getAlign() % need.getAlign() != 0))
      return op.emitOpError() << "expected " << r.name << " scale layout "
                              << need << " but got " << r.layout;
    if (CastResult q = getProducingCast(r.data)) {
      if (q.recipe != r.recipe)
        return op.emitOpError()
               << "expected " << r.name << " quantized with "
               << getRecipeDisplayName(r.recipe) << " blocks but its quantize "
               << "uses " << getRecipeDisplayName(q.recipe);
      if (q.layout != r.dataLayout)
        return op.emitOpError() << "expected " << r.name << " in "
                                << stringifyLayout(r.dataLayout)
                                << " order but its quantize writes "
                                << stringifyLayout(q.layout);
      // (Of a dual cast: the scales of the same one of its two results.)
      if (q.scale != r.scale)
        return op.emitOpError() << "expected the " << r.name
                                << " scales to come from the quantize that "
                                   "produces "
                                << r.name;
    }
    if (CastResult q = getProducingCast(r.scale)) {
      if (q.getScaleLayout() != r.layout)
        return op.emitOpError()
               << "expected " << r.name << " scales laid out as " << r.layout
               << " but the producing quantize writes " << q.getScaleLayout();
    }
  }

  // The launch: tiles x splits and the raster group's divisor (raster x
  // M tiles) are 32-bit in the kernel's work-unit decode.
  if (TileConfigAttr tile = op.getTileAttr();
      tile && !ShapedType::isDynamic(m) && !ShapedType::isDynamic(n)) {
    int64_t tilesM = m / tile.getBm() + (m % tile.getBm() != 0);
    int64_t tilesN = n / tile.getBn() + (n % tile.getBn() != 0);
    std::optional<int64_t> units = llvm::checkedMul<int64_t>(tilesM, tilesN);
    if (units)
      units = llvm::checkedMul<int64_t>(*units, tile.getSplits());
    if (!units || *units > kMaxKernelDim)
      return op.emitOpError()
             << "expected at most 2147483647 (2^31 - 1) work units (tiles x "
                "splits) for the kernel's 32-bit unit index but "
             << tilesM << "x" << tilesN << " tiles x " << tile.getSplits()
             << " splits exceed it; use larger tiles or fewer splits";
    std::optional<int64_t> group =
        llvm::checkedMul<int64_t>(tile.getRaster(), tilesM);
    if (!group || *group > kMaxKernelDim)
      return op.emitOpError()
             << "expected tile raster x M tiles <= 2147483647 (a 32-bit "
                "divisor of the kernel's unit decode) but got raster = "
             << tile.getRaster() << " with " << tilesM
             << " M tiles; use raster <= " << (tilesN < 8 ? tilesN : 8);
  }
  return success();
}

static LogicalResult verifyGroupedMatmul(GroupedMatmulOp op) {
  if (op.getALayout() != Layout::row_major)
    return op.emitOpError()
           << "expected A to be row_major (K-contiguous, the only FP8 operand "
              "order wgmma reads) but got "
           << stringifyLayout(op.getALayout())
           << "; quantize it with layout = #blockscale.layout<row_major>";
  if (op.getBLayout() != Layout::col_major)
    return op.emitOpError()
           << "expected B to be col_major (K-contiguous, i.e. each group's "
              "weight as (N, K) row-major) but got "
           << stringifyLayout(op.getBLayout())
           << "; quantize it with layout = #blockscale.layout<col_major>";
  ArrayRef<int64_t> a = op.getA().getType().getShape();
  int64_t g = op.getNumGroups(), n = op.getN(), k = op.getK();
  // B is addressed as one (G * N, K) matrix and A, C as (rows, K), (rows, N)
  // with every group's rows inside: those row counts are 32-bit too.
  std::optional<int64_t> bRows = llvm::checkedMul<int64_t>(g, n);
  if (failed(checkKernelDim(op, "N", n)) || failed(checkKernelDim(op, "K", k)) ||
      failed(checkKernelDim(op, "G x N", bRows ? *bRows : kMaxKernelDim + 1)))
    return failure();
  int64_t aRows = a[0];
  if (a.size() == 3 && !ShapedType::isDynamic(a[1])) {
    std::optional<int64_t> rows = llvm::checkedMul<int64_t>(a[0], a[1]);
    aRows = rows ? *rows : kMaxKernelDim + 1;
  }
  if (failed(checkKernelDim(op, "rows of A", aRows)))
    return failure();
  // TMA rule: the row strides of A and B (K FP8 elements) and of C (N
  // elements) are multiples of 16 bytes.
  Type outT = op.getC().getType().getElementType();
  if (k % 16 != 0)
    return op.emitOpError() << "expected K to be a multiple of 16 (A's and "
                               "B's rows of FP8 elements are TMA rows of a "
                               "multiple of 16 bytes) but got K = "
                            << k << "; pad K to " << roundUp(k, 16);
  int64_t perRow = 16 / elementBytes(outT);
  if (n % perRow != 0)
    return op.emitOpError() << "expected N to be a multiple of " << perRow
                            << " (C's rows of " << outT
                            << " are TMA rows of a multiple of 16 bytes) but "
                               "got N = "
                            << n << "; pad N to " << roundUp(n, perRow);
  if (CastResult q = getProducingCast(op.getA())) {
    if (q.recipe != ScaleRecipe::blk_1x128 || q.layout != Layout::row_major)
      return op.emitOpError()
             << "expected A quantized with 1x128 blocks in row_major order "
                "but its quantize uses "
             << getRecipeDisplayName(q.recipe) << " blocks in "
             << stringifyLayout(q.layout) << " order";
  }
  return success();
}

/// The k-grouped kernel addresses C as (G * M, N) rows and A, B as (M,
/// capacity), (N, capacity) TMA rows of FP8 tokens; its operands must be the
/// group-aware cast's (every group from a 128-token block, offsets the
/// matmul's own).
static LogicalResult verifyGroupedMatmulK(GroupedMatmulKOp op) {
  int64_t g = op.getNumGroups(), m = op.getM(), n = op.getN();
  std::optional<int64_t> cRows = llvm::checkedMul<int64_t>(g, m);
  if (failed(checkKernelDim(op, "M", m)) ||
      failed(checkKernelDim(op, "N", n)) ||
      failed(checkKernelDim(op, "capacity", op.getCapacity())) ||
      failed(checkKernelDim(op, "G x M", cRows ? *cRows : kMaxKernelDim + 1)))
    return failure();
  Type outT = cast<RankedTensorType>(op.getC().getType()).getElementType();
  int64_t perRow = 16 / elementBytes(outT);
  if (n % perRow != 0)
    return op.emitOpError() << "expected N to be a multiple of " << perRow
                            << " (C's rows of " << outT
                            << " are TMA rows of a multiple of 16 bytes) but "
                               "got N = "
                            << n << "; pad N to " << roundUp(n, perRow);
  struct {
    StringRef name;
    Value data;
  } operands[] = {{"A", op.getA()}, {"B", op.getB()}};
  for (const auto &o : operands) {
    if (CastResult q = getProducingCast(o.data))
      return op.emitOpError()
             << "expected " << o.name
             << " from blockscale.quantize_grouped_tokens (every group "
                "padded to 128-token blocks) but got a result of "
             << q.op->getName() << "; use the group-aware cast";
    auto q = o.data.getDefiningOp<QuantizeGroupedTokensOp>();
    if (q && q.getOffsets() != op.getOffsets()) {
      InFlightDiagnostic diag =
          op.emitOpError()
          << "expected " << o.name
          << " cast with the matmul's offsets (the padded blocks follow "
             "them) but got a cast with other offsets";
      diag.attachNote(q.getLoc()) << "cast here";
      return diag;
    }
  }
  return success();
}

static LogicalResult verifyGroupedCast(QuantizeGroupedTokensOp q) {
  if (!q.getScaleLayoutAttr())
    return q.emitOpError() << "expected a scale_layout but got none; run "
                              "--blockscale-pad-scales";
  auto inType = cast<RankedTensorType>(q.getInput().getType());
  ArrayRef<int64_t> in = inType.getShape();
  int64_t cap = cast<RankedTensorType>(q.getResult().getType()).getDimSize(1);
  if (failed(checkKernelDim(q, "input rows", in[0])) ||
      failed(checkKernelDim(q, "input columns", in[1])) ||
      failed(checkKernelDim(q, "capacity", cap)))
    return failure();
  // The input is read through TMA, 16-byte rows (the result's rows are
  // whole 128-token blocks).
  Type inT = inType.getElementType();
  int64_t inBytes = elementBytes(inT);
  if (in[1] * inBytes % 16 != 0)
    return q.emitOpError() << "expected input rows of a multiple of 16 bytes "
                              "but got "
                           << in[1] << " x " << inT << "; pad the columns to "
                           << roundUp(in[1], 16 / inBytes);
  return success();
}

namespace {
/// One FP8 result of a cast kernel and its name in diagnostics.
struct NamedCastResult {
  CastResult cast;
  StringRef name;
};
} // namespace

/// The checks of a cast kernel: its input and each of its FP8 results
/// (one, or the two of a dual cast).
static LogicalResult verifyCast(Operation *q, Value input,
                                ArrayRef<NamedCastResult> results) {
  for (const NamedCastResult &r : results) {
    if (r.cast.recipe != ScaleRecipe::tensorwise && !r.cast.getScaleLayout())
      return q->emitOpError()
             << "expected a " << r.cast.scaleLayoutName.getValue()
             << " but got none; run --blockscale-pad-scales";
  }
  // The cast kernels move 16-byte vectors: rows of the input and of the
  // physical output must be multiples of 16 bytes.
  auto inType = cast<RankedTensorType>(input.getType());
  ArrayRef<int64_t> in = inType.getShape();
  if (failed(checkKernelDim(q, "input rows", in[0])) ||
      failed(checkKernelDim(q, "input columns", in[1])))
    return failure();
  Type inT = inType.getElementType();
  int64_t inBytes = elementBytes(inT);
  // Sizes are < 2^31 here: no product below overflows.
  if (!ShapedType::isDynamic(in[1]) && in[1] * inBytes % 16 != 0)
    return q->emitOpError() << "expected input rows of a multiple of 16 bytes "
                               "but got "
                            << in[1] << " x " << inT << "; pad the columns to "
                            << roundUp(in[1], 16 / inBytes);
  for (const NamedCastResult &r : results) {
    int64_t outContig = r.cast.writesTransposed() ? in[0] : in[1];
    if (!ShapedType::isDynamic(outContig) && outContig % 16 != 0)
      return q->emitOpError()
             << "expected the FP8 " << r.name
             << "'s rows to be a multiple of 16 bytes (TMA rule for its "
                "consumer) but got "
             << outContig << " elements; pad that dimension to "
             << roundUp(outContig, 16);
  }
  return success();
}

LogicalResult mlir::blockscale::verifyKernelLayouts(Operation *root) {
  bool failedAny = false;
  root->walk([&](Operation *op) {
    if (auto mm = dyn_cast<MatmulOp>(op))
      failedAny |= failed(verifyMatmul(mm));
    else if (auto gm = dyn_cast<GroupedMatmulOp>(op))
      failedAny |= failed(verifyGroupedMatmul(gm));
    else if (auto gk = dyn_cast<GroupedMatmulKOp>(op))
      failedAny |= failed(verifyGroupedMatmulK(gk));
    else if (auto gq = dyn_cast<QuantizeGroupedTokensOp>(op))
      failedAny |= failed(verifyGroupedCast(gq));
    else if (auto q = dyn_cast<QuantizeOp>(op))
      failedAny |= failed(verifyCast(
          q, q.getInput(), {{getProducingCast(q.getResult()), "output"}}));
    else if (auto d = dyn_cast<QuantizeDualOp>(op))
      failedAny |=
          failed(verifyCast(d, d.getInput(),
                            {{getProducingCast(d.getResult()), "result"},
                             {getProducingCast(d.getTResult()), "t_result"}}));
  });
  return failure(failedAny);
}

namespace {
struct VerifyLayoutsPass
    : public mlir::blockscale::impl::BlockScaleVerifyLayoutsBase<VerifyLayoutsPass> {
  void runOnOperation() override {
    if (failed(verifyKernelLayouts(getOperation())))
      signalPassFailure();
  }
};
} // namespace
