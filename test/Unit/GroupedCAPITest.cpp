// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The grouped GEMMs through the C API: descriptions and arguments that the
// kernels cannot serve fail with INVALID_ARGUMENT and a message naming what
// was expected, what was found and the fix; nothing needs a GPU.
#include "blockscale-c/blockscale.h"

#include "gtest/gtest.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <dlfcn.h>
#include <limits>
#include <string>
#include <vector>

static bool haveNvrtc() {
  for (const char *n : {"libnvrtc.so.13", "libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so"})
    if (void *h = dlopen(n, RTLD_NOW | RTLD_LOCAL)) {
      dlclose(h);
      return true;
    }
  return false;
}

static bool haveDriver() {
  if (void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(h);
    return true;
  }
  return false;
}

static bs_grouped_gemm_desc_t validDesc() {
  bs_grouped_gemm_desc_t d;
  bs_grouped_gemm_desc_init(&d);
  d.groups = 8;
  d.n = 4096;
  d.k = 7168;
  return d;
}

/// The message of a description the source query rejects.
static std::string rejected(const bs_grouped_gemm_desc_t &d) {
  size_t need = 0;
  bs_status_t s = bs_grouped_gemm_source(&d, nullptr, 0, &need);
  EXPECT_EQ(s, BS_ERROR_INVALID_ARGUMENT);
  return bs_last_error();
}

static bool has(const std::string &s, const char *what) {
  return s.find(what) != std::string::npos;
}

TEST(GroupedCAPI, Defaults) {
  bs_grouped_gemm_desc_t d;
  bs_grouped_gemm_desc_init(&d);
  EXPECT_EQ(d.struct_size, int32_t(sizeof(d)));
  EXPECT_EQ(d.grouping, BS_GROUPING_CONTIGUOUS);
  EXPECT_EQ(d.out_dtype, BS_DTYPE_BF16);
  bs_grouped_gemm_args_t a;
  bs_grouped_gemm_args_init(&a);
  EXPECT_EQ(a.struct_size, int32_t(sizeof(a)));
  EXPECT_EQ(a.m, -1);
}

TEST(GroupedCAPI, SourceWithoutGpu) {
  bs_grouped_gemm_desc_t d = validDesc();
  size_t need = 0;
  ASSERT_EQ(bs_grouped_gemm_source(&d, nullptr, 0, &need), BS_SUCCESS) << bs_last_error();
  std::vector<char> buf(need);
  ASSERT_EQ(bs_grouped_gemm_source(&d, buf.data(), buf.size(), nullptr), BS_SUCCESS);
  std::string src(buf.data());
  EXPECT_TRUE(has(src, "kind=grouped")) << src;
  // Without a hint groups are planned as 4096 rows: two-wave 256-row tiles.
  EXPECT_TRUE(has(src, "bs::GroupedGemmSm90<bs::GemmConfig</*BM=*/256, /*BN=*/128")) << src;
  d.m_per_group_hint = 512;
  ASSERT_EQ(bs_grouped_gemm_source(&d, nullptr, 0, &need), BS_SUCCESS) << bs_last_error();
  buf.resize(need);
  ASSERT_EQ(bs_grouped_gemm_source(&d, buf.data(), buf.size(), nullptr), BS_SUCCESS);
  src = buf.data();
  // 512-row groups: 128 x 192 tiles in CTA pairs (N = 4096: 22 N tiles).
  EXPECT_TRUE(has(src, "/*BM=*/128, /*BN=*/192")) << src;
  EXPECT_TRUE(has(src, "/*CLUSTER=*/2")) << src;
  // Small groups take 64-row tiles (masked: planned for mMax rows).
  d.m_per_group_hint = 0;
  d.grouping = BS_GROUPING_MASKED;
  d.m_max = 20;
  d.out_dtype = BS_DTYPE_F32;
  ASSERT_EQ(bs_grouped_gemm_source(&d, nullptr, 0, &need), BS_SUCCESS) << bs_last_error();
  buf.resize(need);
  ASSERT_EQ(bs_grouped_gemm_source(&d, buf.data(), buf.size(), nullptr), BS_SUCCESS);
  src = buf.data();
  EXPECT_TRUE(has(src, "/*BM=*/64")) << src;
  EXPECT_TRUE(has(src, "/*OUT_F32=*/true")) << src;
}

