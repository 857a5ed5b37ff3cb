// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "support/Timeline.h"

#include "gtest/gtest.h"

using namespace blockscale;
namespace tl = bs::timeline;

namespace {
// Stamps as the kernel leaves them: zero where a CTA did not stamp.
struct Stamps {
  std::vector<uint64_t> v = std::vector<uint64_t>(kTimelineBytes / 8, 0);
  void set(int cta, int slot, uint64_t t) { v[cta * tl::kSlots + slot] = t; }
};
} // namespace

TEST(Timeline, NoEntryStampsNoReport) {
  Stamps s;
  EXPECT_EQ(summarizeTimeline(s.v).ctas, 0);
}

TEST(Timeline, PhasesAreRelativeToEachCtasEntry) {
  Stamps s;
  // Three CTAs entering 0 / 200 / 400 ns apart on clocks that disagree
  // (each SM's clock64 has its own origin), all at 2 cycles per ns; CTA 1 is
  // a split that hands off its partial and issues no epilogue.
  const uint64_t clock0[3] = {1000, 50000, 7};
  for (int c = 0; c < 3; ++c) {
    const uint64_t e = clock0[c];
    s.set(c, tl::Entry, e);
    s.set(c, tl::Ready, e + 100 + c);
    s.set(c, tl::FirstLoad, e + 150);
    s.set(c, tl::FirstData, e + 2000 + 1000 * c);
    s.set(c, tl::LoopEnd, e + 9000);
    s.set(c, tl::SplitDone, e + 10000);
    if (c != 1)
      s.set(c, tl::EpiIssued, e + 11000);
    s.set(c, tl::Exit, e + 12000);
    s.set(c, tl::GEntry, 5000000 + 200 * c);
    s.set(c, tl::GExit, 5000000 + 200 * c + 6000); // 12000 cycles in 6 us
  }
  TimelineReport r = summarizeTimeline(s.v);
  EXPECT_EQ(r.ctas, 3);
  EXPECT_NEAR(r.entrySkewUs, 0.4, 1e-9);
  EXPECT_NEAR(r.spanUs, 6.4, 1e-9);
  EXPECT_NEAR(r.clockGHz, 2.0, 1e-9);
  ASSERT_EQ(r.phases.size(), 7u); // ready .. exit
  EXPECT_STREQ(r.phases[0].name, "ready");
  EXPECT_EQ(r.phases[0].minCycles, 100u);
  EXPECT_EQ(r.phases[0].maxCycles, 102u);
  EXPECT_STREQ(r.phases[2].name, "first-data");
  EXPECT_EQ(r.phases[2].minCycles, 2000u);
  EXPECT_EQ(r.phases[2].medianCycles, 3000u);
  EXPECT_EQ(r.phases[2].maxCycles, 4000u);
  EXPECT_STREQ(r.phases[5].name, "epi-issued");
  EXPECT_EQ(r.phases[5].ctas, 2); // the handing-off split has none
  EXPECT_EQ(r.phases[6].ctas, 3);
  std::string text = formatTimeline(r);
  EXPECT_NE(text.find("3 CTAs, span 6.40 us"), std::string::npos) << text;
  EXPECT_NE(text.find("first-data"), std::string::npos) << text;
}
