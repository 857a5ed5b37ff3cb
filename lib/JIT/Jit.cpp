//===- Jit.cpp - one call from a GEMM description to a kernel ---*- C++ -*-===//

#include "blockscale/JIT/Jit.h"
#include "blockscale/Dialect/BlockScale/IR/BlockScale.h"
#include "blockscale/Dialect/BlockScale/Transforms/Passes.h"
#include "blockscale/Dialect/BlockScale/Transforms/TileModel.h"
#include "blockscale/Runtime/CudaDriver.h"
#include "blockscale/Target/Cuda/CudaEmitter.h"
#include "Context.h"
#include "Diagnostics.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>

using namespace blockscale;
namespace mbs = mlir::blockscale;
using blockscale::detail::Diagnostics;
using blockscale::detail::JitContext;

static llvm::Error error(const std::string &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg.c_str());
}

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

static int resolveSMs(int requested) {
  if (requested > 0)
    return requested;
  auto sms = currentDeviceSMs();
  if (sms)
    return *sms;
  llvm::consumeError(sms.takeError());
  return 132; // H100/H200 SXM, for CPU-only generation
}

static llvm::Error runPipeline(mlir::ModuleOp module, Diagnostics &diags,
                               const mbs::JitPipelineOptions &opts) {
  mlir::PassManager pm(module.getContext());
  mbs::buildJitPipeline(pm, opts);
  if (mlir::failed(pm.run(module)))
    return error("the blockscale pipeline failed:\n" + diags.text);
  return llvm::Error::success();
}

static std::string printIR(mlir::ModuleOp module) {
  std::string s;
  llvm::raw_string_ostream os(s);
  module.print(os);
  return s;
}

llvm::Expected<GemmPlan> blockscale::planGemm(const GemmDesc &desc) {
  if (llvm::Error e = desc.validate())
    return std::move(e);
  int sms = resolveSMs(desc.numSMs);
  JitContext &jc = JitContext::get();
  std::lock_guard<std::mutex> lock(jc.mu);
  mlir::MLIRContext *ctx = &jc.ctx;
  Diagnostics diags(ctx);
  mlir::OpBuilder b(ctx);
  mlir::Location loc = mlir::FileLineColLoc::get(
      ctx, llvm::formatv("gemm<{0}>", desc.key()).str(), 0, 0);
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());

  int64_t m = desc.m < 0 ? mlir::ShapedType::kDynamic : desc.m;
  int64_t kb = (desc.k + 127) / 128;
  bool wgrad = desc.form == GemmForm::Wgrad;
  auto f32 = b.getF32Type();
  auto aT = mlir::RankedTensorType::get({m, desc.k}, fp8Type(ctx, desc.a));
  auto asT = mlir::RankedTensorType::get({m, kb}, f32);
  auto bT = mlir::RankedTensorType::get({desc.k, desc.n}, fp8Type(ctx, desc.b));
  auto bsT = mlir::RankedTensorType::get(
      {kb, wgrad ? desc.n : (desc.n + 127) / 128}, f32);
  auto cT = mlir::RankedTensorType::get({m, desc.n}, floatType(ctx, desc.out));
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
  auto mm = mbs::MatmulOp::create(b, loc, cT, body->getArgument(0), body->getArgument(1),
      body->getArgument(2), body->getArgument(3),
      desc.accumulate ? body->getArgument(4) : mlir::Value(), form,
      mbs::ScaleRecipe::blk_1x128,
      wgrad ? mbs::ScaleRecipe::blk_128x1 : mbs::ScaleRecipe::blk_128x128,
      mbs::Layout::row_major, mbs::Layout::col_major,
      /*a_scale_layout=*/nullptr, /*b_scale_layout=*/nullptr,
      /*lda=*/nullptr, /*ldb=*/nullptr, /*ldc=*/nullptr, /*tile=*/nullptr);
  mlir::func::ReturnOp::create(b, loc, mm.getC());
  if (mlir::failed(mlir::verify(*module)))
    return error("invalid GEMM description " + desc.key() + ":\n" +
                 diags.text);

  mbs::JitPipelineOptions opts;
  opts.numSMs = sms;
  opts.mHint = desc.m > 0 ? desc.m : desc.mHint;
  opts.force = desc.forceTile;
  if (llvm::Error e = runPipeline(*module, diags, opts))
    return std::move(e);

  mbs::MatmulOp op;
  module->walk([&](mbs::MatmulOp o) { op = o; });
  mlir::FailureOr<mbs::EmittedKernel> k = mbs::emitGemmKernel(op);
  if (mlir::failed(k))
    return error("emitting CUDA failed:\n" + diags.text);
  GemmPlan plan;
  plan.spec = k->spec;
  plan.launch = k->launch;
  plan.source = std::move(k->source);
  plan.ir = printIR(*module);
  // The model's estimate for the chosen tile, for reports.
  TileChoice c;
  c.bm = plan.spec.gemm.bm;
  c.bn = plan.spec.gemm.bn;
  c.splits = plan.launch.splits;
  c.raster = plan.launch.raster;
  GemmProblem p{desc.m > 0 ? desc.m : desc.mHint, desc.n, desc.k, wgrad,
                dtypeBytes(desc.out), desc.accumulate};
  DeviceModel dm;
  dm.numSMs = sms;
  estimateSeconds(p, dm, c);
  plan.predictedSeconds = c.predictedSeconds;
  return plan;
}

