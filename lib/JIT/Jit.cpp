//===- Jit.cpp - one call from a description to a kernel --------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "blockscale/JIT/Jit.h"
#include "Context.h"
#include "Diagnostics.h"
#include "blockscale/Dialect/BlockScale/IR/BlockScale.h"
#include "blockscale/Dialect/BlockScale/Transforms/Passes.h"
#include "blockscale/Dialect/BlockScale/Transforms/TileModel.h"
#include "blockscale/Runtime/CudaDriver.h"
#include "blockscale/Target/Cuda/CudaEmitter.h"
#include "blockscale/Target/Cuda/Kernels/params.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"

#include <atomic>
#include <map>
#include <mutex>

using namespace blockscale;
namespace mbs = mlir::blockscale;
using blockscale::detail::Diagnostics;
using blockscale::detail::JitContext;

static mlir::Type fp8Type(mlir::MLIRContext *ctx, Fp8Type t) {
  return t == Fp8Type::E4M3 ? mlir::Type(mlir::Float8E4M3FNType::get(ctx))
                            : mlir::Type(mlir::Float8E5M2Type::get(ctx));
}

static mlir::Type floatType(mlir::MLIRContext *ctx, DType t) {
  switch (t) {
  case DType::BF16:
    return mlir::BFloat16Type::get(ctx);
  case DType::F16:
    return mlir::Float16Type::get(ctx);
  case DType::F32:
    return mlir::Float32Type::get(ctx);
  }
  return {};
}

int blockscale::resolveSMs(int requested) {
  if (requested > 0)
    return requested;
  auto sms = currentDeviceSMs();
  if (sms)
    return *sms;
  llvm::consumeError(sms.takeError());
  return bs::kDefaultNumSMs;
}

static std::string printIR(mlir::ModuleOp module) {
  std::string s;
  llvm::raw_string_ostream os(s);
  module.print(os);
  return s;
}

//===----------------------------------------------------------------------===//
// Per family: the IR of a description and its kernel
//===----------------------------------------------------------------------===//

