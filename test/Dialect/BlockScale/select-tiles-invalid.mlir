// RUN: blockscale-opt %s --split-input-file --blockscale-select-tiles="force=bm=128,bn=176" --verify-diagnostics
// RUN: not blockscale-opt %s --blockscale-select-tiles="force=bm=128,bn=192,stages=9" 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: not blockscale-opt %s --blockscale-select-tiles="force=colour=7" 2>&1 | FileCheck %s --check-prefix=KEY
// RUN: not blockscale-opt %s --split-input-file --blockscale-select-tiles="force=bm=256,bn=128" 2>&1 | FileCheck %s --check-prefix=FIT

// STAGES: expected stages in [2, 4] for bm=128 bn=192 within 232448 bytes of shared memory but got 9
// KEY: unknown key 'colour' in force option (expected bm, bn, stages, splits, raster, cluster, ksplit)
// A 256x128 f32 output tile (128 KB of staging) leaves no room for two
// stages; the bf16 function above it compiles.
// FIT: error: 'blockscale.matmul' op expected a forced tile whose two-stage ring and f32 output staging fit in 232448 bytes of shared memory but bm=256,bn=128 needs {{[0-9]+}}; use a smaller bm or bn
func.func @f(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
             %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) -> tensor<128x512xbf16> {
  // expected-error @+1 {{expected a forced tile the kernels implement (bm 64 or 128; bn 16..128 step 16, 144, 160, 192; bm 256 with bn <= 128) but got bm=128,bn=176}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x512xbf16>
  return %c : tensor<128x512xbf16>
}

// -----

func.func @f32_out(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
                   %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) -> tensor<128x512xf32> {
  // expected-error @+1 {{expected a forced tile the kernels implement (bm 64 or 128; bn 16..128 step 16, 144, 160, 192; bm 256 with bn <= 128) but got bm=128,bn=176}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x512xf32>
  return %c : tensor<128x512xf32>
}
