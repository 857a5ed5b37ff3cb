// No grid: one device runs the whole layer. Checks the executor's normal
// (per-process) path -- quantize, two GEMMs, bf16 and f32 outputs -- on a
// machine with one GPU.
func.func @ffn(%x: tensor<384x1024xbf16>,
               %w1: tensor<1024x640xf8E4M3FN>, %w1s: tensor<8x5xf32>,
               %w2: tensor<640x1024xf8E4M3FN>, %w2s: tensor<5x8xf32>) -> (tensor<384x640xbf16>, tensor<384x1024xf32>) {
  %q, %qs = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<384x1024xbf16> -> tensor<384x1024xf8E4M3FN>, tensor<384x8xf32>
  %h = blockscale.matmul %q[%qs], %w1[%w1s] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<384x1024xf8E4M3FN>, tensor<384x8xf32>, tensor<1024x640xf8E4M3FN>, tensor<8x5xf32> -> tensor<384x640xbf16>
  %hq, %hqs = blockscale.quantize %h {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<384x640xbf16> -> tensor<384x640xf8E4M3FN>, tensor<384x5xf32>
  %y = blockscale.matmul %hq[%hqs], %w2[%w2s] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<384x640xf8E4M3FN>, tensor<384x5xf32>, tensor<640x1024xf8E4M3FN>, tensor<5x8xf32> -> tensor<384x1024xf32>
  return %h, %y : tensor<384x640xbf16>, tensor<384x1024xf32>
}
