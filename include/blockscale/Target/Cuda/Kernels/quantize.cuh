//===- quantize.cuh - persistent blockwise FP8 casts -------------*- CUDA -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Persistent CTAs walk the 128x128 tiles of the input (tile blockIdx.x +
// j * gridDim.x on their j-th turn) and cast each one (cast_tile.cuh) from a
// shared-memory ring of kQuantStages stages (params.h) that TMA fills ahead
// of use, so that loads continue during the conversion and the stores. One
// TMA box per tile: the box is zero-filled past the input's edges.
//
// Most casts have, besides the 256 workers, a producer warp that issues
// every TMA load and store: once every worker is done with a stage (has its
// part in registers, and in a transposing cast has written and fenced its
// part of the swizzled FP8 transpose there) it stores the transpose, waits
// until the store has read the stage (only the issuing thread can wait for
// that: cp.async.bulk.wait_group.read) and refills it. Without it, the
// issuing worker would wait for the previous store to drain at every tile
// and the other workers for it. The 16-bit 1x128 transposing cast needs
// more registers than two CTAs of nine warps leave (quantHasProducerWarp)
// and keeps worker 0 issuing the TMA operations between worker barriers.
//
// A dual-layout cast (DUAL) writes, from the one read of each tile, both
// FP8 layouts of an operand of the training step: the transposed result
// through the transposing pipeline above and, before it, the result in
// input order, with its own blocks (1x128 beside a 128x1 transpose, as dY's
// dgrad and wgrad operands need; 128x128 beside 128x128 for a weight).
// Reading the 16-bit input once instead of twice is most of the traffic
// saved: each FP8 result is half its bytes.
//
// A batched dual cast (GROUPED) casts a stack of QuantParams::groups
// matrices, e.g. the (G, N, K) expert weights of an MoE layer, into both
// (G, N, K) and (G, K, N): its tiles are numbered matrix by matrix and
// never straddle two of them, and the input and the transposed result go
// through 3-D TMA maps whose boxes are clipped at each matrix's edges, so
// that every matrix has the tails of a single cast.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_KERNELS_QUANTIZE_CUH
#define BLOCKSCALE_KERNELS_QUANTIZE_CUH

#include "blockscale/cast_tile.cuh"
#include "blockscale/pipeline.cuh"

