// RUN: blockscale-opt %s --split-input-file --blockscale-shard-pipeline | FileCheck %s

// Column-parallel linear (Megatron colwise): the weight and its 128x128
// scales are split along N; every device computes its columns, no collective.

shard.grid @tp(shape = 2)
// CHECK-LABEL: func.func @colwise
// CHECK-SAME: %[[A:.*]]: tensor<256x1024xf8E4M3FN>, %[[AS:.*]]: tensor<256x8xf32>, %[[B:.*]]: tensor<1024x256xf8E4M3FN>, %[[BS:.*]]: tensor<8x2xf32>) -> tensor<256x256xbf16>
// CHECK-NEXT: %[[C:.*]] = blockscale.matmul %[[A]][%[[AS]]], %[[B]][%[[BS]]]
// CHECK-SAME: -> tensor<256x256xbf16>
// CHECK-NEXT: return %[[C]]
func.func @colwise(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>,
                   %b: tensor<1024x512xf8E4M3FN>, %bs: tensor<8x4xf32>) -> tensor<256x512xbf16> {
  %s_b = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %b0 = shard.shard %b to %s_b : tensor<1024x512xf8E4M3FN>
  %bs0 = shard.shard %bs to %s_b : tensor<8x4xf32>
  %c = blockscale.matmul %a[%as], %b0[%bs0] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<1024x512xf8E4M3FN>, tensor<8x4xf32> -> tensor<256x512xbf16>
  return %c : tensor<256x512xbf16>
}

// -----

// Row-parallel linear: A and B split along K (and so are both scale tensors,
// in blocks); the local products are partial sums -> all_reduce.
shard.grid @tp(shape = 2)
// CHECK-LABEL: func.func @rowwise
// CHECK-SAME: tensor<256x512xf8E4M3FN>, %{{.*}}: tensor<256x4xf32>, %{{.*}}: tensor<512x512xf8E4M3FN>, %{{.*}}: tensor<4x4xf32>) -> tensor<256x512xbf16>
// CHECK: %[[P:.*]] = blockscale.matmul {{.*}} -> tensor<256x512xbf16>
// CHECK-NEXT: %[[R:.*]] = shard.all_reduce %[[P]] on @tp grid_axes = [0] : tensor<256x512xbf16> -> tensor<256x512xbf16>
// CHECK-NEXT: return %[[R]]
func.func @rowwise(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>,
                   %b: tensor<1024x512xf8E4M3FN>, %bs: tensor<8x4xf32>) -> tensor<256x512xbf16> {
  %s_a = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %s_b = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %a0 = shard.shard %a to %s_a : tensor<256x1024xf8E4M3FN>
  %as0 = shard.shard %as to %s_a : tensor<256x8xf32>
  %b0 = shard.shard %b to %s_b : tensor<1024x512xf8E4M3FN>
  %bs0 = shard.shard %bs to %s_b : tensor<8x4xf32>
  %c = blockscale.matmul %a0[%as0], %b0[%bs0] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<1024x512xf8E4M3FN>, tensor<8x4xf32> -> tensor<256x512xbf16>
  %s_r = shard.sharding @tp split_axes = [[]] : !shard.sharding
  %c0 = shard.shard %c to %s_r : tensor<256x512xbf16>
  return %c0 : tensor<256x512xbf16>
}

// -----

// Row-parallel followed by sequence parallelism (the consumer wants the
// result split along M over the same axis): one reduce_scatter.
shard.grid @tp(shape = 2)
// CHECK-LABEL: func.func @rowwise_sequence_parallel
// CHECK: %[[P:.*]] = blockscale.matmul {{.*}} -> tensor<256x512xbf16>
// CHECK-NEXT: %[[R:.*]] = shard.reduce_scatter %[[P]] on @tp grid_axes = [0] scatter_axis = 0 : tensor<256x512xbf16> -> tensor<128x512xbf16>
// CHECK-NEXT: return %[[R]] : tensor<128x512xbf16>
func.func @rowwise_sequence_parallel(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>,
                      %b: tensor<1024x512xf8E4M3FN>, %bs: tensor<8x4xf32>) -> tensor<256x512xbf16> {
  %s_a = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %s_b = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %s_c = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %a1 = shard.shard %a to %s_a annotate_for_users : tensor<256x1024xf8E4M3FN>
  %as1 = shard.shard %as to %s_a annotate_for_users : tensor<256x8xf32>
  %b1 = shard.shard %b to %s_b annotate_for_users : tensor<1024x512xf8E4M3FN>
  %bs1 = shard.shard %bs to %s_b annotate_for_users : tensor<8x4xf32>
  %c = blockscale.matmul %a1[%as1], %b1[%bs1] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<1024x512xf8E4M3FN>, tensor<8x4xf32> -> tensor<256x512xbf16>
  %c0 = shard.shard %c to %s_c : tensor<256x512xbf16>
  %c1 = shard.shard %c0 to %s_c annotate_for_users : tensor<256x512xbf16>
  return %c1 : tensor<256x512xbf16>
}

// -----

