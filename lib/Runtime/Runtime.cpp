//===- Runtime.cpp - compiled kernels, cache and launches -------*- C++ -*-===//

#include "blockscale/Runtime/Runtime.h"
#include "blockscale/Runtime/CudaDriver.h"
#include "blockscale/Target/Cuda/Kernels/params.h"

#include "llvm/Support/FormatVariadic.h"

#include <condition_variable>
#include <cstring>

using namespace blockscale;

static llvm::Error err(const std::string &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg.c_str());
}

//===----------------------------------------------------------------------===//
// CompiledKernel
//===----------------------------------------------------------------------===//

static std::atomic<uint64_t> nextKernelUid{1};
CompiledKernel::CompiledKernel() : uid(nextKernelUid++) {}

llvm::Expected<int> CompiledKernel::maxActiveClusters(const CUlaunchConfig &cfg) {
  auto fn = function();
  if (!fn)
    return fn.takeError();
  std::lock_guard<std::mutex> lock(mu);
  auto it = clusterSlots.find(*fn);
  if (it != clusterSlots.end())
    return it->second;
  const CudaDriver &d = *getCudaDriver();
  CUlaunchConfig c = cfg;
  c.gridDimX = 1024 * spec.gemm.clusterCtas(); // a multiple of the cluster
  int n = 0;
  if (auto e = d.check(d.cuOccupancyMaxActiveClusters(&n, *fn, &c),
                       "cuOccupancyMaxActiveClusters"))
    return std::move(e);
  if (n <= 0)
    return err("launchGemm: no cluster of " +
               std::to_string(spec.gemm.clusterCtas()) + " CTAs of " +
               spec.name + " fits on this GPU");
  clusterSlots[*fn] = n;
  return n;
}

llvm::Expected<CUfunction> CompiledKernel::function() {
  auto ctx = ensureContext();
  if (!ctx)
    return ctx.takeError();
  // One-entry per-thread cache: the common case is the same kernel launched
  // again in the same context, which then needs no lock.
  thread_local uint64_t lastKernel = 0;
  thread_local CUcontext lastCtx = nullptr;
  thread_local CUfunction lastFn = nullptr;
  if (lastKernel == uid && lastCtx == *ctx)
    return lastFn;
  std::lock_guard<std::mutex> lock(mu);
  auto it = loaded.find(*ctx);
  if (it != loaded.end()) {
    lastKernel = uid;
    lastCtx = *ctx;
    lastFn = it->second.second;
    return it->second.second;
  }
  const CudaDriver &d = *getCudaDriver();
  CUmodule mod;
  if (CUresult r = d.cuModuleLoadData(&mod, cubin.data()); r != CUDA_SUCCESS)
    return err(d.errorString(r, "cuModuleLoadData") + " for kernel " +
               spec.name + " (cache key " + cacheKey + ")");
  CUfunction fn;
  if (CUresult r = d.cuModuleGetFunction(&fn, mod, spec.name.c_str());
      r != CUDA_SUCCESS)
    return err(d.errorString(r, "cuModuleGetFunction") + " for " + spec.name);
  int smem = spec.kind == KernelKind::Gemm ? spec.gemm.smemBytes()
                                           : spec.quant.smemBytes();
  if (smem > 0)
    if (auto e = d.check(d.cuFuncSetAttribute(
                             fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             smem),
                         "cuFuncSetAttribute(max dynamic shared memory)"))
      return std::move(e);
  loaded[*ctx] = {mod, fn};
  lastKernel = uid;
  lastCtx = *ctx;
  lastFn = fn;
  return fn;
}

llvm::Expected<std::pair<CUdeviceptr, size_t>>
CompiledKernel::global(llvm::StringRef name) {
  auto fn = function(); // loads the module in the current context
  if (!fn)
    return fn.takeError();
  auto ctx = ensureContext();
  if (!ctx)
    return ctx.takeError();
  CUmodule mod;
  {
    std::lock_guard<std::mutex> lock(mu);
    mod = loaded.at(*ctx).first;
  }
  const CudaDriver &d = *getCudaDriver();
  CUdeviceptr ptr = 0;
  size_t bytes = 0;
  if (CUresult r = d.cuModuleGetGlobal_v2(&ptr, &bytes, mod, name.str().c_str());
      r != CUDA_SUCCESS)
    return err(d.errorString(r, "cuModuleGetGlobal") + ": kernel " + spec.name +
               " has no variable '" + name.str() + "' (cache key " + cacheKey +
               ")");
  return std::make_pair(ptr, bytes);
}

