//===- DevicePlan.h - the program of one device ------------------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A partitioned blockscale program (the output of
// `blockscale-opt --blockscale-shard-pipeline`: the program of one device,
// with shard collectives) as a DevicePlan: a straight-line list of cast
// kernels, GEMM kernels and collectives over buffers with known local shapes
// and physical layouts. Plans are built by the JIT (blockscale/JIT/Plan.h,
// MLIR) and run by the Executor (Executor.h, no MLIR).
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_DISTRIBUTED_DEVICEPLAN_H
#define BLOCKSCALE_DISTRIBUTED_DEVICEPLAN_H

#include "blockscale/Runtime/Gemm.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace blockscale::dist {

enum class ElemType { F8E4M3, F8E5M2, BF16, F16, F32 };
int elemBytes(ElemType t);
llvm::StringRef toString(ElemType t);

/// A buffer of the plan: local (per-device) logical shape and the physical
/// strides (elements) of its two logical dimensions.
struct TensorInfo {
  std::string name;
  ElemType type = ElemType::F32;
  std::vector<int64_t> shape;   // logical, local
  std::vector<int64_t> strides; // physical, per logical dimension
  int64_t allocElements = 0;
  /// The logical dimension whose stride is largest (the physical outer
  /// dimension): collectives move contiguous chunks along it.
  int outerDim() const;
  /// Bytes of the allocation.
  size_t bytes() const { return size_t(allocElements) * elemBytes(type); }
};

struct Step {
  enum class Kind { Quantize, Gemm, AllReduce, AllGather, ReduceScatter };
  Kind kind;
  std::vector<int> inputs, outputs; // tensor indices
  QuantDesc quant;                  // Quantize
  GemmDesc gemm;                    // Gemm (M static)
  /// Quantize and Gemm: the kernel's generated source and launch choices,
  /// as the JIT planned them (buildDevicePlan), so that executing the plan
  /// needs no MLIR.
  std::string kernelSource;
  GemmLaunchConfig launch;
  std::vector<int> gridAxes;        // collectives
  int axis = 0;                     // gather / scatter axis (logical)

  bool isCollective() const {
    return kind == Kind::AllReduce || kind == Kind::AllGather ||
           kind == Kind::ReduceScatter;
  }
};

struct DevicePlan {
  std::vector<int64_t> gridShape; // {1} for an unsharded program
  std::vector<TensorInfo> tensors;
  std::vector<int> args, results;
  std::vector<Step> steps;
  /// Human-readable, one line per tensor and step (for tests and logs).
  std::string str() const;
};

/// The offset of `rank`'s block in each dimension of a global 2-D array of
/// `globalShape` split as `splits` says (even splits; the shard index over
/// several axes is row-major in the order they are listed).
std::vector<int64_t> shardOffsets(llvm::ArrayRef<int64_t> gridShape,
                                  const std::vector<std::vector<int>> &splits,
                                  llvm::ArrayRef<int64_t> globalShape,
                                  int64_t rank);

/// Number of devices of the grid.
int64_t gridSize(llvm::ArrayRef<int64_t> gridShape);
/// Multi-index of `rank` (row-major over the grid axes).
std::vector<int64_t> gridIndex(llvm::ArrayRef<int64_t> gridShape, int64_t rank);
/// The ranks that share every coordinate of `rank` except those on `axes`,
/// in the order of their coordinates on `axes` (the collective's group).
std::vector<int64_t> groupRanks(llvm::ArrayRef<int64_t> gridShape,
                                llvm::ArrayRef<int> axes, int64_t rank);

} // namespace blockscale::dist

#endif
