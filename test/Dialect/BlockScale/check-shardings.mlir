// RUN: blockscale-opt %s --split-input-file --blockscale-check-shardings=before-partition=1 --verify-diagnostics

// --blockscale-check-shardings=before-partition checks what shard-partition
// assumes of its input; run by hand on a program nobody propagated (what
// `--shard-partition` alone dereferences null on), it gives diagnostics.

shard.grid @g(shape = 2)
// expected-error @+1 {{expected tensor argument #0 to be used once, by a shard.shard (shard-partition reads its sharding there) but it has 1 use(s) and not one shard.shard}}
func.func @unpropagated_argument(%a: tensor<256x1024xf8E4M3FN>, %as: tensor<256x8xf32>,
                                 %b: tensor<1024x512xf8E4M3FN>, %bs: tensor<8x4xf32>) -> tensor<256x512xbf16> {
  %s_b = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %b0 = shard.shard %b to %s_b annotate_for_users : tensor<1024x512xf8E4M3FN>
  %c = blockscale.matmul %a[%as], %b0[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>, tensor<1024x512xf8E4M3FN>, tensor<8x4xf32> -> tensor<256x512xbf16>
  return %c : tensor<256x512xbf16>
}

// -----

shard.grid @g(shape = 2)
func.func @unpropagated_result(%x: tensor<256x1024xbf16>) -> tensor<256x1024xf8E4M3FN> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %x0 = shard.shard %x to %s annotate_for_users : tensor<256x1024xbf16>
  %q, %qs = blockscale.quantize %x0 {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<256x1024xbf16> -> tensor<256x1024xf8E4M3FN>, tensor<256x8xf32>
  // expected-error @+1 {{expected operand #0 to be a shard.shard result (shard-partition reads its sharding there) but it is not annotated}}
  return %q : tensor<256x1024xf8E4M3FN>
}

// -----

// A fully annotated program passes.
shard.grid @g(shape = 2)
func.func @annotated(%x: tensor<256x512xbf16>) -> tensor<256x512xbf16> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %x0 = shard.shard %x to %s : tensor<256x512xbf16>
  %x1 = shard.shard %x0 to %s annotate_for_users : tensor<256x512xbf16>
  return %x1 : tensor<256x512xbf16>
}

// -----

// Without before-partition only the structural checks run.
// RUN: blockscale-opt %s --split-input-file --blockscale-check-shardings 2>/dev/null | FileCheck %s --check-prefix=PLAIN
// PLAIN: func.func @plain
shard.grid @g(shape = 2)
func.func @plain(%x: tensor<255x512xbf16>) -> tensor<255x512xbf16> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  // expected-error @+1 {{expected dimension 0 (= 255) of 'tensor<255x512xbf16>' to split evenly over 2 devices}}
  %x0 = shard.shard %x to %s annotate_for_users : tensor<255x512xbf16>
  return %x0 : tensor<255x512xbf16>
}

// -----

// Reshardings: shard-partition lowers one grid axis appended, removed from
// the end, or moved between dimensions' ends; each of these passes.
shard.grid @g(shape = 2x2)
func.func @one_axis_reshards(%a: tensor<256x1024xf32>, %b: tensor<256x1024xf32>, %c: tensor<256x1024xf32>, %d: tensor<256x1024xf32>) -> (tensor<256x1024xf32>, tensor<256x1024xf32>, tensor<256x1024xf32>, tensor<256x1024xf32>) {
  %s01 = shard.sharding @g split_axes = [[0, 1]] : !shard.sharding
  %s0 = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %s_0 = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %s_1 = shard.sharding @g split_axes = [[], [1]] : !shard.sharding
  %s0_1 = shard.sharding @g split_axes = [[0], [1]] : !shard.sharding
  %a0 = shard.shard %a to %s01 : tensor<256x1024xf32>
  %unsplit = shard.shard %a0 to %s0 annotate_for_users : tensor<256x1024xf32>
  %b0 = shard.shard %b to %s0 : tensor<256x1024xf32>
  %split = shard.shard %b0 to %s0_1 annotate_for_users : tensor<256x1024xf32>
  %c0 = shard.shard %c to %s0_1 : tensor<256x1024xf32>
  %drop = shard.shard %c0 to %s_1 annotate_for_users : tensor<256x1024xf32>
  %d0 = shard.shard %d to %s0 : tensor<256x1024xf32>
  %move = shard.shard %d0 to %s_0 annotate_for_users : tensor<256x1024xf32>
  return %unsplit, %split, %drop, %move : tensor<256x1024xf32>, tensor<256x1024xf32>, tensor<256x1024xf32>, tensor<256x1024xf32>
}