CompiledKernel::~CompiledKernel() {
  // Modules are released with their contexts; unloading here could race a
  // context being torn down at exit.
}

//===----------------------------------------------------------------------===//
// KernelRegistry
//===----------------------------------------------------------------------===//

struct KernelRegistry::Slot {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::shared_ptr<CompiledKernel> kernel;
  std::string error;
};

KernelRegistry &KernelRegistry::global() {
  static KernelRegistry registry(defaultCacheDir());
  return registry;
}

KernelRegistry::KernelRegistry(std::string cacheDir)
    : cache(std::move(cacheDir)) {}

void KernelRegistry::clearMemory() {
  std::lock_guard<std::mutex> lock(mu);
  slots.clear();
}

llvm::Expected<std::shared_ptr<CompiledKernel>>
KernelRegistry::getOrCompile(llvm::StringRef source,
                             const CompileOptions &options) {
  auto version = nvrtcVersion();
  if (!version)
    return version.takeError();
  std::string key = computeCacheKey(source, options.flags(), *version);

  std::shared_ptr<Slot> slot;
  bool owner = false;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto &s = slots[key];
    if (!s) {
      s = std::make_shared<Slot>();
      owner = true;
    }
    slot = s;
  }
  if (!owner) {
    std::unique_lock<std::mutex> lock(slot->mu);
    slot->cv.wait(lock, [&] { return slot->done; });
    if (!slot->kernel)
      return err(slot->error);
    ++counters.memoryHits;
    return slot->kernel;
  }

  auto finish = [&](std::shared_ptr<CompiledKernel> k, std::string error)
      -> llvm::Expected<std::shared_ptr<CompiledKernel>> {
    {
      std::lock_guard<std::mutex> lock(slot->mu);
      slot->kernel = k;
      slot->error = error;
      slot->done = true;
    }
    slot->cv.notify_all();
    if (!k) {
      // Forget failures so that a later call (e.g. after fixing the
      // environment) tries again.
      std::lock_guard<std::mutex> lock(mu);
      slots.erase(key);
      return err(error);
    }
    return k;
  };

  auto specOr = KernelSpec::fromSource(source);
  if (!specOr)
    return finish(nullptr, llvm::toString(specOr.takeError()));
  auto kernel = std::make_shared<CompiledKernel>();
  kernel->spec = *specOr;
  kernel->cacheKey = key;

  if (!options.ptx) {
    DiskCache::Lookup hit = cache.load(key);
    if (hit.status == DiskCache::LookupStatus::Hit) {
      ++counters.diskHits;
      kernel->cubin = std::move(hit.payload);
      kernel->fromDiskCache = true;
      return finish(kernel, "");
    }
    if (hit.status == DiskCache::LookupStatus::Corrupt)
      ++counters.corruptEntries; // rebuilt and overwritten below
  }

  auto out = compileCuda(source, kernel->spec.name, options);
  if (!out) {
    std::string path = cache.storeSource(key, source);
    return finish(nullptr,
                  llvm::toString(out.takeError()) + "\n  generated source: " +
                      (path.empty() ? "(not written)" : path) +
                      "\n  cache key: " + key);
  }
  ++counters.compiles;
  kernel->cubin = std::move(out->binary);
  kernel->compileSeconds = out->seconds;
  kernel->registers = out->registers;
  kernel->spillBytes = out->spillBytes;
  if (!options.ptx) {
    kernel->sourcePath = cache.storeSource(key, source);
    if (llvm::Error e = cache.store(key, kernel->cubin))
      llvm::consumeError(std::move(e)); // an unwritable cache is not fatal
  }
  return finish(kernel, "");
}

//===----------------------------------------------------------------------===//
// Launch helpers
//===----------------------------------------------------------------------===//

namespace {
struct Geometry {
  int chunkCols, swizzleBytes;
};
} // namespace

