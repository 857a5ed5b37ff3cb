// RUN: blockscale-opt %s --split-input-file --blockscale-pad-scales --verify-diagnostics | FileCheck %s

// The forward GEMM of a linear layer: both casts get the scale layouts the
// matmul reads, so the cast kernels write padded scales in place.

// CHECK-LABEL: func.func @fwd
func.func @fwd(%x: tensor<4096x7168xbf16>, %w: tensor<2112x7168xbf16>) -> tensor<4096x2112xbf16> {
  // CHECK: %[[XQ:.*]], %[[XS:.*]] = blockscale.quantize %{{.*}} {recipe = #blockscale.recipe<blk_1x128>, scale_layout = #blockscale.scale_layout<col_major, align = 4>}
  %xq, %xs = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<4096x7168xbf16> -> tensor<4096x7168xf8E4M3FN>, tensor<4096x56xf32>
  // CHECK: %[[WQ:.*]], %[[WS:.*]] = blockscale.quantize %{{.*}} {layout = #blockscale.layout<col_major>, recipe = #blockscale.recipe<blk_128x128>, scale_layout = #blockscale.scale_layout<col_major, align = 4>, transpose}
  %wq, %ws = blockscale.quantize %w {recipe = #blockscale.recipe<blk_128x128>, transpose,
                                     layout = #blockscale.layout<col_major>}
      : tensor<2112x7168xbf16> -> tensor<7168x2112xf8E4M3FN>, tensor<56x17xf32>
  // CHECK: blockscale.matmul %[[XQ]][%[[XS]]], %[[WQ]][%[[WS]]]
  // CHECK-SAME: a_scale_layout = #blockscale.scale_layout<col_major, align = 4>
  // CHECK-SAME: b_scale_layout = #blockscale.scale_layout<col_major, align = 4>
  %c = blockscale.matmul %xq[%xs], %wq[%ws] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<4096x7168xf8E4M3FN>, tensor<4096x56xf32>, tensor<7168x2112xf8E4M3FN>, tensor<56x17xf32> -> tensor<4096x2112xbf16>
  return %c : tensor<4096x2112xbf16>
}

// -----

// Grad-weight: 128x1 scales of B are N-contiguous (row_major of (Kb, N)).
// CHECK-LABEL: func.func @wgrad_args
// CHECK: blockscale.matmul
// CHECK-SAME: a_scale_layout = #blockscale.scale_layout<col_major, align = 4>
// CHECK-SAME: b_scale_layout = #blockscale.scale_layout<row_major, align = 4>
func.func @wgrad_args(%g: tensor<4096x8192xf8E4M3FN>, %gs: tensor<4096x64xf32>,
                      %x: tensor<8192x7168xf8E4M3FN>, %xs: tensor<64x7168xf32>) -> tensor<4096x7168xf32> {
  %dw = blockscale.matmul %g[%gs], %x[%xs] {form = #blockscale.form<wgrad>,
          a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x1>}
      : tensor<4096x8192xf8E4M3FN>, tensor<4096x64xf32>, tensor<8192x7168xf8E4M3FN>, tensor<64x7168xf32> -> tensor<4096x7168xf32>
  return %dw : tensor<4096x7168xf32>
}

// -----

// A coarser user padding satisfies the rule and is kept; 128x128 scales may
// be in either order (the kernel reads them through strides).
// CHECK-LABEL: func.func @keeps_user_layouts
// CHECK: a_scale_layout = #blockscale.scale_layout<col_major, align = 16>
// CHECK-SAME: b_scale_layout = #blockscale.scale_layout<row_major>
func.func @keeps_user_layouts(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
                              %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) -> tensor<128x512xbf16> {
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>,
         a_scale_layout = #blockscale.scale_layout<col_major, align = 16>,
         b_scale_layout = #blockscale.scale_layout<row_major>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x512xbf16>
  return %c : tensor<128x512xbf16>
}

// -----

// A quantize that feeds no matmul gets the layout its recipe implies.
// CHECK-LABEL: func.func @standalone_cast
// CHECK: scale_layout = #blockscale.scale_layout<row_major, align = 4>
func.func @standalone_cast(%x: tensor<1024x256xbf16>) -> tensor<8x256xf32> {
  %q, %s = blockscale.quantize %x {recipe = #blockscale.recipe<blk_128x1>}
      : tensor<1024x256xbf16> -> tensor<1024x256xf8E4M3FN>, tensor<8x256xf32>
  return %s : tensor<8x256xf32>
}

// -----

func.func @wrong_user_layout(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>,
                             %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) -> tensor<128x512xbf16> {
  // expected-error @+1 {{expected A scale layout #blockscale.scale_layout<col_major, align = 4> (1x128 scales as the kernel reads them) but got #blockscale.scale_layout<row_major, align = 4>}}
  %c = blockscale.matmul %a[%as], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>,
         a_scale_layout = #blockscale.scale_layout<row_major, align = 4>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x512xbf16>
  return %c : tensor<128x512xbf16>
}

// -----

func.func @producer_conflict(%x: tensor<128x256xbf16>, %b: tensor<256x512xf8E4M3FN>,
                             %bs: tensor<2x4xf32>) -> tensor<128x512xbf16> {
  // expected-note @+1 {{scales produced here}}
  %q, %s = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>,
                                   scale_layout = #blockscale.scale_layout<col_major, align = 8>}
      : tensor<128x256xbf16> -> tensor<128x256xf8E4M3FN>, tensor<128x2xf32>
  // expected-error @+1 {{expected A scales laid out as #blockscale.scale_layout<col_major, align = 16> but the producing quantize writes #blockscale.scale_layout<col_major, align = 8>}}
  %c = blockscale.matmul %q[%s], %b[%bs] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>,
         a_scale_layout = #blockscale.scale_layout<col_major, align = 16>}
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<128x512xbf16>
  return %c : tensor<128x512xbf16>
}

// -----

// A dual cast's two scale results get the layouts of their own consumers:
// dY's as the A of grad-input and dY^T's as the A of grad-weight; the
// weight's as the B of the forward and of grad-input.
// CHECK-LABEL: func.func @dual_casts
// CHECK: blockscale.quantize_dual %{{.*}} {recipe = #blockscale.recipe<blk_1x128>, scale_layout = #blockscale.scale_layout<col_major, align = 4>, t_scale_layout = #blockscale.scale_layout<col_major, align = 4>}
// CHECK: blockscale.quantize_dual %{{.*}} {layout = #blockscale.layout<col_major>, recipe = #blockscale.recipe<blk_128x128>, scale_layout = #blockscale.scale_layout<row_major>, t_scale_layout = #blockscale.scale_layout<col_major, align = 4>, transpose}
// CHECK: blockscale.matmul
// CHECK-SAME: b_scale_layout = #blockscale.scale_layout<row_major>
// CHECK-SAME: form = #blockscale.form<fwd>
// CHECK: blockscale.matmul
// CHECK-SAME: a_scale_layout = #blockscale.scale_layout<col_major, align = 4>
// CHECK-SAME: b_scale_layout = #blockscale.scale_layout<col_major, align = 4>
// CHECK-SAME: form = #blockscale.form<dgrad>
// CHECK: blockscale.matmul
// CHECK-SAME: a_scale_layout = #blockscale.scale_layout<col_major, align = 4>
// CHECK-SAME: form = #blockscale.form<wgrad>
func.func @dual_casts(%dy: tensor<8192x2112xbf16>, %w: tensor<2112x7168xbf16>,
                      %x: tensor<8192x7168xf8E4M3FN>, %xs: tensor<64x7168xf32>,
                      %a: tensor<8192x7168xf8E4M3FN>, %as: tensor<8192x56xf32>)
    -> (tensor<8192x2112xbf16>, tensor<8192x7168xbf16>, tensor<2112x7168xf32>) {
  %g, %gs, %gt, %gts = blockscale.quantize_dual %dy {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<8192x2112xbf16> -> tensor<8192x2112xf8E4M3FN>, tensor<8192x17xf32>, tensor<2112x8192xf8E4M3FN>, tensor<2112x64xf32>
  // The forward's 128x128 B scales in a user's order: any order is read.
  %wq, %ws, %wt, %wts = blockscale.quantize_dual %w {recipe = #blockscale.recipe<blk_128x128>, transpose,
                                                     layout = #blockscale.layout<col_major>}
      : tensor<2112x7168xbf16> -> tensor<7168x2112xf8E4M3FN>, tensor<56x17xf32>, tensor<2112x7168xf8E4M3FN>, tensor<17x56xf32>
  %y = blockscale.matmul %a[%as], %wq[%ws] {form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>,
         b_scale_layout = #blockscale.scale_layout<row_major>}
      : tensor<8192x7168xf8E4M3FN>, tensor<8192x56xf32>, tensor<7168x2112xf8E4M3FN>, tensor<56x17xf32> -> tensor<8192x2112xbf16>
  %dx = blockscale.matmul %g[%gs], %wt[%wts] {form = #blockscale.form<dgrad>,
          a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x128>}
      : tensor<8192x2112xf8E4M3FN>, tensor<8192x17xf32>, tensor<2112x7168xf8E4M3FN>, tensor<17x56xf32> -> tensor<8192x7168xbf16>
  %dw = blockscale.matmul %gt[%gts], %x[%xs] {form = #blockscale.form<wgrad>,
          a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x1>}
      : tensor<2112x8192xf8E4M3FN>, tensor<2112x64xf32>, tensor<8192x7168xf8E4M3FN>, tensor<64x7168xf32> -> tensor<2112x7168xf32>
  return %y, %dx, %dw : tensor<8192x2112xbf16>, tensor<8192x7168xbf16>, tensor<2112x7168xf32>
}

// -----

// A dual cast that feeds no matmul: both scale results get the layout of
// their recipe's role; a layout the user wrote stays.
// CHECK-LABEL: func.func @standalone_dual
// CHECK: blockscale.quantize_dual %{{.*}} {recipe = #blockscale.recipe<blk_1x128>, scale_layout = #blockscale.scale_layout<col_major, align = 4>, t_scale_layout = #blockscale.scale_layout<col_major, align = 4>}
// CHECK: blockscale.quantize_dual %{{.*}} {layout = #blockscale.layout<col_major>, recipe = #blockscale.recipe<blk_128x128>, scale_layout = #blockscale.scale_layout<col_major, align = 4>, t_scale_layout = #blockscale.scale_layout<row_major, align = 16>, transpose}
func.func @standalone_dual(%x: tensor<256x512xbf16>, %w: tensor<256x512xbf16>) -> (tensor<256x4xf32>, tensor<2x4xf32>) {
  %q, %s, %t, %ts = blockscale.quantize_dual %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>, tensor<256x4xf32>, tensor<512x256xf8E4M3FN>, tensor<512x2xf32>
  %wq, %ws, %wt, %wts = blockscale.quantize_dual %w {recipe = #blockscale.recipe<blk_128x128>, transpose,
                                                     layout = #blockscale.layout<col_major>,
                                                     t_scale_layout = #blockscale.scale_layout<row_major, align = 16>}
      : tensor<256x512xbf16> -> tensor<512x256xf8E4M3FN>, tensor<4x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32>
  return %s, %wts : tensor<256x4xf32>, tensor<2x4xf32>
}

// -----

func.func @dual_producer_conflict(%dy: tensor<128x256xbf16>, %b: tensor<128x512xf8E4M3FN>,
                                  %bs: tensor<1x512xf32>) -> tensor<256x512xf32> {
  // expected-note @+1 {{scales produced here}}
  %g, %gs, %gt, %gts = blockscale.quantize_dual %dy {recipe = #blockscale.recipe<blk_1x128>,
                                                     t_scale_layout = #blockscale.scale_layout<col_major, align = 8>}
      : tensor<128x256xbf16> -> tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<256x128xf8E4M3FN>, tensor<256x1xf32>
  // expected-error @+1 {{expected A scales laid out as #blockscale.scale_layout<col_major, align = 16> but the producing quantize writes #blockscale.scale_layout<col_major, align = 8>}}
  %dw = blockscale.matmul %gt[%gts], %b[%bs] {form = #blockscale.form<wgrad>,
          a_recipe = #blockscale.recipe<blk_1x128>, b_recipe = #blockscale.recipe<blk_128x1>,
          a_scale_layout = #blockscale.scale_layout<col_major, align = 16>}
      : tensor<256x128xf8E4M3FN>, tensor<256x1xf32>, tensor<128x512xf8E4M3FN>, tensor<1x512xf32> -> tensor<256x512xf32>
  return %dw : tensor<256x512xf32>
}
