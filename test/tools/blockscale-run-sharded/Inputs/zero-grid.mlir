shard.grid @g(shape = 2x0)
func.func @f(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>,
             %b: tensor<1024x512xf8E4M3FN>, %bs: tensor<8x4xf32>) -> tensor<256x512xbf16> {
  %s_a = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %a0 = shard.shard %a to %s_a annotate_for_users : tensor<256x1024xf8E4M3FN>
  %c = blockscale.matmul %a0[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<1024x512xf8E4M3FN>, tensor<8x4xf32> -> tensor<256x512xbf16>
  return %c : tensor<256x512xbf16>
}
