// REQUIRES: nvrtc
// RUN: blockscale-opt %s --blockscale-jit-pipeline | blockscale-translate --blockscale-emit-ptx | FileCheck %s

// NVRTC compiles the emitted source to sm_90a PTX on a machine without a
// GPU. The GEMM's PTX has the Hopper instructions the design relies on.

// CHECK-LABEL: // ----- kernel bs_quantize_bf16_e4m3_128x1_t
// CHECK: .target sm_90a
// A transposing cast has 256 workers and a warp that issues its TMA loads
// and stores.
// CHECK: .maxntid 288, 1, 1
// Every kernel lets the next one launch early and initializes its barriers
// before it waits for the previous kernel (programmatic dependent launch);
// its first load comes after the wait.
// CHECK: griddepcontrol.launch_dependents;
// Casts are persistent: their tiles arrive by TMA into a ring
// guarded by mbarriers.
// CHECK: mbarrier.init.shared::cta.b64
// CHECK: griddepcontrol.wait;
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
// The producer waits until the workers have written a transposed tile,
// stores it as one TMA box, and refills that stage only once the store has
// read it; it waits for its stores before it exits.
// CHECK: mbarrier.try_wait.parity.shared::cta.b64
// CHECK: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
// CHECK: cp.async.bulk.commit_group;
// CHECK: cp.async.bulk.wait_group.read 0;
// CHECK: mbarrier.arrive.expect_tx.shared::cta.b64
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK: cp.async.bulk.wait_group 0;
// The workers wait for a tile, synchronize among themselves only (a named
// barrier), convert, copy the transpose into TMA's 128-byte swizzle
// (16-byte shared stores), fence it for the async proxy and arrive.
// CHECK: mbarrier.try_wait.parity.shared::cta.b64
// CHECK: bar.sync %r{{[0-9]+}}, %r{{[0-9]+}};
// CHECK: cvt.rn.satfinite.e4m3x2.f32
// CHECK: st.shared.v4.u32
// CHECK: fence.proxy.async.shared::cta;
// CHECK: mbarrier.arrive.shared::cta.b64

// A cast in input order reads through the same ring, also with a producer
// warp, which refills a stage once every worker has arrived after reading
// it; each worker writes its 8 FP8 bytes of a row with one store, no
// shared-memory transpose.
// CHECK-LABEL: // ----- kernel bs_quantize_bf16_e4m3_1x128
// CHECK: .target sm_90a
// CHECK: .maxntid 288, 1, 1
// CHECK: .minnctapersm 2
// CHECK: griddepcontrol.launch_dependents;
// CHECK: mbarrier.init.shared::cta.b64
// CHECK: griddepcontrol.wait;
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK: mbarrier.try_wait.parity.shared::cta.b64
// CHECK: fence.proxy.async.shared::cta;
// CHECK: mbarrier.arrive.expect_tx.shared::cta.b64
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK: mbarrier.try_wait.parity.shared::cta.b64
// CHECK: ld.shared.v4.u32
// CHECK: mbarrier.arrive.shared::cta.b64
// CHECK: cvt.rn.satfinite.e4m3x2.f32
// CHECK-NOT: st.shared.v2
// CHECK: st.global.cs.v2.{{[bu]}}32

// CHECK-LABEL: // ----- kernel bs_gemm_b128x128_e4m3_e4m3_bf16
// CHECK: .target sm_90a
// CHECK: .entry bs_gemm_b128x128_e4m3_e4m3_bf16
// CHECK: .param .align 64 .b8 {{.*}}_param_1[128]
// CHECK: griddepcontrol.launch_dependents;
// CHECK: mbarrier.init.shared::cta.b64
// CHECK: prefetch.tensormap
// CHECK: griddepcontrol.wait;
// CHECK-DAG: setmaxnreg.dec.sync.aligned.u32 40
// CHECK-DAG: setmaxnreg.inc.sync.aligned.u32 232
// CHECK-DAG: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK-DAG: wgmma.fence.sync.aligned
// CHECK-DAG: wgmma.mma_async.sync.aligned.m64n{{[0-9]+}}k32.f32.e4m3.e4m3
// CHECK-DAG: wgmma.commit_group.sync.aligned
// CHECK-DAG: wgmma.wait_group.sync.aligned
// CHECK-DAG: fence.proxy.async.shared::cta
// CHECK-DAG: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group

func.func @f(%x: tensor<1024x512xbf16>, %y: tensor<1024x512xbf16>, %a: tensor<4096x7168xf8E4M3FN>, %as: tensor<4096x56xf32>,
             %b: tensor<7168x4096xf8E4M3FN>, %bs: tensor<56x32xf32>)
    -> (tensor<1024x512xf8E4M3FN>, tensor<1024x512xf8E4M3FN>, tensor<4096x4096xbf16>) {
  %q, %s = blockscale.quantize %x {recipe = #blockscale.recipe<blk_128x1>, layout = #blockscale.layout<col_major>}
      : tensor<1024x512xbf16> -> tensor<1024x512xf8E4M3FN>, tensor<8x512xf32>
  %qy, %sy = blockscale.quantize %y {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<1024x512xbf16> -> tensor<1024x512xf8E4M3FN>, tensor<1024x4xf32>
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<4096x7168xf8E4M3FN>, tensor<4096x56xf32>, tensor<7168x4096xf8E4M3FN>, tensor<56x32xf32> -> tensor<4096x4096xbf16>
  return %q, %qy, %c : tensor<1024x512xf8E4M3FN>, tensor<1024x512xf8E4M3FN>, tensor<4096x4096xbf16>
}
