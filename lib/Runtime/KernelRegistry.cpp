//===- KernelRegistry.cpp - compiled kernels by cache key -------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "blockscale/Runtime/KernelRegistry.h"
#include "blockscale/Runtime/Error.h"

#include <condition_variable>

using namespace blockscale;

struct KernelRegistry::Slot {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::shared_ptr<CompiledKernel> kernel;
  ErrorCode code = ErrorCode::Internal;
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
      return makeError(slot->code, slot->error);
    ++counters.memoryHits;
    return slot->kernel;
  }

  auto finish = [&](std::shared_ptr<CompiledKernel> k, ErrorCode code,
                    std::string error)
      -> llvm::Expected<std::shared_ptr<CompiledKernel>> {
    {
      std::lock_guard<std::mutex> lock(slot->mu);
      slot->kernel = k;
      slot->code = code;
      slot->error = error;
      slot->done = true;
    }
    slot->cv.notify_all();
    if (!k) {
      // Forget failures so that a later call (e.g. after fixing the
      // environment) tries again.
      std::lock_guard<std::mutex> lock(mu);
      slots.erase(key);
      return makeError(code, error);
    }
    return k;
  };

  auto specOr = KernelSpec::fromSource(source);
  if (!specOr) {
    std::string message;
    ErrorCode code = takeErrorCode(specOr.takeError(), &message);
    return finish(nullptr, code, message);
  }
  auto kernel = std::make_shared<CompiledKernel>();
  kernel->spec = *specOr;
  kernel->cacheKey = key;

  if (!options.ptx) {
    DiskCache::Lookup hit = cache.load(key);
    if (hit.status == DiskCache::LookupStatus::Hit) {
      ++counters.diskHits;
      kernel->cubin = std::move(hit.payload);
      kernel->fromDiskCache = true;
      return finish(kernel, ErrorCode::Internal, "");
    }
    if (hit.status == DiskCache::LookupStatus::Corrupt)
      ++counters.corruptEntries; // rebuilt and overwritten below
  }

  auto out = compileCuda(source, kernel->spec.name, options);
  if (!out) {
    std::string path = cache.storeSource(key, source);
    std::string message;
    ErrorCode code = takeErrorCode(out.takeError(), &message);
    return finish(nullptr, code,
                  message + "\n  generated source: " +
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
  return finish(kernel, ErrorCode::Internal, "");
}

