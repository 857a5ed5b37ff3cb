// RUN: blockscale-opt %s --split-input-file --blockscale-jit-pipeline="num-sms=132 m-hint=4096" | blockscale-translate --split-input-file --blockscale-emit-cuda | FileCheck %s

// The k-grouped weight gradient and its group-aware casts become the
// runtime families' kernels, with the sources the JIT plans for the
// equivalent descriptions (the same comment and spec line: one cache entry
// and one binary for both paths).

// CHECK-LABEL: {{^}}// {{-+}} kernel bs_grouped_quantize_bf16_e4m3
// CHECK: // blockscale group-aware cast: bf16 -> e4m3, transposed, 128-token blocks per group
// CHECK: // blockscale-spec: kind=grouped_quantize name=bs_grouped_quantize_bf16_e4m3 in=bf16 out=e4m3
// CHECK: #include "blockscale/cast_grouped.cuh"
// CHECK: using BsKernel = bs::GroupedQuantizeTile<bs::InBf16, /*FMT=*/0>;
// CHECK: bs_grouped_quantize_bf16_e4m3(const __grid_constant__ bs::GroupedQuantParams p,
// CHECK-NEXT: const __grid_constant__ bs::TmaDesc tX,
// CHECK-NEXT: const __grid_constant__ bs::TmaDesc tQ) {
// CHECK-NEXT: BsKernel::run(p, tX, tQ);
// CHECK-LABEL: {{^}}// {{-+}} kernel bs_grouped_quantize_bf16_e5m2
// CHECK: using BsKernel = bs::GroupedQuantizeTile<bs::InBf16, /*FMT=*/1>;
// CHECK-LABEL: {{^}}// {{-+}} kernel bs_kgrouped_gemm_e4m3_e5m2_f32_bm128_bn128_s4
// CHECK: // blockscale k-grouped matmul: A e4m3 1x128, B e5m2 128x1 along tokens per group, C f32
// CHECK: // blockscale-spec: kind=grouped name=bs_kgrouped_gemm_e4m3_e5m2_f32_bm128_bn128_s4 a=e4m3 b=e5m2 out=f32 bm=128 bn=128 stages=4 grouping=k accumulate=0
// CHECK: #define BS_WGMMA_AB "e4m3.e5m2"
// CHECK: #include "blockscale/gemm_kgrouped.cuh"
// CHECK: using BsKernel = bs::KGroupedGemmSm90<bs::GemmConfig</*BM=*/128, /*BN=*/128, /*STAGES=*/4, /*WGRAD=*/true, /*OUT_F32=*/true, /*ACCUMULATE=*/false>>;
// CHECK: bs_kgrouped_gemm_e4m3_e5m2_f32_bm128_bn128_s4(const __grid_constant__ bs::KGroupedGemmParams p,
// CHECK-NEXT: const __grid_constant__ bs::TmaDesc tA,
// CHECK-NEXT: const __grid_constant__ bs::TmaDesc tB,
// CHECK-NEXT: const __grid_constant__ bs::TmaDesc tSA,
// CHECK-NEXT: const __grid_constant__ bs::TmaDesc tSB,
// CHECK-NEXT: const __grid_constant__ bs::TmaDesc tC) {
// CHECK-NEXT: BsKernel::run(p, tA, tB, tSA, tSB, tC);
// CHECK: // launch: raster=8
func.func @wgrad(%dy: tensor<?x4096xbf16>, %x: tensor<?x7168xbf16>,
                 %offs: tensor<8xi32>) -> tensor<8x4096x7168xf32> {
  %gq, %gs = blockscale.quantize_grouped_tokens %dy offsets(%offs : tensor<8xi32>)
      : tensor<?x4096xbf16> -> tensor<4096x?xf8E4M3FN>, tensor<4096x?xf32>
  %xq, %xs = blockscale.quantize_grouped_tokens %x offsets(%offs : tensor<8xi32>)
      : tensor<?x7168xbf16> -> tensor<7168x?xf8E5M2>, tensor<7168x?xf32>
  %c = blockscale.grouped_matmul_k %gq[%gs], %xq[%xs] offsets(%offs : tensor<8xi32>)
      : tensor<4096x?xf8E4M3FN>, tensor<4096x?xf32>, tensor<7168x?xf8E5M2>, tensor<7168x?xf32> -> tensor<8x4096x7168xf32>
  return %c : tensor<8x4096x7168xf32>
}

// -----

// Accumulating into f32 (C +=) is another instantiation; bf16 output has
// room for a deeper ring.
// CHECK-LABEL: {{^}}// {{-+}} kernel bs_kgrouped_gemm_e4m3_e4m3_f32_acc_bm128_bn128_s4
// CHECK: // blockscale k-grouped matmul: A e4m3 1x128, B e4m3 128x1 along tokens per group, C f32 +=
// CHECK: bs::KGroupedGemmSm90<bs::GemmConfig</*BM=*/128, /*BN=*/128, /*STAGES=*/4, /*WGRAD=*/true, /*OUT_F32=*/true, /*ACCUMULATE=*/true>>;
// CHECK-LABEL: {{^}}// {{-+}} kernel bs_kgrouped_gemm_e4m3_e4m3_bf16_bm128_bn128_s5
// CHECK: // blockscale k-grouped matmul: A e4m3 1x128, B e4m3 128x1 along tokens per group, C bf16
// CHECK: bs::KGroupedGemmSm90<bs::GemmConfig</*BM=*/128, /*BN=*/128, /*STAGES=*/5, /*WGRAD=*/true, /*OUT_F32=*/false, /*ACCUMULATE=*/false>>;
func.func @accumulate(%a: tensor<2048x9216xf8E4M3FN>, %as: tensor<2048x72xf32>,
                      %b: tensor<1024x9216xf8E4M3FN>, %bs: tensor<1024x72xf32>,
                      %offs: tensor<8xi32>, %acc: tensor<8x2048x1024xf32>)
    -> (tensor<8x2048x1024xf32>, tensor<8x2048x1024xbf16>) {
  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%offs : tensor<8xi32>) acc(%acc : tensor<8x2048x1024xf32>)
      : tensor<2048x9216xf8E4M3FN>, tensor<2048x72xf32>, tensor<1024x9216xf8E4M3FN>, tensor<1024x72xf32> -> tensor<8x2048x1024xf32>
  %d = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%offs : tensor<8xi32>)
      : tensor<2048x9216xf8E4M3FN>, tensor<2048x72xf32>, tensor<1024x9216xf8E4M3FN>, tensor<1024x72xf32> -> tensor<8x2048x1024xbf16>
  return %c, %d : tensor<8x2048x1024xf32>, tensor<8x2048x1024xbf16>
}
