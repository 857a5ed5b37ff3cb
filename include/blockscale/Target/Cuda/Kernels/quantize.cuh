//===- quantize.cuh - blockwise FP8 casts ------------------------*- CUDA -*-===//
//
// CTAs of 256 workers cast 128x128 tiles of a row-major input to FP8 with
// one f32 decode scale per BR x BC block (1x128, 128x1 or 128x128, always
// aligned to the tile), writing the result in the same order or
// transposed, so that the GEMM kernels read it without any copy:
//
//   s   = max(amax, 1e-12) / fp8_max               (decode scale, stored)
//   q   = cvt.rn.satfinite(x * (fp8_max / max(amax, 1e-12)))
//
// Each worker holds RPT consecutive rows x VEC consecutive columns of the
// tile as 16-byte vectors (a half or full warp covers a 256/512-byte row
// segment) and keeps them packed until they are used. The CTAs are
// persistent and read their tiles from a shared-memory ring that TMA fills
// ahead of use (run(p, tX), run(p, tX, tQ)); a 257th thread, in a warp of
// its own, issues every TMA load and store. run(p), one tile per CTA
// straight from global memory, is kept for A/B experiments. Transposed
// output goes through 16 KB of shared memory (the stage its input came
// from) in 8-byte units whose index is XOR-swizzled (swizzle()), so that
// the scattered writes and the row reads are bank-conflict free; from there
// it is copied in 16-byte row segments into TMA's 128-byte swizzle in the
// stage's other half and stored as one box (run(p) stores the segments
// itself).
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_KERNELS_QUANTIZE_CUH
#define BLOCKSCALE_KERNELS_QUANTIZE_CUH

#include "blockscale/params.h"
#include "blockscale/ptx_sm90.cuh"

namespace bs {

// Input element types: 16-byte vector -> floats.
struct InBf16 {
  static constexpr int kVec = 8;
  __device__ __forceinline__ static float get(const uint4 &v, int j) {
    const u32 w = (&v.x)[j / 2];
    return __uint_as_float(j % 2 ? (w & 0xffff0000u) : (w << 16));
  }
};
struct InF16 {
  static constexpr int kVec = 8;
  __device__ __forceinline__ static float get(const uint4 &v, int j) {
    const u32 w = (&v.x)[j / 2];
    const unsigned short h =
        static_cast<unsigned short>(j % 2 ? (w >> 16) : (w & 0xffffu));
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
  }
};
struct InF32 {
  static constexpr int kVec = 4;
  __device__ __forceinline__ static float get(const uint4 &v, int j) {
    return __uint_as_float((&v.x)[j]);
  }
};

// Two floats -> two FP8 bytes (lo in the low byte), round-to-nearest-even,
// saturating to the largest finite value.
template <int FMT> __device__ __forceinline__ u32 cvtFp8x2(float lo, float hi);
template <> __device__ __forceinline__ u32 cvtFp8x2<0>(float lo, float hi) {
  unsigned short r;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  return r;
}
template <> __device__ __forceinline__ u32 cvtFp8x2<1>(float lo, float hi) {
  unsigned short r;
  asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  return r;
}

template <class In, int FMT, int BR, int BC, bool TRANS, bool STAGED = false>
struct QuantizeTile {
  static_assert((BR == 1 && BC == 128) || (BR == 128 && BC == 1) ||
                    (BR == 128 && BC == 128),
                "block shapes of the FP8 recipe");
  // The staged transposing cast stores its FP8 tiles by TMA; against
  // 16-byte st.global from every thread, +0.2 to +0.9 points of copy
  // bandwidth on each transposing cast in two rounds of one run (2026-12-03
  // run 44). The one-tile-per-CTA experiment keeps the thread stores.
  static constexpr bool kTmaStore = TRANS && STAGED;
  // A staged cast has 256 workers, which hold and convert the tiles, and a
  // producer warp that issues its TMA loads and stores. A TMA store's stage
  // can be refilled only once the store has read it
  // (cp.async.bulk.wait_group.read), and only the thread that issued the
  // store can wait for that; with worker 0 issuing them, every worker waited
  // at the top of each tile for the previous tile's store to drain. The
  // workers of a cast in input order only arrive on an mbarrier instead of
  // meeting at a barrier before their stage is refilled. Against worker 0
  // issuing them, same runs, two rounds each (2026-12-03 runs 104 and 105,
  // two machine starts): the transposing casts at 32768x4096 +0.5 to +1.0
  // points of copy bandwidth, the larger ones +0.4 to +0.9, the casts in
  // input order +0.1 to +1.0 (weight 128x128 the most).
  // (Not the 16-bit 1x128 transposing cast: quantHasProducerWarp.)
  // BS_EXP_Q_NO_PRODUCER (an experiment): worker 0 issues them between the
  // workers' barriers, as before, and the extra warp only starts the ring.
  static constexpr int kWorkers = kQuantWorkers; // threads that hold the tile
  static constexpr int kThreads = quantThreads(16 / In::kVec, BR, TRANS, STAGED);
  static constexpr bool kExtraWarp = kThreads > kWorkers;
#ifdef BS_EXP_Q_NO_PRODUCER
  static constexpr bool kProducer = false;
#else
  static constexpr bool kProducer = kExtraWarp;
#endif
  // CTAs per SM that the persistent grid assumes (params.h): the generated
  // kernel's __launch_bounds__ gives it to ptxas, whose register choice
  // for 288 threads otherwise spilled the 128x1 cast in input order (72
  // registers, 8 bytes of stack).
  enum : int {
#ifdef BS_EXP_Q_MINCTAS
    kMinCtas = BS_EXP_Q_MINCTAS // experiment: 0 drops the minimum
#else
    kMinCtas = STAGED ? quantCtasPerSM(16 / In::kVec) : 1
#endif
  };
  static constexpr int VEC = In::kVec;
  static constexpr int kColThreads = 128 / VEC;           // per tile row
  static constexpr int kRowGroups = kWorkers / kColThreads; // 16 or 8
  static constexpr int RPT = 128 / kRowGroups;             // 8 or 16 rows
  static constexpr float kFp8Max = FMT == 0 ? 448.f : 57344.f;