/// Mirrors GemmSm90::kSwz / kChunkCols.
static Geometry epilogueGeometry(const GemmKernelSpec &s) {
  int ob = dtypeBytes(s.out), row = s.bn * ob;
  int swz = row % 128 == 0 ? 128 : (row % 64 == 0 ? 64 : 32);
  return {swz / ob, swz};
}

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t roundUp(int64_t a, int64_t b) { return ceilDiv(a, b) * b; }

size_t blockscale::gemmWorkspaceBytes(const GemmKernelSpec &spec,
                                      const GemmLaunchConfig &launch,
                                      int64_t m, int64_t n, int64_t k) {
  int64_t kBlocks = ceilDiv(k, 128);
  int64_t splits = std::min<int64_t>(launch.splits, kBlocks);
  // Splits summed in a cluster need no workspace.
  if (splits <= 1 || m <= 0 || spec.ksplit > 1)
    return 0;
  // Tiles are numbered per cluster group (see GemmSm90::decode).
  int64_t tiles = ceilDiv(m, spec.bm) *
                  ceilDiv(ceilDiv(n, spec.bn), spec.cluster) * spec.cluster;
  size_t partials = size_t(tiles) * splits * spec.bm * spec.bn * sizeof(float);
  return bs::kSplitKCounterBytes + partials;
}

