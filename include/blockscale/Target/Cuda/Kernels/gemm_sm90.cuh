//===- gemm_sm90.cuh - blockwise-scaled FP8 GEMM for Hopper ------*- CUDA -*-===//
//
// C(M, N) = sum_kb (A[:, kb] @ B[kb, :]) * sA[m, kb] * sB[kb, .]
//
// A is (M, K) row-major FP8 with one f32 scale per row per 128-deep K-block.
// B is given N-by-K row-major (the (K, N) operand K-contiguous) with either one
// scale per 128x128 block (forward / grad-input) or one per column per K-block
// (grad-weight). Both operands must be K-major because FP8 wgmma reads only
// K-major shared-memory operands.
//
// Structure (one persistent CTA per SM, warp-specialized):
//  * the last warpgroup is the producer: one thread streams 128-deep K-slices
//    of A, B and their scales with TMA into a STAGES-deep ring, each stage
//    guarded by a "full" mbarrier (TMA transaction bytes) and an "empty"
//    mbarrier (one arrival per consumer warp);
//  * one (BM = 64) or two consumer warpgroups each own 64 rows of the tile
//    (BM = 256: two 64-row waves each, computed one after the other from
//    the same B stage, so that B crosses from L2 once per 256 rows; measured
//    +2-10 % on large forward GEMMs, 2026-12-02 run 40). Per K-block they
//    issue four m64nBNk32 wgmmas into a fresh f32 accumulator and then fold it
//    into the running accumulator with the block's scales ("promotion"): the
//    scale changes every 128 K, so it cannot live inside the tensor-core
//    accumulation. For BN <= 128 two such accumulators alternate, so a
//    warpgroup promotes block k while its wgmmas of block k+1 run (measured
//    +12-16 % over promoting in between); wider tiles lack the registers
//    for that and rely on the other warpgroup's wgmmas during a promotion.
//    Which 128-column scale block of B each column uses is a template
//    argument of the main loop (one instantiation per possible split), so
//    the promotion is FFMAs only (+10 % at BN = 160 over run-time selects);
//  * the epilogue converts, writes the fragment to 128/64/32-byte swizzled
//    shared memory (bank-conflict free) and issues TMA stores (or TMA
//    reduce-adds for C += AB) that run while the next tile's mainloop starts;
//  * tiles are visited in groups of `raster` N-tiles so that the tiles in
//    flight at any moment share A and B panels in L2;
//  * with CLUSTER = 2, the two CTAs of a cluster compute horizontally adjacent
//    tiles (same rows of A): each loads half of the A tile and multicasts it
//    into both CTAs' shared memory, so A is read from L2 once per pair. A
//    stage is then free only when the consumers of both CTAs released it, so
//    consumers also arrive on the peer's "empty" barrier;
//  * optional split-K: each (tile, split) unit writes its f32 partial to a
//    workspace; the last of the splits to arrive (a counter per tile and
//    warpgroup) adds the others and runs the epilogue, then resets the counter.
//    With KSPLIT > 1 the KSPLIT splits of a tile are instead the CTAs of one
//    cluster: each finishes 1/KSPLIT of the tile's columns, receiving the
//    peers' partials of them into its shared memory (st.async), and stores
//    them, with no global round trip (see clusterReduce).
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_KERNELS_GEMM_SM90_CUH
#define BLOCKSCALE_KERNELS_GEMM_SM90_CUH

#include "blockscale/params.h"
#include "blockscale/ptx_sm90.cuh"
#include "blockscale/wgmma_fp8.cuh"

namespace bs {

#ifdef BS_EXP_TIMELINE
// Experiment: phase stamps per CTA (slots in params.h), read by the host after
// a launch (`blockscale-gen --run --timeline`). No calls and no printf here,
// so that ptxas keeps the wgmma pipeline as it is. For finding where a short
// kernel's fixed cost goes (bench/RESULTS.md, eleventh session).
} // namespace bs
// Unmangled, so that the host finds it with cuModuleGetGlobal; the host
// zeroes it before the launch it reads.
extern "C" __device__ unsigned long long
    bsTimelineStamps[bs::timeline::kMaxCtas * bs::timeline::kSlots];
namespace bs {
namespace timeline {
__device__ __forceinline__ void mark(int slot) {
  unsigned long long t;
  if (slot >= GEntry)
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  else
    t = clock64();
  if (blockIdx.x < kMaxCtas)
    bsTimelineStamps[blockIdx.x * kSlots + slot] = t;
}
} // namespace timeline
// Stamps `slot` when `cond` holds (nothing at all without the experiment).
#define BS_TIMELINE(cond, slot)                                                \
  do {                                                                         \
    if (cond)                                                                  \
      ::bs::timeline::mark(::bs::timeline::slot);                              \
  } while (0)
#else
#define BS_TIMELINE(cond, slot)                                                \
  do {                                                                         \
  } while (0)
#endif

__host__ __device__ constexpr int constGcd(int a, int b) {
  return b == 0 ? a : constGcd(b, a % b);
}

template <int BM_, int BN_, int STAGES_, bool WGRAD_, bool OUT_F32_,
          bool ACCUMULATE_, int CLUSTER_ = 1, int KSPLIT_ = 1>
struct GemmSm90 {
  static constexpr int BM = BM_, BN = BN_, BK = 128, STAGES = STAGES_;
  static constexpr bool WGRAD = WGRAD_, OUT_F32 = OUT_F32_;
  static constexpr bool ACCUMULATE = ACCUMULATE_;
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

