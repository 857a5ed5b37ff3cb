//===- CudaDriver.h - lazily loaded CUDA driver API -------------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// libcuda is opened with dlopen on first use, so that everything except
// running kernels (generation, NVRTC compilation, the cache) works on a
// machine without a GPU driver.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_RUNTIME_CUDADRIVER_H
#define BLOCKSCALE_RUNTIME_CUDADRIVER_H

#include "llvm/Support/Error.h"

#include <cuda.h>

namespace blockscale {

struct CudaDriver {
#define BS_CU_FN(name, ...) CUresult (*name)(__VA_ARGS__) = nullptr;
#include "blockscale/Runtime/CudaDriverFunctions.def"

  /// "cuModuleLoadData failed: CUDA_ERROR_... (message)".
  std::string errorString(CUresult r, const char *what) const;
  llvm::Error check(CUresult r, const char *what) const;
};

/// Loads libcuda once (thread-safe) and calls cuInit. The error says why the
/// driver is unavailable (no libcuda, no device, ...).
llvm::Expected<const CudaDriver &> getCudaDriver();

/// Makes sure a context is current on this thread: keeps the caller's, or
/// retains and binds the primary context of `device` (0 by default).
llvm::Expected<CUcontext> ensureContext(int device = 0);

/// SM count of the current device (cached per device).
llvm::Expected<int> currentDeviceSMs();

/// An error (ErrorCode::NoDevice) naming the GPU and its compute capability
/// unless the current device can run sm_90a kernels.
llvm::Error checkCurrentDeviceRunsSm90a();

} // namespace blockscale

#endif
