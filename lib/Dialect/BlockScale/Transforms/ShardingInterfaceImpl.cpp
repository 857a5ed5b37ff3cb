//===- ShardingInterfaceImpl.cpp - blockscale ops and shard -----*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Sharding of the blockscale ops for the upstream `sharding-propagation` and
// `shard-partition` passes.
//
// Loops and indexing maps. A matmul has loops (m, n, k): A and its scales map
// (m, n, k) -> (m, k), B and its scales -> (k, n), C -> (m, n). The scale
// tensors are indexed by *blocks* of those loops (k / 128, n / 128), which is
// not an affine projected permutation; for propagation they are given the
// maps of their data operands (the scale dimension is split by the same grid
// axes as the data dimension), and `partition` below works out the block
// arithmetic itself: a split of K over p devices gives every device K / p
// elements and K / (128 p) scale blocks, which is only exact when no shard
// boundary falls inside a block. That is checked (checkMatmulShardAlignment)
// and reported with the sizes instead of producing wrong scales.
//
// A K split makes every device's C a partial sum: the partitioned matmul is
// followed by shard.all_reduce over the K axes, or by shard.reduce_scatter
// when the result's own sharding splits a dimension over exactly those axes
// (e.g. row-parallel linear followed by sequence parallelism).
//
//===----------------------------------------------------------------------===//

#include "blockscale/Dialect/BlockScale/Transforms/ShardingInterfaceImpl.h"
#include "blockscale/Dialect/BlockScale/IR/BlockScale.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/Extensions/ShardingExtensions.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Extensions/ShardingExtensions.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace mlir::blockscale;
using shard::GridAxis;
using shard::Sharding;

int64_t mlir::blockscale::gridGroupSize(ArrayRef<GridAxis> axes,
                                        shard::GridOp grid) {
  ArrayRef<int64_t> shape = grid.getShape();
  int64_t n = 1;
  for (GridAxis a : axes) {
    if (a < 0 || size_t(a) >= shape.size() || ShapedType::isDynamic(shape[a]))
      return ShapedType::kDynamic;
    std::optional<int64_t> m = llvm::checkedMul<int64_t>(n, shape[a]);
    if (!m)
      return ShapedType::kDynamic;
    n = *m;
  }
  return n;
}

static int64_t groupSize(ArrayRef<GridAxis> axes, shard::GridOp grid) {
  return gridGroupSize(axes, grid);
}

LogicalResult mlir::blockscale::checkGridShape(Operation *diagOp,
                                               shard::GridOp grid) {
  ArrayRef<int64_t> shape = grid.getShape();
  std::optional<int64_t> devices = 1;
  for (int64_t d : shape) {
    if (ShapedType::isDynamic(d) || d < 1)
      return diagOp->emitOpError()
             << "expected grid @" << grid.getSymName()
             << " to have static sizes >= 1 but got shape "
             << shapeToString(shape);
    if (devices)
      devices = llvm::checkedMul<int64_t>(*devices, d);
  }
  if (!devices)
    return diagOp->emitOpError()
           << "expected grid @" << grid.getSymName()
           << " to have at most 2^63 - 1 devices but its shape "
           << shapeToString(shape) << " has more";
  return success();
}

/// One dimension of `size` elements in blocks of `block`, split `parts` ways.
static LogicalResult checkBlockSplit(Operation *op, StringRef what,
                                     int64_t size, int64_t block,
                                     int64_t parts) {
  if (parts <= 1 || ShapedType::isDynamic(size) ||
      ShapedType::isDynamic(parts))
    return success();
  // block * parts may not fit in int64 (a 2^62-device grid): then only an
  // empty dimension splits into whole blocks.
  std::optional<int64_t> unit = llvm::checkedMul<int64_t>(block, parts);
  if (unit ? size % *unit == 0 : size == 0)
    return success();
  int64_t blocks = llvm::divideCeil(size, block);
  std::string perDevice;
  llvm::raw_string_ostream(perDevice)
      << llvm::format("%.2f", double(size) / (double(block) * double(parts)));
  InFlightDiagnostic diag =
      op->emitOpError()
      << "expected " << what << " = " << size << " split over " << parts
      << " devices to give every device whole " << block
      << "-element scale blocks but got " << perDevice
      << " blocks per device (" << blocks << " blocks in all); use a "
      << "device count that divides " << blocks;
  std::optional<int64_t> padded =
      unit ? llvm::checkedMul<int64_t>(size / *unit + 1, *unit) : std::nullopt;
  if (padded)
    diag << ", pad " << what << " to " << *padded;
  diag << ", or run --blockscale-check-shard-alignment=\"allow-padding=1\"";
  return diag;
}

