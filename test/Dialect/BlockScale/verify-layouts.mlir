// RUN: blockscale-opt %s --split-input-file --blockscale-verify-layouts --verify-diagnostics | FileCheck %s

// A program in the layouts the kernels read passes unchanged.
// CHECK-LABEL: func.func @ok
// CHECK: blockscale.matmul
func.func @ok(%x: tensor<?x7168xbf16>, %wq: tensor<7168x2112xf8E4M3FN>, %ws: tensor<56x17xf32>) -> tensor<?x2112xbf16> {
  %xq, %xs = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>,
                                     scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<?x7168xbf16> -> tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>
  %c = blockscale.matmul %xq[%xs], %wq[%ws] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>,
         a_scale_layout = #blockscale.scale_layout<col_major, align = 4>,
         b_scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<7168x2112xf8E4M3FN>, tensor<56x17xf32> -> tensor<?x2112xbf16>
  return %c : tensor<?x2112xbf16>
}

// -----

func.func @a_col_major(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
                       %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) -> tensor<128x512xbf16> {
  // expected-error @+1 {{expected A to be row_major (K-contiguous, the only FP8 operand order wgmma reads) but got col_major; quantize it with layout = #blockscale.layout<row_major>}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>,
         a_layout = #blockscale.layout<col_major>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x512xbf16>
  return %c : tensor<128x512xbf16>
}

// -----

func.func @b_row_major(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
                       %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) -> tensor<128x512xbf16> {
  // expected-error @+1 {{expected B to be col_major (K-contiguous, i.e. the weight as (N, K) row-major) but got row_major; quantize it with layout = #blockscale.layout<col_major>}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>,
         b_layout = #blockscale.layout<row_major>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x512xbf16>
  return %c : tensor<128x512xbf16>
}

// -----

func.func @k_not_16b(%a: tensor<128x1000xf8E4M3FN>, %as: tensor<128x8xf32>,
                     %b: tensor<1000x512xf8E4M3FN>, %bs: tensor<8x4xf32>) -> tensor<128x512xbf16> {
  // expected-error @+1 {{expected the row stride of A to be a multiple of 16 bytes (TMA rule) but got K = 1000 (1000 bytes of 'f8E4M3FN'); pad the rows and set lda = 1008}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<128x1000xf8E4M3FN>, tensor<128x8xf32>, tensor<1000x512xf8E4M3FN>, tensor<8x4xf32> -> tensor<128x512xbf16>
  return %c : tensor<128x512xbf16>
}

// -----

// A padded leading dimension makes K = 1000 legal for A (B still is not).
func.func @k_padded_a_only(%a: tensor<128x1000xf8E4M3FN>, %as: tensor<128x8xf32>,
                           %b: tensor<1000x512xf8E4M3FN>, %bs: tensor<8x4xf32>) -> tensor<128x512xbf16> {
  // expected-error @+1 {{expected the row stride of B to be a multiple of 16 bytes (TMA rule) but got K = 1000 (1000 bytes of 'f8E4M3FN'); pad the rows and set ldb = 1008}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>,
         lda = 1008 : i64}
      : tensor<128x1000xf8E4M3FN>, tensor<128x8xf32>, tensor<1000x512xf8E4M3FN>, tensor<8x4xf32> -> tensor<128x512xbf16>
  return %c : tensor<128x512xbf16>
}

// -----

func.func @lda_too_small(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
                         %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) -> tensor<128x512xbf16> {
  // expected-error @+1 {{expected lda >= K = 256 but got 128}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>,
         lda = 128 : i64}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x512xbf16>
  return %c : tensor<128x512xbf16>
}

// -----

func.func @ldb_not_16b(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
                       %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) -> tensor<128x512xbf16> {
  // expected-error @+1 {{expected the row stride of B to be a multiple of 16 bytes (TMA rule) but got ldb = 260 (260 bytes of 'f8E4M3FN'); use ldb = 272}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>,
         ldb = 260 : i64}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x512xbf16>
  return %c : tensor<128x512xbf16>
}