static llvm::Error encode(const CudaDriver &d, CUtensorMap *map,
                          CUtensorMapDataType type, const void *ptr,
                          uint64_t inner, uint64_t outer, uint64_t strideBytes,
                          uint32_t boxInner, uint32_t boxOuter,
                          CUtensorMapSwizzle swizzle, const char *what) {
  cuuint64_t dims[2] = {inner, outer};
  cuuint64_t strides[1] = {strideBytes};
  cuuint32_t box[2] = {boxInner, boxOuter};
  cuuint32_t estr[2] = {1, 1};
  CUresult r = d.cuTensorMapEncodeTiled(
      map, type, 2, const_cast<void *>(ptr), dims, strides, box, estr,
      CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    return err(d.errorString(r, "cuTensorMapEncodeTiled") +
               llvm::formatv(" for {0} (dims {1}x{2}, row stride {3} bytes, "
                             "box {4}x{5}, address {6})",
                             what, outer, inner, strideBytes, boxOuter,
                             boxInner, ptr)
                   .str());
  return llvm::Error::success();
}

static bool aligned16(const void *p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

static std::atomic<int> &programmaticLaunchFlag() {
  static std::atomic<int> flag(envSwitch("BLOCKSCALE_PDL").value_or(true));
  return flag;
}

bool blockscale::programmaticLaunch() {
  return programmaticLaunchFlag().load(std::memory_order_relaxed) != 0;
}

void blockscale::setProgrammaticLaunch(bool on) {
  programmaticLaunchFlag().store(on ? 1 : 0, std::memory_order_relaxed);
}

/// Appends the programmatic-launch attribute to cfg's attributes (storage
/// `attrs`, which already holds cfg.numAttrs entries) when it is on.
static void addProgrammaticLaunch(CUlaunchConfig &cfg,
                                  CUlaunchAttribute *attrs) {
  if (!programmaticLaunch())
    return;
  CUlaunchAttribute &a = attrs[cfg.numAttrs++];
  std::memset(&a, 0, sizeof(a));
  a.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  a.value.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attrs;
}

namespace {
/// Per (context, stream) split-K scratch owned by the runtime.
struct Workspace {
  CUdeviceptr ptr = 0;
  size_t bytes = 0;
};
} // namespace

static llvm::Expected<void *> runtimeWorkspace(const CudaDriver &d,
                                               size_t bytes, CUstream stream,
                                               size_t counterOffset) {
  static std::mutex mu;
  static std::map<std::pair<CUcontext, CUstream>, Workspace> pool;
  CUcontext ctx;
  d.cuCtxGetCurrent(&ctx);
  std::lock_guard<std::mutex> lock(mu);
  Workspace &w = pool[{ctx, stream}];
  if (w.bytes < bytes) {
    if (w.ptr) {
      d.cuStreamSynchronize(stream);
      d.cuMemFree_v2(w.ptr);
      w = Workspace();
    }
    size_t want = roundUp(bytes, 1 << 20);
    if (auto e = d.check(d.cuMemAlloc_v2(&w.ptr, want),
                         "cuMemAlloc (split-K workspace)"))
      return std::move(e);
    // Zero everything once: counters anywhere in it start at zero.
    if (auto e = d.check(d.cuMemsetD8Async(w.ptr, 0, want, stream),
                         "cuMemsetD8Async"))
      return std::move(e);
    w.bytes = want;
  }
  (void)counterOffset;
  return reinterpret_cast<void *>(w.ptr);
}

llvm::Error blockscale::launchGemm(CompiledKernel &kernel,
                                   const GemmLaunchConfig &launch, int64_t n,
                                   int64_t k, const GemmArgs &a,
                                   CUstream stream) {
  const GemmKernelSpec &s = kernel.spec.gemm;
  if (kernel.spec.kind != KernelKind::Gemm)
    return err("launchGemm: " + kernel.spec.name + " is not a GEMM kernel");
  int64_t m = a.m;
  if (m < 0)
    return err("launchGemm: M is dynamic for this kernel; set GemmArgs::m");
  if (m == 0)
    return llvm::Error::success();
  if (m > (int64_t(1) << 31) - 1)
    return err(llvm::formatv("launchGemm: M = {0} exceeds 2^31 - 1", m));
  auto dOr = getCudaDriver();
  if (!dOr)
    return dOr.takeError();
  const CudaDriver &d = *dOr;
  auto fn = kernel.function();
  if (!fn)
    return fn.takeError();

  int64_t kBlocks = ceilDiv(k, 128);
  int ob = dtypeBytes(s.out);
  int64_t lda = a.lda ? a.lda : k, ldb = a.ldb ? a.ldb : k;
  int64_t ldc = a.ldc ? a.ldc : n;
  int64_t ldsa = a.ldsa ? a.ldsa : roundUp(m, 4);
  int64_t ldsb = a.ldsb ? a.ldsb : roundUp(n, 4);
  struct {
    const char *name;
    const void *ptr;
  } ptrs[] = {{"A", a.a}, {"A scales", a.sa}, {"B", a.b},
              {"B scales", a.sb}, {"C", a.c}};
  for (auto &p : ptrs) {
    if (!p.ptr)
      return err(llvm::formatv("launchGemm: the {0} pointer is null", p.name));
    if (!aligned16(p.ptr) && std::strcmp(p.name, "B scales") != 0)
      return err(llvm::formatv("launchGemm: expected the {0} pointer to be "
                               "16-byte aligned (TMA) but got {1}",
                               p.name, p.ptr));
  }
  if (lda < k || lda % 16 || ldb < k || ldb % 16)
    return err(llvm::formatv("launchGemm: expected lda, ldb >= K = {0} and "
                             "multiples of 16 (TMA) but got lda = {1}, ldb = "
                             "{2}",
                             k, lda, ldb));
  if (ldc < n || (ldc * ob) % 16)
    return err(llvm::formatv("launchGemm: expected ldc >= N = {0} with a row "
                             "of a multiple of 16 bytes but got ldc = {1}",
                             n, ldc));
  if (ldsa < m || ldsa % 4)
    return err(llvm::formatv(
        "launchGemm: expected the A-scale stride ldsa >= M = {0} and a "
        "multiple of 4 (16 bytes, TMA) but got {1}; A scales are M-contiguous "
        "(M, ceil(K/128)) with the K-block stride padded to 4",
        m, ldsa));
  int64_t sbK = a.sbStrideK, sbN = a.sbStrideN;
  if (!s.wgrad()) {
    if (sbK == 0 && sbN == 0) {
      sbK = 1;
      sbN = roundUp(kBlocks, 4);
    }
  } else if (ldsb < n || ldsb % 4) {
    return err(llvm::formatv(
        "launchGemm: expected the B-scale stride ldsb >= N = {0} and a "
        "multiple of 4 but got {1}; 128x1 B scales are N-contiguous "
        "(ceil(K/128), N)",
        n, ldsb));
  }

  Geometry g = epilogueGeometry(s);
  // Encoding five tensor maps is most of the host cost of a launch; a loop
  // that launches the same kernel on the same buffers reuses them.
  struct MapCache {
    uint64_t kernel = 0; // CompiledKernel::uid
    CUcontext ctx = nullptr;
    const void *ptrs[5] = {};
    int64_t dims[10] = {};
    CUtensorMap tA, tB, tSA, tSB, tC;
  };
  thread_local MapCache mc;
  const void *ptrKey[5] = {a.a, a.b, a.sa, a.sb, a.c};
  int64_t dimKey[10] = {m, n, k, lda, ldb, ldc, ldsa, s.wgrad() ? ldsb : 0,
                        0, 0};
  CUcontext curCtx = nullptr;
  d.cuCtxGetCurrent(&curCtx);
  bool hit = mc.kernel == kernel.uid && mc.ctx == curCtx &&
             std::memcmp(mc.ptrs, ptrKey, sizeof(ptrKey)) == 0 &&
             std::memcmp(mc.dims, dimKey, sizeof(dimKey)) == 0;
  CUtensorMap &tA = mc.tA, &tB = mc.tB, &tSA = mc.tSA, &tSB = mc.tSB,
              &tC = mc.tC;
  if (!hit) {
  mc.kernel = 0; // invalid until all maps are encoded
  std::memset(&tSB, 0, sizeof(tSB));
  auto swz = [](int bytes) {
    return bytes == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
                        : (bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                       : CU_TENSOR_MAP_SWIZZLE_32B);
  };
  // With clusters each CTA loads (and multicasts) bm / cluster rows of A.
  if (auto e = encode(d, &tA, CU_TENSOR_MAP_DATA_TYPE_UINT8, a.a, k, m, lda,
                      128, s.bm / s.cluster, CU_TENSOR_MAP_SWIZZLE_128B, "A"))
    return e;
  if (auto e = encode(d, &tB, CU_TENSOR_MAP_DATA_TYPE_UINT8, a.b, k, n, ldb,
                      128, s.bn, CU_TENSOR_MAP_SWIZZLE_128B, "B"))
    return e;
  if (auto e = encode(d, &tSA, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, a.sa, m,
                      kBlocks, ldsa * 4, s.bm, 1, CU_TENSOR_MAP_SWIZZLE_NONE,
                      "A scales"))
    return e;
  if (s.wgrad())
    if (auto e = encode(d, &tSB, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, a.sb, n,
                        kBlocks, ldsb * 4, s.bn, 1, CU_TENSOR_MAP_SWIZZLE_NONE,
                        "B scales"))
      return e;
  if (auto e = encode(d, &tC,
                      s.out == DType::F32 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                                          : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
                      a.c, n, m, ldc * ob, g.chunkCols, 64,
                      swz(g.swizzleBytes), "C"))
    return e;
  mc.kernel = kernel.uid;
  mc.ctx = curCtx;
  std::memcpy(mc.ptrs, ptrKey, sizeof(ptrKey));
  std::memcpy(mc.dims, dimKey, sizeof(dimKey));
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
  // Groups of `cluster` adjacent N tiles (GemmSm90::decode).
  const int64_t groupsN = ceilDiv(p.tilesN, s.cluster);
  {
    // The decode's divisors (bs::FastDiv: dividends below 2^31).
    const int64_t rasterTiles = int64_t(p.raster) * p.tilesM;
    const int64_t units = groupsN * p.tilesM * p.splits;
    const int64_t limit = int64_t(1) << 31;
    if (units >= limit || int64_t(p.splits) * kBlocks >= limit ||
        rasterTiles >= limit)
      return err(llvm::formatv(
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
    return err(llvm::formatv(
        "launchGemm: kernel {0} sums {1} K splits in a cluster but the launch "
        "asks for {2} splits of {3} K-blocks; launch it with splits = {1} on "
        "K >= {4}, or use a kernel without ksplit",
        kernel.spec.name, s.ksplit,
        launch.splits, kBlocks, 128 * (s.ksplit - 1) + 1));
  if (p.splits > 1 && s.ksplit == 1) {
    size_t need = gemmWorkspaceBytes(s, launch, m, n, k);
    void *ws = a.workspace;
    if (ws && a.workspaceBytes < need)
      return err(llvm::formatv("launchGemm: the workspace has {0} bytes but "
                               "split-K needs {1}",
                               a.workspaceBytes, need));
    if (!ws) {
      auto w = runtimeWorkspace(d, need, stream, 0);
      if (!w)
        return w.takeError();
      ws = *w;
    }
    int64_t tiles = p.tilesM * groupsN * s.cluster;
    if (tiles * s.consumers() > bs::kSplitKCounterSlots)
      return err(llvm::formatv("launchGemm: split-K over {0} tiles needs {1} "
                               "arrival counters but the workspace has {2}; "
                               "use splits = 1 for this shape",
                               tiles, tiles * s.consumers(),
                               bs::kSplitKCounterSlots));
    p.counters = static_cast<int *>(ws);
    p.workspace = reinterpret_cast<float *>(static_cast<char *>(ws) +
                                            bs::kSplitKCounterBytes);
  }

  auto sms = currentDeviceSMs();
  if (!sms)
    return sms.takeError();
  // Units are (cluster group, split) pairs, as GemmSm90::numUnits counts.
  // (With ksplit a cluster takes the splits of one tile.)
  int64_t units = p.tilesM * groupsN *
                  (s.ksplit > 1 ? 1 : p.splits);

  CUlaunchConfig cfg;
  std::memset(&cfg, 0, sizeof(cfg));
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = s.threads();
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.sharedMemBytes = s.smemBytes();
  cfg.hStream = stream;
  CUlaunchAttribute attrs[2];
  std::memset(attrs, 0, sizeof(attrs));
  int64_t slots = *sms; // persistent CTAs (or clusters) resident at once
  if (s.clusterCtas() > 1) {
    attrs[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attrs[0].value.clusterDim.x = s.clusterCtas();
    attrs[0].value.clusterDim.y = attrs[0].value.clusterDim.z = 1;
    cfg.attrs = attrs;
    cfg.numAttrs = 1;
    auto maxClusters = kernel.maxActiveClusters(cfg);
    if (!maxClusters)
      return maxClusters.takeError();
    slots = *maxClusters;
  }
  cfg.gridDimX = unsigned(std::min<int64_t>(units, slots) * s.clusterCtas());
  addProgrammaticLaunch(cfg, attrs);
  void *params[] = {&p, &tA, &tB, &tSA, &tSB, &tC};
  return d.check(d.cuLaunchKernelEx(&cfg, *fn, params, nullptr),
                 "cuLaunchKernelEx");
}

ScaleGeometry blockscale::quantScaleGeometry(const QuantDesc &q, int64_t rows,
                                             int64_t ldScale) {
  int64_t l0 = q.transpose ? q.cols : rows, l1 = q.transpose ? rows : q.cols;
  ScaleGeometry g;
  g.rows = ceilDiv(l0, q.blockRows);
  g.cols = ceilDiv(l1, q.blockCols);
  // The layouts --blockscale-pad-scales gives cast results (Passes.td).
  bool rowMajor = q.blockRows == 128 && q.blockCols == 1;
  int64_t contiguous = rowMajor ? g.cols : g.rows;
  int64_t ld = ldScale ? ldScale : roundUp(contiguous, 4);
  g.strideRow = rowMajor ? ld : 1;
  g.strideCol = rowMajor ? 1 : ld;
  g.allocElements = ld * (rowMajor ? g.rows : g.cols);
  return g;
}

llvm::Error blockscale::launchQuantize(CompiledKernel &kernel,
                                       const QuantDesc &q, const QuantArgs &a,
                                       CUstream stream) {
  if (kernel.spec.kind != KernelKind::Quantize)
    return err("launchQuantize: " + kernel.spec.name +
               " is not a cast kernel");
  int64_t rows = q.rows >= 0 ? q.rows : a.rows;
  if (rows < 0)
    return err("launchQuantize: rows are dynamic; set QuantArgs::rows");
  if (q.rows >= 0 && a.rows >= 0 && a.rows != q.rows)
    return err(llvm::formatv("launchQuantize: the kernel was built for {0} "
                             "rows but got {1}",
                             q.rows, a.rows));
  if (rows == 0)
    return llvm::Error::success();
  if (q.writesTransposed() && rows % 16)
    return err(llvm::formatv("launchQuantize: expected rows to be a multiple "
                             "of 16 for a transposed result but got {0}",
                             rows));
  auto dOr = getCudaDriver();
  if (!dOr)
    return dOr.takeError();
  const CudaDriver &d = *dOr;
  auto fn = kernel.function();
  if (!fn)
    return fn.takeError();
  if (!a.x || !a.q || !a.s)
    return err("launchQuantize: null pointer argument");
  if (!aligned16(a.x) || !aligned16(a.q))
    return err("launchQuantize: expected 16-byte aligned input and output");
  int64_t ldx = a.ldx ? a.ldx : q.cols;
  int64_t ldq = a.ldq ? a.ldq : (q.writesTransposed() ? rows : q.cols);
  if (ldx < q.cols || (ldx * dtypeBytes(q.in)) % 16 || ldq % 16 ||
      ldq < (q.writesTransposed() ? rows : q.cols))
    return err(llvm::formatv("launchQuantize: bad strides ldx = {0}, ldq = "
                             "{1} (need >= the row length, 16-byte rows)",
                             ldx, ldq));
  ScaleGeometry g = quantScaleGeometry(q, rows, a.ldScale);
  bs::QuantParams p;
  p.x = a.x;
  p.q = a.q;
  p.s = a.s;
  p.rows = int(rows);
  p.cols = int(q.cols);
  p.ldx = ldx;
  p.ldq = ldq;
  // Block (i, j) of the input is logical scale (i, j), or (j, i) when the
  // logical result is the transpose.
  p.ssr = q.transpose ? g.strideCol : g.strideRow;
  p.ssc = q.transpose ? g.strideRow : g.strideCol;
  // BLOCKSCALE_EXP_QUANT_KEEP_L2=0|1 (an experiment) overrides the size rule.
  static const std::optional<bool> keepOverride =
      envSwitch("BLOCKSCALE_EXP_QUANT_KEEP_L2");
  p.keepResultInL2 =
      keepOverride.value_or(bs::quantKeepResultInL2(rows * q.cols)) ? 1 : 0;

  const QuantKernelSpec &qs = kernel.spec.quant;
  CUlaunchConfig cfg;
  std::memset(&cfg, 0, sizeof(cfg));
  cfg.gridDimX = unsigned(ceilDiv(q.cols, 128));
  cfg.gridDimY = unsigned(ceilDiv(rows, 128));
  cfg.gridDimZ = 1;
  cfg.blockDimX = qs.threads();
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.hStream = stream;
  // The staged kernel's second parameter (and a transposing one's third,
  // its output's map); a one-tile-per-CTA kernel
  // (BLOCKSCALE_EXP_QUANT_DIRECT) has only p, and the driver reads as many
  // entries of `params` as the kernel has parameters.
  CUtensorMap tX, tQ;
  std::memset(&tX, 0, sizeof(tX));
  std::memset(&tQ, 0, sizeof(tQ));
  if (qs.staged()) {
    // Persistent: as many CTAs as fit at once walk the 128x128 tiles,
    // which TMA loads as boxes (zero-filled past the input's edges).
    auto sms = currentDeviceSMs();
    if (!sms)
      return sms.takeError();
    int64_t tiles = int64_t(cfg.gridDimX) * cfg.gridDimY;
    cfg.gridDimX = unsigned(std::min<int64_t>(
        tiles, int64_t(*sms) * bs::quantCtasPerSM(dtypeBytes(q.in))));
    cfg.gridDimY = 1;
    cfg.sharedMemBytes = unsigned(qs.smemBytes());
    CUtensorMapDataType type =
        qs.in == DType::BF16   ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
        : qs.in == DType::F16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                              : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    if (auto e = encode(d, &tX, type, a.x, uint64_t(q.cols), uint64_t(rows),
                        uint64_t(ldx) * dtypeBytes(q.in), 128, 128,
                        CU_TENSOR_MAP_SWIZZLE_NONE, "the cast's input"))
      return e;
    // A transposing cast stores each FP8 tile transposed by TMA from a
    // 128B-swizzled copy in shared memory; the box is clipped at the edges.
    if (qs.transposed)
      if (auto e = encode(d, &tQ, CU_TENSOR_MAP_DATA_TYPE_UINT8, a.q,
                          uint64_t(rows), uint64_t(q.cols), uint64_t(ldq), 128,
                          128, CU_TENSOR_MAP_SWIZZLE_128B,
                          "the cast's transposed output"))
        return e;
  }
  CUlaunchAttribute attrs[1];
  addProgrammaticLaunch(cfg, attrs);
  void *params[] = {&p, &tX, &tQ};
  return d.check(d.cuLaunchKernelEx(&cfg, *fn, params, nullptr),
                 "cuLaunchKernelEx");
}
