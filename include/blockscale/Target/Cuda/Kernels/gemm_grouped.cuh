//===- gemm_grouped.cuh - m-grouped FP8 GEMMs (mixture of experts) *- CUDA
//-*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// C[rows of g] = A[rows of g] @ B[g]^T for G groups of rows, each with its
// own (N, K) weight B[g] and its 128x128 scales, the recipe of the dense
// forward GEMM (gemm_sm90.cuh). Both groupings are one row range per group
// of a 2-D A (rows, K) and C (rows, N):
//   contiguous  rows [offs[g - 1], offs[g]) (offs[-1] = 0), rows = M_total;
//   masked      rows [g * Mmax, g * Mmax + count[g]), rows = G * Mmax.
// The group sizes live in device memory and are read by the kernel, so a
// launch needs no host synchronization and can be captured in a graph.
//
// Every group's rows are tiled on their own, so a tile starts at its group's
// first row plus a multiple of BM and may end past the group's last row.
// Such a tile reads rows of the next group (or TMA's zero fill past the end)
// and computes garbage there; its epilogue stores only the group's rows,
// from registers, since a TMA box cannot be clipped at an arbitrary row.
// Tiles that lie inside their group take the TMA-store epilogue.
//
// The K loop is the dense forward kernels' (gemm_mainloop.cuh): every group
// has the same K, so a kernel may be specialized for it and run the
// stage-aligned rounds (GemmConfig::kAlignedK, stageAlignedKBlocks).
//
// A tile's 1x128 A scales are BM consecutive floats from its first row,
// which is any row: a TMA box must start 16-byte aligned in its innermost
// dimension (here the rows), so the producer warp copies them with 4-byte
// cp.async instead, each lane arriving on the stage's full barrier when its
// copies land (the barrier counts the TMA thread's arrival and 32 more).
//
// CTA pairs (CLUSTER = 2) halve one operand's L2-to-SM traffic by TMA
// multicast. Along N, the pair's tiles share A; along M (a launch-time
// choice, GroupedGemmParams::pairM), they share B, which suits groups of
// exactly two M tiles: one pair then covers the group's rows and a K-block
// of B crosses from L2 once for both. A consumer warpgroup whose rows all
// lie past its group's last row waits for the stages and frees them
// without issuing wgmmas, leaving the tensor cores to the live one.
//
// The work units of all groups form one sequence (group by group, the
// dense raster order inside a group) which the persistent CTAs walk with a
// stride, so groups of very different sizes cost what their tiles cost,
// whatever the split; the only per-group cost is reading two offsets.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_KERNELS_GEMM_GROUPED_CUH
#define BLOCKSCALE_KERNELS_GEMM_GROUPED_CUH

#include "blockscale/gemm_config.cuh"
#include "blockscale/gemm_epilogue.cuh"
#include "blockscale/gemm_mainloop.cuh"
#include "blockscale/tile_scheduler.cuh"

namespace bs {

// 4 bytes global -> shared, zero-filled where `valid` is false (nothing is
// read then).
__device__ __forceinline__ void cpAsync4(u32 dst, const float *src,
                                         bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(dst),
               "l"(src), "r"(valid ? 4 : 0)
               : "memory");
}
// Arrives on `bar` once this thread's earlier cp.async copies have landed,
// without raising the barrier's expected count (it was initialized with it).
__device__ __forceinline__ void cpAsyncArriveNoinc(u32 bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(bar)
               : "memory");
}

// A dense WorkUnit plus where its group puts it (tile_scheduler.cuh): mb is
// the tile row inside the group, m0 the tile's first row of A and C, mEnd
// the group's row limit, bRow0 the tile's first row of the (G * N, K) view
// of B.
struct GroupedWorkUnit : WorkUnit {
  int m0, mEnd, bRow0, group;
  bool alongM; // the pair's CTAs share this N tile (p.pairM, two M tiles)
};

