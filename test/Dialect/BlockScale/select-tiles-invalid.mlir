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

// Pass options are checked before any tile is chosen; each names the range
// and what was given (a num-sms above 2^31 would wrap into the model's int).
// RUN: not blockscale-opt %s --blockscale-select-tiles="num-sms=0" 2>&1 | FileCheck %s --check-prefix=SMS0
// RUN: not blockscale-opt %s --blockscale-select-tiles="num-sms=-5" 2>&1 | FileCheck %s --check-prefix=SMSNEG
// RUN: not blockscale-opt %s --blockscale-select-tiles="num-sms=4294967428" 2>&1 | FileCheck %s --check-prefix=SMSWRAP
// RUN: not blockscale-opt %s --blockscale-select-tiles="m-hint=-1" 2>&1 | FileCheck %s --check-prefix=MHINTNEG
// RUN: not blockscale-opt %s --blockscale-select-tiles="smem-bytes=0" 2>&1 | FileCheck %s --check-prefix=SMEM0
// RUN: not blockscale-opt %s --blockscale-select-tiles="smem-bytes=1000" 2>&1 | FileCheck %s --check-prefix=SMEMSMALL
// RUN: not blockscale-opt %s --blockscale-select-tiles="smem-bytes=232449" 2>&1 | FileCheck %s --check-prefix=SMEMBIG
// RUN: not blockscale-opt %s --blockscale-jit-pipeline="num-sms=0" 2>&1 | FileCheck %s --check-prefix=SMS0
// SMS0: select-tiles-invalid.mlir:0:0: error: expected blockscale-select-tiles option num-sms in [1, 65536] but got 0; pass the target GPU's SM count (132 on H100/H200 SXM)
// SMSNEG: error: expected blockscale-select-tiles option num-sms in [1, 65536] but got -5
// SMSWRAP: error: expected blockscale-select-tiles option num-sms in [1, 65536] but got 4294967428
// MHINTNEG: error: expected blockscale-select-tiles option m-hint in [0, 2147483647] (0: none) but got -1; pass the M a dynamic-M GEMM is planned for (e.g. 4096)
// SMEM0: error: expected blockscale-select-tiles option smem-bytes in [1, 232448] but got 0
// SMEMBIG: error: expected blockscale-select-tiles option smem-bytes in [1, 232448] but got 232449
// SMEMSMALL: error: 'blockscale.matmul' op expected some tile whose two-stage ring and bf16 output staging fit in smem-bytes = 1000 bytes of shared memory but none does; the smallest (bm=64,bn=16) needs {{[0-9]+}}

// One SM and a forced CTA pair: no cluster fits (the model divided by zero).
// RUN: not blockscale-opt %s --blockscale-select-tiles="num-sms=1 force=bm=256,bn=128,cluster=2" 2>&1 | FileCheck %s --check-prefix=PAIR1
// PAIR1: error: 'blockscale.matmul' op expected a forced cluster of at most num-sms = 1 CTAs but got cluster = 2
// One SM is a valid (if slow) device: the model still chooses.
// RUN: blockscale-opt %s --blockscale-select-tiles="num-sms=1" | FileCheck %s --check-prefix=ONESM
// ONESM: tile = #blockscale.tile<
// Forced values out of range: splits beyond the K-blocks, raster past int.
// RUN: not blockscale-opt %s --blockscale-select-tiles="force=splits=3" 2>&1 | FileCheck %s --check-prefix=SPLITS
// RUN: not blockscale-opt %s --blockscale-select-tiles="force=raster=99999999999" 2>&1 | FileCheck %s --check-prefix=RASTER
// RUN: not blockscale-opt %s --blockscale-select-tiles="force=splits=-2" 2>&1 | FileCheck %s --check-prefix=NEGSPLITS
// RUN: not blockscale-opt %s --blockscale-select-tiles="force=bm=,bn=x" 2>&1 | FileCheck %s --check-prefix=GARBAGE
// SPLITS: error: 'blockscale.matmul' op expected forced splits <= 2 (K-blocks of 128 in K = 256) but got 3
// RASTER: error: 'blockscale.matmul' op expected key=integer in force option but got 'raster=99999999999'
// NEGSPLITS: error: 'blockscale.matmul' op forced tile: expected tile splits in [1, 2147483647] (a 32-bit launch parameter) but got -2
// GARBAGE: error: 'blockscale.matmul' op expected key=integer in force option but got 'bm='
