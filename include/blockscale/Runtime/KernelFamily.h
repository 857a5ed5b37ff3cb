//===- KernelFamily.h - one description per kernel family ------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Everything the layers above need to know about a family of kernels (the
// GEMMs, the casts, the grouped GEMMs and the group-aware cast), in one place:
// its description (Desc, validated can_implement-style with messages that say
// what was expected, what was found and the fix) and cache key, the
// compile-time spec of its kernels, their launch geometry, shared memory and
// workspace, their CUDA source, and the launch (argument checks, tensor
// maps, grid). The registry, the JIT, the C API, the tools and Python go
// through these; none of them repeats a family's rules.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_RUNTIME_KERNELFAMILY_H
#define BLOCKSCALE_RUNTIME_KERNELFAMILY_H

#include "blockscale/Runtime/Gemm.h"
#include "blockscale/Runtime/KernelSpec.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cuda.h>

#include <cstddef>
#include <string>

namespace blockscale {

class CompiledKernel;

/// Launch-time choices of a cast kernel: none (the grid follows the shape).
struct QuantLaunchConfig {};

struct GemmFamily {
  using Desc = GemmDesc;
  using Args = GemmArgs;
  using Spec = GemmKernelSpec;
  using LaunchConfig = GemmLaunchConfig;
  static constexpr KernelKind kind = KernelKind::Gemm;
  static constexpr llvm::StringLiteral name = "gemm";

  /// Whether the kernels implement the description.
  static llvm::Error canImplement(const Desc &d) { return d.validate(); }
  static std::string key(const Desc &d) { return d.key(); }
  static const Spec &spec(const KernelSpec &s) { return s.gemm; }
  static std::string kernelName(const Spec &s);
  /// The template instantiation (after the spec line and debug defines).
  static void writeInstantiation(const Spec &s, const std::string &name,
                                 llvm::raw_ostream &os);
  /// Split-K workspace a launch of `m` rows needs (0 for none); an error
  /// when it does not fit 64-bit sizes.
  static llvm::Expected<size_t> workspaceBytes(const Spec &s,
                                               const LaunchConfig &l,
                                               int64_t m, int64_t n,
                                               int64_t k);
  /// Checks the arguments against the description and the kernel, encodes
  /// the tensor maps (reused while the same kernel runs on the same
  /// buffers) and launches on `stream`.
  static llvm::Error launch(CompiledKernel &kernel, const LaunchConfig &l,
                            const Desc &d, const Args &a, CUstream stream);
};

struct QuantFamily {
  using Desc = QuantDesc;
  using Args = QuantArgs;
  using Spec = QuantKernelSpec;
  using LaunchConfig = QuantLaunchConfig;
  static constexpr KernelKind kind = KernelKind::Quantize;
  static constexpr llvm::StringLiteral name = "quantize";

  static llvm::Error canImplement(const Desc &d) { return d.validate(); }
  static std::string key(const Desc &d) { return d.key(); }
  static const Spec &spec(const KernelSpec &s) { return s.quant; }
  static std::string kernelName(const Spec &s);
  static void writeInstantiation(const Spec &s, const std::string &name,
                                 llvm::raw_ostream &os);
  static llvm::Expected<size_t> workspaceBytes(const Spec &, const LaunchConfig &,
                                               int64_t, int64_t, int64_t) {
    return 0;
  }
  static llvm::Error launch(CompiledKernel &kernel, const LaunchConfig &l,
                            const Desc &d, const Args &a, CUstream stream);
};

/// Launch-time choices of a grouped GEMM: the raster band width inside a
/// group, in work units along N (N tiles, or pairs of N tiles where the
/// kernel pairs its CTAs along N).
struct GroupedLaunchConfig {
  int raster = 8;
};

struct GroupedGemmFamily {
  using Desc = GroupedGemmDesc;
  using Args = GroupedGemmArgs;
  using Spec = GemmKernelSpec;
  using LaunchConfig = GroupedLaunchConfig;
  static constexpr KernelKind kind = KernelKind::GroupedGemm;
  static constexpr llvm::StringLiteral name = "grouped_gemm";

