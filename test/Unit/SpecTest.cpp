// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "blockscale/Runtime/KernelSpec.h"
#include "blockscale/Target/Cuda/Kernels/params.h"
#include "blockscale/Runtime/KernelFamily.h"

#include "gtest/gtest.h"

#include <cstdlib>

using namespace blockscale;

// Each spec line is refused when read back.
static void expectRefused(std::initializer_list<const char *> lines) {
  for (const char *line : lines) {
    auto r = KernelSpec::parse(line);
    EXPECT_FALSE(bool(r)) << line;
    if (!r)
      llvm::consumeError(r.takeError());
  }
}

TEST(KernelSpec, GemmRoundTrip) {
  KernelSpec s;
  s.gemm.form = GemmForm::Wgrad;
  s.gemm.a = Fp8Type::E5M2;
  s.gemm.out = DType::F32;
  s.gemm.accumulate = true;
  s.gemm.bm = 64;
  s.gemm.bn = 144;
  s.gemm.stages = 6;
  s.gemm.cluster = 2;
  s.name = kernelName(s);
  auto p = KernelSpec::parse(s.serialize());
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  EXPECT_EQ(p->serialize(), s.serialize());
  EXPECT_EQ(p->gemm.cluster, 2);
  EXPECT_EQ(s.name, "bs_gemm_b128x1_e5m2_e4m3_f32_acc_bm64_bn144_s6_c2");
}

TEST(KernelSpec, KsplitRoundTripAndSharedMemory) {
  KernelSpec s;
  s.gemm.bm = 128;
  s.gemm.bn = 64;
  s.gemm.stages = 8;
  s.gemm.ksplit = 4;
  s.name = kernelName(s);
  EXPECT_EQ(s.name, "bs_gemm_b128x128_e4m3_e4m3_bf16_bm128_bn64_s8_ks4");
  EXPECT_EQ(s.gemm.clusterCtas(), 4);
  auto p = KernelSpec::parse(s.serialize());
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  EXPECT_EQ(p->gemm.ksplit, 4);
  EXPECT_EQ(p->serialize(), s.serialize());
  // A spec line written before ksplit existed means no cluster sum.
  auto old = KernelSpec::parse("kind=gemm name=x form=fwd a=e4m3 b=e4m3 "
                               "out=bf16 accumulate=0 bm=128 bn=64 stages=8 "
                               "cluster=1");
  ASSERT_TRUE(bool(old)) << llvm::toString(old.takeError());
  EXPECT_EQ(old->gemm.ksplit, 1);
  // The receive buffer: 3 peers x 2 slabs of 64 rows x 2 of the 8 float4
  // fragments x 128 threads x 16 bytes = 24 KB, more than the 16 KB of bf16
  // staging it replaces, so the shared memory grows by 8 KB.
  EXPECT_EQ(bs::gemmKsplitRecvBytes(128, 64, 4), 3 * 2 * 2 * 128 * 16);
  EXPECT_EQ(bs::gemmSmemBytes(128, 64, 8, 2, false, 4) -
                bs::gemmSmemBytes(128, 64, 8, 2, false),
            24576 - 16384);
  // In pairs it fits the staging: 1 x 2 x 7 x 2 KB = 28 KB = 128 x 112 x 2.
  EXPECT_EQ(bs::gemmSmemBytes(128, 112, 6, 2, false, 2),
            bs::gemmSmemBytes(128, 112, 6, 2, false));
  EXPECT_GT(s.gemm.smemBytes(), 0);
}