TEST(GroupedCAPI, BadDescriptionsNameTheFix) {
  bs_grouped_gemm_desc_t d = validDesc();
  d.struct_size = 8;
  EXPECT_TRUE(has(rejected(d), "call bs_grouped_gemm_desc_init")) << bs_last_error();

  d = validDesc();
  d.groups = 0;
  EXPECT_TRUE(has(rejected(d), "expected 0 < groups <= 65536 but got groups = 0"));
  d.groups = -5;
  EXPECT_TRUE(has(rejected(d), "but got groups = -5"));

  d = validDesc();
  d.k = 1000;
  std::string e = rejected(d);
  EXPECT_TRUE(has(e, "pad K to 1008")) << e;

  d = validDesc();
  d.n = 100;
  e = rejected(d);
  EXPECT_TRUE(has(e, "pad N to 104")) << e;

  d = validDesc();
  d.grouping = BS_GROUPING_MASKED;
  e = rejected(d);
  EXPECT_TRUE(has(e, "masked expects 0 < mMax")) << e;
  // G * mMax past 2^31 is reported, not wrapped.
  d.m_max = int64_t(1) << 40;
  e = rejected(d);
  EXPECT_TRUE(has(e, "G * mMax < 2^31")) << e;
  EXPECT_TRUE(has(e, "mMax = 1099511627776")) << e;

  d = validDesc();
  d.groups = 65536;
  d.n = int64_t(1) << 20;
  e = rejected(d);
  EXPECT_TRUE(has(e, "G * N < 2^31")) << e;

  d = validDesc();
  d.n = std::numeric_limits<int64_t>::max();
  e = rejected(d);
  EXPECT_TRUE(has(e, "expected 0 < N, K < 2^31")) << e;

  d = validDesc();
  d.out_dtype = BS_DTYPE_F16;
  e = rejected(d);
  EXPECT_TRUE(has(e, "expected out = bf16 or f32 but got f16")) << e;

  d = validDesc();
  int32_t bad = 7;
  std::memcpy(&d.grouping, &bad, sizeof(bad));
  e = rejected(d);
  EXPECT_TRUE(has(e, "expected grouping 0-2")) << e;

  d = validDesc();
  d.force_tile = "bm=96";
  e = rejected(d);
  EXPECT_TRUE(has(e, "expected bm in {64, 128, 256}")) << e;
  d.force_tile = "bm=128,stages=40";
  e = rejected(d);
  EXPECT_TRUE(has(e, "expected 2 <= stages <= 5")) << e;
  d.force_tile = "splits=2";
  e = rejected(d);
  EXPECT_TRUE(has(e, "expected forceTile as bm=<int>,bn=<int>,stages=<int>")) << e;

  d = validDesc();
  d.debug = BS_DEBUG_TIMELINE;
  e = rejected(d);
  EXPECT_TRUE(has(e, "timeline stamps are for dense GEMMs")) << e;
}

// A forced tile of any int is named as a bad tile: the default pipeline
// depth is not computed for it (its shared-memory size would overflow an
// int, undefined behaviour that the sanitized builds report).
TEST(GroupedCAPI, HugeForcedTilesAreRejectedWithoutOverflow) {
  bs_grouped_gemm_desc_t d = validDesc();
  for (const char *tile :
       {"bm=2147483647,bn=2147483647", "bm=16777216", "bm=128,bn=2147483647",
        "bm=-2147483648,bn=-2147483648", "bn=0"}) {
    d.force_tile = tile;
    std::string e = rejected(d);
    EXPECT_TRUE(has(e, "expected bm in {64, 128, 256} and bn a multiple of 16"))
        << tile << ": " << e;
    bs_grouped_gemm_kernel_t k = nullptr;
    EXPECT_EQ(bs_grouped_gemm_kernel_create(&d, &k), BS_ERROR_INVALID_ARGUMENT) << tile;
    EXPECT_EQ(k, nullptr);
  }
  // Past int: the parser's error, not a wrapped value.
  d.force_tile = "bm=99999999999";
  EXPECT_TRUE(has(rejected(d), "expected forceTile as bm=<int>,bn=<int>,stages=<int>"))
      << bs_last_error();
}

