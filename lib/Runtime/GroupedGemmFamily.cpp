//===- GroupedGemmFamily.cpp - the m-grouped GEMM kernel family -*- C++ -*-===//
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

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstring>

using namespace blockscale;
using namespace blockscale::detail;

// Every row index the kernel forms is an int.
static constexpr int64_t kMaxDim = (int64_t(1) << 31) - 1;
// A group count the kernel's scan of the offsets handles in one CTA
// without it dominating: far above any mixture of experts.
static constexpr int64_t kMaxGroups = 1 << 16;

std::string GroupedGemmDesc::key() const {
  const bool kg = grouping == Grouping::KContiguous;
  return llvm::formatv(
             "grouped:{0}:{1}:{2}:{3}:{4}:{5}:{6}:{7}:{8}:{9}:{10}:{11}",
             toString(grouping), groups, n, k,
             grouping == Grouping::Masked ? mMax
             : kg                         ? m
                                          : 0,
             toString(a), toString(b), toString(out), mPerGroupHint, forceTile,
             numSMs, debug)
             .str() +
         (kg && accumulate ? ":acc" : "");
}

// The k-grouped rules: C (G, m, n) with the TMA-stored rows of the dense
// weight gradient, tokens at launch.
static llvm::Error validateKGrouped(const GroupedGemmDesc &d) {
  if (d.m <= 0 || d.m > kMaxDim)
    return invalidArgument(llvm::formatv(
        "GroupedGemmDesc: k_contiguous expects 0 < m < 2^31 (the rows of each "
        "group's C) but got m = {0}",
        d.m));
  if (d.groups * d.m > kMaxDim)
    return invalidArgument(llvm::formatv(
        "GroupedGemmDesc: the kernel addresses C as (G * m, n) rows and "
        "expects G * m < 2^31 but got G = {0}, m = {1}; split the groups over "
        "several launches",
        d.groups, d.m));
  if (d.k != 0)
    return invalidArgument(llvm::formatv(
        "GroupedGemmDesc: k_contiguous expects k = 0 (the reduction's tokens "
        "are given at launch as the operands' capacity) but got k = {0}",
        d.k));
  if (d.accumulate && d.out != DType::F32)
    return invalidArgument(llvm::formatv(
        "GroupedGemmDesc: expected out = f32 with accumulate (C += A B "
        "reduces into f32) but got out = {0}",
        toString(d.out)));
  return llvm::Error::success();
}

