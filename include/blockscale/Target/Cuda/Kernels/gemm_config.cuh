//===- gemm_config.cuh - compile-time shape of a GEMM kernel -----*- CUDA -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The template parameters of a GEMM kernel and everything derived from them
// that the tile scheduler, the mainloop, the split-K reductions and the
// epilogue share: thread roles, register budgets, accumulator fragments and
// the layout of the dynamic shared memory (SharedStorage), which must match
// the size the host reserves (gemmSmemBytes in params.h).
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_KERNELS_GEMM_CONFIG_CUH
#define BLOCKSCALE_KERNELS_GEMM_CONFIG_CUH

#include "blockscale/params.h"
#include "blockscale/pipeline.cuh"

namespace bs {

__host__ __device__ constexpr int constGcd(int a, int b) {
  return b == 0 ? a : constGcd(b, a % b);
}

template <int BM_, int BN_, int STAGES_, bool WGRAD_, bool OUT_F32_,
          bool ACCUMULATE_, int CLUSTER_ = 1, int KSPLIT_ = 1,
          int KBLOCKS_ = 0>
struct GemmConfig {
  static constexpr int BM = BM_, BN = BN_, BK = 128, STAGES = STAGES_;
  static constexpr bool WGRAD = WGRAD_, OUT_F32 = OUT_F32_;
  static constexpr bool ACCUMULATE = ACCUMULATE_;
  // CTA pairs computing horizontally adjacent tiles share A by multicast.
  static constexpr int CLUSTER = CLUSTER_;
  static_assert(CLUSTER == 1 || CLUSTER == 2, "pairs of CTAs at most");
  // Splits of one tile summed inside a cluster (1: none, or split-K through
  // the global workspace when GemmParams::splits > 1).
  static constexpr int KSPLIT = KSPLIT_;
  static_assert(KSPLIT >= 1 && KSPLIT <= 8, "a portable cluster is <= 8 CTAs");
  static_assert(KSPLIT == 1 || CLUSTER == 1,
                "a cluster either shares A or sums splits");
  static_assert(KSPLIT == 1 || !ACCUMULATE || OUT_F32,
                "C += AB with splits summed in a cluster is f32 only");
  // CTAs per cluster, whichever the reason.
  static constexpr int kClusterCtas = CLUSTER * KSPLIT;
  // K-blocks (ceil(K / 128)) the kernel is specialized for; 0: any K (the
  // count is read from GemmParams at run time).
  static constexpr int KBLOCKS = KBLOCKS_;
  static_assert(KBLOCKS >= 0, "KBLOCKS: 0 (run-time K) or ceil(K / 128)");
  static_assert(BM == 64 || BM == 128 || BM == 256,
                "one or two m64 consumer warpgroups, one or two waves");
  static_assert(BN % 16 == 0 && BN >= 16 && BN <= 192, "wgmma N");
  // A tile may straddle at most two 128-wide scale blocks of B (see
  // TileConfigAttr::verify): holds iff 128 - gcd(BN, 128) + BN <= 256.
  static_assert(BN <= 128 || BN == 144 || BN == 160 || BN == 192,
                "BN would straddle three 128x128 scale blocks");

  static constexpr int kConsumers = BM == 64 ? 1 : 2;
  // BM = 256: each consumer warpgroup computes two 64-row waves of the tile
  // (rows v * 128 + wg * 64), one after the other on the same B stage, so
  // that a CTA loads a K-block of B once per 256 rows instead of per 128:
  // a quarter less L2-to-SM traffic per FLOP. The second wave's
  // accumulator costs BN/2 registers, which fit only up to BN = 128.
  static constexpr int kWaveRows = 64 * kConsumers;
  static constexpr int kWaves = BM / kWaveRows;
  static_assert(kWaves == 1 || BN <= 128,
                "two waves hold 3 * BN / 2 accumulator registers per thread");
  static constexpr int kThreads = 128 * (kConsumers + 1);
  static constexpr int kAcc = BN / 2; // f32 accumulators per thread
  static constexpr int kOutBytes = OUT_F32 ? 4 : 2;

  // Two in-flight accumulators (K-block k promoted while the wgmmas of k + 1
  // run) cost BN/2 more registers per thread: 3 * BN/2 + ~30 must stay
  // under the consumers' setmaxnreg budget, which holds up to BN = 128. CTA
  // pairs and two-wave tiles keep the one-block-at-a-time loop.
  static constexpr bool kPipeline = gemmPipelinedTile(BM, BN, CLUSTER);

  // Stage-aligned K loop (GemmMainloop::mainloopAligned): with the K-block
  // count known at compile time, every work unit walks the ring from stage 0
  // in rounds of STAGES K-blocks (the last round padded with empty stages),
  // so that the unrolled round names each stage, its barriers and operand
  // addresses as constants, and the consumer warpgroups issue without
  // taking turns. Forward tiles of one accumulator per wave without
  // cluster splits (gemmStageAlignable); used when the launch has no
  // workspace splits either.
  static constexpr bool kAlignedK =
      KBLOCKS > 0 && gemmStageAlignable(BM, BN, CLUSTER, WGRAD, KSPLIT);

