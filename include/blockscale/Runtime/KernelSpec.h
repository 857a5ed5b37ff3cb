//===- KernelSpec.h - what a generated kernel is ----------------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Plain data shared by the emitter (which writes it into the generated
// source as a `// blockscale-spec:` line), the runtime (which launches from
// it without MLIR) and the C API.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_RUNTIME_KERNELSPEC_H
#define BLOCKSCALE_RUNTIME_KERNELSPEC_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>

namespace blockscale {

enum class GemmForm { Fwd = 0, Dgrad = 1, Wgrad = 2 };
enum class Fp8Type { E4M3 = 0, E5M2 = 1 };
enum class DType { BF16 = 0, F16 = 1, F32 = 2 };
enum class KernelKind {
  Gemm = 0,
  Quantize = 1,
  GroupedGemm = 2,
  GroupedQuantize = 3 // the group-aware cast of the k-grouped GEMMs
};
/// How a grouped GEMM splits its work among groups (GroupedGemmDesc): rows
/// of A and C (m-grouped, Contiguous and Masked) or the reduction's tokens
/// (k-grouped, KContiguous: the mixture-of-experts weight gradient).
enum class Grouping { Contiguous = 0, Masked = 1, KContiguous = 2 };

llvm::StringRef toString(GemmForm f);
llvm::StringRef toString(Fp8Type t);
llvm::StringRef toString(DType t);
llvm::StringRef toString(Grouping g);
int dtypeBytes(DType t);

/// Compile-time parameters of a GEMM kernel (its template arguments).
struct GemmKernelSpec {
  GemmForm form = GemmForm::Fwd;
  Fp8Type a = Fp8Type::E4M3, b = Fp8Type::E4M3;
  DType out = DType::BF16;
  bool accumulate = false;
  int bm = 128, bn = 128, stages = 4;
  int cluster = 1; // 2: CTA pairs share A through TMA multicast
  /// 2-8: the K splits of a tile are the CTAs of one cluster and are summed
  /// through distributed shared memory (GemmSm90's KSPLIT; the launch's
  /// splits must equal it). 1: split-K, if any, goes through the workspace.
  int ksplit = 1;
  /// > 0: the kernel is specialized for ceil(K / 128) = kblocks (its K loop
  /// runs in unrolled, stage-aligned rounds; GemmConfig::kAlignedK); 0: any
  /// K. Only the tiles that use it get one (see emitGemmKernel).
  int kblocks = 0;
  /// CTAs per thread-block cluster at launch (1: no cluster).
  int clusterCtas() const { return cluster * ksplit; }
  bool wgrad() const { return form == GemmForm::Wgrad; }
  /// Consumer warpgroups (GemmSm90::kConsumers): one for bm = 64, else two
  /// (bm = 256 gives each two 64-row waves).
  int consumers() const { return bm == 64 ? 1 : 2; }
  int threads() const { return 128 * (consumers() + 1); }
  int smemBytes() const;
};

/// The K-block count a GEMM kernel of tile `s` is specialized for
/// (GemmKernelSpec::kblocks) when it computes K-deep products with `splits`
/// workspace splits, or 0 for the run-time K loop. One rule for the dense
/// forward kernels and the m-grouped ones: forward tiles of one accumulator
/// per wave (bs::gemmStageAlignable) without splits, where the last round's
/// empty stages are at most 1/16 of the K-blocks, and the tile's B scales
/// fit in shared memory; of the one-wave tiles (bm <= 128) only the
/// measured ones (128 x 192, single 128 x 144 and 64 x 192), from 24
/// K-blocks.
int stageAlignedKBlocks(const GemmKernelSpec &s, int64_t k, int64_t splits);

/// Compile-time parameters of a cast kernel, in the input's frame.
struct QuantKernelSpec {
  DType in = DType::BF16;
  Fp8Type out = Fp8Type::E4M3;
  int br = 1, bc = 128; // block rows x cols of the input
  bool transposed = false;
  /// Dual-layout cast: writes the result in input order with br x bc blocks
  /// (1x128 or 128x128) and, from the same read of the input, its transpose
  /// with the blocks rotated (128x1, or 128x128, of the input): the two
  /// layouts of one operand that the forward and backward GEMMs read.
  /// `transposed` is false then.
  bool dual = false;
  /// A batched dual cast (with dual, 128x128 blocks): a stack of matrices,
  /// each cast into both layouts on its own (QuantDesc::groups).
  bool grouped = false;
  /// QuantizeTile::kThreads (bs::quantThreads): 256 workers, and for most
  /// casts a warp that issues their TMA loads and stores.
  int threads() const;
  /// Dynamic shared memory at launch: the persistent CTAs' TMA ring.
  int smemBytes() const;
};

/// Debug options compiled into a kernel (bs::DebugFlags): part of its
/// source, its name and hence its cache key.
enum DebugOption : unsigned {
  DebugNone = 0,
  DebugHang = 1,     // mbarrier waits trap with a message instead of hanging
  DebugTimeline = 2, // per-CTA phase stamps (GEMMs; timeline.cuh)
};
/// "hang,timeline" (empty for none).
std::string debugString(unsigned debug);
/// Parses a comma-separated list of hang / timeline.
llvm::Expected<unsigned> parseDebug(llvm::StringRef list);

struct KernelSpec {
  KernelKind kind = KernelKind::Gemm;
  std::string name; // extern "C" symbol
  /// GEMMs, and the grouped GEMMs (cluster = ksplit = 1): m-grouped ones
  /// have form fwd (128x128 B scales, no accumulate), k-grouped ones form
  /// wgrad (128x1 B scales along tokens, optionally C +=).
  GemmKernelSpec gemm;
  /// Casts, and the group-aware cast (br = 128, bc = 1, transposed).
  QuantKernelSpec quant;
  unsigned debug = DebugNone; // DebugOption flags

  /// Threads per CTA and dynamic shared memory of the kernel's family.
  int threads() const;
  int smemBytes() const;

  /// One line: "kind=gemm name=... bm=128 ...".
  std::string serialize() const;
  static llvm::Expected<KernelSpec> parse(llvm::StringRef line);
  /// Finds the `// blockscale-spec:` line of a generated source.
  static llvm::Expected<KernelSpec> fromSource(llvm::StringRef source);
};

/// Launch-time decisions of the tile selection that are kernel arguments,
/// not template parameters (so one binary serves every split count).
struct GemmLaunchConfig {
  int splits = 1;
  int raster = 8;
};

} // namespace blockscale

#endif
