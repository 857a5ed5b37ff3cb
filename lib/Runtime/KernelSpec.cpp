//===- KernelSpec.cpp - kernel descriptions and their text form -*- C++ -*-===//

#include "blockscale/Runtime/KernelSpec.h"
#include "blockscale/Runtime/Gemm.h"
#include "blockscale/Target/Cuda/Kernels/params.h"

#include <cstdlib>
#include <cstring>

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
int blockscale::dtypeBytes(DType t) { return t == DType::F32 ? 4 : 2; }

int GemmKernelSpec::smemBytes() const {
  return bs::gemmSmemBytes(bm, bn, stages, dtypeBytes(out), wgrad(), ksplit);
}

std::optional<bool> blockscale::envSwitch(const char *name) {
  const char *e = std::getenv(name);
  if (!e || !*e)
    return std::nullopt;
  return std::strcmp(e, "0") != 0;
}

bool QuantKernelSpec::staged() const {
  // BLOCKSCALE_EXP_QUANT_DIRECT=1 (an experiment) casts every tile in a
  // CTA of its own, loading straight from global memory.
  static const bool direct =
      envSwitch("BLOCKSCALE_EXP_QUANT_DIRECT").value_or(false);
  return !direct;
}

int QuantKernelSpec::threads() const {
  return bs::quantThreads(dtypeBytes(in), br, transposed, staged());
}

int QuantKernelSpec::smemBytes() const {
  return staged() ? bs::quantSmemBytes(dtypeBytes(in)) : 0;
}

std::string KernelSpec::serialize() const {
  if (kind == KernelKind::Gemm)
    return llvm::formatv("kind=gemm name={0} form={1} a={2} b={3} out={4} "
                         "accumulate={5} bm={6} bn={7} stages={8} cluster={9} "
                         "ksplit={10}",
                         name, toString(gemm.form), toString(gemm.a),
                         toString(gemm.b), toString(gemm.out),
                         gemm.accumulate ? 1 : 0, gemm.bm, gemm.bn,
                         gemm.stages, gemm.cluster, gemm.ksplit)
        .str();
  return llvm::formatv("kind=quantize name={0} in={1} out={2} br={3} bc={4} "
                       "transposed={5}",
                       name, toString(quant.in), toString(quant.out), quant.br,
                       quant.bc, quant.transposed ? 1 : 0)
      .str();
}

static llvm::Error bad(llvm::StringRef what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "malformed kernel spec: %s",
                                 what.str().c_str());
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

  KernelSpec spec;
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

//===----------------------------------------------------------------------===//
// Descriptors
//===----------------------------------------------------------------------===//

static llvm::Error invalid(const std::string &msg) {
  return llvm::createStringError(std::errc::invalid_argument, msg.c_str());
}

std::string GemmDesc::key() const {
  return llvm::formatv("gemm:{0}:{1}:{2}:{3}:{4}:{5}:{6}:{7}:{8}:{9}:{10}",
                       toString(form), m, n, k, toString(a), toString(b),
                       toString(out), accumulate ? 1 : 0,
                       m < 0 ? mHint : 0, forceTile, numSMs)
      .str();
}

llvm::Error GemmDesc::validate() const {
  if (n <= 0 || k <= 0)
    return invalid(llvm::formatv("GemmDesc: expected N > 0 and K > 0 but got "
                                 "N = {0}, K = {1}",
                                 n, k));
  if (m == 0 || m < -1)
    return invalid(llvm::formatv(
        "GemmDesc: expected M > 0 or M = -1 (dynamic) but got M = {0}", m));
  if (accumulate && out != DType::F32)
    return invalid("GemmDesc: accumulate (C += A @ B) needs out = f32 but got "
                   "out = " +
                   toString(out).str());
  if (out == DType::F16)
    return invalid("GemmDesc: expected out = bf16 or f32 but got f16");
  if (k % 16 != 0)
    return invalid(llvm::formatv(
        "GemmDesc: expected K to be a multiple of 16 (TMA needs 16-byte FP8 "
        "rows) but got K = {0}; pad K to {1} with zeros",
        k, (k + 15) / 16 * 16));
  int outBytes = dtypeBytes(out);
  if (n * outBytes % 16 != 0)
    return invalid(llvm::formatv(
        "GemmDesc: expected N * {0} bytes to be a multiple of 16 (TMA store of "
        "C) but got N = {1}; pad N to {2}",
        outBytes, n, (n + 16 / outBytes - 1) / (16 / outBytes) * (16 / outBytes)));
  return llvm::Error::success();
}

std::string QuantDesc::key() const {
  return llvm::formatv("quant:{0}:{1}:{2}x{3}:{4}:{5}:{6}:{7}", toString(in),
                       toString(out), blockRows, blockCols, transpose ? 1 : 0,
                       colMajor ? 1 : 0, rows, cols)
      .str();
}

llvm::Error QuantDesc::validate() const {
  bool ok = (blockRows == 1 && blockCols == 128) ||
            (blockRows == 128 && blockCols == 1) ||
            (blockRows == 128 && blockCols == 128);
  if (!ok)
    return invalid(llvm::formatv("QuantDesc: expected a 1x128, 128x1 or "
                                 "128x128 recipe but got {0}x{1}",
                                 blockRows, blockCols));
  if (cols <= 0 || rows == 0 || rows < -1)
    return invalid(llvm::formatv(
        "QuantDesc: expected cols > 0 and rows > 0 (or -1) but got {0}x{1}",
        rows, cols));
  int inBytes = dtypeBytes(in);
  if (cols * inBytes % 16 != 0)
    return invalid(llvm::formatv(
        "QuantDesc: expected input rows of a multiple of 16 bytes but got "
        "cols = {0} ({1}); pad cols to {2}",
        cols, toString(in), (cols * inBytes + 15) / 16 * 16 / inBytes));
  if (!writesTransposed() && cols % 16 != 0)
    return invalid(llvm::formatv("QuantDesc: expected cols to be a multiple "
                                 "of 16 (FP8 rows for TMA) but got {0}",
                                 cols));
  if (writesTransposed() && rows > 0 && rows % 16 != 0)
    return invalid(llvm::formatv(
        "QuantDesc: expected rows to be a multiple of 16 for a transposed "
        "result (its FP8 rows are the input's columns) but got {0}",
        rows));
  return llvm::Error::success();
}