  // Epilogue staging: chunks of `kSwz` bytes per row so that TMA can swizzle
  // them (the widest of 128/64/32 that divides a tile row).
  static constexpr int kRowBytes = BN * kOutBytes;
  static constexpr int kSwz =
      kRowBytes % 128 == 0 ? 128 : (kRowBytes % 64 == 0 ? 64 : 32);
  static constexpr int kChunkCols = kSwz / kOutBytes;
  static constexpr int kChunks = BN / kChunkCols;
  static constexpr int kChunkBytes = 64 * kSwz;

  // Shared memory, in the order gemmSmemBytes() counts it. Every TMA box
  // destination is 1024-aligned (128-byte swizzle atoms) or 128-aligned.
  static constexpr int kABytes = BM * BK, kBBytes = BN * BK;
  static constexpr int kSBStage = ((BN * 4 + 127) / 128) * 128;
  static constexpr int kOffA = 0;
  static constexpr int kOffB = kOffA + STAGES * kABytes;
  static constexpr int kOffC = kOffB + STAGES * kBBytes;
  // (KSPLIT: the epilogue's staging is the receive buffer of clusterReduce,
  // at least as large as gemmKsplitRecvBytes.)
  static constexpr int kOffSA =
      kOffC + constMax(BM * BN * kOutBytes, gemmKsplitRecvBytes(BM, BN, KSPLIT));
  static constexpr int kOffSB = kOffSA + STAGES * BM * 4;
  static constexpr int kOffBar = kOffSB + (WGRAD ? STAGES * kSBStage : 0);
  static constexpr int kOffFlag = kOffBar + STAGES * 16;
  static constexpr int kSmemBytes = 1024 + kOffFlag + 16;
  static_assert(kSmemBytes ==
                    gemmSmemBytes(BM, BN, STAGES, kOutBytes, WGRAD, KSPLIT),
                "host and device disagree on the shared-memory layout");
  static_assert(kSmemBytes <= 232448, "exceeds 227 KB of shared memory");
  // (KSPLIT: the two cluster barriers live in the split-K flag words, which
  // only the workspace hand-off uses.)

  // Two in-flight accumulators (current K-block promoted while the next one
  // runs) cost BN/2 more registers per thread: 3 * BN/2 + ~30 must stay under
  // the consumers' setmaxnreg budget, which holds up to BN = 128. Pairs
  // compile with it too (no spills since the peer's barrier address is
  // mapped once per kernel); the run 34 timing that had them no faster
  // compared one binary with itself (bench/RESULTS.md, tenth session), so
  // whether bm = 128 pairs gain from it is open. They keep the simple loop
  // (the planner offers pairs only at bm = 256).
#ifdef BS_GEMM_NO_PIPELINE
  static constexpr bool kPipeline = false;
#else
  static constexpr bool kPipeline = BN <= 128 && CLUSTER == 1 && kWaves == 1;
#endif

  static constexpr u32 kTxBytes =
      kABytes + kBBytes + BM * 4 + (WGRAD ? BN * 4 : 0);

  // Register budgets after setmaxnreg: the producer needs few; the consumers
  // hold two BN/2-float accumulators. Totals stay within 64K registers.
  static constexpr int kProducerRegs = 40;
  static constexpr int kConsumerRegs = kConsumers == 2 ? 232 : 240;

  struct Unit {
    int mb, nb, split, tile, kb0, kb1;
  };

  // Work units are (tile group, split) pairs; a tile group is CLUSTER
  // horizontally adjacent tiles, one per CTA of a cluster.
  // (With KSPLIT a unit is a tile, and the CTA of rank r takes split r.)
  __device__ __forceinline__ static int numUnits(const GemmParams &p) {
    return p.tilesM * ((p.tilesN + CLUSTER - 1) / CLUSTER) *
           (KSPLIT > 1 ? 1 : p.splits);
  }

