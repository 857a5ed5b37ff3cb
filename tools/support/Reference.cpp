//===- Reference.cpp - host reference of the kernels' math ------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "support/Reference.h"

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstring>
#include <thread>

using namespace blockscale;
using namespace blockscale::ref;

float ref::fp8Max(Fp8Type t) { return t == Fp8Type::E4M3 ? 448.f : 57344.f; }

float ref::decodeFp8(uint8_t v, Fp8Type t) {
  bool neg = v & 0x80;
  int mbits = t == Fp8Type::E4M3 ? 3 : 2;
  int bias = t == Fp8Type::E4M3 ? 7 : 15;
  int e = (v & 0x7f) >> mbits, m = v & ((1 << mbits) - 1);
  float r;
  if (t == Fp8Type::E4M3 && e == 15 && m == 7)
    r = NAN;
  else if (t == Fp8Type::E5M2 && e == 31)
    r = m ? NAN : INFINITY;
  else if (e == 0)
    r = std::ldexp(float(m), 1 - bias - mbits);
  else
    r = std::ldexp(1.f + float(m) / (1 << mbits), e - bias);
  return neg ? -r : r;
}

uint8_t ref::encodeFp8(float x, Fp8Type t) {
  int mbits = t == Fp8Type::E4M3 ? 3 : 2;
  int bias = t == Fp8Type::E4M3 ? 7 : 15;
  uint8_t sign = std::signbit(x) ? 0x80 : 0;
  if (std::isnan(x))
    return t == Fp8Type::E4M3 ? 0x7f : 0x7f;
  float a = std::fabs(x);
  float maxv = fp8Max(t);
  uint8_t maxCode = t == Fp8Type::E4M3 ? 0x7e : 0x7b;
  if (a >= maxv)
    return sign | maxCode;
  int e2;
  std::frexp(a, &e2); // a = f * 2^e2, f in [0.5, 1)
  int E = e2 - 1;
  int emin = 1 - bias;
  int qexp = (a == 0.f || E < emin) ? emin - mbits : E - mbits;
  // a / 2^qexp is exact; nearbyint rounds half to even in the default mode.
  double q = std::nearbyint(std::ldexp(double(a), -qexp));
  double v = std::ldexp(q, qexp);
  if (v >= maxv)
    return sign | maxCode;
  if (v == 0)
    return sign;
  int ve;
  std::frexp(v, &ve);
  int VE = ve - 1;
  if (VE < emin) // subnormal: mantissa counts 2^(emin - mbits)
    return sign | uint8_t(std::ldexp(v, -(emin - mbits)));
  int mant = int(std::ldexp(v, -VE) * (1 << mbits)) - (1 << mbits);
  return sign | uint8_t(((VE + bias) << mbits) | mant);
}

uint16_t ref::floatToBf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if (std::isnan(x))
    return 0x7fc0;
  u += 0x7fff + ((u >> 16) & 1);
  return uint16_t(u >> 16);
}

float ref::bf16ToFloat(uint16_t v) {
  uint32_t u = uint32_t(v) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

void ref::quantize(const QuantDesc &d, const float *x, int64_t rows,
                   int64_t ldx, uint8_t *q, int64_t ldq, float *s,
                   const ScaleGeometry &g) {
  // Block in the input frame (see emitQuantizeKernel).
  int br = d.transpose ? d.blockCols : d.blockRows;
  int bc = d.transpose ? d.blockRows : d.blockCols;
  int64_t ssr = d.transpose ? g.strideCol : g.strideRow;
  int64_t ssc = d.transpose ? g.strideRow : g.strideCol;
  float fmax = fp8Max(d.out);
  bool trans = d.writesTransposed();
  for (int64_t r0 = 0; r0 < rows; r0 += br)
    for (int64_t c0 = 0; c0 < d.cols; c0 += bc) {
      int64_t r1 = std::min(rows, r0 + br), c1 = std::min(d.cols, c0 + bc);
      float amax = 0.f;
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t c = c0; c < c1; ++c)
          amax = std::max(amax, std::fabs(x[r * ldx + c]));
      float a = std::max(amax, 1e-12f);
      float inv = fmax / a;
      s[(r0 / br) * ssr + (c0 / bc) * ssc] = a / fmax;
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t c = c0; c < c1; ++c) {
          uint8_t v = encodeFp8(x[r * ldx + c] * inv, d.out);
          if (trans)
            q[c * ldq + r] = v;
          else
            q[r * ldq + c] = v;
        }
    }
}