// -----

func.func @n_not_16b(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
                     %b: tensor<256x100xf8E4M3FN>, %bs: tensor<2x1xf32>) -> tensor<128x100xbf16> {
  // expected-error @+1 {{expected the row stride of C to be a multiple of 16 bytes (TMA rule) but got N = 100 (200 bytes of 'bf16'); pad the rows and set ldc = 104}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x100xf8E4M3FN>, tensor<2x1xf32> -> tensor<128x100xbf16>
  return %c : tensor<128x100xbf16>
}

// -----

func.func @no_scale_layout(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
                           %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) -> tensor<128x512xbf16> {
  // expected-error @+1 {{expected a_scale_layout but got none; run --blockscale-pad-scales}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x512xbf16>
  return %c : tensor<128x512xbf16>
}

// -----

func.func @wrong_scale_layout(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
                              %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x512xf32>) -> tensor<128x512xf32> {
  // expected-error @+1 {{expected B scale layout #blockscale.scale_layout<row_major, align = 4> but got #blockscale.scale_layout<col_major, align = 4>}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<wgrad>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x1>,
         a_scale_layout = #blockscale.scale_layout<col_major, align = 4>,
         b_scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x512xf32> -> tensor<128x512xf32>
  return %c : tensor<128x512xf32>
}

// -----

