// RUN: blockscale-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(sharding-propagation), blockscale-check-shard-alignment{allow-padding=1})" | FileCheck %s

// With allow-padding, a split that would cut a scale block becomes uneven
// shards of whole blocks (the last one shorter), for the data in elements and
// for the scales in blocks.

shard.grid @tp(shape = 2)
// CHECK-LABEL: func.func @misaligned_k
// CHECK-DAG: %[[SK:.*]] = shard.sharding @tp split_axes = {{\[\[}}], [0]] sharded_dims_offsets = [0, 640, 1152]
// CHECK-DAG: %[[SKS:.*]] = shard.sharding @tp split_axes = {{\[\[}}], [0]] sharded_dims_offsets = [0, 5, 9]
// CHECK-DAG: %[[SB:.*]] = shard.sharding @tp split_axes = {{\[\[}}0]] sharded_dims_offsets = [0, 640, 1152]
// CHECK-DAG: %[[SBS:.*]] = shard.sharding @tp split_axes = {{\[\[}}0]] sharded_dims_offsets = [0, 5, 9]
// CHECK-DAG: shard.shard %{{.*}} to %[[SK]] annotate_for_users : tensor<256x1152xf8E4M3FN>
// CHECK-DAG: shard.shard %{{.*}} to %[[SKS]] annotate_for_users : tensor<256x9xf32>
// CHECK-DAG: shard.shard %{{.*}} to %[[SB]] annotate_for_users : tensor<1152x512xf8E4M3FN>
// CHECK-DAG: shard.shard %{{.*}} to %[[SBS]] annotate_for_users : tensor<9x4xf32>
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

// -----

// Grad-weight B has 128x1 scales: any split of N is aligned, nothing changes.
shard.grid @tp4(shape = 4)
// CHECK-LABEL: func.func @wgrad_n_any
// CHECK-NOT: sharded_dims_offsets
// CHECK: return
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

// A 128x128 weight cast of 256 rows over 3 devices: 1, 1 and 0 blocks.
shard.grid @tp3(shape = 3)
// CHECK-LABEL: func.func @cast_rows
// CHECK-DAG: shard.sharding @tp3 split_axes = {{\[\[}}0]] sharded_dims_offsets = [0, 128, 256, 256]
// CHECK-DAG: shard.sharding @tp3 split_axes = {{\[\[}}0]] sharded_dims_offsets = [0, 1, 2, 2]
func.func @cast_rows(%w: tensor<256x384xbf16>) -> tensor<2x3xf32> {
  %s = shard.sharding @tp3 split_axes = [[0]] : !shard.sharding
  %w0 = shard.shard %w to %s : tensor<256x384xbf16>
  %q, %qs = blockscale.quantize %w0 {recipe = #blockscale.recipe<blk_128x128>}
      : tensor<256x384xbf16> -> tensor<256x384xf8E4M3FN>, tensor<2x3xf32>
  return %qs : tensor<2x3xf32>
}
