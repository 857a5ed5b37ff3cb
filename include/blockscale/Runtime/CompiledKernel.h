//===- CompiledKernel.h - a kernel binary and its modules -------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_RUNTIME_COMPILEDKERNEL_H
#define BLOCKSCALE_RUNTIME_COMPILEDKERNEL_H

#include "blockscale/Runtime/KernelSpec.h"

#include "llvm/Support/Error.h"

#include <cuda.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

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

  /// The kernel in the current CUDA context (module loaded on first use,
  /// after checking that the device can run it).
  llvm::Expected<CUfunction> function();
  /// Address and size of the module-scope variable `name` in the current
  /// context (debug options, e.g. the GEMM's phase stamps); an error naming
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

} // namespace blockscale

#endif