LogicalResult mlir::blockscale::checkMatmulShardAlignment(MatmulOp op,
                                                          const ShardCounts &c) {
  if (failed(checkBlockSplit(op, "K", op.getK(), 128, c.dims[2])))
    return failure();
  if (op.getBRecipe() == ScaleRecipe::blk_128x128 &&
      failed(checkBlockSplit(op, "N", op.getN(), 128, c.dims[1])))
    return failure();
  if (op.getAcc() && c.dims[2] > 1)
    return op.emitOpError()
           << "expected an accumulating matmul (acc) not to be split along K "
              "but K is split over "
           << c.dims[2]
           << " devices: every device would add acc into its partial sum";
  return success();
}

LogicalResult mlir::blockscale::checkQuantizeShardAlignment(QuantizeOp op,
                                                            const ShardCounts &c) {
  if (op.getRecipe() == ScaleRecipe::tensorwise) {
    if (c.dims[0] > 1 || c.dims[1] > 1)
      return op.emitOpError()
             << "expected a tensorwise quantize to stay replicated (its amax "
                "is over the whole tensor) but it is split";
    return success();
  }
  auto [br, bc] = getBlockShape(op.getRecipe());
  ArrayRef<int64_t> shape = op.getResult().getType().getShape();
  if (br > 1 && failed(checkBlockSplit(op, "dimension 0", shape[0], br,
                                       c.dims[0])))
    return failure();
  if (bc > 1 && failed(checkBlockSplit(op, "dimension 1", shape[1], bc,
                                       c.dims[1])))
    return failure();
  return success();
}

/// Names of the loops and of the operands and results of a blockscale op,
/// for diagnostics.
static StringRef loopName(Operation *op, unsigned loop) {
  static const char *mm[] = {"M", "N", "K"}, *q[] = {"rows", "columns"};
  if (isa<MatmulOp>(op))
    return loop < 3 ? mm[loop] : "?";
  return loop < 2 ? q[loop] : "?";
}

static std::string tensorName(Operation *op, unsigned idx) {
  if (auto mm = dyn_cast<MatmulOp>(op)) {
    static const char *names[] = {"A", "the A scales", "B", "the B scales"};
    if (idx < 4)
      return names[idx];
    if (mm.getAcc() && idx == 4)
      return "acc";
    return "the result";
  }
  static const char *names[] = {"the input", "the result", "the scales"};
  return idx < 3 ? names[idx] : "?";
}

static std::string axesToString(ArrayRef<GridAxis> axes) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(axes, os);
  os << "]";
  return s;
}

