//===- GemmFamily.cpp - the GEMM kernel family ------------------*- C++ -*-===//
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

using namespace blockscale;
using namespace blockscale::detail;

// Every size the kernel sees is an int: M, N, K below 2^31.
static constexpr int64_t kMaxDim = (int64_t(1) << 31) - 1;

std::string GemmDesc::key() const {
  return llvm::formatv("gemm:{0}:{1}:{2}:{3}:{4}:{5}:{6}:{7}:{8}:{9}:{10}:{11}",
                       toString(form), m, n, k, toString(a), toString(b),
                       toString(out), accumulate ? 1 : 0, m < 0 ? mHint : 0,
                       forceTile, numSMs, debug)
      .str();
}

llvm::Error GemmDesc::validate() const {
  if (n <= 0 || k <= 0 || n > kMaxDim || k > kMaxDim)
    return invalidArgument(llvm::formatv(
        "GemmDesc: expected 0 < N, K < 2^31 but got N = {0}, K = {1}", n, k));
  if (m == 0 || m < -1 || m > kMaxDim)
    return invalidArgument(llvm::formatv(
        "GemmDesc: expected 0 < M < 2^31 or M = -1 (dynamic) but got M = {0}",
        m));
  if (m < 0 && (mHint <= 0 || mHint > kMaxDim))
    return invalidArgument(llvm::formatv(
        "GemmDesc: expected 0 < mHint < 2^31 for a dynamic M but got {0}",
        mHint));
  if (numSMs < 0 || numSMs > bs::kMaxSMs)
    return invalidArgument(llvm::formatv(
        "GemmDesc: expected 0 <= numSMs <= {0} (0: the GPU's) but got {1}",
        bs::kMaxSMs, numSMs));
  if (debug & ~unsigned(DebugHang | DebugTimeline))
    return invalidArgument(llvm::formatv(
        "GemmDesc: expected debug flags from DebugHang | DebugTimeline but "
        "got {0}",
        debug));
  if (accumulate && out != DType::F32)
    return invalidArgument("GemmDesc: accumulate (C += A @ B) needs out = "
                           "f32 but got out = " +
                           toString(out));
  if (out == DType::F16)
    return invalidArgument("GemmDesc: expected out = bf16 or f32 but got f16");
  if (k % 16 != 0)
    return invalidArgument(llvm::formatv(
        "GemmDesc: expected K to be a multiple of 16 (TMA needs 16-byte FP8 "
        "rows) but got K = {0}; pad K to {1} with zeros",
        k, (k + 15) / 16 * 16));
  int outBytes = dtypeBytes(out);
  if (n * outBytes % 16 != 0)
    return invalidArgument(llvm::formatv(
        "GemmDesc: expected N * {0} bytes to be a multiple of 16 (TMA store "
        "of C) but got N = {1}; pad N to {2}",
        outBytes, n,
        (n + 16 / outBytes - 1) / (16 / outBytes) * (16 / outBytes)));
  return llvm::Error::success();
}

std::string GemmFamily::kernelName(const Spec &g) {
  return llvm::formatv("bs_gemm_{0}_{1}_{2}_{3}{4}_bm{5}_bn{6}_s{7}{8}",
                       g.wgrad() ? "b128x1" : "b128x128", toString(g.a),
                       toString(g.b), toString(g.out),
                       g.accumulate ? "_acc" : "", g.bm, g.bn, g.stages,
                       g.cluster > 1 ? "_c" + std::to_string(g.cluster) : "")
             .str() +
         (g.ksplit > 1 ? "_ks" + std::to_string(g.ksplit) : "") +
         (g.kblocks > 0 ? "_kb" + std::to_string(g.kblocks) : "");
}