TEST(KernelSpec, QuantRoundTripAndFromSource) {
  KernelSpec s;
  s.kind = KernelKind::Quantize;
  s.quant.in = DType::F32;
  s.quant.out = Fp8Type::E5M2;
  s.quant.br = 128;
  s.quant.bc = 1;
  s.quant.transposed = true;
  s.name = kernelName(s);
  std::string src = generateCudaSource(s);
  auto p = KernelSpec::fromSource(src);
  ASSERT_TRUE(bool(p));
  EXPECT_EQ(p->serialize(), s.serialize());
  EXPECT_NE(src.find("bs::QuantizeTile<bs::InF32, /*FMT=*/1, /*BR=*/128, "
                     "/*BC=*/1, /*TRANS=*/true>"),
            std::string::npos)
      << src;
  // Casts take the input's tensor map (and a transposing one its output's)
  // and need dynamic shared memory for the ring, the same in either order.
  EXPECT_NE(src.find("const __grid_constant__ bs::TmaDesc tX"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("const __grid_constant__ bs::TmaDesc tQ"),
            std::string::npos)
      << src;
  EXPECT_EQ(s.quant.smemBytes(), bs::quantSmemBytes(4));
  KernelSpec plain = s;
  plain.quant.transposed = false;
  EXPECT_EQ(plain.quant.smemBytes(), s.quant.smemBytes());
  std::string plainSrc = generateCudaSource(plain);
  EXPECT_NE(plainSrc.find("/*TRANS=*/false>"), std::string::npos);
  EXPECT_EQ(plainSrc.find("bs::TmaDesc tQ"), std::string::npos) << plainSrc;
}

TEST(KernelSpec, DualCastRoundTripAndSource) {
  // A dual cast names its in-order blocks and runs the transposing
  // pipeline of the rotated blocks: 1x128 beside 128x1, 128x128 beside
  // 128x128, with a producer warp, taking both results' parameters.
  KernelSpec s;
  s.kind = KernelKind::Quantize;
  s.quant.in = DType::BF16;
  s.quant.br = 1;
  s.quant.bc = 128;
  s.quant.dual = true;
  s.name = kernelName(s);
  EXPECT_EQ(s.name, "bs_quantize_bf16_e4m3_1x128_dual");
  std::string src = generateCudaSource(s);
  auto p = KernelSpec::fromSource(src);
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  EXPECT_TRUE(p->quant.dual);
  EXPECT_EQ(p->serialize(), s.serialize());
  EXPECT_NE(src.find("bs::QuantizeTile<bs::InBf16, /*FMT=*/0, /*BR=*/128, "
                     "/*BC=*/1, /*TRANS=*/true, /*DUAL=*/true>"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("const __grid_constant__ bs::QuantParams pT"),
            std::string::npos)
      << src;
  EXPECT_EQ(s.quant.threads(), 288);
  s.quant.br = 128;
  EXPECT_NE(generateCudaSource(s).find("/*BR=*/128, /*BC=*/128, "
                                       "/*TRANS=*/true, /*DUAL=*/true>"),
            std::string::npos);
  // A single-layout spec line has no dual key; a dual one of a transposed
  // or 128x1 cast is malformed.
  s.quant.dual = false;
  EXPECT_EQ(s.serialize().find(" dual="), std::string::npos);
  auto bad = KernelSpec::parse("kind=quantize name=x in=bf16 out=e4m3 br=128 "
                               "bc=1 transposed=0 dual=1");
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("dual=1"), std::string::npos);
}

TEST(KernelSpec, BatchedDualCastRoundTripAndSource) {
  // The batched dual cast of expert weights: the 128x128 dual cast with a
  // matrix index in its tile walk, its own name and spec key.
  KernelSpec s;
  s.kind = KernelKind::Quantize;
  s.quant.in = DType::F32;
  s.quant.br = s.quant.bc = 128;
  s.quant.dual = s.quant.grouped = true;
  s.name = kernelName(s);
  EXPECT_EQ(s.name, "bs_quantize_f32_e4m3_128x128_gdual");
  EXPECT_NE(s.serialize().find(" dual=1 grouped=1"), std::string::npos)
      << s.serialize();
  std::string src = generateCudaSource(s);
  auto p = KernelSpec::fromSource(src);
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  EXPECT_TRUE(p->quant.grouped);
  EXPECT_EQ(p->serialize(), s.serialize());
  EXPECT_NE(src.find("bs::QuantizeTile<bs::InF32, /*FMT=*/0, /*BR=*/128, "
                     "/*BC=*/128, /*TRANS=*/true, /*DUAL=*/true, "
                     "/*GROUPED=*/true>"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("const __grid_constant__ bs::QuantParams pT"),
            std::string::npos);
  EXPECT_EQ(s.quant.threads(), 288);
  // Not batched: no key; batched without a 128x128 dual cast: malformed.
  s.quant.grouped = false;
  EXPECT_EQ(s.serialize().find(" grouped="), std::string::npos);
  for (const char *line :
       {"kind=quantize name=x in=bf16 out=e4m3 br=128 bc=128 transposed=0 "
        "grouped=1",
        "kind=quantize name=x in=bf16 out=e4m3 br=1 bc=128 transposed=0 "
        "dual=1 grouped=1",
        "kind=quantize name=x in=bf16 out=e4m3 br=128 bc=128 transposed=0 "
        "dual=1 grouped=2"}) {
    auto bad = KernelSpec::parse(line);
    ASSERT_FALSE(bool(bad)) << line;
    EXPECT_NE(llvm::toString(bad.takeError()).find("grouped="),
              std::string::npos);
  }
}

TEST(KernelSpec, CastThreadsAndResultPolicy) {
  // Staged casts launch 256 workers and a producer warp, except the 16-bit
  // 1x128 transposing cast (register budget of two CTAs per SM).
  KernelSpec s;
  s.kind = KernelKind::Quantize;
  s.quant.in = DType::BF16;
  s.quant.br = 128;
  s.quant.bc = 1;
  s.quant.transposed = true;
  EXPECT_EQ(s.quant.threads(), 288);
  s.quant.transposed = false;
  EXPECT_EQ(s.quant.threads(), 288);
  s.quant.br = 1;
  s.quant.bc = 128;
  EXPECT_EQ(s.quant.threads(), 288);
  s.quant.transposed = true;
  EXPECT_EQ(s.quant.threads(), 256);
  s.quant.in = DType::F32;
  EXPECT_EQ(s.quant.threads(), 288);
  // Transposed results up to 256 MiB stay in L2 (evict_last), larger ones
  // do not.
  EXPECT_TRUE(bs::quantKeepResultInL2(32768ll * 4096));
  EXPECT_TRUE(bs::quantKeepResultInL2(256ll << 20));
  EXPECT_FALSE(bs::quantKeepResultInL2((256ll << 20) + 1));
  EXPECT_FALSE(bs::quantKeepResultInL2(65536ll * 8192));
}

TEST(KernelSpec, DebugOptionsAreOtherKernels) {
  // A debug option changes the source (defines), the spec line and the
  // name: another cache key and another symbol, never the release kernel.
  KernelSpec s;
  s.gemm.bm = 128;
  s.gemm.bn = 128;
  s.name = kernelName(s);
  std::string release = generateCudaSource(s);
  EXPECT_EQ(release.find("BS_DEBUG"), std::string::npos);
  EXPECT_EQ(release.find("debug="), std::string::npos);
  KernelSpec d = s;
  d.debug = DebugHang | DebugTimeline;
  d.name = kernelName(d);
  EXPECT_NE(d.name, s.name);
  EXPECT_NE(d.name.find("_dbghang_dbgtimeline"), std::string::npos) << d.name;
  std::string debug = generateCudaSource(d);
  EXPECT_NE(debug.find("#define BS_DEBUG_HANG 1"), std::string::npos);
  EXPECT_NE(debug.find("#define BS_DEBUG_TIMELINE 1"), std::string::npos);
  auto p = KernelSpec::fromSource(debug);
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  EXPECT_EQ(p->debug, unsigned(DebugHang | DebugTimeline));
  EXPECT_EQ(p->serialize(), d.serialize());
  // Parsing the list.
  EXPECT_EQ(llvm::cantFail(parseDebug("")), 0u);
  EXPECT_EQ(llvm::cantFail(parseDebug("timeline")), unsigned(DebugTimeline));
  EXPECT_EQ(llvm::cantFail(parseDebug(" hang , timeline")),
            unsigned(DebugHang | DebugTimeline));
  auto bad = parseDebug("hang,verbose");
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("'verbose'"),
            std::string::npos);
}

TEST(KernelSpec, GemmSourceInstantiatesTheTemplate) {
  KernelSpec s;
  s.gemm.bm = 128;
  s.gemm.bn = 160;
  s.gemm.stages = 5;
  s.name = kernelName(s);
  std::string src = generateCudaSource(s);
  EXPECT_NE(src.find("#define BS_WGMMA_AB \"e4m3.e4m3\""), std::string::npos);
  EXPECT_NE(src.find("#include \"blockscale/gemm_sm90.cuh\""), std::string::npos);
  EXPECT_NE(src.find("bs::GemmSm90<bs::GemmConfig</*BM=*/128, /*BN=*/160, "
                     "/*STAGES=*/5"),
            std::string::npos);
  EXPECT_NE(src.find("extern \"C\" __global__ void __launch_bounds__("
                     "BsKernel::kThreads, 1)\nbs_gemm_b128x128_e4m3_e4m3_bf16_bm128_bn160_s5("),
            std::string::npos)
      << src;
}

TEST(KernelSpec, MalformedSpecsAreErrors) {
  auto p = KernelSpec::parse("kind=gemm name=x form=fwd a=e4m3 b=e4m3");
  ASSERT_FALSE(bool(p));
  EXPECT_NE(llvm::toString(p.takeError()).find("missing"), std::string::npos);
  auto q = KernelSpec::parse("kind=gemm name=x form=sideways a=e4m3 b=e4m3 out=bf16 "
                             "accumulate=0 bm=128 bn=128 stages=4 cluster=1");
  ASSERT_FALSE(bool(q));
  EXPECT_NE(llvm::toString(q.takeError()).find("form=sideways"), std::string::npos);
  auto r = KernelSpec::parse("kind=conv name=x");
  ASSERT_FALSE(bool(r));
  llvm::consumeError(r.takeError());
  auto s = KernelSpec::fromSource("int main() {}");
  ASSERT_FALSE(bool(s));
  llvm::consumeError(s.takeError());
}

TEST(KernelSpec, KGroupedAndGroupedCastRoundTrip) {
  GroupedGemmDesc d;
  d.grouping = Grouping::KContiguous;
  d.groups = 8;
  d.m = 4096;
  d.n = 7168;
  d.out = DType::F32;
  d.accumulate = true;
  auto s = GroupedGemmFamily::plan(d);
  ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
  auto p = KernelSpec::fromSource(generateCudaSource(*s));
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  EXPECT_EQ(p->kind, KernelKind::GroupedGemm);
  EXPECT_TRUE(p->gemm.wgrad());
  EXPECT_TRUE(p->gemm.accumulate);
  EXPECT_EQ(p->serialize(), s->serialize());
  EXPECT_EQ(p->smemBytes(), s->smemBytes());
  // An m-grouped spec line (no grouping key) stays a forward kernel.
  auto m =
      KernelSpec::parse("kind=grouped name=x a=e4m3 b=e4m3 out=bf16 bm=128 "
                        "bn=128 stages=4");
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  EXPECT_FALSE(m->gemm.wgrad());
  auto bad = KernelSpec::parse("kind=grouped name=x a=e4m3 b=e4m3 out=bf16 "
                               "bm=128 bn=128 stages=4 grouping=n");
  EXPECT_FALSE(bool(bad));
  llvm::consumeError(bad.takeError());
  // Dense tiles without the stage-aligned loop (the two-accumulator loop,
  // splits summed in a cluster) have no K-specialized form. (The grouped
  // parser's refusal is checked in GroupedPairsRule.)
  expectRefused(
      {"kind=gemm name=x form=fwd a=e4m3 b=e4m3 out=bf16 accumulate=0 "
       "bm=128 bn=128 stages=5 cluster=1 ksplit=1 kblocks=56",
       "kind=gemm name=x form=fwd a=e4m3 b=e4m3 out=bf16 accumulate=0 "
       "bm=128 bn=192 stages=4 cluster=1 ksplit=2 kblocks=56"});
  auto denseAligned = KernelSpec::parse(
      "kind=gemm name=x form=fwd a=e4m3 b=e4m3 out=bf16 accumulate=0 bm=128 "
      "bn=192 stages=4 cluster=1 ksplit=1 kblocks=56");
  ASSERT_TRUE(bool(denseAligned)) << llvm::toString(denseAligned.takeError());
  EXPECT_EQ(denseAligned->smemBytes(),
            bs::gemmSmemBytes(128, 192, 4, 2, false, 1, 56));
  // A spec built by hand with kblocks on a tile without the loop: the host
  // reserves what the kernel lays out (no stash).
  GemmKernelSpec hand;
  hand.bm = 128;
  hand.bn = 128;
  hand.stages = 5;
  hand.kblocks = 56;
  EXPECT_EQ(hand.smemBytes(), bs::gemmSmemBytes(128, 128, 5, 2, false));

  GroupedQuantDesc q;
  q.in = DType::F16;
  q.out = Fp8Type::E5M2;
  q.cols = 256;
  q.groups = 4;
  auto c = GroupedQuantFamily::plan(q);
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  auto pc = KernelSpec::fromSource(generateCudaSource(*c));
  ASSERT_TRUE(bool(pc)) << llvm::toString(pc.takeError());
  EXPECT_EQ(pc->kind, KernelKind::GroupedQuantize);
  EXPECT_EQ(pc->serialize(), c->serialize());
  EXPECT_EQ(pc->threads(), 288);
  EXPECT_EQ(pc->smemBytes(), bs::groupedQuantSmemBytes(2));
}

// The m-grouped kernels take the dense forward kernels' stage-aligned rule:
// two-wave tiles and 128 x 192 ones (from 24 K-blocks) specialized for K
// where the last round pads at most 1/16 of the K-blocks.
TEST(KernelSpec, GroupedStageAlignedK) {
  GroupedGemmDesc d;
  d.grouping = Grouping::Contiguous;
  d.groups = 8;
  d.n = 6144;
  d.k = 7168;
  d.mPerGroupHint = 4096;
  auto s = GroupedGemmFamily::plan(d);
  ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
  EXPECT_EQ(s->gemm.bm, 256);
  EXPECT_EQ(s->gemm.kblocks, 56); // 56 K-blocks in 3 stages: one empty stage
  EXPECT_NE(s->name.find("_kb56"), std::string::npos) << s->name;
  EXPECT_EQ(s->smemBytes(),
            bs::gemmSmemBytes(256, 128, s->gemm.stages, 2, false, 1, 56));
  auto p = KernelSpec::fromSource(generateCudaSource(*s));
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  EXPECT_EQ(p->serialize(), s->serialize());
  EXPECT_EQ(p->gemm.kblocks, 56);
  EXPECT_NE(generateCudaSource(*s).find("/*KBLOCKS=*/56"), std::string::npos);

  d.k = 2048; // 16 K-blocks in 3 stages: two empty stages, 1/8 of the loop
  auto r = GroupedGemmFamily::plan(d);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->gemm.kblocks, 0);
  d.k = 7168;
  d.mPerGroupHint = 512; // one-wave 128 x 192 pairs: 56 K-blocks in 4 stages
  auto o = GroupedGemmFamily::plan(d);
  ASSERT_TRUE(bool(o)) << llvm::toString(o.takeError());
  EXPECT_EQ(o->gemm.bm, 128);
  EXPECT_EQ(o->gemm.bn, 192);
  EXPECT_EQ(o->gemm.kblocks, 56);
  EXPECT_EQ(o->smemBytes(),
            bs::gemmSmemBytes(128, 192, o->gemm.stages, 2, false, 1, 56));
  auto op = KernelSpec::fromSource(generateCudaSource(*o));
  ASSERT_TRUE(bool(op)) << llvm::toString(op.takeError());
  EXPECT_EQ(op->serialize(), o->serialize());
  d.mPerGroupHint = 32; // 64 x 128 single CTAs: the two-accumulator loop
  auto q = GroupedGemmFamily::plan(d);
  ASSERT_TRUE(bool(q)) << llvm::toString(q.takeError());
  EXPECT_EQ(q->gemm.bm, 64);
  EXPECT_EQ(q->gemm.kblocks, 0);

  GemmKernelSpec g;
  g.bm = 256;
  g.bn = 128;
  g.stages = 3;
  EXPECT_EQ(stageAlignedKBlocks(g, 3072, 1), 24);
  EXPECT_EQ(stageAlignedKBlocks(g, 3072, 2), 0); // workspace splits
  EXPECT_EQ(stageAlignedKBlocks(g, 512, 1), 0);  // two empty per four
  g.bm = 128; // one wave: 128 x 192 (single CTAs or pairs), 24+ K-blocks
  EXPECT_EQ(stageAlignedKBlocks(g, 3072, 1), 0);
  g.cluster = 2; // (the template has the loop for 128 x 128 pairs)
  EXPECT_TRUE(bs::gemmStageAlignable(128, 128, 2, false, 1));
  EXPECT_EQ(stageAlignedKBlocks(g, 3072, 1), 0);
  g.bn = 192;
  g.stages = 4;
  EXPECT_EQ(stageAlignedKBlocks(g, 3072, 1), 24);
  EXPECT_EQ(stageAlignedKBlocks(g, 2048, 1), 0); // 16 K-blocks
  g.cluster = 1;
  EXPECT_EQ(stageAlignedKBlocks(g, 7168, 1), 56);
  g.bm = 64;
  g.stages = 6;
  EXPECT_EQ(stageAlignedKBlocks(g, 7168, 1), 0);
  g.bm = 128;
  g.stages = 4;
  g.ksplit = 2; // splits summed in a cluster
  EXPECT_EQ(stageAlignedKBlocks(g, 7168, 1), 0);
  g.ksplit = 1;
  g.form = GemmForm::Wgrad;
  EXPECT_EQ(stageAlignedKBlocks(g, 3072, 1), 0);
  auto bad = KernelSpec::parse("kind=grouped name=x a=e4m3 b=e4m3 out=f32 "
                               "bm=128 bn=128 stages=4 grouping=k "
                               "accumulate=0 kblocks=4");
  EXPECT_FALSE(bool(bad));
  llvm::consumeError(bad.takeError());
}

