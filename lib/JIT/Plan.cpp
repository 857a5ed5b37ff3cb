//===- Plan.cpp - partitioned programs to device plans ----------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "blockscale/Dialect/BlockScale/IR/BlockScale.h"
#include "blockscale/Dialect/BlockScale/Transforms/Passes.h"
#include "blockscale/JIT/Jit.h"
#include "blockscale/JIT/Plan.h"
#include "blockscale/Runtime/Error.h"
#include "Context.h"
#include "Diagnostics.h"
#include "blockscale/Target/Cuda/CudaEmitter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/SourceMgr.h"

#include <mutex>
#include <optional>

using namespace blockscale;
using namespace blockscale::dist;
using blockscale::detail::Diagnostics;
using blockscale::detail::JitContext;
namespace mbs = mlir::blockscale;

static llvm::Error err(const llvm::Twine &m) { return invalidArgument(m); }

namespace {
/// One planner call: the shared context locked for its duration, a collector
/// of its diagnostics and the program parsed into it.
struct PlanSession {
  JitContext &pc = JitContext::get();
  std::lock_guard<std::mutex> lock{pc.mu};
  Diagnostics diag{&pc.ctx};
  mlir::OwningOpRef<mlir::ModuleOp> module;

  /// `name` is the source's name in diagnostics (a file path, or empty).
  llvm::Error parse(llvm::StringRef text, llvm::StringRef name = "") {
    module = mlir::parseSourceString<mlir::ModuleOp>(
        text, mlir::ParserConfig(&pc.ctx), name);
    if (!module)
      return err("cannot parse the program:\n" + diag.text);
    return llvm::Error::success();
  }
};
} // namespace

/// Most devices a plan's grid may have: the executor numbers ranks and
/// builds groups as 32-bit NCCL ranks, and --plan-only lists groups, so a
/// bound well below int64 keeps every count and list small.
static constexpr int64_t kMaxGridDevices = int64_t(1) << 20;

/// The shape of the module's grid ({1} without one): one grid of static,
/// positive sizes with at most kMaxGridDevices devices.
static llvm::Expected<std::vector<int64_t>> gridShapeOf(mlir::ModuleOp m) {
  std::vector<int64_t> shape = {1};
  llvm::SmallVector<mlir::shard::GridOp> grids;
  m.walk([&](mlir::shard::GridOp g) { grids.push_back(g); });
  if (grids.size() > 1)
    return err(llvm::formatv("expected one shard.grid in a sharded program (a "
                             "run uses one device grid) but got {0}: @{1} and "
                             "@{2}{3}",
                             grids.size(), grids[0].getSymName(),
                             grids[1].getSymName(),
                             grids.size() > 2 ? " and more" : "")
                   .str());
  if (grids.empty())
    return shape;
  shape.assign(grids[0].getShape().begin(), grids[0].getShape().end());
  int64_t devices = 1;
  for (int64_t d : shape) {
    if (mlir::ShapedType::isDynamic(d) || d < 1)
      return err(llvm::formatv("expected the sizes of grid @{0} to be static "
                               "and >= 1 but got {1}",
                               grids[0].getSymName(),
                               mbs::shapeToString(shape))
                     .str());
    std::optional<int64_t> n = llvm::checkedMul<int64_t>(devices, d);
    if (!n || *n > kMaxGridDevices)
      return err(llvm::formatv("expected grid @{0} to have at most {1} "
                               "devices but its shape {2} has more",
                               grids[0].getSymName(), kMaxGridDevices,
                               mbs::shapeToString(shape))
                     .str());
    devices = *n;
  }
  return shape;
}

