// RUN: blockscale-run-sharded %s --plan-only --rank 3 | FileCheck %s
// RUN: blockscale-run-sharded %s --plan-only --rank 0 | FileCheck %s --check-prefix=RANK0

// A two-layer FFN on a 2x2 (dp, tp) grid: tokens over dp, W1 column-parallel
// and W2 row-parallel over tp. The device program quantizes its own rows,
// runs both GEMMs on local shards and all-reduces the partial sums over tp;
// the plan gives every buffer its local shape and physical strides.

// CHECK-LABEL: // device program
// CHECK: func.func @ffn(%{{.*}}: tensor<128x1024xbf16>, %{{.*}}: tensor<1024x256xf8E4M3FN>, %{{.*}}: tensor<8x2xf32>, %{{.*}}: tensor<256x1024xf8E4M3FN>, %{{.*}}: tensor<2x8xf32>) -> tensor<128x1024xbf16>
// CHECK-LABEL: // plan
// CHECK-NEXT: grid 2x2
// W2's 128x128 scales are K-major with the K-block stride padded to 4.
// CHECK: %[[W2S:[0-9]+]] arg4: 2x8xf32 strides [1x4]
// CHECK: args (%0, %1, %2, %3, %4) results (%[[OUT:[0-9]+]])
// CHECK-NEXT: quantize 1x128 rows 128 cols 1024 (%0) -> (%[[Q0:[0-9]+]], %[[S0:[0-9]+]])
// CHECK-NEXT: gemm fwd 128x256x1024 bf16 (%[[Q0]], %[[S0]], %1, %2) -> (%[[H:[0-9]+]])
// CHECK-NEXT: quantize 1x128 rows 128 cols 256 (%[[H]]) -> (%[[Q1:[0-9]+]], %[[S1:[0-9]+]])
// CHECK-NEXT: gemm fwd 128x1024x256 bf16 (%[[Q1]], %[[S1]], %3, %[[W2S]]) -> (%[[P:[0-9]+]])
// CHECK-NEXT: all_reduce axes [1] (%[[P]]) -> (%[[OUT]])
// CHECK-NEXT: // rank 3 group over axes [1]: ranks [2,3]
// RANK0: // rank 0 group over axes [1]: ranks [0,1]

shard.grid @mesh(shape = 2x2)
func.func @ffn(%x: tensor<256x1024xbf16>,
               %w1: tensor<1024x512xf8E4M3FN>, %w1s: tensor<8x4xf32>,
               %w2: tensor<512x1024xf8E4M3FN>, %w2s: tensor<4x8xf32>) -> tensor<256x1024xbf16> {
  %s_x = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %s_w1 = shard.sharding @mesh split_axes = [[], [1]] : !shard.sharding
  %s_w2 = shard.sharding @mesh split_axes = [[1]] : !shard.sharding
  %x0 = shard.shard %x to %s_x : tensor<256x1024xbf16>
  %w10 = shard.shard %w1 to %s_w1 : tensor<1024x512xf8E4M3FN>
  %w1s0 = shard.shard %w1s to %s_w1 : tensor<8x4xf32>
  %w20 = shard.shard %w2 to %s_w2 : tensor<512x1024xf8E4M3FN>
  %w2s0 = shard.shard %w2s to %s_w2 : tensor<4x8xf32>
  %q, %qs = blockscale.quantize %x0 {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<256x1024xbf16> -> tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>
  %h = blockscale.matmul %q[%qs], %w10[%w1s0] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<1024x512xf8E4M3FN>, tensor<8x4xf32> -> tensor<256x512xbf16>
  %s_h = shard.sharding @mesh split_axes = [[0], [1]] : !shard.sharding
  %h0 = shard.shard %h to %s_h : tensor<256x512xbf16>
  %h1 = shard.shard %h0 to %s_h annotate_for_users : tensor<256x512xbf16>
  %hq, %hqs = blockscale.quantize %h1 {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>, tensor<256x4xf32>
  %y = blockscale.matmul %hq[%hqs], %w20[%w2s0] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<256x512xf8E4M3FN>, tensor<256x4xf32>, tensor<512x1024xf8E4M3FN>, tensor<4x8xf32> -> tensor<256x1024xbf16>
  %s_y = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %y0 = shard.shard %y to %s_y : tensor<256x1024xbf16>
  return %y0 : tensor<256x1024xbf16>
}
