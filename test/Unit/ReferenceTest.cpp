// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host reference cast must be exactly the kernel's arithmetic: RNE,
// saturation, subnormals, and the scale/inverse computed as f32 divisions.
#include "support/Reference.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>

using namespace blockscale;
using namespace blockscale::ref;

TEST(Fp8, EveryFiniteCodeRoundTrips) {
  for (Fp8Type t : {Fp8Type::E4M3, Fp8Type::E5M2})
    for (int b = 0; b < 256; ++b) {
      float v = decodeFp8(uint8_t(b), t);
      if (!std::isfinite(v))
        continue;
      uint8_t back = encodeFp8(v, t);
      if (v == 0)
        EXPECT_EQ(decodeFp8(back, t), 0.f);
      else
        EXPECT_EQ(back, uint8_t(b)) << "type " << int(t) << " code " << b;
    }
}

TEST(Fp8, E4M3KnownValues) {
  const Fp8Type e = Fp8Type::E4M3;
  EXPECT_EQ(encodeFp8(1.f, e), 0x38);
  EXPECT_EQ(encodeFp8(448.f, e), 0x7e);
  EXPECT_EQ(encodeFp8(500.f, e), 0x7e);          // saturates
  EXPECT_EQ(encodeFp8(-1e9f, e), 0xfe);
  EXPECT_EQ(encodeFp8(INFINITY, e), 0x7e);       // satfinite
  EXPECT_EQ(encodeFp8(std::ldexp(1.f, -9), e), 0x01); // smallest subnormal
  EXPECT_EQ(encodeFp8(std::ldexp(1.f, -10), e), 0x00); // tie -> even (0)
  EXPECT_EQ(encodeFp8(3 * std::ldexp(1.f, -10), e), 0x02); // tie -> even (2)
  EXPECT_EQ(encodeFp8(1.f + 1.f / 16, e), 0x38); // tie between 1 and 1.125
  EXPECT_EQ(encodeFp8(1.f + 3.f / 16, e), 0x3a); // tie between 1.125, 1.25
  EXPECT_EQ(decodeFp8(0x7f, e) != decodeFp8(0x7f, e), true); // NaN
}

TEST(Fp8, E5M2KnownValues) {
  const Fp8Type e = Fp8Type::E5M2;
  EXPECT_EQ(encodeFp8(1.f, e), 0x3c);
  EXPECT_EQ(encodeFp8(57344.f, e), 0x7b);
  EXPECT_EQ(encodeFp8(1e6f, e), 0x7b);
  EXPECT_EQ(decodeFp8(0x7c, e), INFINITY);
}

TEST(Bf16, RoundsToNearestEven) {
  EXPECT_EQ(floatToBf16(1.f), 0x3f80);
  float halfway; // 1 + 2^-8: halfway between two bf16 values -> even
  uint32_t u = 0x3f808000;
  std::memcpy(&halfway, &u, 4);
  EXPECT_EQ(floatToBf16(halfway), 0x3f80);
  u = 0x3f818000;
  std::memcpy(&halfway, &u, 4);
  EXPECT_EQ(floatToBf16(halfway), 0x3f82);
  EXPECT_EQ(bf16ToFloat(0x4000), 2.f);
}

TEST(ReferenceCast, ScalesAndValuesOf1x128) {
  QuantDesc d;
  d.rows = 2;
  d.cols = 256;
  std::vector<float> x(2 * 256);
  for (int i = 0; i < 512; ++i)
    x[i] = float((i % 7) - 3) * (i < 128 ? 1.f : 2.f);
  x[5] = 448.f; // block (0, 0) amax 448 -> scale 1
  ScaleGeometry g = llvm::cantFail(quantScaleGeometry(d, 2, 0));
  EXPECT_EQ(g.rows, 2);
  EXPECT_EQ(g.cols, 2);
  EXPECT_EQ(g.strideRow, 1); // M-contiguous, K-block stride rounded to 4
  EXPECT_EQ(g.strideCol, 4);
  std::vector<uint8_t> q(512);
  std::vector<float> s(g.allocElements, -1.f);
  ref::quantize(d, x.data(), 2, 256, q.data(), 256, s.data(), g);
  EXPECT_EQ(s[0], 1.f);
  EXPECT_EQ(decodeFp8(q[5], Fp8Type::E4M3), 448.f);
  EXPECT_EQ(decodeFp8(q[1], Fp8Type::E4M3), -2.f);
  // Block (0, 1): values up to 6 -> scale 6/448, q = x * (448/6).
  EXPECT_EQ(s[4], 6.f / 448.f);
  EXPECT_EQ(q[128 + 6], encodeFp8(x[128 + 6] * (448.f / 6.f), Fp8Type::E4M3));
  // Padding of the scale buffer is not written.
  EXPECT_EQ(s[2], -1.f);
}

TEST(ReferenceCast, AllZeroBlockUsesTheClamp) {
  QuantDesc d;
  d.rows = 1;
  d.cols = 128;
  std::vector<float> x(128, 0.f);
  ScaleGeometry g = llvm::cantFail(quantScaleGeometry(d, 1, 0));
  std::vector<uint8_t> q(128, 0xff);
  std::vector<float> s(g.allocElements);
  ref::quantize(d, x.data(), 1, 128, q.data(), 128, s.data(), g);
  EXPECT_EQ(s[0], 1e-12f / 448.f);
  for (uint8_t v : q)
    EXPECT_EQ(v, 0);
}

TEST(ReferenceGemm, MatchesDirectSum) {
  std::mt19937_64 rng(7);
  for (GemmForm f : {GemmForm::Fwd, GemmForm::Wgrad}) {
    GemmOperands o = makeGemmOperands(f, 3, 200, 272, Fp8Type::E4M3,
                                      Fp8Type::E4M3, false, rng);
    std::vector<double> out;
    gemmReference(o, f, Fp8Type::E4M3, Fp8Type::E4M3, {2}, out);
    ASSERT_EQ(out.size(), 200u);
    for (int n : {0, 150, 199}) {
      double want = 0;
      for (int k = 0; k < 272; ++k) {
        double a = double(decodeFp8(o.a[2 * 272 + k], Fp8Type::E4M3)) *
                   o.sa[(k / 128) * o.ldsa + 2];
        double sb = f == GemmForm::Wgrad
                        ? o.sb[(k / 128) * o.sbStrideK + n * o.sbStrideN]
                        : o.sb[(k / 128) * o.sbStrideK + (n / 128) * o.sbStrideN];
        double b = double(decodeFp8(o.b[n * 272 + k], Fp8Type::E4M3)) * sb;
        want += a * b;
      }
      EXPECT_NEAR(out[n], want, 1e-9 * std::max(1.0, std::fabs(want)));
    }
  }
}