  static constexpr int kElemBytes = 16 / VEC;
  static constexpr int kRowBytes = 128 * kElemBytes; // one tile row
  static constexpr int kTileBytes = 128 * kRowBytes;
  // Block maxima, then inverse scales (quantScratchBytes).
  static constexpr int kScratchBytes = quantScratchBytes();
  static constexpr int kInvOffset = 8 * 128 * 4;
  // Where in a stage a transposing cast puts the copy of its FP8 transpose in
  // TMA's 128-byte swizzle, which the TMA store reads: after the 16 KB
  // transpose itself.
  static constexpr int kSwizzledOffset = 128 * 128;
  static_assert(quantSmemBytes(kElemBytes) == 1024 + kQuantStages * kTileBytes +
                                                  kScratchBytes +
                                                  kQuantStages * 2 * 8,
                "host and device disagree on the shared memory");
  // Width in column tiles of the panels a staged transposing cast walks
  // (runStaged); 0 walks them in input order. An enumerator, so that NVRTC
  // emits no global for it.
  enum : int {
#ifdef BS_EXP_Q_PANEL
    kPanel = BS_EXP_Q_PANEL
#else
    kPanel = 8
#endif
  };

  // A barrier among the workers only: the extra warp (kExtraWarp) never
  // joins one after it has started the ring.
  __device__ static void workerSync() {
    if (kExtraWarp)
      namedBarSync(1, kWorkers);
    else
      __syncthreads();
  }

  // One CTA per 128x128 tile: all loads first, RPT independent 16-byte
  // requests in flight per thread.
  __device__ static void run(const QuantParams &p) {
    static_assert(!STAGED, "the staged cast takes the input's tensor map");
    gridDepLaunchDependents();
    gridDepWait();
    const int t = threadIdx.x;
    const int cg = t % kColThreads, rg = t / kColThreads;
    const int rowBase = blockIdx.y * 128, colBase = blockIdx.x * 128;
    const int col0 = colBase + cg * VEC, row0 = rowBase + rg * RPT;
    const char *x = static_cast<const char *>(p.x);
    uint4 v[RPT];
#pragma unroll
    for (int i = 0; i < RPT; ++i) {
      v[i] = make_uint4(0, 0, 0, 0);
      if (col0 < p.cols && row0 + i < p.rows)
        v[i] = __ldcs(reinterpret_cast<const uint4 *>(
            x + ((static_cast<long long>(row0 + i) * p.ldx + col0) *
                 kElemBytes)));
    }
    __shared__ __align__(16) unsigned char scratch[kScratchBytes];
    __shared__ __align__(16) unsigned char qs[TRANS ? 128 * 128 : 16];
    castTile(p, rowBase, colBase, v, scratch, qs);
  }

