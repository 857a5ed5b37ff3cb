//===- KernelSpec.cpp - kernel descriptions and their text form -*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "blockscale/Runtime/KernelSpec.h"
#include "blockscale/Runtime/Error.h"
#include "blockscale/Target/Cuda/Kernels/params.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

using namespace blockscale;

llvm::StringRef blockscale::toString(GemmForm f) {
  switch (f) {
  case GemmForm::Fwd:
    return "fwd";
  case GemmForm::Dgrad:
    return "dgrad";
  case GemmForm::Wgrad:
    return "wgrad";
  }
  return "?";
}
llvm::StringRef blockscale::toString(Fp8Type t) {
  return t == Fp8Type::E4M3 ? "e4m3" : "e5m2";
}
llvm::StringRef blockscale::toString(DType t) {
  switch (t) {
  case DType::BF16:
    return "bf16";
  case DType::F16:
    return "f16";
  case DType::F32:
    return "f32";
  }
  return "?";
}
llvm::StringRef blockscale::toString(Grouping g) {
  switch (g) {
  case Grouping::Contiguous:
    return "contiguous";
  case Grouping::Masked:
    return "masked";
  case Grouping::KContiguous:
    return "k_contiguous";
  }
  return "?";
}
int blockscale::dtypeBytes(DType t) { return t == DType::F32 ? 4 : 2; }

int GemmKernelSpec::smemBytes() const {
  // (The kernel keeps the B-scale stash only where it runs the stage-aligned
  // loop: GemmConfig::kAlignedK.)
  return bs::gemmSmemBytes(
      bm, bn, stages, dtypeBytes(out), wgrad(), ksplit,
      bs::gemmStageAlignable(bm, bn, cluster, wgrad(), ksplit) ? kblocks : 0);
}

int blockscale::stageAlignedKBlocks(const GemmKernelSpec &s, int64_t k,
                                    int64_t splits) {
  if (!bs::gemmStageAlignable(s.bm, s.bn, s.cluster, s.wgrad(), s.ksplit) ||
      splits > 1 || k <= 0 || s.stages < 1)
    return 0;
  const int64_t kb = (k + 127) / 128;
  // The last round pads the K-blocks to whole rounds of stages with empty
  // ones, which cost about a K-block's wait each. On the H200, K = 512 in 3
  // stages (two empty stages per four K-blocks) ran at 0.92-0.97x of the
  // run-time K loop; one or two per 32-128 K-blocks ran 1.02-1.05x faster.
  const int64_t padded = (s.stages - kb % s.stages) % s.stages;
  if (padded * 16 > kb || kb > (int64_t(1) << 20))
    return 0;
  // A one-wave tile does half the work per K-block of a two-wave one, so
  // its per-tile start (the B-scale stash and the consumers' meeting) weighs
  // twice as much. Same process (H100, bench/ab.py, 128 x 192 tiles, single
  // CTAs and pairs): 24 and more K-blocks ran 0.98-1.07x the run-time K
  // loop, 16 ran 0.92-1.00x. From 24 K-blocks, single 128 x 144 and
  // 64 x 192 CTAs ran 1.02-1.24x (H200, the planner's choices at
  // 64x24576x3072, 16x24576x16384, 768x3072x3072, 4096x576x16384). The
  // one-wave tiles not measured (bn = 160, bm = 64 with bn = 144, pairs
  // other than 128 x 192) keep the run-time loop.
  const bool measured = (s.bm == 128 && s.bn == 192) ||
                        (s.cluster == 1 && ((s.bm == 128 && s.bn == 144) ||
                                            (s.bm == 64 && s.bn == 192)));
  if (s.bm <= 128 && (!measured || kb < 24))
    return 0;
  if (bs::gemmSmemBytes(s.bm, s.bn, s.stages, dtypeBytes(s.out), false, 1,
                        int(kb)) > bs::kMaxDynamicSmemBytes)
    return 0;
  return int(kb);
}

int QuantKernelSpec::threads() const {
  // A dual cast runs the transposing cast's pipeline, whose blocks are those
  // of the transposed result (128 rows of the input).
  return dual ? bs::quantThreads(dtypeBytes(in), 128, true)
              : bs::quantThreads(dtypeBytes(in), br, transposed);
}

int QuantKernelSpec::smemBytes() const {
  return bs::quantSmemBytes(dtypeBytes(in));
}