// The k-grouped rule: f32 output over groups of more than 1024 tokens takes
// the dense f32 weight gradient's 128 x 192 tile; shorter groups and bf16
// output keep 128 x 128; never pairs.
TEST(KernelSpec, KGroupedTileRule) {
  GroupedGemmDesc d;
  d.grouping = Grouping::KContiguous;
  d.groups = 4;
  d.m = 4096;
  d.n = 7168;
  d.out = DType::F32;
  d.accumulate = true;
  for (auto [hint, bn] : {std::pair<int64_t, int>{8192, 192},
                          {4096, 192},
                          {2048, 192},
                          {1025, 192},
                          {1024, 128}}) {
    d.mPerGroupHint = hint;
    auto s = GroupedGemmFamily::plan(d);
    ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
    EXPECT_EQ(s->gemm.bm, 128);
    EXPECT_EQ(s->gemm.bn, bn) << "hint " << hint;
    EXPECT_EQ(s->gemm.cluster, 1);
    EXPECT_EQ(s->gemm.kblocks, 0);
  }
  d.out = DType::BF16;
  d.accumulate = false;
  d.mPerGroupHint = 8192;
  auto b = GroupedGemmFamily::plan(d);
  ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
  EXPECT_EQ(b->gemm.bn, 128);
  // Pairs are refused as the k-grouped kernel's (it has none), whatever
  // the count of N tiles (7168 in 56 tiles of 128, 50 of 144, 45 of 160).
  for (const char *force : {"cluster=2", "bn=144,cluster=2", "bn=160,cluster=2"}) {
    d.forceTile = force;
    auto c = GroupedGemmFamily::plan(d);
    ASSERT_FALSE(bool(c)) << force;
    std::string msg = llvm::toString(c.takeError());
    EXPECT_NE(msg.find("k-grouped"), std::string::npos) << force << ": " << msg;
  }
}

