//===- VerifyLayouts.cpp - check layouts against the kernels ----*- C++ -*-===//

#include "blockscale/Dialect/BlockScale/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::blockscale {
#define GEN_PASS_DEF_BLOCKSCALEVERIFYLAYOUTS
#include "blockscale/Dialect/BlockScale/Transforms/Passes.h.inc"
} // namespace mlir::blockscale

using namespace mlir;
using namespace mlir::blockscale;

static int64_t elementBytes(Type t) {
  return llvm::divideCeil(t.getIntOrFloatBitWidth(), 8);
}

/// TMA rule: every global stride but the innermost is a multiple of 16 bytes.
/// `extent` is the contiguous extent, `ld` an optional explicit stride.
static LogicalResult checkRowStride(Operation *op, StringRef what,
                                    StringRef ldName, StringRef extentName,
                                    int64_t extent, std::optional<int64_t> ld,
                                    Type elemType) {
  int64_t bytes = elementBytes(elemType);
  int64_t perRow = 16 / bytes;
  if (ld) {
    if (!ShapedType::isDynamic(extent) && *ld < extent)
      return op->emitOpError()
             << "expected " << ldName << " >= " << extentName << " = "
             << extent << " but got " << *ld;
    if (*ld * bytes % 16 != 0)
      return op->emitOpError()
             << "expected the row stride of " << what
             << " to be a multiple of 16 bytes (TMA rule) but got " << ldName
             << " = " << *ld << " (" << *ld * bytes << " bytes of " << elemType
             << "); use " << ldName << " = " << llvm::alignTo(*ld, perRow);
    return success();
  }
  if (ShapedType::isDynamic(extent))
    return success(); // checked by the runtime when the size is known
  if (extent * bytes % 16 != 0)
    return op->emitOpError()
           << "expected the row stride of " << what
           << " to be a multiple of 16 bytes (TMA rule) but got "
           << extentName << " = " << extent << " (" << extent * bytes
           << " bytes of " << elemType << "); pad the rows and set " << ldName
           << " = " << llvm::alignTo(extent, perRow);
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
  (void)m;
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
    if (auto q = r.data.getDefiningOp<QuantizeOp>()) {
      if (q.getRecipe() != r.recipe)
        return op.emitOpError()
               << "expected " << r.name << " quantized with "
               << getRecipeDisplayName(r.recipe) << " blocks but its quantize "
               << "uses " << getRecipeDisplayName(q.getRecipe());
      if (q.getLayout() != r.dataLayout)
        return op.emitOpError()
               << "expected " << r.name << " in "
               << stringifyLayout(r.dataLayout)
               << " order but its quantize writes "
               << stringifyLayout(q.getLayout());
      if (q.getScale() != r.scale)
        return op.emitOpError() << "expected the " << r.name
                                << " scales to come from the quantize that "
                                   "produces "
                                << r.name;
    }
    if (auto q = r.scale.getDefiningOp<QuantizeOp>()) {
      if (q.getScaleLayoutAttr() != r.layout)
        return op.emitOpError()
               << "expected " << r.name << " scales laid out as " << r.layout
               << " but the producing quantize writes "
               << q.getScaleLayoutAttr();
    }
  }
  return success();
}

static LogicalResult verifyQuantize(QuantizeOp q) {
  if (q.getRecipe() != ScaleRecipe::tensorwise && !q.getScaleLayoutAttr())
    return q.emitOpError()
           << "expected a scale_layout but got none; run "
              "--blockscale-pad-scales";
  // The cast kernels move 16-byte vectors: rows of the input and of the
  // physical output must be multiples of 16 bytes.
  ArrayRef<int64_t> in = q.getInput().getType().getShape();
  Type inT = q.getInput().getType().getElementType();
  int64_t inBytes = elementBytes(inT);
  if (!ShapedType::isDynamic(in[1]) && in[1] * inBytes % 16 != 0)
    return q.emitOpError() << "expected input rows of a multiple of 16 bytes "
                              "but got "
                           << in[1] << " x " << inT << "; pad the columns to "
                           << llvm::alignTo(in[1], 16 / inBytes);
  int64_t outContig = q.writesTransposed() ? in[0] : in[1];
  if (!ShapedType::isDynamic(outContig) && outContig % 16 != 0)
    return q.emitOpError()
           << "expected the FP8 output's rows to be a multiple of 16 bytes "
              "(TMA rule for its consumer) but got "
           << outContig << " elements; pad that dimension to "
           << llvm::alignTo(outContig, 16);
  return success();
}

namespace {
struct VerifyLayoutsPass
    : public mlir::blockscale::impl::BlockScaleVerifyLayoutsBase<VerifyLayoutsPass> {
  void runOnOperation() override {
    WalkResult r = getOperation().walk([](Operation *op) {
      if (auto mm = dyn_cast<MatmulOp>(op))
        return failed(verifyMatmul(mm)) ? WalkResult::interrupt()
                                        : WalkResult::advance();
      if (auto q = dyn_cast<QuantizeOp>(op))
        return failed(verifyQuantize(q)) ? WalkResult::interrupt()
                                         : WalkResult::advance();
      return WalkResult::advance();
    });
    if (r.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
