//===- gemm_epilogue.cuh - writing a finished tile ---------------*- CUDA -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The accumulator fragment of m64nN (PTX ISA, "wgmma D matrix fragment"):
// register 4j + 2h + e of a thread holds row warp * 16 + lane / 4 + 8h,
// column 8j + 2 * (lane % 4) + e, i.e. rows r0 and r0 + 8, columns c0 and
// c0 + 1 of each 8-column group j.
//
// Two ways out:
//  * store: convert, write the fragment to 128/64/32-byte swizzled shared
//    memory (bank-conflict free) and issue TMA stores, or TMA reduce-adds for
//    C += AB, which run while the next tile's K loop starts; the box is
//    clipped at the edges of C;
//  * storeShare: for the cluster-summed splits, each CTA stores its share of
//    the columns straight from registers (its share is every KSPLIT-th
//    8-column group, too scattered for a TMA box).
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_KERNELS_GEMM_EPILOGUE_CUH
#define BLOCKSCALE_KERNELS_GEMM_EPILOGUE_CUH

#include "blockscale/gemm_config.cuh"

namespace bs {

template <class Cfg> struct GemmEpilogue {
  static constexpr int BN = Cfg::BN, KSPLIT = Cfg::KSPLIT;
  static constexpr bool OUT_F32 = Cfg::OUT_F32, ACCUMULATE = Cfg::ACCUMULATE;
  static constexpr int kConsumers = Cfg::kConsumers, kWaves = Cfg::kWaves,
                       kWaveRows = Cfg::kWaveRows, kAcc = Cfg::kAcc,
                       kOutBytes = Cfg::kOutBytes, kSwz = Cfg::kSwz,
                       kChunkCols = Cfg::kChunkCols, kChunks = Cfg::kChunks,
                       kChunkBytes = Cfg::kChunkBytes;

  // This warpgroup's first 64-row staging slab; each (wave, warpgroup)
  // stages its 64 rows in a slab of its own.
  __device__ __forceinline__ static u32 slabBase(u32 base, int wg) {
    return base + Cfg::kOffC + wg * (kChunks * kChunkBytes);
  }

  __device__ static void store(u32 cBase0, int wg, int tid, int r0, int c0,
                               int m0, int n0,
                               const float (&acc)[kWaves][kAcc],
                               const TmaDesc &tC) {
    auto slab = [&](int v) {
      return cBase0 + v * kConsumers * (kChunks * kChunkBytes);
    };
    // The previous tile's TMA store must have read these slabs.
    if (tid == 0)
      bulkWaitRead0();
    namedBarSync(1 + wg, 128);
    if constexpr (Cfg::kAlignedK && !OUT_F32) {
      // bf16 through stmatrix: one m8n8.x4 per two 8-column groups stores
      // the warp's 16 rows of both (matrices: group j rows 0-7, rows 8-15,
      // group j + 1 rows 0-7, rows 8-15); lanes 8q..8q+7 name the rows of
      // matrix q, each row's 8 columns one 16-byte unit of the swizzled
      // slab.
      const int lane = tid % 32, q = lane / 8;
      const int row = (tid / 32) * 16 + (q & 1) * 8 + lane % 8;
      const int swz = ((row * kSwz) >> 7) & (kSwz / 16 - 1);
#pragma unroll
      for (int v = 0; v < kWaves; ++v) {
        const u32 rowBase = slab(v) + row * kSwz;
#pragma unroll
        for (int j = 0; j < BN / 8; j += 2) {
          const int col = 8 * (j + (q >> 1));
          const int chunk = col / kChunkCols;
          const int unit = (col % kChunkCols) * kOutBytes / 16;
          const u32 addr = rowBase + chunk * kChunkBytes + ((unit ^ swz) << 4);
          asm volatile(
              "stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, "
              "%4};" ::"r"(addr),
              "r"(packBf16x2(acc[v][4 * j + 0], acc[v][4 * j + 1])),
              "r"(packBf16x2(acc[v][4 * j + 2], acc[v][4 * j + 3])),
              "r"(packBf16x2(acc[v][4 * j + 4], acc[v][4 * j + 5])),
              "r"(packBf16x2(acc[v][4 * j + 6], acc[v][4 * j + 7]))
              : "memory");
        }
      }
    } else {
#pragma unroll
    for (int v = 0; v < kWaves; ++v) {
      const u32 cBase = slab(v);
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
            tmaReduceAdd2d(tC, slab(v) + c * kChunkBytes, n0 + c * kChunkCols,
                           row0);
          else
            tmaStore2d(tC, slab(v) + c * kChunkBytes, n0 + c * kChunkCols,
                       row0);
        }
      }
      bulkCommit();
    }
  }

  // The fragments i with i % KSPLIT == rank (float4 i holds rows r0 and
  // r0 + 8, columns 8 i + c0 and + 1) straight to C, clipped at its edges.
  __device__ static void storeShare(const GemmParams &p, int wg, int rank,
                                    int m0, int n0, int r0, int c0,
                                    const float (&acc)[kWaves][kAcc]) {
    constexpr int kVec = kAcc / 4;
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
  }
};

} // namespace bs

#endif // BLOCKSCALE_KERNELS_GEMM_EPILOGUE_CUH
