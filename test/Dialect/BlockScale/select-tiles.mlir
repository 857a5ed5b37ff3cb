// RUN: blockscale-opt %s --split-input-file --blockscale-select-tiles --verify-diagnostics | FileCheck %s
// RUN: blockscale-opt %s --split-input-file --blockscale-select-tiles="num-sms=66" --verify-diagnostics | FileCheck %s --check-prefix=SMALLGPU
// RUN: blockscale-opt %s --split-input-file --blockscale-select-tiles="force=bm=64,bn=96,stages=3,splits=2" --verify-diagnostics | FileCheck %s --check-prefix=FORCE
// RUN: blockscale-opt %s --split-input-file --blockscale-select-tiles="force=bm=256,bn=128" --verify-diagnostics | FileCheck %s --check-prefix=WAVES

// Large forward GEMM: 256-row tiles (two waves per warpgroup) in CTA pairs
// sharing A, no split.
// CHECK-LABEL: func.func @large
// CHECK: tile = #blockscale.tile<bm = 256, bn = 128, bk = 128, stages = {{[2-8]}}, cluster = 2, swizzle = 128, splits = 1, raster = 8>
// FORCE-LABEL: func.func @large
// FORCE: tile = #blockscale.tile<bm = 64, bn = 96, bk = 128, stages = 3, cluster = 1, swizzle = 128, splits = 2, raster = 8>
// Two 64-row waves per consumer warpgroup: 48 KB per stage, so 3 stages
// beside the 64 KB bf16 staging of the 256x128 output tile.
// WAVES-LABEL: func.func @large
// WAVES: tile = #blockscale.tile<bm = 256, bn = 128, bk = 128, stages = 3, cluster = 1, swizzle = 128, splits = 1, raster = 8>
func.func @large(%a: tensor<4096x7168xf8E4M3FN>, %as: tensor<4096x56xf32>,
                 %b: tensor<7168x4096xf8E4M3FN>, %bs: tensor<56x32xf32>) -> tensor<4096x4096xbf16> {
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<4096x7168xf8E4M3FN>, tensor<4096x56xf32>, tensor<7168x4096xf8E4M3FN>, tensor<56x32xf32> -> tensor<4096x4096xbf16>
  return %c : tensor<4096x4096xbf16>
}

// -----

// Decode-sized M: a few tiles cannot fill 132 SMs, so K is split, and the
// splits of a tile are one cluster that sums them in shared memory (ksplit;
// 27 clusters of 4 fit the H200's 30); on a GPU with half the SMs, fewer
// splits suffice.
// CHECK-LABEL: func.func @small_m
// CHECK: tile = #blockscale.tile<bm = 128, bn = 80, bk = 128, stages = 7, cluster = 1, swizzle = 128, splits = 4, raster = 8, ksplit = 4>
// SMALLGPU-LABEL: func.func @small_m
// SMALLGPU: splits = {{[23]}}
func.func @small_m(%a: tensor<128x7168xf8E4M3FN>, %as: tensor<128x56xf32>,
                   %b: tensor<7168x2112xf8E4M3FN>, %bs: tensor<56x17xf32>) -> tensor<128x2112xbf16> {
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<128x7168xf8E4M3FN>, tensor<128x56xf32>, tensor<7168x2112xf8E4M3FN>, tensor<56x17xf32> -> tensor<128x2112xbf16>
  return %c : tensor<128x2112xbf16>
}

// -----

// A tile already chosen is kept.
// CHECK-LABEL: func.func @keeps_tile
// CHECK: tile = #blockscale.tile<bm = 64, bn = 16, bk = 128, stages = 2, cluster = 1, swizzle = 128, splits = 1, raster = 1>
func.func @keeps_tile(%a: tensor<?x256xf8E4M3FN>, %as: tensor<?x2xf32>,
                      %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x512xf32>) -> tensor<?x512xf32> {
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<wgrad>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x1>,
         tile = #blockscale.tile<bm = 64, bn = 16, bk = 128, stages = 2, cluster = 1, swizzle = 128, splits = 1, raster = 1>}
      : tensor<?x256xf8E4M3FN>, tensor<?x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x512xf32> -> tensor<?x512xf32>
  return %c : tensor<?x512xf32>
}

// -----

func.func @dynamic_n(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
                     %b: tensor<256x?xf8E4M3FN>, %bs: tensor<2x?xf32>) -> tensor<128x?xbf16> {
  // expected-error @+1 {{expected static N and K to select a tile (only M may be dynamic) but got 128x?x256}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x?xf8E4M3FN>, tensor<2x?xf32> -> tensor<128x?xbf16>
  return %c : tensor<128x?xbf16>
}