/// Grid axes of a collective or sharding: in range and distinct.
static llvm::Error checkGridAxes(llvm::ArrayRef<int> axes,
                                 llvm::ArrayRef<int64_t> grid,
                                 const llvm::Twine &whatTwine) {
  std::string what = whatTwine.str();
  for (auto [i, a] : llvm::enumerate(axes)) {
    if (a < 0 || a >= int(grid.size()))
      return err(llvm::formatv("expected the grid axes of {0} in [0, {1}) (the "
                               "grid is {2}) but got axis {3}",
                               what, grid.size(), mbs::shapeToString(grid), a)
                     .str());
    if (llvm::is_contained(axes.take_front(i), a))
      return err(llvm::formatv("expected distinct grid axes in {0} but axis "
                               "{1} appears twice",
                               what, a)
                     .str());
  }
  return llvm::Error::success();
}

/// Function `name` of the module, or its first function when `name` is empty.
static llvm::Expected<mlir::func::FuncOp> findFunction(mlir::ModuleOp m,
                                                       llvm::StringRef name) {
  mlir::func::FuncOp fn;
  m.walk([&](mlir::func::FuncOp f) {
    if (!fn && (name.empty() || f.getSymName() == name))
      fn = f;
  });
  if (!fn)
    return err(name.empty() ? std::string("the program has no function")
                            : "no function @" + name.str());
  return fn;
}

llvm::Expected<std::string> dist::partitionProgram(llvm::StringRef source,
                                                   bool allowPadding,
                                                   llvm::StringRef sourceName) {
  PlanSession ps;
  if (auto e = ps.parse(source, sourceName))
    return std::move(e);
  mlir::PassManager pm(&ps.pc.ctx);
  mbs::ShardPipelineOptions opts;
  opts.allowPadding = allowPadding;
  mbs::buildShardPipeline(pm, opts);
  if (mlir::failed(pm.run(*ps.module)))
    return err("partitioning failed:\n" + ps.diag.text);
  // With its locations, so that planning the device program reports the
  // source's lines, not the lines of this text.
  std::string out;
  llvm::raw_string_ostream os(out);
  ps.module->print(os, mlir::OpPrintingFlags().enableDebugInfo());
  return out;
}

llvm::Expected<std::string>
dist::printWithoutLocations(llvm::StringRef program) {
  PlanSession ps;
  if (auto e = ps.parse(program))
    return std::move(e);
  std::string out;
  llvm::raw_string_ostream os(out);
  ps.module->print(os);
  return out;
}

static ElemType elemType(mlir::Type t) {
  if (llvm::isa<mlir::Float8E4M3FNType>(t))
    return ElemType::F8E4M3;
  if (llvm::isa<mlir::Float8E5M2Type>(t))
    return ElemType::F8E5M2;
  if (t.isBF16())
    return ElemType::BF16;
  if (t.isF16())
    return ElemType::F16;
  return ElemType::F32;
}

/// A 2-D tensor laid out with dimension `contiguous` unit-stride and the
/// other stride rounded up to `align` elements. Sizes must be static, and
/// the padded elements and their bytes fit in int64.
static llvm::Expected<TensorInfo> makeInfo(std::string name,
                                           mlir::RankedTensorType t,
                                           int contiguous, int64_t align) {
  TensorInfo info;
  info.name = std::move(name);
  info.type = elemType(t.getElementType());
  info.shape.assign(t.getShape().begin(), t.getShape().end());
  if (info.shape.empty()) { // scalar
    info.strides = {};
    info.allocElements = 1;
    return info;
  }
  if (info.shape.size() != 2)
    return err(llvm::formatv("{0} has rank {1}; plans hold 2-D tensors",
                             info.name, info.shape.size())
                   .str());
  for (int64_t d : info.shape)
    if (mlir::ShapedType::isDynamic(d))
      return err(llvm::formatv("{0} has a dynamic size ({1}); plans need "
                               "static sizes",
                               info.name, mbs::shapeToString(info.shape))
                     .str());
  if (align < 1)
    return err(llvm::formatv("{0}: expected an alignment >= 1 but got {1}",
                             info.name, align)
                   .str());
  int64_t c = info.shape[contiguous], o = info.shape[1 - contiguous];
  std::optional<int64_t> ld =
      llvm::checkedMul<int64_t>(c / align + (c % align != 0), align);
  std::optional<int64_t> n = ld ? llvm::checkedMul<int64_t>(*ld, o) : ld;
  if (!n || !llvm::checkedMul<int64_t>(*n, elemBytes(info.type)))
    return err(llvm::formatv("{0} ({1}, leading dimension rounded up to {2}) "
                             "has more than 2^63 - 1 bytes",
                             info.name, mbs::shapeToString(info.shape), align)
                   .str());
  info.strides = contiguous == 1 ? std::vector<int64_t>{*ld, 1}
                                 : std::vector<int64_t>{1, *ld};
  info.allocElements = *n;
  return info;
}

