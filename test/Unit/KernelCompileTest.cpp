//===- KernelCompileTest.cpp - every GEMM tile compiles asynchronously ---===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Compiles the GEMM template for every tile shape the tile selector may
// pick (both forms, both consumer counts, a multicast pair, f32 +=) with
// NVRTC, which needs no GPU, and checks what ptxas reports: no spills and
// wgmmas that stay asynchronous. ptxas silently makes every wgmma wait for
// the previous one when the template touches an accumulator of an in-flight
// wgmma or waits on one in a divergent branch ("wgmma.mma_async
// instructions are serialized", C7514/C7518); the kernel is then still
// correct but loses much of its speed, so only this test notices.
//
//===----------------------------------------------------------------------===//

#include "blockscale/Dialect/BlockScale/Transforms/TileModel.h"
#include "blockscale/Runtime/KernelSpec.h"
#include "blockscale/Runtime/Nvrtc.h"
#include "blockscale/Runtime/KernelFamily.h"
#include "blockscale/Target/Cuda/Kernels/params.h"

#include "TestUtils.h"

#include "llvm/ADT/StringExtras.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

using namespace blockscale;

namespace {
struct Case {
  GemmKernelSpec g;
  std::string what;
};

std::vector<Case> tileCases() {
  std::vector<Case> cases;
  auto add = [&](GemmForm form, int bm, int bn, DType out, bool acc,
                 int cluster, int ksplit = 1) {
    Case c;
    c.g.form = form;
    c.g.bm = bm;
    c.g.bn = bn;
    c.g.out = out;
    c.g.accumulate = acc;
    c.g.cluster = cluster;
    c.g.ksplit = ksplit;
    int outBytes = out == DType::F32 ? 4 : 2;
    c.g.stages =
        std::min(8, bs::gemmMaxStages(bm, bn, outBytes, form == GemmForm::Wgrad,
                                      232448, ksplit));
    c.what = std::string(toString(form)) + " bm" + std::to_string(bm) + " bn" +
             std::to_string(bn) + " s" + std::to_string(c.g.stages) +
             (acc ? " +=" : "") + (cluster > 1 ? " cluster2" : "") +
             (ksplit > 1 ? " ksplit" + std::to_string(ksplit) : "");
    cases.push_back(c);
  };
  for (GemmForm form : {GemmForm::Fwd, GemmForm::Wgrad})
    for (int bm : {64, 128, 256})
      for (int bn = 16; bn <= 192; bn += 16)
        if (isValidTile(bm, bn)) // the tiles the selector may pick
          add(form, bm, bn, DType::BF16, false, 1);
  add(GemmForm::Fwd, 128, 128, DType::BF16, false, 2);
  add(GemmForm::Fwd, 128, 192, DType::BF16, false, 2);
  add(GemmForm::Wgrad, 128, 128, DType::F32, true, 1);
  // Splits summed in a cluster (the planner offers 2 to 4).
  add(GemmForm::Fwd, 128, 64, DType::BF16, false, 1, 4);
  add(GemmForm::Fwd, 128, 80, DType::BF16, false, 1, 4);
  add(GemmForm::Fwd, 128, 112, DType::BF16, false, 1, 2);
  add(GemmForm::Fwd, 256, 128, DType::BF16, false, 1, 2);
  add(GemmForm::Fwd, 64, 192, DType::BF16, false, 1, 3);
  add(GemmForm::Wgrad, 128, 64, DType::F32, true, 1, 2);
  return cases;
}
} // namespace

TEST(KernelCompile, EveryGemmTileKeepsWgmmaAsynchronousWithoutSpills) {
  BS_REQUIRE_NVRTC();
  std::vector<Case> cases = tileCases();
  std::vector<std::string> failures;
  std::mutex mu;
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < cases.size();) {
      KernelSpec s;
      s.gemm = cases[i].g;
      s.name = kernelName(s);
      auto out = compileCuda(generateCudaSource(s), s.name, CompileOptions());
      std::lock_guard<std::mutex> lock(mu);
      if (!out)
        failures.push_back(cases[i].what + ": " +
                           llvm::toString(out.takeError()));
      else if (!out->wgmmaSerialized.empty() || out->spillBytes != 0)
        failures.push_back(cases[i].what + ": " + out->wgmmaSerialized +
                           " spills=" + std::to_string(out->spillBytes));
    }
  };
  unsigned n = std::max(2u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < n; ++t)
    pool.emplace_back(work);
  for (std::thread &t : pool)
    t.join();
  EXPECT_TRUE(failures.empty()) << llvm::join(failures, "\n");
  EXPECT_GE(cases.size(), 40u);
}

