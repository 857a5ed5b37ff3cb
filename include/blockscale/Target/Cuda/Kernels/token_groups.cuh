//===- token_groups.cuh - token groups in 128-token blocks -----*- CUDA -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The k-grouped weight gradient reduces over tokens sorted by expert: group
// g owns tokens [offs[g - 1], offs[g]) (offs[-1] = 0). Its FP8 operands are
// the transposes (tokens innermost), and a TMA box must start 16-byte
// aligned in its innermost dimension, so the group-aware cast
// (cast_grouped.cuh) writes every group from a multiple of 128 tokens, its
// last block zero-filled past the group's end: group g starts at token
// block b_g = sum_{i < g} ceil(size_i / 128) of the padded operands. The
// cast and the GEMM (gemm_kgrouped.cuh) both derive b_g from the offsets on
// the device, with this cursor, so nothing is synchronized on the host.
//
// The offsets are clipped as a running maximum in [0, limit]: group g is
// [r_{g-1}, r_g) with r_g = min(limit, max(0, offs[0..g])). Well-formed
// offsets (non-decreasing, offs[G - 1] <= limit) give exactly their groups;
// any others give disjoint groups in order inside [0, limit), so the padded
// blocks never exceed (limit + 128 G) / 128, the capacity the host
// allocates with limit = capacity - 128 G.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_KERNELS_TOKEN_GROUPS_CUH
#define BLOCKSCALE_KERNELS_TOKEN_GROUPS_CUH

namespace bs {

struct TokenGroupCursor {
  const int *offs;
  int numGroups, limit;
  int g = -1;         // current group (-1: before the first)
  int b0 = 0, nb = 0; // its first padded 128-token block and block count
  int r0 = 0, r1 = 0; // its tokens [r0, r1)

  // Reads nothing: the kernels construct it before their programmatic-launch
  // wait.
  __device__ __forceinline__ TokenGroupCursor(const int *o, int groups, int lim)
      : offs(o), numGroups(groups), limit(lim) {}

  __device__ __forceinline__ void reset() {
    g = -1;
    b0 = nb = r0 = r1 = 0;
  }
  // Moves to the next group; false past the last one.
  __device__ __forceinline__ bool next() {
    if (g + 1 >= numGroups)
      return false;
    ++g;
    b0 += nb;
    r0 = r1;
    r1 = min(max(__ldg(offs + g), r0), limit);
    nb = (r1 - r0 + 127) / 128;
    return true;
  }
  // Moves to group i (forward only; i < numGroups).
  __device__ __forceinline__ void to(int i) {
    while (g < i && next()) {
    }
  }
  // Moves to the group that holds padded block b, from the start again when
  // b lies before the current group; false when b lies past every group.
  __device__ __forceinline__ bool seek(int b) {
    if (g >= 0 && b < b0)
      reset();
    while (g < 0 || b >= b0 + nb)
      if (!next())
        return false;
    return true;
  }
  // Padded blocks of all groups (walks to the last group).
  __device__ __forceinline__ int totalBlocks() {
    while (next()) {
    }
    return b0 + nb;
  }
};

} // namespace bs

#endif // BLOCKSCALE_KERNELS_TOKEN_GROUPS_CUH
