//===- gemm_sm90.cuh - blockwise-scaled FP8 GEMM for Hopper ------*- CUDA -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// C(M, N) = sum_kb (A[:, kb] @ B[kb, :]) * sA[m, kb] * sB[kb, .]
//
// A is (M, K) row-major FP8 with one f32 scale per row per 128-deep K-block.
// B is given N-by-K row-major (the (K, N) operand K-contiguous) with either one
// scale per 128x128 block (forward / grad-input) or one per column per K-block
// (grad-weight). Both operands must be K-major because FP8 wgmma reads only
// K-major shared-memory operands.
//
// One persistent CTA per SM, warp-specialized: the last warpgroup is the
// producer, the others are consumers. This file composes the pieces:
//   tile_scheduler.cuh  which work units a CTA takes, in which order
//   gemm_mainloop.cuh   the TMA producer and the consumers' K loop
//   gemm_splitk.cuh     summing K splits (global workspace or cluster)
//   gemm_epilogue.cuh   writing C (TMA store / reduce-add, or registers)
//   gemm_config.cuh     derived constants and the shared-memory layout
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_KERNELS_GEMM_SM90_CUH
#define BLOCKSCALE_KERNELS_GEMM_SM90_CUH

#include "blockscale/gemm_config.cuh"
#include "blockscale/gemm_epilogue.cuh"
#include "blockscale/gemm_mainloop.cuh"
#include "blockscale/gemm_splitk.cuh"
#include "blockscale/tile_scheduler.cuh"
#include "blockscale/timeline.cuh"

namespace bs {

template <class Cfg, template <class> class SchedulerT = DenseTileScheduler>
struct GemmSm90 {
  using Scheduler = SchedulerT<Cfg>;
  using Mainloop = GemmMainloop<Cfg>;
  using SplitK = GemmSplitK<Cfg>;
  using Epilogue = GemmEpilogue<Cfg>;
  static constexpr int kThreads = Cfg::kThreads;
  static constexpr int kConsumers = Cfg::kConsumers, kWaves = Cfg::kWaves,
                       kAcc = Cfg::kAcc, CLUSTER = Cfg::CLUSTER,
                       KSPLIT = Cfg::KSPLIT, kClusterCtas = Cfg::kClusterCtas;

  __device__ static void run(const GemmParams &p, const TmaDesc &tA,
                             const TmaDesc &tB, const TmaDesc &tSA,
                             const TmaDesc &tSB, const TmaDesc &tC) {
    extern __shared__ __align__(1024) unsigned char smemRaw[];
    const u32 rawAddr = smemAddr(smemRaw);
    const u32 base = (rawAddr + 1023u) & ~1023u;
    unsigned char *smem = smemRaw + (base - rawAddr);

    // Warp-uniform as far as ptxas can tell (a shuffle from lane 0), so that
    // the role branch and the descriptors that depend on the warpgroup index
    // may live on the uniform datapath.
    const int wg = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0);
    const int tid = threadIdx.x % 128;
    const int rank =
        kClusterCtas > 1 ? static_cast<int>(clusterCtaRank()) : 0;
    // The producer thread and the consumers each walk a copy.
    const Scheduler sched(p, rank);

    // The next kernel of the stream may start its own set-up on the SMs
    // this grid leaves; its gridDepWait orders it after this grid's stores.
    gridDepLaunchDependents();
    if (threadIdx.x == 0) {
      BS_TIMELINE(true, Entry);
      BS_TIMELINE(true, GEntry);
      // Every consumer warp of every CTA that reads a stage's A releases it.
      Mainloop::ring(base).init(1, kConsumers * 4 * CLUSTER);
      if (KSPLIT > 1)
        SplitK::initBarriers(base);
      fenceBarrierInit();
      tmaPrefetchDesc(tA);
      tmaPrefetchDesc(tB);
      tmaPrefetchDesc(tSA);
      if (Cfg::WGRAD)
        tmaPrefetchDesc(tSB);
      tmaPrefetchDesc(tC);
    }
    startSync();
    // Everything above touches only shared memory and the kernel's
    // parameters, so under a programmatic launch it overlaps the previous
    // kernel's tail; every thread waits here before its first global access
    // (loads, scale reads, stores, the split-K workspace).
    gridDepWait();
    BS_TIMELINE(threadIdx.x == 0, Ready);

