//===- blockscale-run-sharded.cpp - run a sharded program on GPUs -*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//   blockscale-run-sharded ffn.mlir --plan-only --rank 3
//       partition the sharded program and print the device program, the plan
//       and the process group of every collective for rank 3 (no GPU needed)
//   blockscale-run-sharded ffn.mlir --check
//       one process per device of the grid (one GPU each, NCCL between
//       them); every rank gets its shard of the same random global inputs;
//       the assembled outputs are compared with the unsharded program run on
//       one GPU
//
//===----------------------------------------------------------------------===//

#include "blockscale/Distributed/Executor.h"
#include "blockscale/JIT/Plan.h"
#include "blockscale/Runtime/CudaDriver.h"
#include "support/Reference.h"
#include "blockscale/Runtime/Runtime.h"
#include "blockscale/VersionPrinter.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace blockscale;
using namespace blockscale::dist;
namespace cl = llvm::cl;

static cl::opt<std::string> input(cl::Positional, cl::Required,
                                  cl::desc("<sharded program.mlir>"));
static cl::opt<std::string> funcName("func", cl::init(""),
                                     cl::desc("function to run"));
static cl::opt<bool> planOnly("plan-only", cl::init(false),
                              cl::desc("print the device program and plan"));
static cl::opt<int> planRank("rank", cl::init(0),
                             cl::desc("rank whose groups --plan-only prints"));
static cl::opt<bool> check("check", cl::init(false),
                           cl::desc("compare with the unsharded program on "
                                    "one GPU"));
static cl::opt<bool> allowPadding("allow-padding", cl::init(false),
                                  cl::desc("pad shards to whole scale blocks"));
static cl::opt<uint64_t> seed("seed", cl::init(1), cl::desc("input seed"));
static cl::opt<bool> simulate(
    "simulate", cl::init(false),
    cl::desc("run every rank in this process on GPU 0, in lockstep, with the "
             "collectives done on the host (no NCCL): checks partitioning, "
             "plans and local kernels on a machine with one GPU"));

static int fail(const llvm::Twine &m) {
  std::string text = m.str();
  llvm::errs() << "blockscale-run-sharded: error: " << text << "\n";
  // The pipeline's fix names its pass option; this tool spells it as a flag.
  if (llvm::StringRef(text).contains("allow-padding=1"))
    llvm::errs() << "blockscale-run-sharded: note: here that option is "
                    "--allow-padding\n";
  return 1;
}

static Fp8Type fp8Of(ElemType t) {
  return t == ElemType::F8E4M3 ? Fp8Type::E4M3 : Fp8Type::E5M2;
}

/// Values of an argument in its logical shape, deterministic in (seed, arg).
static std::vector<float> globalArg(const TensorInfo &t, int arg,
                                    bool isScale) {
  std::mt19937_64 rng(seed * 1000003 + arg);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::uniform_int_distribution<int> mag(-4, 0);
  int64_t n = 1;
  for (int64_t d : t.shape)
    n *= d;
  std::vector<float> v(n);
  for (float &x : v) {
    if (isScale)
      x = std::ldexp(1.f, mag(rng));
    else if (t.type == ElemType::F8E4M3 || t.type == ElemType::F8E5M2)
      x = ref::decodeFp8(ref::encodeFp8(normal(rng) * 64.f, fp8Of(t.type)),
                         fp8Of(t.type));
    else
      x = ref::bf16ToFloat(ref::floatToBf16(normal(rng)));
  }
  return v;
}

/// Packs logical values into the tensor's physical bytes.
static std::vector<uint8_t> pack(const TensorInfo &t,
                                 const std::vector<float> &v,
                                 const std::vector<int64_t> &logicalShape) {
  int eb = elemBytes(t.type);
  std::vector<uint8_t> out(size_t(t.allocElements) * eb, 0);
  for (int64_t r = 0; r < logicalShape[0]; ++r)
    for (int64_t c = 0; c < logicalShape[1]; ++c) {
      float x = v[r * logicalShape[1] + c];
      size_t off = size_t(r * t.strides[0] + c * t.strides[1]);
      switch (t.type) {
      case ElemType::F8E4M3:
      case ElemType::F8E5M2:
        out[off] = ref::encodeFp8(x, fp8Of(t.type));
        break;
      case ElemType::BF16: {
        uint16_t h = ref::floatToBf16(x);
        std::memcpy(&out[off * 2], &h, 2);
        break;
      }
      case ElemType::F16:
        llvm_unreachable("f16 programs are rejected in main");
      case ElemType::F32:
        std::memcpy(&out[off * 4], &x, 4);
        break;
      }
    }
  return out;
}