// Which way a launch pairs the CTAs of a pair kernel: along M (sharing B)
// for masked slots of exactly two 128-row tiles, else along N (sharing A).
TEST(KernelSpec, GroupedPairAxis) {
  GroupedGemmDesc d;
  d.grouping = Grouping::Masked;
  d.groups = 32;
  d.n = 6144;
  d.k = 7168;
  d.mMax = 192;
  auto s = GroupedGemmFamily::plan(d);
  ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
  ASSERT_EQ(s->gemm.bm, 128);
  ASSERT_EQ(s->gemm.cluster, 2);
  for (auto [mMax, alongM] : {std::pair<int64_t, bool>{129, true},
                              {192, true},
                              {256, true},
                              {128, false},
                              {257, false},
                              {1024, false}}) {
    d.mMax = mMax;
    EXPECT_EQ(GroupedGemmFamily::pairsAlongM(d, s->gemm), alongM)
        << "mMax " << mMax;
  }
  d.mMax = 192;
  GemmKernelSpec single = s->gemm;
  single.cluster = 1;
  EXPECT_FALSE(GroupedGemmFamily::pairsAlongM(d, single));
  GemmKernelSpec wide = s->gemm;
  wide.bm = 256;
  wide.bn = 128;
  EXPECT_FALSE(GroupedGemmFamily::pairsAlongM(d, wide));
  d.grouping = Grouping::Contiguous;
  d.mMax = 0;
  for (auto [hint, alongM] : {std::pair<int64_t, bool>{0, false},
                              {128, false},
                              {129, true},
                              {192, true},
                              {256, true},
                              {257, false}}) {
    d.mPerGroupHint = hint;
    EXPECT_EQ(GroupedGemmFamily::pairsAlongM(d, s->gemm), alongM)
        << "hint " << hint;
  }
}

