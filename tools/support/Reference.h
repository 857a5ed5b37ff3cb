//===- Reference.h - host reference of the kernels' math --------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Bit-exact host versions of the casts (same f32 operations, same rounding)
// and an f64 reference GEMM, used by blockscale-gen --run,
// blockscale-run-sharded --check and the tests.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_RUNTIME_REFERENCE_H
#define BLOCKSCALE_RUNTIME_REFERENCE_H

#include "blockscale/Runtime/Gemm.h"
#include "blockscale/Runtime/Runtime.h"

#include <cstdint>
#include <random>
#include <vector>

namespace blockscale::ref {

float decodeFp8(uint8_t v, Fp8Type t);
/// Round-to-nearest-even, saturating to the largest finite value (the
/// semantics of cvt.rn.satfinite).
uint8_t encodeFp8(float x, Fp8Type t);
float fp8Max(Fp8Type t);

uint16_t floatToBf16(float x); // round to nearest even
float bf16ToFloat(uint16_t v);

/// Casts a row-major (rows, cols) input given as floats (already
/// representable in `desc.in`) exactly like the kernel: q in the kernel's
/// physical order (ldq), scales at the geometry's strides.
void quantize(const QuantDesc &desc, const float *x, int64_t rows,
              int64_t ldx, uint8_t *q, int64_t ldq, float *s,
              const ScaleGeometry &g);

/// Host operands of a GEMM in exactly the layouts the kernel reads.
struct GemmOperands {
  int64_t m, n, k, kBlocks;
  std::vector<uint8_t> a, b;   // (m, k) and (n, k), dense rows
  std::vector<float> sa, sb;   // A: (kb, ldsa) ; B: see strides below
  int64_t ldsa, ldsb, sbStrideK, sbStrideN;
  std::vector<float> cInit;    // for accumulate: initial C (f32)
};

/// Random data: values ~N(0,1) times per-row / per-block magnitudes spanning
/// 2^-6..2^6, quantized with the host cast (so scales are realistic).
GemmOperands makeGemmOperands(GemmForm form, int64_t m, int64_t n, int64_t k,
                              Fp8Type at, Fp8Type bt, bool accumulate,
                              std::mt19937_64 &rng);

/// C[r][c] in f64 for the given rows (all when empty); `out` is
/// rows.size() x n.
void gemmReference(const GemmOperands &ops, GemmForm form, Fp8Type at,
                   Fp8Type bt, const std::vector<int64_t> &rows,
                   std::vector<double> &out);

} // namespace blockscale::ref

#endif
