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
// negative sizes or an allocation smaller than its extent).
//
// The rest of the input drives the m-grouped GEMMs the same way: a
// bs_grouped_gemm_desc_t (force_tile from a table of edge cases or from the
// input) through bs_grouped_gemm_source and bs_grouped_gemm_kernel_create,
// and a bs_grouped_gemm_args_t through bs_grouped_gemm_launch. Every failure
// must come back as a status with a message in bs_last_error. No kernel is
// compiled per input (NVRTC would make each take seconds): the fuzzer
// compiles two grouped kernels once at start-up, and a description is only
// created when its source is one of theirs (a hit in the registry's memory)
// or when the source query rejected it (then create must reject it too).
// Launches run only where no CUDA driver is present, where every launch with
// rows fails before the device with INVALID_ARGUMENT or NO_DEVICE (the
// arguments' pointers come from the input and are never dereferenced on the
// host).
//
//===----------------------------------------------------------------------===//

#include "blockscale-c/blockscale.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <vector>

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

/// A failure without a message breaks the C API's contract.
static bs_status_t checked(bs_status_t s) {
  if (s != BS_SUCCESS && (!bs_last_error() || !*bs_last_error()))
    std::abort();
  if (s < BS_SUCCESS || s > BS_ERROR_INTERNAL)
    std::abort();
  return s;
}

namespace {
/// Grouped kernels compiled once: their sources, so that an input whose
/// description plans to one of them is created from the registry's memory.
struct GroupedSeeds {
  std::vector<std::string> sources;
  bool launches = false; // no CUDA driver: launches fail before the device
};
} // namespace

static const char *const kPinnedTile = "bm=128,bn=128";

static std::string groupedSource(const bs_grouped_gemm_desc_t &d) {
  size_t need = 0;
  if (bs_grouped_gemm_source(&d, nullptr, 0, &need) != BS_SUCCESS)
    return {};
  std::string s(need, '\0');
  if (checked(bs_grouped_gemm_source(&d, s.data(), s.size(), nullptr)) !=
      BS_SUCCESS)
    std::abort(); // the size query succeeded
  s.resize(std::strlen(s.c_str()));
  return s;
}

static GroupedSeeds &groupedSeeds() {
  static GroupedSeeds seeds = [] {
    GroupedSeeds s;
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    s.launches = cuda == nullptr;
    if (cuda)
      dlclose(cuda);
    for (bs_dtype_t out : {BS_DTYPE_BF16, BS_DTYPE_F32}) {
      bs_grouped_gemm_desc_t d;
      bs_grouped_gemm_desc_init(&d);
      d.groups = 4;
      d.n = 256;
      d.k = 256;
      d.out_dtype = out;
      d.force_tile = kPinnedTile;
      bs_grouped_gemm_kernel_t k = nullptr;
      // Without NVRTC nothing is compiled, and only rejections are created.
      if (bs_grouped_gemm_kernel_create(&d, &k) != BS_SUCCESS)
        continue;
      bs_grouped_gemm_kernel_destroy(k);
      s.sources.push_back(groupedSource(d));
    }
    return s;
  }();
  return seeds;
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  const GroupedSeeds &s = groupedSeeds();
  std::fprintf(stderr,
               "blockscale-fuzz-capi: %zu grouped kernels compiled; grouped "
               "launches %s\n",
               s.sources.size(), s.launches ? "on (no CUDA driver)" : "off");
  return 0;
}

