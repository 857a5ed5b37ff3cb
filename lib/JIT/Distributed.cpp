//===- Distributed.cpp - per-device plans and their NCCL execution -*- C++ -*-===//

#include "blockscale/JIT/Distributed.h"
#include "blockscale/JIT/Jit.h"
#include "blockscale/Runtime/CudaDriver.h"
#include "blockscale/Runtime/DynamicLibrary.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <nccl.h>

#include <cstring>
#include <mutex>

using namespace blockscale;
using namespace blockscale::dist;

static llvm::Error err(const std::string &m) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), m.c_str());
}

int dist::elemBytes(ElemType t) {
  switch (t) {
  case ElemType::F8E4M3:
  case ElemType::F8E5M2:
    return 1;
  case ElemType::BF16:
  case ElemType::F16:
    return 2;
  case ElemType::F32:
    return 4;
  }
  return 0;
}

llvm::StringRef dist::toString(ElemType t) {
  switch (t) {
  case ElemType::F8E4M3:
    return "f8E4M3FN";
  case ElemType::F8E5M2:
    return "f8E5M2";
  case ElemType::BF16:
    return "bf16";
  case ElemType::F16:
    return "f16";
  case ElemType::F32:
    return "f32";
  }
  return "?";
}

int TensorInfo::outerDim() const {
  if (shape.size() < 2)
    return 0;
  return strides[0] >= strides[1] ? 0 : 1;
}

int64_t dist::gridSize(llvm::ArrayRef<int64_t> g) {
  int64_t n = 1;
  for (int64_t d : g)
    n *= d;
  return n;
}

std::vector<int64_t> dist::gridIndex(llvm::ArrayRef<int64_t> g, int64_t rank) {
  std::vector<int64_t> idx(g.size());
  for (int i = int(g.size()) - 1; i >= 0; --i) {
    idx[i] = rank % g[i];
    rank /= g[i];
  }
  return idx;
}

static int64_t linearize(llvm::ArrayRef<int64_t> g,
                         llvm::ArrayRef<int64_t> idx) {
  int64_t r = 0;
  for (size_t i = 0; i < g.size(); ++i)
    r = r * g[i] + idx[i];
  return r;
}

std::vector<int64_t> dist::groupRanks(llvm::ArrayRef<int64_t> g,
                                      llvm::ArrayRef<int> axes, int64_t rank) {
  std::vector<int64_t> base = gridIndex(g, rank);
  std::vector<int64_t> sizes;
  for (int a : axes)
    sizes.push_back(g[a]);
  std::vector<int64_t> out;
  int64_t n = gridSize(sizes);
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> sub = gridIndex(sizes, i), idx = base;
    for (size_t j = 0; j < axes.size(); ++j)
      idx[axes[j]] = sub[j];
    out.push_back(linearize(g, idx));
  }
  return out;
}

std::vector<int64_t>
dist::shardOffsets(llvm::ArrayRef<int64_t> g,
                   const std::vector<std::vector<int>> &splits,
                   llvm::ArrayRef<int64_t> globalShape, int64_t rank) {
  std::vector<int64_t> idx = gridIndex(g, rank), off(globalShape.size(), 0);
  for (size_t d = 0; d < globalShape.size() && d < splits.size(); ++d) {
    int64_t shard = 0, count = 1;
    for (int a : splits[d]) {
      shard = shard * g[a] + idx[a];
      count *= g[a];
    }
    off[d] = shard * (globalShape[d] / count);
  }
  return off;
}

static std::string shapeStr(const std::vector<int64_t> &v) {
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleave(v, os, "x");
  return s;
}

std::string DevicePlan::str() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "grid " << shapeStr(gridShape) << "\n";
  for (auto [i, t] : llvm::enumerate(tensors))
    os << "  %" << i << " " << t.name << ": " << shapeStr(t.shape) << "x"
       << toString(t.type) << " strides [" << shapeStr(t.strides)
       << "] alloc " << t.allocElements << "\n";
  auto ids = [&](const std::vector<int> &v) {
    std::string r;
    for (int x : v)
      r += (r.empty() ? "%" : ", %") + std::to_string(x);
    return r;
  };
  os << "  args (" << ids(args) << ") results (" << ids(results) << ")\n";
  for (const Step &st : steps) {
    switch (st.kind) {
    case Step::Kind::Quantize:
      os << "  quantize " << st.quant.blockRows << "x" << st.quant.blockCols
         << (st.quant.transpose ? " transpose" : "")
         << (st.quant.colMajor ? " col_major" : "") << " rows " << st.quant.rows
         << " cols " << st.quant.cols;
      break;
    case Step::Kind::Gemm:
      os << "  gemm " << blockscale::toString(st.gemm.form) << " "
         << st.gemm.m << "x" << st.gemm.n << "x" << st.gemm.k << " "
         << blockscale::toString(st.gemm.out)
         << (st.gemm.accumulate ? " +=" : "");
      break;
    case Step::Kind::AllReduce:
      os << "  all_reduce axes [" << llvm::join(llvm::map_range(st.gridAxes, [](int a) { return std::to_string(a); }), ",") << "]";
      break;
    case Step::Kind::AllGather:
      os << "  all_gather axes [" << llvm::join(llvm::map_range(st.gridAxes, [](int a) { return std::to_string(a); }), ",") << "] axis " << st.axis;
      break;
    case Step::Kind::ReduceScatter:
      os << "  reduce_scatter axes [" << llvm::join(llvm::map_range(st.gridAxes, [](int a) { return std::to_string(a); }), ",") << "] axis " << st.axis;
      break;
    }
    os << " (" << ids(st.inputs) << ") -> (" << ids(st.outputs) << ")\n";
  }
  return s;
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
    return err(error);
  return api;
}

static llvm::Error ncclCheck(const NcclApi &n, ncclResult_t r,
                             const char *what) {
  if (r == ncclSuccess)
    return llvm::Error::success();
  return err(std::string(what) + " failed: " + n.ncclGetErrorString(r));
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
    auto k = getQuantKernel(st.quant);
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
    if (auto e = (**k)(a, stream))
      return std::move(e);
    return llvm::Error::success();
  }
  case Step::Kind::Gemm: {
    auto k = getGemmKernel(st.gemm);
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
    if (auto e = (**k)(a, stream))
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
