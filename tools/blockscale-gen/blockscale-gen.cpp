//===- blockscale-gen.cpp - generate, compile and run kernels ---*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//   blockscale-gen --m 512 --n 2112 --k 7168 --form fwd --emit cuda
//   blockscale-gen --m 4096 --n 7168 --k 16384 --run         (needs a GPU)
//   blockscale-gen --op quantize --rows 4096 --cols 7168 --recipe 1x128 --run
//   blockscale-gen --op grouped --groups 8 --grouping contiguous --m 4096
//                  --n 4096 --k 7168 --emit cuda
//   blockscale-gen --op grouped --groups 8 --grouping k --m 4096 --n 7168
//                  --k 8192 --out-dtype f32 --accumulate --emit spec
//   blockscale-gen input.mlir --emit ptx
//
// --run uploads random data (quantized on the host with the bit-exact
// reference cast), poisons the output, launches, checks against an f64 host
// reference (GEMM) or bit for bit (casts), then times the kernel with CUDA
// events (median of --iters launches) and prints TFLOP/s or GB/s.
//
//===----------------------------------------------------------------------===//

#include "blockscale/Dialect/BlockScale/IR/BlockScale.h"
#include "blockscale/Dialect/BlockScale/Transforms/Passes.h"
#include "blockscale/JIT/Jit.h"
#include "blockscale/Runtime/CudaDriver.h"
#include "support/Reference.h"
#include "support/Timeline.h"
#include "blockscale/Target/Cuda/CudaEmitter.h"
#include "blockscale/VersionPrinter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

using namespace blockscale;
namespace cl = llvm::cl;

static cl::OptionCategory cat("blockscale-gen options");
static cl::opt<std::string> inputFile(cl::Positional, cl::init(""),
                                      cl::desc("[input.mlir]"), cl::cat(cat));
static cl::opt<std::string> opKind("op", cl::init("gemm"),
                                   cl::desc("gemm | quantize | grouped (default: gemm)"),
                                   cl::cat(cat));
static cl::opt<int64_t>
    optGroups("groups", cl::init(8),
              cl::desc("--op grouped: number of groups G (default: 8); "
                       "quantize --dual --recipe=128x128: a batched cast of "
                       "G matrices (-1: given at launch)"),
              cl::cat(cat));
static cl::opt<std::string> optGrouping(
    "grouping", cl::init("contiguous"),
    cl::desc("--op grouped: contiguous (--m: typical rows per group), "
             "masked (--m: rows per group slot) or k (the k-grouped weight "
             "gradient: C[g] (--m, --n) over --k typical tokens per group, "
             "--accumulate: C +=)"),
    cl::cat(cat));
static cl::opt<int64_t> optM("m", cl::init(512),
                             cl::desc("M (-1: dynamic; default: 512)"),
                             cl::cat(cat));
static cl::opt<int64_t> optN("n", cl::init(2112), cl::desc("N (default: 2112)"),
                             cl::cat(cat));
static cl::opt<int64_t> optK("k", cl::init(7168), cl::desc("K (default: 7168)"),
                             cl::cat(cat));
static cl::opt<std::string>
    optForm("form", cl::init("fwd"),
            cl::desc("fwd | dgrad | wgrad (default: fwd)"), cl::cat(cat));
static cl::opt<std::string> optOut("out-dtype", cl::init("bf16"),
                                   cl::desc("bf16 | f32 (default: bf16)"),
                                   cl::cat(cat));
static cl::opt<std::string> optAType("a-type", cl::init("e4m3"),
                                     cl::desc("e4m3 | e5m2 (default: e4m3)"),
                                     cl::cat(cat));
static cl::opt<std::string> optBType("b-type", cl::init("e4m3"),
                                     cl::desc("e4m3 | e5m2 (default: e4m3)"),
                                     cl::cat(cat));
static cl::opt<bool> optAccumulate("accumulate", cl::init(false),
                                   cl::desc("C += A @ B (f32 output)"),
                                   cl::cat(cat));
static cl::opt<std::string>
    optForce("force-tile", cl::init(""),
             cl::desc("e.g. bm=128,bn=128,stages=4,splits=1 (also raster, "
                      "cluster, ksplit=splits: splits summed in a cluster)"),
             cl::cat(cat));
static cl::opt<int>
    optSMs("num-sms", cl::init(0),
           cl::desc("SM count (0, the default: the GPU's, or 132)"),
           cl::cat(cat));
static cl::opt<int64_t>
    optRows("rows", cl::init(4096),
            cl::desc("quantize: input rows (default: 4096)"), cl::cat(cat));
static cl::opt<int64_t>
    optCols("cols", cl::init(7168),
            cl::desc("quantize: input columns (default: 7168)"), cl::cat(cat));
static cl::opt<std::string>
    optRecipe("recipe", cl::init("1x128"),
              cl::desc("quantize: 1x128 | 128x1 | "
                       "128x128 (of the result; default: 1x128)"),
              cl::cat(cat));