static std::vector<float> unpack(const TensorInfo &t,
                                 const std::vector<uint8_t> &bytes) {
  std::vector<float> v(size_t(t.shape[0] * t.shape[1]));
  for (int64_t r = 0; r < t.shape[0]; ++r)
    for (int64_t c = 0; c < t.shape[1]; ++c) {
      size_t off = size_t(r * t.strides[0] + c * t.strides[1]);
      float x = 0;
      if (t.type == ElemType::F8E4M3 || t.type == ElemType::F8E5M2)
        x = ref::decodeFp8(bytes[off], fp8Of(t.type));
      else if (t.type == ElemType::F32)
        std::memcpy(&x, &bytes[off * 4], 4);
      else if (t.type == ElemType::BF16) {
        uint16_t h;
        std::memcpy(&h, &bytes[off * 2], 2);
        x = ref::bf16ToFloat(h);
      }
      v[r * t.shape[1] + c] = x;
    }
  return v;
}

/// This rank's block of a logical 2-D array split as `splits` says.
static std::vector<float> slice(const std::vector<float> &g,
                                const std::vector<int64_t> &gshape,
                                const std::vector<int64_t> &lshape,
                                const std::vector<std::vector<int>> &splits,
                                const std::vector<int64_t> &grid,
                                int64_t rank) {
  std::vector<int64_t> off = shardOffsets(grid, splits, gshape, rank);
  std::vector<float> l(size_t(lshape[0] * lshape[1]));
  for (int64_t r = 0; r < lshape[0]; ++r)
    for (int64_t c = 0; c < lshape[1]; ++c)
      l[r * lshape[1] + c] = g[(r + off[0]) * gshape[1] + c + off[1]];
  return l;
}

/// The plan of a single-device program computed on the host: casts with
/// the runtime's host cast (bit-exact with the kernel), GEMMs in double from
/// the logical operands and their block scales, outputs rounded to their
/// type. The check's independent reference.
static llvm::Expected<std::vector<std::vector<float>>>
hostReference(const DevicePlan &plan,
              const std::vector<std::vector<float>> &args) {
  std::vector<std::vector<float>> val(plan.tensors.size());
  for (size_t i = 0; i < plan.args.size(); ++i)
    val[plan.args[i]] = args[i];
  auto T = [&](int i) -> const TensorInfo & { return plan.tensors[i]; };
  for (const Step &st : plan.steps) {
    if (st.kind == Step::Kind::Quantize) {
      const TensorInfo &qi = T(st.outputs[0]), &si = T(st.outputs[1]);
      std::vector<uint8_t> q(size_t(qi.allocElements));
      std::vector<float> sc(size_t(si.allocElements));
      int64_t ldq = std::max(qi.strides[0], qi.strides[1]);
      int64_t lds = std::max(si.strides[0], si.strides[1]);
      ref::quantize(st.quant, val[st.inputs[0]].data(), st.quant.rows,
                    st.quant.cols, q.data(), ldq, sc.data(),
                    llvm::cantFail(quantScaleGeometry(st.quant, st.quant.rows, lds)));
      val[st.outputs[0]] = unpack(qi, q);
      std::vector<uint8_t> sb(sc.size() * 4);
      std::memcpy(sb.data(), sc.data(), sb.size());
      val[st.outputs[1]] = unpack(si, sb);
    } else if (st.kind == Step::Kind::Gemm) {
      const std::vector<float> &a = val[st.inputs[0]], &sa = val[st.inputs[1]],
                               &b = val[st.inputs[2]], &sb = val[st.inputs[3]];
      int64_t m = T(st.inputs[0]).shape[0], k = T(st.inputs[0]).shape[1];
      int64_t n = T(st.inputs[2]).shape[1];
      int64_t kbA = T(st.inputs[1]).shape[1];
      int64_t kbB = T(st.inputs[3]).shape[0], nbB = T(st.inputs[3]).shape[1];
      // B's scale columns: one per 128 columns (128x128) or per column (128x1).
      int64_t nPerScale = (n + nbB - 1) / nbB;
      const TensorInfo &ci = T(st.outputs[0]);
      std::vector<float> c(size_t(m * n));
      std::vector<double> row(n);
      for (int64_t i = 0; i < m; ++i) {
        std::fill(row.begin(), row.end(), 0.0);
        for (int64_t kk = 0; kk < k; ++kk) {
          double av = double(a[i * k + kk]) * sa[i * kbA + kk / 128];
          if (av == 0)
            continue;
          const float *brow = &b[kk * n];
          const float *srow = &sb[(kk / 128) * nbB];
          for (int64_t j = 0; j < n; ++j)
            row[j] += av * brow[j] * srow[j / nPerScale];
        }
        for (int64_t j = 0; j < n; ++j) {
          double v = row[j];
          if (st.gemm.accumulate)
            v += val[st.inputs[4]][i * n + j];
          c[i * n + j] = ci.type == ElemType::BF16
                             ? ref::bf16ToFloat(ref::floatToBf16(float(v)))
                             : float(v);
        }
      }
      (void)kbB;
      val[st.outputs[0]] = std::move(c);
    } else {
      return llvm::createStringError(
          "the host reference runs single-device plans only");
    }
  }
  std::vector<std::vector<float>> out;
  for (int r : plan.results)
    out.push_back(val[r]);
  return out;
}

