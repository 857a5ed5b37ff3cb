//===- cast_grouped.cuh - transposed FP8 cast of token groups -*- CUDA -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The operands of the k-grouped weight gradient (gemm_kgrouped.cuh): x
// (tokens, cols), 16-bit or f32, tokens sorted by group, is cast to q
// (cols, capacity) FP8, its transpose, with one decode scale per column per
// 128-token block, the blocks restarting at every group (dY^T then has the
// 1x128 recipe along tokens and X^T the 128x1 recipe of the dense weight
// gradient, and any group size works). Group g's tokens land at padded
// block b_g (token_groups.cuh): its last block is zero past the group's end,
// and blocks past the last group's are not written (the GEMM never reads
// them).
//
// The persistent loop is the transposing cast's (quantize.cuh) over padded
// blocks instead of input rows: a CTA's 256 workers cast 128x128 tiles
// (cast_tile.cuh, 128x1 blocks) from a TMA-filled ring, and a producer warp
// loads each tile from its group's first token plus a multiple of 128 (a
// TMA box may start at any row: the input's innermost dimension is its
// columns) and stores the transposed FP8 tile at its padded block, which is
// 128-aligned in the output's innermost dimension. The workers zero the
// rows of a tile past its group's end (the next group's tokens, or TMA's
// zero fill past the input) before the block maxima.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_KERNELS_CAST_GROUPED_CUH
#define BLOCKSCALE_KERNELS_CAST_GROUPED_CUH

#include "blockscale/cast_tile.cuh"
#include "blockscale/pipeline.cuh"
#include "blockscale/token_groups.cuh"

