// How a launch splits K: uniformly (the configuration's splits), only the
// tiles of the last, partial wave (bs::planTail), or not at all.
#include "blockscale/Runtime/Runtime.h"
#include "blockscale/Target/Cuda/Kernels/params.h"

#include "gtest/gtest.h"

using namespace blockscale;

TEST(SplitTail, SplitsOnlyThePartialLastWave) {
  // 4096x2112x7168 at 128x192: 32 x 11 = 352 tiles on 132 SMs, 56 K-blocks.
  // Whole: three waves, the last 88 tiles on 88 CTAs (168 K-block times).
  // Two whole waves, then the 88 tiles split 3 ways: 264 units, two per CTA
  // of 19 K-blocks (2 * 56 + 38 + overhead).
  bs::TailPlan t = bs::planTail(352, 132, 56, 128 * 192 * 4, 64LL << 20);
  EXPECT_EQ(t.splits, 3);
  EXPECT_EQ(t.dpGroups, 264);
  EXPECT_LT(bs::tailCostKb(352, 132, 56, 3), bs::tailCostKb(352, 132, 56, 1));
}

TEST(SplitTail, NothingToGain) {
  // Less than one wave, or whole waves only: no split.
  EXPECT_EQ(bs::planTail(100, 132, 56, 65536, 64LL << 20).splits, 1);
  EXPECT_EQ(bs::planTail(264, 132, 56, 65536, 64LL << 20).splits, 1);
  // A last wave almost full (116 of 132 tiles): splitting it costs more
  // than the idle SMs.
  EXPECT_EQ(bs::planTail(512, 132, 56, 131072, 64LL << 20).splits, 1);
  // Four K-blocks: one K-block per split does not pay for the partials.
  EXPECT_EQ(bs::planTail(4096, 132, 4, 131072, 64LL << 20).splits, 1);
}

TEST(SplitTail, PartialsStayWithinTheCap) {
  // 104 tiles of 256x128 would want 5 splits (68 MB of partials).
  bs::TailPlan unlimited = bs::planTail(896, 132, 128, 131072, 1LL << 40);
  EXPECT_EQ(unlimited.splits, 5);
  bs::TailPlan capped = bs::planTail(896, 132, 128, 131072, 64LL << 20);
  EXPECT_EQ(capped.splits, 1);
}

TEST(SplitTail, LaunchPlan) {
  GemmKernelSpec s;
  s.bm = 128;
  s.bn = 192;
  s.cluster = 1;
  GemmLaunchConfig l;
  l.splits = 1;
  GemmSplitPlan p = planGemmSplits(s, l, 4096, 2112, 7168, 132);
  EXPECT_EQ(p.splits, 3);
  EXPECT_EQ(p.dpGroups, 264);
  EXPECT_EQ(p.splitTiles, 88);
  EXPECT_EQ(gemmWorkspaceBytes(p, s),
            size_t(bs::kSplitKCounterBytes) + 88u * 3 * 128 * 192 * 4);
  // No device, or the split tail turned off by grid size 0: nothing split.
  EXPECT_EQ(planGemmSplits(s, l, 4096, 2112, 7168, 0).splits, 1);
  // A configuration's uniform split covers every tile.
  l.splits = 2;
  p = planGemmSplits(s, l, 128, 2112, 7168, 132);
  EXPECT_EQ(p.splits, 2);
  EXPECT_EQ(p.dpGroups, 0);
  EXPECT_EQ(p.splitTiles, 11);
  // Pairs are not planned (their grid depends on the clusters that fit).
  l.splits = 1;
  s.cluster = 2;
  EXPECT_EQ(planGemmSplits(s, l, 4096, 2112, 7168, 132).splits, 1);
}