TEST(GroupedCAPI, NullArgumentsAreErrors) {
  bs_grouped_gemm_kernel_t k = reinterpret_cast<bs_grouped_gemm_kernel_t>(0x1);
  EXPECT_EQ(bs_grouped_gemm_kernel_create(nullptr, &k), BS_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(k, nullptr);
  bs_grouped_gemm_desc_t d = validDesc();
  EXPECT_EQ(bs_grouped_gemm_kernel_create(&d, nullptr), BS_ERROR_INVALID_ARGUMENT);
  bs_grouped_gemm_args_t a;
  bs_grouped_gemm_args_init(&a);
  EXPECT_EQ(bs_grouped_gemm_launch(nullptr, &a, nullptr), BS_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(bs_grouped_gemm_kernel_info(nullptr, nullptr, 0), BS_ERROR_INVALID_ARGUMENT);
  bs_grouped_gemm_kernel_destroy(nullptr);
}

// The argument checks run before the driver is touched: bad arguments are
// INVALID_ARGUMENT even without a GPU.
TEST(GroupedCAPI, BadArgumentsNameTheFix) {
  if (!haveNvrtc())
    GTEST_SKIP() << "no NVRTC";
  bs_grouped_gemm_desc_t d = validDesc();
  d.n = 256;
  d.k = 256;
  bs_grouped_gemm_kernel_t k = nullptr;
  ASSERT_EQ(bs_grouped_gemm_kernel_create(&d, &k), BS_SUCCESS) << bs_last_error();
  char info[2048];
  ASSERT_EQ(bs_grouped_gemm_kernel_info(k, info, sizeof(info)), BS_SUCCESS);
  EXPECT_TRUE(has(info, "kind=grouped")) << info;

  alignas(16) static int dummy[64];
  auto args = [&] {
    bs_grouped_gemm_args_t a;
    bs_grouped_gemm_args_init(&a);
    a.a = a.b = a.a_scale = a.b_scale = dummy;
    a.groups = dummy;
    a.c = dummy;
    a.m = 300;
    return a;
  };
  bs_grouped_gemm_args_t a = args();
  a.struct_size = 3;
  EXPECT_EQ(bs_grouped_gemm_launch(k, &a, nullptr), BS_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(bs_last_error(), "call bs_grouped_gemm_args_init")) << bs_last_error();

  a = args();
  a.m = -1;
  EXPECT_EQ(bs_grouped_gemm_launch(k, &a, nullptr), BS_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(bs_last_error(), "contiguous expects GroupedGemmArgs::m")) << bs_last_error();

  a = args();
  a.m = int64_t(1) << 33;
  EXPECT_EQ(bs_grouped_gemm_launch(k, &a, nullptr), BS_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(bs_last_error(), "in [0, 2^31) but got 8589934592")) << bs_last_error();

  a = args();
  a.groups = nullptr;
  EXPECT_EQ(bs_grouped_gemm_launch(k, &a, nullptr), BS_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(bs_last_error(), "the groups pointer is null")) << bs_last_error();

  a = args();
  a.a = reinterpret_cast<const char *>(dummy) + 4;
  EXPECT_EQ(bs_grouped_gemm_launch(k, &a, nullptr), BS_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(bs_last_error(), "expected the A pointer to be 16-byte aligned")) << bs_last_error();

  a = args();
  a.ldsa = 301;
  EXPECT_EQ(bs_grouped_gemm_launch(k, &a, nullptr), BS_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(bs_last_error(), "A scales")) << bs_last_error();

  a = args();
  a.sb_stride_g = -1;
  EXPECT_EQ(bs_grouped_gemm_launch(k, &a, nullptr), BS_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(bs_last_error(), "sbStrideG = -1")) << bs_last_error();

  // An empty launch (M = 0) writes nothing and needs no device.
  a = args();
  a.m = 0;
  EXPECT_EQ(bs_grouped_gemm_launch(k, &a, nullptr), BS_SUCCESS) << bs_last_error();

  if (!haveDriver()) {
    a = args();
    EXPECT_EQ(bs_grouped_gemm_launch(k, &a, nullptr), BS_ERROR_NO_DEVICE) << bs_last_error();
  }
  bs_grouped_gemm_kernel_destroy(k);

  // Masked: the rows are G * mMax; a contradicting m is named.
  d.grouping = BS_GROUPING_MASKED;
  d.m_max = 32;
  ASSERT_EQ(bs_grouped_gemm_kernel_create(&d, &k), BS_SUCCESS) << bs_last_error();
  a = args();
  a.m = 100;
  EXPECT_EQ(bs_grouped_gemm_launch(k, &a, nullptr), BS_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(bs_last_error(), "G * mMax = 256 rows but GroupedGemmArgs::m = 100"))
      << bs_last_error();
  bs_grouped_gemm_kernel_destroy(k);
}

//===----------------------------------------------------------------------===//
// k-grouped GEMMs (the MoE weight gradient) and the group-aware cast
//===----------------------------------------------------------------------===//

static bs_grouped_gemm_desc_t validKDesc() {
  bs_grouped_gemm_desc_t d;
  bs_grouped_gemm_desc_init(&d);
  d.grouping = BS_GROUPING_K_CONTIGUOUS;
  d.groups = 8;
  d.m = 4096;
  d.n = 7168;
  d.out_dtype = BS_DTYPE_F32;
  return d;
}

static std::string source(const bs_grouped_gemm_desc_t &d) {
  size_t need = 0;
  EXPECT_EQ(bs_grouped_gemm_source(&d, nullptr, 0, &need), BS_SUCCESS)
      << bs_last_error();
  std::vector<char> buf(need + 1);
  EXPECT_EQ(bs_grouped_gemm_source(&d, buf.data(), buf.size(), nullptr),
            BS_SUCCESS);
  return buf.data();
}

TEST(KGroupedCAPI, DefaultsAndSource) {
  bs_grouped_gemm_desc_t d;
  bs_grouped_gemm_desc_init(&d);
  EXPECT_EQ(d.m, 0);
  EXPECT_EQ(d.accumulate, 0);
  bs_grouped_gemm_args_t a;
  bs_grouped_gemm_args_init(&a);
  EXPECT_EQ(a.capacity, 0);
  EXPECT_EQ(a.ldsb, 0);

  d = validKDesc();
  std::string src = source(d);
  EXPECT_TRUE(has(src, "grouping=k accumulate=0")) << src;
  EXPECT_TRUE(has(src, "#include \"blockscale/gemm_kgrouped.cuh\"")) << src;
  // (No hint: groups planned as 4096 tokens, f32: the 128 x 192 tile.)
  EXPECT_TRUE(has(src, "bs::KGroupedGemmSm90<bs::GemmConfig</*BM=*/128, "
                       "/*BN=*/192, /*STAGES=*/3, /*WGRAD=*/true, "
                       "/*OUT_F32=*/true, /*ACCUMULATE=*/false>>"))
      << src;
  d.accumulate = 1;
  src = source(d);
  EXPECT_TRUE(has(src, "bs_kgrouped_gemm_e4m3_e4m3_f32_acc_bm128_bn192"))
      << src;
  EXPECT_TRUE(has(src, "/*ACCUMULATE=*/true")) << src;
  d.accumulate = 0;
  d.out_dtype = BS_DTYPE_BF16;
  src = source(d);
  EXPECT_TRUE(has(src, "/*OUT_F32=*/false")) << src;
  // The m-grouped spec line is unchanged.
  bs_grouped_gemm_desc_t m = validDesc();
  EXPECT_FALSE(has(source(m), "grouping=k")) << source(m);

  EXPECT_EQ(bs_grouped_token_capacity(1000, 8), 1024 + 1024);
  EXPECT_EQ(bs_grouped_token_capacity(0, 4), 512);
  EXPECT_EQ(bs_grouped_token_capacity(-1, 4), -1);
  EXPECT_EQ(bs_grouped_token_capacity(std::numeric_limits<int64_t>::max(), 4),
            -1);
}

// A host built before the k-grouped GEMMs passes the shorter structs: they
// still work as m-grouped descriptions and arguments.
TEST(KGroupedCAPI, OlderStructSizesAreAccepted) {
  bs_grouped_gemm_desc_t d = validDesc();
  d.struct_size = int32_t(offsetof(bs_grouped_gemm_desc_t, m));
  d.m = 77; // (past the old struct: never read)
  size_t need = 0;
  EXPECT_EQ(bs_grouped_gemm_source(&d, nullptr, 0, &need), BS_SUCCESS)
      << bs_last_error();
  d.struct_size = int32_t(offsetof(bs_grouped_gemm_desc_t, m)) + 4;
  EXPECT_TRUE(has(rejected(d), "call bs_grouped_gemm_desc_init"));
}

TEST(KGroupedCAPI, BadDescriptionsNameTheFix) {
  bs_grouped_gemm_desc_t d = validKDesc();
  d.m = 0;
  std::string e = rejected(d);
  EXPECT_TRUE(has(e, "k_contiguous expects 0 < m < 2^31")) << e;

  d = validKDesc();
  d.k = 7168;
  e = rejected(d);
  EXPECT_TRUE(has(e, "k_contiguous expects k = 0")) << e;

  d = validKDesc();
  d.accumulate = 1;
  d.out_dtype = BS_DTYPE_BF16;
  e = rejected(d);
  EXPECT_TRUE(has(e, "expected out = f32 with accumulate")) << e;

  d = validDesc();
  d.accumulate = 1;
  e = rejected(d);
  EXPECT_TRUE(has(e, "expected accumulate = false for an m-grouped GEMM")) << e;

  d = validKDesc();
  d.groups = 65536;
  d.m = int64_t(1) << 20;
  e = rejected(d);
  EXPECT_TRUE(has(e, "G * m < 2^31")) << e;

  d = validKDesc();
  d.n = 102;
  e = rejected(d);
  EXPECT_TRUE(has(e, "pad N to 104")) << e;

  d = validKDesc();
  int32_t bad = 3;
  std::memcpy(&d.grouping, &bad, sizeof(bad));
  e = rejected(d);
  EXPECT_TRUE(has(e, "expected grouping 0-2")) << e;

  d = validKDesc();
  d.force_tile = "bm=128,bn=128,stages=9";
  e = rejected(d);
  EXPECT_TRUE(has(e, "expected 2 <= stages <= 4")) << e;

  // f32 256 x 128 tiles leave room for one stage: refused, as the dialect's
  // tile attribute refuses a one-stage ring.
  d = validKDesc();
  d.force_tile = "bm=256,bn=128";
  e = rejected(d);
  EXPECT_TRUE(has(e, "expected a tile whose two-stage ring fits in 232448 "
                     "bytes of shared memory but bm = 256, bn = 128 with f32 "
                     "output fits 1 stage(s)"))
      << e;
}

TEST(KGroupedCAPI, BadArgumentsNameTheFix) {
  if (!haveNvrtc())
    GTEST_SKIP() << "no NVRTC";
  bs_grouped_gemm_desc_t d = validKDesc();
  d.groups = 4;
  d.m = 256;
  d.n = 256;
  bs_grouped_gemm_kernel_t k = nullptr;
  ASSERT_EQ(bs_grouped_gemm_kernel_create(&d, &k), BS_SUCCESS) << bs_last_error();
  char info[2048];
  ASSERT_EQ(bs_grouped_gemm_kernel_info(k, info, sizeof(info)), BS_SUCCESS);
  EXPECT_TRUE(has(info, "grouping=k")) << info;

  alignas(16) static int dummy[64];
  auto args = [&] {
    bs_grouped_gemm_args_t a;
    bs_grouped_gemm_args_init(&a);
    a.a = a.b = a.a_scale = a.b_scale = dummy;
    a.groups = dummy;
    a.c = dummy;
    a.capacity = 1024;
    return a;
  };
  bs_grouped_gemm_args_t a = args();
  a.capacity = 0;
  EXPECT_EQ(bs_grouped_gemm_launch(k, &a, nullptr), BS_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(bs_last_error(), "at least 128 G = 512")) << bs_last_error();
  a.capacity = 1000;
  EXPECT_EQ(bs_grouped_gemm_launch(k, &a, nullptr), BS_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(bs_last_error(), "multiple of 128")) << bs_last_error();

  a = args();
  a.b_scale = nullptr;
  EXPECT_EQ(bs_grouped_gemm_launch(k, &a, nullptr), BS_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(bs_last_error(), "the B scales pointer is null"))
      << bs_last_error();

  a = args();
  a.a_scale = reinterpret_cast<const char *>(dummy) + 4;
  EXPECT_EQ(bs_grouped_gemm_launch(k, &a, nullptr), BS_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(bs_last_error(), "A scales pointer to be 16-byte aligned"))
      << bs_last_error();

  a = args();
  a.ldsb = 255;
  EXPECT_EQ(bs_grouped_gemm_launch(k, &a, nullptr), BS_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(bs_last_error(), "B scales")) << bs_last_error();

  if (!haveDriver()) {
    a = args();
    EXPECT_EQ(bs_grouped_gemm_launch(k, &a, nullptr), BS_ERROR_NO_DEVICE)
        << bs_last_error();
  }
  bs_grouped_gemm_kernel_destroy(k);
}

static bs_grouped_quant_desc_t validQDesc() {
  bs_grouped_quant_desc_t d;
  bs_grouped_quant_desc_init(&d);
  d.cols = 7168;
  d.groups = 8;
  return d;
}

TEST(GroupedQuantCAPI, SourceAndBadDescriptions) {
  bs_grouped_quant_desc_t d = validQDesc();
  EXPECT_EQ(d.struct_size, int32_t(sizeof(d)));
  EXPECT_EQ(d.in_dtype, BS_DTYPE_BF16);
  size_t need = 0;
  ASSERT_EQ(bs_grouped_quant_source(&d, nullptr, 0, &need), BS_SUCCESS)
      << bs_last_error();
  std::vector<char> buf(need);
  ASSERT_EQ(bs_grouped_quant_source(&d, buf.data(), buf.size(), nullptr),
            BS_SUCCESS);
  std::string src = buf.data();
  EXPECT_TRUE(has(src, "kind=grouped_quantize name=bs_grouped_quantize_bf16_e4m3"))
      << src;
  EXPECT_TRUE(has(src, "bs::GroupedQuantizeTile<bs::InBf16, /*FMT=*/0>")) << src;

  auto rejectedQ = [](const bs_grouped_quant_desc_t &q) {
    size_t n = 0;
    EXPECT_EQ(bs_grouped_quant_source(&q, nullptr, 0, &n),
              BS_ERROR_INVALID_ARGUMENT);
    return std::string(bs_last_error());
  };
  d = validQDesc();
  d.groups = 0;
  EXPECT_TRUE(has(rejectedQ(d), "expected 0 < groups <= 65536")) << bs_last_error();
  d = validQDesc();
  d.cols = 100;
  EXPECT_TRUE(has(rejectedQ(d), "pad cols to 104")) << bs_last_error();
  d = validQDesc();
  d.struct_size = 4;
  EXPECT_TRUE(has(rejectedQ(d), "call bs_grouped_quant_desc_init")) << bs_last_error();
  d = validQDesc();
  int32_t bad = 9;
  std::memcpy(&d.out_type, &bad, sizeof(bad));
  EXPECT_TRUE(has(rejectedQ(d), "expected in_dtype 0-2 and out_type 0-1")) << bs_last_error();
}

TEST(GroupedQuantCAPI, BadArgumentsNameTheFix) {
  if (!haveNvrtc())
    GTEST_SKIP() << "no NVRTC";
  bs_grouped_quant_desc_t d = validQDesc();
  d.cols = 256;
  bs_grouped_quant_kernel_t k = nullptr;
  ASSERT_EQ(bs_grouped_quant_kernel_create(&d, &k), BS_SUCCESS) << bs_last_error();
  char info[2048];
  ASSERT_EQ(bs_grouped_quant_kernel_info(k, info, sizeof(info)), BS_SUCCESS);
  EXPECT_TRUE(has(info, "kind=grouped_quantize")) << info;

  alignas(16) static int dummy[64];
  auto args = [&] {
    bs_grouped_quant_args_t a;
    bs_grouped_quant_args_init(&a);
    a.x = a.q = dummy;
    a.scale = reinterpret_cast<float *>(dummy);
    a.offs = dummy;
    a.tokens = 300;
    return a;
  };
  bs_grouped_quant_args_t a = args();
  a.tokens = -1;
  EXPECT_EQ(bs_grouped_quant_launch(k, &a, nullptr), BS_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(bs_last_error(), "GroupedQuantArgs::tokens")) << bs_last_error();

  a = args();
  a.capacity = 1024; // < round_up(300, 128) + 128 * 8 = 1408
  EXPECT_EQ(bs_grouped_quant_launch(k, &a, nullptr), BS_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(bs_last_error(), "at least round_up(tokens, 128) + 128 G = 1408"))
      << bs_last_error();

  a = args();
  a.offs = nullptr;
  EXPECT_EQ(bs_grouped_quant_launch(k, &a, nullptr), BS_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(bs_last_error(), "offs are required")) << bs_last_error();

  a = args();
  a.ldx = 100;
  EXPECT_EQ(bs_grouped_quant_launch(k, &a, nullptr), BS_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(bs_last_error(), "expected ldx >= cols = 256")) << bs_last_error();

  // No tokens: nothing to write, no device needed.
  a = args();
  a.tokens = 0;
  a.x = nullptr;
  EXPECT_EQ(bs_grouped_quant_launch(k, &a, nullptr), BS_SUCCESS) << bs_last_error();

  if (!haveDriver()) {
    a = args();
    EXPECT_EQ(bs_grouped_quant_launch(k, &a, nullptr), BS_ERROR_NO_DEVICE)
        << bs_last_error();
  }
  bs_grouped_quant_kernel_destroy(k);
}