FailureOr<std::optional<LoopSharding>> mlir::blockscale::getLoopSharding(
    Operation *op, ArrayRef<Sharding> operandShardings,
    ArrayRef<Sharding> resultShardings, SymbolTableCollection &symbols) {
  SmallVector<Sharding, 6> all(operandShardings);
  llvm::append_range(all, resultShardings);
  FlatSymbolRefAttr gridName;
  for (const Sharding &s : all) {
    if (!s)
      continue;
    if (!gridName)
      gridName = s.getGridAttr();
    else if (s.getGridAttr() != gridName)
      return op->emitOpError()
             << "expected the shardings of its operands and results on one "
                "grid but got @"
             << gridName.getValue() << " and @" << s.getGridAttr().getValue();
  }
  if (!gridName)
    return std::optional<LoopSharding>();
  LoopSharding ls;
  ls.grid = shard::getGridOrNull(op, gridName, symbols);
  if (!ls.grid)
    return op->emitOpError() << "expected @" << gridName.getValue()
                             << " of its shardings to name a shard.grid but "
                                "no such grid is declared";
  if (failed(checkGridShape(op, ls.grid)))
    return failure();
  int64_t gridRank = ls.grid.getRank();
  auto iface = cast<shard::ShardingInterface>(op);
  ls.loops = iface.getLoopIteratorTypes();
  ls.maps = iface.getIndexingMaps();
  if (all.size() != ls.maps.size())
    return op->emitOpError() << "expected " << ls.maps.size()
                             << " operand and result shardings but got "
                             << all.size();

  // Grid axes per loop, and which operand set them (upstream's
  // getGridAxisAssignmentForLoopIterators asserts on a conflict and keeps
  // the first assignment in release builds).
  SmallVector<std::optional<SmallVector<GridAxis>>> perLoop(ls.loops.size());
  SmallVector<unsigned> setBy(ls.loops.size(), 0);
  for (auto [idx, s] : llvm::enumerate(all)) {
    if (!s)
      continue;
    AffineMap map = ls.maps[idx];
    ArrayRef<shard::GridAxesAttr> split = s.getSplitAxes();
    if (split.size() > map.getNumResults())
      return op->emitOpError()
             << "expected at most " << map.getNumResults()
             << " split-axes entries for " << tensorName(op, idx)
             << " (one per dimension) but got " << split.size();
    if (!s.getStaticHaloSizes().empty() || !s.getDynamicHaloSizes().empty())
      return op->emitOpError()
             << "expected no halo sizes in the sharding of "
             << tensorName(op, idx)
             << " (blockscale ops read no halos) but got "
             << s.getStaticHaloSizes().size() + s.getDynamicHaloSizes().size()
             << " halo sizes";
    for (unsigned d = 0; d < map.getNumResults(); ++d) {
      ArrayRef<GridAxis> axes;
      if (d < split.size())
        axes = split[d].asArrayRef();
      for (GridAxis a : axes)
        if (a < 0 || a >= gridRank)
          return op->emitOpError()
                 << "expected the grid axes of " << tensorName(op, idx)
                 << " in [0, " << gridRank << ") (grid @"
                 << ls.grid.getSymName() << ") but got axis " << a;
      // The loops are split as the operands are (as upstream assigns them):
      // a result may be split differently, e.g. over the K axes when the
      // partial sums are reduce-scattered.
      auto dim = dyn_cast<AffineDimExpr>(map.getResult(d));
      if (!dim || idx >= operandShardings.size())
        continue;
      unsigned loop = dim.getPosition();
      if (!perLoop[loop]) {
        perLoop[loop] = SmallVector<GridAxis>(axes);
        setBy[loop] = idx;
      } else if (ArrayRef<GridAxis>(*perLoop[loop]) != axes) {
        return op->emitOpError()
               << "expected its operands to split loop "
               << loopName(op, loop) << " over the same grid axes but "
               << tensorName(op, setBy[loop]) << " splits it over "
               << axesToString(*perLoop[loop]) << " and "
               << tensorName(op, idx) << " over " << axesToString(axes)
               << "; reshard one of them (shard.shard ... annotate_for_users)";
      }
    }
  }
  for (auto &axes : perLoop)
    ls.axes.push_back(axes ? *axes : SmallVector<GridAxis>());
  // One grid axis splits one loop.
  for (unsigned l = 0; l < ls.axes.size(); ++l)
    for (unsigned l2 = l + 1; l2 < ls.axes.size(); ++l2)
      for (GridAxis a : ls.axes[l])
        if (llvm::is_contained(ls.axes[l2], a))
          return op->emitOpError()
                 << "expected each grid axis to split one loop but axis " << a
                 << " of @" << ls.grid.getSymName() << " splits both "
                 << loopName(op, l) << " and " << loopName(op, l2);
  for (size_t i = 0; i < ls.loops.size() && i < 3; ++i)
    ls.counts.dims[i] = i < ls.axes.size() ? groupSize(ls.axes[i], ls.grid) : 1;
  return std::optional<LoopSharding>(std::move(ls));
}

/// Local type of a tensor of logical `global` shape whose dimension d is
/// split into counts[d] pieces, the scale dimensions in blocks.
static RankedTensorType localType(RankedTensorType t,
                                  ArrayRef<int64_t> counts) {
  SmallVector<int64_t> shape(t.getShape());
  for (auto [i, c] : llvm::enumerate(counts))
    if (c > 1 && !ShapedType::isDynamic(shape[i]))
      shape[i] = llvm::divideCeil(shape[i], c);
  return t.clone(shape);
}

namespace {

struct MatmulShardingModel
    : public shard::ShardingInterface::ExternalModel<MatmulShardingModel,
                                                     MatmulOp> {
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *) const {
    return {utils::IteratorType::parallel, utils::IteratorType::parallel,
            utils::IteratorType::reduction};
  }