  __device__ __forceinline__ static Unit decode(const GemmParams &p, int u,
                                                int rank) {
    if (KSPLIT > 1) { // p.splits == KSPLIT (launchGemm checks)
      u = u * KSPLIT + rank;
      rank = 0;
    }
    Unit r;
#ifdef BS_EXP_PLAIN_DIV
    // Experiment: the decode with `/` (shipped until 2026-12-03).
    int group = u / p.splits;
    r.split = u - group * p.splits;
    int groupsN = (p.tilesN + CLUSTER - 1) / CLUSTER;
    int rasterTiles = p.raster * p.tilesM;
    int g = group / rasterTiles;
    int firstN = g * p.raster;
    int width = groupsN - firstN < p.raster ? groupsN - firstN : p.raster;
    int local = group - g * rasterTiles;
    r.mb = local / width;
    r.nb = (firstN + (local - r.mb * width)) * CLUSTER + rank;
    r.tile = group * CLUSTER + rank;
    r.kb0 = static_cast<int>(static_cast<long long>(r.split) * p.kBlocks /
                             p.splits);
    r.kb1 = static_cast<int>(static_cast<long long>(r.split + 1) * p.kBlocks /
                             p.splits);
#else
    // (Every division by a launch constant: see FastDiv.)
    const int group = fastDiv(u, p.divSplits);
    r.split = u - group * p.splits;
    // Raster groups of `raster` N-groups: consecutive units walk M inside a
    // raster group, so concurrently running CTAs cover a compact block of C.
    const int groupsN = (p.tilesN + CLUSTER - 1) / CLUSTER;
    const int g = fastDiv(group, p.divRasterTiles);
    const int firstN = g * p.raster;
    const bool last = groupsN - firstN < p.raster;
    const int width = last ? groupsN - firstN : p.raster;
    const int local = group - g * p.raster * p.tilesM;
    r.mb = fastDiv(local, last ? p.divLastWidth : p.divRaster);
    // With an odd tile count the last pair's second tile lies past N: it is
    // computed on zero-filled B and its store is clipped away entirely.
    r.nb = (firstN + (local - r.mb * width)) * CLUSTER + rank;
    r.tile = group * CLUSTER + rank;
    // split * kBlocks < 2^31: launchGemm checks.
    r.kb0 = fastDiv(r.split * p.kBlocks, p.divSplits);
    r.kb1 = fastDiv((r.split + 1) * p.kBlocks, p.divSplits);
#endif
    return r;
  }

  __device__ static void run(const GemmParams &p, const TmaDesc &tA,
                             const TmaDesc &tB, const TmaDesc &tSA,
                             const TmaDesc &tSB, const TmaDesc &tC) {
#ifdef BS_EXP_EMPTY
    // Experiment: the launch alone (what a graph replay of it costs).
    return;
#endif
    extern __shared__ __align__(1024) unsigned char smemRaw[];
    const u32 rawAddr = smemAddr(smemRaw);
    const u32 base = (rawAddr + 1023u) & ~1023u;
    unsigned char *smem = smemRaw + (base - rawAddr);

    // Warp-uniform as far as ptxas can tell (a shuffle from lane 0), so that
    // the role branch and the descriptors that depend on the warpgroup index
    // may live on the uniform datapath; measured with the main loop below
    // (2026-12-03 run 57).
    const int wg = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0);
    const int tid = threadIdx.x % 128;
    const int units = numUnits(p);
    const int rank =
        kClusterCtas > 1 ? static_cast<int>(clusterCtaRank()) : 0;
    const int first = blockIdx.x / kClusterCtas,
              stride = gridDim.x / kClusterCtas;

    // The next kernel of the stream may start its own set-up on the SMs
    // this grid leaves; its gridDepWait orders it after this grid's stores.
    gridDepLaunchDependents();
    if (threadIdx.x == 0) {
      BS_TIMELINE(true, Entry);
      BS_TIMELINE(true, GEntry);
      for (int s = 0; s < STAGES; ++s) {
        mbarInit(fullBar(base, s), 1);
        // Every consumer warp of every CTA that reads this stage's A.
        mbarInit(emptyBar(base, s), kConsumers * 4 * CLUSTER);
      }
      if (KSPLIT > 1) {
        // ready: one arrival (with the bytes it expects) per consumer warp
        // of this CTA, plus the peers' st.async bytes; freed: one arrival
        // per consumer warp of every peer.
        mbarInit(readyBar(base), kConsumers * 4);
        mbarInit(freedBar(base), kConsumers * 4 * (KSPLIT - 1));
      }
      fenceBarrierInit();
      tmaPrefetchDesc(tA);
      tmaPrefetchDesc(tB);
      tmaPrefetchDesc(tSA);
      if (WGRAD)
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
      setMaxNRegDec<kProducerRegs>();
      BS_TIMELINE(tid == 0, ProdReg);
      if (tid == 0)
        produce(p, base, units, first, stride, rank, tA, tB, tSA, tSB);
      if (KSPLIT > 1) {
        __syncwarp();
        clusterWait();
      }
    } else {
      setMaxNRegInc<kConsumerRegs>();
      consume(p, base, smem, wg, tid, units, first, stride, rank, tC);
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
      // before their first push, the producer warps after their loads.
      if (KSPLIT > 1) {
        // What the peers must see by then is the barriers' initialization,
        // which fenceBarrierInit released at cluster scope, so the arrival
        // is relaxed (a release arrival would also wait for this thread's
        // earlier memory operations). It stamped the barriers ready 630
        // cycles after entry against 1123 (128x2112x7168, 2026-12-03 run 82)
        // and ran +1 to +2 % on the three M = 128 shapes that sum splits in
        // clusters (run 88: 414 / 616 / 752 against 409 / 609 / 738
        // TFLOP/s, medians of 3 rounds).
        clusterArriveRelaxed();
      }
    }
  }

