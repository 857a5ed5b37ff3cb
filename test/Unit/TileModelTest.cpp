// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "blockscale/Dialect/BlockScale/Transforms/TileModel.h"
#include "blockscale/Target/Cuda/Kernels/params.h"

#include "gtest/gtest.h"
#include <climits>
#include <cmath>

using namespace blockscale;

TEST(TileModel, ValidTiles) {
  EXPECT_TRUE(isValidTile(128, 128));
  EXPECT_TRUE(isValidTile(64, 16));
  EXPECT_TRUE(isValidTile(128, 192));
  EXPECT_FALSE(isValidTile(128, 176)); // would straddle three scale blocks
  EXPECT_TRUE(isValidTile(256, 128));  // two 64-row waves per warpgroup
  EXPECT_FALSE(isValidTile(256, 160)); // their accumulators would not fit
  EXPECT_FALSE(isValidTile(192, 128));
  EXPECT_FALSE(isValidTile(128, 8));
}

TEST(TileModel, ChoicesFitSharedMemory) {
  DeviceModel d;
  for (int64_t m : {1, 128, 4096, 16384})
    for (int64_t n : {256, 2112, 7168})
      for (int64_t k : {512, 7168}) {
        for (bool wgrad : {false, true}) {
          GemmProblem p{m, n, k, wgrad, 2, false};
          TileChoice c = selectTile(p, d);
          EXPECT_TRUE(isValidTile(c.bm, c.bn)) << c.str();
          EXPECT_GE(c.stages, 2);
          EXPECT_LE(bs::gemmSmemBytes(c.bm, c.bn, c.stages, 2, wgrad,
                                      c.ksplit),
                    d.smemBytes);
          EXPECT_TRUE(c.ksplit == 1 || c.ksplit == c.splits) << c.str();
          EXPECT_LE(c.splits, (k + 127) / 128);
          EXPECT_GT(c.predictedSeconds, 0);
        }
      }
}

TEST(TileModel, SplitsKOnlyWhenTilesDoNotFillTheGpu) {
  DeviceModel d;
  TileChoice small = selectTile({128, 2112, 7168, false, 2, false}, d);
  EXPECT_GT(small.splits, 1) << small.str();
  TileChoice big = selectTile({4096, 7168, 16384, false, 2, false}, d);
  EXPECT_EQ(big.splits, 1) << big.str();
  EXPECT_EQ(big.bm, 256) << big.str();
}

TEST(TileModel, RankingIsSorted) {
  DeviceModel d;
  std::vector<TileChoice> all = rankTiles({4096, 4096, 7168, false, 2, false}, d);
  ASSERT_GT(all.size(), 10u);
  for (size_t i = 1; i < all.size(); ++i)
    EXPECT_LE(all[i - 1].predictedSeconds, all[i].predictedSeconds);
}

// HBM-bound tiles tie on the estimate; the tie goes to the fewest rounds of
// work units per CTA (measured: M = 128, N = 24576, K = 1536 at
// 13.35 us with bn = 192, one unit per CTA, against 14.45 us with the bn = 96
// that the first-listed tie gave before).
TEST(TileModel, HbmBoundTiesGoToFewerUnitsPerCta) {
  DeviceModel d;
  GemmProblem p{128, 24576, 1536, false, 2, false};
  std::vector<TileChoice> all = rankTiles(p, d);
  ASSERT_GT(all.size(), 3u);
  for (size_t i = 1; i < all.size(); ++i) {
    if (all[i - 1].predictedSeconds == all[i].predictedSeconds) {
      EXPECT_LE(all[i - 1].unitsPerCta, all[i].unitsPerCta) << all[i].str();
    }
  }
  // Several tiles share the best estimate; the choice is the one-round one.
  EXPECT_EQ(all[0].predictedSeconds, all[1].predictedSeconds);
  TileChoice c = selectTile(p, d);
  EXPECT_EQ(c.bn, 192) << c.str();
  EXPECT_EQ(c.unitsPerCta, 1) << c.str();
  // M = 128, N = 7168, K = 16384: the measured bn = 112 in 2 splits (one
  // unit per CTA) stays ahead of the same tile in 4 splits (two).
  TileChoice d7 = selectTile({128, 7168, 16384, false, 2, false}, d);
  EXPECT_EQ(d7.bn, 112) << d7.str();
  EXPECT_EQ(d7.splits, 2) << d7.str();
}