llvm::Expected<QuantPlan> blockscale::planQuantize(const QuantDesc &desc) {
  if (llvm::Error e = desc.validate())
    return std::move(e);
  JitContext &jc = JitContext::get();
  std::lock_guard<std::mutex> lock(jc.mu);
  mlir::MLIRContext *ctx = &jc.ctx;
  Diagnostics diags(ctx);
  mlir::OpBuilder b(ctx);
  mlir::Location loc = mlir::FileLineColLoc::get(
      ctx, llvm::formatv("quantize<{0}>", desc.key()).str(), 0, 0);
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());

  int64_t rows = desc.rows < 0 ? mlir::ShapedType::kDynamic : desc.rows;
  auto inT = mlir::RankedTensorType::get({rows, desc.cols},
                                         floatType(ctx, desc.in));
  llvm::SmallVector<int64_t> outShape = {rows, desc.cols};
  if (desc.transpose)
    std::swap(outShape[0], outShape[1]);
  mbs::ScaleRecipe recipe =
      desc.blockRows == 1    ? mbs::ScaleRecipe::blk_1x128
      : desc.blockCols == 1  ? mbs::ScaleRecipe::blk_128x1
                             : mbs::ScaleRecipe::blk_128x128;
  auto qT = mlir::RankedTensorType::get(outShape, fp8Type(ctx, desc.out));
  auto sT = mlir::RankedTensorType::get(mbs::getScaleShape(outShape, recipe),
                                        b.getF32Type());
  auto fn = mlir::func::FuncOp::create(b, loc, "quantize", b.getFunctionType({inT}, {qT, sT}));
  mlir::Block *body = fn.addEntryBlock();
  b.setInsertionPointToEnd(body);
  auto q = mbs::QuantizeOp::create(b, loc, qT, sT, body->getArgument(0), recipe,
      desc.colMajor ? mbs::Layout::col_major : mbs::Layout::row_major,
      desc.transpose, /*scale_layout=*/nullptr);
  mlir::func::ReturnOp::create(b, loc, q->getResults());
  if (mlir::failed(mlir::verify(*module)))
    return error("invalid quantize description " + desc.key() + ":\n" +
                 diags.text);
  mbs::JitPipelineOptions opts;
  if (llvm::Error e = runPipeline(*module, diags, opts))
    return std::move(e);
  mlir::FailureOr<mbs::EmittedKernel> k = mbs::emitQuantizeKernel(q);
  if (mlir::failed(k))
    return error("emitting CUDA failed:\n" + diags.text);
  QuantPlan plan;
  plan.spec = k->spec;
  plan.source = std::move(k->source);
  plan.ir = printIR(*module);
  return plan;
}