namespace {
template <class Family> struct JitTraits;

template <> struct JitTraits<GemmFamily> {
  using Op = mbs::MatmulOp;
  static Op build(mlir::OpBuilder &b, mlir::Location loc,
                  const GemmDesc &desc) {
    mlir::MLIRContext *ctx = b.getContext();
    int64_t m = desc.m < 0 ? mlir::ShapedType::kDynamic : desc.m;
    int64_t kb = (desc.k + 127) / 128;
    bool wgrad = desc.form == GemmForm::Wgrad;
    auto f32 = b.getF32Type();
    auto aT = mlir::RankedTensorType::get({m, desc.k}, fp8Type(ctx, desc.a));
    auto asT = mlir::RankedTensorType::get({m, kb}, f32);
    auto bT =
        mlir::RankedTensorType::get({desc.k, desc.n}, fp8Type(ctx, desc.b));
    auto bsT = mlir::RankedTensorType::get(
        {kb, wgrad ? desc.n : (desc.n + 127) / 128}, f32);
    auto cT =
        mlir::RankedTensorType::get({m, desc.n}, floatType(ctx, desc.out));
    llvm::SmallVector<mlir::Type> args = {aT, asT, bT, bsT};
    if (desc.accumulate)
      args.push_back(cT);
    auto fn = mlir::func::FuncOp::create(b, loc, "gemm",
                                         b.getFunctionType(args, {cT}));
    mlir::Block *body = fn.addEntryBlock();
    b.setInsertionPointToEnd(body);
    mbs::GemmForm form = desc.form == GemmForm::Fwd     ? mbs::GemmForm::fwd
                         : desc.form == GemmForm::Dgrad ? mbs::GemmForm::dgrad
                                                        : mbs::GemmForm::wgrad;
    auto mm = mbs::MatmulOp::create(
        b, loc, cT, body->getArgument(0), body->getArgument(1),
        body->getArgument(2), body->getArgument(3),
        desc.accumulate ? body->getArgument(4) : mlir::Value(), form,
        mbs::ScaleRecipe::blk_1x128,
        wgrad ? mbs::ScaleRecipe::blk_128x1 : mbs::ScaleRecipe::blk_128x128,
        mbs::Layout::row_major, mbs::Layout::col_major,
        /*a_scale_layout=*/nullptr, /*b_scale_layout=*/nullptr,
        /*lda=*/nullptr, /*ldb=*/nullptr, /*ldc=*/nullptr, /*tile=*/nullptr);
    mlir::func::ReturnOp::create(b, loc, mm.getC());
    return mm;
  }
  static TilingOptions options(const GemmDesc &desc) {
    TilingOptions opts;
    opts.numSMs = resolveSMs(desc.numSMs);
    opts.mHint = desc.m > 0 ? desc.m : desc.mHint;
    opts.force = desc.forceTile;
    return opts;
  }
  static mlir::FailureOr<mbs::EmittedKernel> emit(Op op, unsigned debug) {
    return mbs::emitGemmKernel(op, debug);
  }
  static void finish(const GemmDesc &desc, GemmPlan &plan,
                     const mbs::EmittedKernel &k) {
    plan.launch = k.launch;
    // The model's estimate for the chosen tile, for reports.
    TileChoice c;
    c.bm = plan.spec.gemm.bm;
    c.bn = plan.spec.gemm.bn;
    c.splits = plan.launch.splits;
    c.raster = plan.launch.raster;
    GemmProblem p{desc.m > 0 ? desc.m : desc.mHint,
                  desc.n,
                  desc.k,
                  desc.form == GemmForm::Wgrad,
                  dtypeBytes(desc.out),
                  desc.accumulate};
    DeviceModel dm;
    dm.numSMs = resolveSMs(desc.numSMs);
    estimateSeconds(p, dm, c);
    plan.predictedSeconds = c.predictedSeconds;
  }
};

template <> struct JitTraits<QuantFamily> {
  // A description builds a blockscale.quantize or, with `dual`, a
  // blockscale.quantize_dual; emit dispatches on which.
  using Op = mlir::Operation *;
  static Op build(mlir::OpBuilder &b, mlir::Location loc,
                  const QuantDesc &desc) {
    mlir::MLIRContext *ctx = b.getContext();
    int64_t rows = desc.rows < 0 ? mlir::ShapedType::kDynamic : desc.rows;
    auto inT = mlir::RankedTensorType::get({rows, desc.cols},
                                           floatType(ctx, desc.in));
    llvm::SmallVector<int64_t> outShape = {rows, desc.cols};
    if (desc.transpose)
      std::swap(outShape[0], outShape[1]);
    mbs::ScaleRecipe recipe = desc.blockRows == 1   ? mbs::ScaleRecipe::blk_1x128
                              : desc.blockCols == 1 ? mbs::ScaleRecipe::blk_128x1
                                                    : mbs::ScaleRecipe::blk_128x128;
    mbs::Layout layout =
        desc.colMajor ? mbs::Layout::col_major : mbs::Layout::row_major;
    auto qT = mlir::RankedTensorType::get(outShape, fp8Type(ctx, desc.out));
    auto sT = mlir::RankedTensorType::get(
        mbs::getScaleShape(outShape, recipe), b.getF32Type());
    llvm::SmallVector<mlir::Type> results = {qT, sT};
    mlir::RankedTensorType tqT, tsT;
    if (desc.dual) {
      // The second result is the same cast with `transpose` negated.
      llvm::SmallVector<int64_t> tShape = {outShape[1], outShape[0]};
      tqT = mlir::RankedTensorType::get(tShape, fp8Type(ctx, desc.out));
      tsT = mlir::RankedTensorType::get(mbs::getScaleShape(tShape, recipe),
                                        b.getF32Type());
      results.append({tqT, tsT});
    }
    auto fn = mlir::func::FuncOp::create(b, loc, "quantize",
                                         b.getFunctionType({inT}, results));
    mlir::Block *body = fn.addEntryBlock();
    b.setInsertionPointToEnd(body);
    mlir::Operation *q;
    if (desc.dual)
      q = mbs::QuantizeDualOp::create(b, loc, qT, sT, tqT, tsT,
                                      body->getArgument(0), recipe, layout,
                                      desc.transpose, /*scale_layout=*/nullptr,
                                      /*t_scale_layout=*/nullptr);
    else
      q = mbs::QuantizeOp::create(b, loc, qT, sT, body->getArgument(0), recipe,
                                  layout, desc.transpose,
                                  /*scale_layout=*/nullptr);
    mlir::func::ReturnOp::create(b, loc, q->getResults());
    return q;
  }
  static TilingOptions options(const QuantDesc &) { return {}; }
  static mlir::FailureOr<mbs::EmittedKernel> emit(mlir::Operation *op,
                                                  unsigned debug) {
    if (auto dual = llvm::dyn_cast<mbs::QuantizeDualOp>(op))
      return mbs::emitQuantizeDualKernel(dual, debug);
    return mbs::emitQuantizeKernel(llvm::cast<mbs::QuantizeOp>(op), debug);
  }
  static void finish(const QuantDesc &, QuantPlan &,
                     const mbs::EmittedKernel &) {}
};
} // namespace

