//===- ptx_sm90.cuh - Hopper PTX building blocks -----------------*- CUDA -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Thin wrappers over the sm_90a instructions the kernels use: mbarrier, TMA
// (cp.async.bulk.tensor), wgmma and register reconfiguration. Written as
// inline PTX so that NVRTC needs no include path (compiles stay ~0.2 s).
// References: PTX ISA 8.x, sections "mbarrier", "cp.async.bulk.tensor",
// "Asynchronous Warpgroup Level Matrix Multiply-Accumulate".
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_KERNELS_PTX_SM90_CUH
#define BLOCKSCALE_KERNELS_PTX_SM90_CUH

namespace bs {

typedef unsigned int u32;
typedef unsigned long long u64;

// CUtensorMap is an opaque 128-byte, 64-byte aligned object built on the host
// by cuTensorMapEncodeTiled and passed by value as a __grid_constant__
// parameter (TMA reads it through its generic address).
struct alignas(64) TmaDesc {
  u64 opaque[16];
};

__device__ __forceinline__ u32 smemAddr(const void *p) {
  u64 a;
  asm("cvta.to.shared.u64 %0, %1;" : "=l"(a) : "l"(p));
  return static_cast<u32>(a);
}

//===-- mbarrier --------------------------------------------------------===//

__device__ __forceinline__ void mbarInit(u32 bar, u32 count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count));
}

// Makes the initialized barriers visible to the async (TMA) proxy.
__device__ __forceinline__ void fenceBarrierInit() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

__device__ __forceinline__ void mbarArriveExpectTx(u32 bar, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar),
               "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void mbarArrive(u32 bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

__device__ __forceinline__ bool mbarTryWait(u32 bar, u32 parity) {
  u32 ok;
  asm volatile("{\n"
               ".reg .pred p;\n"
               "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
               "selp.u32 %0, 1, 0, p;\n"
               "}\n"
               : "=r"(ok)
               : "r"(bar), "r"(parity)
               : "memory");
  return ok != 0;
}

// Waits for the phase with the given parity to complete. With
// BS_DEBUG_HANG the wait traps after ~2^31 polls and prints which barrier, so
// that a protocol bug shows up as an error instead of a hung GPU.
__device__ __forceinline__ void mbarWait(u32 bar, u32 parity) {
#ifdef BS_DEBUG_HANG
  unsigned long long polls = 0;
  while (!mbarTryWait(bar, parity)) {
    if (++polls == (1ull << 31)) {
      printf("blockscale: mbarrier 0x%x parity %u never completed (block %d, "
             "thread %d)\n",
             bar, parity, blockIdx.x, threadIdx.x);
      asm volatile("trap;");
    }
  }
#else
  while (!mbarTryWait(bar, parity)) {
  }
#endif
}

//===-- TMA -------------------------------------------------------------===//

__device__ __forceinline__ void tmaPrefetchDesc(const TmaDesc &d) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<u64>(&d))
               : "memory");
}

// Global -> shared tile copy completing `bytes` on `bar`. Out-of-bounds parts
// of the box are zero-filled and still count towards the transaction bytes.
__device__ __forceinline__ void tmaLoad2d(u32 dst, const TmaDesc &d, u32 bar,
                                          int x, int y) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
               "complete_tx::bytes [%0], [%1, {%3, %4}], [%2];" ::"r"(dst),
               "l"(reinterpret_cast<u64>(&d)), "r"(bar), "r"(x), "r"(y)
               : "memory");
}

// The same for a 3-D map (a batch of matrices): z selects the matrix.
__device__ __forceinline__ void tmaLoad3d(u32 dst, const TmaDesc &d, u32 bar,
                                          int x, int y, int z) {
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::"
               "complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];" ::"r"(dst),
               "l"(reinterpret_cast<u64>(&d)), "r"(bar), "r"(x), "r"(y), "r"(z)
               : "memory");
}

// The same copy delivered to the same shared-memory offset of every CTA in
// `ctaMask` of the cluster, completing on each CTA's barrier at `bar`'s
// offset: one L2 read feeds several SMs.
__device__ __forceinline__ void tmaLoad2dMulticast(u32 dst, const TmaDesc &d,
                                                   u32 bar, int x, int y,
                                                   unsigned short ctaMask) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
               "complete_tx::bytes.multicast::cluster [%0], [%1, {%3, %4}], "
               "[%2], %5;" ::"r"(dst),
               "l"(reinterpret_cast<u64>(&d)), "r"(bar), "r"(x), "r"(y),
               "h"(ctaMask)
               : "memory");
}

