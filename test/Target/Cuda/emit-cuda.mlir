// RUN: blockscale-opt %s --blockscale-jit-pipeline="num-sms=132" | blockscale-translate --blockscale-emit-cuda | FileCheck %s

// The emitted CUDA is a small instantiation of the kernel templates: the spec
// line the runtime launches from, the operand types, and the template
// arguments from the op's form, dtypes and tile.

// CHECK-LABEL: // ----- kernel bs_quantize_bf16_e4m3_1x128
// CHECK: // blockscale-spec: kind=quantize name=bs_quantize_bf16_e4m3_1x128 in=bf16 out=e4m3 br=1 bc=128 transposed=0
// CHECK: #include "blockscale/quantize.cuh"
// CHECK: using BsKernel = bs::QuantizeTile<bs::InBf16, /*FMT=*/0, /*BR=*/1, /*BC=*/128, /*TRANS=*/false>;
// CHECK: extern "C" __global__ void __launch_bounds__(BsKernel::kThreads, BsKernel::kMinCtas)
// CHECK-NEXT: bs_quantize_bf16_e4m3_1x128(const __grid_constant__ bs::QuantParams p,
// CHECK-NEXT: const __grid_constant__ bs::TmaDesc tX) {
// CHECK-NEXT: BsKernel::run(p, tX);

// The transposed weight cast for grad-input is a transposing kernel. Like
// every cast, it reads its tiles through TMA (a tensor map parameter) into
// a ring; it also takes its output's tensor map. (It casts another weight
// than the forward's: two casts of one weight are one dual cast,
// emit-cuda-dual.mlir.)
// CHECK-LABEL: // ----- kernel bs_quantize_bf16_e4m3_128x128_t
// CHECK: bs::QuantizeTile<bs::InBf16, /*FMT=*/0, /*BR=*/128, /*BC=*/128, /*TRANS=*/true>
// CHECK: bs_quantize_bf16_e4m3_128x128_t(const __grid_constant__ bs::QuantParams p,
// CHECK-NEXT: const __grid_constant__ bs::TmaDesc tX,
// CHECK-NEXT: const __grid_constant__ bs::TmaDesc tQ) {
// CHECK-NEXT: BsKernel::run(p, tX, tQ);

// CHECK: // ----- kernel [[GEMM:bs_gemm_b128x128_e4m3_e4m3_bf16_bm128_bn[0-9]+_s[0-9]_kb56]]
// CHECK: // blockscale.matmul fwd: A e4m3 1x128, B e4m3 128x128, C bf16
// CHECK: // blockscale-spec: kind=gemm name=[[GEMM]] form=fwd a=e4m3 b=e4m3 out=bf16 accumulate=0 bm=128
// CHECK: #define BS_WGMMA_AB "e4m3.e4m3"
// CHECK: #include "blockscale/gemm_sm90.cuh"
// CHECK: using BsKernel = bs::GemmSm90<bs::GemmConfig</*BM=*/128, /*BN=*/{{[0-9]+}}, /*STAGES=*/{{[0-9]}}, /*WGRAD=*/false, /*OUT_F32=*/false, /*ACCUMULATE=*/false, /*CLUSTER=*/1, /*KSPLIT=*/1, /*KBLOCKS=*/56>>;
// CHECK: extern "C" __global__ void __launch_bounds__(BsKernel::kThreads, 1)
// CHECK-NEXT: [[GEMM]](const __grid_constant__ bs::GemmParams p,
// CHECK-NEXT: const __grid_constant__ bs::TmaDesc tA,
// CHECK: BsKernel::run(p, tA, tB, tSA, tSB, tC);
// CHECK: // launch: splits=1 raster=8

// Grad-weight with e5m2 B, accumulating into f32.
// CHECK-LABEL: // ----- kernel bs_gemm_b128x1_e4m3_e5m2_f32_acc
// CHECK: #define BS_WGMMA_AB "e4m3.e5m2"
// CHECK: /*WGRAD=*/true, /*OUT_F32=*/true, /*ACCUMULATE=*/true

func.func @layer(%x: tensor<4096x7168xbf16>, %w: tensor<2112x7168xbf16>, %v: tensor<2112x7168xbf16>,
                 %g: tensor<4096x8192xf8E4M3FN>, %gs: tensor<4096x64xf32>,
                 %xq: tensor<8192x7168xf8E5M2>, %xs: tensor<64x7168xf32>,
                 %acc: tensor<4096x7168xf32>) -> (tensor<4096x2112xbf16>, tensor<2112x7168xf8E4M3FN>, tensor<4096x7168xf32>) {
  %aq, %as = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<4096x7168xbf16> -> tensor<4096x7168xf8E4M3FN>, tensor<4096x56xf32>
  %wt, %wts = blockscale.quantize %v {recipe = #blockscale.recipe<blk_128x128>, layout = #blockscale.layout<col_major>}
      : tensor<2112x7168xbf16> -> tensor<2112x7168xf8E4M3FN>, tensor<17x56xf32>
  %wq, %ws = blockscale.quantize %w {recipe = #blockscale.recipe<blk_128x128>, transpose, layout = #blockscale.layout<col_major>}
      : tensor<2112x7168xbf16> -> tensor<7168x2112xf8E4M3FN>, tensor<56x17xf32>
  %c = blockscale.matmul %aq[%as], %wq[%ws] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<4096x7168xf8E4M3FN>, tensor<4096x56xf32>, tensor<7168x2112xf8E4M3FN>, tensor<56x17xf32> -> tensor<4096x2112xbf16>
  %dw = blockscale.matmul %g[%gs], %xq[%xs] acc(%acc : tensor<4096x7168xf32>) {form = #blockscale.form<wgrad>,
          a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x1>}
      : tensor<4096x8192xf8E4M3FN>, tensor<4096x64xf32>, tensor<8192x7168xf8E5M2>, tensor<64x7168xf32> -> tensor<4096x7168xf32>
  return %c, %wt, %dw : tensor<4096x2112xbf16>, tensor<2112x7168xf8E4M3FN>, tensor<4096x7168xf32>
}
