//===- gemm_mainloop.cuh - TMA producer, wgmma and promotion -----*- CUDA -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The K loop of a blockwise-scaled FP8 GEMM tile, warp-specialized:
//  * the producer (one thread) streams 128-deep K-slices of A, B and their
//    scales with TMA into the STAGES-deep ring; with CTA pairs (CLUSTER = 2)
//    each CTA loads half of the A tile and multicasts it into both CTAs'
//    shared memory, so A crosses from L2 once per pair, and a stage is free
//    only once the consumers of both CTAs released it;
//  * the consumer warpgroups (one per 64 rows, BM = 256 in two waves each)
//    issue four m64nBNk32 wgmmas per K-block into a fresh f32 accumulator
//    and fold it into the running accumulator with the block's scales, the
//    FP32 "promotion": the scale changes every 128 K, so it cannot live
//    inside the tensor-core accumulation (DeepSeek-V3 report, section
//    3.3.2). For BN <= 128 two such accumulators alternate, so a warpgroup
//    promotes block k while its wgmmas of block k + 1 run; wider tiles lack
//    the registers for that and rely on the other warpgroup's wgmmas during
//    a promotion.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_KERNELS_GEMM_MAINLOOP_CUH
#define BLOCKSCALE_KERNELS_GEMM_MAINLOOP_CUH

#include "blockscale/gemm_config.cuh"
#include "blockscale/tile_scheduler.cuh"
#include "blockscale/timeline.cuh"
#include "blockscale/wgmma_fp8.cuh"