// -----

// Two grid axes at once: shard-partition would lower one of them and type
// the result as the other sharding (or map nothing and crash).
shard.grid @g(shape = 2x2)
func.func @two_axes_dropped(%x: tensor<256x1024xf32>) -> tensor<256x1024xf32> {
  %s01 = shard.sharding @g split_axes = [[0, 1]] : !shard.sharding
  %x0 = shard.shard %x to %s01 : tensor<256x1024xf32>
  %r = shard.sharding @g split_axes = [[]] : !shard.sharding
  // expected-error @+1 {{expected a resharding of one grid axis (appended to a dimension's split axes, removed from their end, or moved from the end of one dimension's to the end of another's: what shard-partition lowers) but got split_axes [[0, 1]] -> [[]]; reshard through intermediate shard.shard ops, one grid axis at a time}}
  %x1 = shard.shard %x0 to %r annotate_for_users : tensor<256x1024xf32>
  return %x1 : tensor<256x1024xf32>
}

// -----

shard.grid @g(shape = 2x2)
func.func @two_dims_unsplit(%x: tensor<256x1024xf32>) -> tensor<256x1024xf32> {
  %s = shard.sharding @g split_axes = [[0], [1]] : !shard.sharding
  %x0 = shard.shard %x to %s : tensor<256x1024xf32>
  %r = shard.sharding @g split_axes = [[]] : !shard.sharding
  // expected-error @+1 {{but got split_axes [[0], [1]] -> [[]]}}
  %x1 = shard.shard %x0 to %r annotate_for_users : tensor<256x1024xf32>
  return %x1 : tensor<256x1024xf32>
}

// -----

shard.grid @g(shape = 2x2)
func.func @first_axis_dropped(%x: tensor<256x1024xf32>) -> tensor<256x1024xf32> {
  %s = shard.sharding @g split_axes = [[0, 1]] : !shard.sharding
  %x0 = shard.shard %x to %s : tensor<256x1024xf32>
  %r = shard.sharding @g split_axes = [[1]] : !shard.sharding
  // expected-error @+1 {{but got split_axes [[0, 1]] -> [[1]]}}
  %x1 = shard.shard %x0 to %r annotate_for_users : tensor<256x1024xf32>
  return %x1 : tensor<256x1024xf32>
}

// -----

// A move whose axes before the moved one differ is not one upstream lowers
// (it would slice dimension 1 again); [[0, 1]] -> [[0]] -> [[0], [1]] is.
shard.grid @g(shape = 2x2)
func.func @move_onto_other_prefix(%x: tensor<256x1024xf32>) -> tensor<256x1024xf32> {
  %s = shard.sharding @g split_axes = [[0, 1]] : !shard.sharding
  %x0 = shard.shard %x to %s : tensor<256x1024xf32>
  %r = shard.sharding @g split_axes = [[0], [1]] : !shard.sharding
  // expected-error @+1 {{but got split_axes [[0, 1]] -> [[0], [1]]}}
  %x1 = shard.shard %x0 to %r annotate_for_users : tensor<256x1024xf32>
  return %x1 : tensor<256x1024xf32>
}

// -----

shard.grid @g(shape = 2x2)
func.func @axes_reordered(%x: tensor<256x1024xf32>) -> tensor<256x1024xf32> {
  %s = shard.sharding @g split_axes = [[0, 1]] : !shard.sharding
  %x0 = shard.shard %x to %s : tensor<256x1024xf32>
  %r = shard.sharding @g split_axes = [[1, 0]] : !shard.sharding
  // expected-error @+1 {{but got split_axes [[0, 1]] -> [[1, 0]]}}
  %x1 = shard.shard %x0 to %r annotate_for_users : tensor<256x1024xf32>
  return %x1 : tensor<256x1024xf32>
}
