//===- Runtime.h - compiled kernels, cache and launches ---------*- C++ -*-===//
//
// The launch side of blockscale. Nothing here needs MLIR: a kernel is a
// generated CUDA source (see blockscale/JIT/Jit.h for where sources come
// from) compiled by NVRTC once, cached in memory and on disk, loaded into each
// CUDA context on first use and launched with cuLaunchKernelEx.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_RUNTIME_RUNTIME_H
#define BLOCKSCALE_RUNTIME_RUNTIME_H

#include "blockscale/Runtime/Gemm.h"
#include "blockscale/Runtime/KernelCache.h"
#include "blockscale/Runtime/KernelSpec.h"
#include "blockscale/Runtime/Nvrtc.h"

#include <cuda.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace blockscale {

/// A kernel binary with what is needed to launch it.
class CompiledKernel {
public:
  CompiledKernel();
  /// Unique for the process's lifetime (addresses are reused; this is not),
  /// for per-thread caches keyed by kernel.
  const uint64_t uid;
  KernelSpec spec;
  std::string cubin;
  std::string cacheKey;
  std::string sourcePath; // where the generated source was written, if any
  bool fromDiskCache = false;
  double compileSeconds = 0;
  int registers = -1, spillBytes = 0;

  /// The kernel in the current CUDA context (module loaded on first use).
  llvm::Expected<CUfunction> function();
  /// Address and size of the module-scope variable `name` in the current
  /// context (experiments, e.g. the GEMM's phase stamps); an error naming
  /// the variable and the kernel when the module has none.
  llvm::Expected<std::pair<CUdeviceptr, size_t>> global(llvm::StringRef name);
  /// How many clusters of the kernel fit on the device at once (cached).
  llvm::Expected<int> maxActiveClusters(const CUlaunchConfig &cfg);

  ~CompiledKernel();

private:
  std::mutex mu;
  std::map<CUcontext, std::pair<CUmodule, CUfunction>> loaded;
  std::map<CUfunction, int> clusterSlots;
};

struct RegistryStats {
  std::atomic<int> memoryHits{0}, diskHits{0}, compiles{0}, corruptEntries{0};
};

/// Process-wide map from cache key to compiled kernel, backed by DiskCache.
/// Concurrent requests for one key compile once; the others wait for it.
class KernelRegistry {
public:
  static KernelRegistry &global();
  explicit KernelRegistry(std::string cacheDir);

  llvm::Expected<std::shared_ptr<CompiledKernel>>
  getOrCompile(llvm::StringRef source, const CompileOptions &options = {});

  const DiskCache &disk() const { return cache; }
  RegistryStats &stats() { return counters; }
  /// Drops the in-memory map (the disk cache stays): for tests and benches.
  void clearMemory();

private:
  struct Slot;
  DiskCache cache;
  std::mutex mu;
  std::map<std::string, std::shared_ptr<Slot>> slots;
  RegistryStats counters;
};

/// Bytes of split-K workspace a launch needs (0 when splits == 1, and for a
/// kernel that sums its splits in a cluster, spec.ksplit > 1). The counter
/// part must be zero before the first launch; kernels leave it zero.
size_t gemmWorkspaceBytes(const GemmKernelSpec &spec,
                          const GemmLaunchConfig &launch, int64_t m, int64_t n,
                          int64_t k);

/// Whether GEMM and cast launches are programmatic dependent launches
/// (CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION): the kernel's
/// set-up (barrier initialization, descriptor prefetch) may then run while
/// the previous kernel of the stream finishes; the kernel waits for that
/// kernel's completion before its first global memory access, so results
/// are the same either way. On by default; BLOCKSCALE_PDL=0 in the
/// environment or setProgrammaticLaunch(false) turns it off (process-wide).
bool programmaticLaunch();
void setProgrammaticLaunch(bool on);

/// Launches a GEMM kernel on `stream`. n and k are the kernel's (static)
/// sizes; m comes from args.m when >= 0. Checks pointers and strides first.
llvm::Error launchGemm(CompiledKernel &kernel, const GemmLaunchConfig &launch,
                       int64_t n, int64_t k, const GemmArgs &args,
                       CUstream stream);

/// Launches a cast kernel described by `desc` on `stream`.
llvm::Error launchQuantize(CompiledKernel &kernel, const QuantDesc &desc,
                           const QuantArgs &args, CUstream stream);

/// Physical strides (elements) of the scales a cast writes, in the logical
/// scale tensor's (row, col) order, and the number of f32 to allocate.
struct ScaleGeometry {
  int64_t rows, cols;        // logical scale shape
  int64_t strideRow, strideCol;
  int64_t allocElements;
};
ScaleGeometry quantScaleGeometry(const QuantDesc &desc, int64_t rows,
                                 int64_t ldScale);

} // namespace blockscale

#endif
