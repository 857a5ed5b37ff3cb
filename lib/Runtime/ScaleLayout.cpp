//===- ScaleLayout.cpp - where the kernels read decode scales ---*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "blockscale/Runtime/ScaleLayout.h"
#include "blockscale/Runtime/Error.h"

#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"

using namespace blockscale;

bool blockscale::isBlockRecipe(int br, int bc) {
  return (br == 1 && bc == 128) || (br == 128 && bc == 1) ||
         (br == 128 && bc == 128);
}

bool blockscale::scaleRowMajor(int br, int bc) { return br == 128 && bc == 1; }

llvm::Expected<ScaleGeometry> blockscale::scaleGeometry(int br, int bc,
                                                        int64_t rows,
                                                        int64_t cols,
                                                        int64_t ld) {
  if (!isBlockRecipe(br, bc))
    return invalidArgument(llvm::formatv(
        "expected a 1x128, 128x1 or 128x128 recipe but got {0}x{1}", br, bc));
  if (rows < 0 || cols < 0)
    return invalidArgument(llvm::formatv(
        "expected a tensor of sizes >= 0 but got {0}x{1}", rows, cols));
  ScaleGeometry g;
  g.rows = rows / br + (rows % br != 0);
  g.cols = cols / bc + (cols % bc != 0);
  bool rowMajor = scaleRowMajor(br, bc);
  int64_t contiguous = rowMajor ? g.cols : g.rows;
  int64_t outer = rowMajor ? g.rows : g.cols;
  if (ld == 0) {
    std::optional<int64_t> up = llvm::checkedAdd<int64_t>(contiguous,
                                                          kScaleAlign - 1);
    ld = up ? *up / kScaleAlign * kScaleAlign : -1;
  } else if (ld < contiguous || ld % kScaleAlign) {
    return invalidArgument(llvm::formatv(
        "expected the scales' leading stride to be >= {0} (the contiguous "
        "extent) and a multiple of {1} (16 bytes, TMA) but got {2}",
        contiguous, kScaleAlign, ld));
  }
  std::optional<int64_t> alloc =
      ld < 0 ? std::nullopt : llvm::checkedMul(ld, outer);
  if (!alloc || *alloc > (int64_t(1) << 60))
    return invalidArgument(llvm::formatv(
        "the scales of a {0}x{1} tensor with leading stride {2} overflow "
        "64-bit sizes",
        rows, cols, ld));
  g.strideRow = rowMajor ? ld : 1;
  g.strideCol = rowMajor ? 1 : ld;
  g.allocElements = *alloc;
  return g;
}
