//===- CudaDriver.cpp - lazily loaded CUDA driver API -----------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "blockscale/Runtime/CudaDriver.h"
#include "blockscale/Runtime/DynamicLibrary.h"
#include "blockscale/Runtime/Error.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>
#include <mutex>

using namespace blockscale;

std::string CudaDriver::errorString(CUresult r, const char *what) const {
  const char *name = nullptr, *msg = nullptr;
  if (cuGetErrorName)
    cuGetErrorName(r, &name);
  if (cuGetErrorString)
    cuGetErrorString(r, &msg);
  return llvm::formatv("{0} failed: {1} ({2})", what,
                       name ? name : "CUDA_ERROR_?", msg ? msg : "no message")
      .str();
}

llvm::Error CudaDriver::check(CUresult r, const char *what) const {
  if (r == CUDA_SUCCESS)
    return llvm::Error::success();
  return makeError(ErrorCode::Cuda, errorString(r, what));
}

static llvm::Expected<CudaDriver> loadDriver() {
  DynamicLibrary lib;
  if (!lib.open({"libcuda.so.1", "libcuda.so"}))
    return makeError(ErrorCode::NoDevice,
                     "no CUDA driver: dlopen(libcuda.so.1) failed (" +
                         lib.lastError() +
                         "); generating and compiling kernels works without "
                         "a GPU, running them does not");
  CudaDriver d;
  // Versioned entry points fall back to the unversioned name.
  auto load = [&](void **slot, llvm::StringRef name) {
    *slot = lib.symbol(name, name.ends_with("_v2") ? name.drop_back(3)
                                                   : llvm::StringRef());
  };
#define BS_CU_FN(name, ...) load(reinterpret_cast<void **>(&d.name), #name);
#include "blockscale/Runtime/CudaDriverFunctions.def"
  const std::string &missing = lib.missing();
  if (!missing.empty())
    return makeError(ErrorCode::NoDevice,
                     "the CUDA driver is too old: missing " + missing +
                         " (need CUDA 12.x or newer)");
  if (CUresult r = d.cuInit(0); r != CUDA_SUCCESS)
    return makeError(ErrorCode::NoDevice, d.errorString(r, "cuInit"));
  int count = 0;
  if (d.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0)
    return makeError(ErrorCode::NoDevice, "no CUDA device is visible");
  return d;
}

llvm::Expected<const CudaDriver &> blockscale::getCudaDriver() {
  static std::once_flag once;
  static CudaDriver driver;
  static std::string error;
  std::call_once(once, [] {
    llvm::Expected<CudaDriver> d = loadDriver();
    if (d)
      driver = *d;
    else
      error = llvm::toString(d.takeError());
  });
  if (!error.empty())
    return makeError(ErrorCode::NoDevice, error);
  return driver;
}

llvm::Expected<CUcontext> blockscale::ensureContext(int device) {
  auto d = getCudaDriver();
  if (!d)
    return d.takeError();
  CUcontext ctx = nullptr;
  // Fast path of every launch: a context is current (PyTorch's, or ours).
  if (d->cuCtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx)
    return ctx;
  if (auto e = d->check(d->cuCtxGetCurrent(&ctx), "cuCtxGetCurrent"))
    return std::move(e);
  if (ctx)
    return ctx;
  CUdevice dev;
  if (auto e = d->check(d->cuDeviceGet(&dev, device), "cuDeviceGet"))
    return std::move(e);
  if (auto e = d->check(d->cuDevicePrimaryCtxRetain(&ctx, dev),
                        "cuDevicePrimaryCtxRetain"))
    return std::move(e);
  if (auto e = d->check(d->cuCtxSetCurrent(ctx), "cuCtxSetCurrent"))
    return std::move(e);
  return ctx;
}

llvm::Expected<int> blockscale::currentDeviceSMs() {
  auto ctx = ensureContext();
  if (!ctx)
    return ctx.takeError();
  // Launches ask this every time: remember the answer per thread and context.
  thread_local CUcontext lastCtx = nullptr;
  thread_local int lastSMs = 0;
  if (*ctx == lastCtx)
    return lastSMs;
  const CudaDriver &d = *getCudaDriver();
  CUdevice dev;
  if (auto e = d.check(d.cuCtxGetDevice(&dev), "cuCtxGetDevice"))
    return std::move(e);
  static std::mutex mu;
  static std::map<int, int> sms;
  std::lock_guard<std::mutex> lock(mu);
  auto it = sms.find(dev);
  if (it != sms.end()) {
    lastCtx = *ctx;
    lastSMs = it->second;
    return it->second;
  }
  int n = 0;
  if (auto e = d.check(d.cuDeviceGetAttribute(
                           &n, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
                       "cuDeviceGetAttribute"))
    return std::move(e);
  sms[dev] = n;
  lastCtx = *ctx;
  lastSMs = n;
  return n;
}

llvm::Error blockscale::checkCurrentDeviceRunsSm90a() {
  auto ctx = ensureContext();
  if (!ctx)
    return ctx.takeError();
  thread_local CUcontext checked = nullptr;
  if (*ctx == checked)
    return llvm::Error::success();
  const CudaDriver &d = *getCudaDriver();
  CUdevice dev;
  if (auto e = d.check(d.cuCtxGetDevice(&dev), "cuCtxGetDevice"))
    return e;
  int major = 0, minor = 0;
  if (auto e = d.check(d.cuDeviceGetAttribute(
                           &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                           dev),
                       "cuDeviceGetAttribute"))
    return e;
  if (auto e = d.check(d.cuDeviceGetAttribute(
                           &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                           dev),
                       "cuDeviceGetAttribute"))
    return e;
  // sm_90a code (wgmma, setmaxnreg) runs on compute capability 9.0 only:
  // not on earlier GPUs and not on Blackwell (PTX ISA, "Architecture-
  // specific features").
  if (major != 9 || minor != 0) {
    char name[256] = "unknown GPU";
    d.cuDeviceGetName(name, sizeof(name), dev);
    return makeError(
        ErrorCode::NoDevice,
        llvm::formatv("device {0} ({1}) has compute capability {2}.{3}, but "
                      "blockscale's kernels are sm_90a code and need a "
                      "Hopper GPU (compute capability 9.0: H100, H200, H20)",
                      int(dev), name, major, minor));
  }
  checked = *ctx;
  return llvm::Error::success();
}
