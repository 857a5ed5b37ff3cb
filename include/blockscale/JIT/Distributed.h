//===- Distributed.h - per-device plans and their NCCL execution -*- C++ -*-===//
//
// A partitioned blockscale program (the output of
// `blockscale-opt --blockscale-shard-pipeline`: the program of one device,
// with shard collectives) is turned into a DevicePlan -- a straight-line list
// of cast kernels, GEMM kernels and collectives over buffers with known local
// shapes and physical layouts -- by blockscale::buildDevicePlan (JIT, MLIR).
// Executing a plan needs no MLIR: one process per GPU, NCCL (loaded with
// dlopen) for the collectives, one communicator per group of grid axes.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_JIT_DISTRIBUTED_H
#define BLOCKSCALE_JIT_DISTRIBUTED_H

#include "blockscale/Runtime/Gemm.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cuda.h>

#include <map>
#include <memory>
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

/// Runs `blockscale-opt --blockscale-shard-pipeline` on a sharded program
/// (MLIR text) and returns the program of one device (MLIR text).
llvm::Expected<std::string> partitionProgram(llvm::StringRef source,
                                             bool allowPadding = false);

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
llvm::Expected<ProgramShardings> describeShardings(llvm::StringRef source,
                                                   llvm::StringRef func = "");

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