static cl::opt<bool> optTranspose("transpose", cl::init(false),
                                  cl::desc("quantize: result is input^T"),
                                  cl::cat(cat));
static cl::opt<bool> optColMajor("col-major", cl::init(false),
                                 cl::desc("quantize: result stored "
                                          "column-major"),
                                 cl::cat(cat));
static cl::opt<bool> optDual("dual", cl::init(false),
                             cl::desc("quantize: also write the result with "
                                      "transpose flipped, from the same read "
                                      "(dual-layout cast)"),
                             cl::cat(cat));
static cl::opt<std::string>
    optInType("in-dtype", cl::init("bf16"),
              cl::desc("quantize: bf16 | f16 | f32 (default: bf16)"),
              cl::cat(cat));
static cl::opt<std::string> optEmit("emit", cl::init(""),
                                    cl::desc("cuda | ptx | cubin | mlir | "
                                             "spec (default: cuda unless "
                                             "--run)"),
                                    cl::cat(cat));
static cl::opt<std::string>
    outputFile("o", cl::init("-"), cl::desc("output file (default: -, stdout)"),
               cl::cat(cat));
static cl::opt<bool> optRun("run", cl::init(false),
                            cl::desc("run on the GPU, check and time"),
                            cl::cat(cat));
static cl::opt<int> optIters("iters", cl::init(50),
                             cl::desc("timed launches (default: 50)"),
                             cl::cat(cat));
static cl::opt<int>
    optCheckRows("check-rows", cl::init(96),
                 cl::desc("GEMM rows checked against the "
                          "f64 reference (0: all; default: 96)"),
                 cl::cat(cat));
static cl::opt<double>
    optTol("tol", cl::init(-1),
           cl::desc("relative-error bound (default 2e-3 "
                    "for bf16, 2.5e-3 when fewer than 4096 "
                    "values are checked, 5e-4 for f32: FP8 wgmma "
                    "accumulates with ~2^-14 precision "
                    "inside a 128-deep block)"),
           cl::cat(cat));
static cl::opt<uint64_t> optSeed("seed", cl::init(0),
                                 cl::desc("random seed (0, the default: from the clock)"),
                                 cl::cat(cat));
static cl::opt<std::string>
    optDebug("debug", cl::init(""),
             cl::desc("debug options compiled into the kernel (part of its "
                      "cache key), a comma-separated list of: hang (mbarrier "
                      "waits trap with a message instead of hanging), "
                      "timeline (GEMM --run: per-CTA phase stamps, reported "
                      "after one more launch)"),
             cl::value_desc("hang,timeline"), cl::cat(cat));

static int fail(const llvm::Twine &msg) {
  llvm::errs() << "blockscale-gen: error: " << msg << "\n";
  return 1;
}

static int fail(llvm::Error e) { return fail(llvm::toString(std::move(e))); }

static bool parseFp8(llvm::StringRef s, Fp8Type &t) {
  if (s == "e4m3")
    t = Fp8Type::E4M3;
  else if (s == "e5m2")
    t = Fp8Type::E5M2;
  else
    return false;
  return true;
}

static bool parseDType(llvm::StringRef s, DType &t) {
  if (s == "bf16")
    t = DType::BF16;
  else if (s == "f16")
    t = DType::F16;
  else if (s == "f32")
    t = DType::F32;
  else
    return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Device helpers (driver API only)
//===----------------------------------------------------------------------===//

namespace {
struct DeviceBuffer {
  const CudaDriver *d = nullptr;
  CUdeviceptr ptr = 0;
  size_t bytes = 0;
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer &) = delete;
  ~DeviceBuffer() {
    if (ptr)
      d->cuMemFree_v2(ptr);
  }
  llvm::Error alloc(const CudaDriver &drv, size_t n) {
    d = &drv;
    bytes = std::max<size_t>(n, 16);
    return d->check(d->cuMemAlloc_v2(&ptr, bytes), "cuMemAlloc");
  }
  llvm::Error upload(const void *src, size_t n) {
    return d->check(d->cuMemcpyHtoD_v2(ptr, src, n), "cuMemcpyHtoD");
  }
  llvm::Error download(void *dst, size_t n) {
    return d->check(d->cuMemcpyDtoH_v2(dst, ptr, n), "cuMemcpyDtoH");
  }
  void *get() const { return reinterpret_cast<void *>(ptr); }
};

/// Median time of `iters` launches, each bracketed by events.
template <class F>
llvm::Expected<double> timeMedianMs(const CudaDriver &d, int iters, F launch) {
  CUevent start, stop;
  if (auto e = d.check(d.cuEventCreate(&start, 0), "cuEventCreate"))
    return std::move(e);
  if (auto e = d.check(d.cuEventCreate(&stop, 0), "cuEventCreate"))
    return std::move(e);
  for (int i = 0; i < 5; ++i) // warm-up
    if (auto e = launch())
      return std::move(e);
  std::vector<float> ms;
  for (int i = 0; i < iters; ++i) {
    d.cuEventRecord(start, nullptr);
    if (auto e = launch())
      return std::move(e);
    d.cuEventRecord(stop, nullptr);
    if (auto e = d.check(d.cuEventSynchronize(stop), "kernel execution"))
      return std::move(e);
    float t = 0;
    d.cuEventElapsedTime_v2(&t, start, stop);
    ms.push_back(t);
  }
  d.cuEventDestroy_v2(start);
  d.cuEventDestroy_v2(stop);
  std::sort(ms.begin(), ms.end());
  return double(ms[ms.size() / 2]);
}
} // namespace

