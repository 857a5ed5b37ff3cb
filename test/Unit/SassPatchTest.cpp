//===- SassPatchTest.cpp - FFMA yield interleave edits only hints --------===//
//
// The edit must touch FFMA R, R, R, R instructions only, and in them only
// the operand-b reuse flag and the yield hint. Whether the opcode test
// really names FFMA is checked against cuobjdump on the GPU machine
// (bench/sass_ffma_check.py, run 31); here the cubin comes from NVRTC.
//
//===----------------------------------------------------------------------===//

#include "blockscale/Runtime/SassPatch.h"
#include "blockscale/Runtime/KernelSpec.h"
#include "blockscale/Runtime/Nvrtc.h"
#include "blockscale/Runtime/SourceGen.h"

#include "TestUtils.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace blockscale;

static std::string gemmCubin(const CompileOptions &opts) {
  KernelSpec s;
  s.gemm.bm = 128;
  s.gemm.bn = 128;
  s.gemm.stages = 4;
  s.name = kernelName(s);
  auto out = compileCuda(generateCudaSource(s), s.name, opts);
  EXPECT_TRUE(static_cast<bool>(out)) << llvm::toString(out.takeError());
  return out ? out->binary : std::string();
}

TEST(SassPatch, EditsOnlyTheHintsOfFfmas) {
  BS_REQUIRE_NVRTC();
  const std::string plain = gemmCubin(CompileOptions());
  ASSERT_FALSE(plain.empty());

  std::string none = plain;
  auto st0 = interleaveFfmaYield(none, 0);
  ASSERT_TRUE(static_cast<bool>(st0)) << llvm::toString(st0.takeError());
  EXPECT_EQ(none, plain);
  // bm 128 x bn 128: five promotions of 64 FFMAs (the pipelined loop's
  // three steps and two tails).
  EXPECT_EQ(st0->ffma, 320);
  EXPECT_EQ(st0->changed, 0);

  std::string all = plain;
  auto st = interleaveFfmaYield(all, 16);
  ASSERT_TRUE(static_cast<bool>(st)) << llvm::toString(st.takeError());
  EXPECT_GT(st->changed, 100);
  ASSERT_EQ(all.size(), plain.size());
  int diffs = 0;
  for (size_t off = 0; off + 16 <= plain.size(); off += 16) {
    uint64_t lo0, hi0, lo1, hi1;
    std::memcpy(&lo0, plain.data() + off, 8);
    std::memcpy(&hi0, plain.data() + off + 8, 8);
    std::memcpy(&lo1, all.data() + off, 8);
    std::memcpy(&hi1, all.data() + off + 8, 8);
    if (lo0 == lo1 && hi0 == hi1)
      continue;
    ++diffs;
    EXPECT_EQ(lo0, lo1);
    EXPECT_TRUE(sass::isFfmaRRR(lo0));
    EXPECT_EQ(hi0 ^ hi1, sass::kReuseB | sass::kYield);
    EXPECT_EQ(hi1 & sass::kReuseAll, 0u); // nothing left cached
  }
  // The ELF is 16-byte aligned everywhere the code is, so every edit shows
  // up as one differing 16-byte unit.
  EXPECT_EQ(diffs, st->changed);

  // The flag goes through compileCuda (and so into the cache key).
  CompileOptions opts;
  opts.extra = {"-DBS_SASS_FFMA_YIELD=16"};
  EXPECT_EQ(gemmCubin(opts), all);
}

TEST(SassPatch, BadFlagValueIsAnError) {
  BS_REQUIRE_NVRTC();
  KernelSpec s;
  s.gemm.bm = 128;
  s.gemm.bn = 64;
  s.gemm.stages = 4;
  s.name = kernelName(s);
  for (const char *flag :
       {"-DBS_SASS_FFMA_YIELD=half", "-DBS_SASS_FFMA_YIELD=17"}) {
    CompileOptions opts;
    opts.extra = {flag};
    auto out = compileCuda(generateCudaSource(s), s.name, opts);
    ASSERT_FALSE(static_cast<bool>(out)) << flag;
    std::string msg = llvm::toString(out.takeError());
    EXPECT_NE(msg.find("expected -DBS_SASS_FFMA_YIELD=<0..16> but got"),
              std::string::npos)
        << msg;
  }
  // Another define that merely starts with the same letters is not it.
  CompileOptions other;
  other.extra = {"-DBS_SASS_FFMA_YIELDS"};
  auto out = compileCuda(generateCudaSource(s), s.name, other);
  ASSERT_TRUE(static_cast<bool>(out)) << llvm::toString(out.takeError());
  EXPECT_EQ(out->ffmaYield.textSections, 0);
}

TEST(SassPatch, RejectsWhatIsNotACubin) {
  std::string junk = "not an ELF file at all, just some bytes";
  auto st = interleaveFfmaYield(junk, 9);
  ASSERT_FALSE(static_cast<bool>(st));
  EXPECT_NE(llvm::toString(st.takeError()).find("not an ELF"),
            std::string::npos);
  std::string empty;
  auto st2 = interleaveFfmaYield(empty, 9);
  EXPECT_FALSE(static_cast<bool>(st2));
  llvm::consumeError(st2.takeError());
  auto st3 = interleaveFfmaYield(junk, 17);
  EXPECT_FALSE(static_cast<bool>(st3));
  llvm::consumeError(st3.takeError());
}