namespace bs {

template <class Cfg> struct GemmMainloop {
  static constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK,
                       STAGES = Cfg::STAGES, CLUSTER = Cfg::CLUSTER;
  static constexpr bool WGRAD = Cfg::WGRAD;
  static constexpr int kConsumers = Cfg::kConsumers, kWaves = Cfg::kWaves,
                       kWaveRows = Cfg::kWaveRows, kAcc = Cfg::kAcc;
  static constexpr int kABytes = Cfg::kABytes, kBBytes = Cfg::kBBytes,
                       kSBStage = Cfg::kSBStage;
  static constexpr int kOffA = Cfg::kOffA, kOffB = Cfg::kOffB,
                       kOffSA = Cfg::kOffSA, kOffSB = Cfg::kOffSB,
                       kOffBar = Cfg::kOffBar;
  using Pipe = typename Cfg::Pipe;
  using Ring = typename Cfg::Ring;

  __device__ __forceinline__ static Ring ring(u32 base) {
    return Ring{base + kOffBar};
  }

  //===-- producer ---------------------------------------------------------===//

  template <class Scheduler>
  __device__ static void produce(Scheduler s, const GemmParams &p, u32 base,
                                 int rank,
                                 const TmaDesc &tA, const TmaDesc &tB,
                                 const TmaDesc &tSA, const TmaDesc &tSB) {
    if constexpr (Cfg::kAlignedK) {
      if (alignedK(p)) {
        produceAligned(s, p, base, rank, tA, tB, tSA, tSB);
        return;
      }
    }
    const Ring r = ring(base);
    Pipe st;
    for (; s.valid(); s.advance()) {
      const WorkUnit w = s.unit();
      BS_TIMELINE(s.first(), ProdStart);
      for (int kb = w.kb0; kb < w.kb1; ++kb) {
        r.producerAcquire(st);
        BS_TIMELINE(s.first() && kb == w.kb0, FirstIssue);
        loadStage(w, kb, base, st.index, r.full(st.index), rank, tA, tB, tSA,
                  tSB);
        BS_TIMELINE(s.first() && kb == w.kb0, FirstLoad);
        st.advance();
      }
    }
  }

  //===-- stage-aligned K loop (Cfg::kAlignedK) -----------------------------===//

  // Every unit covers the whole K (no workspace splits) and the kernel knows
  // its K-block count: each unit then starts on stage 0 and walks the ring
  // in rounds of STAGES K-blocks; the last round, if K-blocks do not fill
  // it, is padded with empty stages (the producer arrives without loading,
  // the consumers wait and release). The ring's parity flips once a round,
  // so a PipelineState's index stays 0 and its phase is the round's parity.
  static constexpr int kRounds = (Cfg::KBLOCKS + STAGES - 1) / STAGES;
  static constexpr int kLastStages = Cfg::KBLOCKS % STAGES;
  // Whether stage i of a round holds a K-block: a constant except for the
  // stages the last round pads (one loop for all rounds keeps a single copy
  // of the unrolled round, and its registers, in the kernel).
  __device__ __forceinline__ static bool realStage(int round, int i) {
    return kLastStages == 0 || i < kLastStages || round + 1 < kRounds;
  }
  __device__ __forceinline__ static bool alignedK(const GemmParams &p) {
    return Cfg::kAlignedK && p.splits == 1 && p.kBlocks == Cfg::KBLOCKS;
  }

  template <class Scheduler>
  __device__ static void produceAligned(Scheduler s, const GemmParams &p,
                                        u32 base, int rank, const TmaDesc &tA,
                                        const TmaDesc &tB, const TmaDesc &tSA,
                                        const TmaDesc &tSB) {
    const Ring r = ring(base);
    u32 phase = 0;
    for (; s.valid(); s.advance()) {
      const WorkUnit w = s.unit();
      BS_TIMELINE(s.first(), ProdStart);
      for (int round = 0; round < kRounds; ++round) {
#pragma unroll
        for (int i = 0; i < STAGES; ++i) {
          mbarWait(r.empty(i), phase ^ 1);
          if (realStage(round, i))
            loadStage(w, round * STAGES + i, base, i, r.full(i), rank, tA, tB,
                      tSA, tSB);
          else
            mbarArrive(r.full(i)); // an empty stage: no bytes to wait for
        }
        phase ^= 1;
      }
    }
  }

  // K-block kb of unit w into a free stage, completing on its barrier
  // `full`: A (or, in pairs, this CTA's half, multicast), B and their scales.
  __device__ __forceinline__ static void
  loadStage(const WorkUnit &w, int kb, u32 base, int stage, u32 full,
            int rank, const TmaDesc &tA, const TmaDesc &tB, const TmaDesc &tSA,
            const TmaDesc &tSB) {
    mbarArriveExpectTx(full, Cfg::kTxBytes);
    if (CLUSTER > 1)
      // tA's box is BM / CLUSTER rows: this CTA's slice of the A tile.
      tmaLoad2dMulticast(base + kOffA + stage * kABytes +
                             rank * (BM / CLUSTER) * BK,
                         tA, full, kb * BK, w.mb * BM + rank * (BM / CLUSTER),
                         static_cast<unsigned short>((1 << CLUSTER) - 1));
    else
      tmaLoad2d(base + kOffA + stage * kABytes, tA, full, kb * BK, w.mb * BM);
    tmaLoad2d(base + kOffB + stage * kBBytes, tB, full, kb * BK, w.nb * BN);
    tmaLoad2d(base + kOffSA + stage * BM * 4, tSA, full, w.mb * BM, kb);
    if (WGRAD)
      tmaLoad2d(base + kOffSB + stage * kSBStage, tSB, full, w.nb * BN, kb);
  }

  //===-- consumers --------------------------------------------------------===//

  // Frees a stage: one arrival per consumer warp on this CTA's barrier and,
  // with multicast, on the peer's (whose producer also writes this stage);
  // `peer` is the peer CTA's first "empty" barrier, mapped once per kernel.
  __device__ __forceinline__ static void release(u32 base, int stage,
                                                 int lane, u32 peer) {
    __syncwarp();
    if (lane == 0) {
      mbarArrive(ring(base).empty(stage));
      if (CLUSTER > 1)
        mbarArriveCluster(peer + stage * 8);
    }
  }

  // Scale factors of one K-block for this thread: rows r0 and r0 + 8 times
  // the B block of its columns (fwd: lo/hi blocks), or the A scales alone
  // (wgrad: B scales are per column and read during promotion).
  struct BlockScales {
    float lo0, lo1, hi0, hi1;
  };
  // 128x128 scales of B: the tile's columns below 128 - n0 % 128 use block
  // b0 (at sb0), the rest block b0 + 1 (at sb1), both clamped at the edge of
  // N (a pair's second tile may lie wholly past N when N has an odd count of
  // tiles; its columns are never stored).
  struct TileScales {
    const float *sb0, *sb1;
    int splitJ; // first 8-column group in block b1 (BN / 8: none)
  };

  __device__ __forceinline__ static TileScales tileScales(const GemmParams &p,
                                                          int n0,
                                                          int nBlocksB) {
    TileScales ts;
    const int b0 = min(n0 / 128, nBlocksB - 1);
    const int b1 = b0 + 1 < nBlocksB ? b0 + 1 : b0;
    ts.splitJ = min(128 - n0 % 128, BN) / 8;
    ts.sb0 = p.sb + b0 * p.sbStrideN;
    ts.sb1 = p.sb + b1 * p.sbStrideN;
    return ts;
  }

  // Possible values of a tile's split (see promote): the tile starts at a
  // multiple of BN, so 128 - n0 % 128 is a multiple of gcd(BN, 128).
  static constexpr int kSplitStep = constGcd(BN, 128) / 8;
  static constexpr int kSplitAll = BN / 8; // the whole tile in one block
  // The largest split a tile has: 128 - n0 % 128 <= 128, so a tile wider
  // than 128 columns always reaches into a second block and kSplitAll is
  // not among its splits (each split instantiates the whole K loop: an
  // unreachable one only costs compile time). WGRAD has no split.
  static constexpr int kSplitMax =
      WGRAD || kSplitAll <= 128 / 8 ? kSplitAll : 128 / 8;

  // The A scales of rows r0 and r0 + 8 times the block's B scales lo / hi
  // (wgrad: the A scales alone).
  __device__ __forceinline__ static BlockScales
  blockScales(float sa0, float sa1, float lo, float hi) {
    BlockScales s;
    if (WGRAD) {
      s.lo0 = sa0;
      s.lo1 = sa1;
      s.hi0 = s.hi1 = 0.f;
    } else {
      s.lo0 = sa0 * lo;
      s.lo1 = sa1 * lo;
      s.hi0 = sa0 * hi;
      s.hi1 = sa1 * hi;
    }
    return s;
  }

  __device__ __forceinline__ static BlockScales
  loadScales(const GemmParams &p, u32 base, int stage, int wg, int r0, int kb,
             const TileScales &ts) {
    const u32 sa = base + kOffSA + 4 * (stage * BM + wg * 64 + r0);
    const float sa0 = ldsF32(sa), sa1 = ldsF32(sa + 32);
    if (WGRAD)
      return blockScales(sa0, sa1, 0.f, 0.f);
    const float lo = __ldg(ts.sb0 + static_cast<long long>(kb) * p.sbStrideK);
    const float hi = __ldg(ts.sb1 + static_cast<long long>(kb) * p.sbStrideK);
    return blockScales(sa0, sa1, lo, hi);
  }

  // The four k32 wgmmas of the K-block in `stage` into a fresh accumulator.
  __device__ __forceinline__ static void issue(u32 base, int stage, int wg,
                                               int wave, float (&t)[kAcc],
                                               bool accumulate = false) {
    const u64 descA = smemDescSw128(base + kOffA + stage * kABytes +
                                    (wave * kWaveRows + wg * 64) * BK);
    const u64 descB = smemDescSw128(base + kOffB + stage * kBBytes);
    wgmmaFence();
#pragma unroll
    for (int kk = 0; kk < BK / 32; ++kk)
      // Advancing the start address by 32 bytes selects the next k32 slice
      // inside the swizzled 128-byte rows (the hardware applies the XOR
      // pattern to the final address).
      WgmmaFp8<BN>::mma(t, descA + 2 * kk, descB + 2 * kk,
                        kk > 0 || accumulate);
    wgmmaCommit();
  }

  // acc += t * scales: the FP32 promotion of one K-block. SJ is the first
  // 8-column group of the tile that lies in the next 128-wide scale block of
  // B; it is a template argument so that each column's scale is known at
  // compile time (a run-time choice costs a compare and a select per column
  // group on the promotion's critical path).
  template <int SJ>
  __device__ __forceinline__ static void
  promote(float (&acc)[kAcc], float (&t)[kAcc], const BlockScales &s, u32 base,
          int stage, int c0) {
    if constexpr (!WGRAD) {
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
        const bool hi = j >= SJ;
        const float s0 = hi ? s.hi0 : s.lo0, s1 = hi ? s.hi1 : s.lo1;
        acc[4 * j + 0] += t[4 * j + 0] * s0;
        acc[4 * j + 1] += t[4 * j + 1] * s0;
        acc[4 * j + 2] += t[4 * j + 2] * s1;
        acc[4 * j + 3] += t[4 * j + 3] * s1;
      }
    } else {
      const u32 sbv = base + kOffSB + stage * kSBStage + 4 * c0;
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
        const float2 b = ldsF32x2(sbv + 32 * j);
        acc[4 * j + 0] += t[4 * j + 0] * (s.lo0 * b.x);
        acc[4 * j + 1] += t[4 * j + 1] * (s.lo0 * b.y);
        acc[4 * j + 2] += t[4 * j + 2] * (s.lo1 * b.x);
        acc[4 * j + 3] += t[4 * j + 3] * (s.lo1 * b.y);
      }
    }
  }

  // Promotes a K-block whose wgmmas have completed and frees its stage.
  template <int SJ>
  __device__ __forceinline__ static void
  retire(u32 base, int lane, u32 peer, int c0, float (&acc)[kAcc],
         float (&t)[kAcc], int stage, const BlockScales &s) {
#pragma unroll
    for (int i = 0; i < kAcc; ++i)
      fenceOperand(t[i]);
    // fwd reads nothing of the stage below: release it before promoting.
    if (!WGRAD)
      release(base, stage, lane, peer);
    promote<SJ>(acc, t, s, base, stage, c0);
    if (WGRAD)
      release(base, stage, lane, peer);
  }

  // Turn-taking: with BM = 256 the two consumer warpgroups issue their
  // wgmma groups in turns (named barriers 3 and 4, one per warpgroup's
  // turn), as cuBLASLt's loop does, so that one warpgroup's wgmmas are not
  // queued behind the other's while it promotes; warpgroup 1 grants
  // warpgroup 0 the first turn and warpgroup 0 takes the spare grant at the
  // end. It pays for long K loops and costs on short ones, where the
  // hand-offs are not hidden, so it is on from 32 K-blocks per work unit (a
  // run-time choice: the kernel serves every K); 128-row tiles and wgrad run
  // free (docs/decisions.md).
  static constexpr bool kTurnTiles = BM == 256 && !WGRAD && !Cfg::kPipeline;
  __device__ __forceinline__ static bool takeTurns(const GemmParams &p) {
    return kTurnTiles && !alignedK(p) && p.kBlocks >= 32 * p.splits;
  }
  __device__ __forceinline__ static void turnBegin(bool turns, int wg) {
    if (turns)
      namedBarSync(3 + wg, 256);
  }
  __device__ __forceinline__ static void turnEnd(bool turns, int wg) {
    if (turns)
      asm volatile("bar.arrive %0, 256;" ::"r"(3 + (wg ^ 1)) : "memory");
  }

  // One K-block at a time: wgmma, wait, promote (per wave). The other
  // consumer warpgroup's wgmmas fill the tensor cores during this one's
  // promotion. The issue is kept compact: descriptors are a base computed
  // once per tile plus stage and wave offsets in their low word (with the
  // warp-uniform warpgroup index they stay in uniform registers), the B
  // scale pointers step once per K-block, and every scale load goes before
  // the wgmmas.
  template <int SJ>
  __device__ __forceinline__ static void
  mainloopSimple(const GemmParams &p, u32 base, int wg, int r0, int c0,
                 int lane, u32 peer, const WorkUnit &w, const TileScales &ts,
                 float (&acc)[kWaves][kAcc], Pipe &st) {
    const Ring r = ring(base);
    const bool turns = takeTurns(p);
    // Only the low word of a descriptor (address / 16) changes: 32-bit adds,
    // the constant high word joined at the wgmma.
    const u32 dA0 = static_cast<u32>(smemDescSw128(base + kOffA + wg * 64 * BK));
    const u32 dB0 = static_cast<u32>(smemDescSw128(base + kOffB));
    const u32 dHi = static_cast<u32>(smemDescSw128(0) >> 32);
    auto desc = [&](u32 lo) {
      u64 d;
      asm("mov.b64 %0, {%1, %2};" : "=l"(d) : "r"(lo), "r"(dHi));
      return d;
    };
    // The four k32 wgmmas of one wave (A at dAv, B at dB) as one group.
    auto issueWave = [&](float(&t)[kAcc], u32 dAv, u32 dB, bool accumulate) {
      wgmmaFence();
#pragma unroll
      for (int kk = 0; kk < BK / 32; ++kk)
        WgmmaFp8<BN>::mma(t, desc(dAv + 2 * kk), desc(dB + 2 * kk),
                          kk > 0 || accumulate);
      wgmmaCommit();
    };
    const u32 sa0 = base + kOffSA + 4 * (wg * 64 + r0);
    const long long sbStep = p.sbStrideK;
    const float *sbLo = ts.sb0 + static_cast<long long>(w.kb0) * sbStep;
    const float *sbHi = ts.sb1 + static_cast<long long>(w.kb0) * sbStep;
    for (int kb = w.kb0; kb < w.kb1; ++kb) {
      float lo = 0.f, hi = 0.f;
      if (!WGRAD) {
        lo = __ldg(sbLo);
        if (SJ < kSplitAll)
          hi = __ldg(sbHi);
        sbLo += sbStep;
        sbHi += sbStep;
      }
      r.waitFull(st);
      const int stage = st.index;
      const u32 dA = dA0 + static_cast<u32>(stage * (kABytes >> 4));
      const u32 dB = dB0 + static_cast<u32>(stage * (kBBytes >> 4));
      const u32 sa = sa0 + 4 * stage * BM;
#pragma unroll
      for (int v = 0; v < kWaves; ++v) {
        float t[kAcc];
        turnBegin(turns, wg);
        issueWave(t, dA + static_cast<u32>((v * kWaveRows * BK) >> 4), dB,
                  false);
        turnEnd(turns, wg);
        const float sa0v = ldsF32(sa + 4 * v * kWaveRows),
                    sa1v = ldsF32(sa + 4 * (v * kWaveRows + 8));
        const BlockScales sc = blockScales(sa0v, sa1v, lo, hi);
        wgmmaWait<0>();
        if (v == kWaves - 1) {
          // The stage's last reader: free it (see retire).
          retire<SJ>(base, lane, peer, c0, acc[v], t, stage, sc);
        } else {
#pragma unroll
          for (int i = 0; i < kAcc; ++i)
            fenceOperand(t[i]);
          promote<SJ>(acc[v], t, sc, base, stage, c0);
        }
      }
      st.advance();
    }
  }

  // The stage-aligned K loop (see produceAligned): rounds of STAGES
  // K-blocks, unrolled, so each stage's barrier, descriptors and A-scale
  // address are constants off per-tile bases; the warpgroups issue without
  // taking turns, each waiting only on the ring's barriers. `st.phase` is
  // the parity of the ring's current round (st.index stays 0).
  //
  // The tile's B scales of all K-blocks are first copied into the stash
  // (buffer n % 2 for the CTA's n-th unit; hi blocks after the lo ones) by
  // all consumer threads, which then meet on named barrier 5: the K loop
  // reads them from shared memory with constant offsets. A thread writes
  // buffer n % 2 only after meeting the others for unit n - 1, which they
  // reach only after their last read of unit n - 2, its previous user.
  static constexpr int kStashBar = 5;
  // Every consumer thread's share of the stash copy for the CTA's n-th
  // unit, then the meeting on kStashBar; returns the unit's buffer (its
  // shared address).
  template <int SJ>
  __device__ __forceinline__ static u32 fillStash(const GemmParams &p, u32 base,
                                                  const TileScales &ts, int n) {
    const u32 stash = base + Cfg::kOffSB + 4 * (n & 1) * Cfg::kSbStash;
    const long long step = p.sbStrideK;
    for (int i = threadIdx.x; i < Cfg::KBLOCKS; i += kConsumers * 128) {
      stsF32(stash + 4 * i, __ldg(ts.sb0 + i * step));
      if (SJ < kSplitAll)
        stsF32(stash + 4 * (Cfg::KBLOCKS + i), __ldg(ts.sb1 + i * step));
    }
    namedBarSync(kStashBar, kConsumers * 128);
    return stash;
  }

  // A warpgroup with no rows of the unit to compute (a grouped tile past
  // its group's last row): it keeps the ring's and the named barriers'
  // protocol (waits for every stage, frees it, takes its turns, fills its
  // share of the stash) but issues no wgmma and promotes nothing, so the
  // tensor cores serve the live warpgroup alone.
  template <int SJ>
  __device__ __forceinline__ static void
  drain(const GemmParams &p, u32 base, int wg, int lane, u32 peer,
        const WorkUnit &w, const TileScales &ts, Pipe &st, int n) {
    const Ring r = ring(base);
    if constexpr (Cfg::kAlignedK) {
      if (alignedK(p)) {
        fillStash<SJ>(p, base, ts, n);
        for (int round = 0; round < kRounds; ++round) {
#pragma unroll
          for (int i = 0; i < STAGES; ++i) {
            mbarWait(r.full(i), st.phase);
            release(base, i, lane, peer);
          }
          st.phase ^= 1;
        }
        return;
      }
    }
    const bool turns = !Cfg::kPipeline && takeTurns(p);
    for (int kb = w.kb0; kb < w.kb1; ++kb) {
      r.waitFull(st);
      if constexpr (!Cfg::kPipeline) {
#pragma unroll
        for (int v = 0; v < kWaves; ++v) {
          turnBegin(turns, wg);
          turnEnd(turns, wg);
        }
      }
      release(base, st.index, lane, peer);
      st.advance();
    }
  }
  template <int SJ>
  __device__ __forceinline__ static void
  mainloopAligned(const GemmParams &p, u32 base, int wg, int r0, int c0,
                  int lane, u32 peer, const WorkUnit &w, const TileScales &ts,
                  float (&acc)[kWaves][kAcc], Pipe &st, int n) {
    const Ring r = ring(base);
    // Stage releases: with pairs, lane 0 arrives on this CTA's barrier and
    // lane 1 on the peer's, both through cluster addresses in one predicated
    // arrival (retire's release takes two in a row on lane 0).
    const u32 self =
        CLUSTER > 1 ? mapaShared(r.empty(0), clusterCtaRank()) : 0;
    auto releaseStage = [&](const int i) {
      __syncwarp();
      if (CLUSTER > 1) {
        if (lane < CLUSTER)
          mbarArriveCluster((lane == 0 ? self : peer) + i * 8);
      } else if (lane == 0) {
        mbarArrive(r.empty(i));
      }
    };
    const u32 stash = fillStash<SJ>(p, base, ts, n);
    const u32 dA0 = static_cast<u32>(smemDescSw128(base + kOffA + wg * 64 * BK));
    const u32 dB0 = static_cast<u32>(smemDescSw128(base + kOffB));
    const u32 dHi = static_cast<u32>(smemDescSw128(0) >> 32);
    auto desc = [&](u32 lo) {
      u64 d;
      asm("mov.b64 %0, {%1, %2};" : "=l"(d) : "r"(lo), "r"(dHi));
      return d;
    };
    const u32 sa0 = base + kOffSA + 4 * (wg * 64 + r0);
    u32 sbRound = stash; // this round's first K-block
    // K-block at stage i (a constant once the round is unrolled).
    auto block = [&](const int i) {
      const float lo = ldsF32(sbRound + 4 * i);
      const float hi =
          SJ < kSplitAll ? ldsF32(sbRound + 4 * (Cfg::KBLOCKS + i)) : 0.f;
      mbarWait(r.full(i), st.phase);
      const u32 dA = dA0 + static_cast<u32>(i * (kABytes >> 4));
      const u32 dB = dB0 + static_cast<u32>(i * (kBBytes >> 4));
      const u32 sa = sa0 + 4 * i * BM;
#pragma unroll
      for (int v = 0; v < kWaves; ++v) {
        float t[kAcc];
        // Shared-memory reads of the stage go before the wgmmas: once the
        // last wave has released it, the producer may refill it.
        const float sa0v = ldsF32(sa + 4 * v * kWaveRows),
                    sa1v = ldsF32(sa + 4 * (v * kWaveRows + 8));
        const u32 dAv = dA + static_cast<u32>((v * kWaveRows * BK) >> 4);
        wgmmaFence();
#pragma unroll
        for (int kk = 0; kk < BK / 32; ++kk)
          WgmmaFp8<BN>::mma(t, desc(dAv + 2 * kk), desc(dB + 2 * kk), kk > 0);
        wgmmaCommit();
        const BlockScales sc = blockScales(sa0v, sa1v, lo, hi);
        wgmmaWait<0>();
#pragma unroll
        for (int j = 0; j < kAcc; ++j)
          fenceOperand(t[j]);
        // The stage's last reader (fwd: the promotion reads no shared
        // memory): free it first.
        if (v == kWaves - 1)
          releaseStage(i);
        promote<SJ>(acc[v], t, sc, base, i, c0);
      }
    };
    for (int round = 0; round < kRounds; ++round) {
#pragma unroll
      for (int i = 0; i < STAGES; ++i) {
        if (realStage(round, i)) {
          block(i);
        } else {
          // A stage the last round pads: nothing landed, release it.
          mbarWait(r.full(i), st.phase);
          releaseStage(i);
        }
      }
      sbRound += 4 * STAGES;
      st.phase ^= 1;
    }
  }

  // One step of the pipelined main loop: issue K-block `kb` into `tn`, wait
  // only for the previous one (in `tc`) and promote it while `kb` runs, so
  // that the tensor cores never wait for a promotion.
  template <int SJ>
  __device__ __forceinline__ static void
  pipeStep(const GemmParams &p, u32 base, int wg, int r0, int c0, int lane,
           u32 peer, const TileScales &ts, float (&acc)[kAcc],
           float (&tc)[kAcc], float (&tn)[kAcc], int kb, int &curStage,
           BlockScales &cur, Pipe &st) {
    ring(base).waitFull(st);
    issue(base, st.index, wg, 0, tn);
    const BlockScales next = loadScales(p, base, st.index, wg, r0, kb, ts);
    wgmmaWait<1>(); // all but the group just issued
    retire<SJ>(base, lane, peer, c0, acc, tc, curStage, cur);
    curStage = st.index;
    st.advance();
    cur = next;
  }

  // Two accumulators alternate (statically named: a run-time index would
  // move them to local memory), so the loop runs in pairs of K-blocks with
  // the odd one out peeled off at the end.
  template <int SJ>
  __device__ __forceinline__ static void
  mainloopPipelined(const GemmParams &p, u32 base, int wg, int r0, int c0,
                    int lane, u32 peer, const WorkUnit &w, const TileScales &ts,
                    float (&acc)[kAcc], Pipe &st) {
    float t0[kAcc], t1[kAcc];
    ring(base).waitFull(st);
    issue(base, st.index, wg, 0, t0);
    BlockScales cur = loadScales(p, base, st.index, wg, r0, w.kb0, ts);
    int curStage = st.index;
    st.advance();
    int kb = w.kb0 + 1;
    for (; kb + 1 < w.kb1; kb += 2) {
      pipeStep<SJ>(p, base, wg, r0, c0, lane, peer, ts, acc, t0, t1, kb,
                   curStage, cur, st);
      pipeStep<SJ>(p, base, wg, r0, c0, lane, peer, ts, acc, t1, t0, kb + 1,
                   curStage, cur, st);
    }
    if (kb < w.kb1) {
      pipeStep<SJ>(p, base, wg, r0, c0, lane, peer, ts, acc, t0, t1, kb,
                   curStage, cur, st);
      wgmmaWait<0>();
      retire<SJ>(base, lane, peer, c0, acc, t1, curStage, cur);
    } else {
      wgmmaWait<0>();
      retire<SJ>(base, lane, peer, c0, acc, t0, curStage, cur);
    }
  }

  // The K loop of one work unit into `acc`, instantiated for the tile's
  // split SJ (a multiple of kSplitStep in [kSplitStep, kSplitMax]; WGRAD has
  // none).
  template <int SJ = (WGRAD ? kSplitAll : kSplitStep)>
  __device__ __forceinline__ static void
  run(const GemmParams &p, u32 base, int wg, int r0, int c0, int lane, u32 peer,
      const WorkUnit &w, const TileScales &ts, float (&acc)[kWaves][kAcc],
      Pipe &st, int n = 0, bool live = true) {
    if constexpr (SJ < kSplitMax) {
      if (ts.splitJ != SJ) {
        run<SJ + kSplitStep>(p, base, wg, r0, c0, lane, peer, w, ts, acc, st, n,
                             live);
        return;
      }
    }
    if (!live) {
      drain<SJ>(p, base, wg, lane, peer, w, ts, st, n);
      return;
    }
    if constexpr (Cfg::kAlignedK) {
      if (alignedK(p)) {
        mainloopAligned<SJ>(p, base, wg, r0, c0, lane, peer, w, ts, acc, st, n);
        return;
      }
    }
    if (Cfg::kPipeline)
      mainloopPipelined<SJ>(p, base, wg, r0, c0, lane, peer, w, ts, acc[0], st);
    else
      mainloopSimple<SJ>(p, base, wg, r0, c0, lane, peer, w, ts, acc, st);
  }
};

} // namespace bs

#endif // BLOCKSCALE_KERNELS_GEMM_MAINLOOP_CUH