static llvm::Expected<TensorInfo> scaleInfo(std::string name, mlir::Value v,
                                            mbs::ScaleLayoutAttr l) {
  auto t = llvm::dyn_cast<mlir::RankedTensorType>(v.getType());
  if (!t || !l)
    return err(name + ": expected a ranked scale tensor with a scale layout");
  return makeInfo(std::move(name), t,
                  l.getOrder() == mbs::Layout::row_major ? 1 : 0, l.getAlign());
}

namespace {
/// The physical layout a kernel reads a 2-D operand in: the unit-stride
/// dimension and the rounding of the other stride.
struct Want {
  int contiguous = 1;
  int64_t align = 1;
};
} // namespace

/// What operand `i` of a GEMM must look like.
static Want gemmOperandWant(mbs::MatmulOp mm, unsigned i) {
  auto fromScale = [](mbs::ScaleLayoutAttr l) {
    return Want{l.getOrder() == mbs::Layout::row_major ? 1 : 0, l.getAlign()};
  };
  switch (i) {
  case 1:
    return fromScale(mm.getAScaleLayoutAttr());
  case 2:
    return Want{0, 1}; // B column-major (K contiguous): the TMA box's K rows
  case 3:
    return fromScale(mm.getBScaleLayoutAttr());
  default:
    return Want{1, 1};
  }
}

/// The layout the first GEMM reading `v` wants, looking through collectives
/// (they keep the physical order of what they move).
static std::optional<Want> consumerWant(mlir::Value v, int depth = 0) {
  if (depth > 8)
    return std::nullopt;
  for (mlir::OpOperand &use : v.getUses()) {
    mlir::Operation *o = use.getOwner();
    if (auto mm = llvm::dyn_cast<mbs::MatmulOp>(o))
      return gemmOperandWant(mm, use.getOperandNumber());
    if (llvm::isa<mlir::shard::AllGatherOp, mlir::shard::ReduceScatterOp,
                  mlir::shard::AllReduceOp>(o))
      if (auto w = consumerWant(o->getResult(0), depth + 1))
        return w;
  }
  return std::nullopt;
}