static bool isCast(KernelKind k) {
  return k == KernelKind::Quantize || k == KernelKind::GroupedQuantize;
}

int KernelSpec::threads() const {
  return isCast(kind) ? quant.threads() : gemm.threads();
}

int KernelSpec::smemBytes() const {
  if (kind == KernelKind::GroupedQuantize)
    return bs::groupedQuantSmemBytes(dtypeBytes(quant.in));
  return isCast(kind) ? quant.smemBytes() : gemm.smemBytes();
}

static_assert(DebugHang == bs::kDebugHang && DebugTimeline == bs::kDebugTimeline,
              "host and kernel debug flags differ");

std::string blockscale::debugString(unsigned debug) {
  std::string s;
  if (debug & DebugHang)
    s += "hang";
  if (debug & DebugTimeline)
    s += s.empty() ? "timeline" : ",timeline";
  return s;
}

llvm::Expected<unsigned> blockscale::parseDebug(llvm::StringRef list) {
  unsigned debug = DebugNone;
  llvm::SmallVector<llvm::StringRef> items;
  list.split(items, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef item : items) {
    item = item.trim();
    if (item == "hang")
      debug |= DebugHang;
    else if (item == "timeline")
      debug |= DebugTimeline;
    else
      return invalidArgument("expected debug options from hang, timeline but "
                             "got '" +
                             item + "'");
  }
  return debug;
}

std::string KernelSpec::serialize() const {
  std::string dbg = debug ? " debug=" + debugString(debug) : "";
  if (kind == KernelKind::Gemm)
    return llvm::formatv("kind=gemm name={0} form={1} a={2} b={3} out={4} "
                         "accumulate={5} bm={6} bn={7} stages={8} cluster={9} "
                         "ksplit={10}",
                         name, toString(gemm.form), toString(gemm.a),
                         toString(gemm.b), toString(gemm.out),
                         gemm.accumulate ? 1 : 0, gemm.bm, gemm.bn,
                         gemm.stages, gemm.cluster, gemm.ksplit)
               .str() +
           (gemm.kblocks > 0 ? " kblocks=" + std::to_string(gemm.kblocks)
                             : std::string()) +
           dbg;
  if (kind == KernelKind::GroupedGemm)
    return llvm::formatv("kind=grouped name={0} a={1} b={2} out={3} bm={4} "
                         "bn={5} stages={6}",
                         name, toString(gemm.a), toString(gemm.b),
                         toString(gemm.out), gemm.bm, gemm.bn, gemm.stages)
               .str() +
           // (k-grouped kernels only: an m-grouped spec line stays as it was.)
           (gemm.wgrad() ? llvm::formatv(" grouping=k accumulate={0}",
                                         gemm.accumulate ? 1 : 0)
                               .str()
                         : std::string()) +
           (gemm.cluster > 1 ? " cluster=" + std::to_string(gemm.cluster)
                             : std::string()) +
           (gemm.kblocks > 0 ? " kblocks=" + std::to_string(gemm.kblocks)
                             : std::string()) +
           dbg;
  if (kind == KernelKind::GroupedQuantize)
    return llvm::formatv("kind=grouped_quantize name={0} in={1} out={2}", name,
                         toString(quant.in), toString(quant.out))
               .str() +
           dbg;
  return llvm::formatv("kind=quantize name={0} in={1} out={2} br={3} bc={4} "
                       "transposed={5}",
                       name, toString(quant.in), toString(quant.out), quant.br,
                       quant.bc, quant.transposed ? 1 : 0)
             .str() +
         (quant.dual ? " dual=1" : "") + (quant.grouped ? " grouped=1" : "") +
         dbg;
}

static llvm::Error bad(llvm::StringRef what) {
  return invalidArgument("malformed kernel spec: " + what);
}

