// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The C API through the shared library.
#include "blockscale-c/blockscale.h"
#include "blockscale/Version.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <dlfcn.h>
#include <cstddef>
#include <string>
#include <thread>
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

TEST(CAPI, DescriptorDefaults) {
  bs_gemm_desc_t d;
  bs_gemm_desc_init(&d);
  EXPECT_EQ(d.struct_size, int32_t(sizeof(d)));
  EXPECT_EQ(d.m, -1);
  EXPECT_EQ(d.out_dtype, BS_DTYPE_BF16);
  EXPECT_STREQ(bs_version(), BLOCKSCALE_VERSION_STRING);
}

TEST(CAPI, StructSizeMismatchIsInvalidArgument) {
  bs_gemm_desc_t d;
  bs_gemm_desc_init(&d);
  d.struct_size = 4;
  bs_gemm_kernel_t k = reinterpret_cast<bs_gemm_kernel_t>(0x1);
  EXPECT_EQ(bs_gemm_kernel_create(&d, &k), BS_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(k, nullptr);
  EXPECT_NE(std::string(bs_last_error()).find("struct_size"), std::string::npos);
}

TEST(CAPI, BadShapeNamesTheFix) {
  bs_gemm_desc_t d;
  bs_gemm_desc_init(&d);
  d.n = 4096;
  d.k = 1000;
  bs_gemm_kernel_t k = nullptr;
  EXPECT_EQ(bs_gemm_kernel_create(&d, &k), BS_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(bs_last_error()).find("pad K to 1008"), std::string::npos)
      << bs_last_error();
}

TEST(CAPI, ErrorsAreThreadLocal) {
  bs_gemm_desc_t d;
  bs_gemm_desc_init(&d);
  d.n = 4096;
  d.k = 1000;
  bs_gemm_kernel_t k = nullptr;
  ASSERT_EQ(bs_gemm_kernel_create(&d, &k), BS_ERROR_INVALID_ARGUMENT);
  std::string other;
  std::thread t([&] {
    bs_quant_desc_t q;
    bs_quant_desc_init(&q);
    q.block_rows = 64;
    q.cols = 256;
    int64_t g[5];
    EXPECT_EQ(bs_quant_scale_geometry(&q, 128, 0, g), BS_ERROR_INVALID_ARGUMENT);
    other = bs_last_error();
  });
  t.join();
  EXPECT_NE(std::string(bs_last_error()).find("pad K"), std::string::npos);
  EXPECT_NE(other.find("1x128, 128x1 or 128x128"), std::string::npos) << other;
}

TEST(CAPI, SourceWithoutGpu) {
  bs_gemm_desc_t d;
  bs_gemm_desc_init(&d);
  d.form = BS_FORM_WGRAD;
  d.n = 4096;
  d.k = 16384;
  d.num_sms = 132;
  size_t need = 0;
  ASSERT_EQ(bs_gemm_source(&d, nullptr, 0, &need), BS_SUCCESS) << bs_last_error();
  ASSERT_GT(need, 100u);
  std::vector<char> buf(need);
  ASSERT_EQ(bs_gemm_source(&d, buf.data(), buf.size(), nullptr), BS_SUCCESS);
  std::string src(buf.data());
  EXPECT_NE(src.find("/*WGRAD=*/true"), std::string::npos) << src;
}

TEST(CAPI, ScaleGeometry) {
  bs_quant_desc_t q;
  bs_quant_desc_init(&q);
  q.cols = 7168;
  int64_t g[5];
  ASSERT_EQ(bs_quant_scale_geometry(&q, 4096, 0, g), BS_SUCCESS);
  EXPECT_EQ(g[0], 4096); // (M, ceil(K/128)), M-contiguous
  EXPECT_EQ(g[1], 56);
  EXPECT_EQ(g[2], 1);
  EXPECT_EQ(g[3], 4096);
  EXPECT_EQ(g[4], 4096 * 56);
}

TEST(CAPI, DualCastRulesNameTheFix) {
  // The first result of a dual cast is the one in input order, with 1x128
  // or 128x128 blocks in the input's frame; the second is transposed, so
  // the rows must be a multiple of 16.
  auto rejected = [](bs_quant_desc_t q) {
    int64_t g[5];
    EXPECT_EQ(bs_quant_scale_geometry(&q, 256, 0, g),
              BS_ERROR_INVALID_ARGUMENT);
    return std::string(bs_last_error());
  };
  bs_quant_desc_t q;
  bs_quant_desc_init(&q);
  q.cols = 256;
  q.dual = 1;
  q.transpose = 1;
  EXPECT_NE(rejected(q).find("flip transpose"), std::string::npos)
      << bs_last_error();
  q.transpose = 0;
  q.block_rows = 128;
  q.block_cols = 1;
  EXPECT_NE(rejected(q).find("128x1 result with a single cast"),
            std::string::npos)
      << bs_last_error();
  q.block_rows = 1;
  q.block_cols = 128;
  q.rows = 100;
  EXPECT_NE(rejected(q).find("multiple of 16 for a dual cast"),
            std::string::npos)
      << bs_last_error();
  // The weight's forward spelling (transposed, column-major) is in input
  // order: accepted, as is the plain 1x128 cast.
  q.rows = -1;
  int64_t g[5];
  EXPECT_EQ(bs_quant_scale_geometry(&q, 256, 0, g), BS_SUCCESS)
      << bs_last_error();
  q.block_rows = q.block_cols = 128;
  q.transpose = q.col_major = 1;
  EXPECT_EQ(bs_quant_scale_geometry(&q, 256, 0, g), BS_SUCCESS)
      << bs_last_error();
}

// A host built before the dual or the batched cast passes a shorter
// bs_quant_args_t: its launches read it as before (here they get as far as the
// missing driver).
TEST(CAPI, OlderCastArgumentsAreAccepted) {
  if (!haveNvrtc())
    GTEST_SKIP() << "no NVRTC";
  if (haveDriver())
    GTEST_SKIP() << "a CUDA driver is present";
  bs_quant_desc_t q;
  bs_quant_desc_init(&q);
  q.cols = 256;
  // (A description from before the batched cast ends before `groups`.)
  q.groups = -1;
  q.struct_size = int32_t(offsetof(bs_quant_desc_t, groups));
  bs_quant_kernel_t k = nullptr;
  ASSERT_EQ(bs_quant_kernel_create(&q, &k), BS_SUCCESS) << bs_last_error();
  alignas(16) static unsigned char buf[1 << 16];
  bs_quant_args_t a;
  bs_quant_args_init(&a);
  a.x = buf;
  a.q = buf;
  a.scale = reinterpret_cast<float *>(buf);
  a.rows = 128;
  a.struct_size = int32_t(offsetof(bs_quant_args_t, q_t));
  EXPECT_NE(bs_quant_launch(k, &a, nullptr), BS_SUCCESS);
  EXPECT_EQ(std::string(bs_last_error()).find("struct_size"), std::string::npos)
      << bs_last_error();
  // And so does one built before the batched cast (ending before groups).
  a.struct_size = int32_t(offsetof(bs_quant_args_t, groups));
  EXPECT_NE(bs_quant_launch(k, &a, nullptr), BS_SUCCESS);
  EXPECT_EQ(std::string(bs_last_error()).find("struct_size"), std::string::npos)
      << bs_last_error();
  a.struct_size += 8;
  EXPECT_EQ(bs_quant_launch(k, &a, nullptr), BS_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(bs_last_error()).find("call bs_quant_args_init"),
            std::string::npos)
      << bs_last_error();
  bs_quant_kernel_destroy(k);
}

TEST(CAPI, DualCastSourceWithoutGpu) {
  if (!haveNvrtc())
    GTEST_SKIP() << "no NVRTC";
  bs_quant_desc_t q;
  bs_quant_desc_init(&q);
  q.cols = 7168;
  q.dual = 1;
  size_t need = 0;
  ASSERT_EQ(bs_quant_source(&q, nullptr, 0, &need), BS_SUCCESS)
      << bs_last_error();
  std::vector<char> buf(need);
  ASSERT_EQ(bs_quant_source(&q, buf.data(), buf.size(), nullptr), BS_SUCCESS);
  std::string src(buf.data());
  EXPECT_NE(src.find("/*BR=*/128, /*BC=*/1, /*TRANS=*/true, /*DUAL=*/true>"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("bs_quantize_bf16_e4m3_1x128_dual"), std::string::npos);
}

TEST(CAPI, BatchedDualCastRulesNameTheFix) {
  // A batched cast is the 128x128 dual cast of (G, rows, cols) with both
  // results row-major; groups is -1 (given at launch) or a count.
  auto rejected = [](bs_quant_desc_t q) {
    int64_t g[5];
    EXPECT_EQ(bs_quant_scale_geometry(&q, 256, 0, g),
              BS_ERROR_INVALID_ARGUMENT);
    return std::string(bs_last_error());
  };
  bs_quant_desc_t q;
  bs_quant_desc_init(&q);
  q.cols = 256;
  q.block_rows = q.block_cols = 128;
  q.groups = -1;
  EXPECT_NE(rejected(q).find("expected dual with groups"), std::string::npos)
      << bs_last_error();
  q.dual = 1;
  q.groups = -2;
  EXPECT_NE(rejected(q).find("expected groups 0"), std::string::npos)
      << bs_last_error();
  q.groups = 8;
  q.block_rows = 1;
  EXPECT_NE(rejected(q).find("expected a batched cast to be 128x128"),
            std::string::npos)
      << bs_last_error();
  q.block_rows = 128;
  q.transpose = q.col_major = 1;
  EXPECT_NE(rejected(q).find("but got 128x128, transpose = 1"),
            std::string::npos)
      << bs_last_error();
  // One matrix's scales are row-major, as the grouped GEMMs read them.
  q.transpose = q.col_major = 0;
  int64_t g[5];
  ASSERT_EQ(bs_quant_scale_geometry(&q, 272, 0, g), BS_SUCCESS)
      << bs_last_error();
  EXPECT_EQ(g[0], 3);
  EXPECT_EQ(g[1], 2);
  EXPECT_EQ(g[2], 2);
  EXPECT_EQ(g[3], 1);
  EXPECT_EQ(g[4], 6);
}

TEST(CAPI, BatchedDualCastSourceWithoutGpu) {
  if (!haveNvrtc())
    GTEST_SKIP() << "no NVRTC";
  bs_quant_desc_t q;
  bs_quant_desc_init(&q);
  q.cols = 400;
  q.block_rows = q.block_cols = 128;
  q.dual = 1;
  q.groups = -1;
  size_t need = 0;
  ASSERT_EQ(bs_quant_source(&q, nullptr, 0, &need), BS_SUCCESS)
      << bs_last_error();
  std::vector<char> buf(need);
  ASSERT_EQ(bs_quant_source(&q, buf.data(), buf.size(), nullptr), BS_SUCCESS);
  std::string src(buf.data());
  EXPECT_NE(src.find("/*TRANS=*/true, /*DUAL=*/true, /*GROUPED=*/true>"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("bs_quantize_bf16_e4m3_128x128_gdual"), std::string::npos);
}

// The launch checks a batched cast's arguments before it needs a device.
TEST(CAPI, BatchedDualCastLaunchRules) {
  if (!haveNvrtc())
    GTEST_SKIP() << "no NVRTC";
  bs_quant_desc_t q;
  bs_quant_desc_init(&q);
  q.cols = 400;
  q.block_rows = q.block_cols = 128;
  q.dual = 1;
  q.groups = -1;
  bs_quant_kernel_t k = nullptr;
  ASSERT_EQ(bs_quant_kernel_create(&q, &k), BS_SUCCESS) << bs_last_error();
  alignas(16) static unsigned char buf[1 << 16];
  bs_quant_args_t a;
  bs_quant_args_init(&a);
  a.x = buf;
  a.q = buf;
  a.q_t = buf;
  a.scale = a.scale_t = reinterpret_cast<float *>(buf);
  a.rows = 272;
  a.groups = 3;
  auto rejected = [&](const char *what) {
    EXPECT_EQ(bs_quant_launch(k, &a, nullptr), BS_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(bs_last_error()).find(what), std::string::npos)
        << bs_last_error();
  };
  a.rows = 100;
  rejected("rows = 100");
  a.rows = 272;
  a.ld_scale = 3;
  rejected("ld_scale >= 4");
  a.ld_scale = 0;
  a.group_stride_q = 272 * 400 - 16;
  rejected("q >= 108800");
  a.group_stride_q = 0;
  a.q_t = nullptr;
  rejected("q_t and scale_t");
  a.q_t = buf;
  a.groups = 0;
  rejected("set QuantArgs::groups");
  // Empty matrices: nothing to write, no device needed.
  a.groups = 3;
  a.rows = 0;
  EXPECT_EQ(bs_quant_launch(k, &a, nullptr), BS_SUCCESS) << bs_last_error();
  bs_quant_kernel_destroy(k);
}

TEST(CAPI, CreateCompilesWithoutGpuAndLaunchSaysNoDevice) {
  if (!haveNvrtc())
    GTEST_SKIP() << "no NVRTC";
  if (haveDriver())
    GTEST_SKIP() << "a CUDA driver is present";
  bs_gemm_desc_t d;
  bs_gemm_desc_init(&d);
  d.n = 256;
  d.k = 256;
  bs_gemm_kernel_t k = nullptr;
  ASSERT_EQ(bs_gemm_kernel_create(&d, &k), BS_SUCCESS) << bs_last_error();
  char info[2048];
  ASSERT_EQ(bs_gemm_kernel_info(k, info, sizeof(info)), BS_SUCCESS);
  EXPECT_NE(std::string(info).find("cache_key="), std::string::npos) << info;
  bs_gemm_args_t a;
  bs_gemm_args_init(&a);
  alignas(16) int dummy[64];
  a.a = a.b = a.a_scale = a.b_scale = dummy;
  a.c = dummy;
  a.m = 128;
  EXPECT_EQ(bs_gemm_launch(k, &a, nullptr), BS_ERROR_NO_DEVICE) << bs_last_error();
  bs_gemm_kernel_destroy(k);
}

// Programmatic dependent launch is a process-wide switch: on unless the
// environment says BLOCKSCALE_PDL=0, and settable either way.
TEST(CAPI, ProgrammaticLaunchSwitch) {
  const char *e = std::getenv("BLOCKSCALE_PDL");
  const int initial = (e && std::string(e) == "0") ? 0 : 1;
  EXPECT_EQ(bs_programmatic_launch(), initial);
  bs_set_programmatic_launch(0);
  EXPECT_EQ(bs_programmatic_launch(), 0);
  bs_set_programmatic_launch(7);
  EXPECT_EQ(bs_programmatic_launch(), 1);
  bs_set_programmatic_launch(initial);
}
