//===- Executor.cpp - running device plans with NCCL -------------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "blockscale/Distributed/Executor.h"
#include "blockscale/Runtime/CudaDriver.h"
#include "blockscale/Runtime/DynamicLibrary.h"
#include "blockscale/Runtime/Error.h"
#include "blockscale/Runtime/Runtime.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <nccl.h>

#include <cstring>
#include <map>
#include <mutex>

using namespace blockscale;
using namespace blockscale::dist;

static llvm::Error err(const llvm::Twine &m) {
  return makeError(ErrorCode::InvalidArgument, m);
}

//===----------------------------------------------------------------------===//
// NCCL (dlopen)
//===----------------------------------------------------------------------===//

namespace {
struct NcclApi {
#define BS_NCCL_FNS(X)                                                         \
  X(ncclGetUniqueId)                                                           \
  X(ncclCommInitRank)                                                          \
  X(ncclCommSplit)                                                             \
  X(ncclCommDestroy)                                                           \
  X(ncclAllReduce)                                                             \
  X(ncclAllGather)                                                             \
  X(ncclReduceScatter)                                                         \
  X(ncclGetErrorString)
#define BS_DECL(name) decltype(&::name) name = nullptr;
  BS_NCCL_FNS(BS_DECL)
#undef BS_DECL
};
} // namespace

static llvm::Expected<const NcclApi &> getNccl() {
  static std::once_flag once;
  static NcclApi api;
  static std::string error;
  std::call_once(once, [] {
    DynamicLibrary lib;
    if (!lib.open({"libnccl.so.2", "libnccl.so",
                   "/usr/local/cuda/lib64/libnccl.so.2"})) {
      error = "cannot load NCCL (libnccl.so.2): install it with the CUDA "
              "toolkit or put it on LD_LIBRARY_PATH";
      return;
    }
#define BS_LOAD(name) lib.load(api.name, #name);
    BS_NCCL_FNS(BS_LOAD)
#undef BS_LOAD
    if (!lib.missing().empty())
      error = "NCCL lacks " + lib.missing();
  });
  if (!error.empty())
    return makeError(ErrorCode::NoDevice, error);
  return api;
}

static llvm::Error ncclCheck(const NcclApi &n, ncclResult_t r,
                             const char *what) {
  if (r == ncclSuccess)
    return llvm::Error::success();
  return makeError(ErrorCode::Cuda,
                   std::string(what) + " failed: " + n.ncclGetErrorString(r));
}

static llvm::Expected<ncclDataType_t> ncclType(ElemType t, bool reduce) {
  switch (t) {
  case ElemType::BF16:
    return ncclBfloat16;
  case ElemType::F16:
    return ncclFloat16;
  case ElemType::F32:
    return ncclFloat32;
  case ElemType::F8E4M3:
  case ElemType::F8E5M2:
    if (reduce)
      return err("reducing FP8 tensors across devices is not supported");
    return ncclUint8;
  }
  return err("unknown element type");
}

//===----------------------------------------------------------------------===//
// Executor
//===----------------------------------------------------------------------===//

struct Executor::Impl {
  std::vector<int64_t> grid;
  int64_t rank = 0;
  ncclComm_t world = nullptr;
  std::map<std::vector<int>, ncclComm_t> groups; // axes -> communicator
  std::map<int, std::pair<CUdeviceptr, size_t>> buffers;
  bool local = false;        // collectives are the caller's
  std::vector<void *> bound; // tensor id -> device pointer
  // Kernels by generated source, compiled (or found in the caches) once.
  std::map<std::string, std::shared_ptr<CompiledKernel>> kernels;

  llvm::Expected<CompiledKernel *> kernel(const Step &st) {
    if (st.kernelSource.empty())
      return err("a kernel step of the plan has no source; build plans with "
                 "buildDevicePlan");
    auto &k = kernels[st.kernelSource];
    if (!k) {
      auto c = KernelRegistry::global().getOrCompile(st.kernelSource);
      if (!c) {
        kernels.erase(st.kernelSource);
        return c.takeError();
      }
      k = *c;
    }
    return k.get();
  }

  ~Impl() {
    if (auto n = getNccl()) {
      for (auto &[axes, c] : groups)
        if (c && c != world)
          n->ncclCommDestroy(c);
      if (world)
        n->ncclCommDestroy(world);
    } else {
      llvm::consumeError(n.takeError());
    }
    if (auto d = getCudaDriver()) {
      for (auto &[i, b] : buffers)
        d->cuMemFree_v2(b.first);
    } else {
      llvm::consumeError(d.takeError());
    }
  }