llvm::Expected<KernelSpec> KernelSpec::parse(llvm::StringRef line) {
  llvm::StringMap<std::string> kv;
  llvm::SmallVector<llvm::StringRef> items;
  line.trim().split(items, ' ', -1, false);
  for (llvm::StringRef item : items) {
    auto [k, v] = item.split('=');
    kv[k] = v.str();
  }
  auto get = [&](llvm::StringRef k) -> llvm::Expected<std::string> {
    auto it = kv.find(k);
    if (it == kv.end())
      return bad("missing " + k.str());
    return it->second;
  };
  auto getInt = [&](llvm::StringRef k) -> llvm::Expected<int> {
    auto s = get(k);
    if (!s)
      return s.takeError();
    int v;
    if (llvm::StringRef(*s).getAsInteger(10, v))
      return bad(k.str() + "=" + *s);
    return v;
  };
  auto fp8 = [&](llvm::StringRef k) -> llvm::Expected<Fp8Type> {
    auto s = get(k);
    if (!s)
      return s.takeError();
    if (*s == "e4m3")
      return Fp8Type::E4M3;
    if (*s == "e5m2")
      return Fp8Type::E5M2;
    return bad(k.str() + "=" + *s);
  };
  auto dtype = [&](llvm::StringRef k) -> llvm::Expected<DType> {
    auto s = get(k);
    if (!s)
      return s.takeError();
    if (*s == "bf16")
      return DType::BF16;
    if (*s == "f16")
      return DType::F16;
    if (*s == "f32")
      return DType::F32;
    return bad(k.str() + "=" + *s);
  };
  // The K-block count a GEMM kernel is specialized for (none: the kernel
  // serves any K); only tiles with the stage-aligned K loop have one. Read
  // after the tile, cluster and ksplit.
  auto kblocks = [&](GemmKernelSpec &g) -> llvm::Error {
    if (!kv.count("kblocks"))
      return llvm::Error::success();
    auto kb = getInt("kblocks");
    if (!kb)
      return kb.takeError();
    if (*kb < 0 || (*kb > 0 && !bs::gemmStageAlignable(g.bm, g.bn, g.cluster,
                                                       g.wgrad(), g.ksplit)))
      return bad("kblocks=" + std::to_string(*kb));
    g.kblocks = *kb;
    return llvm::Error::success();
  };

  KernelSpec spec;
  if (kv.count("debug")) {
    auto debug = parseDebug(kv["debug"]);
    if (!debug)
      return debug.takeError();
    spec.debug = *debug;
  }
  auto kind = get("kind");
  auto name = get("name");
  if (!kind)
    return kind.takeError();
  if (!name)
    return name.takeError();
  spec.name = *name;
  if (*kind == "gemm") {
    spec.kind = KernelKind::Gemm;
    auto form = get("form");
    if (!form)
      return form.takeError();
    if (*form == "fwd")
      spec.gemm.form = GemmForm::Fwd;
    else if (*form == "dgrad")
      spec.gemm.form = GemmForm::Dgrad;
    else if (*form == "wgrad")
      spec.gemm.form = GemmForm::Wgrad;
    else
      return bad("form=" + *form);
    auto a = fp8("a"), b = fp8("b");
    auto out = dtype("out");
    auto acc = getInt("accumulate"), bm = getInt("bm"), bn = getInt("bn"),
         st = getInt("stages"), cl = getInt("cluster");
    if (!a || !b || !out || !acc || !bm || !bn || !st || !cl) {
      llvm::Error e = llvm::joinErrors(a.takeError(), b.takeError());
      e = llvm::joinErrors(std::move(e), out.takeError());
      e = llvm::joinErrors(std::move(e), acc.takeError());
      e = llvm::joinErrors(std::move(e), bm.takeError());
      e = llvm::joinErrors(std::move(e), bn.takeError());
      e = llvm::joinErrors(std::move(e), cl.takeError());
      return llvm::joinErrors(std::move(e), st.takeError());
    }
    spec.gemm.a = *a;
    spec.gemm.b = *b;
    spec.gemm.out = *out;
    spec.gemm.accumulate = *acc != 0;
    spec.gemm.bm = *bm;
    spec.gemm.bn = *bn;
    spec.gemm.stages = *st;
    spec.gemm.cluster = *cl;
    // (A spec line from before ksplit existed has none: no cluster sum.)
    if (kv.count("ksplit")) {
      auto ks = getInt("ksplit");
      if (!ks)
        return ks.takeError();
      spec.gemm.ksplit = *ks;
    }
    if (llvm::Error e = kblocks(spec.gemm))
      return std::move(e);
    return spec;
  }
  if (*kind == "grouped") {
    spec.kind = KernelKind::GroupedGemm;
    auto a = fp8("a"), b = fp8("b");
    auto out = dtype("out");
    auto bm = getInt("bm"), bn = getInt("bn"), st = getInt("stages");
    if (!a || !b || !out || !bm || !bn || !st) {
      llvm::Error e = llvm::joinErrors(a.takeError(), b.takeError());
      e = llvm::joinErrors(std::move(e), out.takeError());
      e = llvm::joinErrors(std::move(e), bm.takeError());
      e = llvm::joinErrors(std::move(e), bn.takeError());
      return llvm::joinErrors(std::move(e), st.takeError());
    }
    spec.gemm.a = *a;
    spec.gemm.b = *b;
    spec.gemm.out = *out;
    spec.gemm.bm = *bm;
    spec.gemm.bn = *bn;
    spec.gemm.stages = *st;
    if (kv.count("grouping")) {
      if (kv["grouping"] != "k")
        return bad("grouping=" + kv["grouping"]);
      auto acc = getInt("accumulate");
      if (!acc)
        return acc.takeError();
      spec.gemm.form = GemmForm::Wgrad;
      spec.gemm.accumulate = *acc != 0;
    }
    // (None: one CTA per tile.)
    if (kv.count("cluster")) {
      auto cl = getInt("cluster");
      if (!cl)
        return cl.takeError();
      if ((*cl != 1 && *cl != 2) ||
          (*cl == 2 && (spec.gemm.wgrad() || spec.gemm.bm == 64)))
        return bad("cluster=" + std::to_string(*cl));
      spec.gemm.cluster = *cl;
    }
    if (llvm::Error e = kblocks(spec.gemm))
      return std::move(e);
    return spec;
  }
  if (*kind == "grouped_quantize") {
    spec.kind = KernelKind::GroupedQuantize;
    auto in = dtype("in");
    auto out = fp8("out");
    if (!in || !out)
      return llvm::joinErrors(in.takeError(), out.takeError());
    spec.quant.in = *in;
    spec.quant.out = *out;
    spec.quant.br = 128;
    spec.quant.bc = 1;
    spec.quant.transposed = true;
    return spec;
  }
  if (*kind == "quantize") {
    spec.kind = KernelKind::Quantize;
    auto in = dtype("in");
    auto out = fp8("out");
    auto br = getInt("br"), bc = getInt("bc"), tr = getInt("transposed");
    if (!in || !out || !br || !bc || !tr) {
      llvm::Error e = llvm::joinErrors(in.takeError(), out.takeError());
      e = llvm::joinErrors(std::move(e), br.takeError());
      e = llvm::joinErrors(std::move(e), bc.takeError());
      return llvm::joinErrors(std::move(e), tr.takeError());
    }
    spec.quant.in = *in;
    spec.quant.out = *out;
    spec.quant.br = *br;
    spec.quant.bc = *bc;
    spec.quant.transposed = *tr != 0;
    // (None: a single-layout cast.)
    if (kv.count("dual")) {
      auto du = getInt("dual");
      if (!du)
        return du.takeError();
      if (*du != 0 && *du != 1)
        return bad("dual=" + std::to_string(*du));
      spec.quant.dual = *du == 1;
      if (spec.quant.dual &&
          (spec.quant.transposed || spec.quant.bc != 128 ||
           (spec.quant.br != 1 && spec.quant.br != 128)))
        return bad("dual=1 with a transposed or 128x1 cast");
    }
    // (None: a single matrix.)
    if (kv.count("grouped")) {
      auto gr = getInt("grouped");
      if (!gr)
        return gr.takeError();
      if (*gr != 0 && *gr != 1)
        return bad("grouped=" + std::to_string(*gr));
      spec.quant.grouped = *gr == 1;
      if (spec.quant.grouped &&
          (!spec.quant.dual || spec.quant.br != 128 || spec.quant.bc != 128))
        return bad("grouped=1 without dual=1 and 128x128 blocks");
    }
    return spec;
  }
  return bad("kind=" + *kind);
}

llvm::Expected<KernelSpec> KernelSpec::fromSource(llvm::StringRef source) {
  static constexpr llvm::StringLiteral marker = "// blockscale-spec:";
  size_t pos = source.find(marker);
  if (pos == llvm::StringRef::npos)
    return bad("no '// blockscale-spec:' line in the source");
  llvm::StringRef rest = source.substr(pos + marker.size());
  return parse(rest.take_until([](char c) { return c == '\n'; }));
}

