// K = 1152 (9 scale blocks) split over 2 devices: not whole blocks per
// device (source-locations.test).
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
  %c = blockscale.matmul %a0[%as0], %b0[%bs0] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<256x1152xf8E4M3FN>, tensor<256x9xf32>, tensor<1152x512xf8E4M3FN>, tensor<9x4xf32> -> tensor<256x512xbf16>
  return %c : tensor<256x512xbf16>
}
