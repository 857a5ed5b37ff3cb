//===- LaunchSupport.h - what the families' launches share ------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Private to lib/Runtime: tensor-map encoding and the per-thread cache of the
// last launch's maps, the programmatic-launch attribute, the runtime-owned
// split-K workspace, and size arithmetic that cannot wrap.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_LIB_RUNTIME_LAUNCHSUPPORT_H
#define BLOCKSCALE_LIB_RUNTIME_LAUNCHSUPPORT_H

#include "blockscale/Runtime/CompiledKernel.h"
#include "blockscale/Runtime/CudaDriver.h"
#include "blockscale/Runtime/KernelSpec.h"

#include "llvm/Support/Error.h"

#include <cuda.h>

#include <cstdint>
#include <cstring>

namespace blockscale::detail {

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline int64_t roundUp(int64_t a, int64_t b) { return ceilDiv(a, b) * b; }
inline bool aligned16(const void *p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

/// A 2-D tiled tensor map (dims inner x outer, row stride in bytes, box
/// boxInner x boxOuter); the error names the tensor and its geometry.
llvm::Error encodeTensorMap(const CudaDriver &d, CUtensorMap *map,
                            CUtensorMapDataType type, const void *ptr,
                            uint64_t inner, uint64_t outer,
                            uint64_t strideBytes, uint32_t boxInner,
                            uint32_t boxOuter, CUtensorMapSwizzle swizzle,
                            const char *what);

/// The same for a stack of `depth` such matrices, `depthStrideBytes` apart
/// (boxes of one matrix: boxInner x boxOuter x 1).
llvm::Error encodeTensorMap3d(const CudaDriver &d, CUtensorMap *map,
                              CUtensorMapDataType type, const void *ptr,
                              uint64_t inner, uint64_t outer, uint64_t depth,
                              uint64_t strideBytes, uint64_t depthStrideBytes,
                              uint32_t boxInner, uint32_t boxOuter,
                              CUtensorMapSwizzle swizzle, const char *what);

/// The output map of a GEMM kernel with bn-wide tiles: boxes of one swizzle
/// chunk of columns by 64 rows, as the epilogue stages them (mirrors
/// GemmConfig::kSwz / kChunkCols). `ldc` in elements.
llvm::Error encodeGemmOutputMap(const CudaDriver &d, CUtensorMap *map,
                                DType out, int bn, const void *c, uint64_t n,
                                uint64_t rows, uint64_t ldc);

/// The tensor maps of the last launch of one kernel on this thread, keyed
/// by the kernel, the context and the values that determine the maps
/// (pointers, sizes, strides): encoding the maps is most of the host cost of
/// a launch, and a loop launches the same kernel on the same buffers.
template <int Maps, int Keys> struct TensorMapCache {
  uint64_t kernel = 0; // CompiledKernel::uid; 0 while not valid
  CUcontext ctx = nullptr;
  int64_t key[Keys] = {};
  CUtensorMap maps[Maps];

  bool holds(uint64_t k, CUcontext c, const int64_t (&want)[Keys]) const {
    return kernel == k && ctx == c &&
           std::memcmp(key, want, sizeof(key)) == 0;
  }
  /// Call before encoding (the maps are invalid until remember).
  void forget() { kernel = 0; }
  void remember(uint64_t k, CUcontext c, const int64_t (&want)[Keys]) {
    kernel = k;
    ctx = c;
    std::memcpy(key, want, sizeof(key));
  }
};

inline int64_t keyOf(const void *p) {
  return static_cast<int64_t>(reinterpret_cast<uintptr_t>(p));
}

/// Appends the programmatic-launch attribute to cfg's attributes (storage
/// `attrs`, which already holds cfg.numAttrs entries) when it is on.
void addProgrammaticLaunch(CUlaunchConfig &cfg, CUlaunchAttribute *attrs);

/// A persistent GEMM launch over `units` work units (a unit is a cluster's
/// when the kernel runs in clusters): one CTA, or one cluster of
/// spec.clusterCtas(), per slot the GPU holds at once, capped by the units;
/// the block, shared memory and stream of `spec`, and the cluster and
/// programmatic-launch attributes, stored in `attrs`.
llvm::Error persistentLaunchConfig(CompiledKernel &kernel,
                                   const GemmKernelSpec &spec, int64_t units,
                                   CUstream stream, CUlaunchConfig &cfg,
                                   CUlaunchAttribute (&attrs)[2]);

/// Split-K scratch owned by the runtime, per (context, stream), zeroed once
/// when (re)allocated: its arrival counters start at zero and every launch
/// leaves them zero.
llvm::Expected<void *> runtimeWorkspace(const CudaDriver &d, size_t bytes,
                                        CUstream stream);

} // namespace blockscale::detail

#endif
