//===- SelectTiles.cpp - choose kernel tile configurations ------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "blockscale/Dialect/BlockScale/Transforms/Passes.h"
#include "blockscale/Dialect/BlockScale/Transforms/TileModel.h"
#include "blockscale/Runtime/KernelFamily.h"
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
/// and ksplit); `bnGiven`, when given, says whether the spec set bn.
static LogicalResult parseForce(StringRef spec, ::blockscale::TileChoice &c,
                                std::string &error, bool *bnGiven = nullptr) {
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
    else if (key == "bn") {
      c.bn = v;
      if (bnGiven)
        *bnGiven = true;
    }
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

  /// The pass options, checked before anything reads them (DeviceModel
  /// holds ints: an unchecked int64 option would wrap).
  LogicalResult checkOptions() {
    // On the module's location, without the module printed after it.
    Location loc = getOperation().getLoc();
    int64_t numSMs = this->numSMs, smemBytes = this->smemBytes,
            mHint = this->mHint;
    if (numSMs < 1 || numSMs > ::blockscale::kMaxSMs)
      return emitError(loc)
             << "expected blockscale-select-tiles option num-sms in [1, "
             << ::blockscale::kMaxSMs << "] but got " << numSMs
             << "; pass the target GPU's SM count (132 on H100/H200 SXM)";
    if (smemBytes < 1 || smemBytes > ::blockscale::kMaxSmemBytes)
      return emitError(loc)
             << "expected blockscale-select-tiles option smem-bytes in [1, "
             << ::blockscale::kMaxSmemBytes << "] but got " << smemBytes
             << "; pass the dynamic shared memory a CTA may use (232448 on "
                "H100/H200)";
    if (mHint < 0 || mHint > ::blockscale::kMaxGemmDim)
      return emitError(loc)
             << "expected blockscale-select-tiles option m-hint in [0, "
             << ::blockscale::kMaxGemmDim << "] (0: none) but got " << mHint
             << "; pass the M a dynamic-M GEMM is planned for (e.g. 4096)";
    return success();
  }

  void runOnOperation() override {
    if (failed(checkOptions()))
      return signalPassFailure();
    ::blockscale::DeviceModel dev;
    dev.numSMs = int(numSMs);
    dev.smemBytes = int(smemBytes);
    bool failedAny = false;
    getOperation().walk([&](MatmulOp op) {
      if (op.getTileAttr())
        return;
      if (failed(selectFor(op, dev)))
        failedAny = true;
    });
    getOperation().walk([&](GroupedMatmulOp op) {
      if (op.getTileAttr())
        return;
      if (failed(selectGrouped(op, dev)))
        failedAny = true;
    });
    getOperation().walk([&](GroupedMatmulKOp op) {
      if (op.getTileAttr())
        return;
      if (failed(selectGroupedK(op, dev)))
        failedAny = true;
    });
    if (failedAny)
      signalPassFailure();
  }

  LogicalResult selectFor(MatmulOp op, const ::blockscale::DeviceModel &dev) {
    ::blockscale::GemmProblem p;
    bool dynamicM = ShapedType::isDynamic(op.getM());
    p.m = !dynamicM     ? op.getM()
          : mHint > 0 ? int64_t(mHint)
                      : ::blockscale::kDefaultMHint;
    p.n = op.getN();
    p.k = op.getK();
    if (ShapedType::isDynamic(p.n) || ShapedType::isDynamic(p.k))
      return op.emitOpError() << "expected static N and K to select a tile "
                                 "(only M may be dynamic) but got "
                              << shapeToString({op.getM(), p.n, p.k});
    p.wgrad = op.getForm() == GemmForm::wgrad;
    p.outBytes = op.getC().getType().getElementType().isF32() ? 4 : 2;
    p.accumulate = static_cast<bool>(op.getAcc());
    if (llvm::Error e = ::blockscale::validateProblem(p, dev))
      return op.emitOpError()
             << llvm::toString(std::move(e)) << " (selecting a tile for M x N "
             << "x K = " << shapeToString({op.getM(), p.n, p.k})
             << (dynamicM ? ", M planned as " + std::to_string(p.m)
                          : std::string())
             << ")";

    ::blockscale::TileChoice c;
    if (force.empty()) {
      std::vector<::blockscale::TileChoice> ranked =
          ::blockscale::rankTiles(p, dev);
      if (ranked.empty())
        return op.emitOpError()
               << "expected some tile whose two-stage ring and "
               << (p.outBytes == 4 ? "f32" : "bf16")
               << " output staging fit in smem-bytes = " << dev.smemBytes
               << " bytes of shared memory but none does; the smallest "
                  "(bm=64,bn=16) needs "
               << bs::gemmSmemBytes(64, 16, 2, p.outBytes, p.wgrad, 1);
      c = ranked.front();
    } else if (failed(forced(op, p, dev, c))) {
      return failure();
    }
    auto attr = TileConfigAttr::getChecked(
        [&] { return op.emitOpError(); }, op.getContext(), int64_t(c.bm),
        int64_t(c.bn), int64_t(c.bk), int64_t(c.stages), int64_t(c.cluster),
        int64_t(c.swizzle), int64_t(c.splits), int64_t(c.raster),
        int64_t(c.ksplit));
    if (!attr)
      return failure();
    op.setTileAttr(attr);
    return success();
  }

  /// Grouped matmuls take one tile for every split of their rows (or of
  /// their tokens), by the runtime family's rule
  /// (GroupedGemmFamily::defaultTile, from the rows expected per group, the
  /// output type, N and K); as many stages as fit. A forced tile may set
  /// bm, bn, stages, raster and (m-grouped) cluster only.
  LogicalResult selectGrouped(GroupedMatmulOp op,
                              const ::blockscale::DeviceModel &dev) {
    bool masked = op.getGrouping() == Grouping::m_masked;
    ArrayRef<int64_t> a = op.getA().getType().getShape();
    int64_t groups = op.getNumGroups();
    int64_t rows = masked ? a[1] : a[0];
    int64_t perGroup = ::blockscale::GroupedGemmFamily::rowsPerGroup(
        masked ? ::blockscale::Grouping::Masked
               : ::blockscale::Grouping::Contiguous,
        groups, groupHint(rows, groups),
        ShapedType::isDynamic(rows) ? 0 : rows);
    int64_t n = op.getC().getType().getShape().back();
    int64_t k = a.back();
    return selectGroupedTile(op, op.getC().getType().getElementType(),
                             masked ? ::blockscale::Grouping::Masked
                                    : ::blockscale::Grouping::Contiguous,
                             perGroup, ShapedType::isDynamic(n) ? 0 : n,
                             ShapedType::isDynamic(k) ? 0 : k, dev,
                             [&](TileConfigAttr t) { op.setTileAttr(t); });
  }

  LogicalResult selectGroupedK(GroupedMatmulKOp op,
                               const ::blockscale::DeviceModel &dev) {
    int64_t groups = cast<RankedTensorType>(op.getC().getType()).getShape()[0];
    int64_t capacity =
        cast<RankedTensorType>(op.getA().getType()).getShape().back();
    bool known = !ShapedType::isDynamic(capacity) &&
                 !ShapedType::isDynamic(groups);
    int64_t perGroup = ::blockscale::GroupedGemmFamily::rowsPerGroup(
        ::blockscale::Grouping::KContiguous, known ? groups : 1,
        groupHint(known ? capacity : ShapedType::kDynamic,
                  ShapedType::isDynamic(groups) ? 1 : groups),
        known ? capacity : 0);
    return selectGroupedTile(
        op, cast<RankedTensorType>(op.getC().getType()).getElementType(),
        ::blockscale::Grouping::KContiguous, perGroup, /*n=*/0,
        /*k=*/0, dev, [&](TileConfigAttr t) { op.setTileAttr(t); });
  }

  /// A grouped matmul's rows (tokens) are planned as the runtime plans them
  /// (GroupedGemmFamily::rowsPerGroup); m-hint, when given, is the rows of
  /// a dynamic `rows` in all, split evenly over `split` groups.
  int64_t groupHint(int64_t rows, int64_t split) {
    if (!ShapedType::isDynamic(rows) || mHint <= 0)
      return 0;
    return std::max<int64_t>(int64_t(mHint) / std::max<int64_t>(split, 1), 1);
  }

  LogicalResult selectGroupedTile(Operation *op, Type outType,
                                  ::blockscale::Grouping grouping,
                                  int64_t perGroup, int64_t n, int64_t k,
                                  const ::blockscale::DeviceModel &dev,
                                  function_ref<void(TileConfigAttr)> set) {
    bool kGrouped = grouping == ::blockscale::Grouping::KContiguous;
    StringRef what = kGrouped ? "k-grouped" : "grouped";
    int outBytes = outType.isF32() ? 4 : 2;
    ::blockscale::TileChoice c;
    auto rule = ::blockscale::GroupedGemmFamily::defaultTile(
        grouping, perGroup,
        outType.isF32() ? ::blockscale::DType::F32 : ::blockscale::DType::BF16,
        n, kGrouped ? 0 : k);
    c.bm = rule.bm;
    c.bn = rule.bn;
    c.cluster = rule.cluster;
    c.stages = 0;
    if (!force.empty()) {
      std::string error;
      ::blockscale::TileChoice f = c;
      f.cluster = 1;
      bool bnForced = false;
      if (failed(parseForce(force, f, error, &bnForced)))
        return op->emitOpError() << error;
      if (f.splits != 1 || f.ksplit != 1 ||
          (f.cluster != 1 && (kGrouped || f.cluster != 2)))
        return op->emitOpError()
               << "expected a forced tile for a " << what
               << " matmul with "
               << (kGrouped ? "bm, bn and stages"
                            : "bm, bn, stages and cluster (1 or 2)")
               << " only (its kernel has no split-K"
               << (kGrouped ? " and no clusters" : "") << ") but got '"
               << force << "'";
      // The runtime's plan reads forceTile through the same rule.
      auto forced = ::blockscale::GroupedGemmFamily::applyForce(
          rule, f.bm, f.bn, bnForced, f.stages, f.cluster, n, kGrouped);
      if (!forced)
        return op->emitOpError() << llvm::toString(forced.takeError());
      c.bm = forced->bm;
      c.bn = forced->bn;
      c.stages = forced->stages;
      c.cluster = forced->cluster;
      c.raster = f.raster;
    }
    if (!::blockscale::isValidTile(c.bm, c.bn))
      return op->emitOpError()
             << "expected a tile the " << what
             << " kernel implements (bm 64, 128 or 256; bn 16..128 step 16, "
                "144, 160, 192; bn <= 128 with bm 256) but got bm="
             << c.bm << ",bn=" << c.bn;
    int maxStages =
        bs::gemmMaxStages(c.bm, c.bn, outBytes, kGrouped, int(dev.smemBytes));
    if (c.stages == 0)
      c.stages = maxStages;
    if (c.stages < 2 || c.stages > maxStages)
      return op->emitOpError()
             << "expected 2 <= stages <= " << maxStages << " for bm=" << c.bm
             << ",bn=" << c.bn << " in smem-bytes = " << dev.smemBytes
             << " but got stages=" << c.stages;
    auto attr = TileConfigAttr::getChecked(
        [&] { return op->emitOpError(); }, op->getContext(), int64_t(c.bm),
        int64_t(c.bn), int64_t(128), int64_t(c.stages), int64_t(c.cluster),
        int64_t(128), int64_t(1), int64_t(c.raster), int64_t(1));
    if (!attr)
      return failure();
    set(attr);
    return success();
  }

  /// The forced configuration: it starts from the defaults (bm 128, bn 128,
  /// no split, no cluster, raster 8), not from the model's choice.
  LogicalResult forced(MatmulOp op, const ::blockscale::GemmProblem &p,
                       const ::blockscale::DeviceModel &dev,
                       ::blockscale::TileChoice &c) {
    std::string error;
    c = ::blockscale::TileChoice();
    c.stages = 0;
    if (failed(parseForce(force, c, error)))
      return op.emitOpError() << error;
    if (!::blockscale::isValidTile(c.bm, c.bn))
      return op.emitOpError()
             << "expected a forced tile the kernels implement (bm 64 or 128; "
                "bn 16..128 step 16, 144, 160, 192; bm 256 with bn <= 128) "
                "but got bm="
             << c.bm << ",bn=" << c.bn;
    // The rest of the attribute's rules (cluster, ksplit, raster, ...)
    // first, so that the shared-memory and count checks below see sane
    // values.
    if (!TileConfigAttr::getChecked(
            [&] { return op.emitOpError() << "forced tile: "; },
            op.getContext(), int64_t(c.bm), int64_t(c.bn), int64_t(c.bk),
            int64_t(c.stages == 0 ? 2 : c.stages), int64_t(c.cluster),
            int64_t(c.swizzle), int64_t(c.splits), int64_t(c.raster),
            int64_t(c.ksplit)))
      return failure();
    int64_t kBlocks = llvm::divideCeil(p.k, 128);
    if (c.splits > kBlocks)
      return op.emitOpError()
             << "expected forced splits <= " << kBlocks
             << " (K-blocks of 128 in K = " << p.k << ") but got "
             << c.splits;
    int64_t units = ::blockscale::tileUnits(p, c);
    if (units < 0 || units > ::blockscale::kMaxTileCount)
      return op.emitOpError()
             << "expected at most 2147483647 (2^31 - 1) tiles x splits for "
                "the kernels' 32-bit tile indices but bm="
             << c.bm << ",bn=" << c.bn << ",splits=" << c.splits << " on "
             << p.m << "x" << p.n << " gives "
             << (units < 0 ? std::string("more than 2^63")
                           : std::to_string(units))
             << "; use larger tiles or fewer splits";
    if (c.cluster > dev.numSMs)
      return op.emitOpError()
             << "expected a forced cluster of at most num-sms = "
             << dev.numSMs << " CTAs but got cluster = " << c.cluster;
    int maxStages = bs::gemmMaxStages(c.bm, c.bn, p.outBytes, p.wgrad,
                                      dev.smemBytes, c.ksplit);
    if (maxStages < 2) {
      // Not even a double-buffered ring fits beside the epilogue's
      // staging of the output tile.
      return op.emitOpError()
             << "expected a forced tile whose two-stage ring and "
             << (p.outBytes == 4 ? "f32" : "bf16") << " output staging fit in "
             << dev.smemBytes << " bytes of shared memory but bm=" << c.bm
             << ",bn=" << c.bn << " needs "
             << bs::gemmSmemBytes(c.bm, c.bn, 2, p.outBytes, p.wgrad,
                                  c.ksplit)
             << "; use a smaller bm or bn";
    }
    if (c.stages == 0)
      c.stages = std::min(maxStages, 8);
    if (c.stages > maxStages || c.stages < 2)
      return op.emitOpError() << "expected stages in [2, " << maxStages
                              << "] for bm=" << c.bm << " bn=" << c.bn
                              << " within " << dev.smemBytes
                              << " bytes of shared memory but got "
                              << c.stages;
    return success();
  }
};
} // namespace
