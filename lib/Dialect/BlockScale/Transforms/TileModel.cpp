//===- TileModel.cpp - analytic tile-configuration model --------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// See docs/TileSelection.md for the derivation of every term.
//
//===----------------------------------------------------------------------===//

#include "blockscale/Dialect/BlockScale/Transforms/TileModel.h"
#include "blockscale/Target/Cuda/Kernels/params.h"

#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <sstream>

using namespace blockscale;

std::string TileChoice::str() const {
  std::ostringstream os;
  os << "bm=" << bm << ",bn=" << bn << ",stages=" << stages
     << ",splits=" << splits << ",raster=" << raster << ",cluster=" << cluster;
  if (ksplit > 1)
    os << ",ksplit=" << ksplit;
  return os.str();
}

bool blockscale::isValidTile(int bm, int bn) {
  return bs::gemmTileImplemented(bm, bn);
}

/// ceil(a / b) for a >= 0 and b > 0, without overflowing near INT64_MAX.
static int64_t ceilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

static llvm::Error invalid(const llvm::Twine &msg) {
  return llvm::createStringError(std::make_error_code(std::errc::invalid_argument), msg);
}

llvm::Error blockscale::validateProblem(const GemmProblem &p,
                                        const DeviceModel &d) {
  for (auto [name, v] : {std::pair<const char *, int64_t>{"M", p.m},
                         {"N", p.n},
                         {"K", p.k}}) {
    if (v < 1)
      return invalid(llvm::formatv("expected {0} >= 1 but got {0} = {1} (an "
                                   "empty or negative size has no kernel)",
                                   name, v));
    if (v > kMaxGemmDim)
      return invalid(llvm::formatv(
          "expected {0} <= 2147483647 (2^31 - 1: the kernels take 32-bit "
          "sizes) but got {0} = {1}; split the GEMM",
          name, v));
  }
  if (p.outBytes != 2 && p.outBytes != 4)
    return invalid(llvm::formatv(
        "expected an output of 2 (bf16) or 4 (f32) bytes per element but got "
        "{0}",
        p.outBytes));
  // Operand and output bytes (M, N, K < 2^31: A and B fit; C in f32 may
  // not).
  std::optional<int64_t> cBytes = llvm::checkedMul<int64_t>(p.m, p.n);
  if (cBytes)
    cBytes = llvm::checkedMul<int64_t>(*cBytes, p.outBytes);
  if (!cBytes)
    return invalid(llvm::formatv(
        "expected the {0}x{1} output of {2}-byte elements to have at most "
        "2^63 - 1 bytes but it has more; split the GEMM",
        p.m, p.n, p.outBytes));
  int64_t fewest = bs::gemmFewestTiles(p.m, p.n);
  if (fewest > kMaxTileCount)
    return invalid(llvm::formatv(
        "expected at most 2147483647 (2^31 - 1) output tiles but a {0}x{1} "
        "output has {2} even in the largest tiles; split the GEMM",
        p.m, p.n, fewest));
  if (d.numSMs < 1 || d.numSMs > kMaxSMs)
    return invalid(llvm::formatv(
        "expected a device with 1 to {0} SMs (num-sms) but got {1}", kMaxSMs,
        d.numSMs));
  if (d.smemBytes < 1 || d.smemBytes > kMaxSmemBytes)
    return invalid(llvm::formatv("expected 1 to {0} bytes of shared memory "
                                 "per CTA (smem-bytes) but got {1}",
                                 kMaxSmemBytes, d.smemBytes));
  return llvm::Error::success();
}

int64_t blockscale::tileUnits(const GemmProblem &p, const TileChoice &c) {
  if (p.m < 0 || p.n < 0 || c.bm < 1 || c.bn < 1 || c.cluster < 1 ||
      c.splits < 1)
    return -1;
  // With CTA pairs an odd N-tile count leaves one idle (computed, clipped)
  // tile per pair row.
  int64_t tilesN = ceilDiv(ceilDiv(p.n, c.bn), c.cluster) * c.cluster;
  std::optional<int64_t> tiles =
      llvm::checkedMul<int64_t>(ceilDiv(p.m, c.bm), tilesN);
  if (tiles)
    tiles = llvm::checkedMul<int64_t>(*tiles, c.splits);
  return tiles ? *tiles : -1;
}