static void fuzzGrouped(const uint8_t *data, size_t size) {
  const GroupedSeeds &seeds = groupedSeeds();
  uint8_t knob = 0;
  fill(knob, data, size);
  bs_grouped_gemm_desc_t d;
  bs_grouped_gemm_desc_init(&d);
  fill(d, data, size);
  if ((knob & 3) != 0)
    d.struct_size = sizeof(d);
  const char *tiles[] = {nullptr,
                         kPinnedTile,
                         "bm=64,bn=16,stages=1",
                         "bm=256,bn=128",
                         "bm=256,bn=192",
                         "bn=144,stages=0",
                         "bm=2147483647,bn=2147483647",
                         "bm=-128,bn=-128",
                         "bm=16777216",
                         "bn=0",
                         "stages=-1",
                         "bm=99999999999",
                         "bm=128,,bn=128,",
                         " bm = 128 , bn = 64 ",
                         "bm=",
                         "=128",
                         "garbage"};
  constexpr size_t numTiles = sizeof(tiles) / sizeof(tiles[0]);
  char own[33] = {0}; // a tile string from the input, NUL-terminated
  uint8_t pick = 0;
  fill(pick, data, size);
  if (pick >= numTiles) {
    size_t n = std::min<size_t>(size, pick % sizeof(own));
    std::memcpy(own, data, n);
    data += n;
    size -= n;
    d.force_tile = own;
  } else {
    d.force_tile = tiles[pick];
  }
  // Pinned: the fields the kernel's source depends on are those of a
  // compiled kernel, so that create, info and launch are reached with the
  // input's shapes.
  const bool pinned = (knob & 4) != 0 && !seeds.sources.empty();
  if (pinned) {
    d.a_type = BS_FP8_E4M3;
    d.b_type = BS_FP8_E4M3;
    d.out_dtype = (knob & 8) ? BS_DTYPE_F32 : BS_DTYPE_BF16;
    d.force_tile = kPinnedTile;
    d.debug = 0;
  }

  size_t need = 0;
  bs_status_t src = checked(bs_grouped_gemm_source(&d, nullptr, 0, &need));
  char small[48];
  bs_status_t src2 =
      checked(bs_grouped_gemm_source(&d, small, sizeof(small), nullptr));
  if (src != src2)
    std::abort();
  if (src == BS_SUCCESS && (need == 0 || std::strlen(small) >= sizeof(small)))
    std::abort();
  checked(bs_grouped_gemm_source(&d, nullptr, 0, nullptr)); // no buffer
  checked(bs_grouped_gemm_source(&d, small, 0, nullptr));   // empty buffer

  bs_grouped_gemm_kernel_t k = nullptr;
  if (src != BS_SUCCESS) {
    // What the planner rejects, create rejects the same way, before NVRTC.
    if (checked(bs_grouped_gemm_kernel_create(&d, &k)) != src || k)
      std::abort();
  } else {
    std::string text = groupedSource(d);
    bool compiled = false;
    for (const std::string &s : seeds.sources)
      compiled |= s == text;
    if (compiled) {
      if (checked(bs_grouped_gemm_kernel_create(&d, &k)) != BS_SUCCESS || !k)
        std::abort(); // the same source compiled at start-up
    }
  }

  uint8_t len = 0;
  fill(len, data, size);
  char info[256];
  checked(bs_grouped_gemm_kernel_info(k, (len & 1) ? nullptr : info,
                                      std::min<size_t>(len, sizeof(info))));

  bs_grouped_gemm_args_t a;
  bs_grouped_gemm_args_init(&a);
  fill(a, data, size);
  if ((knob & 48) != 0)
    a.struct_size = sizeof(a);
  if (knob & 64) {
    // Keep the pointers plausible (non-null, aligned) so the size checks
    // are reached; they still point nowhere.
    auto fake = [](uintptr_t v) {
      return reinterpret_cast<void *>((v | 0x1000) & ~uintptr_t(15));
    };
    a.a = fake(reinterpret_cast<uintptr_t>(a.a));
    a.a_scale = fake(reinterpret_cast<uintptr_t>(a.a_scale));
    a.b = fake(reinterpret_cast<uintptr_t>(a.b));
    a.b_scale = fake(reinterpret_cast<uintptr_t>(a.b_scale));
    a.groups = static_cast<const int32_t *>(
        fake(reinterpret_cast<uintptr_t>(a.groups)));
    a.c = fake(reinterpret_cast<uintptr_t>(a.c));
  }
  if (!seeds.launches && k) {
    bs_grouped_gemm_kernel_destroy(k);
    return; // a GPU might run it: the pointers are the input's
  }
  bs_status_t l = checked(
      bs_grouped_gemm_launch(k, (knob & 128) ? nullptr : &a, nullptr));
  // Only an empty contiguous launch succeeds without a device.
  if (l == BS_SUCCESS && !(k && d.grouping == BS_GROUPING_CONTIGUOUS &&
                           a.m == 0))
    std::abort();
  bs_grouped_gemm_kernel_destroy(k);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *const data0 = data;
  const size_t size0 = size;
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

  // The grouped GEMMs read the input again from a byte the knob picks, so
  // that short inputs reach them too.
  size_t skip = size0 ? (knob >> 4) * size0 / 16 : 0;
  fuzzGrouped(data0 + skip, size0 - skip);
  return 0;
}
