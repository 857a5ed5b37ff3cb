//===- ShardingInterfaceImpl.cpp - blockscale ops and shard -----*- C++ -*-===//
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
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace mlir::blockscale;
using shard::GridAxis;
using shard::Sharding;

static int64_t groupSize(ArrayRef<GridAxis> axes, shard::GridOp grid) {
  return shard::collectiveProcessGroupSize(axes, grid);
}

/// One dimension of `size` elements in blocks of `block`, split `parts` ways.
static LogicalResult checkBlockSplit(Operation *op, StringRef what,
                                     int64_t size, int64_t block,
                                     int64_t parts) {
  if (parts <= 1 || ShapedType::isDynamic(size) ||
      ShapedType::isDynamic(parts))
    return success();
  if (size % (block * parts) == 0)
    return success();
  int64_t blocks = llvm::divideCeil(size, block);
  std::string perDevice;
  llvm::raw_string_ostream(perDevice)
      << llvm::format("%.2f", double(size) / double(block * parts));
  return op->emitOpError()
         << "expected " << what << " = " << size << " split over " << parts
         << " devices to give every device whole " << block
         << "-element scale blocks but got " << perDevice
         << " blocks per device (" << blocks << " blocks in all); use a "
         << "device count that divides " << blocks << ", pad " << what
         << " to " << llvm::alignTo(size, block * parts)
         << ", or run --blockscale-check-shard-alignment=\"allow-padding=1\"";
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

std::optional<LoopSharding> mlir::blockscale::getLoopSharding(
    Operation *op, ArrayRef<Sharding> operandShardings,
    ArrayRef<Sharding> resultShardings, SymbolTableCollection &symbols) {
  LoopSharding ls;
  for (ArrayRef<Sharding> list : {operandShardings, resultShardings})
    for (const Sharding &s : list)
      if (s && !ls.grid)
        ls.grid = shard::getGridOrNull(op, s.getGridAttr(), symbols);
  if (!ls.grid)
    return std::nullopt;
  auto iface = cast<shard::ShardingInterface>(op);
  ls.loops = iface.getLoopIteratorTypes();
  ls.maps = iface.getIndexingMaps();
  ls.axes = shard::getGridAxisAssignmentForLoopIterators(
      operandShardings, resultShardings, ls.loops, ls.maps);
  for (size_t i = 0; i < ls.loops.size() && i < 3; ++i)
    ls.counts.dims[i] = i < ls.axes.size() ? groupSize(ls.axes[i], ls.grid) : 1;
  return ls;
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
    std::optional<LoopSharding> ls =
        getLoopSharding(op, operandShardings, resultShardings, symbols);
    if (!ls) { // nothing is sharded: a plain clone
      shard::partitionFullyReplicatedOperation(
          *op, partitionedOperands, operandShardings, resultShardings,
          partitionMap, symbols, builder);
      return success();
    }
    if (failed(checkMatmulShardAlignment(mm, ls->counts)))
      return failure();
    shard::GridOp grid = ls->grid;

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
        if (!ShapedType::isDynamic(shape[*scatterDim]))
          shape[*scatterDim] /= p;
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
    std::optional<LoopSharding> ls =
        getLoopSharding(op, operandShardings, resultShardings, symbols);
    if (!ls) {
      shard::partitionFullyReplicatedOperation(
          *op, partitionedOperands, operandShardings, resultShardings,
          partitionMap, symbols, builder);
      return success();
    }
    const ShardCounts &counts = ls->counts;
    if (failed(checkQuantizeShardAlignment(q, counts)))
      return failure();
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
