//===- GroupedQuantFamily.cpp - the group-aware cast family -----*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "LaunchSupport.h"
#include "blockscale/Runtime/Error.h"
#include "blockscale/Runtime/Runtime.h"
#include "blockscale/Target/Cuda/Kernels/params.h"

#include "llvm/Support/FormatVariadic.h"

#include <cstring>

using namespace blockscale;
using namespace blockscale::detail;

static constexpr int64_t kMaxDim = (int64_t(1) << 31) - 1;
// As the grouped GEMMs': every thread of the cast walks the offsets once.
static constexpr int64_t kMaxGroups = 1 << 16;

std::string GroupedQuantDesc::key() const {
  return llvm::formatv("gquant:{0}:{1}:{2}:{3}:{4}", toString(in),
                       toString(out), cols, groups, debug)
      .str();
}

llvm::Error GroupedQuantDesc::validate() const {
  if (groups <= 0 || groups > kMaxGroups)
    return invalidArgument(llvm::formatv(
        "GroupedQuantDesc: expected 0 < groups <= {0} but got groups = {1}",
        kMaxGroups, groups));
  if (cols <= 0 || cols > kMaxDim)
    return invalidArgument(llvm::formatv(
        "GroupedQuantDesc: expected 0 < cols < 2^31 but got cols = {0}", cols));
  if (debug & ~unsigned(DebugHang))
    return invalidArgument(llvm::formatv(
        "GroupedQuantDesc: expected debug flags from DebugHang (casts have no "
        "timeline) but got {0}",
        debug));
  const int inBytes = dtypeBytes(in);
  if (cols * inBytes % 16 != 0)
    return invalidArgument(llvm::formatv(
        "GroupedQuantDesc: expected input rows of a multiple of 16 bytes (TMA) "
        "but got cols = {0} ({1}); pad cols to {2}",
        cols, toString(in), (cols * inBytes + 15) / 16 * 16 / inBytes));
  return llvm::Error::success();
}

llvm::Expected<KernelSpec> GroupedQuantFamily::plan(const Desc &d) {
  if (llvm::Error e = d.validate())
    return std::move(e);
  KernelSpec s;
  s.kind = KernelKind::GroupedQuantize;
  s.quant.in = d.in;
  s.quant.out = d.out;
  s.quant.br = 128;
  s.quant.bc = 1;
  s.quant.transposed = true;
  s.debug = d.debug;
  s.name = blockscale::kernelName(s);
  return s;
}

std::string blockscale::describeGroupedQuantize(DType in, Fp8Type out) {
  return llvm::formatv("blockscale group-aware cast: {0} -> {1}, transposed, "
                       "128-token blocks per group",
                       toString(in), toString(out))
      .str();
}

std::string GroupedQuantFamily::kernelName(const Spec &q) {
  return llvm::formatv("bs_grouped_quantize_{0}_{1}", toString(q.in),
                       toString(q.out))
      .str();
}

void GroupedQuantFamily::writeInstantiation(const Spec &q,
                                            const std::string &name,
                                            llvm::raw_ostream &os) {
  const char *in = q.in == DType::BF16  ? "bs::InBf16"
                   : q.in == DType::F16 ? "bs::InF16"
                                        : "bs::InF32";
  os << "#include \"blockscale/cast_grouped.cuh\"\n\n";
  os << llvm::formatv("using BsKernel = bs::GroupedQuantizeTile<{0}, "
                      "/*FMT=*/{1}>;\n\n",
                      in, q.out == Fp8Type::E4M3 ? 0 : 1);
  os << "extern \"C\" __global__ void "
        "__launch_bounds__(BsKernel::kThreads, BsKernel::kMinCtas)\n"
     << name << "(const __grid_constant__ bs::GroupedQuantParams p,\n"
     << "    const __grid_constant__ bs::TmaDesc tX,\n"
     << "    const __grid_constant__ bs::TmaDesc tQ) {\n"
     << "  BsKernel::run(p, tX, tQ);\n}\n";
}

