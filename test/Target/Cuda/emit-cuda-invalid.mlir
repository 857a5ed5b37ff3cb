// RUN: blockscale-translate %s --split-input-file --verify-diagnostics --blockscale-emit-cuda
// RUN: blockscale-translate %s --split-input-file --verify-diagnostics --blockscale-emit-ptx
// RUN: not blockscale-translate %s --blockscale-emit-cuda 2>/dev/null | FileCheck %s --allow-empty

// The translations emit no kernel for IR that --blockscale-verify-layouts
// rejects: they run the same checks (verifyKernelLayouts) first, so each
// case below fails before any source is generated or NVRTC runs, and the
// whole file gives no output at all (the first, valid-looking kernels were
// printed before).
// CHECK-NOT: kernel

// The translation does not select tiles or layouts itself.
func.func @no_tile(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
                   %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) -> tensor<128x512xbf16> {
  // expected-error @+1 {{expected a tile attribute but got none; run --blockscale-select-tiles (or --blockscale-jit-pipeline) first}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>,
         a_scale_layout = #blockscale.scale_layout<col_major, align = 4>,
         b_scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x512xbf16>
  return %c : tensor<128x512xbf16>
}

// -----

func.func @no_layouts(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
                      %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) -> tensor<128x512xbf16> {
  // expected-error @+1 {{expected a_scale_layout but got none; run --blockscale-pad-scales}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>,
         tile = #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 4, cluster = 1, swizzle = 128, splits = 1, raster = 8>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x512xbf16>
  return %c : tensor<128x512xbf16>
}

// -----

// Used to be emitted: K = 1000 FP8 bytes is not a TMA row stride.
func.func @k_row_stride(%a: tensor<128x1000xf8E4M3FN>, %as: tensor<128x8xf32>,
                        %b: tensor<1000x512xf8E4M3FN>, %bs: tensor<8x4xf32>) -> tensor<128x512xbf16> {
  // expected-error @+1 {{expected the row stride of A to be a multiple of 16 bytes (TMA rule) but got K = 1000 (1000 bytes of 'f8E4M3FN'); pad the rows and set lda = 1008}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>,
         a_scale_layout = #blockscale.scale_layout<col_major, align = 4>,
         b_scale_layout = #blockscale.scale_layout<col_major, align = 4>,
         tile = #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 4, cluster = 1, swizzle = 128, splits = 1, raster = 8>}
      : tensor<128x1000xf8E4M3FN>, tensor<128x8xf32>, tensor<1000x512xf8E4M3FN>, tensor<8x4xf32> -> tensor<128x512xbf16>
  return %c : tensor<128x512xbf16>
}

// -----

// Used to be emitted: 128x1 scales are read N-contiguous.
func.func @wgrad_scale_order(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
                             %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x512xf32>) -> tensor<128x512xf32> {
  // expected-error @+1 {{expected B scale layout #blockscale.scale_layout<row_major, align = 4> but got #blockscale.scale_layout<col_major, align = 4>}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<wgrad>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x1>,
         a_scale_layout = #blockscale.scale_layout<col_major, align = 4>,
         b_scale_layout = #blockscale.scale_layout<col_major, align = 4>,
         tile = #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 4, cluster = 1, swizzle = 128, splits = 1, raster = 8>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x512xf32> -> tensor<128x512xf32>
  return %c : tensor<128x512xf32>
}

// -----

// Used to be emitted: the quantize writes its scales in another layout than
// the matmul reads.
func.func @scale_layout_mismatch(%x: tensor<128x256xbf16>, %b: tensor<256x512xf8E4M3FN>,
                                 %bs: tensor<2x4xf32>) -> tensor<128x512xbf16> {
  %xq, %xs = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>,
                                     scale_layout = #blockscale.scale_layout<col_major, align = 8>}
      : tensor<128x256xbf16> -> tensor<128x256xf8E4M3FN>, tensor<128x2xf32>
  // expected-error @+1 {{expected A scales laid out as #blockscale.scale_layout<col_major, align = 4> but the producing quantize writes #blockscale.scale_layout<col_major, align = 8>}}
  %c = blockscale.matmul %xq[%xs], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>,
         a_scale_layout = #blockscale.scale_layout<col_major, align = 4>,
         b_scale_layout = #blockscale.scale_layout<col_major, align = 4>,
         tile = #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 4, cluster = 1, swizzle = 128, splits = 1, raster = 8>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x512xbf16>
  return %c : tensor<128x512xbf16>
}

// -----

// Used to be emitted: a standalone cast whose rows are not 16 bytes.
func.func @cast_rows(%x: tensor<128x100xbf16>) -> tensor<128x1xf32> {
  // expected-error @+1 {{expected input rows of a multiple of 16 bytes but got 100 x 'bf16'; pad the columns to 104}}
  %q, %s = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>,
                                   scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<128x100xbf16> -> tensor<128x100xf8E4M3FN>, tensor<128x1xf32>
  return %s : tensor<128x1xf32>
}

// -----

// Used to be emitted: M past the kernels' 32-bit sizes.
func.func @m_past_int32(%a: tensor<2147483648x256xf8E4M3FN>, %as: tensor<2147483648x2xf32>,
                        %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) -> tensor<2147483648x512xbf16> {
  // expected-error @+1 {{expected M <= 2147483647 (2^31 - 1: the kernels take 32-bit sizes) but got M = 2147483648; split the tensor}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>,
         a_scale_layout = #blockscale.scale_layout<col_major, align = 4>,
         b_scale_layout = #blockscale.scale_layout<col_major, align = 4>,
         tile = #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 4, cluster = 1, swizzle = 128, splits = 1, raster = 8>}
      : tensor<2147483648x256xf8E4M3FN>, tensor<2147483648x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<2147483648x512xbf16>
  return %c : tensor<2147483648x512xbf16>
}

// -----

// Nothing to emit is an error, not an empty output.
// expected-error @+1 {{expected at least one blockscale kernel op (matmul, grouped_matmul, grouped_matmul_k, quantize, quantize_dual or quantize_grouped_tokens) in the module but got none}}
func.func @no_kernel(%x: tensor<128x256xbf16>) -> tensor<128x256xbf16> {
  return %x : tensor<128x256xbf16>
}
