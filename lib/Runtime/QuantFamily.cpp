//===- QuantFamily.cpp - the cast kernel family -----------------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "LaunchSupport.h"
#include "blockscale/Runtime/Error.h"
#include "blockscale/Runtime/Runtime.h"
#include "blockscale/Target/Cuda/Kernels/params.h"

#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstring>
#include <limits>
#include <optional>

using namespace blockscale;
using namespace blockscale::detail;

// The kernel counts rows and columns in ints.
static constexpr int64_t kMaxDim = (int64_t(1) << 31) - 1;

// a * b for a, b >= 0, INT64_MAX where that overflows.
static int64_t satMul(int64_t a, int64_t b) {
  return a != 0 && b > std::numeric_limits<int64_t>::max() / a
             ? std::numeric_limits<int64_t>::max()
             : a * b;
}

std::string QuantDesc::key() const {
  return llvm::formatv("quant:{0}:{1}:{2}x{3}:{4}:{5}:{6}:{7}:{8}{9}{10}",
                       toString(in), toString(out), blockRows, blockCols,
                       transpose ? 1 : 0, colMajor ? 1 : 0, rows, cols, debug,
                       dual ? ":dual" : "",
                       groups ? ":g" + std::to_string(groups) : "")
      .str();
}

llvm::Error QuantDesc::validate() const {
  if (!isBlockRecipe(blockRows, blockCols))
    return invalidArgument(llvm::formatv("QuantDesc: expected a 1x128, 128x1 "
                                         "or 128x128 recipe but got {0}x{1}",
                                         blockRows, blockCols));
  if (cols <= 0 || rows == 0 || rows < -1 || cols > kMaxDim || rows > kMaxDim)
    return invalidArgument(llvm::formatv(
        "QuantDesc: expected 0 < cols < 2^31 and 0 < rows < 2^31 (or -1: "
        "dynamic) but got {0}x{1}",
        rows, cols));
  if (debug & ~unsigned(DebugHang))
    return invalidArgument(llvm::formatv(
        "QuantDesc: expected debug flags from DebugHang (casts have no "
        "timeline) but got {0}",
        debug));
  int inBytes = dtypeBytes(in);
  if (cols * inBytes % 16 != 0)
    return invalidArgument(llvm::formatv(
        "QuantDesc: expected input rows of a multiple of 16 bytes but got "
        "cols = {0} ({1}); pad cols to {2}",
        cols, toString(in), (cols * inBytes + 15) / 16 * 16 / inBytes));
  if (!writesTransposed() && cols % 16 != 0)
    return invalidArgument(llvm::formatv("QuantDesc: expected cols to be a "
                                         "multiple of 16 (FP8 rows for TMA) "
                                         "but got {0}",
                                         cols));
  if (dual) {
    if (writesTransposed())
      return invalidArgument(llvm::formatv(
          "QuantDesc: expected a dual cast's first result in input order "
          "(transpose == col_major) but got transpose = {0}, col_major = {1}; "
          "flip transpose (the second result is the other one)",
          transpose ? 1 : 0, colMajor ? 1 : 0));
    // The first result's block in the input's frame.
    const int br = transpose ? blockCols : blockRows;
    const int bc = transpose ? blockRows : blockCols;
    if (bc != 128)
      return invalidArgument(llvm::formatv(
          "QuantDesc: expected a dual cast's first result to have 1x128 or "
          "128x128 blocks in the input's frame but got {0}x{1}; cast the "
          "128x1 result with a single cast",
          br, bc));
    if (rows > 0 && rows % 16 != 0)
      return invalidArgument(llvm::formatv(
          "QuantDesc: expected rows to be a multiple of 16 for a dual cast "
          "(its second result's FP8 rows are the input's columns) but got "
          "{0}",
          rows));
  }
  if (groups < -1 || groups > kMaxDim)
    return invalidArgument(llvm::formatv(
        "QuantDesc: expected groups 0 (a single matrix), -1 (given at "
        "launch) or 0 < groups < 2^31 but got {0}",
        groups));
  if (groups != 0) {
    if (!dual)
      return invalidArgument(
          "QuantDesc: expected dual with groups (a batched cast is the dual "
          "weight cast) but got dual = 0");
    if (blockRows != 128 || blockCols != 128 || transpose || colMajor)
      return invalidArgument(llvm::formatv(
          "QuantDesc: expected a batched cast to be 128x128, row_major, not "
          "transposed (its results are (G, rows, cols) and (G, cols, rows)) "
          "but got {0}x{1}, transpose = {2}, col_major = {3}",
          blockRows, blockCols, transpose ? 1 : 0, colMajor ? 1 : 0));
    // The batch is planned without a module, whose verifier would bound a
    // single matrix's bytes: every byte of the input stack in int64.
    std::optional<int64_t> bytes = llvm::checkedMul<int64_t>(
        std::max<int64_t>(groups, 1), std::max<int64_t>(rows, 1));
    if (bytes)
      bytes = llvm::checkedMul<int64_t>(*bytes, cols);
    if (bytes)
      bytes = llvm::checkedMul<int64_t>(*bytes, dtypeBytes(in));
    if (!bytes)
      return invalidArgument(llvm::formatv(
          "QuantDesc: expected the batched cast's input ({0} x {1} x {2} {3}) "
          "to be at most 2^63 - 1 bytes but it is not; cast fewer matrices "
          "at a time",
          groups, rows, cols, toString(in)));
  }
  if (writesTransposed() && rows > 0 && rows % 16 != 0)
    return invalidArgument(llvm::formatv(
        "QuantDesc: expected rows to be a multiple of 16 for a transposed "
        "result (its FP8 rows are the input's columns) but got {0}",
        rows));
  return llvm::Error::success();
}

