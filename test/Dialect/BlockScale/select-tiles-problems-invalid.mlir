// RUN: blockscale-opt %s --split-input-file --blockscale-select-tiles --verify-diagnostics
// RUN: blockscale-opt %s --split-input-file --blockscale-jit-pipeline --verify-diagnostics

// Problems the model and the kernels cannot take: every one is a diagnostic
// that names the limit (the model used to divide by zero or wrap).

func.func @empty_m(%a: tensor<0x256xf8E4M3FN>, %as: tensor<0x2xf32>,
                   %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) -> tensor<0x512xbf16> {
  // expected-error @+1 {{expected M >= 1 but got M = 0 (an empty or negative size has no kernel) (selecting a tile for M x N x K = 0x512x256)}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<0x256xf8E4M3FN>, tensor<0x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<0x512xbf16>
  return %c : tensor<0x512xbf16>
}

// -----

func.func @empty_n(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
                   %b: tensor<256x0xf8E4M3FN>, %bs: tensor<2x0xf32>) -> tensor<128x0xbf16> {
  // expected-error @+1 {{expected N >= 1 but got N = 0}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x0xf8E4M3FN>, tensor<2x0xf32> -> tensor<128x0xbf16>
  return %c : tensor<128x0xbf16>
}

// -----

func.func @empty_k(%a: tensor<128x0xf8E4M3FN>, %as: tensor<128x0xf32>,
                   %b: tensor<0x512xf8E4M3FN>, %bs: tensor<0x4xf32>) -> tensor<128x512xbf16> {
  // expected-error @+1 {{expected K >= 1 but got K = 0}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<128x0xf8E4M3FN>, tensor<128x0xf32>, tensor<0x512xf8E4M3FN>, tensor<0x4xf32> -> tensor<128x512xbf16>
  return %c : tensor<128x512xbf16>
}

// -----

// 2^31 rows: one past the kernels' 32-bit M.
func.func @m_2_31(%a: tensor<2147483648x256xf8E4M3FN>, %as: tensor<2147483648x2xf32>,
                  %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) -> tensor<2147483648x512xbf16> {
  // expected-error @+1 {{expected M <= 2147483647 (2^31 - 1: the kernels take 32-bit sizes) but got M = 2147483648}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<2147483648x256xf8E4M3FN>, tensor<2147483648x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<2147483648x512xbf16>
  return %c : tensor<2147483648x512xbf16>
}

// -----

// Sizes far past 2^31 (near 2^62 the tile count used to wrap, then divide
// by zero; the types themselves are bounded by 2^63 - 1 bytes).
func.func @n_2_62(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
                  %b: tensor<256x4503599627370496xf8E4M3FN>, %bs: tensor<2x35184372088832xf32>) -> tensor<128x4503599627370496xbf16> {
  // expected-error @+1 {{expected N <= 2147483647 (2^31 - 1: the kernels take 32-bit sizes) but got N = 4503599627370496}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x4503599627370496xf8E4M3FN>, tensor<2x35184372088832xf32> -> tensor<128x4503599627370496xbf16>
  return %c : tensor<128x4503599627370496xbf16>
}

// -----

// Below 2^31 each, but the output has more than 2^31 - 1 tiles even in the
// largest tile shapes.
func.func @too_many_tiles(%a: tensor<2147483520x256xf8E4M3FN>, %as: tensor<2147483520x2xf32>,
                          %b: tensor<256x2147483520xf8E4M3FN>, %bs: tensor<2x16777215xf32>) -> tensor<2147483520x2147483520xbf16> {
  // expected-error @+1 {{expected at most 2147483647 (2^31 - 1) output tiles but a 2147483520x2147483520 output has 140737479966720 even in the largest tiles; split the GEMM}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<2147483520x256xf8E4M3FN>, tensor<2147483520x2xf32>, tensor<256x2147483520xf8E4M3FN>, tensor<2x16777215xf32> -> tensor<2147483520x2147483520xbf16>
  return %c : tensor<2147483520x2147483520xbf16>
}