llvm::Error GroupedQuantFamily::launch(CompiledKernel &kernel,
                                       const LaunchConfig &, const Desc &q,
                                       const Args &a, CUstream stream) {
  if (kernel.spec.kind != KernelKind::GroupedQuantize)
    return invalidArgument("launchGroupedQuantize: " + kernel.spec.name +
                           " is not a group-aware cast kernel");
  if (kernel.spec.quant.in != q.in || kernel.spec.quant.out != q.out)
    return invalidArgument(llvm::formatv(
        "launchGroupedQuantize: kernel {0} was built for {1} -> {2} but the "
        "description says {3} -> {4}",
        kernel.spec.name, toString(kernel.spec.quant.in),
        toString(kernel.spec.quant.out), toString(q.in), toString(q.out)));
  const int64_t tokens = a.tokens, g = q.groups;
  if (tokens < 0 || tokens > kMaxDim)
    return invalidArgument(llvm::formatv(
        "launchGroupedQuantize: expected GroupedQuantArgs::tokens, the rows "
        "of x, in [0, 2^31) but got {0}",
        tokens));
  const int64_t minCap = groupedTokenCapacity(tokens, g);
  const int64_t cap = a.capacity ? a.capacity : minCap;
  if (cap < minCap || cap % 128 || cap > kMaxDim)
    return invalidArgument(llvm::formatv(
        "launchGroupedQuantize: expected the capacity to be a multiple of 128 "
        "of at least round_up(tokens, 128) + 128 G = {0} (every group may pad "
        "up to 127 tokens) and below 2^31 but got {1}",
        minCap, cap));
  // No tokens: every group is empty and nothing is written.
  if (tokens == 0)
    return llvm::Error::success();
  if (!a.x || !a.q || !a.s || !a.offs)
    return invalidArgument("launchGroupedQuantize: null pointer argument (x, "
                           "q, scale and offs are required)");
  if (!aligned16(a.x) || !aligned16(a.q) ||
      reinterpret_cast<uintptr_t>(a.s) % 4 ||
      reinterpret_cast<uintptr_t>(a.offs) % 4)
    return invalidArgument(llvm::formatv(
        "launchGroupedQuantize: expected 16-byte aligned x and q and 4-byte "
        "aligned scale and offs but got x = {0}, q = {1}, scale = {2}, offs = "
        "{3}",
        a.x, a.q, static_cast<const void *>(a.s),
        static_cast<const void *>(a.offs)));
  const int64_t cols = q.cols;
  const int64_t ldx = a.ldx ? a.ldx : cols;
  const int64_t kMaxStride = int64_t(1) << 40;
  if (ldx < cols || (ldx * dtypeBytes(q.in)) % 16 || ldx > kMaxStride)
    return invalidArgument(llvm::formatv(
        "launchGroupedQuantize: expected ldx >= cols = {0} with 16-byte rows, "
        "below 2^40, but got ldx = {1}",
        cols, ldx));
  // One row of cols scales per 128-token block (the 128x1 layout of the
  // padded (capacity, cols) input).
  auto sg = scaleGeometry(128, 1, cap, cols, a.ldScale);
  if (!sg)
    return withContext(sg.takeError(), "launchGroupedQuantize: scales: ");

  auto dOr = getCudaDriver();
  if (!dOr)
    return dOr.takeError();
  const CudaDriver &d = *dOr;
  auto fn = kernel.function();
  if (!fn)
    return fn.takeError();

  bs::GroupedQuantParams p;
  std::memset(&p, 0, sizeof(p));
  p.q.x = a.x;
  p.q.q = a.q;
  p.q.s = a.s;
  p.q.rows = int(tokens);
  p.q.cols = int(cols);
  p.q.ldx = ldx;
  p.q.ldq = cap;
  p.q.ssr = sg->strideRow;
  p.q.ssc = 1;
  p.q.keepResultInL2 = bs::quantKeepResultInL2(cap * cols) ? 1 : 0;
  p.offs = a.offs;
  p.numGroups = int(g);
  p.limit = int(cap - 128 * g);
  p.blocks = int(cap / 128);

  const QuantKernelSpec &qs = kernel.spec.quant;
  auto sms = currentDeviceSMs();
  if (!sms)
    return sms.takeError();
  // The tiles that hold tokens are known on the device only: as many
  // persistent CTAs as fit, or as the most tiles need.
  const int64_t maxTiles = ceilDiv(cols, 128) * (cap / 128);
  if (maxTiles >= (int64_t(1) << 31))
    return invalidArgument(llvm::formatv(
        "launchGroupedQuantize: {0} tokens of {1} columns make up to {2} "
        "tiles of 128x128, but the kernel counts them in 31 bits; cast them "
        "in parts",
        cap, cols, maxTiles));
  CUlaunchConfig cfg;
  std::memset(&cfg, 0, sizeof(cfg));
  cfg.gridDimX = unsigned(std::min<int64_t>(
      maxTiles, int64_t(*sms) * bs::quantCtasPerSM(dtypeBytes(q.in))));
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = qs.threads();
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.sharedMemBytes = unsigned(kernel.spec.smemBytes());
  cfg.hStream = stream;
  CUtensorMap tX, tQ;
  std::memset(&tX, 0, sizeof(tX));
  std::memset(&tQ, 0, sizeof(tQ));
  CUtensorMapDataType type =
      qs.in == DType::BF16  ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
      : qs.in == DType::F16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                            : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  if (auto e =
          encodeTensorMap(d, &tX, type, a.x, uint64_t(cols), uint64_t(tokens),
                          uint64_t(ldx) * dtypeBytes(q.in), 128, 128,
                          CU_TENSOR_MAP_SWIZZLE_NONE, "the cast's input"))
    return e;
  if (auto e = encodeTensorMap(d, &tQ, CU_TENSOR_MAP_DATA_TYPE_UINT8, a.q,
                               uint64_t(cap), uint64_t(cols), uint64_t(cap),
                               128, 128, CU_TENSOR_MAP_SWIZZLE_128B,
                               "the cast's transposed output"))
    return e;
  CUlaunchAttribute attrs[1];
  addProgrammaticLaunch(cfg, attrs);
  void *params[] = {&p, &tX, &tQ};
  return d.check(d.cuLaunchKernelEx(&cfg, *fn, params, nullptr),
                 "cuLaunchKernelEx");
}