// The m-grouped rule's CTA pairs and what a forced tile starts from.
TEST(KernelSpec, GroupedPairsRule) {
  GroupedGemmDesc d;
  d.grouping = Grouping::Contiguous;
  d.groups = 8;
  d.n = 4096;
  d.k = 2048;
  d.mPerGroupHint = 4096; // 256-row tiles, K loop not stage-aligned: pairs
  auto s = GroupedGemmFamily::plan(d);
  ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
  EXPECT_EQ(s->gemm.bm, 256);
  EXPECT_EQ(s->gemm.cluster, 2);
  EXPECT_EQ(s->gemm.kblocks, 0);
  EXPECT_NE(s->name.find("_c2"), std::string::npos) << s->name;
  auto p = KernelSpec::fromSource(generateCudaSource(*s));
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  EXPECT_EQ(p->gemm.cluster, 2);
  EXPECT_EQ(p->serialize(), s->serialize());

  d.k = 7168;
  d.mPerGroupHint = 512; // 128 x 192 in pairs: 22 N tiles
  auto q = GroupedGemmFamily::plan(d);
  ASSERT_TRUE(bool(q)) << llvm::toString(q.takeError());
  EXPECT_EQ(q->gemm.bm, 128);
  EXPECT_EQ(q->gemm.bn, 192);
  EXPECT_EQ(q->gemm.cluster, 2);

  // Above 512 rows per group (what a hint rounded up to 1024 stands for):
  // 256-row tiles.
  d.mPerGroupHint = 513;
  auto big = GroupedGemmFamily::plan(d);
  ASSERT_TRUE(bool(big)) << llvm::toString(big.takeError());
  EXPECT_EQ(big->gemm.bm, 256);
  d.mPerGroupHint = 512;

  d.n = 4224; // 22 tiles of 192 too; 4416 makes 23 (odd): 128 x 128 alone
  auto e = GroupedGemmFamily::plan(d);
  ASSERT_TRUE(bool(e)) << llvm::toString(e.takeError());
  EXPECT_EQ(e->gemm.bn, 192);
  d.n = 4416;
  auto o = GroupedGemmFamily::plan(d);
  ASSERT_TRUE(bool(o)) << llvm::toString(o.takeError());
  EXPECT_EQ(o->gemm.bm, 128);
  EXPECT_EQ(o->gemm.bn, 128);
  EXPECT_EQ(o->gemm.cluster, 1);

  // Forcing bm = 256 alone takes bn = 128 (the rule's 192 has no 256-row
  // kernel); forcing pairs over an odd count of N tiles is refused by name.
  d.n = 4096;
  d.forceTile = "bm=256";
  auto f = GroupedGemmFamily::plan(d);
  ASSERT_TRUE(bool(f)) << llvm::toString(f.takeError());
  EXPECT_EQ(f->gemm.bm, 256);
  EXPECT_EQ(f->gemm.bn, 128);
  EXPECT_EQ(f->gemm.cluster, 1);
  d.forceTile = "bm=128,bn=144,cluster=2"; // 29 N tiles
  auto odd = GroupedGemmFamily::plan(d);
  ASSERT_FALSE(bool(odd));
  std::string msg = llvm::toString(odd.takeError());
  EXPECT_NE(msg.find("even count of N tiles"), std::string::npos) << msg;
  EXPECT_NE(msg.find("29 tiles"), std::string::npos) << msg;
  d.forceTile = "bm=128,bn=128,cluster=2";
  auto even = GroupedGemmFamily::plan(d);
  ASSERT_TRUE(bool(even)) << llvm::toString(even.takeError());
  EXPECT_EQ(even->gemm.cluster, 2);

  // Spec lines the kernel cannot run are refused when read back.
  expectRefused({"kind=grouped name=x a=e4m3 b=e4m3 out=bf16 bm=64 bn=128 "
                 "stages=4 cluster=2",
                 "kind=grouped name=x a=e4m3 b=e4m3 out=bf16 bm=128 bn=128 "
                 "stages=4 kblocks=56"});
}
