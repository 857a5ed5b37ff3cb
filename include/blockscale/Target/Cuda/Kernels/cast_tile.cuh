//===- cast_tile.cuh - FP8 cast of one 128x128 tile --------------*- CUDA -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// 256 workers cast a 128x128 tile of a row-major input to FP8 with one f32
// decode scale per BR x BC block (1x128, 128x1 or 128x128, always aligned
// to the tile), writing the result in the same order or transposed, so that
// the GEMM kernels read it without any copy:
//
//   s   = max(amax, 1e-12) / fp8_max               (decode scale, stored)
//   q   = cvt.rn.satfinite(x * (fp8_max / max(amax, 1e-12)))
//
// Each worker holds RPT consecutive rows x VEC consecutive columns of the
// tile as 16-byte vectors (a half or full warp covers a 256/512-byte row
// segment) and keeps them packed until they are used. A transposed result
// goes through 16 KB of shared memory in 8-byte units whose index is
// XOR-swizzled (swizzle()), so that the scattered writes and the row reads
// are bank-conflict free; from there it is copied in 16-byte row segments
// into TMA's 128-byte swizzle and stored as one box.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_KERNELS_CAST_TILE_CUH
#define BLOCKSCALE_KERNELS_CAST_TILE_CUH

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

// PRODUCER: the CTA has, besides its 256 workers, a warp that issues its
// TMA operations (quantHasProducerWarp): the workers then synchronize among
// themselves only, and a transposing cast hands its swizzled tile to that
// warp instead of storing it.
template <class In, int FMT, int BR, int BC, bool TRANS, bool PRODUCER>
struct CastTile {
  static_assert((BR == 1 && BC == 128) || (BR == 128 && BC == 1) ||
                    (BR == 128 && BC == 128),
                "block shapes of the FP8 recipe");
  static constexpr int kWorkers = kQuantWorkers; // threads that hold the tile
  static constexpr int VEC = In::kVec;
  static constexpr int kColThreads = 128 / VEC;             // per tile row
  static constexpr int kRowGroups = kWorkers / kColThreads; // 16 or 8
  static constexpr int RPT = 128 / kRowGroups;              // 8 or 16 rows
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

  // A barrier among the workers only: the producer warp never joins one
  // after it has started the ring.
  __device__ __forceinline__ static void workerSync() {
    if (PRODUCER)
      namedBarSync(1, kWorkers);
    else
      __syncthreads();
  }

  // One TMA store of a transposed 128x128 FP8 tile (128B-swizzled at src),
  // with L2 policy `keep` (an evict_last policy) when p.keepResultInL2.
  __device__ static void storeTile(const QuantParams &p, const TmaDesc &tQ,
                                   u32 src, int rowBase, int colBase,
                                   u64 keep) {
    if (p.keepResultInL2)
      tmaStore2dHint(tQ, src, rowBase, colBase, keep);
    else
      tmaStore2d(tQ, src, rowBase, colBase);
    bulkCommit();
  }
  // The same into matrix `group` of a batched cast's 3-D output map.
  __device__ static void storeTile(const QuantParams &p, const TmaDesc &tQ,
                                   u32 src, int rowBase, int colBase, int group,
                                   u64 keep) {
    if (p.keepResultInL2)
      tmaStore3dHint(tQ, src, rowBase, colBase, group, keep);
    else
      tmaStore3d(tQ, src, rowBase, colBase, group);
    bulkCommit();
  }

  // The 8-byte unit u of row c of a transposed tile is at unit u ^
  // swizzle(c) of that row. Writes: the lanes of a warp write one unit of
  // 16 or 32 rows c that differ in c / 8, which spreads them over all
  // banks. Reads: 8 lanes read 8 units of one row, a warp rows c..c+3; the
  // parity flip puts rows c, c + 1 and c + 2, c + 3 into opposite halves of
  // the banks (2 wavefronts per warp instead of 4).
  __device__ __forceinline__ static int swizzle(int c) {
    return ((c >> 3) & 15) ^ ((c >> 1) & 1);
  }

  // Scales and FP8 conversion of one 128x128 tile whose elements this
  // thread holds in v (RPT rows x VEC columns, zero outside the input), with
  // kScratchBytes of shared memory at `scratch`. A transposed result goes
  // out through the 16 KB at `qs` and its swizzled copy at qs +
  // kSwizzledOffset: with a producer warp, each worker arrives on
  // `readyBar` once its part of that copy is written and fenced, and the
  // producer stores it; without one, worker 0 stores it. `group`: the
  // matrix of a batched cast (QuantParams::groups), whose scales and result
  // in input order start p.gss and p.gsq elements further per matrix.
  __device__ static void castTile(const QuantParams &p, int rowBase,
                                  int colBase, const uint4 (&v)[RPT],
                                  unsigned char *scratch, unsigned char *qs,
                                  const TmaDesc *tQ, u32 readyBar,
                                  int group = 0) {
    float *const sG = p.s + group * p.gss;
    auto red = reinterpret_cast<float(*)[128]>(scratch);
    float *blockInv = reinterpret_cast<float *>(scratch + kInvOffset);

    const int t = threadIdx.x;
    const int cg = t % kColThreads, rg = t / kColThreads;
    const int lane = t % 32, warp = t / 32;
    const int col0 = colBase + cg * VEC; // first of this thread's columns
    const int row0 = rowBase + rg * RPT; // first of this thread's rows
    const bool colOk = col0 < p.cols;    // cols is a multiple of VEC

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
        sG[static_cast<long long>(row0 + cg) * p.ssr +
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
          sG[static_cast<long long>(rowBase / 128) * p.ssr +
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
        sG[static_cast<long long>(rowBase / 128) * p.ssr +
           static_cast<long long>(colBase / 128) * p.ssc] = a / kFp8Max;
      }
      workerSync();
      inv[0] = blockInv[0];
    }

    auto scaleOf = [&](int i, int j) -> float {
      return BR == 1 ? inv[i] : (BC == 1 ? inv[j] : inv[0]);
    };

    if (!TRANS) {
      unsigned char *q = static_cast<unsigned char *>(p.q) + group * p.gsq;
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
    // The TMA store (async proxy) reads what these generic-proxy writes put
    // in shared memory: each writing thread fences.
    fenceProxyAsyncShared();
    if (PRODUCER) {
      mbarArrive(readyBar);
      return;
    }
    workerSync();
    if (t == 0)
      storeTile(p, *tQ, smemAddr(tq), rowBase, colBase, l2PolicyEvictLast());
  }
};

} // namespace bs

#endif // BLOCKSCALE_KERNELS_CAST_TILE_CUH