llvm::Error GroupedGemmDesc::validate() const {
  if (groups <= 0 || groups > kMaxGroups)
    return invalidArgument(llvm::formatv(
        "GroupedGemmDesc: expected 0 < groups <= {0} but got groups = {1}",
        kMaxGroups, groups));
  const int32_t gr = static_cast<int32_t>(grouping);
  if (gr < 0 || gr > 2)
    return invalidArgument(llvm::formatv(
        "GroupedGemmDesc: expected grouping contiguous, masked or "
        "k_contiguous but got {0}",
        gr));
  const bool kg = grouping == Grouping::KContiguous;
  if (kg) {
    if (n <= 0 || n > kMaxDim)
      return invalidArgument(llvm::formatv(
          "GroupedGemmDesc: expected 0 < N < 2^31 but got N = {0}", n));
    if (llvm::Error e = validateKGrouped(*this))
      return e;
  } else if (n <= 0 || k <= 0 || n > kMaxDim || k > kMaxDim) {
    return invalidArgument(llvm::formatv(
        "GroupedGemmDesc: expected 0 < N, K < 2^31 but got N = {0}, K = {1}", n,
        k));
  } else if (accumulate) {
    return invalidArgument(
        "GroupedGemmDesc: expected accumulate = false for an m-grouped GEMM "
        "(C += is the k-grouped weight gradient's, grouping k_contiguous)");
  }
  if (!kg && groups * n > kMaxDim)
    return invalidArgument(llvm::formatv(
        "GroupedGemmDesc: the kernel addresses B as (G * N, K) rows and "
        "expects G * N < 2^31 but got G = {0}, N = {1}; split the groups "
        "over several launches",
        groups, n));
  if (grouping == Grouping::Masked) {
    if (mMax <= 0 || mMax > kMaxDim / groups)
      return invalidArgument(llvm::formatv(
          "GroupedGemmDesc: masked expects 0 < mMax and G * mMax < 2^31 but "
          "got G = {0}, mMax = {1}",
          groups, mMax));
  }
  if (mPerGroupHint < 0 || mPerGroupHint > kMaxDim)
    return invalidArgument(llvm::formatv(
        "GroupedGemmDesc: expected 0 <= mPerGroupHint < 2^31 (0: none) but "
        "got {0}",
        mPerGroupHint));
  if (numSMs < 0 || numSMs > bs::kMaxSMs)
    return invalidArgument(llvm::formatv(
        "GroupedGemmDesc: expected 0 <= numSMs <= {0} (0: the GPU's) but got "
        "{1}",
        bs::kMaxSMs, numSMs));
  if (debug & ~unsigned(DebugHang))
    return invalidArgument(llvm::formatv(
        "GroupedGemmDesc: expected debug flags from DebugHang (timeline "
        "stamps are for dense GEMMs) but got {0}",
        debug));
  if (out == DType::F16)
    return invalidArgument(
        "GroupedGemmDesc: expected out = bf16 or f32 but got f16");
  if (!kg && k % 16 != 0)
    return invalidArgument(llvm::formatv(
        "GroupedGemmDesc: expected K to be a multiple of 16 (TMA needs "
        "16-byte FP8 rows) but got K = {0}; pad K to {1} with zeros",
        k, (k + 15) / 16 * 16));
  const int outBytes = dtypeBytes(out);
  // The output of a masked or k-grouped launch is known here: its bytes in
  // int64, and its work units in the kernel's 32-bit ints even in the
  // largest tiles (256 x 128 or 128 x 192), as the dense GEMMs check.
  if (grouping != Grouping::Contiguous) {
    const int64_t perGroup = kg ? m : mMax, rows = groups * perGroup;
    std::optional<int64_t> bytes = llvm::checkedMul<int64_t>(rows, n);
    if (bytes)
      bytes = llvm::checkedMul<int64_t>(*bytes, outBytes);
    if (!bytes)
      return invalidArgument(llvm::formatv(
          "GroupedGemmDesc: expected C ({0} x {1} x {2} {3}) to be at most "
          "2^63 - 1 bytes; split the groups over several launches",
          groups, perGroup, n, toString(out)));
    const int64_t fewest = groups * bs::gemmFewestTiles(perGroup, n);
    if (fewest >= (int64_t(1) << 31))
      return invalidArgument(llvm::formatv(
          "GroupedGemmDesc: expected at most 2^31 - 1 output tiles but {0} "
          "groups of {1} x {2} make {3} even in the largest tiles; split the "
          "groups over several launches",
          groups, perGroup, n, fewest));
  }
  if (n * outBytes % 16 != 0)
    return invalidArgument(llvm::formatv(
        "GroupedGemmDesc: expected N * {0} bytes to be a multiple of 16 (TMA "
        "store of C) but got N = {1}; pad N to {2}",
        outBytes, n,
        (n + 16 / outBytes - 1) / (16 / outBytes) * (16 / outBytes)));
  return llvm::Error::success();
}

llvm::Expected<KernelSpec>
GroupedGemmFamily::specFor(Fp8Type a, Fp8Type b, DType out, int bm, int bn,
                           int stages, unsigned debug, bool kGrouped,
                           bool accumulate, int64_t k, int cluster) {
  if (!bs::gemmTileImplemented(bm, bn))
    return invalidArgument(llvm::formatv(
        "grouped GEMM: expected bm in {{64, 128, 256} and bn a multiple of 16 "
        "up to 128 (or 144, 160, 192; at most 128 with bm = 256) but got "
        "bm = {0}, bn = {1}",
        bm, bn));
  const int maxStages = bs::gemmMaxStages(bm, bn, dtypeBytes(out), kGrouped,
                                          bs::kMaxDynamicSmemBytes);
  // A ring of one stage would serialize every load with the math; the
  // dialect's tile attribute and the dense planner ask for two at least.
  if (maxStages < 2)
    return invalidArgument(llvm::formatv(
        "grouped GEMM: expected a tile whose two-stage ring fits in {0} bytes "
        "of shared memory but bm = {1}, bn = {2} with {3} output fits {4} "
        "stage(s); force a smaller bm or bn",
        bs::kMaxDynamicSmemBytes, bm, bn, toString(out), maxStages));
  if (stages < 2 || stages > maxStages)
    return invalidArgument(llvm::formatv(
        "grouped GEMM: expected 2 <= stages <= {0} for bm = {1}, bn = {2} "
        "(shared memory) but got stages = {3}",
        maxStages, bm, bn, stages));
  if (cluster != 1 && (cluster != 2 || kGrouped || bm == 64))
    return invalidArgument(llvm::formatv(
        "grouped GEMM: expected cluster = 1, or 2 (CTA pairs) for an "
        "m-grouped kernel with bm = 128 or 256, but got cluster = {0} with "
        "bm = {1}{2}",
        cluster, bm, kGrouped ? " for the k-grouped kernel" : ""));
  KernelSpec s;
  s.kind = KernelKind::GroupedGemm;
  s.gemm.cluster = cluster;
  s.gemm.a = a;
  s.gemm.b = b;
  s.gemm.out = out;
  s.gemm.bm = bm;
  s.gemm.bn = bn;
  s.gemm.stages = stages;
  if (kGrouped) {
    s.gemm.form = GemmForm::Wgrad;
    s.gemm.accumulate = accumulate;
  } else {
    // Every group's products are K deep: the dense forward kernels' rule.
    s.gemm.kblocks = stageAlignedKBlocks(s.gemm, k, 1);
  }
  s.debug = debug;
  s.name = blockscale::kernelName(s);
  return s;
}