  __device__ __forceinline__ static u32 fullBar(u32 base, int s) {
    return base + kOffBar + s * 8;
  }
  __device__ __forceinline__ static u32 emptyBar(u32 base, int s) {
    return base + kOffBar + STAGES * 8 + s * 8;
  }
  // KSPLIT: the peers' partials have arrived in this CTA's receive buffer
  // (ready), and the peers have read what this CTA pushed into theirs
  // (freed); one phase per unit.
  __device__ __forceinline__ static u32 readyBar(u32 base) {
    return base + kOffFlag;
  }
  __device__ __forceinline__ static u32 freedBar(u32 base) {
    return base + kOffFlag + 8;
  }

  __device__ static void produce(const GemmParams &p, u32 base, int units,
                                 int first, int stride, int rank,
                                 const TmaDesc &tA, const TmaDesc &tB,
                                 const TmaDesc &tSA, const TmaDesc &tSB) {
    int stage = 0;
    u32 phase = 0;
    for (int u = first; u < units; u += stride) {
      Unit w = decode(p, u, rank);
      BS_TIMELINE(u == first, ProdStart);
#ifdef BS_EXP_NO_MAIN
      continue;
#endif
      for (int kb = w.kb0; kb < w.kb1; ++kb) {
        // The first pass over the ring waits on parity 1, which a fresh
        // barrier reports as complete.
        mbarWait(emptyBar(base, stage), phase ^ 1);
        const u32 full = fullBar(base, stage);
        BS_TIMELINE(u == first && kb == w.kb0, FirstIssue);
#ifdef BS_EXP_NO_TMA
        // Experiment: no operand traffic at all (results are garbage).
        mbarArrive(full);
        if (++stage == STAGES) {
          stage = 0;
          phase ^= 1;
        }
        continue;
#endif
        loadStage(w, kb, base, stage, full, rank, tA, tB, tSA, tSB);
        BS_TIMELINE(u == first && kb == w.kb0, FirstLoad);
        if (++stage == STAGES) {
          stage = 0;
          phase ^= 1;
        }
      }
    }
  }

  // K-block kb of unit w into a free stage, completing on its barrier
  // `full`: A (or, in pairs, this CTA's half, multicast), B and their scales.
  __device__ __forceinline__ static void
  loadStage(const Unit &w, int kb, u32 base, int stage, u32 full, int rank,
            const TmaDesc &tA, const TmaDesc &tB, const TmaDesc &tSA,
            const TmaDesc &tSB) {
#ifdef BS_EXP_NO_A_LOAD
    // Experiment: A's tile is not loaded (stale shared memory; results
    // are garbage): what A's share of the operand traffic costs.
    mbarArriveExpectTx(full, kTxBytes - kABytes);
#else
    mbarArriveExpectTx(full, kTxBytes);
    if (CLUSTER > 1)
      // tA's box is BM / CLUSTER rows: this CTA's slice of the A tile.
      tmaLoad2dMulticast(base + kOffA + stage * kABytes +
                             rank * (BM / CLUSTER) * BK,
                         tA, full, kb * BK, w.mb * BM + rank * (BM / CLUSTER),
                         static_cast<unsigned short>((1 << CLUSTER) - 1));
    else
      tmaLoad2d(base + kOffA + stage * kABytes, tA, full, kb * BK, w.mb * BM);
#endif
    tmaLoad2d(base + kOffB + stage * kBBytes, tB, full, kb * BK, w.nb * BN);
    tmaLoad2d(base + kOffSA + stage * BM * 4, tSA, full, w.mb * BM, kb);
    if (WGRAD)
      tmaLoad2d(base + kOffSB + stage * kSBStage, tSB, full, w.nb * BN, kb);
  }