template <class Cfg> struct GroupedTileScheduler {
  static constexpr int BM = Cfg::BM, BN = Cfg::BN, CLUSTER = Cfg::CLUSTER;

  const GroupedGemmParams &p;
  const int rank;   // CTA rank in the pair
  int u;            // current unit
  const int stride; // units taken at once: CTAs (pairs) of the grid
  int g = -1;       // group of unit u, once valid() has found it
  int gFirst = 0;   // its first unit
  int gUnits = 0;   // its units
  int gTilesM = 0;  // its tile rows
  int gRow0 = 0, gRowEnd = 0;
  bool gAlongM = false; // its units pair M tiles (see unit())

  // Reads nothing from global memory: the kernel constructs it before its
  // programmatic-launch wait, and the sizes may come from the kernel before.
  __device__ __forceinline__
  GroupedTileScheduler(const GroupedGemmParams &params, int clusterRank)
      : p(params), rank(clusterRank),
        u(static_cast<int>(blockIdx.x) / CLUSTER),
        stride(static_cast<int>(gridDim.x) / CLUSTER) {}

  // Rows [r0, r1) of group i, clipped to the rows of A and C. A contiguous
  // group starts where group i - 1 ended (prevEnd), so malformed offsets
  // (decreasing, negative, past the rows) make groups empty or shorter:
  // never two groups on one row, never a store out of bounds.
  __device__ __forceinline__ void rowsOf(int i, int prevEnd, int &r0,
                                         int &r1) const {
    if (p.masked) {
      r0 = i * p.mMax;
      const int c = __ldg(p.groups + i);
      r1 = r0 + min(max(c, 0), p.mMax);
    } else {
      r0 = prevEnd;
      r1 = min(max(__ldg(p.groups + i), r0), p.gemm.m);
    }
  }

  // Moves to the group of unit u (forward only: u never decreases).
  __device__ __forceinline__ bool valid() {
    while (u >= gFirst + gUnits) {
      if (g + 1 >= p.numGroups)
        return false;
      gFirst += gUnits;
      ++g;
      rowsOf(g, gRowEnd, gRow0, gRowEnd);
      gTilesM = (gRowEnd - gRow0 + BM - 1) / BM;
      gAlongM = CLUSTER > 1 && p.pairM && gTilesM > 1;
      gUnits = gAlongM ? (gTilesM + CLUSTER - 1) / CLUSTER * p.gemm.tilesN
                       : gTilesM * (p.gemm.tilesN / CLUSTER);
    }
    return true;
  }
  __device__ __forceinline__ void advance() { u += stride; }
  __device__ __forceinline__ bool first() const {
    return u == static_cast<int>(blockIdx.x) / CLUSTER;
  }

  // Inside a group, the dense raster order: bands of `raster` N tiles. In
  // pairs along N, a unit is a pair of N tiles, the pair's CTAs taking one
  // each (the launch requires an even N tile count); along M (p.pairM, a
  // group of more than one row tile), a pair of M tiles of one N tile, the
  // second past the group's rows when it has an odd count of them (its CTA
  // still loads its half of B for the peer, and its warpgroups idle:
  // GemmMainloop::drain). A group of one row tile pairs along N even then,
  // rather than leave half of every pair idle.
  __device__ __forceinline__ GroupedWorkUnit unit() const {
    GroupedWorkUnit w;
    const int l = u - gFirst;
    const bool alongM = gAlongM;
    const int unitsN = alongM ? p.gemm.tilesN : p.gemm.tilesN / CLUSTER;
    const int unitsM = alongM ? (gTilesM + CLUSTER - 1) / CLUSTER : gTilesM;
    const int raster = p.gemm.raster;
    const int band = l / (raster * unitsM);
    const int firstN = band * raster;
    const int width = min(raster, unitsN - firstN);
    const int local = l - band * raster * unitsM;
    const int um = local / width, un = firstN + (local - um * width);
    w.mb = alongM ? um * CLUSTER + rank : um;
    w.nb = alongM ? un : un * CLUSTER + rank;
    w.split = 0;
    w.tile = u;
    w.kb0 = 0;
    w.kb1 = p.gemm.kBlocks;
    w.m0 = gRow0 + w.mb * BM;
    w.mEnd = gRowEnd;
    w.bRow0 = g * p.gemm.n + w.nb * BN;
    w.group = g;
    w.alongM = alongM;
    return w;
  }
};

