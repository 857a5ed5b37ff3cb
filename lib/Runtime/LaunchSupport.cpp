//===- LaunchSupport.cpp - what the families' launches share ----*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "LaunchSupport.h"
#include "blockscale/Runtime/Error.h"
#include "blockscale/Runtime/Runtime.h"

#include "llvm/Support/FormatVariadic.h"

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>

using namespace blockscale;
using namespace blockscale::detail;

llvm::Error detail::encodeTensorMap(const CudaDriver &d, CUtensorMap *map,
                                    CUtensorMapDataType type, const void *ptr,
                                    uint64_t inner, uint64_t outer,
                                    uint64_t strideBytes, uint32_t boxInner,
                                    uint32_t boxOuter,
                                    CUtensorMapSwizzle swizzle,
                                    const char *what) {
  cuuint64_t dims[2] = {inner, outer};
  cuuint64_t strides[1] = {strideBytes};
  cuuint32_t box[2] = {boxInner, boxOuter};
  cuuint32_t estr[2] = {1, 1};
  CUresult r = d.cuTensorMapEncodeTiled(
      map, type, 2, const_cast<void *>(ptr), dims, strides, box, estr,
      CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    return makeError(
        ErrorCode::Cuda,
        d.errorString(r, "cuTensorMapEncodeTiled") +
            llvm::formatv(" for {0} (dims {1}x{2}, row stride {3} bytes, "
                          "box {4}x{5}, address {6})",
                          what, outer, inner, strideBytes, boxOuter, boxInner,
                          ptr)
                .str());
  return llvm::Error::success();
}

llvm::Error detail::encodeTensorMap3d(
    const CudaDriver &d, CUtensorMap *map, CUtensorMapDataType type,
    const void *ptr, uint64_t inner, uint64_t outer, uint64_t depth,
    uint64_t strideBytes, uint64_t depthStrideBytes, uint32_t boxInner,
    uint32_t boxOuter, CUtensorMapSwizzle swizzle, const char *what) {
  cuuint64_t dims[3] = {inner, outer, depth};
  cuuint64_t strides[2] = {strideBytes, depthStrideBytes};
  cuuint32_t box[3] = {boxInner, boxOuter, 1};
  cuuint32_t estr[3] = {1, 1, 1};
  CUresult r = d.cuTensorMapEncodeTiled(
      map, type, 3, const_cast<void *>(ptr), dims, strides, box, estr,
      CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    return makeError(
        ErrorCode::Cuda,
        d.errorString(r, "cuTensorMapEncodeTiled") +
            llvm::formatv(" for {0} (dims {1}x{2}x{3}, strides {4} and {5} "
                          "bytes, box {6}x{7}x1, address {8})",
                          what, depth, outer, inner, depthStrideBytes,
                          strideBytes, boxOuter, boxInner, ptr)
                .str());
  return llvm::Error::success();
}

llvm::Error detail::encodeGemmOutputMap(const CudaDriver &d, CUtensorMap *map,
                                        DType out, int bn, const void *c,
                                        uint64_t n, uint64_t rows,
                                        uint64_t ldc) {
  const int ob = dtypeBytes(out);
  const int rowBytes = bn * ob;
  const int swzBytes =
      rowBytes % 128 == 0 ? 128 : (rowBytes % 64 == 0 ? 64 : 32);
  const CUtensorMapSwizzle swz =
      swzBytes == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
                      : (swzBytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                        : CU_TENSOR_MAP_SWIZZLE_32B);
  return encodeTensorMap(d, map,
                         out == DType::F32 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                                           : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
                         c, n, rows, ldc * ob, swzBytes / ob, 64, swz, "C");
}

/// BLOCKSCALE_PDL: unset or empty gives the default, "0" off, else on.
static std::atomic<int> &programmaticLaunchFlag() {
  static std::atomic<int> flag([] {
    const char *e = std::getenv("BLOCKSCALE_PDL");
    return !e || !*e || std::strcmp(e, "0") != 0;
  }());
  return flag;
}

bool blockscale::programmaticLaunch() {
  return programmaticLaunchFlag().load(std::memory_order_relaxed) != 0;
}

void blockscale::setProgrammaticLaunch(bool on) {
  programmaticLaunchFlag().store(on ? 1 : 0, std::memory_order_relaxed);
}

void detail::addProgrammaticLaunch(CUlaunchConfig &cfg,
                                   CUlaunchAttribute *attrs) {
  if (!programmaticLaunch())
    return;
  CUlaunchAttribute &a = attrs[cfg.numAttrs++];
  std::memset(&a, 0, sizeof(a));
  a.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  a.value.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attrs;
}

llvm::Error detail::persistentLaunchConfig(CompiledKernel &kernel,
                                           const GemmKernelSpec &spec,
                                           int64_t units, CUstream stream,
                                           CUlaunchConfig &cfg,
                                           CUlaunchAttribute (&attrs)[2]) {
  auto sms = currentDeviceSMs();
  if (!sms)
    return sms.takeError();
  std::memset(&cfg, 0, sizeof(cfg));
  std::memset(attrs, 0, sizeof(attrs));
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = spec.threads();
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.sharedMemBytes = spec.smemBytes();
  cfg.hStream = stream;
  int64_t slots = *sms; // persistent CTAs (or clusters) resident at once
  if (spec.clusterCtas() > 1) {
    attrs[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attrs[0].value.clusterDim.x = spec.clusterCtas();
    attrs[0].value.clusterDim.y = attrs[0].value.clusterDim.z = 1;
    cfg.attrs = attrs;
    cfg.numAttrs = 1;
    auto maxClusters = kernel.maxActiveClusters(cfg);
    if (!maxClusters)
      return maxClusters.takeError();
    slots = *maxClusters;
  }
  cfg.gridDimX =
      unsigned(std::max<int64_t>(1, std::min<int64_t>(units, slots)) *
               spec.clusterCtas());
  addProgrammaticLaunch(cfg, attrs);
  return llvm::Error::success();
}

llvm::Expected<void *> detail::runtimeWorkspace(const CudaDriver &d,
                                                size_t bytes, CUstream stream) {
  struct Workspace {
    CUdeviceptr ptr = 0;
    size_t bytes = 0;
  };
  static std::mutex mu;
  static std::map<std::pair<CUcontext, CUstream>, Workspace> pool;
  CUcontext ctx;
  if (auto e = d.check(d.cuCtxGetCurrent(&ctx), "cuCtxGetCurrent"))
    return std::move(e);
  std::lock_guard<std::mutex> lock(mu);
  Workspace &w = pool[{ctx, stream}];
  if (w.bytes < bytes) {
    if (w.ptr) {
      d.cuStreamSynchronize(stream);
      d.cuMemFree_v2(w.ptr);
      w = Workspace();
    }
    size_t want = (bytes + (1u << 20) - 1) / (1u << 20) * (1u << 20);
    if (auto e = d.check(d.cuMemAlloc_v2(&w.ptr, want),
                         "cuMemAlloc (split-K workspace)"))
      return std::move(e);
    // Zero everything once: counters anywhere in it start at zero.
    if (auto e = d.check(d.cuMemsetD8Async(w.ptr, 0, want, stream),
                         "cuMemsetD8Async"))
      return std::move(e);
    w.bytes = want;
  }
  return reinterpret_cast<void *>(w.ptr);
}