int DeviceModel::clusterSlots(int size) const {
  if (size <= 1)
    return numSMs;
  if (size > 8) // past a portable cluster
    return 0;
  // cudaOccupancyMaxActiveClusters on the H200 (132 SMs, ~200 KB of shared
  // memory per CTA; bench/tools/cluster_occupancy.cu):
  // sizes 2..8 hold 66, 39, 30, 22, 17, 15, 15 clusters (132, 117, 120,
  // 110, 102, 105, 120 SMs). Other SM counts scale that (pairs come out as
  // numSMs / 2: they always fill the TPCs).
  static const int h200[] = {0, 132, 66, 39, 30, 22, 17, 15, 15};
  return int(int64_t(h200[size]) * numSMs / 132);
}

double blockscale::estimateSeconds(const GemmProblem &p, const DeviceModel &d,
                                   TileChoice &c) {
  c.predictedSeconds = INFINITY;
  if (llvm::Error e = validateProblem(p, d)) {
    llvm::consumeError(std::move(e));
    return INFINITY;
  }
  if (!isValidTile(c.bm, c.bn) || c.cluster < 1 || c.splits < 1 ||
      c.ksplit < 1)
    return INFINITY;
  c.stages = std::min(8, bs::gemmMaxStages(c.bm, c.bn, p.outBytes, p.wgrad,
                                           d.smemBytes, c.ksplit));
  if (c.stages < 2)
    return INFINITY;
  int64_t kBlocks = ceilDiv(p.k, 128);
  int64_t units = tileUnits(p, c);
  if (units < 1 || units > kMaxTileCount)
    return INFINITY;
  int64_t tiles = units / c.splits;
  // Fewer SMs than a cluster: no cluster fits.
  int64_t grid = std::min<int64_t>(units, d.numSMs / c.cluster * c.cluster);
  if (grid < 1)
    return INFINITY;
  // Persistent CTAs take units round-robin: the busiest does ceil(units/grid).
  int64_t unitsPerCta = ceilDiv(units, grid);
  if (c.ksplit > 1) {
    // A cluster per tile; as many clusters as fit at once.
    int slots = d.clusterSlots(c.ksplit);
    if (slots < 1)
      return INFINITY;
    unitsPerCta = ceilDiv(tiles, std::min<int64_t>(tiles, slots));
  }
  int64_t kbPerUnit = ceilDiv(kBlocks, c.splits);

  // Time of one 128-deep K-block of one CTA, in SM clocks, fitted to
  // measurements because the kernel is not tensor-bound (ncu: warps wait on
  // the wgmma results and the stage barriers). On the H200 (timed tile
  // variants at bn = 128/160/192, docs/decisions.md): a bm = 128 CTA took ~820 clocks at bn = 128 with the
  // two-accumulator pipeline (bn <= 128, promotion hidden behind the next
  // wgmma) and ~1050 / 1160 at bn = 160 / 192 without it (promotion
  // exposed); a bm = 64 CTA ~850 / 890 at bn = 128 / 192 (an older fit,
  // before the pipeline ran asynchronously).
  const double pipelined128 = 180.0 + 5.0 * c.bn;
  // A bm = 256 K-block of one CTA (see below).
  const double wave256Clk = 1.806 * pipelined128;
  double kbClk;
  if (c.bm == 256) {
    // Two 64-row waves per consumer warpgroup, one B stage for both, simple
    // loop: fitted at bn = 128 against bm = 128 tiles timed beside them:
    // 0.90 of two bm = 128 K-blocks at
    // bn = 128 for forward GEMMs (990 vs 943 TFLOP/s on 4096x7168x16384,
    // 971 vs 934 on 16384x14336x4096, 934 vs 886 on 4096x24576x1536);
    // used for wgrad as well (see rankTiles).
    kbClk = wave256Clk;
    // In CTA pairs sharing A by multicast (cluster = 2), refitted after the
    // compact wgmma issue (the same tile with and without pairs on 18
    // shapes): pairs/single 1.025 at K = 1536 and 2048 (1.010 on
    // dgrad 4096x7168x2048), 0.986 at K = 4096, 0.982 at 7168, 0.979 at
    // 8192, 0.957-0.997 at 14336-16384: a K-block costs 0.967 of a single
    // CTA's and each unit 0.85 K-blocks more (the two CTAs start together
    // and wait for each other's stages), so pairs pay from about 32
    // K-blocks on.
    if (c.cluster == 2)
      kbClk *= 0.967;
  } else if (c.bm == 128)
    kbClk = c.bn <= 128 && c.cluster == 1 ? pipelined128 : 500.0 + 3.44 * c.bn;
  else if (p.m <= 64)
    // One warpgroup's 64 rows cover all of M: about half a bm = 128 CTA's
    // K-block (which spends one of its two warpgroups on rows past M).
    // Fitted on the H200 to forced bm = 64, bn = 32..128 tiles timed beside
    // the planner's on eight shapes with M = 32..128 (bench/variants/
    // small-m.txt): 64x7168x2048 ran 363 TFLOP/s at bm = 64, bn = 64
    // against 211 at bm = 128, bn = 64.
    kbClk = 125.0 + 3.0 * c.bn;
  else
    // With M > 64 a bm = 64 grid streams every B panel once per 64 rows
    // (through L2, which the model does not count): the planner's bm = 128
    // tiles beat the forced bm = 64 ones by 4-45 % at M = 128 in the same
    // runs, so this older, higher fit stays there.
    kbClk = 760.0 + 0.7 * c.bn;
  // A two-stage ring gives the producer no K-block of lead over the math.
  // Measured on the H200 for the weight gradient with f32 output, where
  // bm = 256 leaves room for two stages (bench/variants/wgrad-f32.txt):
  // bm = 256, bn = 112 in two stages ran 0.95 and 0.93x of bm = 128,
  // bn = 192 in three (14336x4096x16384, 4096x14336x16384), where the fit
  // without this factor had it 3 % ahead. Forward GEMMs with f32 output
  // were not measured and keep the fit.
  if (c.bm == 256 && c.stages < 3 && p.wgrad)
    kbClk *= 1.09;
  // Epilogue (registers -> swizzled smem -> TMA store) stalls the math
  // warps; the pipeline refills at the start of every CTA.
  double epiClk = 600 + c.bm * c.bn * p.outBytes / 64.0;
  if (c.bm == 256 && c.cluster == 2)
    epiClk += 0.85 * wave256Clk;
  // Split-K hand-offs, fitted to the phase stamps (blockscale-gen --run
  // --debug=timeline) at M = 128: cycles from the median
  // CTA's last K-block to the tile's stores, which include waiting for the
  // slowest split.
  double fillClk = 2500;
  if (c.splits > 1 && c.ksplit > 1) {
    // Summed in the cluster: each CTA pushes (ksplit-1)/ksplit of its
    // partial to its peers, waits for theirs and stores its share from
    // registers (no staging): 2030 cycles at bn = 64 in 2 splits, 2570 at
    // bn = 64 in 3, 3220 at bn = 80 in 4. A CTA of a cluster has its
    // barriers ready ~600 cycles later than a lone CTA.
    epiClk = 1300 + 350.0 * c.ksplit +
             c.bm * c.bn * 4.0 * (c.ksplit - 1) / c.ksplit / 64.0;
    fillClk += 650;
  } else if (c.splits > 1) {
    // Through the workspace: partial write, fence and counter, then the
    // last split reads the others: 6140 cycles at bn = 64 and 9300 at
    // bn = 128, both in 4 splits (the fit before the stamps, 1500 +
    // 8 bytes per element / 64, had half of that).
    epiClk += 2400 + 1.15 * (c.splits + 1) * c.bm * c.bn * 4.0 / 64.0;
  }
  double ctaClk = fillClk + unitsPerCta * (kbPerUnit * kbClk + epiClk);
  double computeSec = ctaClk / d.clockHz;

  // Device-wide traffic: operands once from HBM (L2 keeps the raster group's
  // panels), output once, split-K workspace twice.
  double hbmBytes = double(p.m) * p.k + double(p.n) * p.k +
                    double(p.m) * p.n * p.outBytes * (p.accumulate ? 2 : 1);
  // Split-K partials are written and read back within microseconds: they
  // reach HBM only when they do not fit in L2 (measured on the H200: M=128,
  // N=7168, K=16384 ran 46.6 us with 15 MB of partials at bn=112, 2 splits,
  // against 49.9 us without splits at bn=64).
  double partialBytes = double(tiles) * c.splits * c.bm * c.bn * 4;
  if (c.splits > 1 && c.ksplit == 1 && partialBytes > d.l2Bytes)
    hbmBytes += partialBytes * 2;
  double hbmSec = hbmBytes / d.hbmBytesPerSec;
  double sec = std::max(computeSec, hbmSec) + d.launchSeconds;
  c.predictedSeconds = sec;
  c.unitsPerCta = unitsPerCta;
  return sec;
}