void GemmFamily::writeInstantiation(const Spec &g, const std::string &name,
                                    llvm::raw_ostream &os) {
  os << "#define BS_WGMMA_AB \"" << toString(g.a) << "." << toString(g.b)
     << "\"\n";
  os << "#include \"blockscale/gemm_sm90.cuh\"\n\n";
  os << llvm::formatv(
      "using BsKernel = bs::GemmSm90<bs::GemmConfig</*BM=*/{0}, /*BN=*/{1}, "
      "/*STAGES=*/{2}, /*WGRAD=*/{3}, /*OUT_F32=*/{4}, /*ACCUMULATE=*/{5}, "
      "/*CLUSTER=*/{6}, /*KSPLIT=*/{7}{8}>>;\n\n",
      g.bm, g.bn, g.stages, g.wgrad() ? "true" : "false",
      g.out == DType::F32 ? "true" : "false", g.accumulate ? "true" : "false",
      g.cluster, g.ksplit,
      g.kblocks > 0 ? ", /*KBLOCKS=*/" + std::to_string(g.kblocks)
                    : std::string());
  os << "extern \"C\" __global__ void __launch_bounds__(BsKernel::kThreads, "
        "1)\n"
     << name << "(const __grid_constant__ bs::GemmParams p,\n"
     << "    const __grid_constant__ bs::TmaDesc tA,\n"
     << "    const __grid_constant__ bs::TmaDesc tB,\n"
     << "    const __grid_constant__ bs::TmaDesc tSA,\n"
     << "    const __grid_constant__ bs::TmaDesc tSB,\n"
     << "    const __grid_constant__ bs::TmaDesc tC) {\n"
     << "  BsKernel::run(p, tA, tB, tSA, tSB, tC);\n}\n";
}

/// Tiles of a launch as the scheduler numbers them (DenseTileScheduler:
/// groups of `cluster` adjacent N tiles).
static int64_t numberedTiles(const GemmKernelSpec &s, int64_t m, int64_t n) {
  return ceilDiv(m, s.bm) * ceilDiv(ceilDiv(n, s.bn), s.cluster) * s.cluster;
}

llvm::Expected<size_t> GemmFamily::workspaceBytes(const Spec &s,
                                                  const LaunchConfig &l,
                                                  int64_t m, int64_t n,
                                                  int64_t k) {
  if (m < 0 || m > kMaxDim || n <= 0 || n > kMaxDim || k <= 0 || k > kMaxDim)
    return invalidArgument(llvm::formatv(
        "expected 0 <= M < 2^31 and 0 < N, K < 2^31 but got {0}x{1}x{2}", m, n,
        k));
  int64_t splits = std::min<int64_t>(std::max(l.splits, 1), ceilDiv(k, 128));
  // Splits summed in a cluster need no workspace.
  if (splits <= 1 || m == 0 || s.ksplit > 1)
    return 0;
  std::optional<int64_t> partials = llvm::checkedMul<int64_t>(
      numberedTiles(s, m, n), splits * s.bm * s.bn * int64_t(sizeof(float)));
  if (!partials || *partials > (int64_t(1) << 50))
    return invalidArgument(llvm::formatv(
        "split-K of {0}x{1}x{2} in {3} splits needs a workspace beyond 2^50 "
        "bytes; use fewer splits",
        m, n, k, splits));
  return size_t(bs::kSplitKCounterBytes + *partials);
}

