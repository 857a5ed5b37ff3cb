// RUN: not blockscale-translate %s --blockscale-emit-cuda 2>&1 | FileCheck %s

// CHECK: error: 'blockscale.quantize' op expected a blockwise recipe (1x128, 128x1, 128x128) but got tensorwise, which has no kernel template
func.func @tensorwise(%w: tensor<256x256xbf16>) -> tensor<f32> {
  %q, %s = blockscale.quantize %w {recipe = #blockscale.recipe<tensorwise>}
      : tensor<256x256xbf16> -> tensor<256x256xf8E4M3FN>, tensor<f32>
  return %s : tensor<f32>
}
