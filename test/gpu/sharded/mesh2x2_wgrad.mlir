// grad_weight on a 2x2 (dp, tp) grid: K (tokens) split over dp, the output
// features of dY^T over... dW = dY^T X with X column-split over tp; the f32
// partial sums are all-reduced over dp.
shard.grid @mesh(shape = 2x2)
func.func @wgrad(%g: tensor<512x1024xf8E4M3FN>, %gs: tensor<512x8xf32>,
                 %x: tensor<1024x512xf8E4M3FN>, %xs: tensor<8x512xf32>) -> tensor<512x512xf32> {
  %s_g = shard.sharding @mesh split_axes = [[], [0]] : !shard.sharding
  %s_x = shard.sharding @mesh split_axes = [[0], [1]] : !shard.sharding
  %g0 = shard.shard %g to %s_g : tensor<512x1024xf8E4M3FN>
  %gs0 = shard.shard %gs to %s_g : tensor<512x8xf32>
  %x0 = shard.shard %x to %s_x : tensor<1024x512xf8E4M3FN>
  %xs0 = shard.shard %xs to %s_x : tensor<8x512xf32>
  %dw = blockscale.matmul %g0[%gs0], %x0[%xs0] {form = #blockscale.form<wgrad>,
          a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x1>}
      : tensor<512x1024xf8E4M3FN>, tensor<512x8xf32>, tensor<1024x512xf8E4M3FN>, tensor<8x512xf32> -> tensor<512x512xf32>
  %s_r = shard.sharding @mesh split_axes = [[], [1]] : !shard.sharding
  %dw0 = shard.shard %dw to %s_r : tensor<512x512xf32>
  return %dw0 : tensor<512x512xf32>
}