/// Description -> module -> pipeline -> emitted kernel, for any family.
template <class Family>
static llvm::Expected<KernelPlan<Family>>
planKernel(const typename Family::Desc &desc) {
  using Traits = JitTraits<Family>;
  if (llvm::Error e = Family::canImplement(desc))
    return std::move(e);
  // (Outside the lock: it may ask the driver for the SM count.)
  TilingOptions opts = Traits::options(desc);
  JitContext &jc = JitContext::get();
  std::lock_guard<std::mutex> lock(jc.mu);
  mlir::MLIRContext *ctx = &jc.ctx;
  Diagnostics diags(ctx);
  mlir::OpBuilder b(ctx);
  const std::string key = Family::key(desc);
  mlir::Location loc = mlir::FileLineColLoc::get(
      ctx, llvm::formatv("{0}<{1}>", Family::name, key).str(), 0, 0);
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  typename Traits::Op op = Traits::build(b, loc, desc);
  if (mlir::failed(mlir::verify(*module)))
    return invalidArgument("invalid " + Family::name + " description " + key +
                           ":\n" + diags.text);
  mlir::PassManager pm(ctx);
  mbs::buildJitPipeline(pm, opts);
  // The module is the description's: what the pipeline refuses (a forced
  // tile, an SM count) is a bad argument, not a failed compile.
  if (mlir::failed(pm.run(*module)))
    return invalidArgument("the blockscale pipeline refused " + Family::name +
                           " description " + key + ":\n" + diags.text);
  mlir::FailureOr<mbs::EmittedKernel> k = Traits::emit(op, desc.debug);
  if (mlir::failed(k))
    return makeError(ErrorCode::Compile, "emitting CUDA failed:\n" + diags.text);
  KernelPlan<Family> plan;
  plan.spec = k->spec;
  plan.source = std::move(k->source);
  plan.ir = printIR(*module);
  Traits::finish(desc, plan, *k);
  return plan;
}

llvm::Expected<GemmPlan> blockscale::planGemm(const GemmDesc &desc) {
  return planKernel<GemmFamily>(desc);
}

llvm::Expected<QuantPlan> blockscale::planQuantize(const QuantDesc &desc) {
  if (desc.groups == 0)
    return planKernel<QuantFamily>(desc);
  // A batched dual cast has no op in the dialect (its tensors would be 3-D
  // and its scales per matrix); like the grouped families it is planned
  // directly, with no MLIR module (ir stays empty).
  if (llvm::Error e = QuantFamily::canImplement(desc))
    return std::move(e);
  QuantPlan plan;
  plan.spec.kind = KernelKind::Quantize;
  QuantKernelSpec &q = plan.spec.quant;
  q.in = desc.in;
  q.out = desc.out;
  q.br = q.bc = 128;
  q.dual = q.grouped = true;
  plan.spec.debug = desc.debug;
  plan.spec.name = kernelName(plan.spec);
  plan.source = generateCudaSource(
      plan.spec,
      llvm::formatv("blockscale batched dual cast: {0} -> {1}, 128x128, each "
                    "matrix in input order and transposed",
                    toString(desc.in), toString(desc.out))
          .str());
  return plan;
}

llvm::Expected<GroupedGemmPlan>
blockscale::planGroupedGemm(const GroupedGemmDesc &desc) {
  auto spec = GroupedGemmFamily::plan(desc);
  if (!spec)
    return spec.takeError();
  GroupedGemmPlan plan;
  plan.spec = *spec;
  plan.source = generateCudaSource(
      plan.spec, describeGroupedGemm(desc.grouping, desc.a, desc.b, desc.out,
                                     desc.accumulate));
  return plan;
}

llvm::Expected<GroupedQuantPlan>
blockscale::planGroupedQuantize(const GroupedQuantDesc &desc) {
  auto spec = GroupedQuantFamily::plan(desc);
  if (!spec)
    return spec.takeError();
  GroupedQuantPlan plan;
  plan.spec = *spec;
  plan.source =
      generateCudaSource(plan.spec, describeGroupedQuantize(desc.in, desc.out));
  return plan;
}

namespace {
/// Plans a family's description (through MLIR, except the grouped GEMMs,
/// the group-aware cast and the batched dual cast).
template <class Family>
llvm::Expected<KernelPlan<Family>> planAny(const typename Family::Desc &d) {
  if constexpr (std::is_same_v<Family, QuantFamily>)
    return planQuantize(d);
  else if constexpr (std::is_same_v<Family, GroupedGemmFamily>)
    return planGroupedGemm(d);
  else if constexpr (std::is_same_v<Family, GroupedQuantFamily>)
    return planGroupedQuantize(d);
  else
    return planKernel<Family>(d);
}
} // namespace

