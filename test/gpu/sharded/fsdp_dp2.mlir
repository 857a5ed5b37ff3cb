// FSDP on 2 devices: the weight and its 128x128 scales are stored split over
// dp (along N, the weight's physical outer dimension) and gathered before use.
shard.grid @dp(shape = 2)
func.func @fsdp(%a: tensor<512x1024xf8E4M3FN>, %as: tensor<512x8xf32>,
                %b: tensor<1024x768xf8E4M3FN>, %bs: tensor<8x6xf32>) -> tensor<512x768xbf16> {
  %s_a = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %s_b = shard.sharding @dp split_axes = [[], [0]] : !shard.sharding
  %s_full = shard.sharding @dp split_axes = [[]] : !shard.sharding
  %a0 = shard.shard %a to %s_a : tensor<512x1024xf8E4M3FN>
  %as0 = shard.shard %as to %s_a : tensor<512x8xf32>
  %b0 = shard.shard %b to %s_b : tensor<1024x768xf8E4M3FN>
  %bs0 = shard.shard %bs to %s_b : tensor<8x6xf32>
  %b1 = shard.shard %b0 to %s_full annotate_for_users : tensor<1024x768xf8E4M3FN>
  %bs1 = shard.shard %bs0 to %s_full annotate_for_users : tensor<8x6xf32>
  %c = blockscale.matmul %a0[%as0], %b1[%bs1] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<512x1024xf8E4M3FN>, tensor<512x8xf32>, tensor<1024x768xf8E4M3FN>, tensor<8x6xf32> -> tensor<512x768xbf16>
  %s_c = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %c0 = shard.shard %c to %s_c : tensor<512x768xbf16>
  return %c0 : tensor<512x768xbf16>
}