struct Inputs {
  std::vector<std::vector<float>> global;
  std::vector<std::vector<int64_t>> globalShape;
};

/// Rank `rank`'s block of every argument.
static std::vector<std::vector<float>>
localArgs(const DevicePlan &plan, const Inputs &in,
          const std::vector<std::vector<std::vector<int>>> &splits,
          int64_t rank) {
  std::vector<std::vector<float>> local;
  for (size_t i = 0; i < plan.args.size(); ++i)
    local.push_back(slice(in.global[i], in.globalShape[i],
                          plan.tensors[plan.args[i]].shape, splits[i],
                          plan.gridShape, rank));
  return local;
}

/// Device copies of the plan's arguments (logical values, packed in each
/// argument's layout); the allocations are appended to `bufs`.
static llvm::Expected<std::vector<void *>>
uploadArgs(const DevicePlan &plan, const std::vector<std::vector<float>> &args,
           std::vector<CUdeviceptr> &bufs) {
  const CudaDriver &d = *getCudaDriver();
  std::vector<void *> ptrs;
  for (size_t i = 0; i < plan.args.size(); ++i) {
    const TensorInfo &t = plan.tensors[plan.args[i]];
    std::vector<uint8_t> bytes = pack(t, args[i], t.shape);
    CUdeviceptr p;
    if (auto e = d.check(d.cuMemAlloc_v2(&p, std::max<size_t>(bytes.size(), 16)),
                         "cuMemAlloc"))
      return std::move(e);
    d.cuMemcpyHtoD_v2(p, bytes.data(), bytes.size());
    bufs.push_back(p);
    ptrs.push_back(reinterpret_cast<void *>(p));
  }
  return ptrs;
}

/// The logical values of the plan's results, read from `ptrs` (device).
static std::vector<std::vector<float>>
downloadResults(const DevicePlan &plan, llvm::ArrayRef<void *> ptrs) {
  const CudaDriver &d = *getCudaDriver();
  std::vector<std::vector<float>> out;
  for (size_t i = 0; i < plan.results.size(); ++i) {
    const TensorInfo &t = plan.tensors[plan.results[i]];
    std::vector<uint8_t> bytes(t.bytes());
    d.cuMemcpyDtoH_v2(bytes.data(), reinterpret_cast<CUdeviceptr>(ptrs[i]),
                      bytes.size());
    out.push_back(unpack(t, bytes));
  }
  return out;
}

static std::string resultPath(const std::string &dir, size_t result,
                              int64_t rank) {
  return llvm::formatv("{0}/result{1}.rank{2}", dir, result, rank).str();
}

