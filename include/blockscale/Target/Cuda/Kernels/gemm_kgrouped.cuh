//===- gemm_kgrouped.cuh - k-grouped FP8 GEMM (MoE wgrad) ------*- CUDA -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// C[g] (M, N) = A_g @ B_g^T for G groups of tokens, the weight gradient of
// a mixture-of-experts layer (dW_g = dY_g^T X_g): A (M, capacity) and B (N,
// capacity) FP8 are the group-aware cast's transposes of dY and X
// (cast_grouped.cuh), group g at padded token block b_g
// (token_groups.cuh), with 1x128 (A) and 128x1 (B) scales per 128-token
// block, the recipe of the dense weight gradient. C is (G, M, N), f32 or
// bf16, or f32 accumulated into (C += ...).
//
// Every group has the same output tiles, so the work units are G * tilesM *
// tilesN whatever the sizes (group by group, the dense raster order inside
// a group), walked by persistent CTAs with a stride; a unit's K-blocks are
// its group's padded blocks, which the producer and the consumers each find
// with a forward cursor over the offsets. The K loop, the producer and the
// epilogue are the dense weight gradient's (gemm_mainloop.cuh,
// gemm_epilogue.cuh) on those K-blocks: all TMA boxes start at multiples of
// 128 tokens, BM rows and BN columns.
//
// A group without tokens has no K-blocks: its tiles store zeros (C += 0
// leaves C as it was when accumulating), so every element of C is written
// and a poisoned or stale buffer never leaks through. Tiles that end past
// row M (M not a multiple of BM) store their rows from registers, clipped
// at M, since the (G * M, N) view of C continues with the next group there.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_KERNELS_GEMM_KGROUPED_CUH
#define BLOCKSCALE_KERNELS_GEMM_KGROUPED_CUH

#include "blockscale/gemm_config.cuh"
#include "blockscale/gemm_epilogue.cuh"
#include "blockscale/gemm_mainloop.cuh"
#include "blockscale/tile_scheduler.cuh"
#include "blockscale/token_groups.cuh"

namespace bs {

// A dense WorkUnit whose K-blocks [kb0, kb1) are its group's padded blocks.
struct KGroupedWorkUnit : WorkUnit {
  int group;
};

template <class Cfg> struct KGroupedTileScheduler {
  const KGroupedGemmParams &p;
  int u;            // current unit
  const int stride; // CTAs of the grid
  const int perGroup, units;
  TokenGroupCursor cur;

  // Reads nothing from global memory (constructed before the kernel's
  // programmatic-launch wait).
  __device__ __forceinline__
  KGroupedTileScheduler(const KGroupedGemmParams &params, int)
      : p(params), u(static_cast<int>(blockIdx.x)),
        stride(static_cast<int>(gridDim.x)),
        perGroup(params.gemm.tilesM * params.gemm.tilesN),
        units(params.gemm.tilesM * params.gemm.tilesN * params.numGroups),
        cur(params.offs, params.numGroups, params.limit) {}

  __device__ __forceinline__ bool valid() const { return u < units; }
  __device__ __forceinline__ void advance() { u += stride; }
  __device__ __forceinline__ bool first() const {
    return u == static_cast<int>(blockIdx.x);
  }

  __device__ __forceinline__ KGroupedWorkUnit unit() {
    KGroupedWorkUnit w;
    const int g = u / perGroup;
    cur.to(g);
    const int l = u - g * perGroup;
    const int tilesM = p.gemm.tilesM, tilesN = p.gemm.tilesN,
              raster = p.gemm.raster;
    const int band = l / (raster * tilesM);
    const int firstN = band * raster;
    const int width = min(raster, tilesN - firstN);
    const int local = l - band * raster * tilesM;
    w.mb = local / width;
    w.nb = firstN + (local - w.mb * width);
    w.split = 0;
    w.tile = u;
    // (Blocks past the operands' capacity are never read: a capacity too
    // small for the offsets shortens the last groups.)
    w.kb0 = min(cur.b0, p.gemm.kBlocks);
    w.kb1 = min(cur.b0 + cur.nb, p.gemm.kBlocks);
    w.group = g;
    return w;
  }
};

template <class Cfg> struct KGroupedGemmSm90 {
  static_assert(Cfg::CLUSTER == 1 && Cfg::KSPLIT == 1 && Cfg::WGRAD &&
                    !Cfg::kAlignedK,
                "k-grouped GEMMs: one CTA per tile, 128x1 B scales, any K");
  using Scheduler = KGroupedTileScheduler<Cfg>;
  using Mainloop = GemmMainloop<Cfg>;
  using Epilogue = GemmEpilogue<Cfg>;
  static constexpr int kThreads = Cfg::kThreads;
  static constexpr int BM = Cfg::BM, BN = Cfg::BN;
  static constexpr int kConsumers = Cfg::kConsumers, kWaves = Cfg::kWaves,
                       kWaveRows = Cfg::kWaveRows, kAcc = Cfg::kAcc;

  __device__ static void run(const KGroupedGemmParams &p, const TmaDesc &tA,
                             const TmaDesc &tB, const TmaDesc &tSA,
                             const TmaDesc &tSB, const TmaDesc &tC) {
    extern __shared__ __align__(1024) unsigned char smemRaw[];
    const u32 rawAddr = smemAddr(smemRaw);
    const u32 base = (rawAddr + 1023u) & ~1023u;

    const int wg = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0);
    const int tid = threadIdx.x % 128;
    const Scheduler sched(p, 0);

    gridDepLaunchDependents();
    if (threadIdx.x == 0) {
      Mainloop::ring(base).init(1, kConsumers * 4);
      fenceBarrierInit();
      tmaPrefetchDesc(tA);
      tmaPrefetchDesc(tB);
      tmaPrefetchDesc(tSA);
      tmaPrefetchDesc(tSB);
      tmaPrefetchDesc(tC);
    }
    __syncthreads();
    // The offsets are global memory too: read only after this.
    gridDepWait();

    if (wg == kConsumers) {
      setMaxNRegDec<Cfg::kProducerRegs>();
      if (tid == 0)
        Mainloop::produce(sched, p.gemm, base, 0, tA, tB, tSA, tSB);
    } else {
      setMaxNRegInc<Cfg::kConsumerRegs>();
      consume(sched, p, base, wg, tid, tC);
    }
  }