std::string QuantFamily::kernelName(const Spec &q) {
  return llvm::formatv("bs_quantize_{0}_{1}_{2}x{3}{4}", toString(q.in),
                       toString(q.out), q.br, q.bc,
                       q.grouped      ? "_gdual"
                       : q.dual       ? "_dual"
                       : q.transposed ? "_t"
                                      : "")
      .str();
}

void QuantFamily::writeInstantiation(const Spec &q, const std::string &name,
                                     llvm::raw_ostream &os) {
  const char *in = q.in == DType::BF16  ? "bs::InBf16"
                   : q.in == DType::F16 ? "bs::InF16"
                                        : "bs::InF32";
  os << "#include \"blockscale/quantize.cuh\"\n\n";
  if (q.dual) {
    // The transposing cast's pipeline with the transposed result's blocks
    // (128x1 or 128x128 of the input); the in-order result rides along.
    os << llvm::formatv("using BsKernel = bs::QuantizeTile<{0}, /*FMT=*/{1}, "
                        "/*BR=*/128, /*BC=*/{2}, /*TRANS=*/true, "
                        "/*DUAL=*/true{3}>;\n\n",
                        in, q.out == Fp8Type::E4M3 ? 0 : 1, q.br == 1 ? 1 : 128,
                        q.grouped ? ", /*GROUPED=*/true" : "");
    os << "extern \"C\" __global__ void "
          "__launch_bounds__(BsKernel::kThreads, BsKernel::kMinCtas)\n"
       << name << "(const __grid_constant__ bs::QuantParams p,\n"
       << "    const __grid_constant__ bs::QuantParams pT,\n"
       << "    const __grid_constant__ bs::TmaDesc tX,\n"
       << "    const __grid_constant__ bs::TmaDesc tQ) {\n"
       << "  BsKernel::run(p, pT, tX, tQ);\n}\n";
    return;
  }
  os << llvm::formatv("using BsKernel = bs::QuantizeTile<{0}, /*FMT=*/{1}, "
                      "/*BR=*/{2}, /*BC=*/{3}, /*TRANS=*/{4}>;\n\n",
                      in, q.out == Fp8Type::E4M3 ? 0 : 1, q.br, q.bc,
                      q.transposed ? "true" : "false");
  os << "extern \"C\" __global__ void "
        "__launch_bounds__(BsKernel::kThreads, BsKernel::kMinCtas)\n"
     << name << "(const __grid_constant__ bs::QuantParams p,\n"
     << "    const __grid_constant__ bs::TmaDesc tX";
  if (q.transposed)
    os << ",\n    const __grid_constant__ bs::TmaDesc tQ) {\n"
       << "  BsKernel::run(p, tX, tQ);\n}\n";
  else
    os << ") {\n  BsKernel::run(p, tX);\n}\n";
}