/// Rank `rank`'s results, as floats, for the checking process.
static void writeResults(const std::string &dir, int64_t rank,
                         const std::vector<std::vector<float>> &results) {
  for (size_t i = 0; i < results.size(); ++i) {
    std::string p = resultPath(dir, i, rank);
    FILE *f = fopen(p.c_str(), "wb");
    fwrite(results[i].data(), sizeof(float), results[i].size(), f);
    fclose(f);
  }
}

/// Runs `plan` on the current GPU with `args` (logical values per argument);
/// returns the results as logical float arrays.
static llvm::Expected<std::vector<std::vector<float>>>
runPlan(const DevicePlan &plan, Executor &ex,
        const std::vector<std::vector<float>> &args) {
  const CudaDriver &d = *getCudaDriver();
  std::vector<CUdeviceptr> bufs;
  auto ptrs = uploadArgs(plan, args, bufs);
  if (!ptrs)
    return ptrs.takeError();
  auto res = ex.run(plan, *ptrs, nullptr);
  if (!res)
    return res.takeError();
  if (auto e = d.check(d.cuCtxSynchronize(), "execution"))
    return std::move(e);
  std::vector<std::vector<float>> out = downloadResults(plan, *res);
  for (CUdeviceptr p : bufs)
    d.cuMemFree_v2(p);
  return out;
}

static bool isScaleArg(const DevicePlan &plan, int argIdx) {
  int t = plan.args[argIdx];
  for (const Step &s : plan.steps)
    if (s.kind == Step::Kind::Gemm && s.inputs.size() >= 4 &&
        (s.inputs[1] == t || s.inputs[3] == t))
      return true;
  return false;
}

/// Element-wise sum of the members' raw buffers of a reducing collective.
static llvm::Expected<std::vector<uint8_t>>
sumBuffers(ElemType t, const std::vector<std::vector<uint8_t>> &parts) {
  if (t != ElemType::F32 && t != ElemType::BF16)
    return llvm::createStringError("--simulate reduces bf16 and f32 only");
  size_t n = parts[0].size() / elemBytes(t);
  std::vector<uint8_t> out(parts[0].size());
  for (size_t i = 0; i < n; ++i) {
    float acc = 0;
    for (const auto &p : parts) {
      if (t == ElemType::F32) {
        float x;
        std::memcpy(&x, &p[i * 4], 4);
        acc += x;
      } else {
        uint16_t h;
        std::memcpy(&h, &p[i * 2], 2);
        acc += ref::bf16ToFloat(h);
      }
    }
    if (t == ElemType::F32) {
      std::memcpy(&out[i * 4], &acc, 4);
    } else {
      uint16_t h = ref::floatToBf16(acc);
      std::memcpy(&out[i * 2], &h, 2);
    }
  }
  return out;
}

