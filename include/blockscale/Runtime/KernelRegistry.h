//===- KernelRegistry.h - compiled kernels by cache key ---------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_RUNTIME_KERNELREGISTRY_H
#define BLOCKSCALE_RUNTIME_KERNELREGISTRY_H

#include "blockscale/Runtime/CompiledKernel.h"
#include "blockscale/Runtime/KernelCache.h"
#include "blockscale/Runtime/Nvrtc.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace blockscale {

struct RegistryStats {
  std::atomic<int> memoryHits{0}, diskHits{0}, compiles{0}, corruptEntries{0};
};

/// Process-wide map from cache key to compiled kernel, backed by DiskCache.
/// Concurrent requests for one key compile once; the others wait for it.
class KernelRegistry {
public:
  static KernelRegistry &global();
  explicit KernelRegistry(std::string cacheDir);

  /// The kernel of a generated source (its `// blockscale-spec:` line
  /// says what it is): from memory, else the disk cache, else NVRTC. A
  /// compile error carries NVRTC's log, the path of the source written
  /// next to the cache and the cache key.
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

} // namespace blockscale

#endif