/// Compares rows of C with the f64 reference; prints the verdict and
/// returns 0 when it passes.
static int checkGemm(const GemmDesc &desc, const ref::GemmOperands &ops,
                     DeviceBuffer &C, int64_t m, int ob, std::mt19937_64 &rng,
                     uint64_t seed) {
  size_t cBytes = size_t(m) * desc.n * ob;
  std::vector<uint8_t> host(cBytes);
  if (auto e = C.download(host.data(), cBytes))
    return fail(std::move(e));
  std::vector<int64_t> rows;
  if (optCheckRows > 0 && optCheckRows < m) {
    // Random rows plus the last tile's rows (tails).
    std::uniform_int_distribution<int64_t> pick(0, m - 1);
    for (int i = 0; i < optCheckRows - 8; ++i)
      rows.push_back(pick(rng));
    for (int64_t r = std::max<int64_t>(0, m - 8); r < m; ++r)
      rows.push_back(r);
  }
  std::vector<double> refOut;
  ref::gemmReference(ops, desc.form, desc.a, desc.b, rows, refOut);
  if (rows.empty())
    for (int64_t r = 0; r < m; ++r)
      rows.push_back(r);
  double num = 0, den = 0, maxAbs = 0;
  int64_t bad = 0;
  for (size_t i = 0; i < rows.size(); ++i)
    for (int64_t c = 0; c < desc.n; ++c) {
      size_t idx = size_t(rows[i]) * desc.n + c;
      double got;
      if (ob == 4) {
        float f;
        std::memcpy(&f, &host[idx * 4], 4);
        got = f;
      } else {
        uint16_t h;
        std::memcpy(&h, &host[idx * 2], 2);
        got = ref::bf16ToFloat(h);
      }
      double want = refOut[i * desc.n + c];
      if (!std::isfinite(got)) {
        ++bad;
        continue;
      }
      num += (got - want) * (got - want);
      den += want * want;
      maxAbs = std::max(maxAbs, std::fabs(got - want));
    }
  double rel = std::sqrt(num / std::max(den, 1e-300));
  // bf16 rounding of the output alone is ~1.6e-3 (rms over many values; a
  // single row of 256 values reached 2.05e-3 in a correct run, so checks of
  // fewer than 4096 values get 2.5e-3); e5m2 products span a wider
  // exponent range, and the tensor core's FP8 accumulation aligns them to the
  // largest with limited mantissa, so e5m2 operands add a little more.
  bool e5m2 = desc.a == Fp8Type::E5M2 || desc.b == Fp8Type::E5M2;
  const bool few = int64_t(rows.size()) * desc.n < 4096;
  double tol = optTol > 0 ? double(optTol)
                          : (ob == 4 ? 5e-4
                                     : (e5m2  ? 3e-3
                                        : few ? 2.5e-3
                                              : 2e-3));
  bool ok = bad == 0 && rel <= tol;
  llvm::outs() << llvm::formatv(
      "check: {0} {1}x{2}x{3} out={4}{5}: rel_err={6:e} max_abs={7:e} "
      "non_finite={8} rows_checked={9} seed={10} -> {11}\n",
      toString(desc.form), m, desc.n, desc.k, toString(desc.out),
      desc.accumulate ? " (+=)" : "", rel, maxAbs, bad, rows.size(), seed,
      ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}

static int runGemm(const GemmDesc &desc, const GemmKernel &kernel) {
  auto dOr = getCudaDriver();
  if (!dOr)
    return fail(dOr.takeError());
  const CudaDriver &d = *dOr;
  if (auto ctx = ensureContext(); !ctx)
    return fail(ctx.takeError());
  int64_t m = desc.m > 0 ? desc.m : desc.mHint;
  uint64_t seed = optSeed ? uint64_t(optSeed) : uint64_t(std::random_device{}());
  std::mt19937_64 rng(seed);
  ref::GemmOperands ops = ref::makeGemmOperands(
      desc.form, m, desc.n, desc.k, desc.a, desc.b, desc.accumulate, rng);
  int ob = dtypeBytes(desc.out);
  DeviceBuffer A, SA, B, SB, C;
  size_t cBytes = size_t(m) * desc.n * ob;
  if (auto e = A.alloc(d, ops.a.size()))
    return fail(std::move(e));
  if (auto e = B.alloc(d, ops.b.size()))
    return fail(std::move(e));
  if (auto e = SA.alloc(d, ops.sa.size() * 4))
    return fail(std::move(e));
  if (auto e = SB.alloc(d, ops.sb.size() * 4))
    return fail(std::move(e));
  if (auto e = C.alloc(d, cBytes))
    return fail(std::move(e));
  if (auto e = A.upload(ops.a.data(), ops.a.size()))
    return fail(std::move(e));
  if (auto e = B.upload(ops.b.data(), ops.b.size()))
    return fail(std::move(e));
  if (auto e = SA.upload(ops.sa.data(), ops.sa.size() * 4))
    return fail(std::move(e));
  if (auto e = SB.upload(ops.sb.data(), ops.sb.size() * 4))
    return fail(std::move(e));
  // Poison: 0xFF bytes are NaN in bf16 and f32, so an unwritten element
  // fails the check.
  if (desc.accumulate) {
    if (auto e = C.upload(ops.cInit.data(), cBytes))
      return fail(std::move(e));
  } else if (auto e = d.check(d.cuMemsetD8_v2(C.ptr, 0xff, cBytes),
                              "cuMemsetD8")) {
    return fail(std::move(e));
  }

  GemmArgs args;
  args.a = A.get();
  args.b = B.get();
  args.sa = static_cast<const float *>(SA.get());
  args.sb = static_cast<const float *>(SB.get());
  args.c = C.get();
  args.m = m;
  args.ldsa = ops.ldsa;
  if (desc.form == GemmForm::Wgrad)
    args.ldsb = ops.ldsb;
  else {
    args.sbStrideK = ops.sbStrideK;
    args.sbStrideN = ops.sbStrideN;
  }
  if (auto e = kernel(args, nullptr))
    return fail(std::move(e));
  if (auto e = d.check(d.cuCtxSynchronize(), "kernel execution"))
    return fail(std::move(e));

  if (checkGemm(desc, ops, C, m, ob, rng, seed))
    return 1;

  if (optIters > 0 && !desc.accumulate) {
    auto ms = timeMedianMs(d, optIters, [&] { return kernel(args, nullptr); });
    if (!ms)
      return fail(ms.takeError());
    double tflops = 2.0 * m * desc.n * desc.k / (*ms * 1e-3) / 1e12;
    llvm::outs() << llvm::formatv(
        "time: {0} {1}x{2}x{3} {4} splits={5}: median {6:f1} us, {7:f1} "
        "TFLOP/s (model {8:f1} us)\n",
        toString(desc.form), m, desc.n, desc.k, kernel.compiled->spec.name,
        kernel.launch.splits, *ms * 1e3, tflops,
        kernel.predictedSeconds * 1e6);
  }

  if (desc.debug & DebugTimeline) {
    // One more launch with the stamps zeroed first (earlier launches left
    // theirs), then the report.
    auto g = kernel.compiled->global(kTimelineSymbol);
    if (!g)
      return fail(g.takeError());
    if (g->second < kTimelineBytes)
      return fail(llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "%s holds %zu bytes, expected %zu: kernel and host disagree on "
          "bs::timeline",
          kTimelineSymbol, g->second, kTimelineBytes));
    if (auto e = d.check(d.cuMemsetD8_v2(g->first, 0, kTimelineBytes),
                         "cuMemsetD8"))
      return fail(std::move(e));
    if (auto e = kernel(args, nullptr))
      return fail(std::move(e));
    if (auto e = d.check(d.cuCtxSynchronize(), "kernel execution"))
      return fail(std::move(e));
    std::vector<uint64_t> stamps(kTimelineBytes / 8);
    if (auto e = d.check(d.cuMemcpyDtoH_v2(stamps.data(), g->first,
                                           kTimelineBytes),
                         "cuMemcpyDtoH"))
      return fail(std::move(e));
    llvm::outs() << formatTimeline(summarizeTimeline(stamps));
  }
  return 0;
}