/// Every rank of the grid in this process on the current GPU: compute steps
/// run rank by rank, collectives are done on the host with NCCL's semantics
/// (group order = groupRanks order, contiguous chunks).
static int simulateMain(const DevicePlan &plan, const Inputs &in,
                        const std::vector<std::vector<std::vector<int>>> &splits,
                        const std::string &dir) {
  const CudaDriver &d = *getCudaDriver();
  int64_t world = gridSize(plan.gridShape);
  std::vector<std::unique_ptr<Executor>> ex;
  std::vector<CUdeviceptr> argBufs;
  for (int64_t r = 0; r < world; ++r) {
    auto e = Executor::createLocal(plan.gridShape, r);
    if (!e)
      return fail(llvm::toString(e.takeError()));
    auto ptrs = uploadArgs(plan, localArgs(plan, in, splits, r), argBufs);
    if (!ptrs)
      return fail(llvm::toString(ptrs.takeError()));
    if (auto err = (*e)->bind(plan, *ptrs))
      return fail(llvm::toString(std::move(err)));
    ex.push_back(std::move(*e));
  }
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step &st = plan.steps[i];
    if (!st.isCollective()) {
      for (int64_t r = 0; r < world; ++r)
        if (auto err = ex[r]->runStep(plan, i, nullptr))
          return fail("rank " + llvm::Twine(r) + ": " +
                      llvm::toString(std::move(err)));
      continue;
    }
    if (auto err = d.check(d.cuCtxSynchronize(), "execution"))
      return fail(llvm::toString(std::move(err)));
    const TensorInfo &ti = plan.tensors[st.inputs[0]];
    const TensorInfo &to = plan.tensors[st.outputs[0]];
    for (int64_t r = 0; r < world; ++r) {
      std::vector<int64_t> group = groupRanks(plan.gridShape, st.gridAxes, r);
      if (group[0] != r)
        continue; // done with the group's first member
      std::vector<std::vector<uint8_t>> parts;
      for (int64_t m : group) {
        parts.emplace_back(ti.bytes());
        d.cuMemcpyDtoH_v2(parts.back().data(),
                          reinterpret_cast<CUdeviceptr>(ex[m]->tensor(st.inputs[0])),
                          parts.back().size());
      }
      std::vector<uint8_t> all;
      if (st.kind == Step::Kind::AllGather) {
        for (auto &p : parts)
          all.insert(all.end(), p.begin(), p.end());
      } else {
        auto sum = sumBuffers(ti.type, parts);
        if (!sum)
          return fail(llvm::toString(sum.takeError()));
        all = std::move(*sum);
      }
      for (auto [k, m] : llvm::enumerate(group)) {
        size_t off = st.kind == Step::Kind::ReduceScatter ? k * to.bytes() : 0;
        if (off + to.bytes() > all.size())
          return fail("a collective's output is larger than its data");
        d.cuMemcpyHtoD_v2(reinterpret_cast<CUdeviceptr>(ex[m]->tensor(st.outputs[0])),
                          all.data() + off, to.bytes());
      }
    }
  }
  if (auto err = d.check(d.cuCtxSynchronize(), "execution"))
    return fail(llvm::toString(std::move(err)));
  for (int64_t r = 0; r < world; ++r) {
    std::vector<void *> res;
    for (int t : plan.results)
      res.push_back(ex[r]->tensor(t));
    writeResults(dir, r, downloadResults(plan, res));
  }
  for (CUdeviceptr p : argBufs)
    d.cuMemFree_v2(p);
  return 0;
}