// Shared -> global tile store; the box is clipped at the tensor bounds.
__device__ __forceinline__ void tmaStore2d(const TmaDesc &d, u32 src, int x,
                                           int y) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"
               " [%0, {%2, %3}], [%1];" ::"l"(reinterpret_cast<u64>(&d)),
               "r"(src), "r"(x), "r"(y)
               : "memory");
}

// The same with an L2 cache policy from createpolicy.
__device__ __forceinline__ void tmaStore2dHint(const TmaDesc &d, u32 src, int x,
                                               int y, u64 policy) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"
               ".L2::cache_hint [%0, {%2, %3}], [%1], %4;" ::"l"(
                   reinterpret_cast<u64>(&d)),
               "r"(src), "r"(x), "r"(y), "l"(policy)
               : "memory");
}
// The 3-D forms of the two stores above (z selects the matrix).
__device__ __forceinline__ void tmaStore3d(const TmaDesc &d, u32 src, int x,
                                           int y, int z) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group"
               " [%0, {%2, %3, %4}], [%1];" ::"l"(reinterpret_cast<u64>(&d)),
               "r"(src), "r"(x), "r"(y), "r"(z)
               : "memory");
}
__device__ __forceinline__ void tmaStore3dHint(const TmaDesc &d, u32 src, int x,
                                               int y, int z, u64 policy) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group"
               ".L2::cache_hint [%0, {%2, %3, %4}], [%1], %5;" ::"l"(
                   reinterpret_cast<u64>(&d)),
               "r"(src), "r"(x), "r"(y), "r"(z), "l"(policy)
               : "memory");
}
__device__ __forceinline__ u64 l2PolicyEvictLast() {
  u64 p;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;"
               : "=l"(p));
  return p;
}

// Shared -> global element-wise add (C += tile), used for accumulation.
__device__ __forceinline__ void tmaReduceAdd2d(const TmaDesc &d, u32 src, int x,
                                               int y) {
  asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile."
               "bulk_group [%0, {%2, %3}], [%1];" ::"l"(reinterpret_cast<u64>(&d)),
               "r"(src), "r"(x), "r"(y)
               : "memory");
}

__device__ __forceinline__ void bulkCommit() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

// Waits until the committed stores have finished *reading* shared memory.
__device__ __forceinline__ void bulkWaitRead0() {
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}

// Waits until the committed stores are complete (before the CTA exits).
__device__ __forceinline__ void bulkWait0() {
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

// Shared-memory loads and stores at 32-bit shared-window addresses. C++
// pointers into shared memory are 64-bit generic pointers under NVRTC (its
// PTX addresses ld.shared/st.shared with 64-bit registers, where nvcc's uses
// 32-bit ones), which costs registers and 64-bit address arithmetic in the
// K loops. Volatile and the memory clobber keep them in order with the
// barrier waits around them and with any C++ access to the same bytes.
__device__ __forceinline__ float ldsF32(u32 addr) {
  float v;
  asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(addr) : "memory");
  return v;
}
__device__ __forceinline__ float2 ldsF32x2(u32 addr) {
  float2 v;
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];"
               : "=f"(v.x), "=f"(v.y)
               : "r"(addr)
               : "memory");
  return v;
}
__device__ __forceinline__ void stsF32(u32 addr, float v) {
  asm volatile("st.shared.f32 [%0], %1;" ::"r"(addr), "f"(v) : "memory");
}

// Generic-proxy writes to shared memory (st.shared) that the async proxy
// (TMA store) reads next must be fenced by each writing thread.
__device__ __forceinline__ void fenceProxyAsyncShared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

//===-- thread-block clusters ---------------------------------------------===//

