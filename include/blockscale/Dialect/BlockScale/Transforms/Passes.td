//===- Passes.td - blockscale transformation passes --------*- tablegen -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKSCALE_DIALECT_BLOCKSCALE_TRANSFORMS_PASSES_TD
#define BLOCKSCALE_DIALECT_BLOCKSCALE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def BlockScaleFuseDualQuantize
    : Pass<"blockscale-fuse-dual-quantize", "::mlir::ModuleOp"> {
  let summary = "Cast a tensor read twice in both layouts with one read";
  let description = [{
    A training step casts some tensors twice, once in input order and once
    transposed: dY for grad-input (`1x128`) and dY^T for grad-weight
    (`1x128, transpose`), the weight for the forward
    (`128x128, transpose, layout = col_major`) and for grad-input
    (`128x128, layout = col_major`). This pass replaces two
    `blockscale.quantize` ops by one `blockscale.quantize_dual`, which reads
    the input once, when they

    * quantize the same SSA value, in the same block;
    * have the same recipe, the same `layout` and the same FP8 element
      type, and opposite `transpose`;
    * and the one of them written in input order (`transpose` and
      `layout = col_major` agree) has 1x128 or 128x128 blocks in the
      input's frame (the dual kernel's tiles).

    The op is inserted where the earlier of the two was; their results are
    replaced one for one (the in-order cast's by `result, scale`, the
    other's by `t_result, t_scale`) and their `scale_layout` attributes are
    kept as `scale_layout` and `t_scale_layout`. Of three or more casts of a
    tensor, each is paired with the first later one that fits.

    Casts that write the same bytes but are spelled differently are not
    fused, because their tensor types differ: x's grad-weight operand
    `128x1, layout = col_major` is the input-shaped `(M, K)` tensor, while
    the transposed half of a dual cast of x's `1x128` forward cast would be
    `1x128, transpose`, shaped `(K, M)`; neither can replace the other's
    result.
  }];
}

def BlockScalePadScales : Pass<"blockscale-pad-scales", "::mlir::ModuleOp"> {
  let summary = "Give every scale operand the physical layout the kernels read";
  let description = [{
    Chooses the physical layout of each matmul scale operand and of the
    `blockscale.quantize` op that produces it (`scale_layout`, or for a
    `blockscale.quantize_dual` the attribute of the scale result it reads:
    `scale_layout` or `t_scale_layout`), so that the cast kernel writes
    scales exactly where the matmul kernel reads them:

    * 1x128 scales of A, `(M, ceil(K/128))`: M-contiguous (`col_major`), the
      K-block stride rounded up to 4 elements: each K-block's column is read
      by one TMA box, and TMA needs 16-byte global strides.
    * 128x128 scales of B, `(ceil(K/128), ceil(N/128))`: K-contiguous
      (`col_major`) with the K-block stride rounded up to 4, cuBLASLt's rule
      for `BLK128x128` scales, so the same buffers work with cuBLASLt.
    * 128x1 scales of B, `(ceil(K/128), N)`: N-contiguous (`row_major`),
      rounded up to 4 for TMA.

    A layout the user already wrote is kept when it satisfies the rule and is
    an error naming the needed layout when it does not; a scale tensor that
    feeds two consumers with different needs is an error too. Scales that
    feed no matmul get the layout of the role their recipe implies. No
    copies are inserted.
  }];
}

def BlockScaleVerifyLayouts : Pass<"blockscale-verify-layouts", "::mlir::ModuleOp"> {
  let summary = "Check operand and scale layouts against the Hopper kernels";
  let description = [{
    FP8 `wgmma` reads both operands K-major from shared memory and TMA needs
    16-byte aligned global strides. This pass fails with a diagnostic that
    names the layout needed when:

    * A is not `row_major` or B is not `col_major` (K-contiguous);
    * a row stride (`K` or `lda`/`ldb`, `N` or `ldc`) is not a multiple of
      16 bytes, or a given leading dimension is smaller than the extent;
    * a scale layout is missing (run `--blockscale-pad-scales`) or is not the
      one the kernel reads;
    * a quantize op's scale layout does not match what its consumer expects
      (for a `blockscale.quantize_dual`, each result's against its own
      consumer);
    * a cast's input rows or FP8 output rows (both results of a
      `blockscale.quantize_dual`) are not a multiple of 16 bytes.

    It never rewrites IR.
  }];
}

