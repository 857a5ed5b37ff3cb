// RUN: blockscale-opt %s --blockscale-jit-pipeline="num-sms=132 m-hint=4096" | FileCheck %s

// The named pipeline is exactly what the JIT runs: dual casts, scale
// layouts, layout checks and tile selection, on a whole linear layer.

// CHECK-LABEL: func.func @linear_fwd
// CHECK: blockscale.quantize %{{.*}} {recipe = #blockscale.recipe<blk_1x128>, scale_layout = #blockscale.scale_layout<col_major, align = 4>}
// CHECK: blockscale.quantize %{{.*}} {layout = #blockscale.layout<col_major>, recipe = #blockscale.recipe<blk_128x128>, scale_layout = #blockscale.scale_layout<col_major, align = 4>, transpose}
// CHECK: blockscale.matmul
// CHECK-SAME: a_scale_layout = #blockscale.scale_layout<col_major, align = 4>
// CHECK-SAME: b_scale_layout = #blockscale.scale_layout<col_major, align = 4>
// CHECK-SAME: tile = #blockscale.tile<bm = 128
func.func @linear_fwd(%x: tensor<?x7168xbf16>, %w: tensor<2112x7168xbf16>) -> tensor<?x2112xbf16> {
  %xq, %xs = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<?x7168xbf16> -> tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>
  %wq, %ws = blockscale.quantize %w {recipe = #blockscale.recipe<blk_128x128>, transpose,
                                     layout = #blockscale.layout<col_major>}
      : tensor<2112x7168xbf16> -> tensor<7168x2112xf8E4M3FN>, tensor<56x17xf32>
  %c = blockscale.matmul %xq[%xs], %wq[%ws] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<7168x2112xf8E4M3FN>, tensor<56x17xf32> -> tensor<?x2112xbf16>
  return %c : tensor<?x2112xbf16>
}

// The backward of the same layer: dgrad reads dY and W^T (physically
// transposed cast), wgrad reads dY^T and X column-major with 128x1 scales.
// dY's two casts become one dual cast, each of its scale results laid out
// as the A scales of its GEMM.
// CHECK-LABEL: func.func @linear_bwd
// CHECK: %[[G:.*]], %[[GS:.*]], %[[GT:.*]], %[[GTS:.*]] = blockscale.quantize_dual %{{.*}} {recipe = #blockscale.recipe<blk_1x128>, scale_layout = #blockscale.scale_layout<col_major, align = 4>, t_scale_layout = #blockscale.scale_layout<col_major, align = 4>}
// CHECK: blockscale.quantize %{{.*}} {layout = #blockscale.layout<col_major>, recipe = #blockscale.recipe<blk_128x128>, scale_layout = #blockscale.scale_layout<col_major, align = 4>}
// CHECK: blockscale.matmul %[[G]][%[[GS]]], {{.*}}form = #blockscale.form<dgrad>
// CHECK: blockscale.quantize %{{.*}} {layout = #blockscale.layout<col_major>, recipe = #blockscale.recipe<blk_128x1>, scale_layout = #blockscale.scale_layout<row_major, align = 4>}
// CHECK: blockscale.matmul %[[GT]][%[[GTS]]], {{.*}}b_scale_layout = #blockscale.scale_layout<row_major, align = 4>{{.*}}form = #blockscale.form<wgrad>
func.func @linear_bwd(%dy: tensor<8192x2112xbf16>, %x: tensor<8192x7168xbf16>, %w: tensor<2112x7168xbf16>)
    -> (tensor<8192x7168xbf16>, tensor<2112x7168xf32>) {
  %gq, %gs = blockscale.quantize %dy {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<8192x2112xbf16> -> tensor<8192x2112xf8E4M3FN>, tensor<8192x17xf32>
  %wtq, %wts = blockscale.quantize %w {recipe = #blockscale.recipe<blk_128x128>,
                                       layout = #blockscale.layout<col_major>}
      : tensor<2112x7168xbf16> -> tensor<2112x7168xf8E4M3FN>, tensor<17x56xf32>
  %dx = blockscale.matmul %gq[%gs], %wtq[%wts] {form = #blockscale.form<dgrad>,
          a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<8192x2112xf8E4M3FN>, tensor<8192x17xf32>, tensor<2112x7168xf8E4M3FN>, tensor<17x56xf32> -> tensor<8192x7168xbf16>
  %gtq, %gts = blockscale.quantize %dy {recipe = #blockscale.recipe<blk_1x128>, transpose}
      : tensor<8192x2112xbf16> -> tensor<2112x8192xf8E4M3FN>, tensor<2112x64xf32>
  %xq, %xs = blockscale.quantize %x {recipe = #blockscale.recipe<blk_128x1>,
                                     layout = #blockscale.layout<col_major>}
      : tensor<8192x7168xbf16> -> tensor<8192x7168xf8E4M3FN>, tensor<64x7168xf32>
  %dw = blockscale.matmul %gtq[%gts], %xq[%xs] {form = #blockscale.form<wgrad>,
          a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x1>}
      : tensor<2112x8192xf8E4M3FN>, tensor<2112x64xf32>, tensor<8192x7168xf8E4M3FN>, tensor<64x7168xf32> -> tensor<2112x7168xf32>
  return %dx, %dw : tensor<8192x7168xbf16>, tensor<2112x7168xf32>
}

// Forward and grad-input of one step in one function: the weight's two
// casts (the forward's B in input order, grad-input's B transposed) become
// one dual cast.
// CHECK-LABEL: func.func @linear_step
// CHECK: %[[WQ:.*]], %[[WS:.*]], %[[WT:.*]], %[[WTS:.*]] = blockscale.quantize_dual %{{.*}} {layout = #blockscale.layout<col_major>, recipe = #blockscale.recipe<blk_128x128>, scale_layout = #blockscale.scale_layout<col_major, align = 4>, t_scale_layout = #blockscale.scale_layout<col_major, align = 4>, transpose}
// CHECK: blockscale.matmul %{{.*}}, %[[WQ]][%[[WS]]] {{.*}}form = #blockscale.form<fwd>{{.*}}tile = #blockscale.tile<
// CHECK: blockscale.matmul %{{.*}}, %[[WT]][%[[WTS]]] {{.*}}form = #blockscale.form<dgrad>{{.*}}tile = #blockscale.tile<
func.func @linear_step(%x: tensor<8192x7168xbf16>, %w: tensor<2112x7168xbf16>, %dy: tensor<8192x2112xbf16>)
    -> (tensor<8192x2112xbf16>, tensor<8192x7168xbf16>) {
  %xq, %xs = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<8192x7168xbf16> -> tensor<8192x7168xf8E4M3FN>, tensor<8192x56xf32>
  %wq, %ws = blockscale.quantize %w {recipe = #blockscale.recipe<blk_128x128>, transpose,
                                     layout = #blockscale.layout<col_major>}
      : tensor<2112x7168xbf16> -> tensor<7168x2112xf8E4M3FN>, tensor<56x17xf32>
  %y = blockscale.matmul %xq[%xs], %wq[%ws] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<8192x7168xf8E4M3FN>, tensor<8192x56xf32>, tensor<7168x2112xf8E4M3FN>, tensor<56x17xf32> -> tensor<8192x2112xbf16>
  %gq, %gs = blockscale.quantize %dy {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<8192x2112xbf16> -> tensor<8192x2112xf8E4M3FN>, tensor<8192x17xf32>
  %wtq, %wts = blockscale.quantize %w {recipe = #blockscale.recipe<blk_128x128>,
                                       layout = #blockscale.layout<col_major>}
      : tensor<2112x7168xbf16> -> tensor<2112x7168xf8E4M3FN>, tensor<17x56xf32>
  %dx = blockscale.matmul %gq[%gs], %wtq[%wts] {form = #blockscale.form<dgrad>,
          a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<8192x2112xf8E4M3FN>, tensor<8192x17xf32>, tensor<2112x7168xf8E4M3FN>, tensor<17x56xf32> -> tensor<8192x7168xbf16>
  return %y, %dx : tensor<8192x2112xbf16>, tensor<8192x7168xbf16>
}