llvm::Error GemmFamily::launch(CompiledKernel &kernel, const LaunchConfig &launch,
                               const Desc &desc, const Args &a,
                               CUstream stream) {
  const GemmKernelSpec &s = kernel.spec.gemm;
  if (kernel.spec.kind != KernelKind::Gemm)
    return invalidArgument("launchGemm: " + kernel.spec.name +
                           " is not a GEMM kernel");
  const int64_t n = desc.n, k = desc.k;
  int64_t m = a.m >= 0 ? a.m : desc.m;
  if (m < 0)
    return invalidArgument(
        "launchGemm: M is dynamic for this kernel; set GemmArgs::m");
  // A kernel planned for one M launches that M only (its tile was chosen
  // for it); a zero-filled GemmArgs would otherwise launch nothing.
  if (desc.m >= 0 && a.m >= 0 && a.m != desc.m)
    return invalidArgument(llvm::formatv(
        "launchGemm: the kernel was built for M = {0} but got GemmArgs::m = "
        "{1}; pass -1 (the built M) or build it with m = -1 (M at launch)",
        desc.m, a.m));
  if (m > kMaxDim)
    return invalidArgument(
        llvm::formatv("launchGemm: expected M < 2^31 but got M = {0}", m));
  if (m == 0)
    return llvm::Error::success();

  const int64_t kBlocks = ceilDiv(k, 128);
  const int ob = dtypeBytes(s.out);
  struct {
    const char *name;
    const void *ptr;
  } ptrs[] = {{"A", a.a},
              {"A scales", a.sa},
              {"B", a.b},
              {"B scales", a.sb},
              {"C", a.c}};
  for (auto &p : ptrs) {
    if (!p.ptr)
      return invalidArgument(
          llvm::formatv("launchGemm: the {0} pointer is null", p.name));
    // 128x128 B scales are read as scalars; everything else through TMA.
    if (!aligned16(p.ptr) && (s.wgrad() || std::strcmp(p.name, "B scales")))
      return invalidArgument(
          llvm::formatv("launchGemm: expected the {0} pointer to be 16-byte "
                        "aligned (TMA) but got {1}",
                        p.name, p.ptr));
  }
  const int64_t lda = a.lda ? a.lda : k, ldb = a.ldb ? a.ldb : k;
  const int64_t ldc = a.ldc ? a.ldc : n;
  // Strides of at most 2^40 elements: the tensor maps take 40-bit byte
  // strides, and nothing larger fits a GPU.
  const int64_t kMaxStride = int64_t(1) << 40;
  if (lda < k || lda % 16 || ldb < k || ldb % 16 || lda > kMaxStride ||
      ldb > kMaxStride)
    return invalidArgument(llvm::formatv(
        "launchGemm: expected lda, ldb >= K = {0}, multiples of 16 (TMA) and "
        "below 2^40 but got lda = {1}, ldb = {2}",
        k, lda, ldb));
  if (ldc < n || (ldc * ob) % 16 || ldc > kMaxStride)
    return invalidArgument(llvm::formatv(
        "launchGemm: expected ldc >= N = {0} with a row of a multiple of 16 "
        "bytes, below 2^40, but got ldc = {1}",
        n, ldc));
  // Scale strides: the layout rule (ScaleLayout.h) unless given.
  auto sag = scaleGeometry(1, 128, m, k, a.ldsa);
  if (!sag)
    return withContext(sag.takeError(),
                       "launchGemm: A scales (M, ceil(K/128)) are "
                       "M-contiguous: ");
  const int64_t ldsa = sag->strideCol;
  int64_t sbK = a.sbStrideK, sbN = a.sbStrideN, ldsb = 0;
  if (s.wgrad()) {
    auto sbg = scaleGeometry(128, 1, k, n, a.ldsb);
    if (!sbg)
      return withContext(sbg.takeError(),
                         "launchGemm: 128x1 B scales (ceil(K/128), N) are "
                         "N-contiguous: ");
    ldsb = sbg->strideRow;
  } else if (sbK == 0 && sbN == 0) {
    auto sbg = scaleGeometry(128, 128, k, n);
    if (!sbg)
      return sbg.takeError();
    sbK = sbg->strideRow;
    sbN = sbg->strideCol;
  } else if (sbK < 0 || sbN < 0 || sbK > kMaxStride || sbN > kMaxStride) {
    return invalidArgument(llvm::formatv(
        "launchGemm: expected 128x128 B-scale strides in [0, 2^40) but got "
        "sbStrideK = {0}, sbStrideN = {1}",
        sbK, sbN));
  }

  auto dOr = getCudaDriver();
  if (!dOr)
    return dOr.takeError();
  const CudaDriver &d = *dOr;
  auto fn = kernel.function();
  if (!fn)
    return fn.takeError();

  thread_local TensorMapCache<5, 13> mc;
  const int64_t key[13] = {keyOf(a.a), keyOf(a.b),  keyOf(a.sa), keyOf(a.sb),
                           keyOf(a.c), m,           n,           k,
                           lda,        ldb,         ldc,         ldsa,
                           ldsb};
  CUcontext curCtx = nullptr;
  if (auto e = d.check(d.cuCtxGetCurrent(&curCtx), "cuCtxGetCurrent"))
    return e;
  CUtensorMap &tA = mc.maps[0], &tB = mc.maps[1], &tSA = mc.maps[2],
              &tSB = mc.maps[3], &tC = mc.maps[4];
  if (!mc.holds(kernel.uid, curCtx, key)) {
    mc.forget();
    std::memset(&tSB, 0, sizeof(tSB));
    // With clusters each CTA loads (and multicasts) bm / cluster rows of A.
    if (auto e = encodeTensorMap(d, &tA, CU_TENSOR_MAP_DATA_TYPE_UINT8, a.a, k,
                                 m, lda, 128, s.bm / s.cluster,
                                 CU_TENSOR_MAP_SWIZZLE_128B, "A"))
      return e;
    if (auto e = encodeTensorMap(d, &tB, CU_TENSOR_MAP_DATA_TYPE_UINT8, a.b, k,
                                 n, ldb, 128, s.bn, CU_TENSOR_MAP_SWIZZLE_128B,
                                 "B"))
      return e;
    if (auto e = encodeTensorMap(d, &tSA, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, a.sa,
                                 m, kBlocks, ldsa * 4, s.bm, 1,
                                 CU_TENSOR_MAP_SWIZZLE_NONE, "A scales"))
      return e;
    if (s.wgrad())
      if (auto e = encodeTensorMap(d, &tSB, CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
                                   a.sb, n, kBlocks, ldsb * 4, s.bn, 1,
                                   CU_TENSOR_MAP_SWIZZLE_NONE, "B scales"))
        return e;
    if (auto e = encodeGemmOutputMap(d, &tC, s.out, s.bn, a.c, n, m, ldc))
      return e;
    mc.remember(kernel.uid, curCtx, key);
  }

  bs::GemmParams p;
  std::memset(&p, 0, sizeof(p));
  p.m = int(m);
  p.n = int(n);
  p.k = int(k);
  p.kBlocks = int(kBlocks);
  p.tilesM = int(ceilDiv(m, s.bm));
  p.tilesN = int(ceilDiv(n, s.bn));
  p.splits = int(std::max<int64_t>(1, std::min<int64_t>(launch.splits, kBlocks)));
  p.raster = std::max(1, launch.raster);
  // Groups of `cluster` adjacent N tiles (DenseTileScheduler).
  const int64_t groupsN = ceilDiv(p.tilesN, s.cluster);
  {
    // The decode's divisors (bs::FastDiv: dividends below 2^31).
    const int64_t rasterTiles = int64_t(p.raster) * p.tilesM;
    const int64_t units = groupsN * p.tilesM * p.splits;
    const int64_t limit = int64_t(1) << 31;
    if (units >= limit || int64_t(p.splits) * kBlocks >= limit ||
        rasterTiles >= limit)
      return invalidArgument(llvm::formatv(
          "launchGemm: {0}x{1}x{2} in {3} splits has {4} work units and {5} "
          "split K-blocks, but the kernel counts both in 31 bits; split the "
          "GEMM into smaller ones",
          m, n, k, p.splits, units, int64_t(p.splits) * kBlocks));
    p.divSplits = bs::makeFastDiv(p.splits);
    p.divRasterTiles = bs::makeFastDiv(int(rasterTiles));
    p.divRaster = bs::makeFastDiv(p.raster);
    p.divLastWidth = bs::makeFastDiv(
        int(groupsN - (groupsN - 1) / p.raster * p.raster));
  }
  p.sb = s.wgrad() ? nullptr : a.sb;
  p.sbStrideK = sbK;
  p.sbStrideN = sbN;
  p.c = a.c;
  p.ldc = ldc;
  if (s.ksplit > 1 && p.splits != s.ksplit)
    return invalidArgument(llvm::formatv(
        "launchGemm: kernel {0} sums {1} K splits in a cluster but the launch "
        "asks for {2} splits of {3} K-blocks; launch it with splits = {1} on "
        "K >= {4}, or use a kernel without ksplit",
        kernel.spec.name, s.ksplit, launch.splits, kBlocks,
        128 * (s.ksplit - 1) + 1));
  if (p.splits > 1 && s.ksplit == 1) {
    auto need = workspaceBytes(s, launch, m, n, k);
    if (!need)
      return need.takeError();
    void *ws = a.workspace;
    if (ws && a.workspaceBytes < *need)
      return invalidArgument(llvm::formatv(
          "launchGemm: the workspace has {0} bytes but split-K needs {1}",
          a.workspaceBytes, *need));
    if (!ws) {
      auto w = runtimeWorkspace(d, *need, stream);
      if (!w)
        return w.takeError();
      ws = *w;
    }
    int64_t tiles = numberedTiles(s, m, n);
    if (tiles * s.consumers() > bs::kSplitKCounterSlots)
      return invalidArgument(llvm::formatv(
          "launchGemm: split-K over {0} tiles needs {1} arrival counters but "
          "the workspace has {2}; use splits = 1 for this shape",
          tiles, tiles * s.consumers(), bs::kSplitKCounterSlots));
    p.counters = static_cast<int *>(ws);
    p.workspace = reinterpret_cast<float *>(static_cast<char *>(ws) +
                                            bs::kSplitKCounterBytes);
  }

  // Units are (cluster group, split) pairs, as DenseTileScheduler counts
  // them (with ksplit a cluster takes the splits of one tile).
  const int64_t units = p.tilesM * groupsN * (s.ksplit > 1 ? 1 : p.splits);
  CUlaunchConfig cfg;
  CUlaunchAttribute attrs[2];
  if (auto e = persistentLaunchConfig(kernel, s, units, stream, cfg, attrs))
    return e;
  void *params[] = {&p, &tA, &tB, &tSA, &tSB, &tC};
  return d.check(d.cuLaunchKernelEx(&cfg, *fn, params, nullptr),
                 "cuLaunchKernelEx");
}