int64_t GroupedGemmFamily::rowsPerGroup(Grouping grouping, int64_t groups,
                                        int64_t hint, int64_t known) {
  if (hint > 0)
    return hint;
  if (known <= 0)
    return kDefaultRowsPerGroup;
  const int64_t g = std::max<int64_t>(groups, 1);
  switch (grouping) {
  case Grouping::Masked:
    return known;
  case Grouping::Contiguous:
    return std::max<int64_t>(known / g, 1);
  case Grouping::KContiguous:
    // The group-aware cast starts every group on a 128-token block.
    return std::max<int64_t>(known - 128 * g, g) / g;
  }
  return kDefaultRowsPerGroup;
}

GroupedGemmFamily::Tile GroupedGemmFamily::defaultTile(Grouping grouping,
                                                       int64_t perGroup,
                                                       DType out, int64_t n,
                                                       int64_t k) {
  const bool kg = grouping == Grouping::KContiguous;
  const int outBytes = dtypeBytes(out);
  Tile t{128, 128, 0, 1};
  if (kg) {
    // Every group has all of C's tiles: the dense weight gradient's one-wave
    // tiles (their 128x1 B scales take a stage row each). With f32 output
    // and groups of more than 1024 tokens, 128 x 192 as the dense f32 weight
    // gradient takes; measured beside 128 x 128 in one process on the
    // issue's shapes (bench/ab.py --grouped k and k-plain, H200): 1.00-1.06x
    // at 4096 and 8192 tokens per group; at 2048, 0.95-1.07x plain and
    // 1.00-1.06x += (docs/decisions.md); smaller groups not measured.
    // (The thresholds here are "more than a power of two", so that a caller
    // that rounds its per-group estimate up to a power of two, as the Python
    // package does to bound its kernels, gets the decision of the estimate.)
    if (out == DType::F32 && perGroup > 1024)
      t.bn = 192;
  } else if (perGroup <= 64) {
    // Most of a 128-row tile would lie past a small group's last row.
    t.bm = 64;
  } else if (out == DType::BF16) {
    // Measured on the H200 beside each other (bench/ab.py --grouped, the
    // issue's expert shapes): contiguous groups of more than 512 rows load
    // each K-block of B once per 256 rows (two waves), 1.07-1.16x the
    // 128 x 128 tile on 1024-row groups; smaller or ragged groups (masked
    // buffers of 192 and 1024 rows, 0.7-1 full) waste less past their last
    // row in 128-row tiles, and 128 x 192 tiles in CTA pairs ran
    // 1.03-1.08x the 128 x 128 tile there. f32 output keeps the 128 x 128
    // tile (a 256-row tile's f32 staging leaves one stage).
    const bool big = grouping == Grouping::Contiguous && perGroup > 512;
    t.bm = big ? 256 : 128;
    t.bn = big ? 128 : 192;
  }
  t.stages = std::max(1, bs::gemmMaxStages(t.bm, t.bn, outBytes, kg,
                                           bs::kMaxDynamicSmemBytes));
  // CTA pairs share A through multicast. The 128 x 192 tile takes them; the
  // 256-row tile only where its K loop is not stage-aligned (K = 2048 with
  // pairs: 1.02-1.03x; with the aligned rounds pairs gained nothing). A
  // pair needs an even count of N tiles.
  GemmKernelSpec g;
  g.bm = t.bm;
  g.bn = t.bn;
  g.stages = t.stages;
  const bool pairs =
      !kg && n > 0 &&
      ((t.bm == 128 && t.bn == 192) ||
       (t.bm == 256 && stageAlignedKBlocks(g, k, 1) == 0));
  if (pairs && (n + t.bn - 1) / t.bn % 2 == 0)
    t.cluster = 2;
  // The 128 x 192 tile was measured only in pairs: with an odd count of N
  // tiles (or N unknown) the measured 128 x 128 tile stands.
  if (!kg && t.bm == 128 && t.bn == 192 && t.cluster == 1) {
    t.bn = 128;
    t.stages = std::max(1, bs::gemmMaxStages(t.bm, t.bn, outBytes, kg,
                                             bs::kMaxDynamicSmemBytes));
  }
  return t;
}