__device__ __forceinline__ u32 clusterCtaRank() {
  u32 r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

// The two halves of clusterSync, apart for a cluster whose CTAs first touch
// each other's shared memory much later (GemmSplitK): the wait then
// comes where the peers have long arrived.
__device__ __forceinline__ void clusterArrive() {
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}
// Arrival without release semantics, for a first cluster barrier whose only
// job is to publish barrier initialization: fence.mbarrier_init already
// releases that at cluster scope (PTX ISA, "fence.mbarrier_init"), and a
// release arrive would also wait for the thread's earlier memory operations.
__device__ __forceinline__ void clusterArriveRelaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
}
__device__ __forceinline__ void clusterWait() {
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// All threads of all CTAs of the cluster; orders barrier initialization
// before remote arrivals and keeps a CTA's shared memory alive until its
// peers are done with it.
__device__ __forceinline__ void clusterSync() {
  clusterArrive();
  clusterWait();
}

//===-- programmatic dependent launch --------------------------------===//
//
// A kernel launched with CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
// may start while the previous kernel of its stream (or graph edge) is still
// running. It must not touch global memory that kernel reads or writes
// before gridDepWait returns, which is when that kernel has completed and
// its writes are visible (PTX ISA, "griddepcontrol"). Launched without the
// attribute, the wait returns at once.

__device__ __forceinline__ void gridDepWait() {
  asm volatile("griddepcontrol.wait;" ::: "memory");
}
// Lets the next programmatically dependent kernel launch once every CTA of
// this grid has executed it (or exited); that kernel's own gridDepWait still
// waits for this grid's completion, so the point only moves its prologue.
__device__ __forceinline__ void gridDepLaunchDependents() {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

// Address of the same shared-memory offset in CTA `rank` of the cluster.
__device__ __forceinline__ u32 mapaShared(u32 addr, u32 rank) {
  u32 r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(rank));
  return r;
}

// Arrival on a peer CTA's barrier (address from mapaShared). Release at CTA
// scope is enough: what it announces is that this CTA's wgmmas finished
// reading a stage, and wgmma.wait_group already ordered those reads. A
// cluster-scope release (.release.cluster) in its place waits for this
// thread's memory operations to reach cluster scope and cost CTA pairs 40 %
// of their speed (docs/decisions.md).
__device__ __forceinline__ void mbarArriveCluster(u32 clusterAddr) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(clusterAddr)
               : "memory");
}

// 16 bytes into a peer CTA's shared memory (addresses from mapaShared) that
// complete 16 transaction bytes on the peer's barrier `bar`: the peer sees
// the data once its wait on that barrier's phase returns.
__device__ __forceinline__ void stAsync4(u32 clusterAddr, float a, float b,
                                         float c, float d, u32 bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 "
               "[%0], {%1, %2, %3, %4}, [%5];" ::"r"(clusterAddr),
               "f"(a), "f"(b), "f"(c), "f"(d), "r"(bar)
               : "memory");
}

//===-- barriers and registers -------------------------------------------===//

__device__ __forceinline__ void namedBarSync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

template <int N> __device__ __forceinline__ void setMaxNRegInc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
}
template <int N> __device__ __forceinline__ void setMaxNRegDec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
}

//===-- wgmma -----------------------------------------------------------===//

__device__ __forceinline__ void wgmmaFence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void wgmmaCommit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int N> __device__ __forceinline__ void wgmmaWait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// Keeps the compiler from moving accesses of an accumulator register across
// the asynchronous wgmma that owns it.
__device__ __forceinline__ void fenceOperand(float &r) {
  asm volatile("" : "+f"(r)::"memory");
}

// Shared-memory matrix descriptor for a K-major operand tile whose rows are
// 128 bytes (BK = 128 FP8) written by TMA with 128-byte swizzle: 8-row core
// matrices are 1024 bytes apart (stride byte offset); the leading byte offset
// is unused for swizzled K-major layouts. The tile base must be 1024-aligned.
__device__ __forceinline__ u64 smemDescSw128(u32 addr) {
  u64 d = 0;
  d |= static_cast<u64>((addr & 0x3FFFF) >> 4);
  d |= static_cast<u64>(1) << 16;
  d |= static_cast<u64>(1024 >> 4) << 32;
  d |= static_cast<u64>(1) << 62;
  return d;
}

//===-- conversions -----------------------------------------------------===//

__device__ __forceinline__ u32 packBf16x2(float lo, float hi) {
  u32 r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

} // namespace bs

#endif // BLOCKSCALE_KERNELS_PTX_SM90_CUH
