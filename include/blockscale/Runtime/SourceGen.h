//===- SourceGen.h - CUDA text for a kernel spec ----------------*- C++ -*-===//
#ifndef BLOCKSCALE_RUNTIME_SOURCEGEN_H
#define BLOCKSCALE_RUNTIME_SOURCEGEN_H

#include "blockscale/Runtime/KernelSpec.h"

namespace blockscale {
/// The CUDA source for a spec: the spec line, the operand-type macro, the
/// include of the template family, and an extern "C" __global__ that
/// instantiates it. `comment` goes on top (keep shapes out of it: the source
/// is the cache key, and one binary serves every M, N, K).
std::string generateCudaSource(const KernelSpec &spec,
                               llvm::StringRef comment = "");
/// The canonical kernel name for a spec (also its extern "C" symbol).
std::string kernelName(const KernelSpec &spec);
} // namespace blockscale

#endif
