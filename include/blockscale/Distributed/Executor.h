//===- Executor.h - running device plans with NCCL ---------------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Executes a DevicePlan on this process's GPU: one process per GPU, NCCL
// (loaded with dlopen) for the collectives, one communicator per group of
// grid axes. Needs no MLIR: the plan carries its kernels' sources.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_DISTRIBUTED_EXECUTOR_H
#define BLOCKSCALE_DISTRIBUTED_EXECUTOR_H

#include "blockscale/Distributed/DevicePlan.h"

#include <cuda.h>

#include <memory>

namespace blockscale::dist {

/// Runs plans on this process's GPU (the current CUDA context).
class Executor {
public:
  /// `uniqueId` is the 128-byte ncclUniqueId from rank 0 (ncclGetUniqueId);
  /// pass an empty vector when the grid has one device.
  static llvm::Expected<std::unique_ptr<Executor>>
  create(llvm::ArrayRef<int64_t> gridShape, int64_t rank,
         const std::vector<char> &uniqueId);
  /// An executor of `rank` without a communicator: it runs the compute
  /// steps of a plan and leaves the collectives to its caller (runStep
  /// rejects them). blockscale-run-sharded --simulate uses it to run every
  /// rank of a grid on one GPU.
  static llvm::Expected<std::unique_ptr<Executor>>
  createLocal(llvm::ArrayRef<int64_t> gridShape, int64_t rank);
  /// rank 0's ncclUniqueId for the others.
  static llvm::Expected<std::vector<char>> newUniqueId();
  ~Executor();

  /// Executes `plan` on `stream`. `args` are device pointers in the plan's
  /// argument order, laid out as the plan's TensorInfo says; results are
  /// returned as device pointers owned by the executor (valid until the
  /// next run).
  llvm::Expected<std::vector<void *>> run(const DevicePlan &plan,
                                          llvm::ArrayRef<void *> args,
                                          CUstream stream);

  /// Step-wise execution: bind the arguments and allocate the other
  /// buffers, then run steps one at a time.
  llvm::Error bind(const DevicePlan &plan, llvm::ArrayRef<void *> args);
  llvm::Error runStep(const DevicePlan &plan, size_t step, CUstream stream);
  /// The device pointer of tensor `id` of the bound plan.
  void *tensor(int id) const;

private:
  Executor() = default;
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace blockscale::dist

#endif