llvm::Expected<GroupedGemmFamily::Tile>
GroupedGemmFamily::applyForce(const Tile &rule, int bm, int bn, bool bnGiven,
                              int stages, int cluster, int64_t n,
                              bool kGrouped) {
  if (!bnGiven)
    bn = bs::gemmTileImplemented(bm, rule.bn) ? rule.bn : 128;
  // The k-grouped kernel has no pairs at all: specFor says so.
  if (!kGrouped && cluster == 2 && n > 0 && bn > 0 && (n + bn - 1) / bn % 2 != 0)
    return llvm::createStringError(llvm::formatv(
        "expected an even count of N tiles for CTA pairs (cluster = 2) but "
        "got N = {0} in {1} tiles of bn = {2}; force cluster=1 or a bn that "
        "splits N into an even count",
        n, (n + bn - 1) / bn, bn));
  return Tile{bm, bn, stages, cluster};
}

llvm::Expected<KernelSpec> GroupedGemmFamily::plan(const Desc &d) {
  if (llvm::Error e = d.validate())
    return std::move(e);
  const bool kg = d.grouping == Grouping::KContiguous;
  int64_t perGroup =
      rowsPerGroup(d.grouping, d.groups, d.mPerGroupHint,
                   d.grouping == Grouping::Masked ? d.mMax : 0);
  Tile t = defaultTile(d.grouping, perGroup, d.out, d.n, kg ? 0 : d.k);
  if (d.forceTile.empty())
    return specFor(d.a, d.b, d.out, t.bm, t.bn, t.stages, d.debug, kg,
                   d.accumulate, kg ? 0 : d.k, t.cluster);
  // A forced tile starts from the rule's bm and bn, one CTA per tile, as
  // many stages as fit.
  int bm = t.bm, bn = t.bn, stages = 0, cluster = 1;
  bool bnForced = false;
  {
    llvm::SmallVector<llvm::StringRef> items;
    llvm::StringRef(d.forceTile).split(items, ',', -1, false);
    for (llvm::StringRef item : items) {
      auto [key, value] = item.trim().split('=');
      int v = 0;
      bool bad = value.trim().getAsInteger(10, v);
      int *slot = key == "bm"        ? &bm
                  : key == "bn"      ? &bn
                  : key == "stages"  ? &stages
                  : key == "cluster" ? &cluster
                                     : nullptr;
      if (!slot || bad)
        return invalidArgument(
            "grouped GEMM: expected forceTile as bm=<int>,bn=<int>,"
            "stages=<int>,cluster=<int> (any subset) but got '" +
            d.forceTile + "'");
      *slot = v;
      bnForced |= key == "bn";
    }
  }
  llvm::Expected<Tile> f =
      applyForce(t, bm, bn, bnForced, stages, cluster, d.n, kg);
  if (!f)
    return invalidArgument("grouped GEMM: " + llvm::toString(f.takeError()));
  bm = f->bm, bn = f->bn, stages = f->stages, cluster = f->cluster;
  // The default depth is the deepest that fits, which is only defined for
  // a tile the kernel has (a forced bm or bn of any int would overflow the
  // shared-memory sizes); specFor reports any other tile.
  if (stages == 0 && bs::gemmTileImplemented(bm, bn))
    stages = bs::gemmMaxStages(bm, bn, dtypeBytes(d.out), kg,
                               bs::kMaxDynamicSmemBytes);
  return specFor(d.a, d.b, d.out, bm, bn, stages, d.debug, kg, d.accumulate,
                 kg ? 0 : d.k, cluster);
}

std::string blockscale::describeGroupedGemm(Grouping grouping, Fp8Type a,
                                            Fp8Type b, DType out,
                                            bool accumulate) {
  if (grouping == Grouping::KContiguous)
    return llvm::formatv("blockscale k-grouped matmul: A {0} 1x128, B {1} "
                         "128x1 along tokens per group, C {2}{3}",
                         toString(a), toString(b), toString(out),
                         accumulate ? " +=" : "")
        .str();
  return llvm::formatv("blockscale.grouped_matmul {0}: A {1} 1x128, B {2} "
                       "128x128 per group, C {3}",
                       grouping == Grouping::Masked ? "m_masked"
                                                    : "m_contiguous",
                       toString(a), toString(b), toString(out))
      .str();
}

bool GroupedGemmFamily::pairsAlongM(const Desc &d, const Spec &s) {
  // Measured beside pairs along N in one process (bench/ab.py, H100):
  // masked slots of 192 rows in 128 x 192 tiles, 1.10-1.16x (with idle
  // warpgroups skipping their wgmmas); contiguous groups of 134-250 rows
  // (--grouped ragged-small, the kernel's hint 192) 1.00-1.13x; slots of
  // 1024 rows, 0.93-0.97x, so the pair's tiles share A there
  // (docs/decisions.md). A contiguous launch knows its groups' sizes only
  // from the kernel's hint: pairs along M where it says two row tiles.
  return s.cluster == 2 && s.bm == 128 &&
         ((d.grouping == Grouping::Masked && ceilDiv(d.mMax, s.bm) == 2) ||
          (d.grouping == Grouping::Contiguous && d.mPerGroupHint > 128 &&
           d.mPerGroupHint <= 256));
}

