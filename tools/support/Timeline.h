//===- Timeline.h - phase stamps of an instrumented GEMM ---------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A GEMM compiled with the timeline debug option records, per CTA,
// clock64 at each phase of bs::timeline::Slot and globaltimer at entry and
// exit in its module-scope array `bsTimelineStamps`. This turns one launch's
// array into a report: per phase, the cycles after each CTA's entry
// (minimum, median, maximum over the CTAs that reached it), the span of the
// launch and the spread of the CTAs' entries (ns), and the SM clock they
// imply. No MLIR, no CUDA: plain arithmetic on the copied-back array.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_RUNTIME_TIMELINE_H
#define BLOCKSCALE_RUNTIME_TIMELINE_H

#include "blockscale/Target/Cuda/Kernels/params.h"

#include <cstdint>
#include <string>
#include <vector>

namespace blockscale {

/// The array's name in the module (extern "C" in timeline.cuh).
inline constexpr const char *kTimelineSymbol = "bsTimelineStamps";
/// Its size in bytes.
inline constexpr size_t kTimelineBytes =
    size_t(bs::timeline::kMaxCtas) * bs::timeline::kSlots * 8;

struct TimelinePhase {
  const char *name;
  int ctas = 0; // CTAs that stamped it
  uint64_t minCycles = 0, medianCycles = 0, maxCycles = 0;
};

struct TimelineReport {
  int ctas = 0;             // CTAs with an entry stamp
  double spanUs = 0;        // last exit - first entry (globaltimer)
  double entrySkewUs = 0;   // last entry - first entry
  double clockGHz = 0;      // median over CTAs of cycles / ns, entry to exit
  std::vector<TimelinePhase> phases; // Ready .. Exit, those some CTA reached
};

/// Summarizes `stamps` (kMaxCtas * kSlots values as the kernel left them,
/// zero where a CTA did not stamp). Needs at least one CTA with an entry
/// stamp; returns ctas == 0 otherwise.
TimelineReport summarizeTimeline(const std::vector<uint64_t> &stamps);

/// The report as text, one line per phase.
std::string formatTimeline(const TimelineReport &r);

} // namespace blockscale

#endif // BLOCKSCALE_RUNTIME_TIMELINE_H
