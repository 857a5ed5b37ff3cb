//===- CompiledKernel.cpp - a kernel binary and its modules -----*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "blockscale/Runtime/CompiledKernel.h"
#include "blockscale/Runtime/CudaDriver.h"
#include "blockscale/Runtime/Error.h"

#include <atomic>

using namespace blockscale;

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
    return makeError(ErrorCode::NoDevice,
                     "no cluster of " +
                         std::to_string(spec.gemm.clusterCtas()) +
                         " CTAs of " + spec.name + " fits on this GPU");
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
  // A module of sm_90a code fails to load elsewhere with a driver error that
  // does not say why; say it first.
  if (llvm::Error e = checkCurrentDeviceRunsSm90a())
    return std::move(e);
  const CudaDriver &d = *getCudaDriver();
  CUmodule mod;
  if (CUresult r = d.cuModuleLoadData(&mod, cubin.data()); r != CUDA_SUCCESS)
    return makeError(ErrorCode::Cuda, d.errorString(r, "cuModuleLoadData") +
                                          " for kernel " + spec.name +
                                          " (cache key " + cacheKey + ")");
  CUfunction fn;
  if (CUresult r = d.cuModuleGetFunction(&fn, mod, spec.name.c_str());
      r != CUDA_SUCCESS)
    return makeError(ErrorCode::Cuda,
                     d.errorString(r, "cuModuleGetFunction") + " for " +
                         spec.name);
  if (int smem = spec.smemBytes(); smem > 0)
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
    return makeError(ErrorCode::InvalidArgument,
                     d.errorString(r, "cuModuleGetGlobal") + ": kernel " +
                         spec.name + " has no variable '" + name + "' (cache key " +
                         cacheKey + ")");
  return std::make_pair(ptr, bytes);
}

CompiledKernel::~CompiledKernel() {
  // Modules are released with their contexts; unloading here could race a
  // context being torn down at exit.
}
