// RUN: blockscale-opt %s --split-input-file --blockscale-fuse-dual-quantize | FileCheck %s

// dY for grad-input and dY^T for grad-weight: one read of dY writes both.
// CHECK-LABEL: func.func @dy
// CHECK-SAME: (%[[DY:.*]]: tensor<8192x2112xbf16>)
// CHECK: %[[G:.*]], %[[GS:.*]], %[[GT:.*]], %[[GTS:.*]] = blockscale.quantize_dual %[[DY]] {recipe = #blockscale.recipe<blk_1x128>}
// CHECK-SAME: : tensor<8192x2112xbf16> -> tensor<8192x2112xf8E4M3FN>, tensor<8192x17xf32>, tensor<2112x8192xf8E4M3FN>, tensor<2112x64xf32>
// CHECK-NOT: blockscale.quantize %
// CHECK: return %[[G]], %[[GS]], %[[GT]], %[[GTS]]
func.func @dy(%dy: tensor<8192x2112xbf16>)
    -> (tensor<8192x2112xf8E4M3FN>, tensor<8192x17xf32>, tensor<2112x8192xf8E4M3FN>, tensor<2112x64xf32>) {
  %g, %gs = blockscale.quantize %dy {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<8192x2112xbf16> -> tensor<8192x2112xf8E4M3FN>, tensor<8192x17xf32>
  %gt, %gts = blockscale.quantize %dy {recipe = #blockscale.recipe<blk_1x128>, transpose}
      : tensor<8192x2112xbf16> -> tensor<2112x8192xf8E4M3FN>, tensor<2112x64xf32>
  return %g, %gs, %gt, %gts : tensor<8192x2112xf8E4M3FN>, tensor<8192x17xf32>, tensor<2112x8192xf8E4M3FN>, tensor<2112x64xf32>
}

// -----

// The weight as the forward B operand (in input order) and as the
// grad-input B operand (transposed). The transposed cast comes first: the
// dual cast takes its place, ahead of its use, with the in-order cast as
// its first result; each cast's scale layout stays with its scales.
// CHECK-LABEL: func.func @weight
// CHECK-SAME: (%[[W:.*]]: tensor<2112x7168xbf16>
// CHECK-NEXT: %[[WQ:.*]], %[[WS:.*]], %[[WT:.*]], %[[WTS:.*]] = blockscale.quantize_dual %[[W]] {layout = #blockscale.layout<col_major>, recipe = #blockscale.recipe<blk_128x128>, scale_layout = #blockscale.scale_layout<row_major, align = 8>, t_scale_layout = #blockscale.scale_layout<col_major, align = 4>, transpose}
// CHECK-SAME: : tensor<2112x7168xbf16> -> tensor<7168x2112xf8E4M3FN>, tensor<56x17xf32>, tensor<2112x7168xf8E4M3FN>, tensor<17x56xf32>
// CHECK-NEXT: blockscale.matmul %{{.*}}[%{{.*}}], %[[WT]][%[[WTS]]]
// CHECK-NOT: blockscale.quantize %
// CHECK: return %{{.*}}, %[[WQ]], %[[WS]]
func.func @weight(%w: tensor<2112x7168xbf16>, %g: tensor<8192x2112xf8E4M3FN>, %gs: tensor<8192x17xf32>)
    -> (tensor<8192x7168xbf16>, tensor<7168x2112xf8E4M3FN>, tensor<56x17xf32>) {
  %wt, %wts = blockscale.quantize %w {recipe = #blockscale.recipe<blk_128x128>, layout = #blockscale.layout<col_major>,
                                      scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<2112x7168xbf16> -> tensor<2112x7168xf8E4M3FN>, tensor<17x56xf32>
  %dx = blockscale.matmul %g[%gs], %wt[%wts] {form = #blockscale.form<dgrad>,
          a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<8192x2112xf8E4M3FN>, tensor<8192x17xf32>, tensor<2112x7168xf8E4M3FN>, tensor<17x56xf32> -> tensor<8192x7168xbf16>
  %wq, %ws = blockscale.quantize %w {recipe = #blockscale.recipe<blk_128x128>, transpose, layout = #blockscale.layout<col_major>,
                                     scale_layout = #blockscale.scale_layout<row_major, align = 8>}
      : tensor<2112x7168xbf16> -> tensor<7168x2112xf8E4M3FN>, tensor<56x17xf32>
  return %dx, %wq, %ws : tensor<8192x7168xbf16>, tensor<7168x2112xf8E4M3FN>, tensor<56x17xf32>
}

// -----

// Three casts of x: the forward's 1x128 pairs with the 1x128 of x^T. The
// grad-weight operand (128x1, col_major) writes the same bytes as that
// transposed half but is the (M, K) tensor, not (K, M): it stays a cast of
// its own.
// CHECK-LABEL: func.func @three_casts
// CHECK: %[[Q:.*]], %{{.*}}, %[[T:.*]], %{{.*}} = blockscale.quantize_dual %{{.*}} {recipe = #blockscale.recipe<blk_1x128>}
// CHECK: %[[B:.*]], %{{.*}} = blockscale.quantize %{{.*}} {layout = #blockscale.layout<col_major>, recipe = #blockscale.recipe<blk_128x1>}
// CHECK-NOT: blockscale.quantize
// CHECK: return %[[Q]], %[[B]], %[[T]]
func.func @three_casts(%x: tensor<4096x7168xbf16>)
    -> (tensor<4096x7168xf8E4M3FN>, tensor<4096x7168xf8E4M3FN>, tensor<7168x4096xf8E4M3FN>) {
  %q, %qs = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<4096x7168xbf16> -> tensor<4096x7168xf8E4M3FN>, tensor<4096x56xf32>
  %b, %bs = blockscale.quantize %x {recipe = #blockscale.recipe<blk_128x1>, layout = #blockscale.layout<col_major>}
      : tensor<4096x7168xbf16> -> tensor<4096x7168xf8E4M3FN>, tensor<32x7168xf32>
  %t, %ts = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>, transpose}
      : tensor<4096x7168xbf16> -> tensor<7168x4096xf8E4M3FN>, tensor<7168x32xf32>
  return %q, %b, %t : tensor<4096x7168xf8E4M3FN>, tensor<4096x7168xf8E4M3FN>, tensor<7168x4096xf8E4M3FN>
}

// -----

// Two pairs of one tensor: each cast is paired with the first later one
// that fits.
// CHECK-LABEL: func.func @two_pairs
// CHECK-COUNT-2: blockscale.quantize_dual
// CHECK-NOT: blockscale.quantize
func.func @two_pairs(%x: tensor<256x512xbf16>)
    -> (tensor<256x512xf8E4M3FN>, tensor<512x256xf8E4M3FN>, tensor<256x512xf8E5M2>, tensor<512x256xf8E5M2>) {
  %a, %as = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>, tensor<256x4xf32>
  %c, %cs = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<256x512xbf16> -> tensor<256x512xf8E5M2>, tensor<256x4xf32>
  %b, %bs = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>, transpose}
      : tensor<256x512xbf16> -> tensor<512x256xf8E4M3FN>, tensor<512x2xf32>
  %d, %ds = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>, transpose}
      : tensor<256x512xbf16> -> tensor<512x256xf8E5M2>, tensor<512x2xf32>
  return %a, %b, %c, %d : tensor<256x512xf8E4M3FN>, tensor<512x256xf8E4M3FN>, tensor<256x512xf8E5M2>, tensor<512x256xf8E5M2>
}

// -----

// Different recipes are different casts.
// CHECK-LABEL: func.func @different_recipe
// CHECK-NOT: blockscale.quantize_dual
// CHECK: return
func.func @different_recipe(%x: tensor<256x512xbf16>) -> (tensor<256x512xf8E4M3FN>, tensor<512x256xf8E4M3FN>) {
  %a, %as = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>, tensor<256x4xf32>
  %b, %bs = blockscale.quantize %x {recipe = #blockscale.recipe<blk_128x128>, transpose}
      : tensor<256x512xbf16> -> tensor<512x256xf8E4M3FN>, tensor<4x2xf32>
  return %a, %b : tensor<256x512xf8E4M3FN>, tensor<512x256xf8E4M3FN>
}

// -----

// CHECK-LABEL: func.func @different_input
// CHECK-NOT: blockscale.quantize_dual
// CHECK: return
func.func @different_input(%x: tensor<256x512xbf16>, %y: tensor<256x512xbf16>)
    -> (tensor<256x512xf8E4M3FN>, tensor<512x256xf8E4M3FN>) {
  %a, %as = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>, tensor<256x4xf32>
  %b, %bs = blockscale.quantize %y {recipe = #blockscale.recipe<blk_1x128>, transpose}
      : tensor<256x512xbf16> -> tensor<512x256xf8E4M3FN>, tensor<512x2xf32>
  return %a, %b : tensor<256x512xf8E4M3FN>, tensor<512x256xf8E4M3FN>
}

// -----

// Both casts write in input order (the second is x^T col_major): nothing
// to transpose, and their layouts differ.
// CHECK-LABEL: func.func @both_in_order
// CHECK-NOT: blockscale.quantize_dual
// CHECK: return
func.func @both_in_order(%x: tensor<256x512xbf16>) -> (tensor<256x512xf8E4M3FN>, tensor<512x256xf8E4M3FN>) {
  %a, %as = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>, tensor<256x4xf32>
  %b, %bs = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>, transpose, layout = #blockscale.layout<col_major>}
      : tensor<256x512xbf16> -> tensor<512x256xf8E4M3FN>, tensor<512x2xf32>
  return %a, %b : tensor<256x512xf8E4M3FN>, tensor<512x256xf8E4M3FN>
}

// -----

// The in-order cast has 128x1 blocks of the input: not the dual kernel's.
// CHECK-LABEL: func.func @in_order_128x1
// CHECK-NOT: blockscale.quantize_dual
// CHECK: return
func.func @in_order_128x1(%x: tensor<256x512xbf16>) -> (tensor<256x512xf8E4M3FN>, tensor<512x256xf8E4M3FN>) {
  %a, %as = blockscale.quantize %x {recipe = #blockscale.recipe<blk_128x1>}
      : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>, tensor<2x512xf32>
  %b, %bs = blockscale.quantize %x {recipe = #blockscale.recipe<blk_128x1>, transpose}
      : tensor<256x512xbf16> -> tensor<512x256xf8E4M3FN>, tensor<4x256xf32>
  return %a, %b : tensor<256x512xf8E4M3FN>, tensor<512x256xf8E4M3FN>
}

// -----

// CHECK-LABEL: func.func @different_fp8_types
// CHECK-NOT: blockscale.quantize_dual
// CHECK: return
func.func @different_fp8_types(%x: tensor<256x512xbf16>) -> (tensor<256x512xf8E4M3FN>, tensor<512x256xf8E5M2>) {
  %a, %as = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>, tensor<256x4xf32>
  %b, %bs = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>, transpose}
      : tensor<256x512xbf16> -> tensor<512x256xf8E5M2>, tensor<512x2xf32>
  return %a, %b : tensor<256x512xf8E4M3FN>, tensor<512x256xf8E5M2>
}

// -----

// The same cast twice is not a pair (that is CSE's).
// CHECK-LABEL: func.func @same_transpose
// CHECK-NOT: blockscale.quantize_dual
// CHECK: return
func.func @same_transpose(%x: tensor<256x512xbf16>) -> (tensor<256x512xf8E4M3FN>, tensor<256x512xf8E4M3FN>) {
  %a, %as = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>, tensor<256x4xf32>
  %b, %bs = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>, tensor<256x4xf32>
  return %a, %b : tensor<256x512xf8E4M3FN>, tensor<256x512xf8E4M3FN>
}