  // Persistent CTAs over tiles blockIdx.x + j * gridDim.x, read from a
  // ring of kQuantStages stages (params.h) that the producer warp refills
  // by TMA once every worker has its part of a stage in registers (and, for
  // a transposing cast, once the transpose written there has been stored),
  // so that loads continue during the conversion and stores. Against one tile
  // per CTA straight from global memory, same run (2026-12-02, runs 17 and
  // 19, bench/RESULTS.md): transposing casts +3.3-4.6 points of copy
  // bandwidth; casts in input order +0.4-2 points on the 128x128 and
  // 65536x8192 ones, -0.6 to +0.5 on 1x128 32768x4096, -0.3 to -0.9 on
  // 4096x7168. One TMA box per tile: per-row bulk copies (128 requests of
  // 256 bytes) ran at 58 % (run 14).
  __device__ static void run(const QuantParams &p, const TmaDesc &tX) {
    static_assert(!TRANS, "a transposing cast also takes its output's map");
    runStaged(p, tX, nullptr);
  }
  __device__ static void run(const QuantParams &p, const TmaDesc &tX,
                             const TmaDesc &tQ) {
    static_assert(TRANS, "only a transposing cast takes its output's map");
    runStaged(p, tX, &tQ);
  }
  __device__ static void runStaged(const QuantParams &p, const TmaDesc &tX,
                                   const TmaDesc *tQ) {
    static_assert(STAGED, "only the staged cast takes a tensor map");
    extern __shared__ __align__(1024) unsigned char ringRaw[];
    const u32 rawAddr = smemAddr(ringRaw);
    // 1024: a 128B-swizzled TMA box repeats its pattern every 1024 bytes.
    const u32 ringAddr = (rawAddr + 1023u) & ~1023u;
    unsigned char *ring = ringRaw + (ringAddr - rawAddr);
    unsigned char *scratch = ring + kQuantStages * kTileBytes;
    const u32 barAddr = ringAddr + kQuantStages * kTileBytes + kScratchBytes;
    const int t = threadIdx.x;
    const int cg = t % kColThreads, rg = t / kColThreads;
    const int tilesX = (p.cols + 127) / 128;
    const int tiles = tilesX * ((p.rows + 127) / 128);

    // A transposing cast walks its tiles in panels of kPanel column tiles,
    // down the rows inside a panel: with 264 CTAs (two per SM for 16-bit
    // inputs) and kPanel = 8 the tiles being written span ~33 row bands, so
    // ~4 KB runs of each transposed row, instead of 264 / tilesX row bands
    // in input order (0.5-1 KB at 8192-4096 columns). 128x1 at 65536x8192
    // ran 90.1 % of copy bandwidth against 88.6 / 89.6 in input order, the
    // 32768x4096 transposing casts -0.2 to +0.5 points (2026-12-03 runs
    // 92-93, one round each). Casts in input order keep that order: panels
    // cost them 1.7-2.8 points (run 22).
    const int tilesY = (p.rows + 127) / 128;
    // The first column tile of `tile`'s panel; the panel is `width` tiles
    // wide (the last one may be narrower) and holds tiles first * tilesY on.
    auto panelOf = [&](int tile, int &width) {
      const int first = tile / (kPanel * tilesY) * kPanel;
      width = min(static_cast<int>(kPanel), tilesX - first);
      return first;
    };
    auto tileCol = [&](int tile) {
      if (!TRANS || kPanel == 0)
        return tile % tilesX;
      int width;
      const int first = panelOf(tile, width);
      return first + (tile - first * tilesY) % width;
    };
    auto tileRow = [&](int tile) {
      if (!TRANS || kPanel == 0)
        return tile / tilesX;
      int width;
      const int first = panelOf(tile, width);
      return (tile - first * tilesY) / width;
    };

    // full(s): the stage's tile has landed; ready(s) (kProducer): every
    // worker is done with the stage (has read it, and for a transposing cast
    // has written and fenced its part of the swizzled FP8 transpose there).
    auto full = [&](int s) { return barAddr + 8 * s; };
    auto ready = [&](int s) { return barAddr + 8 * (kQuantStages + s); };
    // Out-of-range parts of a box are zero-filled and still counted in the
    // transaction bytes, so every stage expects a full tile.
    auto fill = [&](int tile, int s) {
      mbarArriveExpectTx(full(s), kTileBytes);
      tmaLoad2d(ringAddr + s * kTileBytes, tX, full(s), tileCol(tile) * 128,
                tileRow(tile) * 128);
    };
    // Under a programmatic launch (gridDepWait, ptx_sm90.cuh) the set-up
    // overlaps the previous kernel's tail; the first loads, and every
    // thread's stores, come after the wait.
    const int boss = kProducer ? kWorkers : 0; // issues the TMA operations
    gridDepLaunchDependents();
    if (t == boss) {
      for (int s = 0; s < kQuantStages; ++s) {
        mbarInit(full(s), 1);
        if (kProducer)
          mbarInit(ready(s), kWorkers);
      }
      fenceBarrierInit();
      tmaPrefetchDesc(tX);
      if (kTmaStore)
        tmaPrefetchDesc(*tQ);
    }
    gridDepWait();
    if (t == boss)
      for (int s = 0; s < kQuantStages; ++s)
        if (blockIdx.x + s * gridDim.x < tiles)
          fill(blockIdx.x + s * gridDim.x, s);
    __syncthreads();

    if (t >= kWorkers) {
      if (!kProducer || t != boss)
        return;
      // Once the workers are done with tile j's stage: store its transpose
      // (a transposing cast), wait until the store has read the stage, and
      // refill the stage with tile j + kQuantStages. The workers meanwhile
      // go on with tiles j + 1 and j + 2.
      const u64 keep = kTmaStore ? l2PolicyEvictLast() : 0;
      int j = 0;
      for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x, ++j) {
        const int s = j % kQuantStages;
        mbarWait(ready(s), (j / kQuantStages) & 1);
        if (kTmaStore)
          storeTile(p, *tQ, ringAddr + s * kTileBytes + kSwizzledOffset,
                    tileRow(tile) * 128, tileCol(tile) * 128, keep);
        const int next = tile + kQuantStages * gridDim.x;
        if (next < tiles) {
          // The TMA write (async proxy) must follow the workers' accesses
          // to the stage (generic proxy), which ready(s) ordered before
          // this thread.
          fenceProxyAsyncShared();
          if (kTmaStore)
            bulkWaitRead0();
          fill(next, s);
        }
      }
      if (kTmaStore)
        bulkWait0();
      return;
    }

