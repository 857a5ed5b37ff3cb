//===- Gemm.h - descriptions and arguments of GEMMs and casts ---*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_RUNTIME_GEMM_H
#define BLOCKSCALE_RUNTIME_GEMM_H

#include "blockscale/Runtime/KernelSpec.h"
#include "blockscale/Runtime/ScaleLayout.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace blockscale {

/// A blockwise-scaled FP8 GEMM, C(M, N) = A(M, K) @ B(K, N) with A row-major
/// (1x128 scales) and B column-major, i.e. given as N rows of K (128x128
/// scales for fwd/dgrad, 128x1 for wgrad). See docs/Runtime.md.
struct GemmDesc {
  GemmForm form = GemmForm::Fwd;
  int64_t m = -1; // -1: dynamic (pass M at launch); plan for mHint
  int64_t n = 0, k = 0;
  Fp8Type a = Fp8Type::E4M3, b = Fp8Type::E4M3;
  DType out = DType::BF16;
  bool accumulate = false; // C += A @ B (f32 output only)
  int64_t mHint = 4096;
  std::string forceTile; // e.g. "bm=128,bn=128,stages=4"; empty = model
  int numSMs = 0;        // 0: the current device's, or kDefaultNumSMs
  unsigned debug = 0;    // DebugOption flags compiled into the kernel

  std::string key() const;
  llvm::Error validate() const;
};

/// Device pointers and run-time sizes of one GEMM launch.
struct GemmArgs {
  const void *a = nullptr;  // (M, K) FP8, row stride lda
  const float *sa = nullptr; // (M, ceil(K/128)) M-contiguous, stride ldsa
  const void *b = nullptr;  // (N, K) FP8 row-major, row stride ldb
  const float *sb = nullptr; // fwd: (Kb, Nb) strides sbStrideK/N; wgrad:
                             // (Kb, N) N-contiguous, stride ldsb
  void *c = nullptr;         // (M, N) row-major, row stride ldc
  int64_t m = -1; // the kernel's M; required when dynamic, else -1 or that M
  int64_t lda = 0, ldb = 0, ldc = 0;   // 0: dense
  int64_t ldsa = 0;                    // 0: round_up(M, 4)
  int64_t ldsb = 0;                    // wgrad: 0 -> round_up(N, 4)
  int64_t sbStrideK = 0, sbStrideN = 0; // fwd: 0,0 -> 1, round_up(Kb, 4)
  void *workspace = nullptr; // split-K scratch, nullptr: runtime-owned
  size_t workspaceBytes = 0;
};

/// An m-grouped GEMM (mixture-of-experts forward and dgrad): G groups of
/// rows of A, group g multiplied by its own B[g] with the dense forward
/// recipe (A 1x128, B[g] 128x128). The group sizes are device int32s read
/// by the kernel (see Grouping and docs/Runtime.md):
///   contiguous: A (M, K), C (M, N), groups = cumulative end offsets (G);
///   masked:     A (G, mMax, K), C (G, mMax, N), groups = rows per group.
/// B is (G, N, K) K-contiguous, its scales (G, ceil(N/128), ceil(K/128)).
///
/// A k-grouped GEMM (KContiguous; the mixture-of-experts weight gradient,
/// dW_g = dY_g^T X_g) instead splits the reduction: group g owns tokens
/// [offs[g-1], offs[g]) and C[g] (m, n) = A[:, tokens of g] @ B[:, tokens of
/// g]^T, with A (m, capacity) and B (n, capacity) FP8 as the group-aware
/// cast writes them (GroupedQuantDesc: every group from a multiple of 128
/// tokens), A 1x128 and B 128x1 scales along tokens, C (G, m, n). The
/// tokens (the capacity) are given at launch; k stays 0.
struct GroupedGemmDesc {
  Grouping grouping = Grouping::Contiguous;
  int64_t groups = 0;
  int64_t n = 0, k = 0;
  int64_t mMax = 0; // masked: rows per group slot (ignored when contiguous)
  Fp8Type a = Fp8Type::E4M3, b = Fp8Type::E4M3;
  DType out = DType::BF16;
  /// Typical rows per group, for the tile choice (masked: mMax if 0;
  /// k-grouped: typical tokens per group).
  int64_t mPerGroupHint = 0;
  std::string forceTile; // e.g. "bm=128,bn=128,stages=5"; empty = rule
  int numSMs = 0;        // 0: the current device's, or kDefaultNumSMs
  unsigned debug = 0;    // DebugOption flags compiled into the kernel
  /// k-grouped only: rows of each group's C, and C += (f32 output).
  int64_t m = 0;
  bool accumulate = false;

  std::string key() const;
  llvm::Error validate() const;
};