static int runQuantize(const QuantDesc &desc, const QuantKernel &kernel) {
  auto dOr = getCudaDriver();
  if (!dOr)
    return fail(dOr.takeError());
  const CudaDriver &d = *dOr;
  if (auto ctx = ensureContext(); !ctx)
    return fail(ctx.takeError());
  int64_t rows = desc.rows > 0 ? desc.rows : 4096;
  // A batched cast (--groups): G matrices of rows x cols, stacked; each has
  // the reference of a single cast, with row-major scales per matrix.
  const bool batched = desc.groups != 0;
  const int64_t G = desc.groups > 0 ? desc.groups : batched ? 3 : 1;
  uint64_t seed = optSeed ? uint64_t(optSeed) : uint64_t(std::random_device{}());
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::uniform_int_distribution<int> mag(-8, 8);
  int ib = dtypeBytes(desc.in);
  std::vector<float> x(size_t(G * rows) * desc.cols);
  std::vector<uint8_t> xbytes(x.size() * ib);
  for (int64_t r = 0; r < G * rows; ++r) {
    float rm = std::ldexp(1.f, mag(rng));
    for (int64_t c = 0; c < desc.cols; ++c) {
      float v = normal(rng) * rm * (c % 97 == 0 ? 16.f : 1.f);
      size_t i = size_t(r) * desc.cols + c;
      if (desc.in == DType::F32) {
        x[i] = v;
        std::memcpy(&xbytes[i * 4], &v, 4);
      } else if (desc.in == DType::BF16) {
        uint16_t h = ref::floatToBf16(v);
        x[i] = ref::bf16ToFloat(h);
        std::memcpy(&xbytes[i * 2], &h, 2);
      } else {
        return fail("--run of f16 casts is not supported by blockscale-gen "
                    "(use the Python tests)");
      }
    }
  }
  // One result: its host reference, poisoned device buffers, and the
  // comparison after the launch. A dual cast has two: the second with
  // transpose flipped.
  struct Result {
    QuantDesc desc;
    ScaleGeometry g;
    int64_t ldq = 0;
    std::vector<uint8_t> qRef;
    std::vector<float> sRef;
    DeviceBuffer Q, S;
    int64_t qBad = 0, sBad = 0;
  };
  std::vector<Result> results(desc.dual ? 2 : 1);
  for (size_t i = 0; i < results.size(); ++i) {
    Result &r = results[i];
    r.desc = desc;
    r.desc.dual = false;
    r.desc.groups = 0;
    if (i == 1)
      r.desc.transpose = !desc.transpose;
    auto gOr = quantScaleGeometry(r.desc, rows, 0);
    if (!gOr)
      return fail(gOr.takeError());
    r.g = *gOr;
    if (batched) {
      r.g.strideRow = r.g.cols;
      r.g.strideCol = 1;
      r.g.allocElements = r.g.rows * r.g.cols;
    }
    r.ldq = r.desc.writesTransposed() ? rows : desc.cols;
    const size_t matrix = size_t(rows) * desc.cols;
    r.qRef.assign(G * matrix, 0xee);
    r.sRef.assign(G * r.g.allocElements, -1.f);
    for (int64_t g = 0; g < G; ++g)
      ref::quantize(r.desc, x.data() + g * matrix, rows, desc.cols,
                    r.qRef.data() + g * matrix, r.ldq,
                    r.sRef.data() + g * r.g.allocElements, r.g);
    if (auto e = r.Q.alloc(d, r.qRef.size()))
      return fail(std::move(e));
    if (auto e = r.S.alloc(d, r.sRef.size() * 4))
      return fail(std::move(e));
    d.cuMemsetD8_v2(r.Q.ptr, 0xee, r.qRef.size());
    // Padding of the scale buffer is not written: poison it like the host
    // copy.
    std::vector<float> sPoison(r.sRef.size(), -1.f);
    if (auto e = r.S.upload(sPoison.data(), sPoison.size() * 4))
      return fail(std::move(e));
  }

  DeviceBuffer X;
  if (auto e = X.alloc(d, xbytes.size()))
    return fail(std::move(e));
  if (auto e = X.upload(xbytes.data(), xbytes.size()))
    return fail(std::move(e));
  QuantArgs args;
  args.x = X.get();
  args.q = results[0].Q.get();
  args.s = static_cast<float *>(results[0].S.get());
  if (desc.dual) {
    args.qT = results[1].Q.get();
    args.sT = static_cast<float *>(results[1].S.get());
  }
  args.rows = rows;
  args.groups = batched ? G : 0;
  if (auto e = kernel(args, nullptr))
    return fail(std::move(e));
  if (auto e = d.check(d.cuCtxSynchronize(), "kernel execution"))
    return fail(std::move(e));
  bool ok = true;
  double outBytes = 0;
  for (Result &r : results) {
    std::vector<uint8_t> q(r.qRef.size());
    std::vector<float> s(r.sRef.size());
    if (auto e = r.Q.download(q.data(), q.size()))
      return fail(std::move(e));
    if (auto e = r.S.download(s.data(), s.size() * 4))
      return fail(std::move(e));
    for (size_t i = 0; i < q.size(); ++i)
      r.qBad += q[i] != r.qRef[i];
    for (size_t i = 0; i < s.size(); ++i)
      r.sBad += std::memcmp(&s[i], &r.sRef[i], 4) != 0;
    ok = ok && r.qBad == 0 && r.sBad == 0;
    outBytes += double(q.size()) + double(G * r.g.rows * r.g.cols) * 4;
    llvm::outs() << llvm::formatv(
        "check: quantize {0}x{1} {2} {3}x{4}{5}{6}{7} -> {8}: fp8 "
        "mismatches={9}/{10} scale mismatches={11}/{12} seed={13} -> {14}\n",
        batched ? std::to_string(G) + "x" + std::to_string(rows)
                : std::to_string(rows),
        desc.cols, toString(desc.in), r.desc.blockRows, r.desc.blockCols,
        r.desc.transpose ? " transpose" : "",
        r.desc.colMajor ? " col_major" : "",
        batched     ? " (batched dual)"
        : desc.dual ? " (dual)"
                    : "",
        toString(desc.out), r.qBad, q.size(), r.sBad, s.size(), seed,
        r.qBad == 0 && r.sBad == 0 ? "PASS" : "FAIL");
  }
  if (!ok)
    return 1;
  if (optIters > 0) {
    auto ms = timeMedianMs(d, optIters, [&] { return kernel(args, nullptr); });
    if (!ms)
      return fail(ms.takeError());
    double bytes = double(x.size()) * ib + outBytes;
    llvm::outs() << llvm::formatv(
        "time: quantize {0}x{1} {2}: median {3:f1} us, {4:f0} GB/s\n", rows,
        desc.cols, kernel.compiled->spec.name, *ms * 1e3,
        bytes / (*ms * 1e-3) / 1e9);
  }
  return 0;
}

