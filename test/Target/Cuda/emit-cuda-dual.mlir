// RUN: blockscale-opt %s --blockscale-jit-pipeline | blockscale-translate --blockscale-emit-cuda | FileCheck %s

// A dual cast instantiates the transposing cast's template with DUAL: the
// template's blocks are those of the transposed result (128 rows of the
// input), and the kernel takes a second QuantParams for it. The spec names
// the in-order result's block in the input's frame.

// dY's two casts, fused by the pipeline.
// CHECK-LABEL: // ----- kernel bs_quantize_bf16_e4m3_1x128_dual
// CHECK: // blockscale.quantize_dual 1x128, result row_major, and its transpose
// CHECK: // blockscale-spec: kind=quantize name=bs_quantize_bf16_e4m3_1x128_dual in=bf16 out=e4m3 br=1 bc=128 transposed=0 dual=1
// CHECK: #include "blockscale/quantize.cuh"
// CHECK: using BsKernel = bs::QuantizeTile<bs::InBf16, /*FMT=*/0, /*BR=*/128, /*BC=*/1, /*TRANS=*/true, /*DUAL=*/true>;
// CHECK: extern "C" __global__ void __launch_bounds__(BsKernel::kThreads, BsKernel::kMinCtas)
// CHECK-NEXT: bs_quantize_bf16_e4m3_1x128_dual(const __grid_constant__ bs::QuantParams p,
// CHECK-NEXT: const __grid_constant__ bs::QuantParams pT,
// CHECK-NEXT: const __grid_constant__ bs::TmaDesc tX,
// CHECK-NEXT: const __grid_constant__ bs::TmaDesc tQ) {
// CHECK-NEXT: BsKernel::run(p, pT, tX, tQ);

// The weight's two casts, fused by the pipeline.
// CHECK-LABEL: // ----- kernel bs_quantize_bf16_e4m3_128x128_dual
// CHECK: // blockscale.quantize_dual 128x128 of the transpose, result col_major, and its transpose
// CHECK: // blockscale-spec: kind=quantize name=bs_quantize_bf16_e4m3_128x128_dual in=bf16 out=e4m3 br=128 bc=128 transposed=0 dual=1
// CHECK: using BsKernel = bs::QuantizeTile<bs::InBf16, /*FMT=*/0, /*BR=*/128, /*BC=*/128, /*TRANS=*/true, /*DUAL=*/true>;
// CHECK: bs_quantize_bf16_e4m3_128x128_dual(const __grid_constant__ bs::QuantParams p,
// CHECK-NEXT: const __grid_constant__ bs::QuantParams pT,
// CHECK: BsKernel::run(p, pT, tX, tQ);

// A quantize_dual written as such: 128x1 blocks of x^T in input order are
// 1x128 blocks of the input; f32 in, e5m2 out.
// CHECK-LABEL: // ----- kernel bs_quantize_f32_e5m2_1x128_dual
// CHECK: // blockscale.quantize_dual 128x1 of the transpose, result col_major, and its transpose
// CHECK: // blockscale-spec: kind=quantize name=bs_quantize_f32_e5m2_1x128_dual in=f32 out=e5m2 br=1 bc=128 transposed=0 dual=1
// CHECK: using BsKernel = bs::QuantizeTile<bs::InF32, /*FMT=*/1, /*BR=*/128, /*BC=*/1, /*TRANS=*/true, /*DUAL=*/true>;

// No other kernel: each pair became one.
// CHECK-NOT: // ----- kernel

func.func @casts(%dy: tensor<8192x2112xbf16>, %w: tensor<2112x7168xbf16>, %x: tensor<4096x512xf32>)
    -> (tensor<8192x2112xf8E4M3FN>, tensor<2112x8192xf8E4M3FN>, tensor<7168x2112xf8E4M3FN>, tensor<2112x7168xf8E4M3FN>,
        tensor<512x4096xf8E5M2>, tensor<4096x512xf8E5M2>) {
  %g, %gs = blockscale.quantize %dy {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<8192x2112xbf16> -> tensor<8192x2112xf8E4M3FN>, tensor<8192x17xf32>
  %gt, %gts = blockscale.quantize %dy {recipe = #blockscale.recipe<blk_1x128>, transpose}
      : tensor<8192x2112xbf16> -> tensor<2112x8192xf8E4M3FN>, tensor<2112x64xf32>
  %wq, %ws = blockscale.quantize %w {recipe = #blockscale.recipe<blk_128x128>, transpose,
                                     layout = #blockscale.layout<col_major>}
      : tensor<2112x7168xbf16> -> tensor<7168x2112xf8E4M3FN>, tensor<56x17xf32>
  %wt, %wts = blockscale.quantize %w {recipe = #blockscale.recipe<blk_128x128>, layout = #blockscale.layout<col_major>}
      : tensor<2112x7168xbf16> -> tensor<2112x7168xf8E4M3FN>, tensor<17x56xf32>
  %xq, %xs, %xt, %xts = blockscale.quantize_dual %x {recipe = #blockscale.recipe<blk_128x1>, transpose,
                                                     layout = #blockscale.layout<col_major>}
      : tensor<4096x512xf32> -> tensor<512x4096xf8E5M2>, tensor<4x4096xf32>, tensor<4096x512xf8E5M2>, tensor<32x512xf32>
  return %g, %gt, %wq, %wt, %xq, %xt : tensor<8192x2112xf8E4M3FN>, tensor<2112x8192xf8E4M3FN>, tensor<7168x2112xf8E4M3FN>, tensor<2112x7168xf8E4M3FN>,
        tensor<512x4096xf8E5M2>, tensor<4096x512xf8E5M2>
}