GemmOperands ref::makeGemmOperands(GemmForm form, int64_t m, int64_t n,
                                   int64_t k, Fp8Type at, Fp8Type bt,
                                   bool accumulate, std::mt19937_64 &rng) {
  GemmOperands o;
  o.m = m;
  o.n = n;
  o.k = k;
  o.kBlocks = (k + 127) / 128;
  std::normal_distribution<float> normal(0.f, 1.f);
  std::uniform_int_distribution<int> mag(-6, 6);
  bool wgrad = form == GemmForm::Wgrad;

  // A: rows with their own magnitude, each 128-block with its own too, so
  // that both scale factors matter.
  std::vector<float> xa(size_t(m) * k), xb(size_t(n) * k);
  for (int64_t r = 0; r < m; ++r) {
    float rowMag = std::ldexp(1.f, mag(rng));
    for (int64_t kb = 0; kb < o.kBlocks; ++kb) {
      float blkMag = rowMag * std::ldexp(1.f, mag(rng) / 2);
      for (int64_t c = kb * 128; c < std::min(k, kb * 128 + 128); ++c)
        xa[r * k + c] = bf16ToFloat(floatToBf16(normal(rng) * blkMag));
    }
  }
  for (int64_t r = 0; r < n; ++r) {
    float rowMag = std::ldexp(1.f, mag(rng) / 2);
    for (int64_t c = 0; c < k; ++c)
      xb[r * k + c] = bf16ToFloat(floatToBf16(normal(rng) * rowMag));
  }
  // Give some 128x128 blocks of B their own magnitude.
  if (!wgrad)
    for (int64_t nb = 0; nb < (n + 127) / 128; ++nb)
      for (int64_t kb = 0; kb < o.kBlocks; ++kb) {
        float f = std::ldexp(1.f, mag(rng) / 2);
        for (int64_t r = nb * 128; r < std::min(n, nb * 128 + 128); ++r)
          for (int64_t c = kb * 128; c < std::min(k, kb * 128 + 128); ++c)
            xb[r * k + c] = bf16ToFloat(floatToBf16(xb[r * k + c] * f));
      }

  // A: 1x128 on (m, k): the kernel's A-scale layout is (kb, ldsa).
  QuantDesc qa;
  qa.out = at;
  qa.rows = m;
  qa.cols = k;
  o.a.resize(size_t(m) * k);
  ScaleGeometry ga = llvm::cantFail(quantScaleGeometry(qa, m, 0));
  o.sa.assign(ga.allocElements, 0.f);
  quantize(qa, xa.data(), m, k, o.a.data(), k, o.sa.data(), ga);
  o.ldsa = ga.strideCol;

  // B given as (n, k) rows = the (k, n) operand column-major.
  QuantDesc qb;
  qb.out = bt;
  qb.rows = n;
  qb.cols = k;
  qb.transpose = true; // logical (k, n) ...
  qb.colMajor = true;  // ... stored column-major: no physical transpose
  if (wgrad) {
    qb.blockRows = 128; // 128x1 on the logical (k, n)
    qb.blockCols = 1;
  } else {
    qb.blockRows = 128;
    qb.blockCols = 128;
  }
  o.b.resize(size_t(n) * k);
  ScaleGeometry gb = llvm::cantFail(quantScaleGeometry(qb, n, 0));
  o.sb.assign(gb.allocElements, 0.f);
  quantize(qb, xb.data(), n, k, o.b.data(), k, o.sb.data(), gb);
  // Logical scale (kb, nb or n) strides.
  o.sbStrideK = gb.strideRow;
  o.sbStrideN = gb.strideCol;
  o.ldsb = wgrad ? gb.strideRow : 0;

  if (accumulate) {
    o.cInit.resize(size_t(m) * n);
    for (float &v : o.cInit)
      v = normal(rng);
  }
  return o;
}

void ref::gemmReference(const GemmOperands &o, GemmForm form, Fp8Type at,
                        Fp8Type bt, const std::vector<int64_t> &rowsIn,
                        std::vector<double> &out) {
  std::vector<int64_t> rows = rowsIn;
  if (rows.empty())
    for (int64_t r = 0; r < o.m; ++r)
      rows.push_back(r);
  float lutA[256], lutB[256];
  for (int i = 0; i < 256; ++i) {
    lutA[i] = decodeFp8(uint8_t(i), at);
    lutB[i] = decodeFp8(uint8_t(i), bt);
  }
  // Dequantize B once: (n, k) doubles.
  std::vector<double> bd(size_t(o.n) * o.k);
  bool wgrad = form == GemmForm::Wgrad;
  for (int64_t c = 0; c < o.n; ++c)
    for (int64_t kk = 0; kk < o.k; ++kk) {
      int64_t kb = kk / 128;
      double s = wgrad ? o.sb[kb * o.sbStrideK + c * o.sbStrideN]
                       : o.sb[kb * o.sbStrideK + (c / 128) * o.sbStrideN];
      bd[c * o.k + kk] = double(lutB[o.b[c * o.k + kk]]) * s;
    }
  out.assign(rows.size() * o.n, 0.0);
  // Rows are independent: spread them over the host's cores.
  unsigned workers =
      std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < workers; ++w)
    pool.emplace_back([&, w] {
      std::vector<double> arow(o.k);
      for (size_t i = w; i < rows.size(); i += workers) {
        int64_t r = rows[i];
        for (int64_t kk = 0; kk < o.k; ++kk)
          arow[kk] = double(lutA[o.a[r * o.k + kk]]) *
                     o.sa[(kk / 128) * o.ldsa + r];
        for (int64_t c = 0; c < o.n; ++c) {
          const double *brow = &bd[c * o.k];
          double acc = 0;
          for (int64_t kk = 0; kk < o.k; ++kk)
            acc += arow[kk] * brow[kk];
          if (!o.cInit.empty())
            acc += o.cInit[r * o.n + c];
          out[i * o.n + c] = acc;
        }
      }
    });
  for (std::thread &t : pool)
    t.join();
}
