// RUN: not blockscale-translate %s --blockscale-emit-cuda 2>&1 | FileCheck %s

// The translation does not select tiles or layouts itself.
// CHECK: error: 'blockscale.matmul' op expected a tile attribute but got none; run --blockscale-select-tiles (or --blockscale-jit-pipeline) first
func.func @no_tile(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
                   %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) -> tensor<128x512xbf16> {
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x512xbf16>
  return %c : tensor<128x512xbf16>
}
