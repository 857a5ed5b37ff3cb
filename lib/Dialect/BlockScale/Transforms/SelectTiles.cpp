//===- SelectTiles.cpp - choose kernel tile configurations ------*- C++ -*-===//

#include "blockscale/Dialect/BlockScale/Transforms/Passes.h"
#include "blockscale/Dialect/BlockScale/Transforms/TileModel.h"
#include "blockscale/Target/Cuda/Kernels/params.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::blockscale {
#define GEN_PASS_DEF_BLOCKSCALESELECTTILES
#include "blockscale/Dialect/BlockScale/Transforms/Passes.h.inc"
} // namespace mlir::blockscale

using namespace mlir;
using namespace mlir::blockscale;

/// Parses "bm=128,bn=128,stages=4,splits=1,raster=8" over `c` (also cluster
/// and ksplit).
static LogicalResult parseForce(StringRef spec, ::blockscale::TileChoice &c,
                                std::string &error) {
  SmallVector<StringRef> items;
  spec.split(items, ',', -1, /*KeepEmpty=*/false);
  for (StringRef item : items) {
    auto [key, value] = item.split('=');
    int v;
    if (value.trim().getAsInteger(10, v)) {
      error = ("expected key=integer in force option but got '" + item + "'")
                  .str();
      return failure();
    }
    key = key.trim();
    if (key == "bm")
      c.bm = v;
    else if (key == "bn")
      c.bn = v;
    else if (key == "stages")
      c.stages = v;
    else if (key == "splits")
      c.splits = v;
    else if (key == "raster")
      c.raster = v;
    else if (key == "cluster")
      c.cluster = v;
    else if (key == "ksplit")
      c.ksplit = v;
    else {
      error = ("unknown key '" + key +
               "' in force option (expected bm, bn, stages, splits, raster, "
               "cluster, ksplit)")
                  .str();
      return failure();
    }
  }
  return success();
}

namespace {
struct SelectTilesPass
    : public mlir::blockscale::impl::BlockScaleSelectTilesBase<SelectTilesPass> {
  using Base::Base;

  void runOnOperation() override {
    ::blockscale::DeviceModel dev;
    dev.numSMs = numSMs;
    dev.smemBytes = smemBytes;
    bool failedAny = false;
    getOperation().walk([&](MatmulOp op) {
      if (op.getTileAttr())
        return;
      ::blockscale::GemmProblem p;
      p.m = ShapedType::isDynamic(op.getM()) ? mHint : op.getM();
      p.n = op.getN();
      p.k = op.getK();
      if (ShapedType::isDynamic(p.n) || ShapedType::isDynamic(p.k)) {
        op.emitOpError() << "expected static N and K to select a tile (only M "
                            "may be dynamic) but got "
                         << shapeToString({op.getM(), p.n, p.k});
        failedAny = true;
        return;
      }
      p.wgrad = op.getForm() == GemmForm::wgrad;
      p.outBytes = op.getC().getType().getElementType().isF32() ? 4 : 2;
      p.accumulate = static_cast<bool>(op.getAcc());

      ::blockscale::TileChoice c = ::blockscale::selectTile(p, dev);
      if (!force.empty()) {
        // A forced configuration starts from the defaults (bm 128, bn 128,
        // no split, no cluster, raster 8), not from the model's choice.
        std::string error;
        c = ::blockscale::TileChoice();
        c.stages = 0;
        if (failed(parseForce(force, c, error))) {
          op.emitOpError() << error;
          failedAny = true;
          return;
        }
        if (!::blockscale::isValidTile(c.bm, c.bn)) {
          op.emitOpError() << "expected a forced tile the kernels implement "
                              "(bm 64 or 128; bn 16..128 step 16, 144, 160, "
                              "192; bm 256 with bn <= 128) but got bm="
                           << c.bm << ",bn=" << c.bn;
          failedAny = true;
          return;
        }
        int maxStages = bs::gemmMaxStages(c.bm, c.bn, p.outBytes, p.wgrad,
                                          dev.smemBytes, c.ksplit);
        if (maxStages < 2) {
          // Not even a double-buffered ring fits beside the epilogue's
          // staging of the output tile.
          op.emitOpError()
              << "expected a forced tile whose two-stage ring and "
              << (p.outBytes == 4 ? "f32" : "bf16")
              << " output staging fit in " << dev.smemBytes
              << " bytes of shared memory but bm=" << c.bm << ",bn=" << c.bn
              << " needs "
              << bs::gemmSmemBytes(c.bm, c.bn, 2, p.outBytes, p.wgrad,
                                   c.ksplit)
              << "; use a smaller bm or bn";
          failedAny = true;
          return;
        }
        if (c.stages == 0)
          c.stages = std::min(maxStages, 8);
        if (c.stages > maxStages || c.stages < 2) {
          op.emitOpError() << "expected stages in [2, " << maxStages
                           << "] for bm=" << c.bm << " bn=" << c.bn
                           << " within " << dev.smemBytes
                           << " bytes of shared memory but got " << c.stages;
          failedAny = true;
          return;
        }
      }
      auto attr = TileConfigAttr::getChecked(
          [&] { return op.emitOpError(); }, op.getContext(), int64_t(c.bm),
          int64_t(c.bn), int64_t(c.bk), int64_t(c.stages), int64_t(c.cluster),
          int64_t(c.swizzle), int64_t(c.splits), int64_t(c.raster),
          int64_t(c.ksplit));
      if (!attr) {
        failedAny = true;
        return;
      }
      op.setTileAttr(attr);
    });
    if (failedAny)
      signalPassFailure();
  }
};
} // namespace
