//===- FuzzCApi.cpp - libFuzzer: the C API's descriptors -----------------===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The C API's entry surface without a GPU (issue 31): the fuzz input fills
// the fields of a bs_gemm_desc_t, a bs_quant_desc_t and the scale-geometry
// arguments byte for byte (struct_size included), and every call that takes
// them runs: bs_gemm_source (validation, the MLIR pipeline, the emitter),
// bs_quant_source, bs_quant_scale_geometry, bs_scale_geometry. Errors are
// expected; a crash, a sanitizer report, a leak or a hang is a finding, and
// so is a success whose outputs are inconsistent (a scale geometry with
// negative sizes or an allocation smaller than its extent). No kernel is
// compiled (NVRTC would make each input take a second).
//
//===----------------------------------------------------------------------===//

#include "blockscale-c/blockscale.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

template <class T> static void fill(T &t, const uint8_t *&data, size_t &size) {
  size_t n = size < sizeof(T) ? size : sizeof(T);
  std::memcpy(&t, data, n);
  data += n;
  size -= n;
}

static void checkGeometry(const int64_t g[5]) {
  // Sizes and strides >= 0, and the allocation covers the last element.
  if (g[0] < 0 || g[1] < 0 || g[2] < 0 || g[3] < 0 || g[4] < 0)
    std::abort();
  if (g[0] > 0 && g[1] > 0 &&
      (g[0] - 1) * g[2] + (g[1] - 1) * g[3] >= g[4])
    std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bs_gemm_desc_t g;
  bs_gemm_desc_init(&g);
  const char *tiles[] = {nullptr, "bm=128,bn=128", "bm=256,bn=128,cluster=2",
                         "bm=128,bn=64,splits=4,ksplit=4", "stages=99",
                         "bm=64,bn=16,splits=16", "garbage"};
  uint8_t knob = size ? data[0] : 0;
  // Keep struct_size right most of the time so the fields are reached.
  fill(g, data, size);
  if ((knob & 3) != 0)
    g.struct_size = sizeof(g);
  g.force_tile = tiles[knob % 7]; // a pointer from the input would be wild
  char buf[64];
  size_t need = 0;
  bs_gemm_source(&g, nullptr, 0, &need);
  bs_gemm_source(&g, buf, sizeof(buf), nullptr);

  bs_quant_desc_t q;
  bs_quant_desc_init(&q);
  fill(q, data, size);
  if ((knob & 12) != 0)
    q.struct_size = sizeof(q);
  bs_quant_source(&q, nullptr, 0, &need);
  int64_t rows = 0, ld = 0;
  fill(rows, data, size);
  fill(ld, data, size);
  int64_t out[5];
  if (bs_quant_scale_geometry(&q, rows, ld, out) == BS_SUCCESS)
    checkGeometry(out);
  int32_t br = 0, bc = 0;
  int64_t cols = 0;
  fill(br, data, size);
  fill(bc, data, size);
  fill(cols, data, size);
  if (bs_scale_geometry(br, bc, rows, cols, ld, out) == BS_SUCCESS)
    checkGeometry(out);
  return 0;
}
