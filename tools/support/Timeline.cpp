//===- Timeline.cpp - phase stamps of an instrumented GEMM ------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "support/Timeline.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace blockscale;
namespace tl = bs::timeline;

// In the order of bs::timeline::Slot (params.h, which NVRTC compiles too and
// so holds no strings).
static const char *const kSlotNames[] = {
    "entry",      "ready",      "prod-reg",   "prod-start", "first-issue",
    "first-load",
    "first-data", "loop-end",   "split-done", "epi-issued",  "exit",
    "g-entry",    "g-exit"};
static_assert(sizeof(kSlotNames) / sizeof(kSlotNames[0]) == tl::kSlots,
              "one name per bs::timeline::Slot");

static uint64_t median(std::vector<uint64_t> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

TimelineReport blockscale::summarizeTimeline(
    const std::vector<uint64_t> &stamps) {
  TimelineReport r;
  auto at = [&](int c, int s) { return stamps[size_t(c) * tl::kSlots + s]; };
  const int n = std::min<int>(tl::kMaxCtas, stamps.size() / tl::kSlots);
  std::vector<int> ctas;
  for (int c = 0; c < n; ++c)
    if (at(c, tl::Entry) != 0 && at(c, tl::GEntry) != 0)
      ctas.push_back(c);
  r.ctas = ctas.size();
  if (ctas.empty())
    return r;
  uint64_t g0 = UINT64_MAX, gEntryMax = 0, g1 = 0;
  std::vector<uint64_t> clocks; // cycles per 1000 ns, entry to exit
  for (int c : ctas) {
    g0 = std::min(g0, at(c, tl::GEntry));
    gEntryMax = std::max(gEntryMax, at(c, tl::GEntry));
    if (at(c, tl::GExit) > at(c, tl::GEntry) && at(c, tl::Exit) > at(c, tl::Entry)) {
      g1 = std::max(g1, at(c, tl::GExit));
      clocks.push_back((at(c, tl::Exit) - at(c, tl::Entry)) * 1000 /
                       (at(c, tl::GExit) - at(c, tl::GEntry)));
    }
  }
  r.spanUs = g1 > g0 ? (g1 - g0) * 1e-3 : 0;
  r.entrySkewUs = (gEntryMax - g0) * 1e-3;
  r.clockGHz = clocks.empty() ? 0 : median(clocks) * 1e-3;
  for (int s = tl::Ready; s <= tl::Exit; ++s) {
    std::vector<uint64_t> d;
    for (int c : ctas) // (an unstamped phase reads 0, below the entry)
      if (at(c, s) >= at(c, tl::Entry))
        d.push_back(at(c, s) - at(c, tl::Entry));
    if (d.empty())
      continue;
    TimelinePhase p;
    p.name = kSlotNames[s];
    p.ctas = d.size();
    p.minCycles = *std::min_element(d.begin(), d.end());
    p.maxCycles = *std::max_element(d.begin(), d.end());
    p.medianCycles = median(d);
    r.phases.push_back(p);
  }
  return r;
}

std::string blockscale::formatTimeline(const TimelineReport &r) {
  std::string out = llvm::formatv("timeline: {0} CTAs, span {1:f2} us, entry "
                                  "skew {2:f2} us, SM clock {3:f2} GHz\n",
                                  r.ctas, r.spanUs, r.entrySkewUs, r.clockGHz);
  for (const TimelinePhase &p : r.phases)
    out += llvm::formatv("timeline:   {0,-10} {1,4} CTAs  cycles after entry: "
                         "min {2,7} median {3,7} max {4,7}\n",
                         p.name, p.ctas, p.minCycles, p.medianCycles,
                         p.maxCycles);
  return out;
}
