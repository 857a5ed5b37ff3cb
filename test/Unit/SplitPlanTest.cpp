#include "blockscale/Runtime/Runtime.h"
#include "blockscale/Target/Cuda/Kernels/params.h"

#include "gtest/gtest.h"

#include <cstdlib>

using namespace blockscale;

namespace {
GemmKernelSpec tile(int bm, int bn, int cluster = 1) {
  GemmKernelSpec s;
  s.bm = bm;
  s.bn = bn;
  s.cluster = cluster;
  return s;
}
} // namespace

// 4096x2112x7168 with 128x192 tiles: 352 tiles are 2 waves of 132 and 88
// left; splitting those 3 ways fills one more wave twice (2.7 instead of 3
// tile times).
TEST(SplitPlan, LastPartialWaveIsSplit) {
  GemmLaunchConfig l;
  GemmSplitPlan p = planGemmSplits(tile(128, 192), l, 4096, 2112, 7168, 132);
  EXPECT_EQ(p.splitFrom, 264);
  EXPECT_EQ(p.splits, 3);
  // 88 split tiles x 3 partials of 128x192 f32, after the counters.
  EXPECT_EQ(gemmWorkspaceBytes(tile(128, 192), l, 4096, 2112, 7168, 132),
            size_t(bs::kSplitKCounterBytes) + 88ull * 3 * 128 * 192 * 4);
  // 4096x7168x16384, 128x128: 13 waves and 76 tiles; 5 ways.
  p = planGemmSplits(tile(128, 128), l, 4096, 7168, 16384, 132);
  EXPECT_EQ(p.splitFrom, 1792 - 76);
  EXPECT_EQ(p.splits, 5);
}

TEST(SplitPlan, NothingToGainMeansNoSplit) {
  GemmLaunchConfig l;
  GemmSplitPlan none;
  // Whole waves only (24 x 11 tiles: 2 waves of 132).
  EXPECT_EQ(planGemmSplits(tile(128, 128), l, 128 * 24, 128 * 11, 4096, 132),
            none);
  // Fewer tiles than CTAs: the tile selection's own split-K decides.
  EXPECT_EQ(planGemmSplits(tile(128, 128), l, 512, 2048, 7168, 132), none);
  // K too short for 4-deep splits (4096x32768x512).
  EXPECT_EQ(planGemmSplits(tile(128, 192), l, 4096, 32768, 512, 132), none);
  // A predicted gain under 2 % (4096x4096x7168: 7 waves and 100 tiles).
  EXPECT_EQ(planGemmSplits(tile(128, 128), l, 4096, 4096, 7168, 132), none);
  // CTA pairs, an unknown SM count, no rows.
  EXPECT_EQ(planGemmSplits(tile(128, 192, 2), l, 4096, 2112, 7168, 132), none);
  EXPECT_EQ(planGemmSplits(tile(128, 192), l, 4096, 2112, 7168, 0), none);
  EXPECT_EQ(planGemmSplits(tile(128, 192), l, 0, 2112, 7168, 132), none);
  EXPECT_EQ(gemmWorkspaceBytes(tile(128, 192), l, 4096, 2112, 7168, 0), 0u);
}

TEST(SplitPlan, TileSplitsApplyToEveryTile) {
  GemmLaunchConfig l;
  l.splits = 4;
  GemmSplitPlan p = planGemmSplits(tile(128, 64), l, 128, 2112, 7168, 132);
  EXPECT_EQ(p.splitFrom, 0);
  EXPECT_EQ(p.splits, 4);
  // Capped at the K-block count.
  EXPECT_EQ(planGemmSplits(tile(128, 64), l, 128, 2112, 256, 132).splits, 2);
  EXPECT_EQ(gemmWorkspaceBytes(tile(128, 64), l, 128, 2112, 7168, 132),
            size_t(bs::kSplitKCounterBytes) + 33ull * 4 * 128 * 64 * 4);
}

TEST(SplitPlan, EnvironmentTurnsTheLastWaveSplitOff) {
  GemmLaunchConfig l;
  setenv("BLOCKSCALE_NO_TAIL_SPLIT", "1", 1);
  GemmSplitPlan p = planGemmSplits(tile(128, 192), l, 4096, 2112, 7168, 132);
  unsetenv("BLOCKSCALE_NO_TAIL_SPLIT");
  EXPECT_EQ(p, GemmSplitPlan());
  EXPECT_EQ(planGemmSplits(tile(128, 192), l, 4096, 2112, 7168, 132).splits, 3);
}