template <class Cfg> struct GroupedGemmSm90 {
  static_assert(Cfg::KSPLIT == 1 && !Cfg::WGRAD && !Cfg::ACCUMULATE,
                "grouped GEMMs: no K splits, 128x128 B scales, C = AB");
  using Scheduler = GroupedTileScheduler<Cfg>;
  using Mainloop = GemmMainloop<Cfg>;
  using Epilogue = GemmEpilogue<Cfg>;
  static constexpr int kThreads = Cfg::kThreads;
  static constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK;
  static constexpr int kConsumers = Cfg::kConsumers, kWaves = Cfg::kWaves,
                       kWaveRows = Cfg::kWaveRows, kAcc = Cfg::kAcc,
                       CLUSTER = Cfg::CLUSTER;

  static constexpr int kScaleLanes = 32;

  __device__ static void run(const GroupedGemmParams &p, const TmaDesc &tA,
                             const TmaDesc &tB, const TmaDesc &tC) {
    extern __shared__ __align__(1024) unsigned char smemRaw[];
    const u32 rawAddr = smemAddr(smemRaw);
    const u32 base = (rawAddr + 1023u) & ~1023u;

    const int wg = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0);
    const int tid = threadIdx.x % 128;
    const int rank = CLUSTER > 1 ? static_cast<int>(clusterCtaRank()) : 0;
    const Scheduler sched(p, rank);

    gridDepLaunchDependents();
    if (threadIdx.x == 0) {
      // A stage's A is written by both CTAs of a pair: every consumer warp
      // of both releases it.
      Mainloop::ring(base).init(1 + kScaleLanes, kConsumers * 4 * CLUSTER);
      fenceBarrierInit();
      tmaPrefetchDesc(tA);
      tmaPrefetchDesc(tB);
      tmaPrefetchDesc(tC);
    }
    // The peer arrives on (and multicasts into) this CTA's barriers.
    if (CLUSTER > 1)
      clusterSync();
    else
      __syncthreads();
    // The group sizes are global memory too: read only after this.
    gridDepWait();

    if (wg == kConsumers) {
      setMaxNRegDec<Cfg::kProducerRegs>();
      if (tid < kScaleLanes)
        produce(sched, p, base, tA, tB, tid, rank);
    } else {
      setMaxNRegInc<Cfg::kConsumerRegs>();
      consume(sched, p, base, wg, tid, rank, tC);
    }
    if (CLUSTER > 1) {
      // No CTA may exit while its peer can still arrive on its barriers or
      // multicast into its shared memory.
      __syncwarp();
      clusterSync();
    }
  }

  __device__ static void produce(Scheduler s, const GroupedGemmParams &p,
                                 u32 base, const TmaDesc &tA, const TmaDesc &tB,
                                 int lane, int rank) {
    const typename Cfg::Ring r = Mainloop::ring(base);
    if constexpr (Cfg::kAlignedK) {
      if (Mainloop::alignedK(p.gemm)) {
        // The dense kernels' stage-aligned rounds (GemmMainloop::
        // produceAligned): every unit starts on stage 0; a stage the last
        // round pads gets the 33 arrivals of a real one and no bytes.
        u32 phase = 0;
        for (; s.valid(); s.advance()) {
          const GroupedWorkUnit w = s.unit();
          for (int round = 0; round < Mainloop::kRounds; ++round) {
#pragma unroll
            for (int i = 0; i < Cfg::STAGES; ++i) {
              mbarWait(r.empty(i), phase ^ 1);
              if (Mainloop::realStage(round, i)) {
                loadStage(p, w, round * Cfg::STAGES + i, base, i, tA, tB,
                          lane, rank);
              } else {
                if (lane == 0)
                  mbarArrive(r.full(i));
                cpAsyncArriveNoinc(r.full(i));
              }
            }
            phase ^= 1;
          }
        }
        return;
      }
    }
    typename Cfg::Pipe st;
    for (; s.valid(); s.advance()) {
      const GroupedWorkUnit w = s.unit();
      for (int kb = w.kb0; kb < w.kb1; ++kb) {
        r.producerAcquire(st);
        loadStage(p, w, kb, base, st.index, tA, tB, lane, rank);
        st.advance();
      }
    }
  }

  // K-block kb of unit w into `stage`, by the producer warp: lane 0's TMA
  // loads of A and B and every lane's share of the A scales, each lane
  // arriving on the stage's full barrier when its copies land. In pairs
  // along N the CTAs share the tile's rows (one group, one m0): each loads
  // half of A into both (tA's box is BM / CLUSTER rows); along M they share
  // the N tile (one group, one bRow0): each loads half of B into both (tB's
  // box is BN / CLUSTER rows; BN is a multiple of 16, so a half is whole
  // 1024-byte swizzle atoms). A launch that pairs along M has only those
  // boxes: its units of one-tile groups, paired along N, load their whole A
  // and B tiles on each CTA (B in two halves). The A scales are each CTA's.
  __device__ __forceinline__ static void
  loadStage(const GroupedGemmParams &p, const GroupedWorkUnit &w, int kb,
            u32 base, int stage, const TmaDesc &tA, const TmaDesc &tB,
            int lane, int rank) {
    const u32 full = Mainloop::ring(base).full(stage);
    if (lane == 0) {
      mbarArriveExpectTx(full, Cfg::kTxBytes - BM * 4);
      constexpr unsigned short kBoth = (1 << CLUSTER) - 1;
      const u32 dA = base + Cfg::kOffA + stage * Cfg::kABytes;
      const u32 dB = base + Cfg::kOffB + stage * Cfg::kBBytes;
      if (CLUSTER > 1 && !p.pairM) {
        constexpr int kHalf = BM / CLUSTER;
        tmaLoad2dMulticast(dA + rank * kHalf * BK, tA, full, kb * BK,
                           w.m0 + rank * kHalf, kBoth);
      } else {
        tmaLoad2d(dA, tA, full, kb * BK, w.m0);
      }
      if (CLUSTER > 1 && p.pairM) {
        constexpr int kHalf = BN / CLUSTER;
        if (w.alongM) {
          tmaLoad2dMulticast(dB + rank * kHalf * BK, tB, full, kb * BK,
                             w.bRow0 + rank * kHalf, kBoth);
        } else {
#pragma unroll
          for (int h = 0; h < CLUSTER; ++h)
            tmaLoad2d(dB + h * kHalf * BK, tB, full, kb * BK,
                      w.bRow0 + h * kHalf);
        }
      } else {
        tmaLoad2d(dB, tB, full, kb * BK, w.bRow0);
      }
    }
    const float *sa = p.sa + static_cast<long long>(kb) * p.ldsa + w.m0 + lane;
    const u32 dst = base + Cfg::kOffSA + stage * BM * 4 + lane * 4;
    // Rows of A from this lane's first row on; none are read past them.
    const int left = p.gemm.m - w.m0 - lane;
#pragma unroll
    for (int j = 0; j < BM / kScaleLanes; ++j) {
      const int i = j * kScaleLanes;
      cpAsync4(dst + i * 4, sa + (i < left ? i : 0), i < left);
    }
    cpAsyncArriveNoinc(full);
  }

  // The rows of the tile below mEnd (and columns below N), straight from
  // the accumulator fragment (gemm_epilogue.cuh has its layout). N is even
  // and c0 is even, so a column pair is either inside C or outside.
  __device__ static void storeRows(const GroupedGemmParams &p, int wg, int r0,
                                   int c0, int m0, int mEnd, int n0,
                                   const float (&acc)[kWaves][kAcc]) {
    const int n = p.gemm.n;
#pragma unroll
    for (int v = 0; v < kWaves; ++v)
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
        const int col = n0 + 8 * j + c0;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = m0 + v * kWaveRows + wg * 64 + r0 + 8 * h;
          if (row >= mEnd || col >= n)
            continue;
          const float x0 = acc[v][4 * j + 2 * h],
                      x1 = acc[v][4 * j + 2 * h + 1];
          const long long at = static_cast<long long>(row) * p.gemm.ldc + col;
          if (Cfg::OUT_F32)
            *reinterpret_cast<float2 *>(static_cast<float *>(p.gemm.c) + at) =
                make_float2(x0, x1);
          else
            *reinterpret_cast<u32 *>(static_cast<unsigned short *>(p.gemm.c) +
                                     at) = packBf16x2(x0, x1);
        }
      }
  }

  __device__ static void consume(Scheduler s, const GroupedGemmParams &p,
                                 u32 base, int wg, int tid, int rank,
                                 const TmaDesc &tC) {
    const int warp = tid / 32, lane = tid % 32;
    const int r0 = warp * 16 + lane / 4;
    const int c0 = 2 * (lane % 4);
    const int nBlocksB = (p.gemm.n + 127) / 128;
    const u32 cBase = Epilogue::slabBase(base, wg);
    const u32 peer =
        CLUSTER > 1 ? mapaShared(Mainloop::ring(base).empty(0), rank ^ 1) : 0;

    float acc[kWaves][kAcc];
    typename Cfg::Pipe st;
    const bool turns = Mainloop::takeTurns(p.gemm);
    if (wg == 1)
      Mainloop::turnEnd(turns, wg);

    int n = 0; // units done by this CTA (the stage-aligned loop's stash)
    for (; s.valid(); s.advance(), ++n) {
      const GroupedWorkUnit w = s.unit();
      const int n0 = w.nb * BN;
      typename Mainloop::TileScales ts =
          Mainloop::tileScales(p.gemm, n0, nBlocksB);
      const long long groupOff = static_cast<long long>(w.group) * p.sbStrideG;
      ts.sb0 += groupOff;
      ts.sb1 += groupOff;

#pragma unroll
      for (int v = 0; v < kWaves; ++v)
#pragma unroll
        for (int i = 0; i < kAcc; ++i)
          acc[v][i] = 0.f;

      // A warpgroup whose first row is past the group's rows computes
      // nothing (in every wave: a later wave's rows are further on).
      Mainloop::run(p.gemm, base, wg, r0, c0, lane, peer, w, ts, acc, st, n,
                    w.m0 + wg * 64 < w.mEnd);
      if (w.m0 + BM <= w.mEnd)
        Epilogue::store(cBase, wg, tid, r0, c0, w.m0, n0, acc, tC);
      else
        storeRows(p, wg, r0, c0, w.m0, w.mEnd, n0, acc);
    }

    if (wg == 0)
      Mainloop::turnBegin(turns, wg);
    // Shared memory must stay alive until the last TMA store has read it.
    if (tid == 0)
      bulkWait0();
  }
};

} // namespace bs

#endif // BLOCKSCALE_KERNELS_GEMM_GROUPED_CUH
