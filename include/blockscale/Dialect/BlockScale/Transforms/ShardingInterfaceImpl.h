//===- ShardingInterfaceImpl.h - blockscale ops and the shard dialect -*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_DIALECT_BLOCKSCALE_TRANSFORMS_SHARDINGINTERFACEIMPL_H
#define BLOCKSCALE_DIALECT_BLOCKSCALE_TRANSFORMS_SHARDINGINTERFACEIMPL_H

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/IR/DialectRegistry.h"

#include <optional>

namespace mlir::blockscale {

class MatmulOp;
class QuantizeOp;

/// Attaches shard::ShardingInterface to blockscale.matmul and
/// blockscale.quantize (external models, so the dialect itself does not
/// depend on the shard dialect).
void registerShardingInterfaceExternalModels(DialectRegistry &registry);

/// Everything a (sharded) blockscale program uses: the blockscale, func,
/// tensor, arith and shard dialects, and the sharding interfaces of
/// blockscale, func and tensor ops. blockscale-opt and the JIT's context
/// register the same set.
void registerBlockScaleProgramDialects(DialectRegistry &registry);

/// How many devices split each loop of a matmul (M, N, K) or each logical
/// dimension of a quantize result, given the grid axes assigned to it.
struct ShardCounts {
  int64_t dims[3] = {1, 1, 1};
};

/// How the loops of a sharded blockscale op are split: the grid (of the
/// first sharded operand or result), the op's loops and indexing maps, the
/// grid axes of each loop and the number of devices along each.
struct LoopSharding {
  shard::GridOp grid;
  SmallVector<utils::IteratorType> loops;
  SmallVector<AffineMap> maps;
  shard::ShardingArray axes;
  ShardCounts counts;
};

/// The loop sharding of `op` (a shard::ShardingInterface op) under the given
/// operand and result shardings: std::nullopt when nothing is sharded,
/// failure (with an error emitted on `op`) when the shardings cannot be
/// partitioned: shardings on different grids or on a missing or unusable
/// grid (a size of 0 or dynamic, more than 2^63 - 1 devices), more split
/// axes than a tensor has dimensions, axes out of the grid, halo sizes,
/// tensors that disagree on the axes of one loop, or one axis on two loops.
/// (Upstream's getGridAxisAssignmentForLoopIterators asserts on conflicts
/// and keeps the first assignment in release builds.)
FailureOr<std::optional<LoopSharding>>
getLoopSharding(Operation *op, ArrayRef<shard::Sharding> operandShardings,
                ArrayRef<shard::Sharding> resultShardings,
                SymbolTableCollection &symbols);

/// Checks a grid the blockscale pipelines partition for: static sizes >= 1
/// whose product (the device count) fits in int64. On failure emits an error
/// on `diagOp` naming the grid and its shape.
LogicalResult checkGridShape(Operation *diagOp, shard::GridOp grid);

/// Number of devices along `axes` of `grid` (checked: every axis in range;
/// checkGridShape makes the product fit).
int64_t gridGroupSize(ArrayRef<shard::GridAxis> axes, shard::GridOp grid);

/// Checks that no shard boundary splits a 128-element scale block: along K
/// for both operands and, for 128x128 weights, along N. On failure emits an
/// error on `op` naming the sizes and returns failure.
LogicalResult checkMatmulShardAlignment(MatmulOp op, const ShardCounts &c);
LogicalResult checkQuantizeShardAlignment(QuantizeOp op, const ShardCounts &c);

} // namespace mlir::blockscale

#endif