    int j = 0;
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x, ++j) {
      const int s = j % kQuantStages;
      mbarWait(full(s), (j / kQuantStages) & 1);
      // A half or whole warp reads one 256/512-byte row of the stage:
      // conflict-free 16-byte reads.
      unsigned char *stage = ring + s * kTileBytes;
      uint4 v[RPT];
#pragma unroll
      for (int i = 0; i < RPT; ++i)
        v[i] = *reinterpret_cast<const uint4 *>(
            stage + (rg * RPT + i) * kRowBytes + cg * 16);
      // Every worker holds its part of this tile, so its stage may be
      // refilled (or overwritten by castTile), and is done with the previous
      // tile, so the previous stage may be refilled and castTile may reuse
      // the scratch. (With a producer warp, a cast in input order only
      // tells the producer that this worker is done with the stage: its
      // scratch is safe to reuse behind castTile's own barriers.)
      if (kProducer && !TRANS)
        mbarArrive(ready(s));
      else
        workerSync();
      // (BS_EXP_Q_NO_PRODUCER.) A transposing cast writes its FP8
      // transpose into the stage it has just read, so worker 0 refills the
      // previous tile's stage instead: against a 16 KB transpose buffer of
      // its own and this stage refilled now, +0.1-0.8 points (2026-12-02
      // run 19).
      const int next =
          tile + (TRANS ? kQuantStages - 1 : kQuantStages) * gridDim.x;
      if (!kProducer && t == 0 && (!TRANS || j > 0) && next < tiles) {
        // The TMA write (async proxy) must follow the reads of that stage
        // (generic proxy), which the barrier ordered before this thread.
        fenceProxyAsyncShared();
        // The TMA store of the previous tile reads that stage.
        if (kTmaStore)
          bulkWaitRead0();
        fill(next, TRANS ? (j - 1) % kQuantStages : s);
      }
      castTile(p, tileRow(tile) * 128, tileCol(tile) * 128, v, scratch, stage,
               tQ, ready(s));
    }
    if (kTmaStore && !kProducer && t == 0)
      bulkWait0();
  }

  // One TMA store of a transposed 128x128 FP8 tile (128B-swizzled at src),
  // with L2 policy `keep` (an evict_last policy) when p.keepResultInL2.
  __device__ static void storeTile(const QuantParams &p, const TmaDesc &tQ,
                                   u32 src, int rowBase, int colBase,
                                   u64 keep) {
#if defined(BS_EXP_Q_TSTORE_EF) || defined(BS_EXP_Q_TSTORE_EL)
    // Experiment: every store evict_first / evict_last, whatever the size.
    (void)p;
    (void)keep;
    tmaStore2dHint(tQ, src, rowBase, colBase,
#ifdef BS_EXP_Q_TSTORE_EF
                   l2PolicyEvictFirst());
#else
                   l2PolicyEvictLast());
