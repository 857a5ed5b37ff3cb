//===- ShardGuard.cpp - shardings the upstream passes can take --*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// --blockscale-check-shardings: the upstream `sharding-propagation` and
// `shard-partition` passes assume more than the shard dialect's verifiers
// check, and crash, divide by zero or compute wrong local shapes otherwise
// (docs/upstream-shard-issues.md). blockscale's shard pipeline runs this
// guard before each of them so that its users get a diagnostic instead.
//
//===----------------------------------------------------------------------===//

#include "blockscale/Dialect/BlockScale/Transforms/Passes.h"
#include "blockscale/Dialect/BlockScale/Transforms/ShardingInterfaceImpl.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::blockscale {
#define GEN_PASS_DEF_BLOCKSCALECHECKSHARDINGS
#include "blockscale/Dialect/BlockScale/Transforms/Passes.h.inc"
} // namespace mlir::blockscale

using namespace mlir;
using namespace mlir::blockscale;

static std::string listToString(ArrayRef<int64_t> v) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(v, os);
  os << "]";
  return s;
}

/// A shard.sharding on its own (no tensor yet).
static LogicalResult checkShardingOp(shard::ShardingOp so, shard::GridOp grid) {
  if (!so.getStaticHaloSizes().empty() || !so.getDynamicHaloSizes().empty())
    return so.emitOpError()
           << "expected no halo_sizes (blockscale ops read no halos, and "
              "upstream shard-partition mishandles them) but got "
           << so.getStaticHaloSizes().size() + so.getDynamicHaloSizes().size()
           << " halo sizes";
  if (!so.getDynamicShardedDimsOffsets().empty())
    return so.emitOpError()
           << "expected static sharded_dims_offsets but got "
           << so.getDynamicShardedDimsOffsets().size() << " dynamic values";
  int64_t rank = grid.getRank();
  SmallVector<shard::GridAxis> seen;
  for (shard::GridAxesAttr axes : so.getSplitAxes().getAxes()) {
    for (shard::GridAxis a : axes.asArrayRef()) {
      if (a < 0 || a >= rank)
        return so.emitOpError() << "expected split axes in [0, " << rank
                                << ") (grid @" << grid.getSymName()
                                << ") but got axis " << a;
      if (llvm::is_contained(seen, a))
        return so.emitOpError() << "expected each grid axis once in "
                                   "split_axes but axis "
                                << a << " appears twice";
      seen.push_back(a);
    }
    if (axes.size() > 1 && !so.getStaticShardedDimsOffsets().empty())
      return so.emitOpError()
             << "expected sharded_dims_offsets only with dimensions split "
                "over one grid axis (upstream counts the shards of several "
                "axes as their sum) but a dimension is split over "
             << axes.size() << " axes";
  }
  return success();
}

/// Split axes per tensor dimension, trailing unsplit dimensions dropped
/// (shardings that differ only there are equal).
using SplitAxes = SmallVector<SmallVector<shard::GridAxis>>;
static SplitAxes splitAxesOf(shard::ShardingOp so) {
  SplitAxes axes;
  for (shard::GridAxesAttr a : so.getSplitAxes().getAxes())
    axes.emplace_back(a.asArrayRef());
  while (!axes.empty() && axes.back().empty())
    axes.pop_back();
  return axes;
}
static std::string splitAxesToString(const SplitAxes &axes) {
  if (axes.empty())
    return "[[]]";
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(axes, os, [&](ArrayRef<shard::GridAxis> a) {
    os << "[";
    llvm::interleaveComma(a, os);
    os << "]";
  });
  os << "]";
  return s;
}