// The model must rank the measured configurations the way the H200 did
// (the GEMM table and tile variants timed there): a
// refit that breaks one of these should come with new measurements.
TEST(TileModel, AgreesWithMeasuredOrderOnTheH200) {
  DeviceModel d;
  struct Case {
    GemmProblem p;
    int bn, splits; // fastest measured of bn 128 / 160 / 192 / 112x2
  } cases[] = {
      {{16384, 14336, 4096, false, 2, false}, 192, 1},
      {{14336, 4096, 16384, true, 2, false}, 192, 1},
      {{4096, 2112, 7168, false, 2, false}, 192, 1},
      {{4096, 7168, 2048, false, 2, false}, 160, 1},
      {{4096, 4096, 16384, true, 2, false}, 128, 1},
      {{128, 7168, 16384, false, 2, false}, 112, 2},
  };
  for (const Case &c : cases) {
    // Those measurements compared bm = 128 tiles: the best of them.
    TileChoice t;
    for (const TileChoice &r : rankTiles(c.p, d))
      if (r.bm == 128) {
        t = r;
        break;
      }
    EXPECT_EQ(t.bm, 128) << t.str();
    EXPECT_EQ(t.bn, c.bn) << c.p.m << "x" << c.p.n << "x" << c.p.k << ": "
                          << t.str();
    EXPECT_EQ(t.splits, c.splits) << t.str();
  }
}

// Two 64-row waves per warpgroup (bm = 256, bn = 128) against the selected
// bm = 128 tiles, timed side by side: faster
// for the large forward GEMMs, slower where 256-row tiles leave SMs idle
// (4096x2112x7168: 272 tiles on 132 SMs); with the compact wgmma issue
// also faster for wgrad with K = 16384 (2.107 / 2.078 ms in pairs against
// 2.174 ms for bm = 128, bn = 192).
TEST(TileModel, WavesWhereTheH200MeasuredThemFaster) {
  DeviceModel d;
  struct Case {
    GemmProblem p;
    int bm;
  } cases[] = {
      {{4096, 7168, 16384, false, 2, false}, 256},
      {{16384, 14336, 4096, false, 2, false}, 256},
      {{4096, 24576, 1536, false, 2, false}, 256},
      {{4096, 32768, 512, false, 2, false}, 256},
      {{4096, 2112, 7168, false, 2, false}, 128},
      {{14336, 4096, 16384, true, 2, false}, 256},
      {{4096, 14336, 16384, true, 2, false}, 256},
      // With f32 output bm = 256 fits two stages only: bm = 128, bn = 192 in
      // three ran 1.05 and 1.07x faster (bench/variants/wgrad-f32.txt).
      {{14336, 4096, 16384, true, 4, false}, 128},
      {{4096, 14336, 16384, true, 4, false}, 128},
      // (the M the Python ops plan the first of them with)
      {{16384, 4096, 16384, true, 4, false}, 128},
      {{128, 7168, 16384, false, 2, false}, 128},
  };
  for (const Case &c : cases) {
    TileChoice t = selectTile(c.p, d);
    EXPECT_EQ(t.bm, c.bm) << c.p.m << "x" << c.p.n << "x" << c.p.k << ": "
                          << t.str();
  }
}