std::string GroupedGemmFamily::kernelName(const Spec &g) {
  return llvm::formatv("bs_{0}grouped_gemm_{1}_{2}_{3}{4}_bm{5}_bn{6}_s{7}",
                       g.wgrad() ? "k" : "", toString(g.a), toString(g.b),
                       toString(g.out), g.accumulate ? "_acc" : "", g.bm, g.bn,
                       g.stages)
             .str() +
         (g.cluster > 1 ? "_c" + std::to_string(g.cluster) : "") +
         (g.kblocks > 0 ? "_kb" + std::to_string(g.kblocks) : "");
}

void GroupedGemmFamily::writeInstantiation(const Spec &g,
                                           const std::string &name,
                                           llvm::raw_ostream &os) {
  os << "#define BS_WGMMA_AB \"" << toString(g.a) << "." << toString(g.b)
     << "\"\n";
  if (g.wgrad()) {
    os << "#include \"blockscale/gemm_kgrouped.cuh\"\n\n";
    os << llvm::formatv(
        "using BsKernel = bs::KGroupedGemmSm90<bs::GemmConfig</*BM=*/{0}, "
        "/*BN=*/{1}, /*STAGES=*/{2}, /*WGRAD=*/true, /*OUT_F32=*/{3}, "
        "/*ACCUMULATE=*/{4}>>;\n\n",
        g.bm, g.bn, g.stages, g.out == DType::F32 ? "true" : "false",
        g.accumulate ? "true" : "false");
    os << "extern \"C\" __global__ void __launch_bounds__(BsKernel::kThreads, "
          "1)\n"
       << name << "(const __grid_constant__ bs::KGroupedGemmParams p,\n"
       << "    const __grid_constant__ bs::TmaDesc tA,\n"
       << "    const __grid_constant__ bs::TmaDesc tB,\n"
       << "    const __grid_constant__ bs::TmaDesc tSA,\n"
       << "    const __grid_constant__ bs::TmaDesc tSB,\n"
       << "    const __grid_constant__ bs::TmaDesc tC) {\n"
       << "  BsKernel::run(p, tA, tB, tSA, tSB, tC);\n}\n";
    return;
  }
  os << "#include \"blockscale/gemm_grouped.cuh\"\n\n";
  os << llvm::formatv(
      "using BsKernel = bs::GroupedGemmSm90<bs::GemmConfig</*BM=*/{0}, "
      "/*BN=*/{1}, /*STAGES=*/{2}, /*WGRAD=*/false, /*OUT_F32=*/{3}, "
      "/*ACCUMULATE=*/false{4}>>;\n\n",
      g.bm, g.bn, g.stages, g.out == DType::F32 ? "true" : "false",
      g.cluster > 1 || g.kblocks > 0
          ? llvm::formatv(", /*CLUSTER=*/{0}, /*KSPLIT=*/1, /*KBLOCKS=*/{1}",
                          g.cluster, g.kblocks)
                .str()
          : std::string());
  os << "extern \"C\" __global__ void __launch_bounds__(BsKernel::kThreads, "
        "1)\n"
     << name << "(const __grid_constant__ bs::GroupedGemmParams p,\n"
     << "    const __grid_constant__ bs::TmaDesc tA,\n"
     << "    const __grid_constant__ bs::TmaDesc tB,\n"
     << "    const __grid_constant__ bs::TmaDesc tC) {\n"
     << "  BsKernel::run(p, tA, tB, tC);\n}\n";
}

static llvm::Error launchKGrouped(CompiledKernel &kernel,
                                  const GroupedLaunchConfig &launch,
                                  const GroupedGemmDesc &desc,
                                  const GroupedGemmArgs &a, CUstream stream);