def BlockScaleSelectTiles : Pass<"blockscale-select-tiles", "::mlir::ModuleOp"> {
  let summary = "Choose a tile configuration per matmul from shape and device";
  let description = [{
    Attaches a `#blockscale.tile` to every matmul without one, chosen by the
    analytic model of docs/TileSelection.md: for each candidate (BM, BN,
    split-K) it estimates per-tile tensor-core time (with an efficiency for
    narrow wgmma and the promotion FMAs), L2 and HBM traffic, the epilogue,
    and wave quantization over `num-sms` persistent CTAs, then sizes the
    pipeline to the shared memory left after the epilogue buffer.
  }];
  let options = [
    Option<"numSMs", "num-sms", "int64_t", /*default=*/"::bs::kDefaultNumSMs",
           "Streaming multiprocessors of the target GPU">,
    Option<"smemBytes", "smem-bytes", "int64_t",
           /*default=*/"::bs::kMaxDynamicSmemBytes",
           "Dynamic shared memory a CTA may use (bytes)">,
    Option<"mHint", "m-hint", "int64_t", /*default=*/"0",
           "M to plan for when M is dynamic (grouped matmuls: the rows, "
           "or tokens, of all groups); 0: none, which plans a dense M of "
           "4096 and grouped rows as the runtime does, 4096 per group">,
    Option<"force", "force", "std::string", /*default=*/"\"\"",
           "Force a configuration, e.g. 'bm=128,bn=128,stages=4,splits=1' "
           "(keys bm, bn, stages, splits, raster, cluster, ksplit)">
  ];
}

def BlockScaleCheckShardAlignment
    : Pass<"blockscale-check-shard-alignment", "::mlir::ModuleOp"> {
  let summary = "Reject (or pad) shardings that split a 128-element scale block";
  let description = [{
    Runs after `sharding-propagation`: for every `blockscale.matmul` and
    `blockscale.quantize` it reads the shardings annotated on operands and
    results (`shard.shard`), works out how many devices split each loop, and
    checks that every shard boundary falls on a scale-block boundary: K must
    split into whole 128-element blocks (both operands and their scales), and
    so must N for 128x128 weights. A mis-aligned sharding is an error that
    names the sizes and the fixes.

    With `allow-padding`, the annotations of the mis-aligned dimension get
    `sharded_dims_offsets` instead: every shard but the last holds
    ceil(blocks / devices) whole blocks and the last one the rest, for the
    data and (in blocks) for the scales. This needs static sizes.
  }];
  let options = [
    Option<"allowPadding", "allow-padding", "bool", /*default=*/"false",
           "Make shards whole blocks (uneven shards) instead of failing">
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect"];
}

def BlockScaleCheckShardings
    : Pass<"blockscale-check-shardings", "::mlir::ModuleOp"> {
  let summary = "Reject shardings the upstream shard passes would crash on";
  let description = [{
    A guard that `--blockscale-shard-pipeline` runs before
    `sharding-propagation` and again before `shard-partition`: the upstream
    passes assume what their verifiers do not check and crash (or compute
    wrong shapes) otherwise. Each of these is an error naming what was
    expected and what was found (docs/upstream-shard-issues.md lists the
    upstream crashes):

    * a blockscale op without sharding rules (`quantize_dual`, the grouped
      GEMMs and their cast; only `matmul` and `quantize` have them), which
      upstream propagation stops at without a fix;
    * more than one `shard.grid`, or a grid with a size of 0, a dynamic size
      or more than 2^63 - 1 devices;
    * `halo_sizes` (blockscale ops read no halos), dynamic
      `sharded_dims_offsets`, offsets on a dimension split over several
      axes, offsets that do not run from 0 to the dimension's size in
      non-decreasing steps with one entry per device and one more;
    * a `shard.shard` whose sharding is not a `shard.sharding` op, or with
      more split-axes entries than its tensor has dimensions;
    * with `before-partition` (what shard-partition assumes of its input):
      a static dimension split without offsets over a device count that
      does not divide it (shard-partition would give every device the
      rounded-down size); a tensor function argument that is not used
      exactly once, by a `shard.shard`; a tensor operand of another op that
      is not a `shard.shard` result (shard-partition dereferences the
      missing annotation: a program partitioned without propagation, or
      one propagation left partly annotated); a resharding (a `shard.shard`
      of a `shard.shard`) that is not the one step shard-partition lowers:
      one grid axis appended to a dimension's split axes, removed from their
      end, or moved between two dimensions' ends, without
      `sharded_dims_offsets` (upstream maps nothing, or lowers a different
      resharding, otherwise).
  }];
  let options = [
    Option<"beforePartition", "before-partition", "bool", /*default=*/"false",
           "Also check what shard-partition assumes: even splits, a fully "
           "annotated program and one-step reshardings">
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect"];
}

#endif // BLOCKSCALE_DIALECT_BLOCKSCALE_TRANSFORMS_PASSES_TD