// One-warpgroup tiles (bm = 64) where they cover all of M, against the
// planner's earlier bm = 128 choice, timed side by side
// (bench/variants/small-m.txt): 64x7168x2048 at bm = 64, bn = 64 ran
// 363 TFLOP/s against 211 at bm = 128, bn = 64; 64x4096x7168 398 at bm = 64,
// bn = 64 in 2 splits; at M = 128 the bm = 128 tiles stayed faster
// (783 against 641 at 128x7168x16384, 453 against 433 at 128x2112x7168).
TEST(TileModel, OneWarpgroupTilesWhereTheyCoverM) {
  DeviceModel d;
  struct Case {
    GemmProblem p;
    int bm, bn, splits;
  } cases[] = {
      {{64, 7168, 2048, false, 2, false}, 64, 64, 1},
      {{32, 7168, 2048, false, 2, false}, 64, 64, 1},
      {{64, 4096, 7168, false, 2, false}, 64, 64, 2},
      {{64, 7168, 16384, false, 2, false}, 64, 112, 2},
      {{64, 24576, 1536, false, 2, false}, 64, 192, 1},
      {{128, 7168, 16384, false, 2, false}, 128, 112, 2},
      {{128, 2112, 7168, false, 2, false}, 128, 80, 4},
  };
  for (const Case &c : cases) {
    TileChoice t = selectTile(c.p, d);
    EXPECT_EQ(t.bm, c.bm) << c.p.m << "x" << c.p.n << "x" << c.p.k << ": "
                          << t.str();
    EXPECT_EQ(t.bn, c.bn) << c.p.m << "x" << c.p.n << "x" << c.p.k << ": "
                          << t.str();
    EXPECT_EQ(t.splits, c.splits) << c.p.m << "x" << c.p.n << "x" << c.p.k
                                  << ": " << t.str();
  }
}

// bm = 256 tiles in CTA pairs sharing A (cluster = 2) against the same tile
// alone, after the compact wgmma issue:
// faster with K >= 4096, slower at K <= 2048 (4096x24576x1536 0.297 against
// 0.290 ms, 4096x7168x2048 0.110 against 0.107); never chosen for N = 2112
// or bm = 128.
TEST(TileModel, WavePairsWhereTheH200MeasuredThemFaster) {
  DeviceModel d;
  struct Case {
    GemmProblem p;
    int bm, cluster;
  } cases[] = {
      {{16384, 14336, 4096, false, 2, false}, 256, 2},
      {{4096, 4096, 7168, false, 2, false}, 256, 2},
      {{8192, 8192, 8192, false, 2, false}, 256, 2},
      {{4096, 32768, 512, false, 2, false}, 256, 1},
      {{4096, 24576, 1536, false, 2, false}, 256, 1},
      {{4096, 7168, 2048, false, 2, false}, 256, 1},
      {{4096, 2112, 7168, false, 2, false}, 128, 1},
      {{14336, 4096, 16384, true, 2, false}, 256, 2},
      {{128, 7168, 16384, false, 2, false}, 128, 1},
  };
  for (const Case &c : cases) {
    TileChoice t = selectTile(c.p, d);
    EXPECT_EQ(t.bm, c.bm) << c.p.m << "x" << c.p.n << "x" << c.p.k << ": "
                          << t.str();
    EXPECT_EQ(t.cluster, c.cluster) << c.p.m << "x" << c.p.n << "x" << c.p.k
                                    << ": " << t.str();
  }
}

TEST(TileModel, ClusterSlotsOfTheH200) {
  DeviceModel d; // measured with bench/tools/cluster_occupancy.cu
  EXPECT_EQ(d.clusterSlots(1), 132);
  EXPECT_EQ(d.clusterSlots(2), 66);
  EXPECT_EQ(d.clusterSlots(3), 39);
  EXPECT_EQ(d.clusterSlots(4), 30);
  EXPECT_EQ(d.clusterSlots(8), 15);
  EXPECT_EQ(d.clusterSlots(9), 0); // past a portable cluster
  d.numSMs = 66;
  EXPECT_EQ(d.clusterSlots(2), 33);
  EXPECT_EQ(d.clusterSlots(4), 15);
}

