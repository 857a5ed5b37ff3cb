//===- params.h - host/device contract of the kernels -*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Included both by host C++ (the runtime, the tile model) and by NVRTC, so it
// uses no headers and only fixed-size builtin types. The struct is passed by
// value as a kernel parameter: its layout is the ABI between the two.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_KERNELS_PARAMS_H
#define BLOCKSCALE_KERNELS_PARAMS_H

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
#define BS_HOST_DEVICE __host__ __device__
#else
#define BS_HOST_DEVICE
#endif

namespace bs {

// Device defaults, for generation without a GPU (H100/H200 SXM): SMs, and
// the dynamic shared memory a CTA may opt in to (227 KB).
constexpr int kDefaultNumSMs = 132;
constexpr int kMaxDynamicSmemBytes = 232448;
// The most SMs a planner or launch takes (persistent grids of up to this
// many CTAs stay far inside the 2^31 - 1 grid limit).
constexpr int kMaxSMs = 65536;

// Division of 0 <= n < 2^31 by a divisor d fixed for the whole launch, as a
// multiply-high and a shift: for d >= 2, with s = ceil(log2 d) and mul =
// ceil(2^(31 + s) / d) (< 2^32), q = (n * mul) >> (31 + s) = umulhi(n, mul)
// >> (s - 1). Exact: mul exceeds 2^(31 + s) / d by e < 1, so n * mul / 2^(31
// + s) exceeds n / d by less than n / 2^(31 + s) < 1 / d, too little to reach
// the next integer (Granlund and Montgomery, "Division by invariant integers
// using multiplication", PLDI 1994). d = 1 has mul = 0 and passes n through
// `keep`. A 32-bit `/` is ~15 dependent instructions around a reciprocal; a
// work unit's decode has five, which the single producer thread runs before
// its first TMA load.
struct FastDiv {
  unsigned mul;
  int shift;
  unsigned keep; // all ones for d = 1, else 0
};
BS_HOST_DEVICE constexpr FastDiv makeFastDiv(int d) {
  int s = 0;
  while ((1ll << s) < d)
    ++s;
  return d == 1 ? FastDiv{0u, 0, ~0u}
                : FastDiv{static_cast<unsigned>(((1ull << (31 + s)) + d - 1) /
                                                static_cast<unsigned>(d)),
                          s - 1, 0u};
}
BS_HOST_DEVICE inline unsigned mulHi32(unsigned a, unsigned b) {
#if defined(__CUDA_ARCH__)
  return __umulhi(a, b);
#else
  return static_cast<unsigned>(static_cast<unsigned long long>(a) * b >> 32);
#endif
}
BS_HOST_DEVICE inline int fastDiv(int n, FastDiv f) {
  const unsigned u = static_cast<unsigned>(n);
  return static_cast<int>((mulHi32(u, f.mul) >> f.shift) + (u & f.keep));
}

struct GemmParams {
  int m, n, k;               // logical problem size
  int kBlocks;               // ceil(k / 128)
  int tilesM, tilesN;        // ceil(m / BM), ceil(n / BN)
  int splits;                // K splits per output tile (1 = none)
  int raster;                // rasterization group width (in N tiles)
  // The divisors of a work unit's decode (DenseTileScheduler): splits, raster
  // * tilesM, raster, and the last raster group's width (fewer N groups
  // than raster when they do not divide evenly).
  FastDiv divSplits, divRasterTiles, divRaster, divLastWidth;
  // 128x128 scales of B (fwd/dgrad): element (kb, nb) at
  // sb[kb * sbStrideK + nb * sbStrideN]. Unused for wgrad (TMA-loaded).
  const float *sb;
  long long sbStrideK, sbStrideN;
  // Split-K: one f32 partial tile per (tile, split) and one arrival counter
  // per tile and consumer warpgroup (zero before the first launch; the kernel
  // leaves it zero).
  float *workspace;
  int *counters;
  // C itself (row-major, ldc elements per row), for the kernels that sum
  // their splits in a cluster and store straight from registers (KSPLIT).
  void *c;
  long long ldc;
};

// An m-grouped GEMM (gemm_grouped.cuh). `gemm` holds the shared sizes: m
// is the rows of the 2-D views of A and C (M_total, or G * mMax when
// masked), n and k one group's, tilesN, raster and kBlocks as for a dense
// GEMM, splits = 1, and sb, sbStrideK, sbStrideN group 0's B scales; c and
// ldc the output for the epilogue's clipped stores.
struct GroupedGemmParams {
  GemmParams gemm;
  // Contiguous: cumulative end offsets of the groups' rows; masked: valid
  // rows per group. numGroups int32s in device memory.
  const int *groups;
  int numGroups;
  int masked; // nonzero: group g owns rows [g * mMax, (g + 1) * mMax)
  int mMax;
  // Nonzero (CTA pairs only): a pair computes two M tiles of one N tile and
  // each CTA multicasts half of the B tile into both; zero: two N tiles of
  // one M tile sharing A. A launch-time choice (GroupedGemmFamily::
  // pairsAlongM), so one kernel serves both.
  int pairM;
  long long sbStrideG; // B scales of group g start at sb + g * sbStrideG
  // A's 1x128 scales, rows-contiguous: row r, K-block kb at sa[kb * ldsa + r].
  const float *sa;
  long long ldsa;
};

// A k-grouped GEMM (gemm_kgrouped.cuh): for each group g of tokens, C[g]
// (M, N) = A[:, tokens of g] @ B[:, tokens of g]^T with the weight-gradient
// recipe (A 1x128, B 128x1 along tokens). A (M, capacity) and B (N,
// capacity) hold every group from a multiple of 128 tokens
// (token_groups.cuh). `gemm` holds m = M, n = N, k = capacity, kBlocks =
// capacity / 128, tilesM, tilesN, raster, c and ldc of the (G * M, N) view
// of C; splits = 1.
struct KGroupedGemmParams {
  GemmParams gemm;
  const int *offs; // numGroups cumulative token ends, in device memory
  int numGroups;
  int limit; // the offsets are clipped to [0, limit] (capacity - 128 G)
};

// Split-K workspace layout: a fixed block of counters first, then the
// partials. Counters sit at the same addresses whatever the shape, so one
// zeroed buffer serves launches of any shape (a shape's partials never land
// on another shape's counters).
constexpr int kSplitKCounterSlots = 16384;
constexpr long long kSplitKCounterBytes = kSplitKCounterSlots * 4;

// Blockwise cast of a row-major (rows, cols) input. Everything is in the
// input's frame: the block is BR x BC input elements, block (i, j) has its
// scale at s[i * ssr + j * ssc], and the kernel writes q either in the same
// order (q[r * ldq + c]) or transposed (q[c * ldq + r]).
struct QuantParams {
  const void *x;
  void *q;
  float *s;
  int rows, cols;
  long long ldx, ldq;
  long long ssr, ssc;
  // Nonzero: a transposing cast's TMA stores mark the FP8 result evict_last
  // in L2 (quantKeepResultInL2).
  int keepResultInL2;
  // A batched cast (QuantizeTile's GROUPED: a stack of `groups` matrices of
  // rows x cols, e.g. the (G, N, K) expert weights): matrix g's result in
  // input order starts at q + g * gsq and its scales at s + g * gss. The
  // input and a transposed result go through 3-D TMA maps instead.
  int groups;
  long long gsq, gss;
};

// The group-aware cast (cast_grouped.cuh): x (tokens, cols) is cast per
// 128-token block of each group to q (cols, capacity) FP8, transposed, and
// one scale per column and block at s[block * ssr + col] (q.ssc = 1).
// q.rows = tokens; `blocks` = capacity / 128.
struct GroupedQuantParams {
  QuantParams q;
  const int *offs;
  int numGroups;
  int limit; // as KGroupedGemmParams::limit
  int blocks;
};

// Whether a transposing cast of a result of `resultBytes` FP8 bytes keeps it
// in L2 (evict_last on its TMA stores). Its rows are scattered over 128-byte
// pieces of many rows at a time, and lines that stay longer in L2 reach DRAM
// in longer runs; past 256 MiB the hint evicts more than it gathers
// (docs/decisions.md).
BS_HOST_DEVICE constexpr bool quantKeepResultInL2(long long resultBytes) {
  return resultBytes <= (256ll << 20);
}

BS_HOST_DEVICE constexpr int constMax(int a, int b) { return a > b ? a : b; }

// Splits summed in a cluster of `ksplit` CTAs (GemmSplitK): each CTA
// receives, from each of its ksplit - 1 peers, its share (every ksplit-th of
// the bn / 8 float4 fragments per thread) for each 64-row slab of the tile.
BS_HOST_DEVICE constexpr int gemmKsplitRecvBytes(int bm, int bn, int ksplit) {
  return ksplit > 1
             ? (ksplit - 1) * (bm / 64) * ((bn / 8 + ksplit - 1) / ksplit) *
                   128 * 16
             : 0;
}

// Dynamic shared memory of a GEMM configuration; the kernel's SharedStorage
// (gemm_config.cuh) holds the same regions in the same order and checks
// its size against this.
// The tiles the GEMM kernels are instantiated for: one or two m64 consumer
// warpgroups (bm = 64, 128) or two 64-row waves of two (bm = 256, whose two
// accumulators fit the registers only up to bn = 128); bn a wgmma N that
// the epilogue's swizzled staging takes (up to 128, or 144, 160, 192).
BS_HOST_DEVICE constexpr bool gemmTileImplemented(int bm, int bn) {
  return (bm == 64 || bm == 128 || (bm == 256 && bn <= 128)) && bn >= 16 &&
         bn % 16 == 0 && (bn <= 128 || bn == 144 || bn == 160 || bn == 192);
}

// Tiles whose K loop keeps two accumulators in flight (GemmConfig::
// kPipeline): a warpgroup promotes block k while its wgmmas of block k + 1
// run, which needs 3 * BN / 2 + ~30 registers (BN <= 128), one wave and no
// pair waiting on the peer's consumers.
BS_HOST_DEVICE constexpr bool gemmPipelinedTile(int bm, int bn, int cluster) {
  return bn <= 128 && cluster == 1 && bm <= 128;
}
// Tiles that may be specialized for their K-block count and run the
// stage-aligned rounds (GemmConfig::kAlignedK): the forward recipe's one-
// accumulator loops without cluster-summed splits, one wave (bm <= 128,
// bn > 128 or pairs) or two (bm = 256).
BS_HOST_DEVICE constexpr bool gemmStageAlignable(int bm, int bn, int cluster,
                                                 bool wgrad, int ksplit) {
  return !wgrad && ksplit == 1 && !gemmPipelinedTile(bm, bn, cluster);
}

// Stage-aligned kernels (GemmConfig::kAlignedK, kblocks > 0) keep a tile's
// B scales of every K-block in shared memory, two tiles' worth (the
// consumers fill one while the other may still be read): per K-block one
// scale, or two when BN does not divide 128 (a tile may straddle two
// 128-wide scale blocks).
BS_HOST_DEVICE constexpr int gemmSbStashFloats(int bn, int kblocks) {
  return kblocks * (128 % bn == 0 ? 1 : 2);
}
BS_HOST_DEVICE constexpr int gemmSbStashBytes(int bn, int kblocks) {
  return kblocks > 0 ? (2 * gemmSbStashFloats(bn, kblocks) * 4 + 127) / 128 * 128
                     : 0;
}

// Output tiles of an m x n result in the largest tiles the kernels take
// (256 x 128, or 128 x 192): the fewest any plan has. The kernels number
// tiles in 32-bit ints, so the planners refuse outputs where even this
// count does not fit.
BS_HOST_DEVICE constexpr long long gemmFewestTiles(long long m, long long n) {
  const long long tall = (m + 255) / 256 * ((n + 127) / 128);
  const long long wide = (m + 127) / 128 * ((n + 191) / 192);
  return tall < wide ? tall : wide;
}

BS_HOST_DEVICE constexpr int gemmSmemBytes(int bm, int bn, int stages,
                                           int outBytes, bool wgrad,
                                           int ksplit = 1, int kblocks = 0) {
  return 1024 /* base alignment slack for 128B-swizzled TMA boxes */ +
         stages * (bm * 128 + bn * 128) /* A and B tiles */ +
         constMax(bm * bn * outBytes,
                  gemmKsplitRecvBytes(bm, bn, ksplit)) /* epilogue staging
                                                          or receive buffer */ +
         stages * bm * 4 /* A scales */ +
         (wgrad ? stages * ((bn * 4 + 127) / 128 * 128)
                : gemmSbStashBytes(bn, kblocks)) /* B scales */ +
         stages * 2 * 8 /* full/empty mbarriers */ + 16 /* split-K flag */;
}

// Casts are persistent: each CTA keeps kQuantStages 128 x 128 input tiles
// in a shared-memory ring that TMA fills while it works on an earlier tile
// (a transposing cast writes its FP8 transpose into the stage it has just
// read). After the ring come the block maxima and inverse scales, then the
// ring's mbarriers (two per stage: tile landed, workers done with it): the
// dynamic shared memory, 1024-byte aligned by the kernel (QuantizeTile's
// SharedStorage, quantize.cuh).
constexpr int kQuantStages = 3;
BS_HOST_DEVICE constexpr int quantScratchBytes() {
  return 8 * 128 * 4 /* per-warp column maxima */ +
         128 * 4 /* inverse scales */;
}
BS_HOST_DEVICE constexpr int quantSmemBytes(int inBytes) {
  return 1024 + kQuantStages * 128 * 128 * inBytes + quantScratchBytes() +
         kQuantStages * 2 * 8;
}
// The group-aware cast (cast_grouped.cuh) adds, after the cast's barriers,
// the padded block, column tile and tokens of each stage's tile and the
// CTA's tile count, which its producer thread finds and the workers read.
BS_HOST_DEVICE constexpr int groupedQuantSmemBytes(int inBytes) {
  return quantSmemBytes(inBytes) + kQuantStages * 16 + 16;
}
// Two bf16/f16 CTAs fit an SM's 228 KB (with 1 KB reserved per CTA), one
// f32 CTA.
BS_HOST_DEVICE constexpr int quantCtasPerSM(int inBytes) {
  return inBytes == 4 ? 1 : 2;
}
// Whether a cast has, besides its 256 workers, a warp that issues its TMA
// loads and stores (quantize.cuh; the host launches 288 threads then). Two
// CTAs of nine warps leave ptxas 96 registers per thread (the 64K registers
// are four files of 16K, and five of the eighteen warps share a file), and
// the 16-bit 1x128 transposing cast's workers need more (116; they spill at
// 96): that one keeps 256 threads, worker 0 issuing the TMA operations.
BS_HOST_DEVICE constexpr bool quantHasProducerWarp(int inBytes, int br,
                                                   bool transposed) {
  return !(transposed && br == 1 && quantCtasPerSM(inBytes) == 2);
}
// Threads of a cast's CTA (QuantizeTile::kThreads, the host's launch): the
// workers that hold the tile, and the producer warp of a cast that has one.
constexpr int kQuantWorkers = 256;
BS_HOST_DEVICE constexpr int quantThreads(int inBytes, int br,
                                          bool transposed) {
  return kQuantWorkers +
         (quantHasProducerWarp(inBytes, br, transposed) ? 32 : 0);
}

// Largest pipeline depth that fits `smemLimit` bytes.
BS_HOST_DEVICE constexpr int gemmMaxStages(int bm, int bn, int outBytes,
                                           bool wgrad, int smemLimit,
                                           int ksplit = 1) {
  int s = 0;
  while (s < 16 &&
         gemmSmemBytes(bm, bn, s + 1, outBytes, wgrad, ksplit) <= smemLimit)
    ++s;
  return s;
}

// Debug options of a kernel (KernelSpec::debug; part of its source, hence
// of its cache key): the generated source defines BS_DEBUG_HANG /
// BS_DEBUG_TIMELINE for them.
enum DebugFlags : unsigned {
  kDebugHang = 1u,     // mbarrier waits trap with a message instead of hanging
  kDebugTimeline = 2u, // per-CTA phase stamps (timeline.cuh)
};

// Phase stamps of a GEMM compiled with the timeline option: slot s of CTA c
// is bsTimelineStamps[c * kSlots + s], clock64 for the phases and
// globaltimer (ns) for GEntry / GExit; the host reads them
// (blockscale-gen --run --debug=timeline).
namespace timeline {
enum Slot {
  Entry,     // kernel entry
  Ready,     // barriers initialized, CTA synchronized
  ProdReg,   // producer: registers given back
  ProdStart, // producer: first unit decoded
  FirstIssue, // producer: first stage free and armed, before its TMA loads
  FirstLoad, // producer: first TMA load issued
  FirstData, // consumers: first stage full
  LoopEnd,   // consumers: last K loop done
  SplitDone, // consumers: split-K hand-off done (last split or not)
  EpiIssued, // consumers: last epilogue's TMA store issued
  Exit,      // consumers: TMA stores complete
  GEntry,    // globaltimer at entry (ns)
  GExit,     // globaltimer at exit (ns)
  kSlots
};
enum : int { kMaxCtas = 1024 }; // (an enumerator: NVRTC emits no global for it)
} // namespace timeline

} // namespace bs

#endif // BLOCKSCALE_KERNELS_PARAMS_H
