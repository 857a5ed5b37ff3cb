// Megatron MLP with sequence parallelism on 4 devices: the tokens arrive
// split over tp and are gathered, W1 is column-parallel, W2 row-parallel,
// and the partial sums are reduce-scattered back to a token split. The
// annotate_for_users ops on the second GEMM's operands pin that plan (left
// alone, propagation keeps tokens split and moves h with an all_to_all).
shard.grid @tp(shape = 4)
func.func @mlp(%x: tensor<512x1024xbf16>,
               %w1: tensor<1024x2048xf8E4M3FN>, %w1s: tensor<8x16xf32>,
               %w2: tensor<2048x1024xf8E4M3FN>, %w2s: tensor<16x8xf32>) -> tensor<512x1024xbf16> {
  %s_tok = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %s_rep = shard.sharding @tp split_axes = [[]] : !shard.sharding
  %s_col = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %s_row = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %x0 = shard.shard %x to %s_tok : tensor<512x1024xbf16>
  %x1 = shard.shard %x0 to %s_rep annotate_for_users : tensor<512x1024xbf16>
  %w10 = shard.shard %w1 to %s_col : tensor<1024x2048xf8E4M3FN>
  %w1s0 = shard.shard %w1s to %s_col : tensor<8x16xf32>
  %w20 = shard.shard %w2 to %s_row : tensor<2048x1024xf8E4M3FN>
  %w2s0 = shard.shard %w2s to %s_row : tensor<16x8xf32>
  %q, %qs = blockscale.quantize %x1 {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<512x1024xbf16> -> tensor<512x1024xf8E4M3FN>, tensor<512x8xf32>
  %h = blockscale.matmul %q[%qs], %w10[%w1s0] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<512x1024xf8E4M3FN>, tensor<512x8xf32>, tensor<1024x2048xf8E4M3FN>, tensor<8x16xf32> -> tensor<512x2048xbf16>
  %h0 = shard.shard %h to %s_col : tensor<512x2048xbf16>
  %h1 = shard.shard %h0 to %s_col annotate_for_users : tensor<512x2048xbf16>
  %hq, %hqs = blockscale.quantize %h1 {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<512x2048xbf16> -> tensor<512x2048xf8E4M3FN>, tensor<512x16xf32>
  %hq1 = shard.shard %hq to %s_col annotate_for_users : tensor<512x2048xf8E4M3FN>
  %hqs1 = shard.shard %hqs to %s_col annotate_for_users : tensor<512x16xf32>
  %w21 = shard.shard %w20 to %s_row annotate_for_users : tensor<2048x1024xf8E4M3FN>
  %w2s1 = shard.shard %w2s0 to %s_row annotate_for_users : tensor<16x8xf32>
  %y = blockscale.matmul %hq1[%hqs1], %w21[%w2s1] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<512x2048xf8E4M3FN>, tensor<512x16xf32>, tensor<2048x1024xf8E4M3FN>, tensor<16x8xf32> -> tensor<512x1024xbf16>
  %y0 = shard.shard %y to %s_tok : tensor<512x1024xbf16>
  return %y0 : tensor<512x1024xbf16>
}