#endif
#else
    if (p.keepResultInL2)
      tmaStore2dHint(tQ, src, rowBase, colBase, keep);
    else
      tmaStore2d(tQ, src, rowBase, colBase);
#endif
    bulkCommit();
  }

  // The 8-byte unit u of row c of a transposed tile is at unit u ^
  // swizzle(c) of that row. Writes: the lanes of a warp write one unit of
  // 16 or 32 rows c that differ in c / 8, which spreads them over all
  // banks. Reads: 8 lanes read 8 units of one row, a warp rows c..c+3; the
  // parity flip puts rows c, c + 1 and c + 2, c + 3 into opposite halves of
  // the banks (2 wavefronts per warp instead of 4; with the 16-byte stores
  // of the column maxima and loads of the inverse scales: -0.1 to +1.0
  // points, 2026-12-02 run 19).
  __device__ static int swizzle(int c) {
    return ((c >> 3) & 15) ^ ((c >> 1) & 1);
  }

  // Scales and FP8 conversion of one 128x128 tile whose elements this
  // thread holds in v (RPT rows x VEC columns, zero outside the input), with
  // kScratchBytes of shared memory at `scratch`. A transposed result goes
  // out through the 16 KB at `qs`, and a TMA-stored one also through its
  // swizzled copy at qs + kSwizzledOffset: with a producer warp, each worker
  // arrives on `readyBar` once its part of that copy is written and fenced,
  // and the producer stores it.
  __device__ static void castTile(const QuantParams &p, int rowBase,
                                  int colBase, const uint4 (&v)[RPT],
                                  unsigned char *scratch, unsigned char *qs,
                                  const TmaDesc *tQ = nullptr,
                                  u32 readyBar = 0) {
    auto red = reinterpret_cast<float(*)[128]>(scratch);
    float *blockInv = reinterpret_cast<float *>(scratch + kInvOffset);

    const int t = threadIdx.x;
    const int cg = t % kColThreads, rg = t / kColThreads;
    const int lane = t % 32, warp = t / 32;
    const int col0 = colBase + cg * VEC;   // first of this thread's columns
    const int row0 = rowBase + rg * RPT;   // first of this thread's rows
    const bool colOk = col0 < p.cols;      // cols is a multiple of VEC

    // amax per block. Out-of-range elements were loaded as zero, so a
    // partial block's amax is that of its valid elements.
    float inv[BR == 1 ? RPT : (BC == 1 ? VEC : 1)];
    if (BR == 1) { // 1x128: one block per row, shared by kColThreads lanes
      // Every lane of a row group ends up with all RPT row maxima; lane
      // cg < RPT then does the two IEEE divisions of row cg only (instead of
      // every lane doing all of them) and the inverses are broadcast back.
      float mine = 0.f;
#pragma unroll
      for (int i = 0; i < RPT; ++i) {
        float m = 0.f;
#pragma unroll
        for (int j = 0; j < VEC; ++j)
          m = fmaxf(m, fabsf(In::get(v[i], j)));
#pragma unroll
        for (int o = kColThreads / 2; o > 0; o /= 2)
          m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
        mine = (cg % RPT) == i ? m : mine;
      }
      const float a = fmaxf(mine, 1e-12f);
      const float invMine = kFp8Max / a;
      if (cg < RPT && row0 + cg < p.rows)
        p.s[static_cast<long long>(row0 + cg) * p.ssr +
            static_cast<long long>(colBase / 128) * p.ssc] = a / kFp8Max;
      const int groupLane = lane - cg % 32; // lane of cg == 0 in this group
#pragma unroll
      for (int i = 0; i < RPT; ++i)
        inv[i] = __shfl_sync(0xffffffffu, invMine, groupLane + i);
    } else if (BC == 1) { // 128x1: one block per column of the tile
      float mc[VEC];
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        float m = 0.f;
#pragma unroll
        for (int i = 0; i < RPT; ++i)
          m = fmaxf(m, fabsf(In::get(v[i], j)));
        if (kColThreads == 16) // row groups 2w and 2w+1 share warp w
          m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 16));
        mc[j] = m;
      }
      if (kColThreads == 32 || lane < 16) {
        // 16-byte stores: one float per store would put the 16 lanes'
        // stores (32 bytes apart) into 4 banks.
#pragma unroll
        for (int j = 0; j < VEC; j += 4)
          *reinterpret_cast<float4 *>(&red[warp][cg * VEC + j]) =
              make_float4(mc[j], mc[j + 1], mc[j + 2], mc[j + 3]);
      }
      workerSync();
      if (t < 128) {
        float m = 0.f;
#pragma unroll
        for (int w = 0; w < 8; ++w)
          m = fmaxf(m, red[w][t]);
        const float a = fmaxf(m, 1e-12f);
        blockInv[t] = kFp8Max / a;
        if (colBase + t < p.cols)
          p.s[static_cast<long long>(rowBase / 128) * p.ssr +
              static_cast<long long>(colBase + t) * p.ssc] = a / kFp8Max;
      }
      workerSync();
