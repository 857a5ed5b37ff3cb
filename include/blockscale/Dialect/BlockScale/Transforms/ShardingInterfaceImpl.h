//===- ShardingInterfaceImpl.h - blockscale ops and the shard dialect -*- C++ -*-===//
#ifndef BLOCKSCALE_DIALECT_BLOCKSCALE_TRANSFORMS_SHARDINGINTERFACEIMPL_H
#define BLOCKSCALE_DIALECT_BLOCKSCALE_TRANSFORMS_SHARDINGINTERFACEIMPL_H

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/DialectRegistry.h"

namespace mlir::blockscale {

class MatmulOp;
class QuantizeOp;

/// Attaches shard::ShardingInterface to blockscale.matmul and
/// blockscale.quantize (external models, so the dialect itself does not
/// depend on the shard dialect).
void registerShardingInterfaceExternalModels(DialectRegistry &registry);

/// How many devices split each loop of a matmul (M, N, K) or each logical
/// dimension of a quantize result, given the grid axes assigned to it.
struct ShardCounts {
  int64_t dims[3] = {1, 1, 1};
};

/// Checks that no shard boundary splits a 128-element scale block: along K
/// for both operands and, for 128x128 weights, along N. On failure emits an
/// error on `op` naming the sizes and returns failure.
LogicalResult checkMatmulShardAlignment(MatmulOp op, const ShardCounts &c);
LogicalResult checkQuantizeShardAlignment(QuantizeOp op, const ShardCounts &c);

} // namespace mlir::blockscale

#endif
