#include "blockscale/Runtime/KernelSpec.h"
#include "blockscale/Target/Cuda/Kernels/params.h"
#include "blockscale/Runtime/SourceGen.h"

#include "gtest/gtest.h"

#include <cstdlib>

using namespace blockscale;

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
                     "/*BC=*/1, /*TRANS=*/true, /*STAGED=*/true>"),
            std::string::npos)
      << src;
  // Casts are staged: they take the input's tensor map and need dynamic
  // shared memory for the ring, the same in either order.
  EXPECT_NE(src.find("const __grid_constant__ bs::TmaDesc tX"),
            std::string::npos)
      << src;
  EXPECT_EQ(s.quant.smemBytes(), bs::quantSmemBytes(4));
  KernelSpec plain = s;
  plain.quant.transposed = false;
  EXPECT_TRUE(plain.quant.staged());
  EXPECT_EQ(plain.quant.smemBytes(), s.quant.smemBytes());
  EXPECT_NE(generateCudaSource(plain).find("/*TRANS=*/false, /*STAGED=*/true"),
            std::string::npos);
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

TEST(KernelSpec, EnvSwitch) {
  // Unset or empty: no setting; "0": off; anything else: on.
  const char *name = "BLOCKSCALE_TEST_ENV_SWITCH";
  ::unsetenv(name);
  EXPECT_FALSE(envSwitch(name).has_value());
  ::setenv(name, "", 1);
  EXPECT_FALSE(envSwitch(name).has_value());
  ::setenv(name, "0", 1);
  EXPECT_EQ(envSwitch(name), std::optional<bool>(false));
  ::setenv(name, "1", 1);
  EXPECT_EQ(envSwitch(name), std::optional<bool>(true));
  ::setenv(name, "yes", 1);
  EXPECT_EQ(envSwitch(name), std::optional<bool>(true));
  ::unsetenv(name);
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
  EXPECT_NE(src.find("bs::GemmSm90</*BM=*/128, /*BN=*/160, /*STAGES=*/5"),
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