llvm::Expected<ScaleGeometry> blockscale::quantScaleGeometry(const QuantDesc &q,
                                                             int64_t rows,
                                                             int64_t ldScale) {
  if (rows < 0)
    rows = q.rows;
  if (rows < 0)
    return invalidArgument("quantScaleGeometry: the cast's rows are dynamic; "
                           "give the number of rows");
  // The logical result is the input or its transpose.
  int64_t l0 = q.transpose ? q.cols : rows, l1 = q.transpose ? rows : q.cols;
  if (q.groups == 0)
    return scaleGeometry(q.blockRows, q.blockCols, l0, l1, ldScale);
  // One matrix of a batched cast: row-major, as the grouped GEMMs read
  // their B scales.
  auto g = scaleGeometry(q.blockRows, q.blockCols, l0, l1);
  if (!g)
    return g.takeError();
  if (ldScale != 0 && (ldScale < g->cols || ldScale > (int64_t(1) << 40)))
    return invalidArgument(llvm::formatv(
        "quantScaleGeometry: expected a batched cast's ldScale >= {0}, below "
        "2^40, but got {1}",
        g->cols, ldScale));
  g->strideRow = ldScale ? ldScale : g->cols;
  g->strideCol = 1;
  g->allocElements = satMul(g->rows, g->strideRow);
  if (g->allocElements == std::numeric_limits<int64_t>::max())
    return invalidArgument(llvm::formatv(
        "quantScaleGeometry: {0} rows of {1} scales overflow 64 bits", g->rows,
        g->strideRow));
  return g;
}