TEST(KernelCompile, EveryCastFitsItsRegisterBudgetWithoutSpills) {
  BS_REQUIRE_NVRTC();
  // A spill would put local-memory traffic into a bandwidth-bound kernel,
  // and registers for fewer CTAs per SM than the persistent grid assumes
  // would run it in two waves.
  std::vector<std::string> failures;
  // (transposed, dual, grouped): in input order, transposed, the
  // dual-layout casts, which write both (1x128 and 128x128 in input order
  // only), and the batched dual cast of expert weights (128x128 only).
  struct Form {
    bool tr, dual, grouped;
  };
  for (DType in : {DType::BF16, DType::F16, DType::F32})
    for (auto [br, bc] : {std::pair{1, 128}, {128, 1}, {128, 128}})
      for (Form f : {Form{false, false, false}, Form{true, false, false},
                     Form{false, true, false}, Form{false, true, true}}) {
        if ((f.dual && bc != 128) || (f.grouped && br != 128))
          continue;
        KernelSpec s;
        s.kind = KernelKind::Quantize;
        s.quant.in = in;
        s.quant.br = br;
        s.quant.bc = bc;
        s.quant.transposed = f.tr;
        s.quant.dual = f.dual;
        s.quant.grouped = f.grouped;
        s.name = kernelName(s);
        auto out = compileCuda(generateCudaSource(s), s.name, CompileOptions());
        if (!out)
          failures.push_back(s.name + ": " + llvm::toString(out.takeError()));
        else if (out->spillBytes != 0)
          failures.push_back(s.name +
                             ": registers=" + std::to_string(out->registers) +
                             " spills=" + std::to_string(out->spillBytes));
        else {
          // The persistent grid assumes quantCtasPerSM CTAs per SM: their
          // registers and shared memory (static + the ring + the 1 KB the
          // hardware reserves per CTA) must fit one SM of an H100/H200. Its
          // 64K registers are four files of 16K, one per scheduler, that
          // hold a quarter of the warps each (rounded up), each warp's in
          // units of 256.
          int ctas = bs::quantCtasPerSM(dtypeBytes(in));
          int perCta = out->staticSmemBytes + s.quant.smemBytes() + 1024;
          int warpsPerFile = (ctas * s.quant.threads() / 32 + 3) / 4;
          int regsPerWarp = (out->registers * 32 + 255) / 256 * 256;
          if (out->staticSmemBytes < 0 || ctas * perCta > 233472 ||
              warpsPerFile * regsPerWarp > 16384)
            failures.push_back(
                s.name + ": " + std::to_string(ctas) + " CTAs/SM of " +
                std::to_string(perCta) + " bytes shared memory (static " +
                std::to_string(out->staticSmemBytes) + ") and " +
                std::to_string(out->registers) + " registers do not fit");
        }
      }
  EXPECT_TRUE(failures.empty()) << llvm::join(failures, "\n");
}

TEST(KernelCompile, SerializationAdvisoryIsReported) {
  BS_REQUIRE_NVRTC();
  // A deliberately bad kernel: the accumulator is read between the wgmma
  // and its wait, which ptxas answers with the serialization advisory.
  const char *src = R"(
#include "blockscale/ptx_sm90.cuh"
#include "blockscale/wgmma_fp8.cuh"
extern "C" __global__ void bad(float *out, unsigned long long a,
                               unsigned long long b, int n) {
  float d[8], e[8];
  for (int i = 0; i < n; ++i) {
    bs::wgmmaFence();
    bs::WgmmaFp8<16>::mma(d, a, b, 0);
    bs::wgmmaCommit();
    bs::wgmmaFence();
    bs::WgmmaFp8<16>::mma(e, a, b, 0);
    bs::wgmmaCommit();
    out[threadIdx.x] += d[0] + e[1];
  }
  bs::wgmmaWait<0>();
  out[threadIdx.x + 128] = d[1] + e[0];
}
)";
  auto out = compileCuda(src, "bad", CompileOptions());
  ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
  EXPECT_NE(out->wgmmaSerialized.find("serialized"), std::string::npos)
      << out->log;
}