func.func @producer_recipe(%x: tensor<128x256xbf16>, %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) -> tensor<128x512xbf16> {
  %q, %s = blockscale.quantize %x {recipe = #blockscale.recipe<blk_128x1>,
                                   scale_layout = #blockscale.scale_layout<row_major, align = 4>}
      : tensor<128x256xbf16> -> tensor<128x256xf8E4M3FN>, tensor<1x256xf32>
  %as = tensor.empty() : tensor<128x2xf32>
  // expected-error @+1 {{expected A quantized with 1x128 blocks but its quantize uses 128x1}}
  %c = blockscale.matmul %q[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>,
         a_scale_layout = #blockscale.scale_layout<col_major, align = 4>,
         b_scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x512xbf16>
  return %c : tensor<128x512xbf16>
}

// -----

func.func @producer_layout(%w: tensor<512x256xbf16>, %a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>) -> tensor<128x512xbf16> {
  // The weight quantized without `layout = col_major`: the (K, N) result is
  // row-major, which the kernel cannot read.
  %q, %s = blockscale.quantize %w {recipe = #blockscale.recipe<blk_128x128>, transpose,
                                   scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<512x256xbf16> -> tensor<256x512xf8E4M3FN>, tensor<2x4xf32>
  // expected-error @+1 {{expected B in col_major order but its quantize writes row_major}}
  %c = blockscale.matmul %a[%as], %q[%s] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>,
         a_scale_layout = #blockscale.scale_layout<col_major, align = 4>,
         b_scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x512xbf16>
  return %c : tensor<128x512xbf16>
}

// -----

func.func @scales_from_other_quantize(%x: tensor<128x256xbf16>, %y: tensor<128x256xbf16>,
                                      %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) -> tensor<128x512xbf16> {
  %q, %s = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>,
                                   scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<128x256xbf16> -> tensor<128x256xf8E4M3FN>, tensor<128x2xf32>
  %q2, %s2 = blockscale.quantize %y {recipe = #blockscale.recipe<blk_1x128>,
                                     scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<128x256xbf16> -> tensor<128x256xf8E4M3FN>, tensor<128x2xf32>
  // expected-error @+1 {{expected the A scales to come from the quantize that produces A}}
  %c = blockscale.matmul %q[%s2], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>,
         a_scale_layout = #blockscale.scale_layout<col_major, align = 4>,
         b_scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x512xbf16>
  return %c : tensor<128x512xbf16>
}

// -----

func.func @scale_layout_mismatch_with_producer(%x: tensor<128x256xbf16>, %b: tensor<256x512xf8E4M3FN>,
                                               %bs: tensor<2x4xf32>) -> tensor<128x512xbf16> {
  %q, %s = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>,
                                   scale_layout = #blockscale.scale_layout<col_major, align = 8>}
      : tensor<128x256xbf16> -> tensor<128x256xf8E4M3FN>, tensor<128x2xf32>
  // expected-error @+1 {{expected A scales laid out as #blockscale.scale_layout<col_major, align = 4> but the producing quantize writes #blockscale.scale_layout<col_major, align = 8>}}
  %c = blockscale.matmul %q[%s], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>,
         a_scale_layout = #blockscale.scale_layout<col_major, align = 4>,
         b_scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x512xbf16>
  return %c : tensor<128x512xbf16>
}

// -----

func.func @quantize_no_layout(%x: tensor<128x256xbf16>) -> tensor<128x2xf32> {
  // expected-error @+1 {{expected a scale_layout but got none; run --blockscale-pad-scales}}
  %q, %s = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<128x256xbf16> -> tensor<128x256xf8E4M3FN>, tensor<128x2xf32>
  return %s : tensor<128x2xf32>
}

// -----

func.func @quantize_input_rows(%x: tensor<128x100xbf16>) -> tensor<128x1xf32> {
  // expected-error @+1 {{expected input rows of a multiple of 16 bytes but got 100 x 'bf16'; pad the columns to 104}}
  %q, %s = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>,
                                   scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<128x100xbf16> -> tensor<128x100xf8E4M3FN>, tensor<128x1xf32>
  return %s : tensor<128x1xf32>
}

// -----

func.func @quantize_output_rows(%x: tensor<100x256xbf16>) -> tensor<256x1xf32> {
  // expected-error @+1 {{expected the FP8 output's rows to be a multiple of 16 bytes (TMA rule for its consumer) but got 100 elements; pad that dimension to 112}}
  %q, %s = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>, transpose,
                                   scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<100x256xbf16> -> tensor<256x100xf8E4M3FN>, tensor<256x1xf32>
  return %s : tensor<256x1xf32>
}

// -----

// Hardening (issue 31): strides, sizes and launch counts against the
// kernels' limits, in checked int64 arithmetic.

func.func @lda_past_tma(%a: tensor<?x256xf8E4M3FN>, %as: tensor<?x2xf32>,
                        %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) -> tensor<?x512xbf16> {
  // expected-error @+1 {{expected the row stride of A to be below 2^40 bytes (TMA limit) but got lda = 9223372036854775807 elements of 'f8E4M3FN'}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>,
         a_scale_layout = #blockscale.scale_layout<col_major, align = 4>,
         b_scale_layout = #blockscale.scale_layout<col_major, align = 4>,
         lda = 9223372036854775807 : i64}
      : tensor<?x256xf8E4M3FN>, tensor<?x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<?x512xbf16>
  return %c : tensor<?x512xbf16>
}

// -----

func.func @ldc_at_tma_limit(%a: tensor<?x256xf8E4M3FN>, %as: tensor<?x2xf32>,
                            %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) -> tensor<?x512xbf16> {
  // 2^39 bf16 = 2^40 bytes.
  // expected-error @+1 {{expected the row stride of C to be below 2^40 bytes (TMA limit) but got ldc = 549755813888 elements of 'bf16'}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>,
         a_scale_layout = #blockscale.scale_layout<col_major, align = 4>,
         b_scale_layout = #blockscale.scale_layout<col_major, align = 4>,
         ldc = 549755813888 : i64}
      : tensor<?x256xf8E4M3FN>, tensor<?x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<?x512xbf16>
  return %c : tensor<?x512xbf16>
}

// -----

func.func @m_past_int32(%a: tensor<2147483648x256xf8E4M3FN>, %as: tensor<2147483648x2xf32>,
                        %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) -> tensor<2147483648x512xbf16> {
  // expected-error @+1 {{expected M <= 2147483647 (2^31 - 1: the kernels take 32-bit sizes) but got M = 2147483648; split the tensor}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>,
         a_scale_layout = #blockscale.scale_layout<col_major, align = 4>,
         b_scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<2147483648x256xf8E4M3FN>, tensor<2147483648x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<2147483648x512xbf16>
  return %c : tensor<2147483648x512xbf16>
}

// -----

func.func @too_many_units(%a: tensor<2097152x128xf8E4M3FN>, %as: tensor<2097152x1xf32>,
                          %b: tensor<128x2097152xf8E4M3FN>, %bs: tensor<1x16384xf32>) -> tensor<2097152x2097152xbf16> {
  // expected-error @+1 {{expected at most 2147483647 (2^31 - 1) work units (tiles x splits) for the kernel's 32-bit unit index but 32768x131072 tiles x 1 splits exceed it; use larger tiles or fewer splits}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>,
         a_scale_layout = #blockscale.scale_layout<col_major, align = 4>,
         b_scale_layout = #blockscale.scale_layout<col_major, align = 4>,
         tile = #blockscale.tile<bm = 64, bn = 16, bk = 128, stages = 4, cluster = 1, swizzle = 128, splits = 1, raster = 8>}
      : tensor<2097152x128xf8E4M3FN>, tensor<2097152x1xf32>, tensor<128x2097152xf8E4M3FN>, tensor<1x16384xf32> -> tensor<2097152x2097152xbf16>
  return %c : tensor<2097152x2097152xbf16>
}

// -----

func.func @raster_times_tiles(%a: tensor<2097152x128xf8E4M3FN>, %as: tensor<2097152x1xf32>,
                              %b: tensor<128x128xf8E4M3FN>, %bs: tensor<1x1xf32>) -> tensor<2097152x128xbf16> {
  // expected-error @+1 {{expected tile raster x M tiles <= 2147483647 (a 32-bit divisor of the kernel's unit decode) but got raster = 2147483647 with 16384 M tiles; use raster <= 1}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>,
         a_scale_layout = #blockscale.scale_layout<col_major, align = 4>,
         b_scale_layout = #blockscale.scale_layout<col_major, align = 4>,
         tile = #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 4, cluster = 1, swizzle = 128, splits = 1, raster = 2147483647>}
      : tensor<2097152x128xf8E4M3FN>, tensor<2097152x1xf32>, tensor<128x128xf8E4M3FN>, tensor<1x1xf32> -> tensor<2097152x128xbf16>
  return %c : tensor<2097152x128xbf16>
}

// -----

func.func @quantize_rows_past_int32(%x: tensor<2147483648x128xbf16>) -> tensor<2147483648x1xf32> {
  // expected-error @+1 {{expected input rows <= 2147483647 (2^31 - 1: the kernels take 32-bit sizes) but got input rows = 2147483648; split the tensor}}
  %q, %s = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>,
                                   scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<2147483648x128xbf16> -> tensor<2147483648x128xf8E4M3FN>, tensor<2147483648x1xf32>
  return %s : tensor<2147483648x1xf32>
}

// -----

// Every failing op is reported, not only the first.
func.func @two_bad(%x: tensor<128x100xbf16>, %y: tensor<128x200xbf16>) {
  // expected-error @+1 {{expected input rows of a multiple of 16 bytes but got 100 x 'bf16'; pad the columns to 104}}
  %q, %s = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>,
                                   scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<128x100xbf16> -> tensor<128x100xf8E4M3FN>, tensor<128x1xf32>
  // expected-error @+1 {{expected a scale_layout but got none; run --blockscale-pad-scales}}
  %q2, %s2 = blockscale.quantize %y {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<128x200xbf16> -> tensor<128x200xf8E4M3FN>, tensor<128x2xf32>
  return
}

// -----

// A grouped matmul in the layouts the kernels read passes unchanged.
// CHECK-LABEL: func.func @grouped_ok
// CHECK: blockscale.grouped_matmul
func.func @grouped_ok(%x: tensor<?x7168xbf16>, %b: tensor<8x7168x4096xf8E4M3FN>, %bs: tensor<8x56x32xf32>,
                      %g: tensor<8xi32>) -> tensor<?x4096xbf16> {
  %xq, %xs = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>,
                                     scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<?x7168xbf16> -> tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>
  %c = blockscale.grouped_matmul %xq[%xs], %b[%bs] groups(%g : tensor<8xi32>) {grouping = #blockscale.grouping<m_contiguous>}
      : tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<8x7168x4096xf8E4M3FN>, tensor<8x56x32xf32> -> tensor<?x4096xbf16>
  return %c : tensor<?x4096xbf16>
}

// -----

func.func @grouped_b_row_major(%a: tensor<?x256xf8E4M3FN>, %as: tensor<?x2xf32>,
                               %b: tensor<8x256x512xf8E4M3FN>, %bs: tensor<8x2x4xf32>, %g: tensor<8xi32>) -> tensor<?x512xbf16> {
  // expected-error @+1 {{expected B to be col_major (K-contiguous, i.e. each group's weight as (N, K) row-major) but got row_major; quantize it with layout = #blockscale.layout<col_major>}}
  %c = blockscale.grouped_matmul %a[%as], %b[%bs] groups(%g : tensor<8xi32>) {grouping = #blockscale.grouping<m_contiguous>,
         b_layout = #blockscale.layout<row_major>}
      : tensor<?x256xf8E4M3FN>, tensor<?x2xf32>, tensor<8x256x512xf8E4M3FN>, tensor<8x2x4xf32> -> tensor<?x512xbf16>
  return %c : tensor<?x512xbf16>
}

// -----

func.func @grouped_k_tma(%a: tensor<?x200xf8E4M3FN>, %as: tensor<?x2xf32>,
                         %b: tensor<8x200x512xf8E4M3FN>, %bs: tensor<8x2x4xf32>, %g: tensor<8xi32>) -> tensor<?x512xbf16> {
  // expected-error @+1 {{expected K to be a multiple of 16 (A's and B's rows of FP8 elements are TMA rows of a multiple of 16 bytes) but got K = 200; pad K to 208}}
  %c = blockscale.grouped_matmul %a[%as], %b[%bs] groups(%g : tensor<8xi32>) {grouping = #blockscale.grouping<m_contiguous>}
      : tensor<?x200xf8E4M3FN>, tensor<?x2xf32>, tensor<8x200x512xf8E4M3FN>, tensor<8x2x4xf32> -> tensor<?x512xbf16>
  return %c : tensor<?x512xbf16>
}

// -----

func.func @grouped_n_tma(%a: tensor<?x256xf8E4M3FN>, %as: tensor<?x2xf32>,
                         %b: tensor<8x256x100xf8E4M3FN>, %bs: tensor<8x2x1xf32>, %g: tensor<8xi32>) -> tensor<?x100xbf16> {
  // expected-error @+1 {{expected N to be a multiple of 8 (C's rows of 'bf16' are TMA rows of a multiple of 16 bytes) but got N = 100; pad N to 104}}
  %c = blockscale.grouped_matmul %a[%as], %b[%bs] groups(%g : tensor<8xi32>) {grouping = #blockscale.grouping<m_contiguous>}
      : tensor<?x256xf8E4M3FN>, tensor<?x2xf32>, tensor<8x256x100xf8E4M3FN>, tensor<8x2x1xf32> -> tensor<?x100xbf16>
  return %c : tensor<?x100xbf16>
}

// -----

// A dual cast in the layouts the kernels read: each result checked against
// its own consumer.
// CHECK-LABEL: func.func @dual_ok
// CHECK: blockscale.quantize_dual
func.func @dual_ok(%dy: tensor<8192x2112xbf16>, %wt: tensor<2112x7168xf8E4M3FN>, %wts: tensor<17x56xf32>,
                   %x: tensor<8192x7168xf8E4M3FN>, %xs: tensor<64x7168xf32>)
    -> (tensor<8192x7168xbf16>, tensor<2112x7168xf32>) {
  %g, %gs, %gt, %gts = blockscale.quantize_dual %dy {recipe = #blockscale.recipe<blk_1x128>,
                                                     scale_layout = #blockscale.scale_layout<col_major, align = 4>,
                                                     t_scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<8192x2112xbf16> -> tensor<8192x2112xf8E4M3FN>, tensor<8192x17xf32>, tensor<2112x8192xf8E4M3FN>, tensor<2112x64xf32>
  %dx = blockscale.matmul %g[%gs], %wt[%wts] {form = #blockscale.form<dgrad>,
          a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>,
          a_scale_layout = #blockscale.scale_layout<col_major, align = 4>,
          b_scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<8192x2112xf8E4M3FN>, tensor<8192x17xf32>, tensor<2112x7168xf8E4M3FN>, tensor<17x56xf32> -> tensor<8192x7168xbf16>
  %dw = blockscale.matmul %gt[%gts], %x[%xs] {form = #blockscale.form<wgrad>,
          a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x1>,
          a_scale_layout = #blockscale.scale_layout<col_major, align = 4>,
          b_scale_layout = #blockscale.scale_layout<row_major, align = 4>}
      : tensor<2112x8192xf8E4M3FN>, tensor<2112x64xf32>, tensor<8192x7168xf8E4M3FN>, tensor<64x7168xf32> -> tensor<2112x7168xf32>
  return %dx, %dw : tensor<8192x7168xbf16>, tensor<2112x7168xf32>
}

// -----

func.func @dual_no_t_scale_layout(%x: tensor<128x256xbf16>) -> tensor<256x1xf32> {
  // expected-error @+1 {{expected a t_scale_layout but got none; run --blockscale-pad-scales}}
  %q, %s, %t, %ts = blockscale.quantize_dual %x {recipe = #blockscale.recipe<blk_1x128>,
                                                 scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<128x256xbf16> -> tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x128xf8E4M3FN>, tensor<256x1xf32>
  return %ts : tensor<256x1xf32>
}

// -----

// The transposed result's rows are the input's columns: 100 FP8 bytes.
func.func @dual_t_result_rows(%x: tensor<100x256xbf16>) -> tensor<256x1xf32> {
  // expected-error @+1 {{expected the FP8 t_result's rows to be a multiple of 16 bytes (TMA rule for its consumer) but got 100 elements; pad that dimension to 112}}
  %q, %s, %t, %ts = blockscale.quantize_dual %x {recipe = #blockscale.recipe<blk_1x128>,
                                                 scale_layout = #blockscale.scale_layout<col_major, align = 4>,
                                                 t_scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<100x256xbf16> -> tensor<100x256xf8E4M3FN>, tensor<100x2xf32>, tensor<256x100xf8E4M3FN>, tensor<256x1xf32>
  return %ts : tensor<256x1xf32>
}

// -----

func.func @dual_result_rows(%x: tensor<128x200xbf16>) -> tensor<200x1xf32> {
  // expected-error @+1 {{expected the FP8 result's rows to be a multiple of 16 bytes (TMA rule for its consumer) but got 200 elements; pad that dimension to 208}}
  %q, %s, %t, %ts = blockscale.quantize_dual %x {recipe = #blockscale.recipe<blk_1x128>,
                                                 scale_layout = #blockscale.scale_layout<col_major, align = 4>,
                                                 t_scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<128x200xbf16> -> tensor<128x200xf8E4M3FN>, tensor<128x2xf32>, tensor<200x128xf8E4M3FN>, tensor<200x1xf32>
  return %ts : tensor<200x1xf32>
}

// -----

// The A data from one result of a dual cast, its scales from the other.
func.func @dual_crossed_scales(%x: tensor<256x256xbf16>, %b: tensor<256x512xf8E4M3FN>,
                               %bs: tensor<2x4xf32>) -> tensor<256x512xbf16> {
  %q, %s, %t, %ts = blockscale.quantize_dual %x {recipe = #blockscale.recipe<blk_1x128>,
                                                 scale_layout = #blockscale.scale_layout<col_major, align = 4>,
                                                 t_scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<256x256xbf16> -> tensor<256x256xf8E4M3FN>, tensor<256x2xf32>, tensor<256x256xf8E4M3FN>, tensor<256x2xf32>
  // expected-error @+1 {{expected the A scales to come from the quantize that produces A}}
  %c = blockscale.matmul %t[%s], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>,
         a_scale_layout = #blockscale.scale_layout<col_major, align = 4>,
         b_scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<256x256xf8E4M3FN>, tensor<256x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<256x512xbf16>
  return %c : tensor<256x512xbf16>
}

// -----

// The weight's dual cast with row_major results: neither is K-contiguous B.
func.func @dual_b_layout(%w: tensor<256x512xbf16>, %a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>)
    -> tensor<128x512xbf16> {
  %t, %ts, %q, %s = blockscale.quantize_dual %w {recipe = #blockscale.recipe<blk_128x128>,
                                                 scale_layout = #blockscale.scale_layout<col_major, align = 4>,
                                                 t_scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>, tensor<2x4xf32>, tensor<512x256xf8E4M3FN>, tensor<4x2xf32>
  // expected-error @+1 {{expected B in col_major order but its quantize writes row_major}}
  %c = blockscale.matmul %a[%as], %t[%ts] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>,
         a_scale_layout = #blockscale.scale_layout<col_major, align = 4>,
         b_scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x512xbf16>
  return %c : tensor<128x512xbf16>
}

// -----

// The k-grouped weight gradient over its group-aware casts passes.
// CHECK-LABEL: func.func @kgrouped_ok
func.func @kgrouped_ok(%dy: tensor<?x4096xbf16>, %x: tensor<?x7168xbf16>,
                       %offs: tensor<8xi32>) -> tensor<8x4096x7168xf32> {
  %gq, %gs = blockscale.quantize_grouped_tokens %dy offsets(%offs : tensor<8xi32>)
      {scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<?x4096xbf16> -> tensor<4096x?xf8E4M3FN>, tensor<4096x?xf32>
  %xq, %xs = blockscale.quantize_grouped_tokens %x offsets(%offs : tensor<8xi32>)
      {scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<?x7168xbf16> -> tensor<7168x?xf8E4M3FN>, tensor<7168x?xf32>
  %c = blockscale.grouped_matmul_k %gq[%gs], %xq[%xs] offsets(%offs : tensor<8xi32>)
      : tensor<4096x?xf8E4M3FN>, tensor<4096x?xf32>, tensor<7168x?xf8E4M3FN>, tensor<7168x?xf32> -> tensor<8x4096x7168xf32>
  return %c : tensor<8x4096x7168xf32>
}

// -----

func.func @kgrouped_cast_without_layout(%x: tensor<?x7168xbf16>, %offs: tensor<8xi32>)
    -> (tensor<7168x?xf8E4M3FN>, tensor<7168x?xf32>) {
  // expected-error @+1 {{expected a scale_layout but got none; run --blockscale-pad-scales}}
  %xq, %xs = blockscale.quantize_grouped_tokens %x offsets(%offs : tensor<8xi32>)
      : tensor<?x7168xbf16> -> tensor<7168x?xf8E4M3FN>, tensor<7168x?xf32>
  return %xq, %xs : tensor<7168x?xf8E4M3FN>, tensor<7168x?xf32>
}

// -----

func.func @kgrouped_cast_input_rows(%x: tensor<?x7164xbf16>, %offs: tensor<8xi32>)
    -> (tensor<7164x?xf8E4M3FN>, tensor<7164x?xf32>) {
  // expected-error @+1 {{expected input rows of a multiple of 16 bytes but got 7164 x 'bf16'; pad the columns to 7168}}
  %xq, %xs = blockscale.quantize_grouped_tokens %x offsets(%offs : tensor<8xi32>)
      {scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<?x7164xbf16> -> tensor<7164x?xf8E4M3FN>, tensor<7164x?xf32>
  return %xq, %xs : tensor<7164x?xf8E4M3FN>, tensor<7164x?xf32>
}

// -----

func.func @kgrouped_n_rows(%a: tensor<4096x?xf8E4M3FN>, %as: tensor<4096x?xf32>,
                           %b: tensor<7164x?xf8E4M3FN>, %bs: tensor<7164x?xf32>,
                           %offs: tensor<8xi32>) -> tensor<8x4096x7164xbf16> {
  // expected-error @+1 {{expected N to be a multiple of 8 (C's rows of 'bf16' are TMA rows of a multiple of 16 bytes) but got N = 7164; pad N to 7168}}
  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%offs : tensor<8xi32>)
      : tensor<4096x?xf8E4M3FN>, tensor<4096x?xf32>, tensor<7164x?xf8E4M3FN>, tensor<7164x?xf32> -> tensor<8x4096x7164xbf16>
  return %c : tensor<8x4096x7164xbf16>
}

// -----

func.func @kgrouped_c_rows(%a: tensor<16777216x?xf8E4M3FN>, %as: tensor<16777216x?xf32>,
                           %b: tensor<128x?xf8E4M3FN>, %bs: tensor<128x?xf32>,
                           %offs: tensor<256xi32>) -> tensor<256x16777216x128xf32> {
  // expected-error @+1 {{expected G x M <= 2147483647 (2^31 - 1: the kernels take 32-bit sizes) but got G x M = 4294967296; split the tensor}}
  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%offs : tensor<256xi32>)
      : tensor<16777216x?xf8E4M3FN>, tensor<16777216x?xf32>, tensor<128x?xf8E4M3FN>, tensor<128x?xf32> -> tensor<256x16777216x128xf32>
  return %c : tensor<256x16777216x128xf32>
}

// -----

func.func @kgrouped_dense_cast(%dy: tensor<1024x4096xbf16>, %b: tensor<7168x1024xf8E4M3FN>,
                               %bs: tensor<7168x8xf32>, %offs: tensor<4xi32>) -> tensor<4x4096x7168xf32> {
  %gq, %gs = blockscale.quantize %dy {recipe = #blockscale.recipe<blk_1x128>, transpose,
                                      scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<1024x4096xbf16> -> tensor<4096x1024xf8E4M3FN>, tensor<4096x8xf32>
  // expected-error @+1 {{expected A from blockscale.quantize_grouped_tokens (every group padded to 128-token blocks) but got a result of blockscale.quantize; use the group-aware cast}}
  %c = blockscale.grouped_matmul_k %gq[%gs], %b[%bs] offsets(%offs : tensor<4xi32>)
      : tensor<4096x1024xf8E4M3FN>, tensor<4096x8xf32>, tensor<7168x1024xf8E4M3FN>, tensor<7168x8xf32> -> tensor<4x4096x7168xf32>
  return %c : tensor<4x4096x7168xf32>
}

// -----

func.func @kgrouped_other_offsets(%x: tensor<?x7168xbf16>, %a: tensor<4096x?xf8E4M3FN>,
                                  %as: tensor<4096x?xf32>, %offs: tensor<8xi32>,
                                  %offs2: tensor<8xi32>) -> tensor<8x4096x7168xf32> {
  // expected-note @+1 {{cast here}}
  %xq, %xs = blockscale.quantize_grouped_tokens %x offsets(%offs2 : tensor<8xi32>)
      {scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<?x7168xbf16> -> tensor<7168x?xf8E4M3FN>, tensor<7168x?xf32>
  // expected-error @+1 {{expected B cast with the matmul's offsets (the padded blocks follow them) but got a cast with other offsets}}
  %c = blockscale.grouped_matmul_k %a[%as], %xq[%xs] offsets(%offs : tensor<8xi32>)
      : tensor<4096x?xf8E4M3FN>, tensor<4096x?xf32>, tensor<7168x?xf8E4M3FN>, tensor<7168x?xf32> -> tensor<8x4096x7168xf32>
  return %c : tensor<8x4096x7168xf32>
}