  // Register budgets after setmaxnreg: the producer needs few; the consumers
  // hold two BN/2-float accumulators. Totals stay within 64K registers.
  static constexpr int kProducerRegs = 40;
  static constexpr int kConsumerRegs = kConsumers == 2 ? 232 : 240;

  // Epilogue staging: chunks of `kSwz` bytes per row so that TMA can swizzle
  // them (the widest of 128/64/32 that divides a tile row).
  static constexpr int kRowBytes = BN * kOutBytes;
  static constexpr int kSwz =
      kRowBytes % 128 == 0 ? 128 : (kRowBytes % 64 == 0 ? 64 : 32);
  static constexpr int kChunkCols = kSwz / kOutBytes;
  static constexpr int kChunks = BN / kChunkCols;
  static constexpr int kChunkBytes = 64 * kSwz;

  static constexpr int kABytes = BM * BK, kBBytes = BN * BK;
  // 128x1 scales of B (wgrad), one K-block row per stage, 128-byte aligned.
  static constexpr int kSBStage = ((BN * 4 + 127) / 128) * 128;
  // Bytes the producer's TMA loads complete on a stage's full barrier.
  static constexpr u32 kTxBytes =
      kABytes + kBBytes + BM * 4 + (WGRAD ? BN * 4 : 0);

  // Stage-aligned kernels: the tile's B scales of all K-blocks, two tiles'
  // worth (gemmSbStashBytes); one buffer's floats.
  static constexpr int kSbStash = kAlignedK ? gemmSbStashFloats(BN, KBLOCKS) : 0;
  // Bytes of the B-scale region: per-stage rows (wgrad) or the stash.
  static constexpr int kSBBytes =
      WGRAD ? STAGES * kSBStage : gemmSbStashBytes(BN, kAlignedK ? KBLOCKS : 0);

  // The epilogue's staging of the output tile, which is also the receive
  // buffer of the cluster-summed splits (KSPLIT).
  static constexpr int kCBytes =
      constMax(BM * BN * kOutBytes, gemmKsplitRecvBytes(BM, BN, KSPLIT));

  // Barriers and flags after the scales: full[STAGES] and empty[STAGES]
  // (MbarRing), then two words that the workspace split-K uses as one flag
  // per consumer warpgroup and the cluster-summed splits (which do not use
  // the workspace) as their ready / freed mbarriers.
  template <int SBBytes, int = 0> struct Tail {
    float sb[SBBytes / 4];
    u64 ring[2 * STAGES];
    u64 flag[2];
  };
  template <int Unused> struct Tail<0, Unused> {
    u64 ring[2 * STAGES];
    u64 flag[2];
  };

  // The dynamic shared memory past its 1024-byte alignment, in the order
  // gemmSmemBytes counts it. Every TMA box destination is 1024-aligned
  // (128-byte swizzle atoms repeat every 1024 bytes) or 128-aligned.
  struct SharedStorage {
    unsigned char a[STAGES][kABytes];
    unsigned char b[STAGES][kBBytes];
    unsigned char c[kCBytes];
    float sa[STAGES][BM];
    Tail<kSBBytes> tail; // scales of B (wgrad / stash), barriers
  };
  static_assert(sizeof(SharedStorage) + 1024 ==
                    gemmSmemBytes(BM, BN, STAGES, kOutBytes, WGRAD, KSPLIT,
                                  kAlignedK ? KBLOCKS : 0),
                "host and device disagree on the shared-memory layout");
  static_assert(sizeof(SharedStorage) + 1024 <= kMaxDynamicSmemBytes,
                "exceeds 227 KB of shared memory");

  // Byte offsets of the regions from the aligned base: each region follows
  // the previous one without padding (the size check below fails if the
  // compiler inserted any).
  using TailT = Tail<kSBBytes>;
  static constexpr int kOffA = 0;
  static constexpr int kOffB = kOffA + sizeof(SharedStorage::a);
  static constexpr int kOffC = kOffB + sizeof(SharedStorage::b);
  static constexpr int kOffSA = kOffC + sizeof(SharedStorage::c);
  static constexpr int kOffTail = kOffSA + sizeof(SharedStorage::sa);
  static constexpr int kOffSB = kOffTail; // (WGRAD, or the stash)
  static constexpr int kOffBar =
      kOffTail + sizeof(TailT) - sizeof(TailT::ring) - sizeof(TailT::flag);
  static constexpr int kOffFlag = kOffBar + sizeof(TailT::ring);
  static_assert(sizeof(SharedStorage) == kOffTail + sizeof(TailT),
                "padding between shared-memory regions");
  static_assert(kOffA % 1024 == 0 && kOffB % 1024 == 0 &&
                    kABytes % 1024 == 0 && kBBytes % 1024 == 0,
                "128-byte swizzled operand tiles must be 1024-aligned");
  static_assert(kOffC % 128 == 0 && kOffSA % 128 == 0 && kOffSB % 128 == 0,
                "TMA boxes need 128-byte aligned destinations");

  using Pipe = PipelineState<STAGES>;
  using Ring = MbarRing<STAGES>;
};

} // namespace bs

#endif // BLOCKSCALE_KERNELS_GEMM_CONFIG_CUH