namespace bs {

template <class In, int FMT, int BR, int BC, bool TRANS, bool DUAL = false,
          bool GROUPED = false>
struct QuantizeTile
    : CastTile<In, FMT, BR, BC, TRANS,
               quantHasProducerWarp(16 / In::kVec, BR, TRANS)> {
  static constexpr bool kProducer =
      quantHasProducerWarp(16 / In::kVec, BR, TRANS);
  using Tile = CastTile<In, FMT, BR, BC, TRANS, kProducer>;
  static_assert(kProducer || TRANS,
                "every cast in input order has a producer warp");
  static_assert(!DUAL || (TRANS && BR == 128 && kProducer),
                "a dual cast is a 128x1 or 128x128 transposing cast with a "
                "producer warp, plus the result in input order");
  static_assert(!GROUPED || (DUAL && BC == 128),
                "a batched cast is the dual cast of 128x128 blocks");
  // The result in input order of a dual cast: 1x128 blocks beside a 128x1
  // transpose, 128x128 beside 128x128.
  using InOrderTile =
      CastTile<In, FMT, BC == 1 ? 1 : 128, 128, false, kProducer>;
  static constexpr int kWorkers = Tile::kWorkers, RPT = Tile::RPT,
                       kColThreads = Tile::kColThreads,
                       kTileBytes = Tile::kTileBytes,
                       kRowBytes = Tile::kRowBytes;
  static constexpr int kThreads = quantThreads(16 / In::kVec, BR, TRANS);
  // CTAs per SM that the persistent grid assumes (params.h); the generated
  // kernel's __launch_bounds__ gives it to ptxas, which would otherwise
  // choose registers for one CTA and spill at two.
  enum : int { kMinCtas = quantCtasPerSM(16 / In::kVec) };
  // A transposing cast walks its tiles in panels of kPanel column tiles,
  // down the rows inside a panel: with two CTAs per SM and kPanel = 8 the
  // tiles being written at one time span ~33 row bands, so each transposed
  // row is written in ~4 KB runs instead of the 0.5-1 KB of input order.
  // Casts in input order keep that order, which is their output's order.
  // (An enumerator, so that NVRTC emits no global for it.)
  enum : int { kPanel = 8 };

  using Pipe = PipelineState<kQuantStages>;
  using Ring = MbarRing<kQuantStages>; // full: landed; empty: workers done

  // The dynamic shared memory past its 1024-byte alignment (1024: a
  // 128B-swizzled TMA box repeats its pattern every 1024 bytes).
  struct SharedStorage {
    unsigned char ring[kQuantStages][kTileBytes];
    unsigned char scratch[Tile::kScratchBytes];
    u64 bars[2 * kQuantStages];
  };
  static_assert(sizeof(SharedStorage) + 1024 ==
                    quantSmemBytes(Tile::kElemBytes),
                "host and device disagree on the shared memory");

  __device__ static void run(const QuantParams &p, const TmaDesc &tX) {
    static_assert(!TRANS, "a transposing cast also takes its output's map");
    runPersistent(p, tX, nullptr, nullptr);
  }
  __device__ static void run(const QuantParams &p, const TmaDesc &tX,
                             const TmaDesc &tQ) {
    static_assert(TRANS && !DUAL,
                  "only a transposing cast takes its output's map");
    runPersistent(p, tX, &tQ, nullptr);
  }
  // A dual cast: p describes the result in input order, pT the transposed
  // one (whose FP8 tiles TMA stores through tQ).
  __device__ static void run(const QuantParams &p, const QuantParams &pT,
                             const TmaDesc &tX, const TmaDesc &tQ) {
    static_assert(DUAL, "only a dual cast writes two results");
    runPersistent(pT, tX, &tQ, &p);
  }

  // p: the result the pipeline is built around (the transposed one of a
  // dual cast); pIn: a dual cast's result in input order, else null.
  __device__ static void runPersistent(const QuantParams &p, const TmaDesc &tX,
                                       const TmaDesc *tQ,
                                       const QuantParams *pIn) {
    extern __shared__ __align__(1024) unsigned char ringRaw[];
    const u32 rawAddr = smemAddr(ringRaw);
    const u32 ringAddr = (rawAddr + 1023u) & ~1023u;
    SharedStorage &sh =
        *reinterpret_cast<SharedStorage *>(ringRaw + (ringAddr - rawAddr));
    const Ring ring{ringAddr + static_cast<u32>(kQuantStages * kTileBytes +
                                                Tile::kScratchBytes)};
    const int t = threadIdx.x;
    const int cg = t % kColThreads, rg = t / kColThreads;
    const int tilesX = (p.cols + 127) / 128;
    const int tilesY = (p.rows + 127) / 128;
    const int groupTiles = tilesX * tilesY;
    const int tiles = GROUPED ? p.groups * groupTiles : groupTiles;
    // A batched cast's matrix, and the tile's number within it.
    auto groupOf = [&](int tile) { return GROUPED ? tile / groupTiles : 0; };
    auto local = [&](int tile) {
      return GROUPED ? tile - groupOf(tile) * groupTiles : tile;
    };

    // The first column tile of `tile`'s panel; the panel is `width` tiles
    // wide (the last one may be narrower) and holds tiles first * tilesY on.
    auto panelOf = [&](int tile, int &width) {
      const int first = tile / (kPanel * tilesY) * kPanel;
      width = min(static_cast<int>(kPanel), tilesX - first);
      return first;
    };
    auto tileCol = [&](int tile) {
      tile = local(tile);
      if (!TRANS)
        return tile % tilesX;
      int width;
      const int first = panelOf(tile, width);
      return first + (tile - first * tilesY) % width;
    };
    auto tileRow = [&](int tile) {
      tile = local(tile);
      if (!TRANS)
        return tile / tilesX;
      int width;
      const int first = panelOf(tile, width);
      return (tile - first * tilesY) / width;
    };
    // Out-of-range parts of a box are zero-filled and still counted in the
    // transaction bytes, so every stage expects a full tile.
    auto fill = [&](int tile, int s) {
      mbarArriveExpectTx(ring.full(s), kTileBytes);
      if constexpr (GROUPED)
        tmaLoad3d(ringAddr + s * kTileBytes, tX, ring.full(s),
                  tileCol(tile) * 128, tileRow(tile) * 128, groupOf(tile));
      else
        tmaLoad2d(ringAddr + s * kTileBytes, tX, ring.full(s),
                  tileCol(tile) * 128, tileRow(tile) * 128);
    };

    // Under a programmatic launch (gridDepWait, ptx_sm90.cuh) the set-up
    // overlaps the previous kernel's tail; the first loads, and every
    // thread's stores, come after the wait.
    const int boss = kProducer ? kWorkers : 0; // issues the TMA operations
    gridDepLaunchDependents();
    if (t == boss) {
      if (kProducer)
        ring.init(1, kWorkers);
      else
        for (int s = 0; s < kQuantStages; ++s)
          mbarInit(ring.full(s), 1);
      fenceBarrierInit();
      tmaPrefetchDesc(tX);
      if (TRANS)
        tmaPrefetchDesc(*tQ);
    }
    gridDepWait();
    if (t == boss)
      for (int s = 0; s < kQuantStages; ++s)
        if (blockIdx.x + s * gridDim.x < tiles)
          fill(blockIdx.x + s * gridDim.x, s);
    __syncthreads();

    if (t >= kWorkers) {
      if (kProducer && t == boss)
        produce(p, tQ, ring, ringAddr, tiles, tileRow, tileCol, groupOf, fill);
      return;
    }

    Pipe st;
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      ring.waitFull(st);
      // A half or whole warp reads one 256/512-byte row of the stage:
      // conflict-free 16-byte reads.
      unsigned char *stage = sh.ring[st.index];
      uint4 v[RPT];
#pragma unroll
      for (int i = 0; i < RPT; ++i)
        v[i] = *reinterpret_cast<const uint4 *>(
            stage + (rg * RPT + i) * kRowBytes + cg * 16);
      // With a producer warp, a cast in input order now tells it that this
      // worker is done with the stage (castTile reuses the scratch behind
      // its own barriers). Without one, the workers meet: every worker has
      // its part of this tile in registers, so the stage may be overwritten
      // by castTile's transpose, and is done with the previous tile, whose
      // stage worker 0 refills (the stage just read holds this tile's
      // transpose until its store has read it).
      if (kProducer && !TRANS) {
        mbarArrive(ring.empty(st.index));
      } else if (!kProducer) {
        Tile::workerSync();
        const int next = tile + (kQuantStages - 1) * gridDim.x;
        if (t == 0 && tile != static_cast<int>(blockIdx.x) && next < tiles) {
          // The TMA write (async proxy) must follow the reads of that stage
          // (generic proxy), which the barrier ordered before this thread,
          // and the TMA store of the previous tile reads that stage.
          fenceProxyAsyncShared();
          bulkWaitRead0();
          fill(next, st.index == 0 ? kQuantStages - 1 : st.index - 1);
        }
      } else {
        Tile::workerSync();
      }
      // The result in input order goes straight from registers to global
      // memory; its block maxima and inverses use the scratch behind the
      // workers' barriers before the transposed cast reuses it.
      const int group = groupOf(tile);
      if constexpr (DUAL)
        InOrderTile::castTile(*pIn, tileRow(tile) * 128, tileCol(tile) * 128, v,
                              sh.scratch, nullptr, nullptr, 0, group);
      Tile::castTile(p, tileRow(tile) * 128, tileCol(tile) * 128, v, sh.scratch,
                     stage, tQ, ring.empty(st.index), group);
      st.advance();
    }
    if (TRANS && !kProducer && t == 0)
      bulkWait0();
  }