  // Frees a stage: one arrival per consumer warp on this CTA's barrier and,
  // with multicast, on the peer's (whose producer also writes this stage);
  // `peer` is the peer CTA's first "empty" barrier, mapped once per kernel.
  __device__ __forceinline__ static void release(u32 base, int stage,
                                                 int lane, u32 peer) {
    __syncwarp();
    if (lane == 0) {
      mbarArrive(emptyBar(base, stage));
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
  struct TileScales {
    const float *sb0, *sb1;
    int splitJ; // first 8-column group in block b1 (BN / 8: none)
  };

  // Possible values of a tile's split (see promote): the tile starts at a
  // multiple of BN, so 128 - n0 % 128 is a multiple of gcd(BN, 128).
  static constexpr int kSplitStep = constGcd(BN, 128) / 8;
  static constexpr int kSplitAll = BN / 8; // the whole tile in one block

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
  loadScales(const GemmParams &p, const float *sSA, int stage, int wg, int r0,
             int kb, const TileScales &ts) {
    const float *sa = sSA + stage * BM + wg * 64;
    const float sa0 = sa[r0], sa1 = sa[r0 + 8];
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
  promote(float (&acc)[kAcc], float (&t)[kAcc], const BlockScales &s,
          const unsigned char *smem, int stage, int c0) {
    if (!WGRAD) {
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
      const float *sbv =
          reinterpret_cast<const float *>(smem + kOffSB + stage * kSBStage);
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
        const float2 b = *reinterpret_cast<const float2 *>(sbv + 8 * j + c0);
        acc[4 * j + 0] += t[4 * j + 0] * (s.lo0 * b.x);
        acc[4 * j + 1] += t[4 * j + 1] * (s.lo0 * b.y);
        acc[4 * j + 2] += t[4 * j + 2] * (s.lo1 * b.x);
        acc[4 * j + 3] += t[4 * j + 3] * (s.lo1 * b.y);
      }
    }
  }

  __device__ __forceinline__ static void advance(int &stage, u32 &phase) {
    if (++stage == STAGES) {
      stage = 0;
      phase ^= 1;
    }
  }

  // Promotes a K-block whose wgmmas have completed and frees its stage.
  template <int SJ>
  __device__ __forceinline__ static void
  retire(u32 base, const unsigned char *smem, int lane, u32 peer, int c0,
         float (&acc)[kAcc], float (&t)[kAcc], int stage,
         const BlockScales &s) {
#pragma unroll
    for (int i = 0; i < kAcc; ++i)
      fenceOperand(t[i]);
    // fwd reads nothing of the stage below: release it before promoting.
    if (!WGRAD)
      release(base, stage, lane, peer);
    promote<SJ>(acc, t, s, smem, stage, c0);
    if (WGRAD)
      release(base, stage, lane, peer);
  }

  // Turn-taking: with BM = 256 the two consumer warpgroups issue their
  // wgmma groups in turns (named barriers 3 and 4, one per warpgroup's
  // turn), as cuBLASLt's loop does; warpgroup 1 grants warpgroup 0 the first
  // turn and warpgroup 0 takes the spare grant at the end. Measured on
  // 256-row tiles against the free-running loop (2026-12-03 run 58):
  // +5-9 % for K >= 4096, neutral at K = 2048, -1.5 % at K = 1536 and -4 %
  // at K = 512, so it is on from 32 K-blocks per work unit (a run-time
  // choice: the kernel serves every K). With BM = 128 and BN = 192 it lost
  // 1-4 % (wgrad and 4096x2112x7168), and wgrad at BM = 256 lost 0.5-3 %
  // (run 61), so those run free.
  static constexpr bool kTurnTiles = BM == 256 && !WGRAD && !kPipeline;
  __device__ __forceinline__ static bool takeTurns(const GemmParams &p) {
    return kTurnTiles && p.kBlocks >= 32 * p.splits;
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
  // the wgmmas. Against descriptors rebuilt from 64-bit addresses around each
  // wgmma: 210 instead of 269 SASS instructions per K-block (run 55) and
  // +3 to +14 % on every issue-3 target (run 57: geomean 1.130 against
  // 1.052 vs cuBLASLt).
  template <int SJ>
  __device__ __forceinline__ static void
  mainloopSimple(const GemmParams &p, u32 base, const unsigned char *smem,
                 const float *sSA, int wg, int r0, int c0, int lane, u32 peer,
                 const Unit &w, const TileScales &ts,
                 float (&acc)[kWaves][kAcc], int &stage, u32 &phase) {
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
        // Advancing the start address by 32 bytes selects the next k32
        // slice inside the swizzled 128-byte rows (the hardware applies the
        // XOR pattern to the final address).
        WgmmaFp8<BN>::mma(t, desc(dAv + 2 * kk), desc(dB + 2 * kk),
                          kk > 0 || accumulate);
      wgmmaCommit();
    };
    const float *sa0 = sSA + wg * 64 + r0;
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
      mbarWait(fullBar(base, stage), phase);
      const u32 dA = dA0 + static_cast<u32>(stage * (kABytes >> 4));
      const u32 dB = dB0 + static_cast<u32>(stage * (kBBytes >> 4));
#ifdef BS_EXP_NO_PROMOTE
      // Experiment: accumulate every K-block in the tensor core, unscaled
      // (wrong results; measures what the promotion costs).
#pragma unroll
      for (int v = 0; v < kWaves; ++v)
        issueWave(acc[v], dA + static_cast<u32>((v * kWaveRows * BK) >> 4), dB,
                  kb > w.kb0);
      wgmmaWait<0>();
#pragma unroll
      for (int v = 0; v < kWaves; ++v)
#pragma unroll
        for (int i = 0; i < kAcc; ++i)
          fenceOperand(acc[v][i]);
      release(base, stage, lane, peer);
      advance(stage, phase);
      continue;
#endif
      const float *sa = sa0 + stage * BM;
#pragma unroll
      for (int v = 0; v < kWaves; ++v) {
        float t[kAcc];
        turnBegin(turns, wg);
        issueWave(t, dA + static_cast<u32>((v * kWaveRows * BK) >> 4), dB,
                  false);
        turnEnd(turns, wg);
        const float sa0v = sa[v * kWaveRows], sa1v = sa[v * kWaveRows + 8];
        const BlockScales sc = blockScales(sa0v, sa1v, lo, hi);
        wgmmaWait<0>();
        if (v == kWaves - 1) {
          // The stage's last reader: free it (see retire).
          retire<SJ>(base, smem, lane, peer, c0, acc[v], t, stage, sc);
        } else {
#pragma unroll
          for (int i = 0; i < kAcc; ++i)
            fenceOperand(t[i]);
          promote<SJ>(acc[v], t, sc, smem, stage, c0);
        }
      }
      advance(stage, phase);
    }
  }

  // One step of the pipelined main loop: issue K-block `kb` into `tn`, wait
  // only for the previous one (in `tc`) and promote it while `kb` runs, so
  // that the tensor cores never wait for a promotion.
  template <int SJ>
  __device__ __forceinline__ static void
  pipeStep(const GemmParams &p, u32 base, const unsigned char *smem,
           const float *sSA, int wg, int r0, int c0, int lane, u32 peer,
           const TileScales &ts, float (&acc)[kAcc], float (&tc)[kAcc],
           float (&tn)[kAcc], int kb, int &curStage, BlockScales &cur,
           int &stage, u32 &phase) {
    mbarWait(fullBar(base, stage), phase);
    issue(base, stage, wg, 0, tn);
    const BlockScales next = loadScales(p, sSA, stage, wg, r0, kb, ts);
    wgmmaWait<1>(); // all but the group just issued
    retire<SJ>(base, smem, lane, peer, c0, acc, tc, curStage, cur);
    curStage = stage;
    advance(stage, phase);
    cur = next;
  }


  // Two accumulators alternate (statically named: a run-time index would
  // move them to local memory), so the loop runs in pairs of K-blocks with
  // the odd one out peeled off at the end.
  template <int SJ>
  __device__ __forceinline__ static void
  mainloopPipelined(const GemmParams &p, u32 base, const unsigned char *smem,
                    const float *sSA, int wg, int r0, int c0, int lane,
                    u32 peer, const Unit &w, const TileScales &ts,
                    float (&acc)[kAcc], int &stage, u32 &phase) {
    float t0[kAcc], t1[kAcc];
    mbarWait(fullBar(base, stage), phase);
    issue(base, stage, wg, 0, t0);
    BlockScales cur = loadScales(p, sSA, stage, wg, r0, w.kb0, ts);
    int curStage = stage;
    advance(stage, phase);
    int kb = w.kb0 + 1;
    for (; kb + 1 < w.kb1; kb += 2) {
      pipeStep<SJ>(p, base, smem, sSA, wg, r0, c0, lane, peer, ts, acc, t0, t1,
                   kb, curStage, cur, stage, phase);
      pipeStep<SJ>(p, base, smem, sSA, wg, r0, c0, lane, peer, ts, acc, t1, t0,
                   kb + 1, curStage, cur, stage, phase);
    }
    if (kb < w.kb1) {
      pipeStep<SJ>(p, base, smem, sSA, wg, r0, c0, lane, peer, ts, acc, t0, t1,
                   kb, curStage, cur, stage, phase);
      wgmmaWait<0>();
      retire<SJ>(base, smem, lane, peer, c0, acc, t1, curStage, cur);
    } else {
      wgmmaWait<0>();
      retire<SJ>(base, smem, lane, peer, c0, acc, t0, curStage, cur);
    }
  }

  // Runs the main loop instantiated for the tile's split SJ (a multiple of
  // kSplitStep in [kSplitStep, kSplitAll]; WGRAD has none).
  template <int SJ = (WGRAD ? kSplitAll : kSplitStep)>
  __device__ __forceinline__ static void
  mainloop(const GemmParams &p, u32 base, const unsigned char *smem,
           const float *sSA, int wg, int r0, int c0, int lane, u32 peer,
           const Unit &w, const TileScales &ts, float (&acc)[kWaves][kAcc],
           int &stage, u32 &phase) {
    if constexpr (SJ < kSplitAll) {
      if (ts.splitJ != SJ) {
        mainloop<SJ + kSplitStep>(p, base, smem, sSA, wg, r0, c0, lane, peer,
                                  w, ts, acc, stage, phase);
        return;
      }
    }
#ifdef BS_EXP_NO_PROMOTE
    if (false)
#else
    if (kPipeline)
#endif
      mainloopPipelined<SJ>(p, base, smem, sSA, wg, r0, c0, lane, peer, w, ts,
                            acc[0], stage, phase);
    else
      mainloopSimple<SJ>(p, base, smem, sSA, wg, r0, c0, lane, peer, w, ts,
                         acc, stage, phase);
  }

  __device__ static void consume(const GemmParams &p, u32 base,
                                 unsigned char *smem, int wg, int tid,
                                 int units, int first, int stride, int rank,
                                 const TmaDesc &tC) {
    const int warp = tid / 32, lane = tid % 32;
    // Accumulator fragment of m64nN (PTX ISA "wgmma D matrix layout"):
    // register 4j + 2h + e holds row warp*16 + lane/4 + 8h, column
    // 8j + 2*(lane%4) + e.
    const int r0 = warp * 16 + lane / 4;
    const int c0 = 2 * (lane % 4);
    const int nBlocksB = (p.n + 127) / 128;
    // This warpgroup's first 64-row staging slab (see epilogue).
    const u32 cBase = base + kOffC + wg * (kChunks * kChunkBytes);
    const float *sSA = reinterpret_cast<const float *>(smem + kOffSA);
    const u32 peer = CLUSTER > 1 ? mapaShared(emptyBar(base, 0), rank ^ 1) : 0;

    float acc[kWaves][kAcc];
    int stage = 0;
    u32 phase = 0;
    const bool turns = takeTurns(p);
    if (wg == 1)
      turnEnd(turns, wg); // warpgroup 0 goes first

    int n = 0; // units done by this CTA
    for (int u = first; u < units; u += stride, ++n) {
      Unit w = decode(p, u, rank);
      const int m0 = w.mb * BM, n0 = w.nb * BN;

      // 128x128 scales of B: the tile's columns below 128 - n0 % 128 use
      // block b0, the rest block b0 + 1 (clamped at the edge of N).
      TileScales ts;
      const int b0 = n0 / 128;
      const int b1 = b0 + 1 < nBlocksB ? b0 + 1 : b0;
      ts.splitJ = min(128 - n0 % 128, BN) / 8;
      ts.sb0 = p.sb + b0 * p.sbStrideN;
      ts.sb1 = p.sb + b1 * p.sbStrideN;

#pragma unroll
      for (int v = 0; v < kWaves; ++v)
#pragma unroll
        for (int i = 0; i < kAcc; ++i)
          acc[v][i] = 0.f;

      // (BS_EXP_NO_MAIN: experiment without K loop: prologue, split-K and
      // epilogue only.)
#ifndef BS_EXP_NO_MAIN
#ifdef BS_EXP_TIMELINE
      if (u == first) {
        // (The main loop's first wait returns at once after this one.)
        mbarWait(fullBar(base, stage), phase);
        BS_TIMELINE(wg == 0 && tid == 0, FirstData);
      }
#endif
      mainloop(p, base, smem, sSA, wg, r0, c0, lane, peer, w, ts, acc, stage,
               phase);
#endif
      BS_TIMELINE(wg == 0 && tid == 0, LoopEnd);

#ifdef BS_EXP_SPLIT_SKIP
      // Experiment: no split-K hand-off; split 0 stores its partial alone
      // (a wrong result): the floor for any reduction of the splits.
      if (w.split != 0)
        continue;
#else
      if (KSPLIT > 1) {
        clusterReduce(p, base, smem, wg, tid, rank, n, m0, n0, r0, c0, acc);
        continue;
      }
      if (p.splits > 1 && !splitKReduce(p, smem, w, wg, tid, acc))
        continue; // another split finishes this tile
#endif

      epilogue(cBase, wg, tid, r0, c0, m0, n0, acc, tC);
      BS_TIMELINE(wg == 0 && tid == 0, EpiIssued);
    }

    if (wg == 0)
      turnBegin(turns, wg); // the grant warpgroup 1 gave after its last issue
    // Shared memory must stay alive until the last TMA store has read it,
    // and (KSPLIT) until the peers have read the last partial.
    if (tid == 0)
      bulkWait0();
    if (KSPLIT > 1) {
      if (n > 0)
        mbarWait(freedBar(base), (n - 1) & 1);
      else
        clusterWait(); // (no unit: still one wait per arrival)
    }
    BS_TIMELINE(wg == 0 && tid == 0, Exit);
    BS_TIMELINE(wg == 0 && tid == 0, GExit);
  }

  // Split-K inside the cluster (KSPLIT): the CTA of rank r holds split r of
  // the tile in `acc` and finishes 1/KSPLIT of the tile's columns (float4
  // fragments i with i % KSPLIT == r, 8 columns each). Each CTA pushes the
  // fragments its peers finish straight from registers into their receive
  // buffers (st.async, which completes transaction bytes on the receiver's
  // "ready" barrier: no fence and no release), waits for its own, adds and
  // stores to C from registers. The first version, in which each CTA left
  // its partial in its own ring for the peers to read after a
  // fence.acq_rel.cluster and a release.cluster arrival, spent 3500-7600
  // cycles between the last K-block and the stores (2026-12-03 run 77), no
  // less than the workspace hand-off it replaces; skipping the hand-off
  // altogether had run 1.36x faster at M = 128, N = 2112, K = 7168 (run 75).
  __device__ static void clusterReduce(const GemmParams &p, u32 base,
                                       const unsigned char *smem, int wg,
                                       int tid, int rank, int n, int m0,
                                       int n0, int r0, int c0,
                                       float (&acc)[kWaves][kAcc]) {
    constexpr int kVec = kAcc / 4; // float4 fragments per thread and wave
    const int lane = tid % 32;
    // Every peer has initialized its barriers (see run).
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
    const u32 recv = base + kOffC;
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
                smem + kOffC + recvOffset(s, v, wg, i / KSPLIT, tid));
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
    // Register fragment: float4 i holds rows r0 and r0 + 8, columns
    // 8 i + c0 and +1 (see consume).
#pragma unroll
    for (int v = 0; v < kWaves; ++v)
#pragma unroll
      for (int i = 0; i < kVec; ++i) {
        if (i % KSPLIT != rank)
          continue;
        const int col = n0 + 8 * i + c0;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = m0 + v * kWaveRows + wg * 64 + r0 + 8 * h;
          if (row >= p.m || col >= p.n)
            continue;
          const float x0 = acc[v][4 * i + 2 * h], x1 = acc[v][4 * i + 2 * h + 1];
          const bool both = col + 1 < p.n;
          const long long at = static_cast<long long>(row) * p.ldc + col;
          if (OUT_F32) {
            float *c = static_cast<float *>(p.c) + at;
            if (both) {
              float2 y = make_float2(x0, x1);
              if (ACCUMULATE) {
                const float2 o = *reinterpret_cast<const float2 *>(c);
                y.x += o.x;
                y.y += o.y;
              }
              *reinterpret_cast<float2 *>(c) = y;
            } else {
              c[0] = ACCUMULATE ? c[0] + x0 : x0;
            }
          } else {
            unsigned short *c = static_cast<unsigned short *>(p.c) + at;
            if (both)
              *reinterpret_cast<u32 *>(c) = packBf16x2(x0, x1);
            else
              c[0] = static_cast<unsigned short>(packBf16x2(x0, 0.f));
          }
        }
      }
    BS_TIMELINE(wg == 0 && tid == 0, EpiIssued);
  }

  // KSPLIT receive buffer (in place of the epilogue's staging): fragment q
  // of this CTA's share from sender s (0..KSPLIT-2), wave v, warpgroup wg,
  // thread tid, as a shared-memory address; float4 q of every thread
  // contiguous across the warpgroup (conflict-free 16-byte accesses).
  static constexpr int kShare = (kAcc / 4 + KSPLIT - 1) / KSPLIT;
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

  // Split-K: publish this unit's partial; returns true (with `acc` holding
  // the full sum) for the last split of the tile to arrive.
  __device__ static bool splitKReduce(const GemmParams &p, unsigned char *smem,
                                      const Unit &w, int wg, int tid,
                                      float (&acc)[kWaves][kAcc]) {
    static_assert(kAcc % 4 == 0, "float4 partials");
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
    volatile int *flag = reinterpret_cast<volatile int *>(smem + kOffFlag) + wg;
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

  __device__ static void epilogue(u32 cBase0, int wg, int tid, int r0, int c0,
                                  int m0, int n0,
                                  const float (&acc)[kWaves][kAcc],
                                  const TmaDesc &tC) {
    // Each (wave, warpgroup) stages its 64 rows in a slab of its own.
    auto slabBase = [&](int v) {
      return cBase0 + v * kConsumers * (kChunks * kChunkBytes);
    };
    // The previous tile's TMA store must have read these slabs.
    if (tid == 0)
      bulkWaitRead0();
    namedBarSync(1 + wg, 128);
#pragma unroll
    for (int v = 0; v < kWaves; ++v) {
      const u32 cBase = slabBase(v);
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
        const int col = 8 * j + c0;
        const int chunk = col / kChunkCols;
        const int byte = (col % kChunkCols) * kOutBytes;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = r0 + 8 * h;
          // TMA swizzle: 16-byte unit index XOR address bits
          // [7, 7 + log2(kSwz/16)).
          const int swz = ((row * kSwz) >> 7) & (kSwz / 16 - 1);
          const u32 addr = cBase + chunk * kChunkBytes + row * kSwz +
                           ((((byte >> 4) ^ swz) << 4) | (byte & 15));
          const float v0 = acc[v][4 * j + 2 * h];
          const float v1 = acc[v][4 * j + 2 * h + 1];
          if (OUT_F32)
            asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(addr),
                         "f"(v0), "f"(v1)
                         : "memory");
          else
            asm volatile("st.shared.b32 [%0], %1;" ::"r"(addr),
                         "r"(packBf16x2(v0, v1))
                         : "memory");
        }
      }
    }
    fenceProxyAsyncShared();
    namedBarSync(1 + wg, 128);
    if (tid == 0) {
#pragma unroll
      for (int v = 0; v < kWaves; ++v) {
        const int row0 = m0 + v * kWaveRows + wg * 64;
#pragma unroll
        for (int c = 0; c < kChunks; ++c) {
          if (ACCUMULATE)
            tmaReduceAdd2d(tC, slabBase(v) + c * kChunkBytes,
                           n0 + c * kChunkCols, row0);
          else
            tmaStore2d(tC, slabBase(v) + c * kChunkBytes, n0 + c * kChunkCols,
                       row0);
        }
      }
      bulkCommit();
    }
  }
};

} // namespace bs

#endif // BLOCKSCALE_KERNELS_GEMM_SM90_CUH
