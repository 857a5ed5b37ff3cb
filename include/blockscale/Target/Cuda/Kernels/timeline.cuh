//===- timeline.cuh - per-CTA phase stamps (debug option) --------*- CUDA -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// With the `timeline` debug option (KernelSpec debug flags; the generated
// source then defines BS_DEBUG_TIMELINE) a GEMM records, per CTA, clock64 at
// each phase of bs::timeline::Slot (params.h) and globaltimer at entry and
// exit, in a module-scope array the host reads back after one launch
// (`blockscale-gen --run --debug=timeline`). Without the option the stamps
// compile to nothing. The stamps are plain stores: no calls and no printf,
// so that ptxas keeps the wgmma pipeline as it is.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_KERNELS_TIMELINE_CUH
#define BLOCKSCALE_KERNELS_TIMELINE_CUH

#include "blockscale/params.h"

#ifdef BS_DEBUG_TIMELINE
// Unmangled, so that the host finds it with cuModuleGetGlobal; the host
// zeroes it before the launch it reads.
extern "C" __device__ unsigned long long
    bsTimelineStamps[bs::timeline::kMaxCtas * bs::timeline::kSlots];
namespace bs {
namespace timeline {
__device__ __forceinline__ void mark(int slot) {
  unsigned long long t;
  if (slot >= GEntry)
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  else
    t = clock64();
  if (blockIdx.x < kMaxCtas)
    bsTimelineStamps[blockIdx.x * kSlots + slot] = t;
}
} // namespace timeline
} // namespace bs
// Stamps `slot` when `cond` holds.
#define BS_TIMELINE(cond, slot)                                                \
  do {                                                                         \
    if (cond)                                                                  \
      ::bs::timeline::mark(::bs::timeline::slot);                              \
  } while (0)
#else
#define BS_TIMELINE(cond, slot)                                                \
  do {                                                                         \
  } while (0)
#endif

#endif // BLOCKSCALE_KERNELS_TIMELINE_CUH