/// Bumped by clearJitMemoryCache so that per-thread fast paths forget too.
static std::atomic<uint64_t> jitGeneration{1};

namespace {
struct JitCache {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<const GemmKernel>> gemms;
  std::map<std::string, std::shared_ptr<const QuantKernel>> quants;
  static JitCache &get() {
    static JitCache c;
    return c;
  }
};
} // namespace

void blockscale::clearJitMemoryCache() {
  JitCache &c = JitCache::get();
  std::lock_guard<std::mutex> lock(c.mu);
  c.gemms.clear();
  c.quants.clear();
  ++jitGeneration;
  KernelRegistry::global().clearMemory();
}

static std::string optionsKey(const JitOptions &o) {
  std::string s;
  for (const std::string &f : o.compile.flags())
    s += f + " ";
  return s;
}

static bool sameDesc(const GemmDesc &a, const GemmDesc &b) {
  return a.form == b.form && a.m == b.m && a.n == b.n && a.k == b.k &&
         a.a == b.a && a.b == b.b && a.out == b.out &&
         a.accumulate == b.accumulate && a.mHint == b.mHint &&
         a.numSMs == b.numSMs && a.forceTile == b.forceTile;
}

llvm::Expected<std::shared_ptr<const GemmKernel>>
blockscale::getGemmKernel(const GemmDesc &desc, const JitOptions &options) {
  // Hot path of a training loop: the same description again on this thread.
  // (Only for default compile options; the cache is per thread, so no lock.)
  // BLOCKSCALE_EXP_DEFINES is a compile option too (CompileOptions::flags
  // reads it): while it is set, every request takes the keyed path, or a
  // define set asked for right after the plain kernel would get the plain
  // kernel back.
  thread_local GemmDesc lastDesc;
  thread_local std::shared_ptr<const GemmKernel> lastKernel;
  thread_local uint64_t lastGeneration = 0;
  const char *expDefines = std::getenv("BLOCKSCALE_EXP_DEFINES");
  bool defaultOptions = options.compile.extra.empty() &&
                        !options.compile.ptx && options.compile.arch == "90a" &&
                        (!expDefines || !*expDefines);
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
  JitCache &cache = JitCache::get();
  GemmDesc d = desc;
  d.numSMs = resolveSMs(desc.numSMs);
  std::string key = d.key() + "|" + optionsKey(options);
  {
    std::lock_guard<std::mutex> lock(cache.mu);
    auto it = cache.gemms.find(key);
    if (it != cache.gemms.end())
      return it->second;
  }
  auto plan = planGemm(d);
  if (!plan)
    return plan.takeError();
  auto compiled =
      KernelRegistry::global().getOrCompile(plan->source, options.compile);
  if (!compiled)
    return compiled.takeError();
  auto k = std::make_shared<GemmKernel>();
  k->desc = d;
  k->launch = plan->launch;
  k->compiled = *compiled;
  k->predictedSeconds = plan->predictedSeconds;
  std::lock_guard<std::mutex> lock(cache.mu);
  auto &slot = cache.gemms[key];
  if (!slot)
    slot = k;
  return slot;
}

llvm::Expected<std::shared_ptr<const QuantKernel>>
blockscale::getQuantKernel(const QuantDesc &desc, const JitOptions &options) {
  JitCache &cache = JitCache::get();
  std::string key = desc.key() + "|" + optionsKey(options);
  {
    std::lock_guard<std::mutex> lock(cache.mu);
    auto it = cache.quants.find(key);
    if (it != cache.quants.end())
      return it->second;
  }
  auto plan = planQuantize(desc);
  if (!plan)
    return plan.takeError();
  auto compiled =
      KernelRegistry::global().getOrCompile(plan->source, options.compile);
  if (!compiled)
    return compiled.takeError();
  auto k = std::make_shared<QuantKernel>();
  k->desc = desc;
  k->compiled = *compiled;
  std::lock_guard<std::mutex> lock(cache.mu);
  auto &slot = cache.quants[key];
  if (!slot)
    slot = k;
  return slot;
}