static int emitCompiled(llvm::StringRef source, llvm::StringRef name,
                        bool ptx, llvm::raw_ostream &os) {
  CompileOptions opts;
  opts.ptx = ptx;
  auto out = compileCuda(source, name, opts);
  if (!out)
    return fail(out.takeError());
  if (!ptx)
    llvm::errs() << llvm::formatv(
        "{0}: {1} registers, {2} spill bytes, compiled in {3:f3} s{4}\n", name,
        out->registers, out->spillBytes, out->seconds,
        out->wgmmaSerialized.empty() ? ""
                                     : "; WARNING: " + out->wgmmaSerialized);
  os << out->binary;
  return 0;
}

/// Writes what --emit asks for of a planned kernel (cuda, mlir, spec, ptx,
/// cubin; `extra` goes after the spec line).
template <class Plan>
static int emitPlan(const Plan &plan, llvm::StringRef emit,
                    llvm::raw_ostream &os, llvm::StringRef extra = "") {
  if (emit == "cuda")
    os << plan.source;
  else if (emit == "mlir" && plan.ir.empty())
    return fail("--emit mlir: " + plan.spec.name +
                " is planned without a module (the batched and grouped "
                "kernels have no blockscale op form here); use cuda, spec, "
                "ptx or cubin");
  else if (emit == "mlir")
    os << plan.ir;
  else if (emit == "spec")
    os << plan.spec.serialize() << extra << "\n";
  else if (emit == "ptx" || emit == "cubin")
    return emitCompiled(plan.source, plan.spec.name, emit == "ptx", os);
  return 0;
}

