//===- Nvrtc.h - run-time CUDA compilation ----------------------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_RUNTIME_NVRTC_H
#define BLOCKSCALE_RUNTIME_NVRTC_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace blockscale {

struct CompileOptions {
  bool ptx = false;               // PTX for compute_90a instead of a cubin
  std::string arch = "90a";
  std::vector<std::string> extra; // further NVRTC options
  /// The options as passed to NVRTC (part of the cache key).
  std::vector<std::string> flags() const;
};

struct CompileOutput {
  std::string binary; // cubin bytes or PTX text
  std::string log;    // NVRTC + ptxas log
  int registers = -1; // from ptxas -v, per kernel (max), -1 if unknown
  int spillBytes = 0; // spill stores + loads reported by ptxas
  int staticSmemBytes = -1; // ptxas's "N bytes smem" (max), -1 if unknown
  // ptxas's reason when it made the wgmmas synchronous ("Potential
  // Performance Loss: wgmma.mma_async instructions are serialized due to
  // ..."), empty when they stay asynchronous. A kernel template change that
  // trips this loses much of the tensor-core overlap without any error.
  std::string wgmmaSerialized;
  double seconds = 0;
};

/// "13.0" or an error if NVRTC cannot be loaded.
llvm::Expected<std::string> nvrtcVersion();

/// Compiles `source` with the embedded kernel templates as headers. The
/// error carries NVRTC's log.
llvm::Expected<CompileOutput> compileCuda(llvm::StringRef source,
                                          llvm::StringRef programName,
                                          const CompileOptions &options);

} // namespace blockscale

#endif