// The same shape and tile with the splits summed through the workspace and
// in a cluster, timed side by side: at M = 128 the cluster won
// whenever its tiles fit the resident clusters, and lost when they did not.
TEST(TileModel, SplitsSummedInAClusterWhereTheyFit) {
  DeviceModel d;
  GemmProblem p{128, 2112, 7168, false, 2, false};
  auto est = [&](int bn, int splits, int ksplit) {
    TileChoice c;
    c.bm = 128;
    c.bn = bn;
    c.splits = splits;
    c.ksplit = ksplit;
    double s = estimateSeconds(p, d, c);
    return std::make_pair(s, c.unitsPerCta);
  };
  // 33 tiles of bn = 64 in 3 splits: 33 of 39 clusters of 3 (406 against
  // 382 TFLOP/s for the workspace's bn = 64 in 4 splits).
  EXPECT_LT(est(64, 3, 3).first, est(64, 3, 1).first);
  EXPECT_LT(est(64, 3, 3).first, est(64, 4, 1).first);
  EXPECT_EQ(est(64, 3, 3).second, 1);
  // 33 tiles in clusters of 4: only 30 fit, so the busiest cluster takes
  // two tiles (277 TFLOP/s).
  EXPECT_EQ(est(64, 4, 4).second, 2);
  EXPECT_GT(est(64, 4, 4).first, est(64, 4, 1).first);

  TileChoice c = selectTile(p, d);
  EXPECT_EQ(c.ksplit, c.splits) << c.str();
  EXPECT_GT(c.ksplit, 1) << c.str();
  EXPECT_LE(c.ksplit, 4) << c.str(); // 6 and 8 measured slower
  // M = 128, N = 4096, K = 7168: bn = 64 in 2 splits summed in pairs ran
  // 624 against 509 TFLOP/s (bn = 128 in 4 splits through the workspace).
  TileChoice c4 = selectTile({128, 4096, 7168, false, 2, false}, d);
  EXPECT_EQ(c4.bn, 64) << c4.str();
  EXPECT_EQ(c4.ksplit, 2) << c4.str();
  // Memory-bound ties go to the cluster: M = 128, N = 7168, K = 16384 at
  // bn = 112 in 2 splits, 759 against 723 TFLOP/s.
  TileChoice c7 = selectTile({128, 7168, 16384, false, 2, false}, d);
  EXPECT_EQ(c7.bn, 112) << c7.str();
  EXPECT_EQ(c7.ksplit, 2) << c7.str();
}

TEST(TileModel, NoClusterSumForBf16Accumulation) {
  // The kernel adds into C from registers only for f32 (C += AB in bf16
  // goes through TMA reduce-add after the workspace hand-off).
  DeviceModel d;
  for (const TileChoice &c :
       rankTiles({128, 2112, 7168, true, 2, true}, d))
    EXPECT_EQ(c.ksplit, 1) << c.str();
  bool any = false;
  for (const TileChoice &c :
       rankTiles({128, 2112, 7168, true, 4, true}, d))
    any |= c.ksplit > 1;
  EXPECT_TRUE(any);
}

// Hardening (issue 31): the model's preconditions are checked, never divided
// by zero or wrapped.
static std::string validationText(const GemmProblem &p, const DeviceModel &d) {
  llvm::Error e = validateProblem(p, d);
  return e ? llvm::toString(std::move(e)) : std::string();
}

