// RUN: blockscale-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(sharding-propagation), blockscale-check-shard-alignment)" --verify-diagnostics

// K = 1152 is 9 blocks of 128: two devices would each hold 4.5 blocks.
shard.grid @tp(shape = 2)
// Data in elements (5 blocks, then 4), scales in blocks.
func.func @misaligned_k(%a: tensor<256x1152xf8E4M3FN>, %as: tensor<256x9xf32>,
                        %b: tensor<1152x512xf8E4M3FN>, %bs: tensor<9x4xf32>) -> tensor<256x512xbf16> {
  %s_a = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %s_b = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %a0 = shard.shard %a to %s_a : tensor<256x1152xf8E4M3FN>
  %as0 = shard.shard %as to %s_a : tensor<256x9xf32>
  %b0 = shard.shard %b to %s_b : tensor<1152x512xf8E4M3FN>
  %bs0 = shard.shard %bs to %s_b : tensor<9x4xf32>
  // expected-error @+1 {{expected K = 1152 split over 2 devices to give every device whole 128-element scale blocks but got 4.50 blocks per device (9 blocks in all); use a device count that divides 9, pad K to 1280, or run --blockscale-check-shard-alignment="allow-padding=1"}}
  %c = blockscale.matmul %a0[%as0], %b0[%bs0] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<256x1152xf8E4M3FN>, tensor<256x9xf32>, tensor<1152x512xf8E4M3FN>, tensor<9x4xf32> -> tensor<256x512xbf16>
  return %c : tensor<256x512xbf16>
}

// -----

// Column-parallel over 4 devices with N = 384 (3 blocks of a 128x128
// weight): not a whole number of blocks per device.
shard.grid @tp4(shape = 4)
func.func @misaligned_n(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>,
                        %b: tensor<1024x384xf8E4M3FN>, %bs: tensor<8x3xf32>) -> tensor<256x384xbf16> {
  %s_b = shard.sharding @tp4 split_axes = [[], [0]] : !shard.sharding
  %b0 = shard.shard %b to %s_b : tensor<1024x384xf8E4M3FN>
  %bs0 = shard.shard %bs to %s_b : tensor<8x3xf32>
  // expected-error @+1 {{expected N = 384 split over 4 devices to give every device whole 128-element scale blocks but got 0.75 blocks per device (3 blocks in all)}}
  %c = blockscale.matmul %a[%as], %b0[%bs0] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<1024x384xf8E4M3FN>, tensor<8x3xf32> -> tensor<256x384xbf16>
  return %c : tensor<256x384xbf16>
}

// -----

// Grad-weight B has 128x1 scales: splitting N is fine at any multiple of 1.
shard.grid @tp4(shape = 4)
func.func @wgrad_n_any(%g: tensor<256x1024xf8E4M3FN>, %gs: tensor<256x8xf32>,
                       %x: tensor<1024x384xf8E4M3FN>, %xs: tensor<8x384xf32>) -> tensor<256x384xf32> {
  %s_x = shard.sharding @tp4 split_axes = [[], [0]] : !shard.sharding
  %x0 = shard.shard %x to %s_x : tensor<1024x384xf8E4M3FN>
  %xs0 = shard.shard %xs to %s_x : tensor<8x384xf32>
  %c = blockscale.matmul %g[%gs], %x0[%xs0] {form = #blockscale.form<wgrad>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x1>}
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<1024x384xf8E4M3FN>, tensor<8x384xf32> -> tensor<256x384xf32>
  return %c : tensor<256x384xf32>
}

// -----

// An accumulating grad-weight cannot split K: every device would add acc.
shard.grid @dp(shape = 2)
func.func @acc_split_k(%g: tensor<256x1024xf8E4M3FN>, %gs: tensor<256x8xf32>,
                       %x: tensor<1024x256xf8E4M3FN>, %xs: tensor<8x256xf32>,
                       %acc: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %s_g = shard.sharding @dp split_axes = [[], [0]] : !shard.sharding
  %s_x = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %g0 = shard.shard %g to %s_g : tensor<256x1024xf8E4M3FN>
  %gs0 = shard.shard %gs to %s_g : tensor<256x8xf32>
  %x0 = shard.shard %x to %s_x : tensor<1024x256xf8E4M3FN>
  %xs0 = shard.shard %xs to %s_x : tensor<8x256xf32>
  // expected-error @+1 {{expected an accumulating matmul (acc) not to be split along K but K is split over 2 devices}}
  %c = blockscale.matmul %g0[%gs0], %x0[%xs0] acc(%acc : tensor<256x256xf32>) {form = #blockscale.form<wgrad>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x1>}
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<1024x256xf8E4M3FN>, tensor<8x256xf32> -> tensor<256x256xf32>
  return %c : tensor<256x256xf32>
}

// -----

// A 128x128 weight cast split over 3 devices along 384 columns is fine; along
// 256 rows it is not.
shard.grid @tp3(shape = 3)
func.func @cast_misaligned(%w: tensor<256x384xbf16>) -> tensor<2x3xf32> {
  %s = shard.sharding @tp3 split_axes = [[0]] : !shard.sharding
  %w0 = shard.shard %w to %s : tensor<256x384xbf16>
  // expected-error @+1 {{expected dimension 0 = 256 split over 3 devices to give every device whole 128-element scale blocks but got 0.67 blocks per device (2 blocks in all)}}
  %q, %qs = blockscale.quantize %w0 {recipe = #blockscale.recipe<blk_128x128>}
      : tensor<256x384xbf16> -> tensor<256x384xf8E4M3FN>, tensor<2x3xf32>
  return %qs : tensor<2x3xf32>
}

// -----

shard.grid @dp(shape = 2)
func.func @tensorwise_split(%w: tensor<256x384xbf16>) -> tensor<f32> {
  %s = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %w0 = shard.shard %w to %s : tensor<256x384xbf16>
  // expected-error @+1 {{expected a tensorwise quantize to stay replicated (its amax is over the whole tensor) but it is split}}
  %q, %qs = blockscale.quantize %w0 {recipe = #blockscale.recipe<tensorwise>}
      : tensor<256x384xbf16> -> tensor<256x384xf8E4M3FN>, tensor<f32>
  return %qs : tensor<f32>
}