static int handleMlirInput(llvm::raw_ostream &os, unsigned debug) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::blockscale::BlockScaleDialect, mlir::func::FuncDialect,
                  mlir::tensor::TensorDialect, mlir::shard::ShardDialect>();
  mlir::MLIRContext ctx(registry);
  llvm::SourceMgr sm;
  mlir::SourceMgrDiagnosticHandler handler(sm, &ctx);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(inputFile, sm, &ctx);
  if (!module)
    return 1;
  mlir::PassManager pm(&ctx);
  TilingOptions opts;
  if (optSMs > 0)
    opts.numSMs = optSMs;
  opts.force = optForce;
  mlir::blockscale::buildJitPipeline(pm, opts);
  if (mlir::failed(pm.run(*module)))
    return 1;
  std::string emit = optEmit.empty() ? "cuda" : std::string(optEmit);
  if (emit == "mlir") {
    module->print(os);
    return 0;
  }
  // A PTX module or cubin holds one kernel: with several, the images would
  // be concatenated into a file no tool reads past the first.
  std::vector<mlir::blockscale::EmittedKernel> compiled;
  const bool binary = emit == "ptx" || emit == "cubin";
  if (mlir::failed(mlir::blockscale::forEachKernel(
          *module,
          [&](const mlir::blockscale::EmittedKernel &k) -> mlir::LogicalResult {
            if (emit == "cuda")
              os << k.source;
            else if (emit == "spec")
              os << k.spec.serialize() << "\n";
            else
              compiled.push_back(k);
            return mlir::success();
          },
          debug)))
    return 1;
  if (!binary)
    return 0;
  if (compiled.size() != 1) {
    std::string names;
    for (const auto &k : compiled)
      names += (names.empty() ? "" : ", ") + k.spec.name;
    return fail(llvm::formatv(
        "--emit {0} writes one kernel but {1} has {2}: {3}; use --emit cuda "
        "or spec for all of them, or blockscale-translate "
        "--blockscale-emit-ptx for a listing of their PTX",
        emit, std::string(inputFile), compiled.size(), names));
  }
  return emitCompiled(compiled[0].source, compiled[0].spec.name, emit == "ptx",
                      os);
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  blockscale::installVersionPrinter();
  cl::HideUnrelatedOptions(cat);
  cl::ParseCommandLineOptions(argc, argv,
                              "blockscale kernel generator and runner\n");
  std::string emit = optEmit.empty() ? (optRun ? "none" : "cuda")
                                     : std::string(optEmit);
  if (emit != "cuda" && emit != "ptx" && emit != "cubin" && emit != "mlir" &&
      emit != "spec" && emit != "none")
    return fail(
        "--emit expects cuda, ptx, cubin, mlir, spec or none but got '" + emit +
        "'");

  auto debug = parseDebug(optDebug);
  if (!debug)
    return fail(withContext(debug.takeError(), "--debug: "));

  // A flag the chosen --op does not read is an error, not silently dropped.
  auto unread = [&](std::initializer_list<const cl::Option *> opts,
                    llvm::StringRef op) -> std::optional<int> {
    for (const cl::Option *o : opts)
      if (o->getNumOccurrences())
        return fail("--" + o->ArgStr + " is not an option of " + op +
                    "; see --help for the options each --op reads");
    return std::nullopt;
  };
  // What only a run reads (timing, the reference check) is an error
  // without --run, as with an .mlir input (which --run does not take).
  if (!optRun)
    if (auto rc = unread({&optIters, &optSeed, &optTol, &optCheckRows},
                         "an emission without --run"))
      return *rc;
  if (optSMs < 0 || optSMs > blockscale::kMaxSMs)
    return fail(
        llvm::formatv("--num-sms expects 0 (the GPU's) to {0} but got {1}",
                      blockscale::kMaxSMs, int(optSMs)));

  // The output is opened only once there is something to write: opening
  // truncates it, and it may be the input.
  std::error_code ec;
  auto openOut = [&]() -> std::unique_ptr<llvm::ToolOutputFile> {
    auto f = std::make_unique<llvm::ToolOutputFile>(
        outputFile, ec,
        emit == "cubin" ? llvm::sys::fs::OF_None : llvm::sys::fs::OF_Text);
    if (ec) {
      fail("cannot open " + outputFile + ": " + ec.message());
      return nullptr;
    }
    return f;
  };

  if (!inputFile.empty()) {
    if (optRun)
      return fail("--run takes a shape (--m/--n/--k), not an .mlir input");
    // The module says the shapes and ops: only what shapes the emission
    // applies to it.
    if (auto rc = unread({&opKind, &optM, &optN, &optK, &optForm, &optOut,
                          &optAType, &optBType, &optAccumulate, &optGrouping,
                          &optGroups, &optRows, &optCols, &optRecipe,
                          &optTranspose, &optColMajor, &optDual, &optInType},
                         "an .mlir input (its ops give the shapes; it takes "
                         "--emit, -o, --force-tile, --num-sms and --debug)"))
      return *rc;
    std::string text;
    llvm::raw_string_ostream buf(text);
    if (int rc = handleMlirInput(buf, *debug))
      return rc;
    auto out = openOut();
    if (!out)
      return 1;
    out->os() << text;
    out->keep();
    return 0;
  }
  if (opKind == "quantize") {
    if (auto rc = unread({&optM, &optN, &optK, &optForm, &optOut,
                          &optAccumulate, &optForce, &optSMs, &optGrouping},
                         "--op quantize (the shape is --rows/--cols)"))
      return *rc;
  } else if (opKind == "grouped") {
    if (auto rc = unread({&optForm, &optRows, &optCols, &optRecipe,
                          &optTranspose, &optColMajor, &optDual, &optInType},
                         "--op grouped"))
      return *rc;
    if (optAccumulate && optGrouping != "k")
      return fail("--accumulate is an option of --op grouped --grouping k "
                  "(the weight gradient's C +=) only, but got --grouping " +
                  optGrouping);
    // (Masked buffers' rows and K go to the description's own checks.)
    if (optGrouping == "contiguous" && optM < 0)
      return fail(llvm::formatv("--op grouped --grouping contiguous expects "
                                "--m >= 0 (the typical rows per group; 0: "
                                "unknown) but got {0}",
                                int64_t(optM)));
    if (optGrouping == "k" && optK < 0)
      return fail(llvm::formatv("--op grouped --grouping k expects --k >= 0 "
                                "(the typical tokens per group; 0: unknown) "
                                "but got {0}",
                                int64_t(optK)));
  } else if (opKind == "gemm" || opKind.getNumOccurrences() == 0) {
    if (auto rc =
            unread({&optRows, &optCols, &optRecipe, &optTranspose, &optColMajor,
                    &optDual, &optInType, &optGrouping, &optGroups},
                   "--op gemm"))
      return *rc;
  }

  auto outFile = openOut();
  if (!outFile)
    return 1;
  llvm::ToolOutputFile &out = *outFile;

  if (opKind == "quantize") {
    QuantDesc q;
    if (!parseDType(optInType, q.in))
      return fail("--in-dtype expects bf16, f16 or f32 but got " + optInType);
    if (!parseFp8(optBType == "e4m3" ? optAType : optBType, q.out))
      return fail("--a-type/--b-type expects e4m3 or e5m2");
    if (optRecipe == "1x128") {
      q.blockRows = 1;
      q.blockCols = 128;
    } else if (optRecipe == "128x1") {
      q.blockRows = 128;
      q.blockCols = 1;
    } else if (optRecipe == "128x128") {
      q.blockRows = q.blockCols = 128;
    } else {
      return fail("--recipe expects 1x128, 128x1 or 128x128 but got " +
                  optRecipe);
    }
    q.transpose = optTranspose;
    q.colMajor = optColMajor;
    q.dual = optDual;
    // --groups with --dual: the batched dual cast of --groups matrices.
    if (optGroups.getNumOccurrences())
      q.groups = optGroups;
    q.rows = optRows;
    q.cols = optCols;
    q.debug = *debug;
    auto plan = planQuantize(q);
    if (!plan)
      return fail(plan.takeError());
    if (int rc = emitPlan(*plan, emit, out.os()))
      return rc;
    out.keep();
    if (!optRun)
      return 0;
    auto kernel = getQuantKernel(q);
    if (!kernel)
      return fail(kernel.takeError());
    return runQuantize(q, **kernel);
  }
  if (opKind == "grouped") {
    GroupedGemmDesc g;
    if (optGrouping == "contiguous")
      g.grouping = Grouping::Contiguous;
    else if (optGrouping == "masked")
      g.grouping = Grouping::Masked;
    else if (optGrouping == "k")
      g.grouping = Grouping::KContiguous;
    else
      return fail("--grouping expects contiguous, masked or k but got " +
                  optGrouping);
    if (!parseDType(optOut, g.out))
      return fail("--out-dtype expects bf16 or f32 but got " + optOut);
    if (!parseFp8(optAType, g.a) || !parseFp8(optBType, g.b))
      return fail("--a-type/--b-type expect e4m3 or e5m2");
    g.groups = optGroups;
    g.n = optN;
    g.k = optK;
    if (g.grouping == Grouping::KContiguous) {
      // The tokens come at launch: --k is the typical tokens per group.
      g.m = optM;
      g.k = 0;
      g.mPerGroupHint = std::max<int64_t>(optK, 0);
      g.accumulate = optAccumulate;
    } else if (g.grouping == Grouping::Masked) {
      g.mMax = optM;
    } else if (optM > 0) {
      g.mPerGroupHint = optM;
    }
    g.forceTile = optForce;
    g.numSMs = optSMs;
    g.debug = *debug;
    if (optRun)
      return fail("--run is not available for --op grouped; run the grouped "
                  "GPU tests (scripts/gpu-check.sh grouped)");
    auto plan = planGroupedGemm(g);
    if (!plan)
      return fail(plan.takeError());
    if (emit == "mlir")
      return fail("--emit mlir: --op grouped is planned without a module; "
                  "use cuda, spec, ptx or cubin");
    if (int rc = emitPlan(*plan, emit, out.os(), " raster=8"))
      return rc;
    out.keep();
    return 0;
  }
  if (opKind != "gemm")
    return fail("--op expects gemm, quantize or grouped but got " + opKind);

  GemmDesc desc;
  if (optForm == "fwd")
    desc.form = GemmForm::Fwd;
  else if (optForm == "dgrad")
    desc.form = GemmForm::Dgrad;
  else if (optForm == "wgrad")
    desc.form = GemmForm::Wgrad;
  else
    return fail("--form expects fwd, dgrad or wgrad but got " + optForm);
  if (!parseDType(optOut, desc.out))
    return fail("--out-dtype expects bf16 or f32 but got " + optOut);
  if (!parseFp8(optAType, desc.a) || !parseFp8(optBType, desc.b))
    return fail("--a-type/--b-type expect e4m3 or e5m2");
  desc.m = optM;
  desc.n = optN;
  desc.k = optK;
  desc.accumulate = optAccumulate;
  desc.forceTile = optForce;
  desc.numSMs = optSMs;
  desc.debug = *debug;
  if (desc.m > 0)
    desc.mHint = desc.m;

  auto plan = planGemm(desc);
  if (!plan)
    return fail(plan.takeError());
  std::string launch = llvm::formatv(" splits={0} raster={1}",
                                     plan->launch.splits, plan->launch.raster);
  if (int rc = emitPlan(*plan, emit, out.os(), launch))
    return rc;
  out.keep();
  if (!optRun)
    return 0;
  auto kernel = getGemmKernel(desc);
  if (!kernel)
    return fail(kernel.takeError());
  return runGemm(desc, **kernel);
}