static int rankMain(const DevicePlan &plan, const Inputs &in,
                    const std::vector<std::vector<std::vector<int>>> &splits,
                    int64_t rank, const std::string &dir) {
  int64_t world = gridSize(plan.gridShape);
  std::vector<char> id;
  std::string idPath = dir + "/nccl-id";
  if (world > 1) {
    if (rank == 0) {
      auto u = Executor::newUniqueId();
      if (!u)
        return fail(llvm::toString(u.takeError()));
      id = *u;
      std::string tmp = idPath + ".tmp";
      FILE *f = fopen(tmp.c_str(), "wb");
      fwrite(id.data(), 1, id.size(), f);
      fclose(f);
      rename(tmp.c_str(), idPath.c_str());
    } else {
      for (int i = 0; i < 6000 && !llvm::sys::fs::exists(idPath); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      auto buf = llvm::MemoryBuffer::getFile(idPath, false, false);
      if (!buf)
        return fail("rank " + llvm::Twine(rank) + " got no NCCL id from rank 0");
      id.assign((*buf)->getBufferStart(), (*buf)->getBufferEnd());
    }
  }
  if (auto ctx = ensureContext(int(rank)); !ctx)
    return fail(llvm::toString(ctx.takeError()));
  auto ex = Executor::create(plan.gridShape, rank, id);
  if (!ex)
    return fail(llvm::toString(ex.takeError()));
  auto res = runPlan(plan, **ex, localArgs(plan, in, splits, rank));
  if (!res)
    return fail("rank " + llvm::Twine(rank) + ": " + llvm::toString(res.takeError()));
  writeResults(dir, rank, *res);
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  blockscale::installVersionPrinter();
  cl::ParseCommandLineOptions(argc, argv, "run a sharded blockscale program\n");
  // A run starts every rank of the grid; --rank only picks the groups that
  // --plan-only prints, and ignoring it silently would look like a one-rank
  // run.
  if (planRank.getNumOccurrences() && !planOnly)
    return fail("--rank selects the rank whose collective groups --plan-only "
                "prints, but got it without --plan-only (a run starts every "
                "rank of the grid): add --plan-only or drop --rank");
  auto buf = llvm::MemoryBuffer::getFile(input);
  if (!buf)
    return fail("cannot read " + input);
  std::string text = (*buf)->getBuffer().str();
  auto local = partitionProgram(text, allowPadding, input);
  if (!local)
    return fail(llvm::toString(local.takeError()));
  auto plan = buildDevicePlan(*local, funcName);
  if (!plan)
    return fail(llvm::toString(plan.takeError()));
  int64_t world = gridSize(plan->gridShape);
  if (planRank < 0 || planRank >= world)
    return fail(llvm::formatv(
        "expected --rank in [0, {0}) (grid {1} has {0} devices) but got {2}",
        world,
        llvm::join(llvm::map_range(plan->gridShape,
                                   [](int64_t a) { return std::to_string(a); }),
                   "x"),
        int(planRank)));

  if (planOnly) {
    auto shown = printWithoutLocations(*local);
    if (!shown)
      return fail(llvm::toString(shown.takeError()));
    llvm::outs() << "// device program\n"
                 << *shown << "// plan\n"
                 << plan->str();
    for (const Step &s : plan->steps) {
      if (!s.isCollective())
        continue;
      std::vector<int64_t> g = groupRanks(plan->gridShape, s.gridAxes, planRank);
      llvm::outs() << "// rank " << planRank << " group over axes ["
                   << llvm::join(llvm::map_range(s.gridAxes, [](int a) { return std::to_string(a); }), ",")
                   << "]: ranks ["
                   << llvm::join(llvm::map_range(g, [](int64_t a) { return std::to_string(a); }), ",")
                   << "]\n";
    }
    return 0;
  }

  // Everything MLIR happens before fork; CUDA only in the children.
  auto shardings = describeShardings(text, funcName, input);
  if (!shardings)
    return fail(llvm::toString(shardings.takeError()));
  auto refLocal = partitionProgram(shardings->unsharded, false);
  if (!refLocal)
    return fail("the unsharded program: " + llvm::toString(refLocal.takeError()));
  auto refPlan = buildDevicePlan(*refLocal, funcName);
  if (!refPlan)
    return fail("the unsharded program: " + llvm::toString(refPlan.takeError()));
  // The host side (inputs, reference, --simulate) converts FP8, bf16 and
  // f32 only; f16 bytes would be written as bf16 and read back as zeros.
  for (const TensorInfo &t : refPlan->tensors)
    if (t.type == ElemType::F16)
      return fail("f16 tensors are not supported by blockscale-run-sharded "
                  "(its host side converts FP8, bf16 and f32); use bf16");
  Inputs in;
  for (size_t i = 0; i < refPlan->args.size(); ++i) {
    const TensorInfo &t = refPlan->tensors[refPlan->args[i]];
    in.global.push_back(globalArg(t, int(i), isScaleArg(*refPlan, int(i))));
    in.globalShape.push_back(t.shape);
  }
  const auto &splits = shardings->args;
  llvm::SmallString<128> dir;
  llvm::sys::fs::createUniqueDirectory("blockscale-sharded", dir);

  if (simulate) {
    if (auto ctx = ensureContext(0); !ctx)
      return fail(llvm::toString(ctx.takeError()));
    if (int rc = simulateMain(*plan, in, splits, std::string(dir)))
      return rc;
  } else {
    std::vector<pid_t> kids;
    for (int64_t r = 0; r < world; ++r) {
      pid_t pid = fork();
      if (pid < 0)
        return fail("fork failed");
      if (pid == 0)
        _exit(rankMain(*plan, in, splits, r, std::string(dir)));
      kids.push_back(pid);
    }
    bool ok = true;
    for (pid_t p : kids) {
      int st = 0;
      waitpid(p, &st, 0);
      ok &= WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    if (!ok)
      return fail(llvm::formatv("a rank failed (grid of {0} devices, one GPU "
                                "each; --simulate runs them all on one)",
                                world)
                      .str());
  }
  llvm::outs() << "ran " << world << " rank(s)"
               << (simulate ? " on one GPU (simulated collectives)" : "")
               << " on grid "
               << llvm::join(llvm::map_range(plan->gridShape, [](int64_t a) { return std::to_string(a); }), "x")
               << "\n";
  if (!check)
    return 0;

  // Reference: the unsharded program on GPU 0 of this process.
  if (auto ctx = ensureContext(0); !ctx)
    return fail(llvm::toString(ctx.takeError()));
  auto ex = Executor::create(refPlan->gridShape, 0, {});
  if (!ex)
    return fail(llvm::toString(ex.takeError()));
  auto gpu1 = runPlan(*refPlan, **ex, in.global);
  if (!gpu1)
    return fail("the unsharded program on one GPU: " +
                llvm::toString(gpu1.takeError()));
  auto host = hostReference(*refPlan, in.global);
  if (!host)
    return fail(llvm::toString(host.takeError()));
  auto relErr = [](const std::vector<float> &got,
                   const std::vector<float> &want) {
    double num = 0, den = 0;
    for (size_t j = 0; j < want.size(); ++j) {
      num += (double(got[j]) - want[j]) * (double(got[j]) - want[j]);
      den += double(want[j]) * want[j];
    }
    return std::sqrt(num / std::max(den, 1e-300));
  };
  // Results downstream of a cast of a computed value (an FFN's second GEMM)
  // carry its rounding: a bf16-level difference in h moves some elements to
  // a neighbouring FP8 value, a few 1e-3 relative in the end.
  std::vector<bool> requantized(refPlan->tensors.size(), false);
  for (const Step &st : refPlan->steps) {
    bool in = false;
    for (size_t j = 0; j < st.inputs.size(); ++j)
      in = in || requantized[st.inputs[j]] ||
           (st.kind == Step::Kind::Quantize &&
            !llvm::is_contained(refPlan->args, st.inputs[j]));
    for (int o : st.outputs)
      requantized[o] = in;
  }
  int bad = 0;
  for (size_t i = 0; i < host->size(); ++i) {
    const TensorInfo &rt = refPlan->tensors[refPlan->results[i]];
    const TensorInfo &lt = plan->tensors[plan->results[i]];
    // Each rank's block goes where the result's sharding puts it; the
    // copies of a replicated result are each compared.
    std::vector<std::vector<float>> assembled;
    for (int64_t r = 0; r < world; ++r) {
      std::string p = resultPath(std::string(dir), i, r);
      auto rb = llvm::MemoryBuffer::getFile(p, false, false);
      if (!rb)
        return fail("missing " + p);
      const float *v = reinterpret_cast<const float *>((*rb)->getBufferStart());
      std::vector<int64_t> off =
          shardOffsets(plan->gridShape, shardings->results[i], rt.shape, r);
      bool replica = true;
      for (auto &axes : shardings->results[i])
        replica &= axes.empty();
      if (assembled.empty() || replica)
        assembled.emplace_back((*host)[i].size(),
                               std::numeric_limits<float>::quiet_NaN());
      std::vector<float> &dst = assembled.back();
      for (int64_t a = 0; a < lt.shape[0]; ++a)
        for (int64_t b = 0; b < lt.shape[1]; ++b)
          dst[(a + off[0]) * rt.shape[1] + b + off[1]] = v[a * lt.shape[1] + b];
    }
    double vsHost = 0, vsGpu = 0;
    for (auto &as : assembled) { // NaN where no rank wrote: fails
      vsHost = std::max(vsHost, relErr(as, (*host)[i]));
      vsGpu = std::max(vsGpu, relErr(as, (*gpu1)[i]));
    }
    double gpuVsHost = relErr((*gpu1)[i], (*host)[i]);
    // bf16 outputs: a few bf16 ulps; f32: accumulation order and partial
    // sums rounded by the collective.
    double tol = rt.type == ElemType::F32 && !requantized[refPlan->results[i]]
                     ? 2e-3
                     : 1e-2;
    auto ok = [&](double e) { return std::isfinite(e) && e <= tol; };
    bool pass = ok(vsHost) && ok(vsGpu) && ok(gpuVsHost);
    bad += !pass;
    llvm::outs() << llvm::formatv(
        "result {0}: {1}x{2}{3} (local {4}x{5}) rel_err sharded-vs-host "
        "{6:e}, sharded-vs-one-GPU {7:e}, one-GPU-vs-host {8:e} (tol {9:e}) "
        "-> {10}\n",
        i, rt.shape[0], rt.shape[1], toString(rt.type), lt.shape[0],
        lt.shape[1], vsHost, vsGpu, gpuVsHost, tol, pass ? "PASS" : "FAIL");
  }
  llvm::sys::fs::remove_directories(dir);
  return bad ? 1 : 0;
}