/// The split axes that shard-partition turns `src` into when a shard.shard
/// reshards it to `dst`. Upstream lowers one step and no more: the first of
/// (1) the last axis of a dimension moved to the end of another's, (2) one
/// axis appended to a dimension's, (3) a dimension's last axis removed, that
/// its loose matching finds, whatever the other dimensions do; none found,
/// it maps nothing and the partitioned IR gets a null value. Callers compare
/// the result with `dst`.
static std::optional<SplitAxes> upstreamReshardStep(SplitAxes src,
                                                    const SplitAxes &dst) {
  auto at = [](const SplitAxes &a, size_t d) {
    return d < a.size() ? ArrayRef<shard::GridAxis>(a[d])
                        : ArrayRef<shard::GridAxis>();
  };
  auto grow = [](SplitAxes &a, size_t d) {
    if (a.size() <= d)
      a.resize(d + 1);
  };
  for (size_t i = 0; i < src.size(); ++i)
    for (size_t j = 0; j < dst.size(); ++j) {
      ArrayRef<shard::GridAxis> s = at(src, i), t = at(dst, j);
      if (i == j || s.empty() || t.empty() || s.back() != t.back() ||
          s.drop_back() != t.drop_back())
        continue;
      shard::GridAxis g = s.back();
      src[i].pop_back();
      grow(src, j);
      src[j].push_back(g);
      return src;
    }
  for (size_t d = 0; d < dst.size(); ++d) {
    ArrayRef<shard::GridAxis> s = at(src, d), t = at(dst, d);
    if (t.size() != s.size() + 1 || t.drop_back() != s)
      continue;
    grow(src, d);
    src[d].push_back(t.back());
    return src;
  }
  for (size_t d = 0; d < src.size(); ++d) {
    ArrayRef<shard::GridAxis> s = at(src, d), t = at(dst, d);
    if (s.size() != t.size() + 1 || s.drop_back() != t)
      continue;
    src[d].pop_back();
    return src;
  }
  return std::nullopt;
}

/// A shard.shard of a shard.shard's result: a resharding, which
/// shard-partition lowers only in the single steps of upstreamReshardStep.
static LogicalResult checkReshard(shard::ShardOp sh, shard::ShardOp srcSh) {
  auto so = sh.getSharding().getDefiningOp<shard::ShardingOp>();
  auto srcSo = srcSh.getSharding().getDefiningOp<shard::ShardingOp>();
  if (!so || !srcSo)
    return success(); // (checkShardOp reports these)
  SplitAxes from = splitAxesOf(srcSo), to = splitAxesOf(so);
  bool sameOffsets =
      srcSo.getStaticShardedDimsOffsets() == so.getStaticShardedDimsOffsets();
  if (from == to && sameOffsets)
    return success();
  if (from.empty() && to.empty())
    return success(); // both replicated: nothing moves
  if (!srcSo.getStaticShardedDimsOffsets().empty() ||
      !so.getStaticShardedDimsOffsets().empty())
    return sh.emitOpError()
           << "expected a resharding between shardings without "
              "sharded_dims_offsets (shard-partition lowers none) but got "
              "split_axes "
           << splitAxesToString(from) << " -> " << splitAxesToString(to)
           << ", sharded_dims_offsets "
           << listToString(srcSo.getStaticShardedDimsOffsets()) << " -> "
           << listToString(so.getStaticShardedDimsOffsets())
           << "; give the value its uneven sharding where it is defined, or "
              "split it evenly";
  std::optional<SplitAxes> step = upstreamReshardStep(from, to);
  while (step && !step->empty() && step->back().empty())
    step->pop_back();
  if (step && *step == to)
    return success();
  return sh.emitOpError()
         << "expected a resharding of one grid axis (appended to a "
            "dimension's split axes, removed from their end, or moved from "
            "the end of one dimension's to the end of another's: what "
            "shard-partition lowers) but got split_axes "
         << splitAxesToString(from) << " -> " << splitAxesToString(to)
         << "; reshard through intermediate shard.shard ops, one grid axis "
            "at a time";
}