  static llvm::Error canImplement(const Desc &d) { return d.validate(); }
  static std::string key(const Desc &d) { return d.key(); }
  static const Spec &spec(const KernelSpec &s) { return s.gemm; }
  /// The kernel for a description: forceTile, else defaultTile.
  /// `numSMs` is unused: the grid is one CTA per SM of the launch's GPU.
  static llvm::Expected<KernelSpec> plan(const Desc &d);
  /// plan's tile rule without forceTile: bm, bn and CTA pairs by the
  /// grouping, the typical rows (m-grouped) per group, the output type, N
  /// and K (0: unknown); stages as deep as shared memory allows.
  /// --blockscale-select-tiles calls it too, so that the dialect and the
  /// runtime pick one tile.
  struct Tile {
    int bm, bn, stages, cluster;
  };
  static Tile defaultTile(Grouping grouping, int64_t perGroup, DType out,
                          int64_t n, int64_t k);
  /// Rows (k-grouped: tokens) per group the tile rule plans for, for plan
  /// and --blockscale-select-tiles alike: the caller's `hint` (0: none),
  /// else what the shapes say (`known`, 0: dynamic; masked: the rows of a
  /// group's slot; contiguous: the rows of all groups; k-grouped: the token
  /// capacity, less each group's padding block), else kDefaultRowsPerGroup.
  static constexpr int64_t kDefaultRowsPerGroup = 4096;
  static int64_t rowsPerGroup(Grouping grouping, int64_t groups, int64_t hint,
                              int64_t known);
  /// A forced tile over the rule's `rule` (plan's forceTile and
  /// --blockscale-select-tiles' force option both come here): bm, bn,
  /// stages and cluster as given (`bnGiven`: bn was given; stages 0: as
  /// deep as fits, left to the caller, which knows the shared memory). A
  /// forced bm without bn keeps the rule's bn where the kernel has that
  /// tile, else 128 (bm 256 takes bn <= 128). Refuses m-grouped CTA pairs
  /// over an odd count of N tiles (N known: 0 is unknown), with the message
  /// alone (the caller adds where it came from); specFor checks the rest.
  static llvm::Expected<Tile> applyForce(const Tile &rule, int bm, int bn,
                                         bool bnGiven, int stages,
                                         int cluster, int64_t n,
                                         bool kGrouped);
  /// The same rule for a tile chosen elsewhere (the dialect's tile
  /// attribute): checks bm, bn and stages against the kernel template.
  /// `kGrouped`: the k-grouped kernel (128x1 B scales, C += with
  /// `accumulate`). `k`: the m-grouped products' depth, for which the
  /// kernel is specialized where stageAlignedKBlocks says so (0: unknown,
  /// the run-time K loop). `cluster` 2: m-grouped CTA pairs that share A
  /// through TMA multicast (bm 128 or 256; the launch needs an even count
  /// of N tiles).
  static llvm::Expected<KernelSpec>
  specFor(Fp8Type a, Fp8Type b, DType out, int bm, int bn, int stages,
          unsigned debug, bool kGrouped = false, bool accumulate = false,
          int64_t k = 0, int cluster = 1);
  /// Whether a launch of kernel `s` (CTA pairs) for `d` pairs its CTAs
  /// along M, sharing B (GroupedGemmParams::pairM), rather than along N,
  /// sharing A: masked slots of exactly two 128-row tiles, and contiguous
  /// groups whose hint (mPerGroupHint) is 129-256 rows (a group whose count
  /// fills one tile still pairs along N).
  static bool pairsAlongM(const Desc &d, const Spec &s);
  static std::string kernelName(const Spec &s);
  static void writeInstantiation(const Spec &s, const std::string &name,
                                 llvm::raw_ostream &os);
  static llvm::Expected<size_t> workspaceBytes(const Spec &, const LaunchConfig &,
                                               int64_t, int64_t, int64_t) {
    return 0;
  }
  /// Checks the arguments against the description and the kernel and
  /// launches on `stream`; reads no group size on the host.
  static llvm::Error launch(CompiledKernel &kernel, const LaunchConfig &l,
                            const Desc &d, const Args &a, CUstream stream);
};

/// Launch-time choices of the group-aware cast: none.
struct GroupedQuantLaunchConfig {};

struct GroupedQuantFamily {
  using Desc = GroupedQuantDesc;
  using Args = GroupedQuantArgs;
  using Spec = QuantKernelSpec;
  using LaunchConfig = GroupedQuantLaunchConfig;
  static constexpr KernelKind kind = KernelKind::GroupedQuantize;
  static constexpr llvm::StringLiteral name = "grouped_quantize";

  static llvm::Error canImplement(const Desc &d) { return d.validate(); }
  static std::string key(const Desc &d) { return d.key(); }
  static const Spec &spec(const KernelSpec &s) { return s.quant; }
  /// The kernel of a description (one per input and FP8 type).
  static llvm::Expected<KernelSpec> plan(const Desc &d);
  static std::string kernelName(const Spec &s);
  static void writeInstantiation(const Spec &s, const std::string &name,
                                 llvm::raw_ostream &os);
  static llvm::Expected<size_t> workspaceBytes(const Spec &,
                                               const LaunchConfig &, int64_t,
                                               int64_t, int64_t) {
    return 0;
  }
  /// Checks the arguments and launches on `stream`; reads no group size on
  /// the host.
  static llvm::Error launch(CompiledKernel &kernel, const LaunchConfig &l,
                            const Desc &d, const Args &a, CUstream stream);
};

/// The scales a cast of `rows` rows (the description's when it has them)
/// writes: their logical shape in the result's frame and physical strides
/// (ScaleLayout.h), with leading stride ldScale (0: the default). Of a
/// batched cast (QuantDesc::groups): one matrix's first result's scales,
/// row-major (ldScale 0: the number of columns).
llvm::Expected<ScaleGeometry> quantScaleGeometry(const QuantDesc &desc,
                                                 int64_t rows,
                                                 int64_t ldScale = 0);

/// The kernel's name for a spec (also its extern "C" symbol), with a
/// suffix for its debug options.
std::string kernelName(const KernelSpec &spec);

/// The CUDA source for a spec: `comment` on top (keep shapes out of it: the
/// source is the cache key, and one binary serves every M, N, K), the spec
/// line, the debug defines, the family's template instantiation.
std::string generateCudaSource(const KernelSpec &spec,
                               llvm::StringRef comment = "");

/// The comments on top of the grouped kernels' sources, shared by the JIT's
/// plans and the emitter's, so that a description and the equivalent op
/// give one source (one cache entry, one binary).
std::string describeGroupedGemm(Grouping grouping, Fp8Type a, Fp8Type b,
                                DType out, bool accumulate);
std::string describeGroupedQuantize(DType in, Fp8Type out);

/// Calls f(Family{}) with the family of `kind`.
template <class F> decltype(auto) withFamily(KernelKind kind, F &&f) {
  if (kind == KernelKind::Quantize)
    return f(QuantFamily{});
  if (kind == KernelKind::GroupedGemm)
    return f(GroupedGemmFamily{});
  if (kind == KernelKind::GroupedQuantize)
    return f(GroupedQuantFamily{});
  return f(GemmFamily{});
}

} // namespace blockscale

#endif
