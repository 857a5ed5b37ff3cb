// REQUIRES: nvrtc
// RUN: blockscale-opt %s --blockscale-jit-pipeline="m-hint=4096" | blockscale-translate --blockscale-emit-ptx | FileCheck %s

// The k-grouped ops take the NVRTC path of the dense kernels: the
// group-aware cast and the k-grouped GEMM compile to sm_90a PTX, the GEMM
// with its wgmma K loop.

// CHECK-LABEL: // ----- kernel bs_grouped_quantize_bf16_e4m3
// CHECK: .target sm_90a
// CHECK: .entry bs_grouped_quantize_bf16_e4m3
// CHECK: griddepcontrol.wait;
// CHECK: cvt.rn.satfinite.e4m3x2.f32
// CHECK-LABEL: // ----- kernel bs_kgrouped_gemm_e4m3_e4m3_f32_acc_bm128_bn128_s4
// CHECK: .target sm_90a
// CHECK: .entry bs_kgrouped_gemm_e4m3_e4m3_f32_acc_bm128_bn128_s4
// CHECK: griddepcontrol.wait;
// CHECK: wgmma.mma_async.sync.aligned
func.func @wgrad(%x: tensor<?x7168xbf16>, %a: tensor<4096x?xf8E4M3FN>, %as: tensor<4096x?xf32>,
                 %offs: tensor<8xi32>, %acc: tensor<8x4096x7168xf32>) -> tensor<8x4096x7168xf32> {
  %xq, %xs = blockscale.quantize_grouped_tokens %x offsets(%offs : tensor<8xi32>)
      : tensor<?x7168xbf16> -> tensor<7168x?xf8E4M3FN>, tensor<7168x?xf32>
  %c = blockscale.grouped_matmul_k %a[%as], %xq[%xs] offsets(%offs : tensor<8xi32>) acc(%acc : tensor<8x4096x7168xf32>)
      : tensor<4096x?xf8E4M3FN>, tensor<4096x?xf32>, tensor<7168x?xf8E4M3FN>, tensor<7168x?xf32> -> tensor<8x4096x7168xf32>
  return %c : tensor<8x4096x7168xf32>
}