/// The plan's tensors and steps, with the kernel steps' descriptions.
static llvm::Expected<DevicePlan> planSteps(llvm::StringRef partitioned,
                                            llvm::StringRef funcName) {
  PlanSession ps;
  if (auto e = ps.parse(partitioned))
    return std::move(e);
  mlir::ModuleOp m = *ps.module;
  mlir::PassManager pm(&ps.pc.ctx);
  pm.addPass(mbs::createBlockScalePadScales());
  pm.addPass(mbs::createBlockScaleVerifyLayouts());
  if (mlir::failed(pm.run(m)))
    return err("the device program's layouts are not what the kernels "
               "read:\n" +
               ps.diag.text);

  DevicePlan plan;
  auto gridOr = gridShapeOf(m);
  if (!gridOr)
    return gridOr.takeError();
  plan.gridShape = std::move(*gridOr);
  auto fnOr = findFunction(m, funcName);
  if (!fnOr)
    return fnOr.takeError();
  mlir::func::FuncOp fn = *fnOr;
  if (fn.getBody().empty())
    return err("@" + fn.getSymName().str() + " has no body");

  llvm::DenseMap<mlir::Value, int> ids;
  // Registers `v` with the layout `info` (an error when it could not be
  // laid out: dynamic sizes, int64 overflow); returns its id.
  auto add = [&](mlir::Value v,
                 llvm::Expected<TensorInfo> info) -> llvm::Expected<int> {
    if (!info)
      return info.takeError();
    ids[v] = int(plan.tensors.size());
    plan.tensors.push_back(std::move(*info));
    return ids[v];
  };
  auto id = [&](mlir::Value v) -> int {
    auto it = ids.find(v);
    return it == ids.end() ? -1 : it->second;
  };
  auto known = [&](mlir::Value v, mlir::Operation &op) -> llvm::Expected<int> {
    int i = id(v);
    if (i < 0)
      return err("operation " + op.getName().getStringRef().str() +
                 " reads a value the plan does not know (dynamic size?)");
    return i;
  };

  // Arguments: their layout is what their (first) consumer reads.
  for (mlir::BlockArgument arg : fn.getArguments()) {
    auto t = llvm::dyn_cast<mlir::RankedTensorType>(arg.getType());
    if (!t || t.getRank() != 2)
      return err(llvm::formatv("argument #{0} of @{1} is not a 2-D tensor",
                               arg.getArgNumber(), fn.getSymName()));
    std::string name = llvm::formatv("arg{0}", arg.getArgNumber()).str();
    // Arguments are laid out as their (first) GEMM reads them.
    Want w = consumerWant(arg).value_or(Want{1, 1});
    auto a = add(arg, makeInfo("argument " + name, t, w.contiguous, w.align));
    if (!a)
      return a.takeError();
    plan.tensors[*a].name = name;
    plan.args.push_back(*a);
  }

  for (mlir::Operation &op : fn.getBody().front()) {
    Step st;
    if (auto q = llvm::dyn_cast<mbs::QuantizeOp>(op)) {
      auto in = llvm::cast<mlir::RankedTensorType>(q.getInput().getType());
      st.kind = Step::Kind::Quantize;
      st.quant.in = mbs::toRuntimeDType(in.getElementType());
      st.quant.out = mbs::toRuntimeFp8(q.getResult().getType().getElementType());
      auto [br, bc] = mbs::getBlockShape(q.getRecipe());
      if (q.getRecipe() == mbs::ScaleRecipe::tensorwise)
        return err("tensorwise casts have no kernel");
      st.quant.blockRows = int(br);
      st.quant.blockCols = int(bc);
      st.quant.transpose = q.getTranspose();
      st.quant.colMajor = q.getLayout() == mbs::Layout::col_major;
      st.quant.rows = in.getDimSize(0);
      st.quant.cols = in.getDimSize(1);
      auto x = known(q.getInput(), op);
      if (!x)
        return x.takeError();
      st.inputs = {*x};
      auto qi = add(q.getResult(),
                    makeInfo(llvm::formatv("q{0}", plan.steps.size()).str(),
                             q.getResult().getType(),
                             st.quant.colMajor ? 0 : 1, 1));
      if (!qi)
        return qi.takeError();
      auto si = add(q.getScale(),
                    scaleInfo(llvm::formatv("s{0}", plan.steps.size()).str(),
                              q.getScale(), q.getScaleLayoutAttr()));
      if (!si)
        return si.takeError();
      st.outputs = {*qi, *si};
    } else if (auto mm = llvm::dyn_cast<mbs::MatmulOp>(op)) {
      st.kind = Step::Kind::Gemm;
      st.gemm.form = mm.getForm() == mbs::GemmForm::wgrad ? GemmForm::Wgrad
                     : mm.getForm() == mbs::GemmForm::dgrad
                         ? GemmForm::Dgrad
                         : GemmForm::Fwd;
      st.gemm.m = mm.getM();
      st.gemm.mHint = mm.getM();
      st.gemm.n = mm.getN();
      st.gemm.k = mm.getK();
      st.gemm.a = mbs::toRuntimeFp8(mm.getA().getType().getElementType());
      st.gemm.b = mbs::toRuntimeFp8(mm.getB().getType().getElementType());
      st.gemm.out = mbs::toRuntimeDType(mm.getC().getType().getElementType());
      st.gemm.accumulate = static_cast<bool>(mm.getAcc());
      for (auto [i, v] : llvm::enumerate(mm->getOperands())) {
        st.inputs.push_back(id(v));
        if (st.inputs.back() < 0)
          return err("a GEMM reads a value the plan does not know");
        if (i > 3)
          continue;
        // A buffer that reached the GEMM through a collective or a cast
        // keeps its producer's layout; a wrong one would be read silently.
        const TensorInfo &ti = plan.tensors[st.inputs.back()];
        Want w = gemmOperandWant(mm, unsigned(i));
        if (ti.strides.size() == 2 && ti.strides[w.contiguous] != 1)
          return err(llvm::formatv(
              "operand #{0} of blockscale.matmul ({1}, {2}x{3}) has dimension "
              "{4} unit-stride but the kernel reads dimension {5} "
              "unit-stride; produce it in that layout",
              i, ti.name, ti.shape[0], ti.shape[1], 1 - w.contiguous,
              w.contiguous));
      }
      auto c = add(mm.getC(),
                   makeInfo(llvm::formatv("c{0}", plan.steps.size()).str(),
                            mm.getC().getType(), 1, 1));
      if (!c)
        return c.takeError();
      st.outputs = {*c};
    } else if (auto ar = llvm::dyn_cast<mlir::shard::AllReduceOp>(op)) {
      st.kind = Step::Kind::AllReduce;
      for (auto a : ar.getGridAxes())
        st.gridAxes.push_back(a);
      if (auto e = checkGridAxes(st.gridAxes, plan.gridShape, "shard.all_reduce"))
        return std::move(e);
      auto x = known(ar.getInput(), op);
      if (!x)
        return x.takeError();
      st.inputs = {*x};
      TensorInfo o = plan.tensors[*x];
      o.name = llvm::formatv("r{0}", plan.steps.size()).str();
      if (ar.getResult().getType() != ar.getInput().getType())
        return err("shard.all_reduce changes its tensor's type; the executor "
                   "reduces in place types");
      auto r = add(ar.getResult(), std::move(o));
      if (!r)
        return r.takeError();
      st.outputs = {*r};
    } else if (llvm::isa<mlir::shard::AllGatherOp, mlir::shard::ReduceScatterOp>(
                   op)) {
      bool gather = llvm::isa<mlir::shard::AllGatherOp>(op);
      const char *opName =
          gather ? "shard.all_gather" : "shard.reduce_scatter";
      st.kind = gather ? Step::Kind::AllGather : Step::Kind::ReduceScatter;
      mlir::Value in = op.getOperand(0);
      llvm::ArrayRef<int16_t> axes =
          gather ? llvm::cast<mlir::shard::AllGatherOp>(op).getGridAxes()
                 : llvm::cast<mlir::shard::ReduceScatterOp>(op).getGridAxes();
      for (int16_t a : axes)
        st.gridAxes.push_back(a);
      if (auto e = checkGridAxes(st.gridAxes, plan.gridShape, opName))
        return std::move(e);
      llvm::APInt axis =
          gather ? llvm::cast<mlir::shard::AllGatherOp>(op).getGatherAxis()
                 : llvm::cast<mlir::shard::ReduceScatterOp>(op).getScatterAxis();
      auto x = known(in, op);
      if (!x)
        return x.takeError();
      st.inputs = {*x};
      // Same physical order and leading stride; the outer extent changes.
      const TensorInfo src = plan.tensors[*x];
      auto rt = llvm::dyn_cast<mlir::RankedTensorType>(op.getResult(0).getType());
      if (src.shape.size() != 2 || src.strides.size() != 2 || !rt ||
          rt.getRank() != 2)
        return err(llvm::formatv("{0} moves a {1} tensor; the executor "
                                 "moves 2-D tensors",
                                 opName, mbs::shapeToString(src.shape))
                       .str());
      if (axis.getActiveBits() > 2 || axis.getZExtValue() > 1)
        return err(llvm::formatv("expected the {0} axis of {1} to be 0 or 1 "
                                 "(a 2-D tensor) but got {2}",
                                 gather ? "gather" : "scatter", opName,
                                 llvm::toString(axis, 10, false))
                       .str());
      st.axis = int(axis.getZExtValue());
      // NCCL's all_gather / reduce_scatter concatenate / split contiguous
      // chunks: only the physical outer dimension can be the axis.
      if (st.axis != src.outerDim())
        return err(llvm::formatv(
            "{0} along logical dimension {1} of a {2}x{3} tensor whose "
            "physical outer dimension is {4}: the executor moves contiguous "
            "chunks only; split that tensor along dimension {4} instead",
            opName, st.axis, src.shape[0], src.shape[1], src.outerDim()));
      TensorInfo o = src;
      o.name = llvm::formatv("{0}{1}", gather ? "g" : "rs", plan.steps.size()).str();
      o.shape.assign(rt.getShape().begin(), rt.getShape().end());
      int outer = src.outerDim();
      std::optional<int64_t> n;
      if (!mlir::ShapedType::isDynamic(o.shape[outer]) && o.shape[outer] >= 0)
        n = llvm::checkedMul<int64_t>(o.shape[outer],
                                      std::max(src.strides[0], src.strides[1]));
      if (!n || !llvm::checkedMul<int64_t>(*n, elemBytes(o.type)))
        return err(llvm::formatv("the result of {0} ({1}) has a dynamic size "
                                 "or more than 2^63 - 1 bytes",
                                 opName, mbs::shapeToString(o.shape))
                       .str());
      o.allocElements = *n;
      auto r = add(op.getResult(0), std::move(o));
      if (!r)
        return r.takeError();
      st.outputs = {*r};
    } else if (auto ret = llvm::dyn_cast<mlir::func::ReturnOp>(op)) {
      for (mlir::Value v : ret.getOperands()) {
        if (id(v) < 0)
          return err("a returned value is not computed by the plan");
        plan.results.push_back(id(v));
      }
      continue;
    } else {
      return err("unsupported operation in a device plan: " +
                 op.getName().getStringRef().str() +
                 " (plans hold blockscale ops and shard collectives)");
    }
    plan.steps.push_back(std::move(st));
  }
  return plan;
}