llvm::Error GroupedGemmFamily::launch(CompiledKernel &kernel,
                                      const LaunchConfig &launch,
                                      const Desc &desc, const Args &a,
                                      CUstream stream) {
  const GemmKernelSpec &s = kernel.spec.gemm;
  if (kernel.spec.kind != KernelKind::GroupedGemm)
    return invalidArgument("launchGroupedGemm: " + kernel.spec.name +
                           " is not a grouped GEMM kernel");
  if (s.out != desc.out || s.a != desc.a || s.b != desc.b)
    return invalidArgument(llvm::formatv(
        "launchGroupedGemm: kernel {0} was built for A {1}, B {2}, C {3} but "
        "the description says A {4}, B {5}, C {6}",
        kernel.spec.name, toString(s.a), toString(s.b), toString(s.out),
        toString(desc.a), toString(desc.b), toString(desc.out)));
  if (s.wgrad() != (desc.grouping == Grouping::KContiguous) ||
      s.accumulate != desc.accumulate)
    return invalidArgument(llvm::formatv(
        "launchGroupedGemm: kernel {0} is {1}-grouped{2} but the description "
        "is {3}{4}",
        kernel.spec.name, s.wgrad() ? "k" : "m", s.accumulate ? " (C +=)" : "",
        toString(desc.grouping), desc.accumulate ? " (C +=)" : ""));
  if (s.wgrad())
    return launchKGrouped(kernel, launch, desc, a, stream);
  const bool masked = desc.grouping == Grouping::Masked;
  const int64_t g = desc.groups, n = desc.n, k = desc.k;
  int64_t rows = a.m;
  if (masked) {
    const int64_t slots = g * desc.mMax;
    if (rows >= 0 && rows != slots)
      return invalidArgument(llvm::formatv(
          "launchGroupedGemm: masked A and C have G * mMax = {0} rows but "
          "GroupedGemmArgs::m = {1}; pass -1 or {0}",
          slots, rows));
    rows = slots;
  } else if (rows < 0 || rows > kMaxDim) {
    return invalidArgument(llvm::formatv(
        "launchGroupedGemm: contiguous expects GroupedGemmArgs::m, the rows "
        "of A and C, in [0, 2^31) but got {0}",
        rows));
  }

  struct {
    const char *name;
    const void *ptr;
    bool tma;
  } ptrs[] = {
      {"A", a.a, true},          {"A scales", a.sa, false},   {"B", a.b, true},
      {"B scales", a.sb, false}, {"groups", a.groups, false}, {"C", a.c, true}};
  for (auto &p : ptrs) {
    if (!p.ptr)
      return invalidArgument(
          llvm::formatv("launchGroupedGemm: the {0} pointer is null", p.name));
    if (p.tma && !aligned16(p.ptr))
      return invalidArgument(
          llvm::formatv("launchGroupedGemm: expected the {0} pointer to be "
                        "16-byte aligned (TMA) but got {1}",
                        p.name, p.ptr));
    if (!p.tma && reinterpret_cast<uintptr_t>(p.ptr) % 4)
      return invalidArgument(llvm::formatv(
          "launchGroupedGemm: expected the {0} pointer to be 4-byte aligned "
          "but got {1}",
          p.name, p.ptr));
  }

  const int64_t kBlocks = ceilDiv(k, 128), nBlocks = ceilDiv(n, 128);
  auto sag = scaleGeometry(1, 128, std::max<int64_t>(rows, 1), k, a.ldsa);
  if (!sag)
    return withContext(sag.takeError(),
                       "launchGroupedGemm: A scales (rows, ceil(K/128)) are "
                       "rows-contiguous: ");
  const int64_t ldsa = sag->strideCol;
  int64_t sbG = a.sbStrideG, sbN = a.sbStrideN, sbK = a.sbStrideK;
  const int64_t kMaxStride = int64_t(1) << 40;
  if (sbG == 0 && sbN == 0 && sbK == 0) {
    sbK = 1;
    sbN = kBlocks;
    sbG = nBlocks * kBlocks;
  } else if (sbG < 0 || sbN < 0 || sbK < 0 || sbG > kMaxStride ||
             sbN > kMaxStride || sbK > kMaxStride) {
    return invalidArgument(llvm::formatv(
        "launchGroupedGemm: expected B-scale strides in [0, 2^40) but got "
        "sbStrideG = {0}, sbStrideN = {1}, sbStrideK = {2}",
        sbG, sbN, sbK));
  }
  if (rows == 0)
    return llvm::Error::success();

  const int64_t tilesN = ceilDiv(n, s.bn);
  const bool pairM = pairsAlongM(desc, s);
  // (A launch that pairs along M still pairs one-tile groups along N.)
  if (tilesN % s.cluster)
    return invalidArgument(llvm::formatv(
        "launchGroupedGemm: kernel {0} computes pairs of N tiles of {1} "
        "columns but N = {2} makes {3} tiles, an odd count; use a kernel "
        "without CTA pairs for this N",
        kernel.spec.name, s.bn, n, tilesN));
  // Every group's rows are tiled on their own: at most one partial tile per
  // group beyond the tiles of all rows together. A unit is a CTA pair's two
  // N tiles when the kernel runs in pairs; along M, two M tiles of a group
  // of t row tiles: ceil(t / 2) tilesN <= (t + 1) tilesN / 2 units.
  const int64_t tileRows =
      masked ? g * ceilDiv(desc.mMax, s.bm) : ceilDiv(rows, s.bm) + g;
  const int64_t maxUnits = (tileRows + (pairM ? g : 0)) * (tilesN / s.cluster);
  if (maxUnits >= (int64_t(1) << 31) || rows + s.bm >= (int64_t(1) << 31))
    return invalidArgument(llvm::formatv(
        "launchGroupedGemm: {0} rows in {1} groups of N = {2} make up to {3} "
        "work units, but the kernel counts them in 31 bits; split the "
        "launch",
        rows, g, n, maxUnits));

  auto dOr = getCudaDriver();
  if (!dOr)
    return dOr.takeError();
  const CudaDriver &d = *dOr;
  auto fn = kernel.function();
  if (!fn)
    return fn.takeError();

  thread_local TensorMapCache<3, 10> mc;
  const int64_t key[10] = {
      keyOf(a.a), keyOf(a.b), keyOf(a.sa), keyOf(a.c), rows,
      n,          k,          g,           ldsa,
      ((s.bm * 1000 + s.bn) * 4 + s.cluster) * 2 + (pairM ? 1 : 0)};
  CUcontext curCtx = nullptr;
  if (auto e = d.check(d.cuCtxGetCurrent(&curCtx), "cuCtxGetCurrent"))
    return e;
  CUtensorMap &tA = mc.maps[0], &tB = mc.maps[1], &tC = mc.maps[2];
  if (!mc.holds(kernel.uid, curCtx, key)) {
    mc.forget();
    if (auto e =
            // (In pairs each CTA loads half of the shared operand's tile
            // for both.)
            encodeTensorMap(d, &tA, CU_TENSOR_MAP_DATA_TYPE_UINT8, a.a, k, rows,
                            k, 128, pairM ? s.bm : s.bm / s.cluster,
                            CU_TENSOR_MAP_SWIZZLE_128B, "A"))
      return e;
    if (auto e = encodeTensorMap(d, &tB, CU_TENSOR_MAP_DATA_TYPE_UINT8, a.b, k,
                                 g * n, k, 128, pairM ? s.bn / s.cluster : s.bn,
                                 CU_TENSOR_MAP_SWIZZLE_128B, "B"))
      return e;
    if (auto e = encodeGemmOutputMap(d, &tC, s.out, s.bn, a.c, n, rows, n))
      return e;
    mc.remember(kernel.uid, curCtx, key);
  }

  bs::GroupedGemmParams p;
  std::memset(&p, 0, sizeof(p));
  p.gemm.m = int(rows);
  p.gemm.n = int(n);
  p.gemm.k = int(k);
  p.gemm.kBlocks = int(kBlocks);
  p.gemm.tilesM = int(ceilDiv(rows, s.bm));
  p.gemm.tilesN = int(tilesN);
  p.gemm.splits = 1;
  p.gemm.raster = std::max(1, launch.raster);
  p.gemm.divSplits = bs::makeFastDiv(1);
  p.gemm.sb = a.sb;
  p.gemm.sbStrideK = sbK;
  p.gemm.sbStrideN = sbN;
  p.gemm.c = a.c;
  p.gemm.ldc = n;
  p.groups = a.groups;
  p.numGroups = int(g);
  p.masked = masked ? 1 : 0;
  p.mMax = masked ? int(desc.mMax) : 0;
  p.pairM = pairM ? 1 : 0;
  p.sbStrideG = sbG;
  p.sa = static_cast<const float *>(a.sa);
  p.ldsa = ldsa;

  // The units are unknown on the host (the sizes are on the device): one
  // persistent CTA (pair) per SM (pair), or fewer when even the most units
  // fit.
  CUlaunchConfig cfg;
  CUlaunchAttribute attrs[2];
  if (auto e =
          persistentLaunchConfig(kernel, s, maxUnits, stream, cfg, attrs))
    return e;
  void *params[] = {&p, &tA, &tB, &tC};
  return d.check(d.cuLaunchKernelEx(&cfg, *fn, params, nullptr),
                 "cuLaunchKernelEx");
}

