//===- TileModel.h - analytic tile-configuration model ----------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Plain C++ (no MLIR): used by --blockscale-select-tiles and by the bench to
// print what the model predicted next to what was measured.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_DIALECT_BLOCKSCALE_TRANSFORMS_TILEMODEL_H
#define BLOCKSCALE_DIALECT_BLOCKSCALE_TRANSFORMS_TILEMODEL_H

#include "blockscale/Target/Cuda/Kernels/params.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace blockscale {

struct TileChoice {
  int bm = 128, bn = 128, bk = 128, stages = 4, cluster = 1, swizzle = 128;
  int splits = 1, raster = 8;
  int ksplit = 1; // = splits: the splits are one cluster, summed in DSMEM
  double predictedSeconds = 0; // model estimate, for reports
  int64_t unitsPerCta = 0;     // rounds of work units of the busiest CTA
  std::string str() const;
};

struct GemmProblem {
  int64_t m, n, k;
  bool wgrad = false;
  int outBytes = 2; // 2 = bf16, 4 = f32
  bool accumulate = false;
};

/// The M a dense matmul of dynamic M is planned for without a hint.
inline constexpr int64_t kDefaultMHint = 4096;

/// The options of tile selection, as the JIT, the tools and
/// `--blockscale-jit-pipeline` give them (JitPipelineOptions::tiling binds
/// the pipeline's textual options to this once).
struct TilingOptions {
  int64_t numSMs = bs::kDefaultNumSMs;
  int64_t smemBytes = bs::kMaxDynamicSmemBytes;
  int64_t mHint = 0;    // M to plan for when M is dynamic (0: kDefaultMHint)
  std::string force;    // a forced configuration, e.g. "bm=128,bn=128"
};

/// Device parameters of the model. Defaults: H100/H200 SXM (132 SMs).
struct DeviceModel {
  int numSMs = bs::kDefaultNumSMs;
  int smemBytes = bs::kMaxDynamicSmemBytes;
  double clockHz = 1.71e9;           // SM clock seen under FP8 load (ncu)
  double hbmBytesPerSec = 3.3e12;    // achievable HBM for GEMM streams
  double l2Bytes = 50e6;             // H100/H200 L2 (split-K partials stay)
  double launchSeconds = 4.0e-6;     // launch + drain
  /// Thread-block clusters of `size` CTAs (one CTA per SM) resident at once.
  /// A cluster lives inside one GPC, so sizes that do not divide a GPC's SM
  /// count leave SMs idle.
  int clusterSlots(int size) const;
};

/// Whether a configuration is one the kernel templates implement.
bool isValidTile(int bm, int bn);

/// Limits of the kernels and of the model. The kernels take M, N, K and
/// their tile and work-unit counts as 32-bit ints (bs::GemmParams).
constexpr int64_t kMaxGemmDim = 2147483647;    // 2^31 - 1
constexpr int64_t kMaxTileCount = 2147483647;  // tiles x splits of a launch
constexpr int kMaxSMs = bs::kMaxSMs;           // DeviceModel::numSMs
// DeviceModel::smemBytes: sm_90's opt-in maximum per block, which the kernel
// templates static_assert (gemm_config.cuh); a model of a larger one would
// choose tiles NVRTC then rejects.
constexpr int kMaxSmemBytes = bs::kMaxDynamicSmemBytes;

/// Checks the preconditions of estimateSeconds / rankTiles / selectTile:
/// 1 <= M, N, K <= kMaxGemmDim, the operand and output byte counts fit in
/// int64, at least one tile shape keeps the tile count within kMaxTileCount,
/// outBytes 2 or 4, 1 <= numSMs <= kMaxSMs and 0 < smemBytes <=
/// kMaxSmemBytes. The message says what was expected and what was found
/// (without a location: the caller adds it). No MLIR: the pass and the
/// runtime both call it.
llvm::Error validateProblem(const GemmProblem &p, const DeviceModel &d);

/// Number of tiles x splits of `c` for `p` (with CTA pairs rounding the N
/// tiles up to whole pairs), or -1 when it does not fit in int64.
int64_t tileUnits(const GemmProblem &p, const TileChoice &c);

/// Model estimate in seconds for one configuration (stages are filled in);
/// INFINITY for a configuration that does not fit (shared memory, clusters,
/// more than kMaxTileCount units) and for a problem validateProblem rejects.
double estimateSeconds(const GemmProblem &p, const DeviceModel &d,
                       TileChoice &c);

/// Best configuration by the model; the default TileChoice when there is
/// none (a problem validateProblem rejects, or shared memory too small for
/// any tile): check rankTiles(...).empty() where that matters.
TileChoice selectTile(const GemmProblem &p, const DeviceModel &d);

/// Every candidate the model considered with its estimate, best first
/// (empty for a problem validateProblem rejects).
std::vector<TileChoice> rankTiles(const GemmProblem &p, const DeviceModel &d);

} // namespace blockscale

#endif