/// Device pointers and run-time sizes of one grouped launch (all dense).
struct GroupedGemmArgs {
  const void *a = nullptr;     // (rows, K) FP8 row-major
  const float *sa = nullptr;   // (rows, ceil(K/128)) rows-contiguous, ldsa
  const void *b = nullptr;     // (G, N, K) FP8
  const float *sb = nullptr;   // (G, ceil(N/128), ceil(K/128)), strides below
  const int32_t *groups = nullptr; // G int32s on the device
  void *c = nullptr;           // (rows, N) row-major
  /// Contiguous: M, the rows of A and C (required). Masked: -1 or G * mMax.
  int64_t m = -1;
  int64_t ldsa = 0; // 0: round_up(rows, 4)
  /// Element strides of the B scales; all 0: contiguous (G, Nb, Kb).
  int64_t sbStrideG = 0, sbStrideN = 0, sbStrideK = 0;
  /// k-grouped: A (m, capacity) and B (n, capacity) FP8 row-major, capacity
  /// a multiple of 128 and at least 128 G (groupedTokenCapacity); A scales
  /// (capacity / 128 blocks of m, m contiguous, stride ldsa), B scales
  /// likewise (stride ldsb; 0: round_up(n, 4)); C (G, m, n) row-major;
  /// groups = offs. The offsets are clipped to capacity - 128 G, as the
  /// group-aware cast clips them.
  int64_t capacity = 0;
  int64_t ldsb = 0;
};

/// Tokens of the padded operands of a k-grouped GEMM over `tokens` tokens
/// in `groups` groups: room for every group to start at a multiple of 128
/// whatever the sizes (each group pads fewer than 128 tokens).
inline int64_t groupedTokenCapacity(int64_t tokens, int64_t groups) {
  return (tokens + 127) / 128 * 128 + 128 * groups;
}

/// The group-aware cast of a k-grouped GEMM's operands: x (tokens, cols)
/// row-major, tokens sorted by group (offs as GroupedGemmDesc's), to q
/// (cols, capacity) FP8 row-major -- x^T with group g's tokens from padded
/// token block b_g = sum_{i<g} ceil(size_i / 128), zero past the group's end
/// in its last block -- and one decode scale per column per 128-token block
/// (the 1x128 recipe of q's rows), at s[block * ldScale + col]. Blocks past
/// the last group's are not written.
struct GroupedQuantDesc {
  DType in = DType::BF16;
  Fp8Type out = Fp8Type::E4M3;
  int64_t cols = 0;
  int64_t groups = 0;
  unsigned debug = 0; // DebugHang

  std::string key() const;
  llvm::Error validate() const;
};

struct GroupedQuantArgs {
  const void *x = nullptr;
  void *q = nullptr;
  float *s = nullptr;
  const int32_t *offs = nullptr; // G int32 on the device
  int64_t tokens = -1;           // rows of x (required)
  int64_t capacity = 0;          // 0: groupedTokenCapacity(tokens, G)
  int64_t ldx = 0;               // 0: cols
  int64_t ldScale = 0;           // 0: round_up(cols, 4)
};

/// A blockwise FP8 cast (see blockscale.quantize).
struct QuantDesc {
  DType in = DType::BF16;
  Fp8Type out = Fp8Type::E4M3;
  /// Logical recipe of the result: "1x128", "128x128", "128x1".
  int blockRows = 1, blockCols = 128;
  bool transpose = false;   // logical result is input^T
  bool colMajor = false;    // physical order of the result
  int64_t rows = -1, cols = 0; // input (rows may be dynamic: -1)
  unsigned debug = 0;          // DebugOption flags compiled into the kernel
  /// Also write the second result quantize(x, recipe, layout, !transpose)
  /// from the same read of the input (blockscale.quantize_dual): the first
  /// result must be in input order (writesTransposed() false) with 1x128 or
  /// 128x128 blocks in the input's frame; the second is written transposed.
  bool dual = false;
  /// A batched dual cast (blockscale.quantize_grouped_weight_dual): x is a
  /// stack of matrices of rows x cols, e.g. expert weights (G, N, K), and
  /// each is cast on its own into both results, (G, rows, cols) and (G,
  /// cols, rows), with tiles and blocks that never straddle two matrices.
  /// 0: a single matrix; -1: the count is given at launch
  /// (QuantArgs::groups); > 0: that many. Needs dual and 128x128 blocks.
  int64_t groups = 0;

  std::string key() const;
  llvm::Error validate() const;
  bool writesTransposed() const { return transpose != colMajor; }
};

struct QuantArgs {
  const void *x = nullptr;
  void *q = nullptr;
  float *s = nullptr;
  int64_t rows = -1;        // required when dynamic
  int64_t ldx = 0, ldq = 0; // 0: dense
  int64_t ldScale = 0;      // 0: round_up(contiguous extent, 4)
  /// The second result of a dual cast (QuantDesc::dual) and its scales.
  void *qT = nullptr;
  float *sT = nullptr;
  int64_t ldqT = 0;     // 0: dense (rows)
  int64_t ldScaleT = 0; // 0: round_up(contiguous extent, 4)
  /// A batched cast (QuantDesc::groups): the matrices (required when the
  /// description's count is dynamic) and the element distances from one
  /// matrix to the next of x, q, s, qT and sT (0: packed, i.e. rows * ldx,
  /// rows * ldq, the scale allocation of one matrix, cols * ldqT, ...).
  int64_t groups = 0;
  int64_t groupStrideX = 0, groupStrideQ = 0, groupStrideScale = 0;
  int64_t groupStrideQT = 0, groupStrideScaleT = 0;
};

} // namespace blockscale

#endif