// FSDP: the weight is stored split over the data-parallel axis and gathered
// (data and scales) before use; tokens stay split.
shard.grid @dp(shape = 2)
// CHECK-LABEL: func.func @fsdp
// CHECK-SAME: %[[A:.*]]: tensor<128x1024xf8E4M3FN>, %[[AS:.*]]: tensor<128x8xf32>, %[[B:.*]]: tensor<1024x256xf8E4M3FN>, %[[BS:.*]]: tensor<8x2xf32>) -> tensor<128x512xbf16>
// CHECK-DAG: %[[GS:.*]] = shard.all_gather %[[BS]] on @dp grid_axes = [0] gather_axis = 1 : tensor<8x2xf32> -> tensor<8x4xf32>
// CHECK-DAG: %[[GB:.*]] = shard.all_gather %[[B]] on @dp grid_axes = [0] gather_axis = 1 : tensor<1024x256xf8E4M3FN> -> tensor<1024x512xf8E4M3FN>
// CHECK: blockscale.matmul %[[A]][%[[AS]]], %[[GB]][%[[GS]]] {{.*}} -> tensor<128x512xbf16>
func.func @fsdp(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>,
                %b: tensor<1024x512xf8E4M3FN>, %bs: tensor<8x4xf32>) -> tensor<256x512xbf16> {
  %s_a = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %s_b = shard.sharding @dp split_axes = [[], [0]] : !shard.sharding
  %a0 = shard.shard %a to %s_a : tensor<256x1024xf8E4M3FN>
  %as0 = shard.shard %as to %s_a : tensor<256x8xf32>
  %b0 = shard.shard %b to %s_b : tensor<1024x512xf8E4M3FN>
  %bs0 = shard.shard %bs to %s_b : tensor<8x4xf32>
  %s_rep = shard.sharding @dp split_axes = [[]] : !shard.sharding
  %b1 = shard.shard %b0 to %s_rep annotate_for_users : tensor<1024x512xf8E4M3FN>
  %bs1 = shard.shard %bs0 to %s_rep annotate_for_users : tensor<8x4xf32>
  %c = blockscale.matmul %a0[%as0], %b1[%bs1] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<1024x512xf8E4M3FN>, tensor<8x4xf32> -> tensor<256x512xbf16>
  return %c : tensor<256x512xbf16>
}

// -----

// A 2x2 (dp, tp) grid: tokens over dp, column-parallel weight over tp; the
// grad-weight GEMM of the same layer with K = tokens split over dp reduces
// over dp only.
shard.grid @mesh(shape = 2x2)
// CHECK-LABEL: func.func @mesh2d
// CHECK-SAME: tensor<128x1024xf8E4M3FN>, %{{.*}}: tensor<128x8xf32>, %{{.*}}: tensor<1024x256xf8E4M3FN>, %{{.*}}: tensor<8x2xf32>) -> tensor<128x256xbf16>
// CHECK-NEXT: blockscale.matmul {{.*}} -> tensor<128x256xbf16>
// CHECK-NEXT: return
func.func @mesh2d(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>,
                  %b: tensor<1024x512xf8E4M3FN>, %bs: tensor<8x4xf32>) -> tensor<256x512xbf16> {
  %s_a = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %s_b = shard.sharding @mesh split_axes = [[], [1]] : !shard.sharding
  %a0 = shard.shard %a to %s_a : tensor<256x1024xf8E4M3FN>
  %as0 = shard.shard %as to %s_a : tensor<256x8xf32>
  %b0 = shard.shard %b to %s_b : tensor<1024x512xf8E4M3FN>
  %bs0 = shard.shard %bs to %s_b : tensor<8x4xf32>
  %c = blockscale.matmul %a0[%as0], %b0[%bs0] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<1024x512xf8E4M3FN>, tensor<8x4xf32> -> tensor<256x512xbf16>
  return %c : tensor<256x512xbf16>
}

// CHECK-LABEL: func.func @mesh2d_wgrad
// CHECK-SAME: %{{.*}}: tensor<512x512xf8E4M3FN>, %{{.*}}: tensor<512x4xf32>, %{{.*}}: tensor<512x256xf8E4M3FN>, %{{.*}}: tensor<4x256xf32>) -> tensor<512x256xf32>
// CHECK: %[[P:.*]] = blockscale.matmul {{.*}}form = #blockscale.form<wgrad>{{.*}} -> tensor<512x256xf32>
// CHECK-NEXT: shard.all_reduce %[[P]] on @mesh grid_axes = [0] : tensor<512x256xf32> -> tensor<512x256xf32>
func.func @mesh2d_wgrad(%g: tensor<512x1024xf8E4M3FN>, %gs: tensor<512x8xf32>,
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

// -----

// The casts shard like the data they write: rows of activations over dp,
// and dY^T (the transposed 1x128 cast) has the token dimension second.
shard.grid @dp(shape = 4)
// CHECK-LABEL: func.func @casts
// CHECK-SAME: %[[X:.*]]: tensor<2048x7168xbf16>
// CHECK: blockscale.quantize %[[X]] {recipe = #blockscale.recipe<blk_1x128>} : tensor<2048x7168xbf16> -> tensor<2048x7168xf8E4M3FN>, tensor<2048x56xf32>
// CHECK: blockscale.quantize %[[X]] {recipe = #blockscale.recipe<blk_1x128>, transpose} : tensor<2048x7168xbf16> -> tensor<7168x2048xf8E4M3FN>, tensor<7168x16xf32>
func.func @casts(%x: tensor<8192x7168xbf16>) -> (tensor<8192x56xf32>, tensor<7168x64xf32>) {
  %s = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %x0 = shard.shard %x to %s : tensor<8192x7168xbf16>
  %q, %qs = blockscale.quantize %x0 {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<8192x7168xbf16> -> tensor<8192x7168xf8E4M3FN>, tensor<8192x56xf32>
  %t, %ts = blockscale.quantize %x0 {recipe = #blockscale.recipe<blk_1x128>, transpose}
      : tensor<8192x7168xbf16> -> tensor<7168x8192xf8E4M3FN>, tensor<7168x64xf32>
  return %qs, %ts : tensor<8192x56xf32>, tensor<7168x64xf32>
}
