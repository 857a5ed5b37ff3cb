// A program whose matmul fails planning (N past the kernels' 32-bit sizes):
// the error names this file and the matmul's line (source-locations.test).

func.func @big(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
               %b: tensor<256x4503599627370496xf8E4M3FN>, %bs: tensor<2x35184372088832xf32>) -> tensor<128x4503599627370496xbf16> {
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x4503599627370496xf8E4M3FN>, tensor<2x35184372088832xf32> -> tensor<128x4503599627370496xbf16>
  return %c : tensor<128x4503599627370496xbf16>
}
