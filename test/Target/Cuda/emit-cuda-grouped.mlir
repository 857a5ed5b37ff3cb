// RUN: blockscale-opt %s --split-input-file --blockscale-jit-pipeline="num-sms=132 m-hint=4096" | blockscale-translate --split-input-file --blockscale-emit-cuda | FileCheck %s
// RUN: blockscale-opt %s --split-input-file --blockscale-select-tiles="force=bm=128,bn=64,stages=3" | FileCheck %s --check-prefix=FORCE

// A grouped matmul becomes the grouped kernel: one instantiation serves
// both groupings (they differ in the launch's parameters), with the tile
// select-tiles chose.

// Groups of 512 rows (the hint over 8 groups): 128 x 192 tiles in CTA pairs,
// specialized for K = 7168.
// CHECK-LABEL: {{^}}// {{-+}} kernel bs_grouped_gemm_e4m3_e4m3_bf16_bm128_bn192_s4_c2_kb56
// CHECK: // blockscale.grouped_matmul m_contiguous: A e4m3 1x128, B e4m3 128x128 per group, C bf16
// CHECK: // blockscale-spec: kind=grouped name=bs_grouped_gemm_e4m3_e4m3_bf16_bm128_bn192_s4_c2_kb56 a=e4m3 b=e4m3 out=bf16 bm=128 bn=192 stages=4 cluster=2 kblocks=56
// CHECK: #include "blockscale/gemm_grouped.cuh"
// CHECK: using BsKernel = bs::GroupedGemmSm90<bs::GemmConfig</*BM=*/128, /*BN=*/192, /*STAGES=*/4, /*WGRAD=*/false, /*OUT_F32=*/false, /*ACCUMULATE=*/false, /*CLUSTER=*/2, /*KSPLIT=*/1, /*KBLOCKS=*/56>>;
// CHECK: bs_grouped_gemm_e4m3_e4m3_bf16_bm128_bn192_s4_c2_kb56(const __grid_constant__ bs::GroupedGemmParams p,
// CHECK-NEXT: const __grid_constant__ bs::TmaDesc tA,
// CHECK-NEXT: const __grid_constant__ bs::TmaDesc tB,
// CHECK-NEXT: const __grid_constant__ bs::TmaDesc tC) {
// CHECK-NEXT: BsKernel::run(p, tA, tB, tC);
// CHECK: // launch: raster=8