  /// The communicator of the group of `axes` containing this rank; null when
  /// the group is this rank alone.
  llvm::Expected<ncclComm_t> comm(const std::vector<int> &axes) {
    std::vector<int64_t> members = groupRanks(grid, axes, rank);
    if (members.size() <= 1)
      return ncclComm_t(nullptr);
    auto it = groups.find(axes);
    if (it != groups.end())
      return it->second;
    auto n = getNccl();
    if (!n)
      return n.takeError();
    // Color: the coordinates outside `axes`; key: the position in the group.
    std::vector<int64_t> idx = gridIndex(grid, rank);
    int64_t color = 0, key = 0;
    for (size_t i = 0; i < grid.size(); ++i) {
      bool in = llvm::is_contained(axes, int(i));
      if (in)
        key = key * grid[i] + idx[i];
      else
        color = color * grid[i] + idx[i];
    }
    ncclComm_t c = nullptr;
    if (members.size() == size_t(gridSize(grid))) {
      c = world;
    } else if (auto e = ncclCheck(*n,
                                  n->ncclCommSplit(world, int(color), int(key),
                                                   &c, nullptr),
                                  "ncclCommSplit")) {
      return std::move(e);
    }
    groups[axes] = c;
    return c;
  }

  llvm::Expected<CUdeviceptr> buffer(const CudaDriver &d, int id,
                                     size_t bytes) {
    auto &b = buffers[id];
    if (b.second < bytes) {
      if (b.first)
        d.cuMemFree_v2(b.first);
      b = {0, 0};
      if (auto e = d.check(d.cuMemAlloc_v2(&b.first, std::max<size_t>(bytes, 16)),
                           "cuMemAlloc"))
        return std::move(e);
      b.second = bytes;
    }
    return b.first;
  }
};

llvm::Expected<std::vector<char>> Executor::newUniqueId() {
  auto n = getNccl();
  if (!n)
    return n.takeError();
  ncclUniqueId id;
  if (auto e = ncclCheck(*n, n->ncclGetUniqueId(&id), "ncclGetUniqueId"))
    return std::move(e);
  return std::vector<char>(id.internal, id.internal + sizeof(id.internal));
}

llvm::Expected<std::unique_ptr<Executor>>
Executor::create(llvm::ArrayRef<int64_t> gridShape, int64_t rank,
                 const std::vector<char> &uniqueId) {
  auto exOr = createLocal(gridShape, rank);
  if (!exOr)
    return exOr.takeError();
  std::unique_ptr<Executor> ex = std::move(*exOr);
  ex->impl->local = false;
  int64_t world = gridSize(gridShape);
  if (world > 1) {
    auto n = getNccl();
    if (!n)
      return n.takeError();
    if (uniqueId.size() != sizeof(ncclUniqueId::internal))
      return err("expected a 128-byte ncclUniqueId from rank 0");
    ncclUniqueId id;
    std::memcpy(id.internal, uniqueId.data(), sizeof(id.internal));
    if (auto e = ncclCheck(*n,
                           n->ncclCommInitRank(&ex->impl->world, int(world),
                                               id, int(rank)),
                           "ncclCommInitRank"))
      return std::move(e);
  }
  return ex;
}

Executor::~Executor() = default;

llvm::Expected<std::unique_ptr<Executor>>
Executor::createLocal(llvm::ArrayRef<int64_t> gridShape, int64_t rank) {
  int64_t world = gridSize(gridShape);
  if (rank < 0 || rank >= world)
    return err(llvm::formatv("rank {0} is outside the grid of {1} devices",
                             rank, world));
  std::unique_ptr<Executor> ex(new Executor());
  ex->impl = std::make_unique<Impl>();
  ex->impl->grid.assign(gridShape.begin(), gridShape.end());
  ex->impl->rank = rank;
  ex->impl->local = true;
  return ex;
}

void *Executor::tensor(int id) const {
  return id >= 0 && size_t(id) < impl->bound.size() ? impl->bound[id]
                                                      : nullptr;
}

llvm::Error Executor::bind(const DevicePlan &plan,
                           llvm::ArrayRef<void *> args) {
  auto dOr = getCudaDriver();
  if (!dOr)
    return dOr.takeError();
  if (args.size() != plan.args.size())
    return err(llvm::formatv("the plan takes {0} arguments but got {1}",
                             plan.args.size(), args.size()));
  std::vector<void *> &ptr = impl->bound;
  ptr.assign(plan.tensors.size(), nullptr);
  for (auto [i, a] : llvm::enumerate(plan.args))
    ptr[a] = args[i];
  for (auto [i, t] : llvm::enumerate(plan.tensors)) {
    if (ptr[i])
      continue;
    auto b = impl->buffer(*dOr, int(i),
                          t.bytes());
    if (!b)
      return b.takeError();
    ptr[i] = reinterpret_cast<void *>(*b);
  }
  return llvm::Error::success();
}

llvm::Expected<std::vector<void *>>
Executor::run(const DevicePlan &plan, llvm::ArrayRef<void *> args,
              CUstream stream) {
  if (auto e = bind(plan, args))
    return std::move(e);
  for (size_t i = 0; i < plan.steps.size(); ++i)
    if (auto e = runStep(plan, i, stream))
      return std::move(e);
  std::vector<void *> results;
  for (int r : plan.results)
    results.push_back(impl->bound[r]);
  return results;
}