// CompileOptions::extra reaches NVRTC (and the cache key, which hashes
// flags()): a source that refuses to compile without the macro it defines.
TEST(KernelCompile, ExtraOptionsArePassedToNvrtc) {
  BS_REQUIRE_NVRTC();
  const char *src = R"(
#if BS_TEST_EXTRA != 7
#error "BS_TEST_EXTRA was not defined to 7"
#endif
extern "C" __global__ void k(int *out) { out[threadIdx.x] = BS_TEST_EXTRA; }
)";
  CompileOptions o;
  o.extra = {"-DBS_TEST_EXTRA=7"};
  std::vector<std::string> flags = o.flags();
  EXPECT_NE(std::find(flags.begin(), flags.end(), "-DBS_TEST_EXTRA=7"),
            flags.end());
  EXPECT_NE(flags, CompileOptions().flags());
  auto out = compileCuda(src, "extra", o);
  ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
  EXPECT_FALSE(out->binary.empty());
  auto without = compileCuda(src, "extra", CompileOptions());
  ASSERT_FALSE(bool(without));
  EXPECT_NE(llvm::toString(without.takeError()).find("BS_TEST_EXTRA"),
            std::string::npos);
}

// The k-grouped weight-gradient GEMMs (the planner's tile for each output
// and a wider forced one) and the group-aware casts: asynchronous wgmmas,
// no spills, and the casts' registers and shared memory for the CTAs per
// SM their persistent grid assumes.
TEST(KernelCompile, KGroupedGemmsAndGroupedCastsCompileWithoutSpills) {
  BS_REQUIRE_NVRTC();
  std::vector<std::string> failures;
  struct KCase {
    DType out;
    bool acc;
    const char *tile;
  };
  for (KCase c :
       {KCase{DType::F32, false, ""}, KCase{DType::F32, true, ""},
        KCase{DType::BF16, false, ""}, KCase{DType::BF16, false, "bn=192"},
        KCase{DType::F32, true, "bm=64,bn=128"},
        KCase{DType::BF16, false, "bm=256,bn=128"},
        KCase{DType::BF16, false, "bm=128,bn=64"}}) {
    GroupedGemmDesc d;
    d.grouping = Grouping::KContiguous;
    d.groups = 8;
    d.m = 4096;
    d.n = 7168;
    d.out = c.out;
    d.accumulate = c.acc;
    d.forceTile = c.tile;
    auto s = GroupedGemmFamily::plan(d);
    ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
    EXPECT_TRUE(s->gemm.wgrad());
    std::string src = generateCudaSource(*s);
    EXPECT_NE(src.find("bs::KGroupedGemmSm90<bs::GemmConfig<"),
              std::string::npos)
        << src;
    auto out = compileCuda(src, s->name, CompileOptions());
    if (!out)
      failures.push_back(s->name + ": " + llvm::toString(out.takeError()));
    else if (!out->wgmmaSerialized.empty() || out->spillBytes != 0)
      failures.push_back(s->name + ": " + out->wgmmaSerialized +
                         " spills=" + std::to_string(out->spillBytes));
    // The PTX has the FP8 wgmmas of the K loop.
    CompileOptions ptx;
    ptx.ptx = true;
    auto p = compileCuda(src, s->name, ptx);
    if (!p)
      failures.push_back(s->name + " (ptx): " + llvm::toString(p.takeError()));
    else if (p->binary.find("wgmma.mma_async.sync.aligned") ==
                 std::string::npos ||
             p->binary.find(".e4m3.e4m3") == std::string::npos)
      failures.push_back(s->name + ": no FP8 wgmma in the PTX");
  }
  for (DType in : {DType::BF16, DType::F16, DType::F32}) {
    GroupedQuantDesc q;
    q.in = in;
    q.cols = 7168;
    q.groups = 8;
    auto s = GroupedQuantFamily::plan(q);
    ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
    auto out = compileCuda(generateCudaSource(*s), s->name, CompileOptions());
    if (!out) {
      failures.push_back(s->name + ": " + llvm::toString(out.takeError()));
      continue;
    }
    int ctas = bs::quantCtasPerSM(dtypeBytes(in));
    int perCta = out->staticSmemBytes + s->smemBytes() + 1024;
    int warpsPerFile = (ctas * s->quant.threads() / 32 + 3) / 4;
    int regsPerWarp = (out->registers * 32 + 255) / 256 * 256;
    if (out->spillBytes != 0 || out->staticSmemBytes < 0 ||
        ctas * perCta > 233472 || warpsPerFile * regsPerWarp > 16384)
      failures.push_back(s->name +
                         ": registers=" + std::to_string(out->registers) +
                         " spills=" + std::to_string(out->spillBytes) +
                         " smem/CTA=" + std::to_string(perCta));
  }
  EXPECT_TRUE(failures.empty()) << llvm::join(failures, "\n");
}