llvm::Expected<DevicePlan> dist::buildDevicePlan(llvm::StringRef partitioned,
                                                 llvm::StringRef funcName) {
  auto plan = planSteps(partitioned, funcName);
  if (!plan)
    return plan.takeError();
  // Each kernel's source and launch choices, so that the executor needs no
  // MLIR (planned after planSteps has released the MLIR context).
  for (Step &st : plan->steps) {
    if (st.kind == Step::Kind::Gemm) {
      auto k = planGemm(st.gemm);
      if (!k)
        return k.takeError();
      st.kernelSource = std::move(k->source);
      st.launch = k->launch;
    } else if (st.kind == Step::Kind::Quantize) {
      auto k = planQuantize(st.quant);
      if (!k)
        return k.takeError();
      st.kernelSource = std::move(k->source);
    }
  }
  return plan;
}

//===----------------------------------------------------------------------===//
// Shardings of a program's interface
//===----------------------------------------------------------------------===//

static std::vector<std::vector<int>> splitsOf(mlir::Value sharding,
                                              int64_t rank) {
  std::vector<std::vector<int>> out(rank);
  auto op = sharding.getDefiningOp<mlir::shard::ShardingOp>();
  if (!op)
    return out;
  for (auto [d, axes] : llvm::enumerate(op.getSplitAxes().getAxes()))
    if (int64_t(d) < rank)
      for (int16_t a : axes.asArrayRef())
        out[d].push_back(a);
  return out;
}