/// A shard.shard: its sharding against its tensor.
static LogicalResult checkShardOp(shard::ShardOp sh, bool beforePartition,
                                  SymbolTableCollection &symbols) {
  auto so = sh.getSharding().getDefiningOp<shard::ShardingOp>();
  if (!so) {
    InFlightDiagnostic d = sh.emitOpError()
                           << "expected its sharding to be a shard.sharding "
                              "op's result but got ";
    if (Operation *def = sh.getSharding().getDefiningOp())
      d << "a result of " << def->getName();
    else
      d << "a block argument";
    return d;
  }
  shard::GridOp grid = shard::getGridOrNull(so, so.getGridAttr(), symbols);
  if (!grid)
    return sh.emitOpError() << "expected @" << so.getGrid()
                            << " to name a shard.grid but none is declared";
  auto type = dyn_cast<RankedTensorType>(sh.getSrc().getType());
  if (!type)
    return sh.emitOpError() << "expected a ranked tensor but got "
                            << sh.getSrc().getType();
  ArrayRef<shard::GridAxesAttr> split = so.getSplitAxes().getAxes();
  if (int64_t(split.size()) > type.getRank())
    return sh.emitOpError()
           << "expected at most " << type.getRank()
           << " split-axes entries (one per dimension of " << type
           << ") but got " << split.size();
  ArrayRef<int64_t> offsets = so.getStaticShardedDimsOffsets();
  size_t pos = 0;
  for (auto [d, axesAttr] : llvm::enumerate(split)) {
    ArrayRef<shard::GridAxis> axes = axesAttr.asArrayRef();
    if (axes.empty())
      continue;
    int64_t devices = gridGroupSize(axes, grid);
    int64_t size = type.getDimSize(d);
    if (devices < 1)
      return sh.emitOpError() << "expected a static device count for "
                                 "dimension "
                              << d << " of " << type;
    if (!offsets.empty()) {
      // devices + 1 offsets from 0 to size, non-decreasing.
      if (ShapedType::isDynamic(size))
        return sh.emitOpError()
               << "expected a static size for dimension " << d << " of "
               << type << " with sharded_dims_offsets";
      if (offsets.size() - pos < size_t(devices) + 1)
        return sh.emitOpError()
               << "expected " << devices + 1
               << " sharded_dims_offsets for dimension " << d << " of "
               << type << " (" << devices << " devices) but got "
               << offsets.size() - pos << " left of "
               << listToString(offsets);
      ArrayRef<int64_t> o = offsets.slice(pos, devices + 1);
      pos += devices + 1;
      bool monotone = llvm::is_sorted(o);
      if (o.front() != 0 || o.back() != size || !monotone)
        return sh.emitOpError()
               << "expected the sharded_dims_offsets of dimension " << d
               << " of " << type << " to run from 0 to " << size
               << " without decreasing but got " << listToString(o);
      continue;
    }
    if (beforePartition && !ShapedType::isDynamic(size) && size % devices != 0)
      return sh.emitOpError()
             << "expected dimension " << d << " (= " << size << ") of "
             << type << " to split evenly over " << devices
             << " devices (grid axes of @" << grid.getSymName()
             << ") but " << size << " % " << devices << " = "
             << size % devices
             << "; shard-partition would give every device the rounded-down "
                "size: pad it, split it over a divisor, or give "
                "sharded_dims_offsets";
  }
  if (!offsets.empty() && pos != offsets.size())
    return sh.emitOpError() << "expected " << pos
                            << " sharded_dims_offsets for " << type
                            << " but got " << offsets.size();
  return success();
}

