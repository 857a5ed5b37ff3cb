//===- Jit.h - one call from a description to a kernel ----------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// getGemmKernel(desc) builds a blockscale.matmul for the description, runs the
// same pipeline as `blockscale-opt --blockscale-jit-pipeline` (pad-scales,
// verify-layouts, select-tiles for this GPU), emits the CUDA instantiation
// and gets it compiled through the KernelRegistry (memory, then disk cache,
// then NVRTC); getQuantKernel does the same for a blockscale.quantize.
// Repeated calls with an equal description return the same kernel from an
// in-process map without touching MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_JIT_JIT_H
#define BLOCKSCALE_JIT_JIT_H

#include "blockscale/Runtime/Runtime.h"

#include <memory>

namespace blockscale {

/// A compiled kernel of a family with the description it was planned for
/// and its launch choices.
template <class Family> struct JitKernel {
  typename Family::Desc desc;
  typename Family::LaunchConfig launch;
  std::shared_ptr<CompiledKernel> compiled;
  double predictedSeconds = 0; // GEMMs: the tile model's estimate at desc's M

  /// Launches on `stream` (CUstream; nullptr = legacy default stream).
  llvm::Error operator()(const typename Family::Args &args,
                         CUstream stream) const {
    return Family::launch(*compiled, launch, desc, args, stream);
  }
};
using GemmKernel = JitKernel<GemmFamily>;
using QuantKernel = JitKernel<QuantFamily>;
using GroupedGemmKernel = JitKernel<GroupedGemmFamily>;
using GroupedQuantKernel = JitKernel<GroupedQuantFamily>;

/// Split-K workspace a launch of `m` rows needs (m < 0: the description's).
inline llvm::Expected<size_t> workspaceBytes(const GemmKernel &k, int64_t m) {
  return GemmFamily::workspaceBytes(k.compiled->spec.gemm, k.launch,
                                    m < 0 ? k.desc.m : m, k.desc.n, k.desc.k);
}

struct JitOptions {
  CompileOptions compile; // NVRTC options beyond the defaults
};

/// What the pipeline decided for a description, before any compilation.
template <class Family> struct KernelPlan {
  KernelSpec spec;
  typename Family::LaunchConfig launch;
  std::string source;
  std::string ir; // the module after the pipeline
  double predictedSeconds = 0;
};
using GemmPlan = KernelPlan<GemmFamily>;
using QuantPlan = KernelPlan<QuantFamily>;
using GroupedGemmPlan = KernelPlan<GroupedGemmFamily>;
using GroupedQuantPlan = KernelPlan<GroupedQuantFamily>;

llvm::Expected<GemmPlan> planGemm(const GemmDesc &desc);
llvm::Expected<QuantPlan> planQuantize(const QuantDesc &desc);
/// The grouped kernel of a description: GroupedGemmFamily::plan's tile (the
/// rule --blockscale-select-tiles applies to a blockscale.grouped_matmul),
/// no MLIR module (ir stays empty).
llvm::Expected<GroupedGemmPlan> planGroupedGemm(const GroupedGemmDesc &desc);
/// The group-aware cast's kernel (one per input and FP8 type; no MLIR).
llvm::Expected<GroupedQuantPlan>
planGroupedQuantize(const GroupedQuantDesc &desc);

llvm::Expected<std::shared_ptr<const GemmKernel>>
getGemmKernel(const GemmDesc &desc, const JitOptions &options = {});
/// getGemmKernel without the per-thread last-description fast path.
llvm::Expected<std::shared_ptr<const GemmKernel>>
getGemmKernelSlow(const GemmDesc &desc, const JitOptions &options = {});
llvm::Expected<std::shared_ptr<const QuantKernel>>
getQuantKernel(const QuantDesc &desc, const JitOptions &options = {});

llvm::Expected<std::shared_ptr<const GroupedGemmKernel>>
getGroupedGemmKernel(const GroupedGemmDesc &desc,
                     const JitOptions &options = {});
llvm::Expected<std::shared_ptr<const GroupedQuantKernel>>
getGroupedQuantKernel(const GroupedQuantDesc &desc,
                      const JitOptions &options = {});

/// Drops the description -> kernel map (for tests and cold-start benches).
void clearJitMemoryCache();

/// The SM count kernels are planned for: `requested` when positive, else
/// the current GPU's, else kDefaultNumSMs (generation without a GPU).
int resolveSMs(int requested);

} // namespace blockscale

#endif
