//===- ShardAlignment.cpp - shard boundaries on scale blocks ----*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "blockscale/Dialect/BlockScale/Transforms/Passes.h"
#include "blockscale/Dialect/BlockScale/Transforms/ShardingInterfaceImpl.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterfaceImpl.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/CheckedArithmetic.h"

namespace mlir::blockscale {
#define GEN_PASS_DEF_BLOCKSCALECHECKSHARDALIGNMENT
#include "blockscale/Dialect/BlockScale/Transforms/Passes.h.inc"
} // namespace mlir::blockscale

using namespace mlir;
using namespace mlir::blockscale;
using shard::Sharding;

namespace {

/// An annotated tensor of the op: its value, annotation op, logical shape and
/// for each of its dimensions the op loop it maps to and its block size
/// (128 for data along a blocked loop, 1 for scale dimensions that already
/// count blocks).
struct Annotated {
  shard::ShardOp annotation;
  RankedTensorType type;
  SmallVector<int64_t> loopOfDim;
  SmallVector<int64_t> blockOfDim;
};

/// The shard.shard annotating `operand` for its user, if any.
static shard::ShardOp operandAnnotation(OpOperand &operand) {
  auto s = operand.get().getDefiningOp<shard::ShardOp>();
  return s && s.getAnnotateForUsers() ? s : shard::ShardOp();
}

/// The shard.shard annotating `result` for its producer, if any.
static shard::ShardOp resultAnnotation(OpResult result) {
  for (Operation *user : result.getUsers())
    if (auto s = dyn_cast<shard::ShardOp>(user); s && !s.getAnnotateForUsers())
      return s;
  return {};
}

struct CheckShardAlignmentPass
    : public mlir::blockscale::impl::BlockScaleCheckShardAlignmentBase<
          CheckShardAlignmentPass> {
  using Base::Base;

  void runOnOperation() override {
    SymbolTableCollection symbols;
    bool failedAny = false;
    getOperation().walk([&](Operation *op) {
      if (!isa<MatmulOp, QuantizeOp>(op))
        return;
      if (failed(checkOp(op, symbols)))
        failedAny = true;
    });
    if (failedAny)
      signalPassFailure();
  }

  LogicalResult checkOp(Operation *op, SymbolTableCollection &symbols) {
    SmallVector<Sharding, 4> operandShardings, resultShardings;
    for (OpOperand &o : op->getOpOperands()) {
      FailureOr<std::pair<bool, Sharding>> s = shard::getSharding(o);
      operandShardings.push_back(succeeded(s) ? s->second : Sharding());
    }
    for (OpResult r : op->getResults()) {
      FailureOr<std::pair<bool, Sharding>> s = shard::getSharding(r);
      resultShardings.push_back(succeeded(s) ? s->second : Sharding());
    }
    FailureOr<std::optional<LoopSharding>> lsOr =
        getLoopSharding(op, operandShardings, resultShardings, symbols);
    if (failed(lsOr))
      return failure();
    std::optional<LoopSharding> &ls = *lsOr;
    if (!ls)
      return success(); // not sharded
    ArrayRef<utils::IteratorType> loops = ls->loops;
    ArrayRef<AffineMap> maps = ls->maps;
    const ShardCounts &counts = ls->counts;

    auto mm = dyn_cast<MatmulOp>(op);
    auto q = dyn_cast<QuantizeOp>(op);
    if (!allowPadding)
      return mm ? checkMatmulShardAlignment(mm, counts)
                : checkQuantizeShardAlignment(q, counts);

    // Which loops split a scale block, and the block size along each loop.
    SmallVector<int64_t> loopBlock(loops.size(), 1);
    SmallVector<int64_t> loopSize(loops.size(), ShapedType::kDynamic);
    if (mm) {
      loopSize = {mm.getM(), mm.getN(), mm.getK()};
      loopBlock = {1, mm.getBRecipe() == ScaleRecipe::blk_128x128 ? 128 : 1,
                   128};
      if (mm.getAcc() && counts.dims[2] > 1)
        return checkMatmulShardAlignment(mm, counts); // not fixable
    } else {
      auto [br, bc] = getBlockShape(q.getRecipe());
      ArrayRef<int64_t> shape = q.getResult().getType().getShape();
      loopSize = {shape[0], shape[1]};
      loopBlock = {br, bc};
      if (q.getRecipe() == ScaleRecipe::tensorwise)
        return checkQuantizeShardAlignment(q, counts);
    }
    SmallVector<int64_t> padLoops;
    for (size_t l = 0; l < loops.size() && l < 3; ++l) {
      int64_t p = counts.dims[l];
      if (p <= 1 || loopBlock[l] <= 1)
        continue;
      std::optional<int64_t> unit = llvm::checkedMul<int64_t>(loopBlock[l], p);
      if (ShapedType::isDynamic(loopSize[l]) || !unit ||
          loopSize[l] % *unit != 0)
        padLoops.push_back(l);
    }
    if (padLoops.empty())
      return success();

    // Every annotated tensor of the op gets offsets along its dimensions that
    // map to a padded loop. The operands' and results' maps are in order.
    SmallVector<std::pair<shard::ShardOp, Value>, 8> annotated;
    for (OpOperand &o : op->getOpOperands())
      annotated.push_back({operandAnnotation(o), o.get()});
    for (OpResult r : op->getResults())
      annotated.push_back({resultAnnotation(r), r});
    for (auto [idx, entry] : llvm::enumerate(annotated)) {
      auto [ann, value] = entry;
      if (!ann)
        continue;
      auto type = dyn_cast<RankedTensorType>(value.getType());
      if (!type || type.getRank() == 0)
        continue;
      // Scale tensors count blocks: operands 1 and 3 of a matmul, result 1
      // of a quantize.
      bool isScale = mm ? (idx == 1 || idx == 3) : idx == 2;
      if (failed(padAnnotation(op, ann, type, maps[idx], padLoops, loopBlock,
                               counts, isScale, ls->grid)))
        return failure();
    }
    return success();
  }

  LogicalResult padAnnotation(Operation *op, shard::ShardOp ann,
                              RankedTensorType type, AffineMap map,
                              ArrayRef<int64_t> padLoops,
                              ArrayRef<int64_t> loopBlock,
                              const ShardCounts &counts, bool isScale,
                              shard::GridOp grid) {
    auto shardingOp = ann.getSharding().getDefiningOp<shard::ShardingOp>();
    if (!shardingOp)
      return op->emitOpError() << "expected its shardings to be defined by "
                                  "shard.sharding ops to pad them";
    Sharding sharding(ann.getSharding());
    if (!sharding.getStaticShardedDimsOffsets().empty() ||
        !sharding.getDynamicShardedDimsOffsets().empty())
      return op->emitOpError()
             << "expected no sharded_dims_offsets on a sharding that "
                "allow-padding pads (it computes them) but "
             << type << " has them; drop them or pad the tensor yourself";
    ArrayRef<shard::GridAxesAttr> split = sharding.getSplitAxes();
    SmallVector<int64_t> offsets;
    bool changed = false;
    for (int64_t d = 0; d < type.getRank() && d < map.getNumResults(); ++d) {
      if (d >= int64_t(split.size()) || split[d].empty())
        continue;
      int64_t p = gridGroupSize(split[d].asArrayRef(), grid);
      // One offset per device and one more: keep the list small.
      constexpr int64_t kMaxPaddedDevices = int64_t(1) << 20;
      if (p < 1 || p > kMaxPaddedDevices)
        return op->emitOpError()
               << "expected at most " << kMaxPaddedDevices
               << " devices along a padded dimension but dimension " << d
               << " of " << type << " is split over "
               << (p < 1 ? std::string("a dynamic count of")
                         : std::to_string(p))
               << " devices";
      int64_t size = type.getDimSize(d);
      if (ShapedType::isDynamic(size))
        return op->emitOpError()
               << "expected static sizes to pad shards to whole scale blocks "
                  "but dimension "
               << d << " of " << type << " is dynamic";
      int64_t loop = -1;
      if (auto dimExpr = dyn_cast<AffineDimExpr>(map.getResult(d)))
        loop = dimExpr.getPosition();
      bool pad = loop >= 0 && llvm::is_contained(padLoops, loop);
      // Scale dimensions are already in blocks.
      int64_t unit = pad ? (isScale ? 1 : loopBlock[loop]) : 1;
      int64_t units = llvm::divideCeil(size, unit);
      int64_t per = pad ? llvm::divideCeil(units, p) : 0;
      for (int64_t i = 0; i <= p; ++i) {
        // i * per * unit <= (units + p) * unit may pass int64: clamp.
        std::optional<int64_t> off = llvm::checkedMul<int64_t>(i, per);
        if (off)
          off = llvm::checkedMul<int64_t>(*off, unit);
        offsets.push_back(pad ? (off ? std::min(size, *off) : size)
                              : (size / p) * i + (i == p ? size % p : 0));
      }
      changed |= pad;
    }
    if (!changed)
      return success();
    OpBuilder b(shardingOp);
    auto padded = shard::ShardingOp::create(
        b, shardingOp.getLoc(), shardingOp.getType(), sharding.getGridAttr(),
        shard::GridAxesArrayAttr::get(b.getContext(), split),
        b.getDenseI64ArrayAttr(offsets), ValueRange(),
        b.getDenseI64ArrayAttr(sharding.getStaticHaloSizes()), ValueRange());
    ann.getSharding().replaceUsesWithIf(
        padded.getResult(), [&](OpOperand &u) { return u.getOwner() == ann; });
    (void)counts;
    return success();
  }
};

} // namespace