#pragma unroll
      for (int j = 0; j < VEC; j += 4) {
        const float4 b =
            *reinterpret_cast<const float4 *>(&blockInv[cg * VEC + j]);
        inv[j] = b.x, inv[j + 1] = b.y, inv[j + 2] = b.z, inv[j + 3] = b.w;
      }
    } else { // 128x128: the whole tile
      float m = 0.f;
#pragma unroll
      for (int i = 0; i < RPT; ++i)
#pragma unroll
        for (int j = 0; j < VEC; ++j)
          m = fmaxf(m, fabsf(In::get(v[i], j)));
#pragma unroll
      for (int o = 16; o > 0; o /= 2)
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
      if (lane == 0)
        red[0][warp] = m;
      workerSync();
      if (t == 0) {
        float mm = 0.f;
#pragma unroll
        for (int w = 0; w < 8; ++w)
          mm = fmaxf(mm, red[0][w]);
        const float a = fmaxf(mm, 1e-12f);
        blockInv[0] = kFp8Max / a;
        p.s[static_cast<long long>(rowBase / 128) * p.ssr +
            static_cast<long long>(colBase / 128) * p.ssc] = a / kFp8Max;
      }
      workerSync();
      inv[0] = blockInv[0];
    }

    auto scaleOf = [&](int i, int j) -> float {
      return BR == 1 ? inv[i] : (BC == 1 ? inv[j] : inv[0]);
    };

    unsigned char *q = static_cast<unsigned char *>(p.q);
    if (!TRANS) {
      if (!colOk)
        return;
#pragma unroll
      for (int i = 0; i < RPT; ++i) {
        if (row0 + i >= p.rows)
          break;
        u32 w[VEC / 4];
#pragma unroll
        for (int k = 0; k < VEC / 4; ++k)
          w[k] = cvtFp8x2<FMT>(In::get(v[i], 4 * k) * scaleOf(i, 4 * k),
                               In::get(v[i], 4 * k + 1) * scaleOf(i, 4 * k + 1)) |
                 (cvtFp8x2<FMT>(In::get(v[i], 4 * k + 2) * scaleOf(i, 4 * k + 2),
                                In::get(v[i], 4 * k + 3) *
                                    scaleOf(i, 4 * k + 3))
                  << 16);
        unsigned char *dst =
            q + static_cast<long long>(row0 + i) * p.ldq + col0;
        if (VEC == 8)
          __stcs(reinterpret_cast<uint2 *>(dst), make_uint2(w[0], w[VEC / 4 - 1]));
        else
          __stcs(reinterpret_cast<unsigned int *>(dst), w[0]);
      }
      return;
    }

    // Transposed: column c of the tile becomes row c of the output. Each
    // thread owns RPT consecutive rows = RPT/8 8-byte units of that row.
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      const int c = cg * VEC + j;
#pragma unroll
      for (int h = 0; h < RPT / 8; ++h) {
        u32 w[2];
#pragma unroll
        for (int k = 0; k < 2; ++k) {
          const int i = 8 * h + 4 * k;
          w[k] = cvtFp8x2<FMT>(In::get(v[i], j) * scaleOf(i, j),
                               In::get(v[i + 1], j) * scaleOf(i + 1, j)) |
                 (cvtFp8x2<FMT>(In::get(v[i + 2], j) * scaleOf(i + 2, j),
                                In::get(v[i + 3], j) * scaleOf(i + 3, j))
                  << 16);
        }
        const int unit = (rg * RPT) / 8 + h;
        const int su = unit ^ swizzle(c);
        *reinterpret_cast<uint2 *>(qs + c * 128 + su * 8) = make_uint2(w[0], w[1]);
      }
    }
    workerSync();
    // 16-byte unit u2 of row c of the transposed tile: its two swizzled
    // 8-byte units joined.
    auto rowSegment = [&](int c, int u2) {
      const int sw = swizzle(c);
      const uint2 a = *reinterpret_cast<const uint2 *>(
          qs + c * 128 + (((2 * u2) ^ sw) * 8));
      const uint2 b = *reinterpret_cast<const uint2 *>(
          qs + c * 128 + (((2 * u2 + 1) ^ sw) * 8));
      return make_uint4(a.x, a.y, b.x, b.y);
    };
    if (kTmaStore) {
      // Rows of 128 bytes, 16-byte chunk k of row c at chunk k ^ (c % 8)
      // (TMA's 128-byte swizzle), in the other half of the stage; 8 lanes
      // write one row: conflict-free.
      unsigned char *tq = qs + kSwizzledOffset;
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const int idx = t + kWorkers * k;
        const int c = idx / 8, u2 = idx % 8;
        *reinterpret_cast<uint4 *>(tq + c * 128 + ((u2 ^ (c & 7)) * 16)) =
            rowSegment(c, u2);
      }
      fenceProxyAsyncShared();
      if (kProducer) {
        mbarArrive(readyBar);
        return;
      }
      workerSync();
      if (t == 0)
        storeTile(p, *tQ, smemAddr(tq), rowBase, colBase,
                  l2PolicyEvictLast());
      return;
    }
    // 16-byte stores (1-3 % faster than 8-byte ones on the H200, 2026-12-02
    // run 13): each thread joins two swizzled 8-byte units of one row.
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int idx = t + kWorkers * k;
      const int c = idx / 8, u2 = idx % 8;
      const int outRow = colBase + c, outCol = rowBase + u2 * 16;
      // rows is a multiple of 16 for transposed results: a 16-byte unit is
      // either entirely inside the input or entirely past it.
      if (outRow < p.cols && outCol < p.rows)
        __stcs(reinterpret_cast<uint4 *>(
                   q + static_cast<long long>(outRow) * p.ldq + outCol),
               rowSegment(c, u2));
    }
  }
};

} // namespace bs

#endif // BLOCKSCALE_KERNELS_QUANTIZE_CUH