  // The producer warp's one thread, once every worker is done with tile j's
  // stage: store its transpose (a transposing cast), wait until the store
  // has read the stage, and refill the stage with tile j + kQuantStages. The
  // workers meanwhile go on with tiles j + 1 and j + 2.
  template <class RowF, class ColF, class GroupF, class FillF>
  __device__ static void produce(const QuantParams &p, const TmaDesc *tQ,
                                 const Ring &ring, u32 ringAddr, int tiles,
                                 RowF tileRow, ColF tileCol, GroupF groupOf,
                                 FillF fill) {
    const u64 keep = TRANS ? l2PolicyEvictLast() : 0;
    Pipe st;
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      ring.waitEmpty(st);
      const u32 src = ringAddr + st.index * kTileBytes + Tile::kSwizzledOffset;
      if constexpr (GROUPED)
        Tile::storeTile(p, *tQ, src, tileRow(tile) * 128, tileCol(tile) * 128,
                        groupOf(tile), keep);
      else if (TRANS)
        Tile::storeTile(p, *tQ, src, tileRow(tile) * 128, tileCol(tile) * 128,
                        keep);
      const int next = tile + kQuantStages * gridDim.x;
      if (next < tiles) {
        // The TMA write (async proxy) must follow the workers' accesses to
        // the stage (generic proxy), which the empty barrier ordered before
        // this thread.
        fenceProxyAsyncShared();
        if (TRANS)
          bulkWaitRead0();
        fill(next, st.index);
      }
      st.advance();
    }
    if (TRANS)
      bulkWait0();
  }
};

} // namespace bs

#endif // BLOCKSCALE_KERNELS_QUANTIZE_CUH
