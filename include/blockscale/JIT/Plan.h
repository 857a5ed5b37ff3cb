//===- Plan.h - sharded programs to device plans ----------------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The MLIR side of sharded execution: partition a sharded program into the
// program of one device, turn that into a DevicePlan (with each kernel's
// source planned by the JIT), and read how a program shards its interface.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_JIT_PLAN_H
#define BLOCKSCALE_JIT_PLAN_H

#include "blockscale/Distributed/DevicePlan.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace blockscale::dist {

/// Runs `blockscale-opt --blockscale-shard-pipeline` on a sharded program
/// (MLIR text) and returns the program of one device (MLIR text, with the
/// source's locations). `sourceName` names the source in diagnostics.
llvm::Expected<std::string> partitionProgram(llvm::StringRef source,
                                             bool allowPadding = false,
                                             llvm::StringRef sourceName = "");

/// `program` (MLIR text) printed without its locations, as
/// `blockscale-opt` prints it: partitionProgram's result for reading.
llvm::Expected<std::string> printWithoutLocations(llvm::StringRef program);

/// The plan of function `func` (the first function when empty) of a
/// partitioned (per-device) program. Scale layouts are settled with
/// --blockscale-pad-scales and checked with --blockscale-verify-layouts first;
/// every size must be static.
llvm::Expected<DevicePlan> buildDevicePlan(llvm::StringRef partitioned,
                                           llvm::StringRef func = "");

/// How a sharded program's function splits its global arguments and
/// results: per tensor, per logical dimension, the grid axes it is split over
/// (empty: replicated along that dimension), read from the `shard.shard` ops
/// on the arguments and on the returned values.
struct ProgramShardings {
  std::vector<int64_t> gridShape; // {1} without a grid
  std::vector<std::vector<std::vector<int>>> args, results;
  /// The program with every shard op removed: the same computation on one
  /// device (the reference a sharded run is checked against).
  std::string unsharded;
};
llvm::Expected<ProgramShardings>
describeShardings(llvm::StringRef source, llvm::StringRef func = "",
                  llvm::StringRef sourceName = "");

} // namespace blockscale::dist

#endif
