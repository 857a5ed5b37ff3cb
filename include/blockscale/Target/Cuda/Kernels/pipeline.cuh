//===- pipeline.cuh - stage rings guarded by mbarriers -----------*- CUDA -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A producer fills STAGES shared-memory stages in turn and consumers drain
// them; each stage has a `full` mbarrier (the data landed: TMA transaction
// bytes or arrivals) and an `empty` one (every consumer is done with it).
// An mbarrier's phases complete in order and a waiter names the parity of
// the phase it waits for (PTX ISA, "mbarrier.try_wait.parity"), so a walk
// over the ring is a stage index plus the parity of the lap it is on: the
// parity flips each time the index wraps (the scheme of CUTLASS's
// PipelineState).
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_KERNELS_PIPELINE_CUH
#define BLOCKSCALE_KERNELS_PIPELINE_CUH

#include "blockscale/ptx_sm90.cuh"

namespace bs {

template <int STAGES> struct PipelineState {
  int index = 0;
  u32 phase = 0;

  __device__ __forceinline__ void advance() {
    if (++index == STAGES) {
      index = 0;
      phase ^= 1;
    }
  }
};

// The 2 * STAGES mbarriers of a ring at shared address `base`: full[STAGES]
// followed by empty[STAGES], 8 bytes each.
template <int STAGES> struct MbarRing {
  u32 base;

  __device__ __forceinline__ u32 full(int s) const { return base + s * 8; }
  __device__ __forceinline__ u32 empty(int s) const {
    return base + STAGES * 8 + s * 8;
  }

  // One thread, before the CTA (or cluster) synchronizes.
  __device__ __forceinline__ void init(u32 fullArrivals,
                                       u32 emptyArrivals) const {
    for (int s = 0; s < STAGES; ++s) {
      mbarInit(full(s), fullArrivals);
      mbarInit(empty(s), emptyArrivals);
    }
  }

  // Consumer: the data of the stage `st` names has landed.
  __device__ __forceinline__ void waitFull(const PipelineState<STAGES> &st) const {
    mbarWait(full(st.index), st.phase);
  }
  // The consumers have released the stage on the lap `st` names.
  __device__ __forceinline__ void
  waitEmpty(const PipelineState<STAGES> &st) const {
    mbarWait(empty(st.index), st.phase);
  }
  // Producer: the stage may be refilled for the lap `st` names, i.e. the
  // consumers released it on the previous lap. A fresh barrier reports the
  // phase before its first as complete, so the first lap does not wait.
  __device__ __forceinline__ void
  producerAcquire(const PipelineState<STAGES> &st) const {
    mbarWait(empty(st.index), st.phase ^ 1);
  }
};

} // namespace bs

#endif // BLOCKSCALE_KERNELS_PIPELINE_CUH