// A batched dual cast (QuantDesc::groups): G matrices of rows x cols, each
// cast into both layouts with 128x128 blocks; every matrix's scales are
// row-major, as the grouped GEMMs read them (quantize_grouped_weight).
static llvm::Error launchBatched(CompiledKernel &kernel, const QuantDesc &q,
                                 const QuantArgs &a, CUstream stream) {
  const int64_t rows = q.rows >= 0 ? q.rows : a.rows;
  const int64_t cols = q.cols;
  if (rows < 0)
    return invalidArgument(
        "launchQuantize: rows are dynamic; set QuantArgs::rows");
  if (q.rows >= 0 && a.rows >= 0 && a.rows != q.rows)
    return invalidArgument(llvm::formatv("launchQuantize: the kernel was "
                                         "built for {0} rows but got {1}",
                                         q.rows, a.rows));
  if (q.groups < 0 && a.groups == 0)
    return invalidArgument("launchQuantize: the batched cast's number of "
                           "matrices is dynamic; set QuantArgs::groups");
  const int64_t groups = q.groups > 0 ? q.groups : a.groups;
  if (q.groups > 0 && a.groups != 0 && a.groups != q.groups)
    return invalidArgument(llvm::formatv("launchQuantize: the kernel was "
                                         "built for {0} groups but got {1}",
                                         q.groups, a.groups));
  if (groups < 0 || groups > kMaxDim || rows > kMaxDim || rows % 16)
    return invalidArgument(llvm::formatv(
        "launchQuantize: expected a batched cast of 0 <= groups < 2^31 "
        "matrices of rows < 2^31, a multiple of 16, but got groups = {0}, "
        "rows = {1}",
        groups, rows));
  if (!kernel.spec.quant.grouped)
    return invalidArgument(llvm::formatv(
        "launchQuantize: the kernel {0} is not a batched cast but the "
        "description has groups = {1}",
        kernel.spec.name, q.groups));
  if (groups == 0 || rows == 0)
    return llvm::Error::success();
  if (!a.x || !a.q || !a.s || !a.qT || !a.sT)
    return invalidArgument("launchQuantize: null pointer argument (a batched "
                           "cast needs x, q, scale, q_t and scale_t)");
  if (!aligned16(a.x) || !aligned16(a.q) || !aligned16(a.qT))
    return invalidArgument(llvm::formatv(
        "launchQuantize: expected 16-byte aligned x, q and q_t but got x = "
        "{0}, q = {1}, q_t = {2}",
        a.x, a.q, a.qT));
  const int eb = dtypeBytes(q.in);
  const int64_t rb = ceilDiv(rows, 128), cb = ceilDiv(cols, 128);
  const int64_t ldx = a.ldx ? a.ldx : cols, ldq = a.ldq ? a.ldq : cols;
  const int64_t ldqT = a.ldqT ? a.ldqT : rows;
  const int64_t lds = a.ldScale ? a.ldScale : cb;
  const int64_t ldsT = a.ldScaleT ? a.ldScaleT : rb;
  const int64_t kMaxStride = int64_t(1) << 40;
  if (ldx < cols || ldx * eb % 16 || ldq < cols || ldq % 16 || ldqT < rows ||
      ldqT % 16 || lds < cb || ldsT < rb || ldx > kMaxStride ||
      ldq > kMaxStride || ldqT > kMaxStride || lds > kMaxStride ||
      ldsT > kMaxStride)
    return invalidArgument(llvm::formatv(
        "launchQuantize: expected ldx >= {0} with 16-byte rows, ldq >= {0} "
        "and ldq_t >= {1}, multiples of 16, ld_scale >= {2} and ld_scale_t "
        ">= {3}, all below 2^40, but got ldx = {4}, ldq = {5}, ldq_t = {6}, "
        "ld_scale = {7}, ld_scale_t = {8}",
        cols, rows, cb, rb, ldx, ldq, ldqT, lds, ldsT));
  // One matrix's extent in each buffer (saturated: a stride past 2^50 is
  // rejected below anyway).
  const int64_t ex = satMul(rows, ldx), eq = satMul(rows, ldq),
                eqT = satMul(cols, ldqT), es = satMul(rb, lds),
                esT = satMul(cb, ldsT);
  const int64_t gsx = a.groupStrideX ? a.groupStrideX : ex;
  const int64_t gsq = a.groupStrideQ ? a.groupStrideQ : eq;
  const int64_t gsqT = a.groupStrideQT ? a.groupStrideQT : eqT;
  const int64_t gss = a.groupStrideScale ? a.groupStrideScale : es;
  const int64_t gssT = a.groupStrideScaleT ? a.groupStrideScaleT : esT;
  const int64_t kMaxGroupStride = int64_t(1) << 50;
  if (gsx > kMaxGroupStride || gsq > kMaxGroupStride ||
      gsqT > kMaxGroupStride || gss > kMaxGroupStride ||
      gssT > kMaxGroupStride || gsx < ex || gsx * eb % 16 || gsq < eq ||
      gsq % 16 || gsqT < eqT || gsqT % 16 || gss < es || gssT < esT)
    return invalidArgument(llvm::formatv(
        "launchQuantize: expected the group strides to cover one matrix "
        "(x >= {0} with 16-byte steps, q >= {1} and q_t >= {2}, multiples of "
        "16, scale >= {3}, scale_t >= {4}; all below 2^50) but got x = {5}, "
        "q = {6}, q_t = {7}, scale = {8}, scale_t = {9}",
        ex, eq, eqT, es, esT, gsx, gsq, gsqT, gss, gssT));
  // (Each factor is below 2^31.)
  const int64_t tiles = satMul(groups, rb * cb);
  if (tiles >= (int64_t(1) << 31))
    return invalidArgument(llvm::formatv(
        "launchQuantize: {0} matrices of {1}x{2} have {3} tiles of 128x128, "
        "but the kernel counts them in 31 bits; cast them in parts",
        groups, rows, cols, tiles));

  auto dOr = getCudaDriver();
  if (!dOr)
    return dOr.takeError();
  const CudaDriver &d = *dOr;
  auto fn = kernel.function();
  if (!fn)
    return fn.takeError();
  auto sms = currentDeviceSMs();
  if (!sms)
    return sms.takeError();

  // p: the result in input order, (G, rows, cols) with row-major scales;
  // pT: the transposed one, stored through tQ, whose block (i, j) of the
  // input is its logical scale (j, i).
  bs::QuantParams p;
  std::memset(&p, 0, sizeof(p));
  p.x = a.x;
  p.q = a.q;
  p.s = a.s;
  p.rows = int(rows);
  p.cols = int(cols);
  p.ldx = ldx;
  p.ldq = ldq;
  p.ssr = lds;
  p.ssc = 1;
  p.keepResultInL2 = bs::quantKeepResultInL2(groups * rows * cols) ? 1 : 0;
  p.groups = int(groups);
  p.gsq = gsq;
  p.gss = gss;
  bs::QuantParams pT = p;
  pT.q = a.qT;
  pT.s = a.sT;
  pT.ldq = ldqT;
  pT.ssr = 1;
  pT.ssc = ldsT;
  pT.gsq = gsqT;
  pT.gss = gssT;

  const QuantKernelSpec &qs = kernel.spec.quant;
  CUlaunchConfig cfg;
  std::memset(&cfg, 0, sizeof(cfg));
  cfg.gridDimX = unsigned(
      std::min<int64_t>(tiles, int64_t(*sms) * bs::quantCtasPerSM(eb)));
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = qs.threads();
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.sharedMemBytes = unsigned(qs.smemBytes());
  cfg.hStream = stream;
  // One box per tile of one matrix: TMA zero-fills (loads) and clips
  // (stores) each dimension at its extent, so that no box reaches into the
  // next matrix.
  CUtensorMap tX, tQ;
  std::memset(&tX, 0, sizeof(tX));
  std::memset(&tQ, 0, sizeof(tQ));
  CUtensorMapDataType type =
      qs.in == DType::BF16  ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
      : qs.in == DType::F16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                            : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  if (auto e = encodeTensorMap3d(
          d, &tX, type, a.x, uint64_t(cols), uint64_t(rows), uint64_t(groups),
          uint64_t(ldx) * eb, uint64_t(gsx) * eb, 128, 128,
          CU_TENSOR_MAP_SWIZZLE_NONE, "the batched cast's input"))
    return e;
  if (auto e = encodeTensorMap3d(
          d, &tQ, CU_TENSOR_MAP_DATA_TYPE_UINT8, a.qT, uint64_t(rows),
          uint64_t(cols), uint64_t(groups), uint64_t(ldqT), uint64_t(gsqT), 128,
          128, CU_TENSOR_MAP_SWIZZLE_128B,
          "the batched cast's transposed output"))
    return e;
  CUlaunchAttribute attrs[1];
  addProgrammaticLaunch(cfg, attrs);
  void *params[] = {&p, &pT, &tX, &tQ};
  return d.check(d.cuLaunchKernelEx(&cfg, *fn, params, nullptr),
                 "cuLaunchKernelEx");
}

