//===- Runtime.h - compiled kernels, cache and launches ---------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The launch side of blockscale. Nothing here needs MLIR: a kernel is a
// generated CUDA source (see blockscale/JIT/Jit.h for where sources come
// from) compiled by NVRTC once, cached in memory and on disk, loaded into each
// CUDA context on first use and launched with cuLaunchKernelEx through its
// family (KernelFamily.h).
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_RUNTIME_RUNTIME_H
#define BLOCKSCALE_RUNTIME_RUNTIME_H

#include "blockscale/Runtime/CompiledKernel.h"
#include "blockscale/Runtime/Error.h"
#include "blockscale/Runtime/Gemm.h"
#include "blockscale/Runtime/KernelFamily.h"
#include "blockscale/Runtime/KernelRegistry.h"
#include "blockscale/Runtime/KernelSpec.h"
#include "blockscale/Runtime/ScaleLayout.h"

namespace blockscale {

/// Whether GEMM and cast launches are programmatic dependent launches
/// (CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION): the kernel's
/// set-up (barrier initialization, descriptor prefetch) may then run while
/// the previous kernel of the stream finishes; the kernel waits for that
/// kernel's completion before its first global memory access, so results
/// are the same either way. On by default; BLOCKSCALE_PDL=0 in the
/// environment or setProgrammaticLaunch(false) turns it off (process-wide).
bool programmaticLaunch();
void setProgrammaticLaunch(bool on);

} // namespace blockscale

#endif
