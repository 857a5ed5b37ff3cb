//===- gemm_splitk.cuh - summing the K splits of a tile ----------*- CUDA -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Two ways to sum a tile's K splits, each run by the consumer warpgroups
// after their K loop:
//  * through a global workspace (GemmParams::splits > 1, any CTAs): every
//    (tile, split) unit writes its f32 partial; the last split of the tile
//    to arrive (an arrival counter per tile and warpgroup) adds the others
//    and goes on to the epilogue, then resets the counter for the next
//    launch;
//  * inside a cluster (KSPLIT > 1): the KSPLIT splits of a tile are the
//    CTAs of one cluster; each finishes 1/KSPLIT of the tile's columns and
//    receives the peers' partials of them straight from their registers
//    into its shared memory (st.async, which completes transaction bytes on
//    the receiver's barrier: no fence and no release), with no round trip
//    through global memory.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_KERNELS_GEMM_SPLITK_CUH
#define BLOCKSCALE_KERNELS_GEMM_SPLITK_CUH

#include "blockscale/gemm_config.cuh"
#include "blockscale/tile_scheduler.cuh"
#include "blockscale/timeline.cuh"

namespace bs {

template <class Cfg> struct GemmSplitK {
  static constexpr int BM = Cfg::BM, BN = Cfg::BN, KSPLIT = Cfg::KSPLIT;
  static constexpr int kConsumers = Cfg::kConsumers, kWaves = Cfg::kWaves,
                       kAcc = Cfg::kAcc;
  static_assert(kAcc % 4 == 0, "float4 partials");

  //===-- through the global workspace -------------------------------------===//

  // Publishes this unit's partial; returns true (with `acc` holding the full
  // sum) for the last split of the tile to arrive.
  __device__ static bool workspaceReduce(const GemmParams &p,
                                         unsigned char *smem,
                                         const WorkUnit &w, int wg, int tid,
                                         float (&acc)[kWaves][kAcc]) {
    const long long slice = 64LL * BN; // floats per 64-row slab
    // Slab (wave, warpgroup) of split `s`'s partial of this tile.
    float *const tileWs =
        p.workspace + static_cast<long long>(w.tile) * p.splits * (BM * BN) +
        wg * slice;
    auto slab = [&](int s, int v) {
      return tileWs + s * (BM * BN) + v * kConsumers * slice;
    };
    // Fragment order: vector i of every thread is contiguous across the
    // warpgroup, so each store instruction writes 2 KB coalesced.
#pragma unroll
    for (int v = 0; v < kWaves; ++v) {
      float4 *mine = reinterpret_cast<float4 *>(slab(w.split, v));
#pragma unroll
      for (int i = 0; i < kAcc / 4; ++i)
        __stcg(mine + i * 128 + tid,
               make_float4(acc[v][4 * i], acc[v][4 * i + 1], acc[v][4 * i + 2],
                           acc[v][4 * i + 3]));
    }
    __threadfence();
    namedBarSync(1 + wg, 128);
    volatile int *flag =
        reinterpret_cast<volatile int *>(smem + Cfg::kOffFlag) + wg;
    int *counter = p.counters + w.tile * kConsumers + wg;
    if (tid == 0)
      *flag = atomicAdd(counter, 1) == p.splits - 1;
    namedBarSync(1 + wg, 128);
    const bool last = *flag != 0;
    if (!last) {
      BS_TIMELINE(wg == 0 && tid == 0, SplitDone);
      return false;
    }
    __threadfence();
    for (int s = 0; s < p.splits; ++s) {
      if (s == w.split)
        continue;
#pragma unroll
      for (int v = 0; v < kWaves; ++v) {
        const float4 *other = reinterpret_cast<const float4 *>(slab(s, v));
#pragma unroll
        for (int i = 0; i < kAcc / 4; ++i) {
          const float4 x = __ldcg(other + i * 128 + tid);
          acc[v][4 * i + 0] += x.x;
          acc[v][4 * i + 1] += x.y;
          acc[v][4 * i + 2] += x.z;
          acc[v][4 * i + 3] += x.w;
        }
      }
    }
    if (tid == 0)
      *counter = 0; // ready for the next launch
    BS_TIMELINE(wg == 0 && tid == 0, SplitDone);
    return true;
  }

  //===-- inside a cluster (KSPLIT) -----------------------------------------===//

  // ready: the peers' partials have arrived in this CTA's receive buffer;
  // freed: the peers have read what this CTA pushed into theirs. One phase
  // per unit.
  __device__ __forceinline__ static u32 readyBar(u32 base) {
    return base + Cfg::kOffFlag;
  }
  __device__ __forceinline__ static u32 freedBar(u32 base) {
    return base + Cfg::kOffFlag + 8;
  }

  // One thread: ready counts one arrival (with the bytes it expects) per
  // consumer warp of this CTA plus the peers' st.async bytes; freed one
  // arrival per consumer warp of every peer.
  __device__ __forceinline__ static void initBarriers(u32 base) {
    mbarInit(readyBar(base), kConsumers * 4);
    mbarInit(freedBar(base), kConsumers * 4 * (KSPLIT - 1));
  }

  // The float4 fragments a thread holds per wave (8 columns each); CTA rank
  // r finishes fragments i with i % KSPLIT == r.
  static constexpr int kVec = kAcc / 4;
  static constexpr int kShare = (kVec + KSPLIT - 1) / KSPLIT;

  // Receive buffer (the epilogue's staging region): fragment q of this CTA's
  // share from sender s (0..KSPLIT-2), wave v, warpgroup wg, thread tid, as
  // a shared-memory offset; float4 q of every thread contiguous across the
  // warpgroup (conflict-free 16-byte accesses).
  static_assert(KSPLIT == 1 || (KSPLIT - 1) * kWaves * kConsumers * kShare *
                                       128 * 16 ==
                                   gemmKsplitRecvBytes(BM, BN, KSPLIT),
                "the receive buffer is the size the host reserves");
  __device__ __forceinline__ static u32 recvOffset(int s, int v, int wg, int q,
                                                   int tid) {
    return 16u * static_cast<u32>(
                     (((s * kWaves + v) * kConsumers + wg) * kShare + q) * 128 +
                     tid);
  }

  // Sums split `rank` (in `acc`) with the peers' partials of this CTA's
  // share of the columns; `n` counts the units this CTA has done before.
  // Afterwards acc holds the full sum of this CTA's fragments only.
  __device__ static void clusterReduce(u32 base, const unsigned char *smem,
                                       int wg, int tid, int rank, int n,
                                       float (&acc)[kWaves][kAcc]) {
    const int lane = tid % 32;
    // Every peer has initialized its barriers (see the kernel's start).
    if (n == 0)
      clusterWait();
    // Fragments this CTA finishes, and the bytes this warp receives.
    const int mine = rank < kVec ? (kVec - rank + KSPLIT - 1) / KSPLIT : 0;
    if (lane == 0)
      mbarArriveExpectTx(readyBar(base),
                         (KSPLIT - 1) * kWaves * mine * 32 * 16);
    // The peers have read what this CTA pushed for the previous unit.
    if (n > 0)
      mbarWait(freedBar(base), (n - 1) & 1);
    const u32 recv = base + Cfg::kOffC;
#pragma unroll
    for (int r = 0; r < KSPLIT; ++r) {
      if (r == rank)
        continue;
      // This CTA is sender number (rank < r ? rank : rank - 1) of CTA r.
      const u32 dst =
          mapaShared(recv + recvOffset(rank < r ? rank : rank - 1, 0, wg, 0,
                                       tid),
                     r);
      const u32 bar = mapaShared(readyBar(base), r);
#pragma unroll
      for (int v = 0; v < kWaves; ++v)
#pragma unroll
        for (int i = 0; i < kVec; ++i)
          if (i % KSPLIT == r)
            stAsync4(dst + recvOffset(0, v, 0, i / KSPLIT, 0), acc[v][4 * i],
                     acc[v][4 * i + 1], acc[v][4 * i + 2], acc[v][4 * i + 3],
                     bar);
    }
    mbarWait(readyBar(base), n & 1);
#pragma unroll
    for (int s = 0; s < KSPLIT - 1; ++s)
#pragma unroll
      for (int v = 0; v < kWaves; ++v)
#pragma unroll
        for (int i = 0; i < kVec; ++i)
          if (i % KSPLIT == rank) {
            const float4 x = *reinterpret_cast<const float4 *>(
                smem + Cfg::kOffC + recvOffset(s, v, wg, i / KSPLIT, tid));
            acc[v][4 * i + 0] += x.x;
            acc[v][4 * i + 1] += x.y;
            acc[v][4 * i + 2] += x.z;
            acc[v][4 * i + 3] += x.w;
          }
    // (The sums above consumed every load.)
    __syncwarp();
    if (lane == 0) {
#pragma unroll
      for (int r = 0; r < KSPLIT; ++r)
        if (r != rank)
          mbarArriveCluster(mapaShared(freedBar(base), r));
    }
    BS_TIMELINE(wg == 0 && tid == 0, SplitDone);
  }

  // Before the CTA exits: the peers have read the last partial this CTA
  // pushed (one wait per arrival, also when the CTA had no unit).
  __device__ __forceinline__ static void drain(u32 base, int n) {
    if (n > 0)
      mbarWait(freedBar(base), (n - 1) & 1);
    else
      clusterWait();
  }
};

} // namespace bs

#endif // BLOCKSCALE_KERNELS_GEMM_SPLITK_CUH