//===----------------------------------------------------------------------===//
// Description -> kernel, cached
//===----------------------------------------------------------------------===//

/// Bumped by clearJitMemoryCache so that per-thread fast paths forget too.
static std::atomic<uint64_t> jitGeneration{1};

namespace {
template <class Family> struct JitCache {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<const JitKernel<Family>>> kernels;
  static JitCache &get() {
    static JitCache c;
    return c;
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mu);
    kernels.clear();
  }
};
} // namespace

void blockscale::clearJitMemoryCache() {
  JitCache<GemmFamily>::get().clear();
  JitCache<QuantFamily>::get().clear();
  JitCache<GroupedGemmFamily>::get().clear();
  JitCache<GroupedQuantFamily>::get().clear();
  ++jitGeneration;
  KernelRegistry::global().clearMemory();
}

static std::string optionsKey(const JitOptions &o) {
  std::string s;
  for (const std::string &f : o.compile.flags())
    s += f + " ";
  return s;
}

template <class Family>
static llvm::Expected<std::shared_ptr<const JitKernel<Family>>>
getKernel(const typename Family::Desc &desc, const JitOptions &options) {
  JitCache<Family> &cache = JitCache<Family>::get();
  const std::string key = Family::key(desc) + "|" + optionsKey(options);
  {
    std::lock_guard<std::mutex> lock(cache.mu);
    auto it = cache.kernels.find(key);
    if (it != cache.kernels.end())
      return it->second;
  }
  auto plan = planAny<Family>(desc);
  if (!plan)
    return plan.takeError();
  auto compiled =
      KernelRegistry::global().getOrCompile(plan->source, options.compile);
  if (!compiled)
    return compiled.takeError();
  auto k = std::make_shared<JitKernel<Family>>();
  k->desc = desc;
  k->launch = plan->launch;
  k->compiled = *compiled;
  k->predictedSeconds = plan->predictedSeconds;
  std::lock_guard<std::mutex> lock(cache.mu);
  auto &slot = cache.kernels[key];
  if (!slot)
    slot = k;
  return slot;
}

static bool sameDesc(const GemmDesc &a, const GemmDesc &b) {
  return a.form == b.form && a.m == b.m && a.n == b.n && a.k == b.k &&
         a.a == b.a && a.b == b.b && a.out == b.out &&
         a.accumulate == b.accumulate && a.mHint == b.mHint &&
         a.numSMs == b.numSMs && a.forceTile == b.forceTile &&
         a.debug == b.debug;
}

llvm::Expected<std::shared_ptr<const GemmKernel>>
blockscale::getGemmKernel(const GemmDesc &desc, const JitOptions &options) {
  // Hot path of a training loop: the same description again on this thread
  // (only for default compile options; the cache is per thread, no lock).
  thread_local GemmDesc lastDesc;
  thread_local std::shared_ptr<const GemmKernel> lastKernel;
  thread_local uint64_t lastGeneration = 0;
  bool defaultOptions = options.compile.extra.empty() &&
                        !options.compile.ptx && options.compile.arch == "90a";
  uint64_t gen = jitGeneration.load(std::memory_order_relaxed);
  if (defaultOptions && lastKernel && lastGeneration == gen &&
      sameDesc(desc, lastDesc))
    return lastKernel;
  auto k = getGemmKernelSlow(desc, options);
  if (k && defaultOptions) {
    lastDesc = desc;
    lastKernel = *k;
    lastGeneration = gen;
  }
  return k;
}

llvm::Expected<std::shared_ptr<const GemmKernel>>
blockscale::getGemmKernelSlow(const GemmDesc &desc, const JitOptions &options) {
  GemmDesc d = desc;
  d.numSMs = resolveSMs(desc.numSMs);
  return getKernel<GemmFamily>(d, options);
}

llvm::Expected<std::shared_ptr<const QuantKernel>>
blockscale::getQuantKernel(const QuantDesc &desc, const JitOptions &options) {
  return getKernel<QuantFamily>(desc, options);
}

llvm::Expected<std::shared_ptr<const GroupedGemmKernel>>
blockscale::getGroupedGemmKernel(const GroupedGemmDesc &desc,
                                 const JitOptions &options) {
  return getKernel<GroupedGemmFamily>(desc, options);
}

llvm::Expected<std::shared_ptr<const GroupedQuantKernel>>
blockscale::getGroupedQuantKernel(const GroupedQuantDesc &desc,
                                  const JitOptions &options) {
  return getKernel<GroupedQuantFamily>(desc, options);
}