  // The tile's rows below M (and columns below N) straight from the
  // accumulator fragment (gemm_epilogue.cuh has its layout); N is even and
  // c0 is even, so a column pair is either inside C or outside.
  __device__ static void storeRows(const KGroupedGemmParams &p, int wg, int r0,
                                   int c0, int m0, long long rowBase, int n0,
                                   const float (&acc)[kWaves][kAcc]) {
    const int m = p.gemm.m, n = p.gemm.n;
#pragma unroll
    for (int v = 0; v < kWaves; ++v)
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
        const int col = n0 + 8 * j + c0;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = m0 + v * kWaveRows + wg * 64 + r0 + 8 * h;
          if (row >= m || col >= n)
            continue;
          const float x0 = acc[v][4 * j + 2 * h],
                      x1 = acc[v][4 * j + 2 * h + 1];
          const long long at = (rowBase + row) * p.gemm.ldc + col;
          if (Cfg::OUT_F32) {
            float2 *c =
                reinterpret_cast<float2 *>(static_cast<float *>(p.gemm.c) + at);
            float2 y = make_float2(x0, x1);
            if (Cfg::ACCUMULATE) {
              const float2 o = *c;
              y.x += o.x;
              y.y += o.y;
            }
            *c = y;
          } else {
            *reinterpret_cast<u32 *>(static_cast<unsigned short *>(p.gemm.c) +
                                     at) = packBf16x2(x0, x1);
          }
        }
      }
  }

  __device__ static void consume(Scheduler s, const KGroupedGemmParams &p,
                                 u32 base, int wg, int tid, const TmaDesc &tC) {
    const int warp = tid / 32, lane = tid % 32;
    const int r0 = warp * 16 + lane / 4;
    const int c0 = 2 * (lane % 4);
    const u32 cBase = Epilogue::slabBase(base, wg);
    // The weight-gradient K loop reads its B scales from shared memory.
    const typename Mainloop::TileScales ts{nullptr, nullptr,
                                           Mainloop::kSplitAll};

    float acc[kWaves][kAcc];
    typename Cfg::Pipe st;
    for (; s.valid(); s.advance()) {
      const KGroupedWorkUnit w = s.unit();
      const int m0 = w.mb * BM, n0 = w.nb * BN;
#pragma unroll
      for (int v = 0; v < kWaves; ++v)
#pragma unroll
        for (int i = 0; i < kAcc; ++i)
          acc[v][i] = 0.f;
      // (The producer loads nothing for a group without tokens either.)
      if (w.kb1 > w.kb0)
        Mainloop::run(p.gemm, base, wg, r0, c0, lane, 0u, w, ts, acc, st);
      const long long rowBase = static_cast<long long>(w.group) * p.gemm.m;
      if (m0 + BM <= p.gemm.m)
        Epilogue::store(cBase, wg, tid, r0, c0, static_cast<int>(rowBase) + m0,
                        n0, acc, tC);
      else
        storeRows(p, wg, r0, c0, m0, rowBase, n0, acc);
    }
    // Shared memory must stay alive until the last TMA store has read it.
    if (tid == 0)
      bulkWait0();
  }
};

} // namespace bs

#endif // BLOCKSCALE_KERNELS_GEMM_KGROUPED_CUH