namespace bs {

template <class In, int FMT> struct GroupedQuantizeTile {
  static constexpr int kInBytes = 16 / In::kVec;
  static_assert(quantHasProducerWarp(kInBytes, 128, true),
                "128x1 casts have a producer warp");
  using Tile = CastTile<In, FMT, 128, 1, /*TRANS=*/true, /*PRODUCER=*/true>;
  static constexpr int kWorkers = Tile::kWorkers, RPT = Tile::RPT,
                       kColThreads = Tile::kColThreads,
                       kTileBytes = Tile::kTileBytes,
                       kRowBytes = Tile::kRowBytes;
  static constexpr int kThreads = quantThreads(kInBytes, 128, true);
  enum : int { kMinCtas = quantCtasPerSM(kInBytes) };
  // Panels of column tiles, walked down the blocks inside a panel, as the
  // transposing cast does (longer runs of each transposed row).
  enum : int { kPanel = 8 };

  using Pipe = PipelineState<kQuantStages>;
  using Ring = MbarRing<kQuantStages>; // full: landed; empty: workers done

  struct SharedStorage {
    unsigned char ring[kQuantStages][kTileBytes];
    unsigned char scratch[Tile::kScratchBytes];
    u64 bars[2 * kQuantStages];
    int4 info[kQuantStages]; // each stage's tile: block, column tile, tokens
    int tiles[4];            // the CTA's tile count (tiles[0])
  };
  static_assert(sizeof(SharedStorage) + 1024 == groupedQuantSmemBytes(kInBytes),
                "host and device disagree on the shared memory");

  // Tiles of the padded blocks that hold tokens, in panels. Only the
  // producer thread walks the groups (the workers read each stage's tile
  // from shared memory: the 16-bit workers' registers are at their budget).
  struct Walk {
    TokenGroupCursor cur;
    int tilesX, blocks;
    __device__ __forceinline__ Walk(const GroupedQuantParams &p)
        : cur(p.offs, p.numGroups, p.limit), tilesX((p.q.cols + 127) / 128),
          blocks(0) {}
    // After the programmatic-launch wait: the tiles of the blocks that hold
    // tokens.
    __device__ __forceinline__ int start(const GroupedQuantParams &p) {
      blocks = min(cur.totalBlocks(), p.blocks);
      cur.reset();
      return tilesX * blocks;
    }
    // Padded block, column tile, input row of the block's first token and
    // its tokens (1..128) of `tile`.
    __device__ __forceinline__ int4 tileOf(int tile) {
      const int first = tile / (kPanel * blocks) * kPanel;
      const int width = min(static_cast<int>(kPanel), tilesX - first);
      const int local = tile - first * blocks;
      const int blk = local / width;
      cur.seek(blk);
      const int row = cur.r0 + (blk - cur.b0) * 128;
      return make_int4(blk, first + local % width, row, min(128, cur.r1 - row));
    }
  };

  __device__ static void run(const GroupedQuantParams &p, const TmaDesc &tX,
                             const TmaDesc &tQ) {
    extern __shared__ __align__(1024) unsigned char ringRaw[];
    const u32 rawAddr = smemAddr(ringRaw);
    const u32 ringAddr = (rawAddr + 1023u) & ~1023u;
    SharedStorage &sh =
        *reinterpret_cast<SharedStorage *>(ringRaw + (ringAddr - rawAddr));
    const Ring ring{ringAddr + static_cast<u32>(kQuantStages * kTileBytes +
                                                Tile::kScratchBytes)};
    const int t = threadIdx.x;
    const int rg = t / kColThreads;
    const int cg = t % kColThreads;

    const int boss = kWorkers; // the producer warp's first thread
    gridDepLaunchDependents();
    if (t == boss) {
      ring.init(1, kWorkers);
      fenceBarrierInit();
      tmaPrefetchDesc(tX);
      tmaPrefetchDesc(tQ);
    }
    // The offsets are global memory: read only after the wait.
    gridDepWait();
    // Each stage's tile goes into shared memory before its load: the
    // workers read it once the stage's barrier has completed.
    Walk walk(p);
    auto fill = [&](int tile, int s) {
      const int4 w = walk.tileOf(tile);
      sh.info[s] = w;
      mbarArriveExpectTx(ring.full(s), kTileBytes);
      tmaLoad2d(ringAddr + s * kTileBytes, tX, ring.full(s), w.y * 128, w.z);
    };
    if (t == boss) {
      const int tiles = walk.start(p);
      sh.tiles[0] = tiles;
      for (int s = 0; s < kQuantStages; ++s)
        if (blockIdx.x + s * gridDim.x < tiles)
          fill(blockIdx.x + s * gridDim.x, s);
    }
    __syncthreads();
    if (t >= kWorkers) {
      if (t == boss)
        produce(p, tQ, ring, ringAddr, sh.tiles[0], sh, fill);
      return;
    }
    const int tiles = sh.tiles[0];

    Pipe st;
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      ring.waitFull(st);
      unsigned char *stage = sh.ring[st.index];
      // This thread's rows of the tile that lie past its group's end.
      const int past = sh.info[st.index].w - rg * RPT;
      uint4 v[RPT];
#pragma unroll
      for (int i = 0; i < RPT; ++i)
        v[i] = i < past ? *reinterpret_cast<const uint4 *>(
                              stage + (rg * RPT + i) * kRowBytes + cg * 16)
                        : make_uint4(0u, 0u, 0u, 0u);
      // Every worker has its part of the tile in registers before castTile
      // writes the transpose over the stage.
      Tile::workerSync();
      const int blk = sh.info[st.index].x, cx = sh.info[st.index].y;
      Tile::castTile(p.q, blk * 128, cx * 128, v, sh.scratch, stage, &tQ,
                     ring.empty(st.index));
      st.advance();
    }
  }

  // The producer warp's thread, once every worker is done with a tile's
  // stage: store its transpose at the tile's padded block, wait until the
  // store has read the stage, and refill it kQuantStages tiles ahead.
  template <class FillF>
  __device__ static void produce(const GroupedQuantParams &p, const TmaDesc &tQ,
                                 const Ring &ring, u32 ringAddr, int tiles,
                                 SharedStorage &sh, FillF &fill) {
    const u64 keep = l2PolicyEvictLast();
    Pipe st;
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      ring.waitEmpty(st);
      const int4 w = sh.info[st.index];
      Tile::storeTile(p.q, tQ,
                      ringAddr + st.index * kTileBytes + Tile::kSwizzledOffset,
                      w.x * 128, w.y * 128, keep);
      const int next = tile + kQuantStages * gridDim.x;
      if (next < tiles) {
        // The TMA write (async proxy) must follow the workers' accesses to
        // the stage (generic proxy), which the empty barrier ordered before
        // this thread, and the store must have read the stage.
        fenceProxyAsyncShared();
        bulkWaitRead0();
        fill(next, st.index);
      }
      st.advance();
    }
    bulkWait0();
  }
};

} // namespace bs

#endif // BLOCKSCALE_KERNELS_CAST_GROUPED_CUH