  SmallVector<shard::ReductionKind>
  getReductionLoopIteratorKinds(Operation *) const {
    return {shard::ReductionKind::Sum};
  }

  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    MLIRContext *ctx = op->getContext();
    AffineExpr m, n, k;
    bindDims(ctx, m, n, k);
    auto map = [&](ArrayRef<AffineExpr> e) {
      return AffineMap::get(3, 0, e, ctx);
    };
    AffineMap mk = map({m, k}), kn = map({k, n}), mn = map({m, n});
    SmallVector<AffineMap> maps = {mk, mk, kn, kn};
    if (cast<MatmulOp>(op).getAcc())
      maps.push_back(mn);
    maps.push_back(mn); // result
    return maps;
  }

  LogicalResult partition(Operation *op, ArrayRef<Value> partitionedOperands,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings,
                          IRMapping &partitionMap,
                          SymbolTableCollection &symbols,
                          OpBuilder &builder) const {
    auto mm = cast<MatmulOp>(op);
    FailureOr<std::optional<LoopSharding>> lsOr =
        getLoopSharding(op, operandShardings, resultShardings, symbols);
    if (failed(lsOr))
      return failure();
    std::optional<LoopSharding> &ls = *lsOr;
    if (!ls) { // nothing is sharded: a plain clone
      shard::partitionFullyReplicatedOperation(
          *op, partitionedOperands, operandShardings, resultShardings,
          partitionMap, symbols, builder);
      return success();
    }
    if (failed(checkMatmulShardAlignment(mm, ls->counts)))
      return failure();
    shard::GridOp grid = ls->grid;
    if (partitionedOperands.size() != op->getNumOperands() ||
        llvm::any_of(partitionedOperands, [](Value v) { return !v; }))
      return op->emitOpError()
             << "expected shard-partition to give all "
             << op->getNumOperands()
             << " operands their local values but some are missing (it "
                "could not reshard them: uneven sharded_dims_offsets, or no "
                "sharding-propagation)";

    // The operands arrive resharded to operandShardings: their local types
    // say what each device holds. C is (local M of A, local N of B).
    auto aT = cast<RankedTensorType>(partitionedOperands[0].getType());
    auto bT = cast<RankedTensorType>(partitionedOperands[2].getType());
    RankedTensorType cType =
        mm.getC().getType().clone({aT.getDimSize(0), bT.getDimSize(1)});
    Value acc = mm.getAcc() ? partitionedOperands[4] : Value();
    auto local = MatmulOp::create(
        builder, op->getLoc(), cType, partitionedOperands[0],
        partitionedOperands[1], partitionedOperands[2], partitionedOperands[3],
        acc, mm.getForm(), mm.getARecipe(), mm.getBRecipe(), mm.getALayout(),
        mm.getBLayout(), mm.getAScaleLayoutAttr(), mm.getBScaleLayoutAttr(),
        mm.getLdaAttr(), mm.getLdbAttr(), mm.getLdcAttr(),
        /*tile: re-selected per device for the local shape*/ nullptr);
    Value result = local.getC();

    SmallVector<GridAxis> kAxes =
        shard::getReductionGridAxes(ls->loops, ls->axes);
    if (!kAxes.empty()) {
      // Partial sums. If the result is itself split over exactly the K axes
      // along some dimension, reduce and scatter in one collective.
      std::optional<int64_t> scatterDim;
      const Sharding &rs = resultShardings.empty() ? Sharding() : resultShardings[0];
      if (rs) {
        for (auto [d, split] : llvm::enumerate(rs.getSplitAxes())) {
          ArrayRef<GridAxis> s = split.asArrayRef();
          // The operands cannot split this dimension over the K axes too
          // (an axis splits one loop), so the local C is whole along it.
          if (!s.empty() && s.size() >= kAxes.size() &&
              s.take_back(kAxes.size()) == ArrayRef<GridAxis>(kAxes))
            scatterDim = d;
        }
      }
      if (scatterDim) {
        SmallVector<int64_t> shape(cType.getShape());
        int64_t p = groupSize(kAxes, grid);
        if (p < 1)
          return op->emitOpError() << "expected a static device count over "
                                      "the K axes "
                                   << axesToString(kAxes);
        if (!ShapedType::isDynamic(shape[*scatterDim])) {
          if (shape[*scatterDim] % p != 0)
            return op->emitOpError()
                   << "expected dimension " << *scatterDim << " (= "
                   << shape[*scatterDim]
                   << ") of the local result to scatter evenly over " << p
                   << " devices but it does not";
          shape[*scatterDim] /= p;
        }
        result = shard::ReduceScatterOp::create(
            builder, op->getLoc(), cType.clone(shape),
            FlatSymbolRefAttr::get(grid.getSymNameAttr()),
            builder.getDenseI16ArrayAttr(kAxes), result,
            shard::ReductionKindAttr::get(builder.getContext(),
                                          shard::ReductionKind::Sum),
            builder.getIndexAttr(*scatterDim));
      } else {
        result = shard::AllReduceOp::create(builder, op->getLoc(), result,
                                            grid.getSymName(), kAxes,
                                            shard::ReductionKind::Sum);
      }
    }
    partitionMap.map(mm.getC(), result);
    partitionMap.map(op, result.getDefiningOp());
    return success();
  }
};

