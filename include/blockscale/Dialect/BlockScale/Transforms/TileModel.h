//===- TileModel.h - analytic tile-configuration model ----------*- C++ -*-===//
//
// Plain C++ (no MLIR): used by --blockscale-select-tiles and by the bench to
// print what the model predicted next to what was measured.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_DIALECT_BLOCKSCALE_TRANSFORMS_TILEMODEL_H
#define BLOCKSCALE_DIALECT_BLOCKSCALE_TRANSFORMS_TILEMODEL_H

#include "blockscale/Target/Cuda/Kernels/params.h"

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

/// The options of tile selection, as the JIT, the tools and
/// `--blockscale-jit-pipeline` give them (JitPipelineOptions::tiling binds
/// the pipeline's textual options to this once).
struct TilingOptions {
  int64_t numSMs = bs::kDefaultNumSMs;
  int64_t smemBytes = bs::kMaxDynamicSmemBytes;
  int64_t mHint = 4096; // M to plan for when M is dynamic
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

/// Model estimate in seconds for one configuration (stages are filled in).
double estimateSeconds(const GemmProblem &p, const DeviceModel &d,
                       TileChoice &c);

/// Best configuration by the model.
TileChoice selectTile(const GemmProblem &p, const DeviceModel &d);

/// Every candidate the model considered with its estimate, best first.
std::vector<TileChoice> rankTiles(const GemmProblem &p, const DeviceModel &d);

} // namespace blockscale

#endif
