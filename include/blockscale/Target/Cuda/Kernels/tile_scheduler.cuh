//===- tile_scheduler.cuh - persistent work distribution ---------*- CUDA -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A GEMM kernel is a persistent grid: each CTA (or cluster) walks work units
// first, first + stride, ... of one linear sequence, where a unit is one
// output tile, or one K split of it, for one CTA. The producer thread and
// the consumer warpgroups of a CTA each run their own scheduler over the
// same sequence, so they agree without talking. A scheduler gives:
//
//   Scheduler s(params, clusterRank); // once per CTA, then copied per role
//   for (; s.valid(); s.advance()) { WorkUnit w = s.unit(); ... }
//
// and the rest of the kernel reads only the WorkUnit: which tile of C, which
// rows of A and B (and of their scales) it reads, its K-block range and the
// split it is. A grouped (mixture-of-experts) scheduler implements the same
// three calls over its groups; its units then also carry the tile's row
// origin in A and C (each group's rows are tiled on their own, so a tile may
// end at its group's last row), the row limit the epilogue clips its stores
// at, and the group's row offset into B and its scales. The sequence must
// stay the same for every role and every CTA of a cluster, and only move
// forward, so a scheduler can cache the group it is in.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_KERNELS_TILE_SCHEDULER_CUH
#define BLOCKSCALE_KERNELS_TILE_SCHEDULER_CUH

#include "blockscale/params.h"

namespace bs {

struct WorkUnit {
  int mb, nb;   // tile row / column (units of BM rows, BN columns)
  int split;    // which K split of the tile (0 without split-K)
  int tile;     // tile index for the split-K workspace and its counters
  int kb0, kb1; // K blocks [kb0, kb1) of 128
};

// Dense problems: tiles visited in raster groups of `raster` N-tile groups
// (inside a raster group consecutive units walk its N-tile groups, then the
// next row down M, so the CTAs running at one time cover a compact block of
// C and share A and B panels in L2); with
// CLUSTER = 2 a unit is a group of two horizontally adjacent tiles, one per
// CTA of the pair; with split-K each (tile group, split) pair is a unit,
// and with KSPLIT the splits of one tile are the CTAs of one cluster.
template <class Cfg> struct DenseTileScheduler {
  static constexpr int BM = Cfg::BM, BN = Cfg::BN, CLUSTER = Cfg::CLUSTER,
                       KSPLIT = Cfg::KSPLIT;

  const GemmParams &p;
  const int rank; // CTA rank in the cluster
  int u;          // current unit
  const int units, stride;

  __device__ __forceinline__ DenseTileScheduler(const GemmParams &params,
                                                int clusterRank)
      : p(params), rank(clusterRank),
        u(static_cast<int>(blockIdx.x / Cfg::kClusterCtas)),
        units(numUnits(params)),
        stride(static_cast<int>(gridDim.x / Cfg::kClusterCtas)) {}

  __device__ __forceinline__ static int numUnits(const GemmParams &p) {
    return p.tilesM * ((p.tilesN + CLUSTER - 1) / CLUSTER) *
           (KSPLIT > 1 ? 1 : p.splits);
  }

  __device__ __forceinline__ bool valid() const { return u < units; }
  __device__ __forceinline__ void advance() { u += stride; }
  // The first unit of this CTA (for one-time work such as debug stamps).
  __device__ __forceinline__ bool first() const {
    return u == static_cast<int>(blockIdx.x / Cfg::kClusterCtas);
  }

  // Every division is by a launch constant and runs as a multiply-high and
  // a shift (FastDiv): the single producer thread decodes its first unit
  // before its first TMA load, on the critical path of short kernels.
  __device__ __forceinline__ WorkUnit unit() const {
    int v = u, r = rank;
    if (KSPLIT > 1) { // p.splits == KSPLIT (the launch checks)
      v = v * KSPLIT + r;
      r = 0;
    }
    WorkUnit w;
    const int group = fastDiv(v, p.divSplits);
    w.split = v - group * p.splits;
    const int groupsN = (p.tilesN + CLUSTER - 1) / CLUSTER;
    const int g = fastDiv(group, p.divRasterTiles);
    const int firstN = g * p.raster;
    const bool last = groupsN - firstN < p.raster;
    const int width = last ? groupsN - firstN : p.raster;
    const int local = group - g * p.raster * p.tilesM;
    w.mb = fastDiv(local, last ? p.divLastWidth : p.divRaster);
    // With an odd tile count the last pair's second tile lies past N: it is
    // computed on zero-filled B and its store is clipped away entirely.
    w.nb = (firstN + (local - w.mb * width)) * CLUSTER + r;
    w.tile = group * CLUSTER + r;
    // split * kBlocks < 2^31: the launch checks.
    w.kb0 = fastDiv(w.split * p.kBlocks, p.divSplits);
    w.kb1 = fastDiv((w.split + 1) * p.kBlocks, p.divSplits);
    return w;
  }
};

} // namespace bs

#endif // BLOCKSCALE_KERNELS_TILE_SCHEDULER_CUH