llvm::Error QuantFamily::launch(CompiledKernel &kernel, const LaunchConfig &,
                                const Desc &q, const Args &a,
                                CUstream stream) {
  if (kernel.spec.kind != KernelKind::Quantize)
    return invalidArgument("launchQuantize: " + kernel.spec.name +
                           " is not a cast kernel");
  if (q.groups != 0)
    return launchBatched(kernel, q, a, stream);
  if (kernel.spec.quant.grouped)
    return invalidArgument(llvm::formatv(
        "launchQuantize: the kernel {0} is a batched cast but the "
        "description has groups = 0",
        kernel.spec.name));
  int64_t rows = q.rows >= 0 ? q.rows : a.rows;
  if (rows < 0)
    return invalidArgument(
        "launchQuantize: rows are dynamic; set QuantArgs::rows");
  if (q.rows >= 0 && a.rows >= 0 && a.rows != q.rows)
    return invalidArgument(llvm::formatv("launchQuantize: the kernel was "
                                         "built for {0} rows but got {1}",
                                         q.rows, a.rows));
  if (rows > kMaxDim)
    return invalidArgument(llvm::formatv(
        "launchQuantize: expected rows < 2^31 but got {0}", rows));
  if (rows == 0)
    return llvm::Error::success();
  if ((q.writesTransposed() || q.dual) && rows % 16)
    return invalidArgument(llvm::formatv("launchQuantize: expected rows to be "
                                         "a multiple of 16 for a transposed "
                                         "result but got {0}",
                                         rows));
  if (kernel.spec.quant.dual != q.dual)
    return invalidArgument(llvm::formatv(
        "launchQuantize: the kernel {0} is {1} but the description is {2}",
        kernel.spec.name, kernel.spec.quant.dual ? "dual" : "single-layout",
        q.dual ? "dual" : "single-layout"));
  if (q.dual && (!a.qT || !a.sT || !aligned16(a.qT)))
    return invalidArgument("launchQuantize: a dual cast needs its second "
                           "result qT (16-byte aligned) and scales sT");
  if (!a.x || !a.q || !a.s)
    return invalidArgument("launchQuantize: null pointer argument (x, q and "
                           "scale are required)");
  if (!aligned16(a.x) || !aligned16(a.q))
    return invalidArgument(llvm::formatv(
        "launchQuantize: expected 16-byte aligned input and output but got "
        "x = {0}, q = {1}",
        a.x, a.q));
  const int64_t ldx = a.ldx ? a.ldx : q.cols;
  const int64_t qRow = q.writesTransposed() ? rows : q.cols;
  const int64_t ldq = a.ldq ? a.ldq : qRow;
  const int64_t kMaxStride = int64_t(1) << 40;
  if (ldx < q.cols || (ldx * dtypeBytes(q.in)) % 16 || ldq % 16 || ldq < qRow ||
      ldx > kMaxStride || ldq > kMaxStride)
    return invalidArgument(llvm::formatv(
        "launchQuantize: expected ldx >= {0} with 16-byte rows and ldq >= {1}, "
        "a multiple of 16, both below 2^40, but got ldx = {2}, ldq = {3}",
        q.cols, qRow, ldx, ldq));
  auto g = quantScaleGeometry(q, rows, a.ldScale);
  if (!g)
    return withContext(g.takeError(), "launchQuantize: ");
  // A dual cast's second result: quantize(x, recipe, layout, !transpose),
  // written transposed, rows FP8 bytes per row.
  QuantDesc second = q;
  second.transpose = !q.transpose;
  second.dual = false;
  const int64_t ldqT = a.ldqT ? a.ldqT : rows;
  if (q.dual && (ldqT % 16 || ldqT < rows || ldqT > kMaxStride))
    return invalidArgument(llvm::formatv(
        "launchQuantize: expected the dual cast's ldqT >= {0}, a multiple of "
        "16 below 2^40, but got {1}",
        rows, ldqT));
  std::optional<ScaleGeometry> gT;
  if (q.dual) {
    auto g2 = quantScaleGeometry(second, rows, a.ldScaleT);
    if (!g2)
      return withContext(g2.takeError(),
                         "launchQuantize: the second result's scales: ");
    gT = *g2;
  }

  auto dOr = getCudaDriver();
  if (!dOr)
    return dOr.takeError();
  const CudaDriver &d = *dOr;
  auto fn = kernel.function();
  if (!fn)
    return fn.takeError();

  bs::QuantParams p;
  std::memset(&p, 0, sizeof(p));
  p.x = a.x;
  p.q = a.q;
  p.s = a.s;
  p.rows = int(rows);
  p.cols = int(q.cols);
  p.ldx = ldx;
  p.ldq = ldq;
  // Block (i, j) of the input is logical scale (i, j), or (j, i) when the
  // logical result is the transpose.
  p.ssr = q.transpose ? g->strideCol : g->strideRow;
  p.ssc = q.transpose ? g->strideRow : g->strideCol;
  p.keepResultInL2 = bs::quantKeepResultInL2(rows * q.cols) ? 1 : 0;
  bs::QuantParams pT = p;
  if (q.dual) {
    pT.q = a.qT;
    pT.s = a.sT;
    pT.ldq = ldqT;
    pT.ssr = second.transpose ? gT->strideCol : gT->strideRow;
    pT.ssc = second.transpose ? gT->strideRow : gT->strideCol;
  }

  const QuantKernelSpec &qs = kernel.spec.quant;
  // Persistent: as many CTAs as fit at once walk the 128x128 tiles, which
  // TMA loads as boxes (zero-filled past the input's edges).
  auto sms = currentDeviceSMs();
  if (!sms)
    return sms.takeError();
  const int64_t tiles = ceilDiv(q.cols, 128) * ceilDiv(rows, 128);
  CUlaunchConfig cfg;
  std::memset(&cfg, 0, sizeof(cfg));
  cfg.gridDimX = unsigned(std::min<int64_t>(
      tiles, int64_t(*sms) * bs::quantCtasPerSM(dtypeBytes(q.in))));
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = qs.threads();
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.sharedMemBytes = unsigned(qs.smemBytes());
  cfg.hStream = stream;
  if (tiles >= (int64_t(1) << 31))
    return invalidArgument(llvm::formatv(
        "launchQuantize: {0}x{1} has {2} tiles of 128x128, but the kernel "
        "counts them in 31 bits; cast it in parts",
        rows, q.cols, tiles));
  CUtensorMap tX, tQ;
  std::memset(&tX, 0, sizeof(tX));
  std::memset(&tQ, 0, sizeof(tQ));
  CUtensorMapDataType type = qs.in == DType::BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                             : qs.in == DType::F16
                                 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  if (auto e = encodeTensorMap(d, &tX, type, a.x, uint64_t(q.cols),
                               uint64_t(rows),
                               uint64_t(ldx) * dtypeBytes(q.in), 128, 128,
                               CU_TENSOR_MAP_SWIZZLE_NONE, "the cast's input"))
    return e;
  // A transposing cast stores each FP8 tile transposed by TMA from a
  // 128B-swizzled copy in shared memory; the box is clipped at the edges.
  if (qs.transposed || qs.dual)
    if (auto e = encodeTensorMap(d, &tQ, CU_TENSOR_MAP_DATA_TYPE_UINT8,
                                 qs.dual ? a.qT : a.q, uint64_t(rows),
                                 uint64_t(q.cols),
                                 uint64_t(qs.dual ? ldqT : ldq), 128, 128,
                                 CU_TENSOR_MAP_SWIZZLE_128B,
                                 "the cast's transposed output"))
      return e;
  CUlaunchAttribute attrs[1];
  addProgrammaticLaunch(cfg, attrs);
  // (The driver reads as many entries of `params` as the kernel has
  // parameters: a cast in input order has no tQ.)
  void *params[] = {&p, &tX, &tQ};
  void *dualParams[] = {&p, &pT, &tX, &tQ};
  return d.check(d.cuLaunchKernelEx(&cfg, *fn, qs.dual ? dualParams : params,
                                    nullptr),
                 "cuLaunchKernelEx");
}