// The k-grouped GEMM: the dense weight gradient's tensor maps over the padded
// operands (A, B with capacity tokens; their scales one row of m / n floats
// per 128-token block) and C as (G * m, n) rows.
static llvm::Error launchKGrouped(CompiledKernel &kernel,
                                  const GroupedLaunchConfig &launch,
                                  const GroupedGemmDesc &desc,
                                  const GroupedGemmArgs &a, CUstream stream) {
  const GemmKernelSpec &s = kernel.spec.gemm;
  const int64_t g = desc.groups, m = desc.m, n = desc.n, cap = a.capacity;
  if (cap < 128 * g || cap % 128 || cap > kMaxDim)
    return invalidArgument(llvm::formatv(
        "launchGroupedGemm: k_contiguous expects GroupedGemmArgs::capacity, "
        "the padded tokens of A and B, to be a multiple of 128, at least 128 "
        "G = {0} and below 2^31 but got {1}; the group-aware cast's is "
        "groupedTokenCapacity(tokens, G)",
        128 * g, cap));
  struct {
    const char *name;
    const void *ptr;
  } ptrs[] = {{"A", a.a},         {"A scales", a.sa},   {"B", a.b},
              {"B scales", a.sb}, {"groups", a.groups}, {"C", a.c}};
  for (auto &p : ptrs) {
    if (!p.ptr)
      return invalidArgument(
          llvm::formatv("launchGroupedGemm: the {0} pointer is null", p.name));
    if (!aligned16(p.ptr) && std::strcmp(p.name, "groups") != 0)
      return invalidArgument(
          llvm::formatv("launchGroupedGemm: expected the {0} pointer to be "
                        "16-byte aligned (TMA) but got {1}",
                        p.name, p.ptr));
  }
  if (reinterpret_cast<uintptr_t>(a.groups) % 4)
    return invalidArgument(llvm::formatv(
        "launchGroupedGemm: expected the groups pointer to be 4-byte aligned "
        "but got {0}",
        static_cast<const void *>(a.groups)));
  const int64_t blocks = cap / 128;
  // One row of m (n) scales per 128-token block: the 128x1 layout of the
  // (capacity, m) tensor, m contiguous.
  auto sag = scaleGeometry(128, 1, cap, m, a.ldsa);
  if (!sag)
    return withContext(sag.takeError(),
                       "launchGroupedGemm: A scales (capacity / 128, m) are "
                       "m-contiguous: ");
  auto sbg = scaleGeometry(128, 1, cap, n, a.ldsb);
  if (!sbg)
    return withContext(sbg.takeError(),
                       "launchGroupedGemm: B scales (capacity / 128, n) are "
                       "n-contiguous: ");
  const int64_t ldsa = sag->strideRow, ldsb = sbg->strideRow;
  const int64_t tilesM = ceilDiv(m, s.bm), tilesN = ceilDiv(n, s.bn);
  const int64_t units = g * tilesM * tilesN;
  if (units >= (int64_t(1) << 31))
    return invalidArgument(llvm::formatv(
        "launchGroupedGemm: {0} groups of {1} x {2} make {3} work units, but "
        "the kernel counts them in 31 bits; split the launch",
        g, m, n, units));

  auto dOr = getCudaDriver();
  if (!dOr)
    return dOr.takeError();
  const CudaDriver &d = *dOr;
  auto fn = kernel.function();
  if (!fn)
    return fn.takeError();

  thread_local TensorMapCache<5, 11> mc;
  const int64_t key[11] = {keyOf(a.a), keyOf(a.b), keyOf(a.sa), keyOf(a.sb),
                           keyOf(a.c), m,          n,           cap,
                           g,          ldsa,       ldsb};
  CUcontext curCtx = nullptr;
  if (auto e = d.check(d.cuCtxGetCurrent(&curCtx), "cuCtxGetCurrent"))
    return e;
  CUtensorMap &tA = mc.maps[0], &tB = mc.maps[1], &tSA = mc.maps[2],
              &tSB = mc.maps[3], &tC = mc.maps[4];
  if (!mc.holds(kernel.uid, curCtx, key)) {
    mc.forget();
    if (auto e =
            encodeTensorMap(d, &tA, CU_TENSOR_MAP_DATA_TYPE_UINT8, a.a, cap, m,
                            cap, 128, s.bm, CU_TENSOR_MAP_SWIZZLE_128B, "A"))
      return e;
    if (auto e =
            encodeTensorMap(d, &tB, CU_TENSOR_MAP_DATA_TYPE_UINT8, a.b, cap, n,
                            cap, 128, s.bn, CU_TENSOR_MAP_SWIZZLE_128B, "B"))
      return e;
    if (auto e = encodeTensorMap(d, &tSA, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, a.sa,
                                 m, blocks, ldsa * 4, s.bm, 1,
                                 CU_TENSOR_MAP_SWIZZLE_NONE, "A scales"))
      return e;
    if (auto e = encodeTensorMap(d, &tSB, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, a.sb,
                                 n, blocks, ldsb * 4, s.bn, 1,
                                 CU_TENSOR_MAP_SWIZZLE_NONE, "B scales"))
      return e;
    if (auto e = encodeGemmOutputMap(d, &tC, s.out, s.bn, a.c, n, g * m, n))
      return e;
    mc.remember(kernel.uid, curCtx, key);
  }

  bs::KGroupedGemmParams p;
  std::memset(&p, 0, sizeof(p));
  p.gemm.m = int(m);
  p.gemm.n = int(n);
  p.gemm.k = int(cap);
  p.gemm.kBlocks = int(blocks);
  p.gemm.tilesM = int(tilesM);
  p.gemm.tilesN = int(tilesN);
  p.gemm.splits = 1;
  p.gemm.raster = std::max(1, launch.raster);
  p.gemm.divSplits = bs::makeFastDiv(1);
  p.gemm.c = a.c;
  p.gemm.ldc = n;
  p.offs = a.groups;
  p.numGroups = int(g);
  p.limit = int(cap - 128 * g);

  CUlaunchConfig cfg;
  CUlaunchAttribute attrs[2];
  if (auto e = persistentLaunchConfig(kernel, s, units, stream, cfg, attrs))
    return e;
  void *params[] = {&p, &tA, &tB, &tSA, &tSB, &tC};
  return d.check(d.cuLaunchKernelEx(&cfg, *fn, params, nullptr),
                 "cuLaunchKernelEx");
}