LogicalResult mlir::blockscale::checkShardings(ModuleOp module,
                                               bool beforePartition) {
  SymbolTableCollection symbols;
  bool failedAny = false;
  // Upstream sharding-propagation fails on any op without sharding rules
  // with no hint of a fix, sharded or not: name the ops that have them.
  if (!beforePartition) {
    module.walk([&](Operation *op) {
      // (An unregistered op has no dialect.)
      if (!isa_and_nonnull<BlockScaleDialect>(op->getDialect()) ||
          isa<shard::ShardingInterface>(op))
        return;
      InFlightDiagnostic d = op->emitOpError();
      d << "expected only blockscale ops with sharding rules (matmul, "
           "quantize) in a program the shard pipeline partitions but got "
        << op->getName() << ", which has none; ";
      if (isa<QuantizeDualOp>(op))
        d << "write it as two blockscale.quantize ops (the JIT pipeline's "
             "--blockscale-fuse-dual-quantize fuses them in each device's "
             "program)";
      else
        d << "run it outside the sharded program, on each device's own "
             "operands";
      failedAny = true;
    });
    if (failedAny)
      return failure();
  }
  SmallVector<shard::GridOp> grids;
  module.walk([&](shard::GridOp g) { grids.push_back(g); });
  if (grids.size() > 1) {
    grids[1].emitOpError()
        << "expected one shard.grid in a program the blockscale pipelines "
           "partition (a run uses one device grid) but got "
        << grids.size() << ": @" << grids[0].getSymName() << " and @"
        << grids[1].getSymName();
    failedAny = true;
  }
  for (shard::GridOp g : grids)
    failedAny |= failed(checkGridShape(g, g));
  if (failedAny)
    return failure(); // the rest reads the grid's sizes
  module.walk([&](shard::ShardingOp so) {
    shard::GridOp grid = shard::getGridOrNull(so, so.getGridAttr(), symbols);
    if (!grid) {
      so.emitOpError() << "expected @" << so.getGrid()
                       << " to name a shard.grid but none is declared";
      failedAny = true;
      return;
    }
    failedAny |= failed(checkShardingOp(so, grid));
  });
  if (failedAny)
    return failure();
  module.walk([&](shard::ShardOp sh) {
    failedAny |= failed(checkShardOp(sh, beforePartition, symbols));
    if (auto srcSh = sh.getSrc().getDefiningOp<shard::ShardOp>();
        srcSh && beforePartition)
      failedAny |= failed(checkReshard(sh, srcSh));
  });
  if (failedAny || !beforePartition)
    return failure(failedAny);
  // shard-partition rewrites every block that holds a shard.shard and
  // assumes it fully annotated: it takes a tensor argument's only use as
  // its sharding and every tensor operand's defining op as a shard.shard.
  auto annotated = [](Type t) {
    auto rt = dyn_cast<RankedTensorType>(t);
    return rt && rt.getRank() > 0;
  };
  module.walk([&](Block *block) {
    if (failedAny || llvm::none_of(*block, [](Operation &op) {
          return isa<shard::ShardOp>(op);
        }))
      return;
    for (BlockArgument arg : block->getArguments()) {
      if (!annotated(arg.getType()))
        continue;
      if (!arg.hasOneUse() || !isa<shard::ShardOp>(*arg.getUsers().begin())) {
        Operation *parent = block->getParentOp();
        parent->emitOpError()
            << "expected tensor argument #" << arg.getArgNumber()
            << " to be used once, by a shard.shard (shard-partition reads "
               "its sharding there) but it has "
            << std::distance(arg.use_begin(), arg.use_end())
            << " use(s) and not one shard.shard; run sharding-propagation "
               "or annotate it";
        failedAny = true;
        return;
      }
    }
    for (Operation &op : *block) {
      if (isa<shard::ShardOp, shard::ShardingOp>(op))
        continue;
      for (OpOperand &use : op.getOpOperands()) {
        if (!annotated(use.get().getType()) ||
            use.get().getDefiningOp<shard::ShardOp>())
          continue;
        op.emitOpError() << "expected operand #" << use.getOperandNumber()
                         << " to be a shard.shard result (shard-partition "
                            "reads its sharding there) but it is not "
                            "annotated; sharding-propagation left it "
                            "without a sharding: annotate it";
        failedAny = true;
        return;
      }
    }
  });
  return failure(failedAny);
}

namespace {
struct CheckShardingsPass
    : public mlir::blockscale::impl::BlockScaleCheckShardingsBase<
          CheckShardingsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(checkShardings(getOperation(), beforePartition)))
      signalPassFailure();
  }
};
} // namespace