// FORCE-LABEL: func.func @contiguous
// FORCE: tile = #blockscale.tile<bm = 128, bn = 64, bk = 128, stages = 3, cluster = 1, swizzle = 128, splits = 1, raster = 8>
func.func @contiguous(%a: tensor<?x7168xf8E4M3FN>, %as: tensor<?x56xf32>,
                      %b: tensor<8x7168x4096xf8E4M3FN>, %bs: tensor<8x56x32xf32>,
                      %offs: tensor<8xi32>) -> tensor<?x4096xbf16> {
  %c = blockscale.grouped_matmul %a[%as], %b[%bs] groups(%offs : tensor<8xi32>)
         {grouping = #blockscale.grouping<m_contiguous>}
      : tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<8x7168x4096xf8E4M3FN>, tensor<8x56x32xf32> -> tensor<?x4096xbf16>
  return %c : tensor<?x4096xbf16>
}

// -----

// Groups of at most 64 rows take 64-row tiles.
// CHECK-LABEL: {{^}}// {{-+}} kernel bs_grouped_gemm_e4m3_e4m3_f32_bm64_bn128_s7
// CHECK: // blockscale.grouped_matmul m_masked: A e4m3 1x128, B e4m3 128x128 per group, C f32
// CHECK: bs::GroupedGemmSm90<bs::GemmConfig</*BM=*/64, /*BN=*/128, /*STAGES=*/7, /*WGRAD=*/false, /*OUT_F32=*/true,
// FORCE-LABEL: func.func @masked
// FORCE: tile = #blockscale.tile<bm = 128, bn = 64, bk = 128, stages = 3,
func.func @masked(%a: tensor<32x20x7168xf8E4M3FN>, %as: tensor<32x20x56xf32>,
                  %b: tensor<32x7168x4096xf8E4M3FN>, %bs: tensor<32x56x32xf32>,
                  %counts: tensor<32xi32>) -> tensor<32x20x4096xf32> {
  %c = blockscale.grouped_matmul %a[%as], %b[%bs] groups(%counts : tensor<32xi32>)
         {grouping = #blockscale.grouping<m_masked>}
      : tensor<32x20x7168xf8E4M3FN>, tensor<32x20x56xf32>, tensor<32x7168x4096xf8E4M3FN>, tensor<32x56x32xf32> -> tensor<32x20x4096xf32>
  return %c : tensor<32x20x4096xf32>
}

// -----

// A cast feeding the grouped matmul writes the A-scale layout the kernel
// reads.
// CHECK-LABEL: {{^}}// {{-+}} kernel bs_quantize_bf16_e4m3_1x128
// CHECK-LABEL: {{^}}// {{-+}} kernel bs_grouped_gemm_e4m3_e4m3_bf16_bm128_bn192_s4_c2_kb56
// FORCE-LABEL: func.func @with_cast
func.func @with_cast(%x: tensor<4096x7168xbf16>, %b: tensor<8x7168x4096xf8E4M3FN>,
                     %bs: tensor<8x56x32xf32>, %offs: tensor<8xi32>) -> tensor<4096x4096xbf16> {
  %q, %s = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<4096x7168xbf16> -> tensor<4096x7168xf8E4M3FN>, tensor<4096x56xf32>
  %c = blockscale.grouped_matmul %q[%s], %b[%bs] groups(%offs : tensor<8xi32>)
         {grouping = #blockscale.grouping<m_contiguous>}
      : tensor<4096x7168xf8E4M3FN>, tensor<4096x56xf32>, tensor<8x7168x4096xf8E4M3FN>, tensor<8x56x32xf32> -> tensor<4096x4096xbf16>
  return %c : tensor<4096x4096xbf16>
}

// -----

// Groups of 4096 rows: 256-row tiles whose kernel is specialized for K = 7168
// (the stage-aligned rounds; no pairs); at K = 2048 (two empty stages in 16
// K-blocks) the run-time K loop in CTA pairs.
// CHECK-LABEL: {{^}}// {{-+}} kernel bs_grouped_gemm_e4m3_e4m3_bf16_bm256_bn128_s3_kb56
// CHECK: /*BM=*/256, /*BN=*/128, /*STAGES=*/3, /*WGRAD=*/false, /*OUT_F32=*/false, /*ACCUMULATE=*/false, /*CLUSTER=*/1, /*KSPLIT=*/1, /*KBLOCKS=*/56>>;
// CHECK-LABEL: {{^}}// {{-+}} kernel bs_grouped_gemm_e4m3_e4m3_bf16_bm256_bn128_s3_c2
// CHECK: /*BM=*/256, /*BN=*/128, /*STAGES=*/3, /*WGRAD=*/false, /*OUT_F32=*/false, /*ACCUMULATE=*/false, /*CLUSTER=*/2, /*KSPLIT=*/1, /*KBLOCKS=*/0>>;
// FORCE-LABEL: func.func @big_groups
func.func @big_groups(%a: tensor<32768x7168xf8E4M3FN>, %as: tensor<32768x56xf32>,
                      %b: tensor<8x7168x4096xf8E4M3FN>, %bs: tensor<8x56x32xf32>,
                      %offs: tensor<8xi32>,
                      %a2: tensor<32768x2048xf8E4M3FN>, %as2: tensor<32768x16xf32>,
                      %b2: tensor<8x2048x4096xf8E4M3FN>, %bs2: tensor<8x16x32xf32>)
    -> (tensor<32768x4096xbf16>, tensor<32768x4096xbf16>) {
  %c = blockscale.grouped_matmul %a[%as], %b[%bs] groups(%offs : tensor<8xi32>)
         {grouping = #blockscale.grouping<m_contiguous>}
      : tensor<32768x7168xf8E4M3FN>, tensor<32768x56xf32>, tensor<8x7168x4096xf8E4M3FN>, tensor<8x56x32xf32> -> tensor<32768x4096xbf16>
  %c2 = blockscale.grouped_matmul %a2[%as2], %b2[%bs2] groups(%offs : tensor<8xi32>)
         {grouping = #blockscale.grouping<m_contiguous>}
      : tensor<32768x2048xf8E4M3FN>, tensor<32768x16xf32>, tensor<8x2048x4096xf8E4M3FN>, tensor<8x16x32xf32> -> tensor<32768x4096xbf16>
  return %c, %c2 : tensor<32768x4096xbf16>, tensor<32768x4096xbf16>
}