llvm::Expected<ProgramShardings>
dist::describeShardings(llvm::StringRef source, llvm::StringRef funcName,
                        llvm::StringRef sourceName) {
  PlanSession ps;
  if (auto e = ps.parse(source, sourceName))
    return std::move(e);
  mlir::ModuleOp m = *ps.module;
  ProgramShardings out;
  auto gridOr = gridShapeOf(m);
  if (!gridOr)
    return gridOr.takeError();
  out.gridShape = std::move(*gridOr);
  auto fnOr = findFunction(m, funcName);
  if (!fnOr)
    return fnOr.takeError();
  mlir::func::FuncOp fn = *fnOr;
  auto rankOf = [](mlir::Type t) {
    auto rt = llvm::dyn_cast<mlir::RankedTensorType>(t);
    return rt ? rt.getRank() : int64_t(0);
  };
  for (mlir::BlockArgument arg : fn.getArguments()) {
    std::vector<std::vector<int>> s(rankOf(arg.getType()));
    for (mlir::Operation *user : arg.getUsers())
      if (auto sh = llvm::dyn_cast<mlir::shard::ShardOp>(user))
        if (!sh.getAnnotateForUsers()) {
          s = splitsOf(sh.getSharding(), rankOf(arg.getType()));
          break;
        }
    out.args.push_back(std::move(s));
  }
  fn.walk([&](mlir::func::ReturnOp ret) {
    for (mlir::Value v : ret.getOperands()) {
      std::vector<std::vector<int>> s(rankOf(v.getType()));
      if (auto sh = v.getDefiningOp<mlir::shard::ShardOp>())
        s = splitsOf(sh.getSharding(), rankOf(v.getType()));
      out.results.push_back(std::move(s));
    }
  });
  // The runner indexes the grid with these axes.
  for (auto *list : {&out.args, &out.results})
    for (const std::vector<std::vector<int>> &t : *list) {
      std::vector<int> all;
      for (const std::vector<int> &d : t)
        all.insert(all.end(), d.begin(), d.end());
      if (auto e = checkGridAxes(all, out.gridShape,
                                 "a sharding of @" + fn.getSymName().str()))
        return std::move(e);
    }

  // The unsharded program: shard ops forward their source.
  llvm::SmallVector<mlir::Operation *> dead;
  m.walk([&](mlir::shard::ShardOp sh) {
    sh.getResult().replaceAllUsesWith(sh.getSrc());
    dead.push_back(sh);
  });
  for (mlir::Operation *op : dead)
    op->erase();
  dead.clear();
  m.walk([&](mlir::Operation *op) {
    if (llvm::isa<mlir::shard::ShardingOp, mlir::shard::GridOp>(op))
      dead.push_back(op);
  });
  bool other = false;
  for (mlir::Operation *op : dead)
    other |= !op->use_empty();
  m.walk([&](mlir::Operation *op) {
    other |= !llvm::is_contained(dead, op) &&
             llvm::isa<mlir::shard::ShardDialect>(op->getDialect());
  });
  if (other)
    return err("the program has shard ops other than shard.grid, "
               "shard.sharding and shard.shard (collectives are what "
               "partitioning inserts); it has no unsharded form");
  for (mlir::Operation *op : dead)
    op->erase();
  llvm::raw_string_ostream os(out.unsharded);
  m.print(os, mlir::OpPrintingFlags().enableDebugInfo());
  return out;
}
