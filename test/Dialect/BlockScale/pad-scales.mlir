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