std::vector<TileChoice> blockscale::rankTiles(const GemmProblem &p,
                                              const DeviceModel &d) {
  std::vector<TileChoice> all;
  if (llvm::Error e = validateProblem(p, d)) {
    llvm::consumeError(std::move(e));
    return all;
  }
  int64_t kBlocks = ceilDiv(p.k, 128);
  static const int bns[] = {16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 192};
  for (int bm : {64, 128, 256}) {
    for (int bn : bns) {
      if (!isValidTile(bm, bn))
        continue;
      // Waves are offered for wgrad too since the compact wgmma issue,
      // which timed bm = 256, bn = 128 at 2.107 ms against 2.174
      // for the planner's bm = 128, bn = 192 on 14336x4096x16384 (2.078 in
      // pairs), 0.599 against 0.654 (bn = 128) on 4096x4096x16384, 2.157
      // against 2.196 on 4096x14336x16384.
      int64_t tiles = ceilDiv(p.m, bm) * ceilDiv(p.n, bn);
      // CTA pairs with A multicast (cluster = 2) measured 0.91-0.92x of
      // the same tile without on the H200 for bm = 128 (bn = 128): forced
      // only. With bm = 256 (two waves) at bn = 128,
      // the tile they were measured with, they are offered (see
      // estimateSeconds), unsplit.
      for (int cluster : {1, 2})
      for (int splits : {1, 2, 3, 4, 6, 8, 12, 16}) {
        if (cluster == 2 && (bm != 256 || bn != 128 || splits > 1))
          break;
        if (splits > kBlocks)
          break;
        // Split K only to fill the machine, never past one unit per SM.
        if (splits > 1 && tiles * splits > 2 * d.numSMs)
          break;
        if (splits > 1 && tiles >= d.numSMs)
          break;
        // Splits through the workspace, and (2 to 4, bm <= 128) summed in a
        // cluster instead; C += AB only in f32 there. Measured: 6 and 8
        // splits in a cluster ran slower than 3-4 (318-327
        // against 396-406 TFLOP/s at M = 128, N = 2112, K = 7168), and
        // bm = 256 in 2 summed splits 944 against 1022 for bm = 128
        // unsplit at M = 512, N = 4096, K = 7168 (the model had them the
        // other way round; +4 % against the workspace's at M = 256,
        // N = 7168, K = 16384).
        for (int ksplit : {1, splits}) {
          if (ksplit > 1 &&
              (ksplit > 4 || bm > 128 || cluster != 1 ||
               (p.accumulate && p.outBytes != 4)))
            continue;
          TileChoice c;
          c.bm = bm;
          c.bn = bn;
          c.splits = splits;
          c.cluster = cluster;
          c.ksplit = ksplit;
          // Raster group: about sqrt(grid) N-tiles so that the concurrent
          // tiles form a square of the output (fewest distinct A and B
          // panels).
          int64_t tilesN = ceilDiv(p.n, bn);
          c.raster = int(std::min<int64_t>(tilesN, 8));
          if (!std::isfinite(estimateSeconds(p, d, c)))
            continue;
          all.push_back(c);
          if (splits == 1)
            break;
        }
      }
    }
  }
  // Tiles bound by HBM traffic tie (the same bytes). Of those, the one with
  // the fewest rounds of work units per CTA finishes first: each round adds
  // an epilogue and a pipeline refill that the memory-bound loop does not
  // hide. Measured: M = 128, N = 24576, K = 1536 at 13.35 us with bn = 192
  // (one unit per CTA) against 14.45 with bn = 96 (two), and M = 128,
  // N = 7168, K = 16384 at 40.5 us with bn = 112 in 2 splits (one unit)
  // against about 48 in 4 splits (two), all at one estimate.
  // Likewise the split-K hand-off: at one estimate, splits summed in a
  // cluster go first (M = 128, N = 7168, K = 16384, bn = 112 in 2 splits:
  // 759 against 723 TFLOP/s through the workspace).
  std::stable_sort(all.begin(), all.end(),
                   [](const TileChoice &a, const TileChoice &b) {
                     if (a.predictedSeconds != b.predictedSeconds)
                       return a.predictedSeconds < b.predictedSeconds;
                     if (a.unitsPerCta != b.unitsPerCta)
                       return a.unitsPerCta < b.unitsPerCta;
                     return (a.ksplit > 1) > (b.ksplit > 1);
                   });
  return all;
}

TileChoice blockscale::selectTile(const GemmProblem &p, const DeviceModel &d) {
  std::vector<TileChoice> ranked = rankTiles(p, d);
  return ranked.empty() ? TileChoice() : ranked.front();
}