struct QuantizeShardingModel
    : public shard::ShardingInterface::ExternalModel<QuantizeShardingModel,
                                                     QuantizeOp> {
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *) const {
    return {utils::IteratorType::parallel, utils::IteratorType::parallel};
  }

  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    MLIRContext *ctx = op->getContext();
    auto q = cast<QuantizeOp>(op);
    AffineExpr r, c;
    bindDims(ctx, r, c);
    // Loops are the logical result's dimensions.
    AffineMap id = AffineMap::get(2, 0, {r, c}, ctx);
    AffineMap in = q.getTranspose() ? AffineMap::get(2, 0, {c, r}, ctx) : id;
    SmallVector<AffineMap> maps = {in, id};
    // A tensorwise scale is a scalar: no loop indexes it.
    maps.push_back(q.getRecipe() == ScaleRecipe::tensorwise
                       ? AffineMap::get(2, 0, {}, ctx)
                       : id);
    return maps;
  }

  LogicalResult partition(Operation *op, ArrayRef<Value> partitionedOperands,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings,
                          IRMapping &partitionMap,
                          SymbolTableCollection &symbols,
                          OpBuilder &builder) const {
    auto q = cast<QuantizeOp>(op);
    FailureOr<std::optional<LoopSharding>> lsOr =
        getLoopSharding(op, operandShardings, resultShardings, symbols);
    if (failed(lsOr))
      return failure();
    std::optional<LoopSharding> &ls = *lsOr;
    if (!ls) {
      shard::partitionFullyReplicatedOperation(
          *op, partitionedOperands, operandShardings, resultShardings,
          partitionMap, symbols, builder);
      return success();
    }
    const ShardCounts &counts = ls->counts;
    if (failed(checkQuantizeShardAlignment(q, counts)))
      return failure();
    if (partitionedOperands.size() != 1 || !partitionedOperands[0])
      return op->emitOpError()
             << "expected shard-partition to give the input its local value "
                "but it is missing (it could not reshard it: uneven "
                "sharded_dims_offsets, or no sharding-propagation)";
    RankedTensorType qT =
        localType(q.getResult().getType(), {counts.dims[0], counts.dims[1]});
    auto sT = cast<RankedTensorType>(q.getScale().getType());
    if (q.getRecipe() != ScaleRecipe::tensorwise)
      sT = localType(sT, {counts.dims[0], counts.dims[1]});
    auto local = QuantizeOp::create(
        builder, op->getLoc(), qT, sT, partitionedOperands[0], q.getRecipe(),
        q.getLayout(), q.getTranspose(), q.getScaleLayoutAttr());
    partitionMap.map(q.getResult(), local.getResult());
    partitionMap.map(q.getScale(), local.getScale());
    partitionMap.map(op, local.getOperation());
    return success();
  }
};

} // namespace

void mlir::blockscale::registerShardingInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, BlockScaleDialect *) {
    ctx->getOrLoadDialect<shard::ShardDialect>();
    MatmulOp::attachInterface<MatmulShardingModel>(*ctx);
    QuantizeOp::attachInterface<QuantizeShardingModel>(*ctx);
  });
}

void mlir::blockscale::registerBlockScaleProgramDialects(
    DialectRegistry &registry) {
  registry.insert<BlockScaleDialect, arith::ArithDialect, func::FuncDialect,
                  tensor::TensorDialect, shard::ShardDialect>();
  registerShardingInterfaceExternalModels(registry);
  func::registerShardingInterfaceExternalModels(registry);
  tensor::registerShardingInterfaceExternalModels(registry);
}
