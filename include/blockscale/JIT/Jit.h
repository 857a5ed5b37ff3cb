//===- Jit.h - one call from a GEMM description to a kernel -----*- C++ -*-===//
//
// getGemmKernel(desc) builds a blockscale.matmul for the description, runs the
// same pipeline as `blockscale-opt --blockscale-jit-pipeline` (pad-scales,
// verify-layouts, select-tiles for this GPU), emits the CUDA instantiation
// and gets it compiled through the KernelRegistry (memory, then disk cache,
// then NVRTC). Repeated calls with an equal description return the same
// kernel from an in-process map without touching MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_JIT_JIT_H
#define BLOCKSCALE_JIT_JIT_H

#include "blockscale/Runtime/Runtime.h"

#include <memory>

namespace blockscale {

struct GemmKernel {
  GemmDesc desc;
  GemmLaunchConfig launch;
  std::shared_ptr<CompiledKernel> compiled;
  double predictedSeconds = 0; // the tile model's estimate at desc's M

  /// Launches on `stream` (CUstream; nullptr = legacy default stream).
  llvm::Error operator()(const GemmArgs &args, CUstream stream) const {
    GemmArgs a = args;
    if (a.m < 0)
      a.m = desc.m;
    return launchGemm(*compiled, launch, desc.n, desc.k, a, stream);
  }
  size_t workspaceBytes(int64_t m) const {
    return gemmWorkspaceBytes(compiled->spec.gemm, launch, m, desc.n, desc.k);
  }
};

struct QuantKernel {
  QuantDesc desc;
  std::shared_ptr<CompiledKernel> compiled;
  llvm::Error operator()(const QuantArgs &args, CUstream stream) const {
    return launchQuantize(*compiled, desc, args, stream);
  }
};

struct JitOptions {
  CompileOptions compile; // NVRTC options (e.g. -DBS_DEBUG_HANG)
};

/// What the pipeline decided for a description, before any compilation.
struct GemmPlan {
  KernelSpec spec;
  GemmLaunchConfig launch;
  std::string source;
  std::string ir; // the module after the pipeline
  double predictedSeconds = 0;
};
struct QuantPlan {
  KernelSpec spec;
  std::string source;
  std::string ir;
};

llvm::Expected<GemmPlan> planGemm(const GemmDesc &desc);
llvm::Expected<QuantPlan> planQuantize(const QuantDesc &desc);

llvm::Expected<std::shared_ptr<const GemmKernel>>
getGemmKernel(const GemmDesc &desc, const JitOptions &options = {});
/// getGemmKernel without the per-thread last-description fast path.
llvm::Expected<std::shared_ptr<const GemmKernel>>
getGemmKernelSlow(const GemmDesc &desc, const JitOptions &options = {});
llvm::Expected<std::shared_ptr<const QuantKernel>>
getQuantKernel(const QuantDesc &desc, const JitOptions &options = {});

/// Drops the description -> kernel map (for tests and cold-start benches).
void clearJitMemoryCache();

} // namespace blockscale

#endif