TEST(TileModel, ValidateProblemRejectsEmptyNegativeAndHugeSizes) {
  DeviceModel d;
  EXPECT_EQ(validationText({128, 2112, 7168, false, 2, false}, d), "");
  EXPECT_NE(validationText({0, 2112, 7168, false, 2, false}, d)
                .find("expected M >= 1 but got M = 0"),
            std::string::npos);
  EXPECT_NE(validationText({128, 0, 7168, false, 2, false}, d)
                .find("expected N >= 1 but got N = 0"),
            std::string::npos);
  EXPECT_NE(validationText({128, 2112, -128, false, 2, false}, d)
                .find("expected K >= 1 but got K = -128"),
            std::string::npos);
  for (int64_t huge : {int64_t(1) << 31, int64_t(1) << 62, INT64_MAX})
    EXPECT_NE(validationText({huge, 2112, 7168, false, 2, false}, d)
                  .find("expected M <= 2147483647"),
              std::string::npos)
        << huge;
  EXPECT_NE(validationText({kMaxGemmDim, kMaxGemmDim, 128, false, 2, false}, d)
                .find("output tiles"),
            std::string::npos);
  EXPECT_NE(validationText({kMaxGemmDim, kMaxGemmDim, 128, false, 4, false}, d)
                .find("at most 2^63 - 1 bytes"),
            std::string::npos);
  EXPECT_NE(validationText({128, 2112, 7168, false, 3, false}, d)
                .find("2 (bf16) or 4 (f32)"),
            std::string::npos);
}

TEST(TileModel, ValidateProblemRejectsBadDevices) {
  GemmProblem p{128, 2112, 7168, false, 2, false};
  for (int sms : {0, -5, kMaxSMs + 1}) {
    DeviceModel d;
    d.numSMs = sms;
    EXPECT_NE(validationText(p, d).find("SMs (num-sms) but got " +
                                        std::to_string(sms)),
              std::string::npos)
        << sms;
    EXPECT_TRUE(rankTiles(p, d).empty()) << sms;
    TileChoice c;
    EXPECT_TRUE(std::isinf(estimateSeconds(p, d, c))) << sms;
  }
  DeviceModel d;
  d.smemBytes = 0;
  EXPECT_NE(validationText(p, d).find("smem-bytes"), std::string::npos);
}

TEST(TileModel, InvalidProblemsRankNothingAndEstimateInfinity) {
  DeviceModel d;
  for (GemmProblem p : {GemmProblem{0, 2112, 7168, false, 2, false},
                        GemmProblem{128, 0, 7168, false, 2, false},
                        GemmProblem{128, 2112, 0, false, 2, false},
                        GemmProblem{int64_t(1) << 62, int64_t(1) << 62,
                                    int64_t(1) << 62, false, 4, false}}) {
    EXPECT_TRUE(rankTiles(p, d).empty());
    TileChoice c;
    EXPECT_TRUE(std::isinf(estimateSeconds(p, d, c)));
    TileChoice s = selectTile(p, d); // the default, no crash
    EXPECT_EQ(s.bm, 128);
  }
}

TEST(TileModel, OneSmStillChoosesAndSkipsClusters) {
  DeviceModel d;
  d.numSMs = 1;
  GemmProblem p{4096, 7168, 16384, false, 2, false};
  std::vector<TileChoice> all = rankTiles(p, d);
  ASSERT_FALSE(all.empty());
  for (const TileChoice &c : all) {
    EXPECT_EQ(c.cluster, 1) << c.str(); // a pair does not fit on one SM
    EXPECT_TRUE(std::isfinite(c.predictedSeconds)) << c.str();
  }
  TileChoice pair;
  pair.bm = 256;
  pair.bn = 128;
  pair.cluster = 2;
  EXPECT_TRUE(std::isinf(estimateSeconds(p, d, pair)));
}

TEST(TileModel, TileUnitsIsChecked) {
  TileChoice c;
  c.bm = 64;
  c.bn = 16;
  c.splits = 16;
  EXPECT_EQ(tileUnits({128, 32, 128, false, 2, false}, c), 2 * 2 * 16);
  EXPECT_EQ(tileUnits({INT64_MAX, INT64_MAX, 128, false, 2, false}, c), -1);
  c.splits = 0;
  EXPECT_EQ(tileUnits({128, 32, 128, false, 2, false}, c), -1);
}