    if (wg == kConsumers) {
      setMaxNRegDec<Cfg::kProducerRegs>();
      BS_TIMELINE(tid == 0, ProdReg);
      if constexpr (Cfg::kAlignedK) {
        // One thread produces; the producer warpgroup's other warps have
        // nothing left to do (no cluster-summed splits here): they count in
        // the final cluster barrier and leave, so that the schedulers see
        // only the warps that issue.
        if (tid >= 32) {
          if (CLUSTER > 1)
            clusterArrive();
          return;
        }
      }
      if (tid == 0)
        Mainloop::produce(sched, p, base, rank, tA, tB, tSA, tSB);
      if (KSPLIT > 1) {
        __syncwarp();
        clusterWait();
      }
    } else {
      setMaxNRegInc<Cfg::kConsumerRegs>();
      consume(sched, p, base, smem, wg, tid, rank, tC);
    }
    if (CLUSTER > 1) {
      // No CTA may exit while its peer can still arrive on its barriers.
      __syncwarp();
      clusterSync();
    }
    // (KSPLIT: the consumers wait until the peers are done with this CTA's
    // shared memory, see consume.)
  }

  // Peers arrive on (and multicast into) this CTA's barriers: they must
  // see them initialized. Every thread of the CTA, once.
  __device__ __forceinline__ static void startSync() {
    if (CLUSTER > 1) {
      clusterSync();
    } else {
      __syncthreads();
      // KSPLIT: the peers first push into this CTA's shared memory after
      // their first unit's K loop; the consumers wait for this arrival just
      // before their first push, the producer warps after their loads. What
      // the peers must see by then is the barriers' initialization, which
      // fenceBarrierInit released at cluster scope, so the arrival is
      // relaxed (a release arrival would also wait for this thread's earlier
      // memory operations, on the critical path of short kernels).
      if (KSPLIT > 1)
        clusterArriveRelaxed();
    }
  }

  __device__ static void consume(Scheduler s, const GemmParams &p, u32 base,
                                 unsigned char *smem, int wg, int tid,
                                 int rank, const TmaDesc &tC) {
    const int warp = tid / 32, lane = tid % 32;
    // This thread's rows and columns of the accumulator fragment
    // (gemm_epilogue.cuh).
    const int r0 = warp * 16 + lane / 4;
    const int c0 = 2 * (lane % 4);
    const int nBlocksB = (p.n + 127) / 128;
    const u32 cBase = Epilogue::slabBase(base, wg);
    const u32 peer =
        CLUSTER > 1 ? mapaShared(Mainloop::ring(base).empty(0), rank ^ 1) : 0;

    float acc[kWaves][kAcc];
    typename Cfg::Pipe st;
    const bool turns = Mainloop::takeTurns(p);
    if (wg == 1)
      Mainloop::turnEnd(turns, wg); // warpgroup 0 goes first

    int n = 0; // units done by this CTA
    for (; s.valid(); s.advance(), ++n) {
      const WorkUnit w = s.unit();
      const int m0 = w.mb * Cfg::BM, n0 = w.nb * Cfg::BN;
      const typename Mainloop::TileScales ts =
          Mainloop::tileScales(p, n0, nBlocksB);

#pragma unroll
      for (int v = 0; v < kWaves; ++v)
#pragma unroll
        for (int i = 0; i < kAcc; ++i)
          acc[v][i] = 0.f;

#ifdef BS_DEBUG_TIMELINE
      if (s.first()) {
        // (The main loop's first wait returns at once after this one.)
        Mainloop::ring(base).waitFull(st);
        BS_TIMELINE(wg == 0 && tid == 0, FirstData);
      }
#endif
      Mainloop::run(p, base, wg, r0, c0, lane, peer, w, ts, acc, st, n);
      BS_TIMELINE(wg == 0 && tid == 0, LoopEnd);

      if (KSPLIT > 1) {
        SplitK::clusterReduce(base, smem, wg, tid, rank, n, acc);
        Epilogue::storeShare(p, wg, rank, m0, n0, r0, c0, acc);
        BS_TIMELINE(wg == 0 && tid == 0, EpiIssued);
        continue;
      }
      if (p.splits > 1 && !SplitK::workspaceReduce(p, smem, w, wg, tid, acc))
        continue; // another split finishes this tile

      Epilogue::store(cBase, wg, tid, r0, c0, m0, n0, acc, tC);
      BS_TIMELINE(wg == 0 && tid == 0, EpiIssued);
    }

    if (wg == 0)
      Mainloop::turnBegin(turns, wg); // the grant warpgroup 1 gave last
    // Shared memory must stay alive until the last TMA store has read it,
    // and (KSPLIT) until the peers have read the last partial.
    if (tid == 0)
      bulkWait0();
    if (KSPLIT > 1)
      SplitK::drain(base, n);
    BS_TIMELINE(wg == 0 && tid == 0, Exit);
    BS_TIMELINE(wg == 0 && tid == 0, GExit);
  }
};

} // namespace bs

#endif // BLOCKSCALE_KERNELS_GEMM_SM90_CUH
