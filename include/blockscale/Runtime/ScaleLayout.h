//===- ScaleLayout.h - where the kernels read decode scales -----*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The one rule for the physical layout of blockwise decode scales, used by
// --blockscale-pad-scales (which writes it into the IR), the runtime's
// launch defaults and casts, the C API and the Python package (through the
// C API). Scales of a logical (rows, cols) tensor quantized in blocks of
// (blockRows, blockCols) form a logical (ceil(rows / blockRows),
// ceil(cols / blockCols)) f32 tensor:
//  * 1x128 (A of every GEMM): dim 0 contiguous, so that one TMA box reads
//    one K-block column of M scales;
//  * 128x128 (B of fwd/dgrad): dim 0 (K blocks) contiguous, cuBLASLt's
//    layout for BLK128x128 scales, so the same buffers work with cuBLASLt
//    (the GEMM reads them as scalars through any strides);
//  * 128x1 (B of wgrad): dim 1 (N) contiguous, one K-block row of N scales
//    per TMA box;
// and the leading stride rounded up to kScaleAlign elements (16 bytes: TMA
// needs 16-byte global strides).
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_RUNTIME_SCALELAYOUT_H
#define BLOCKSCALE_RUNTIME_SCALELAYOUT_H

#include "llvm/Support/Error.h"

#include <cstdint>

namespace blockscale {

constexpr int kScaleAlign = 4;

/// Whether the logical scale tensor of a recipe is stored row-major (dim 1
/// contiguous); false: column-major (dim 0 contiguous). Recipes: 1x128,
/// 128x1, 128x128 (false for anything else).
bool scaleRowMajor(int blockRows, int blockCols);
bool isBlockRecipe(int blockRows, int blockCols);

/// Logical shape, physical strides (elements) and f32 count to allocate of
/// the scales of a (rows, cols) tensor; ld = 0 takes the default leading
/// stride (the contiguous extent rounded up to kScaleAlign). Errors: not a
/// recipe, negative sizes, ld smaller than the contiguous extent or not a
/// multiple of kScaleAlign, sizes whose allocation overflows 64 bits.
struct ScaleGeometry {
  int64_t rows = 0, cols = 0; // logical scale shape
  int64_t strideRow = 0, strideCol = 0;
  int64_t allocElements = 0;
};
llvm::Expected<ScaleGeometry> scaleGeometry(int blockRows, int blockCols,
                                            int64_t rows, int64_t cols,
                                            int64_t ld = 0);

} // namespace blockscale

#endif