llvm::Error Executor::runStep(const DevicePlan &plan, size_t step,
                              CUstream stream) {
  auto dOr = getCudaDriver();
  if (!dOr)
    return dOr.takeError();
  const CudaDriver &d = *dOr;
  if (impl->bound.size() != plan.tensors.size())
    return err("runStep before bind");
  if (step >= plan.steps.size())
    return err(llvm::formatv("step {0} of a plan of {1}", step,
                             plan.steps.size()));
  const std::vector<void *> &ptr = impl->bound;
  const Step &st = plan.steps[step];
  auto T = [&](int i) -> const TensorInfo & { return plan.tensors[i]; };
  // The leading dimension of a 2-D tensor: its larger stride.
  auto ld = [&](int i) {
    return std::max(T(i).strides[0],
                    T(i).strides.size() > 1 ? T(i).strides[1] : 1);
  };
  if (st.isCollective() && impl->local &&
      groupRanks(impl->grid, st.gridAxes, impl->rank).size() > 1)
    return err("a local executor leaves collectives to its caller");
  switch (st.kind) {
  case Step::Kind::Quantize: {
    auto k = impl->kernel(st);
    if (!k)
      return k.takeError();
    QuantArgs a;
    a.x = ptr[st.inputs[0]];
    a.q = ptr[st.outputs[0]];
    a.s = static_cast<float *>(ptr[st.outputs[1]]);
    a.rows = st.quant.rows;
    a.ldx = T(st.inputs[0]).strides[0];
    a.ldq = ld(st.outputs[0]);
    a.ldScale = ld(st.outputs[1]);
    if (auto e = QuantFamily::launch(**k, {}, st.quant, a, stream))
      return std::move(e);
    return llvm::Error::success();
  }
  case Step::Kind::Gemm: {
    auto k = impl->kernel(st);
    if (!k)
      return k.takeError();
    GemmArgs a;
    a.a = ptr[st.inputs[0]];
    a.sa = static_cast<const float *>(ptr[st.inputs[1]]);
    a.b = ptr[st.inputs[2]];
    a.sb = static_cast<const float *>(ptr[st.inputs[3]]);
    a.c = ptr[st.outputs[0]];
    a.m = st.gemm.m;
    a.lda = T(st.inputs[0]).strides[0];
    a.ldsa = T(st.inputs[1]).strides[1];
    a.ldb = T(st.inputs[2]).strides[1];
    if (st.gemm.form == GemmForm::Wgrad) {
      a.ldsb = T(st.inputs[3]).strides[0];
    } else {
      a.sbStrideK = T(st.inputs[3]).strides[0];
      a.sbStrideN = T(st.inputs[3]).strides[1];
    }
    a.ldc = T(st.outputs[0]).strides[0];
    if (st.gemm.accumulate) { // C = acc, then C += A @ B
      const TensorInfo &acc = T(st.inputs[4]);
      if (auto e = d.check(
              d.cuMemcpyDtoDAsync_v2(
                  reinterpret_cast<CUdeviceptr>(ptr[st.outputs[0]]),
                  reinterpret_cast<CUdeviceptr>(ptr[st.inputs[4]]),
                  acc.bytes(), stream),
              "cuMemcpyDtoDAsync"))
        return std::move(e);
    }
    if (auto e = GemmFamily::launch(**k, st.launch, st.gemm, a, stream))
      return std::move(e);
    return llvm::Error::success();
  }
  case Step::Kind::AllReduce:
  case Step::Kind::AllGather:
  case Step::Kind::ReduceScatter: {
    const TensorInfo &in = T(st.inputs[0]), &out = T(st.outputs[0]);
    auto c = impl->comm(st.gridAxes);
    if (!c)
      return c.takeError();
    size_t inBytes = in.bytes();
    if (!*c) { // a group of one: the data is already complete
      if (auto e = d.check(
              d.cuMemcpyDtoDAsync_v2(reinterpret_cast<CUdeviceptr>(ptr[st.outputs[0]]),
                                     reinterpret_cast<CUdeviceptr>(ptr[st.inputs[0]]),
                                     std::min(inBytes, out.bytes()),
                                     stream),
              "cuMemcpyDtoDAsync"))
        return std::move(e);
      return llvm::Error::success();
    }
    auto n = getNccl();
    if (!n)
      return n.takeError();
    bool reduce = st.kind != Step::Kind::AllGather;
    auto type = ncclType(in.type, reduce);
    if (!type)
      return type.takeError();
    cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
    ncclResult_t r;
    if (st.kind == Step::Kind::AllReduce)
      r = n->ncclAllReduce(ptr[st.inputs[0]], ptr[st.outputs[0]],
                           size_t(in.allocElements), *type, ncclSum, *c, s);
    else if (st.kind == Step::Kind::AllGather)
      r = n->ncclAllGather(ptr[st.inputs[0]], ptr[st.outputs[0]],
                           size_t(in.allocElements), *type, *c, s);
    else
      r = n->ncclReduceScatter(ptr[st.inputs[0]], ptr[st.outputs[0]],
                               size_t(out.allocElements), *type, ncclSum, *c,
                               s);
    if (auto e = ncclCheck(*n, r, "NCCL collective"))
      return std::move(e);
    return llvm::Error::success();
  }
  }
  return llvm::Error::success();
}
