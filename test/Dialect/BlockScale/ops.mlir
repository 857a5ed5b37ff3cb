// RUN: blockscale-opt %s | blockscale-opt | FileCheck %s
// RUN: blockscale-opt %s --mlir-print-op-generic | blockscale-opt | FileCheck %s

// Every op and attribute of the dialect round-trips through its custom and
// its generic form.

// CHECK-LABEL: func.func @quantize_forms
// CHECK-SAME: (%[[X:.*]]: tensor<4096x7168xbf16>, %[[W:.*]]: tensor<2112x7168xbf16>, %[[DY:.*]]: tensor<?x4096xf32>)
func.func @quantize_forms(%x: tensor<4096x7168xbf16>, %w: tensor<2112x7168xbf16>, %dy: tensor<?x4096xf32>)
    -> (tensor<4096x7168xf8E4M3FN>, tensor<7168x2112xf8E4M3FN>, tensor<4096x?xf8E5M2>, tensor<2112x7168xf8E4M3FN>) {
  // CHECK: %[[Q0:.*]], %[[S0:.*]] = blockscale.quantize %[[X]] {recipe = #blockscale.recipe<blk_1x128>, scale_layout = #blockscale.scale_layout<col_major, align = 4>}
  // CHECK-SAME: : tensor<4096x7168xbf16> -> tensor<4096x7168xf8E4M3FN>, tensor<4096x56xf32>
  %q0, %s0 = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>,
                                     scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<4096x7168xbf16> -> tensor<4096x7168xf8E4M3FN>, tensor<4096x56xf32>
  // CHECK: blockscale.quantize %[[W]] {layout = #blockscale.layout<col_major>, recipe = #blockscale.recipe<blk_128x128>, transpose}
  // CHECK-SAME: -> tensor<7168x2112xf8E4M3FN>, tensor<56x17xf32>
  %q1, %s1 = blockscale.quantize %w {recipe = #blockscale.recipe<blk_128x128>, transpose,
                                     layout = #blockscale.layout<col_major>}
      : tensor<2112x7168xbf16> -> tensor<7168x2112xf8E4M3FN>, tensor<56x17xf32>
  // Dynamic token count, transposed 1x128 (dY^T), e5m2.
  // CHECK: blockscale.quantize %[[DY]] {recipe = #blockscale.recipe<blk_1x128>, transpose}
  // CHECK-SAME: : tensor<?x4096xf32> -> tensor<4096x?xf8E5M2>, tensor<4096x?xf32>
  %q2, %s2 = blockscale.quantize %dy {recipe = #blockscale.recipe<blk_1x128>, transpose}
      : tensor<?x4096xf32> -> tensor<4096x?xf8E5M2>, tensor<4096x?xf32>
  // Tensorwise: one scalar scale.
  // CHECK: blockscale.quantize %[[W]] {recipe = #blockscale.recipe<tensorwise>}
  // CHECK-SAME: -> tensor<2112x7168xf8E4M3FN>, tensor<f32>
  %q3, %s3 = blockscale.quantize %w {recipe = #blockscale.recipe<tensorwise>}
      : tensor<2112x7168xbf16> -> tensor<2112x7168xf8E4M3FN>, tensor<f32>
  return %q0, %q1, %q2, %q3 : tensor<4096x7168xf8E4M3FN>, tensor<7168x2112xf8E4M3FN>, tensor<4096x?xf8E5M2>, tensor<2112x7168xf8E4M3FN>
}

// The two casts of dY and of the weight as dual casts: the in-order result
// first, then its transpose; e5m2 and a dynamic token count.
// CHECK-LABEL: func.func @quantize_dual_forms
// CHECK-SAME: (%[[DY:.*]]: tensor<?x4096xbf16>, %[[W:.*]]: tensor<2112x7168xbf16>)
func.func @quantize_dual_forms(%dy: tensor<?x4096xbf16>, %w: tensor<2112x7168xbf16>)
    -> (tensor<?x4096xf8E5M2>, tensor<4096x?xf32>, tensor<7168x2112xf8E4M3FN>, tensor<17x56xf32>) {
  // CHECK: %{{.*}}, %{{.*}}, %[[GT:.*]], %[[GTS:.*]] = blockscale.quantize_dual %[[DY]] {recipe = #blockscale.recipe<blk_1x128>, scale_layout = #blockscale.scale_layout<col_major, align = 4>, t_scale_layout = #blockscale.scale_layout<col_major, align = 4>}
  // CHECK-SAME: : tensor<?x4096xbf16> -> tensor<?x4096xf8E5M2>, tensor<?x32xf32>, tensor<4096x?xf8E5M2>, tensor<4096x?xf32>
  %g, %gs, %gt, %gts = blockscale.quantize_dual %dy {recipe = #blockscale.recipe<blk_1x128>,
                                                     scale_layout = #blockscale.scale_layout<col_major, align = 4>,
                                                     t_scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<?x4096xbf16> -> tensor<?x4096xf8E5M2>, tensor<?x32xf32>, tensor<4096x?xf8E5M2>, tensor<4096x?xf32>
  // CHECK: %[[WQ:.*]], %{{.*}}, %{{.*}}, %[[WTS:.*]] = blockscale.quantize_dual %[[W]] {layout = #blockscale.layout<col_major>, recipe = #blockscale.recipe<blk_128x128>, transpose}
  // CHECK-SAME: : tensor<2112x7168xbf16> -> tensor<7168x2112xf8E4M3FN>, tensor<56x17xf32>, tensor<2112x7168xf8E4M3FN>, tensor<17x56xf32>
  %wq, %ws, %wt, %wts = blockscale.quantize_dual %w {recipe = #blockscale.recipe<blk_128x128>, transpose,
                                                     layout = #blockscale.layout<col_major>}
      : tensor<2112x7168xbf16> -> tensor<7168x2112xf8E4M3FN>, tensor<56x17xf32>, tensor<2112x7168xf8E4M3FN>, tensor<17x56xf32>
  // CHECK: return %{{.*}}, %[[GTS]], %[[WQ]], %[[WTS]]
  return %g, %gts, %wq, %wts : tensor<?x4096xf8E5M2>, tensor<4096x?xf32>, tensor<7168x2112xf8E4M3FN>, tensor<17x56xf32>
}

// CHECK-LABEL: func.func @matmul_forms
func.func @matmul_forms(%a: tensor<?x7168xf8E4M3FN>, %as: tensor<?x56xf32>,
                        %b: tensor<7168x2112xf8E4M3FN>, %bs: tensor<56x17xf32>,
                        %g: tensor<4096x8192xf8E4M3FN>, %gs: tensor<4096x64xf32>,
                        %x: tensor<8192x7168xf8E5M2>, %xs: tensor<64x7168xf32>,
                        %acc: tensor<4096x7168xf32>)
    -> (tensor<?x2112xbf16>, tensor<4096x7168xf32>, tensor<4096x7168xf32>) {
  // CHECK: %[[C:.*]] = blockscale.matmul %{{.*}}[%{{.*}}], %{{.*}}[%{{.*}}]
  // CHECK-SAME: a_recipe = #blockscale.recipe<blk_1x128>
  // CHECK-SAME: b_recipe = #blockscale.recipe<blk_128x128>
  // CHECK-SAME: form = #blockscale.form<fwd>
  // CHECK-SAME: tile = #blockscale.tile<bm = 128, bn = 192, bk = 128, stages = 4, cluster = 1, swizzle = 128, splits = 1, raster = 8>
  // CHECK-SAME: -> tensor<?x2112xbf16>
  %c = blockscale.matmul %a[%as], %b[%bs] {
         form = #blockscale.form<fwd>,
         a_recipe = #blockscale.recipe<blk_1x128>,
         b_recipe = #blockscale.recipe<blk_128x128>,
         tile = #blockscale.tile<bm = 128, bn = 192, bk = 128, stages = 4, cluster = 1,
                                 swizzle = 128, splits = 1, raster = 8>}
      : tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<7168x2112xf8E4M3FN>, tensor<56x17xf32>
        -> tensor<?x2112xbf16>
  // Grad-weight, f32 out, B in e5m2 with 128x1 scales, explicit strides.
  // CHECK: blockscale.matmul %{{.*}}, %{{.*}}[%{{.*}}]
  // CHECK-SAME: b_recipe = #blockscale.recipe<blk_128x1>
  // CHECK-SAME: b_scale_layout = #blockscale.scale_layout<row_major, align = 8>
  // CHECK-SAME: form = #blockscale.form<wgrad>
  // CHECK-SAME: lda = 8192 : i64
  %dw = blockscale.matmul %g[%gs], %x[%xs] {
          form = #blockscale.form<wgrad>,
          a_recipe = #blockscale.recipe<blk_1x128>,
          b_recipe = #blockscale.recipe<blk_128x1>,
          b_scale_layout = #blockscale.scale_layout<row_major, align = 8>,
          lda = 8192 : i64}
      : tensor<4096x8192xf8E4M3FN>, tensor<4096x64xf32>, tensor<8192x7168xf8E5M2>, tensor<64x7168xf32>
        -> tensor<4096x7168xf32>
  // Accumulating grad-weight: C = acc + A @ B.
  // CHECK: blockscale.matmul %{{.*}}[%{{.*}}], %{{.*}}[%{{.*}}] acc(%{{.*}} : tensor<4096x7168xf32>)
  %dw2 = blockscale.matmul %g[%gs], %x[%xs] acc(%acc : tensor<4096x7168xf32>) {
          form = #blockscale.form<wgrad>,
          a_recipe = #blockscale.recipe<blk_1x128>,
          b_recipe = #blockscale.recipe<blk_128x1>}
      : tensor<4096x8192xf8E4M3FN>, tensor<4096x64xf32>, tensor<8192x7168xf8E5M2>, tensor<64x7168xf32>
        -> tensor<4096x7168xf32>
  return %c, %dw, %dw2 : tensor<?x2112xbf16>, tensor<4096x7168xf32>, tensor<4096x7168xf32>
}

// ksplit (splits summed in a cluster) is printed only when it is not 1.
// CHECK-LABEL: func.func @ksplit_attr
// CHECK: test.attrs = [#blockscale.tile<bm = 128, bn = 64, bk = 128, stages = 8, cluster = 1, swizzle = 128, splits = 4, raster = 8, ksplit = 4>, #blockscale.tile<bm = 128, bn = 64, bk = 128, stages = 8, cluster = 1, swizzle = 128, splits = 4, raster = 8>]
func.func @ksplit_attr() attributes {test.attrs = [
    #blockscale.tile<bm = 128, bn = 64, bk = 128, stages = 8, cluster = 1, swizzle = 128, splits = 4, raster = 8, ksplit = 4>,
    #blockscale.tile<bm = 128, bn = 64, bk = 128, stages = 8, cluster = 1, swizzle = 128, splits = 4, raster = 8, ksplit = 1>]} {
  return
}

// The form enum's other value and the stand-alone attribute syntax.
// CHECK-LABEL: func.func @attrs
// CHECK: test.attrs = [#blockscale.form<dgrad>, #blockscale.fp8<e5m2>, #blockscale.layout<row_major>, #blockscale.scale_layout<row_major>, #blockscale.tile<bm = 64, bn = 16, bk = 128, stages = 8, cluster = 2, swizzle = 128, splits = 4, raster = 1>]
func.func @attrs() attributes {test.attrs = [#blockscale.form<dgrad>, #blockscale.fp8<e5m2>,
    #blockscale.layout<row_major>, #blockscale.scale_layout<row_major, align = 1>,
    #blockscale.tile<bm = 64, bn = 16, bk = 128, stages = 8, cluster = 2, swizzle = 128, splits = 4, raster = 1>]} {
  return
}

// CHECK-LABEL: func.func @grouped_matmul_forms
func.func @grouped_matmul_forms(%a: tensor<?x7168xf8E4M3FN>, %as: tensor<?x56xf32>,
                                %b: tensor<8x7168x4096xf8E4M3FN>, %bs: tensor<8x56x32xf32>,
                                %offs: tensor<8xi32>,
                                %am: tensor<8x192x7168xf8E4M3FN>, %ams: tensor<8x192x56xf32>)
    -> (tensor<?x4096xbf16>, tensor<8x192x4096xf32>) {
  // CHECK: blockscale.grouped_matmul %{{.*}}[%{{.*}}], %{{.*}}[%{{.*}}] groups(%{{.*}} : tensor<8xi32>) {grouping = #blockscale.grouping<m_contiguous>}
  // CHECK-SAME: : tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<8x7168x4096xf8E4M3FN>, tensor<8x56x32xf32> -> tensor<?x4096xbf16>
  %c0 = blockscale.grouped_matmul %a[%as], %b[%bs] groups(%offs : tensor<8xi32>)
          {grouping = #blockscale.grouping<m_contiguous>}
      : tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<8x7168x4096xf8E4M3FN>, tensor<8x56x32xf32> -> tensor<?x4096xbf16>
  // CHECK: blockscale.grouped_matmul {{.*}} {grouping = #blockscale.grouping<m_masked>, tile = #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 6, cluster = 1, swizzle = 128, splits = 1, raster = 8>}
  // CHECK-SAME: -> tensor<8x192x4096xf32>
  %c1 = blockscale.grouped_matmul %am[%ams], %b[%bs] groups(%offs : tensor<8xi32>)
          {grouping = #blockscale.grouping<m_masked>,
           tile = #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 6, cluster = 1,
                                   swizzle = 128, splits = 1, raster = 8>}
      : tensor<8x192x7168xf8E4M3FN>, tensor<8x192x56xf32>, tensor<8x7168x4096xf8E4M3FN>, tensor<8x56x32xf32> -> tensor<8x192x4096xf32>
  return %c0, %c1 : tensor<?x4096xbf16>, tensor<8x192x4096xf32>
}

// CHECK-LABEL: func.func @grouped_matmul_k_forms
func.func @grouped_matmul_k_forms(%dy: tensor<?x4096xbf16>, %x: tensor<?x7168xbf16>,
                                  %offs: tensor<8xi32>, %acc: tensor<8x4096x7168xf32>)
    -> (tensor<8x4096x7168xbf16>, tensor<8x4096x7168xf32>) {
  // CHECK: blockscale.quantize_grouped_tokens %{{.*}} offsets(%{{.*}} : tensor<8xi32>)
  // CHECK-SAME: : tensor<?x4096xbf16> -> tensor<4096x?xf8E4M3FN>, tensor<4096x?xf32>
  %gq, %gs = blockscale.quantize_grouped_tokens %dy offsets(%offs : tensor<8xi32>)
      : tensor<?x4096xbf16> -> tensor<4096x?xf8E4M3FN>, tensor<4096x?xf32>
  // CHECK: blockscale.quantize_grouped_tokens %{{.*}} offsets(%{{.*}} : tensor<8xi32>) {scale_layout = #blockscale.scale_layout<col_major, align = 4>}
  // CHECK-SAME: : tensor<?x7168xbf16> -> tensor<7168x?xf8E5M2>, tensor<7168x?xf32>
  %xq, %xs = blockscale.quantize_grouped_tokens %x offsets(%offs : tensor<8xi32>)
      {scale_layout = #blockscale.scale_layout<col_major, align = 4>}
      : tensor<?x7168xbf16> -> tensor<7168x?xf8E5M2>, tensor<7168x?xf32>
  // CHECK: blockscale.grouped_matmul_k %{{.*}}[%{{.*}}], %{{.*}}[%{{.*}}] offsets(%{{.*}} : tensor<8xi32>)
  // CHECK-SAME: : tensor<4096x?xf8E4M3FN>, tensor<4096x?xf32>, tensor<7168x?xf8E5M2>, tensor<7168x?xf32> -> tensor<8x4096x7168xbf16>
  %c0 = blockscale.grouped_matmul_k %gq[%gs], %xq[%xs] offsets(%offs : tensor<8xi32>)
      : tensor<4096x?xf8E4M3FN>, tensor<4096x?xf32>, tensor<7168x?xf8E5M2>, tensor<7168x?xf32> -> tensor<8x4096x7168xbf16>
  // CHECK: blockscale.grouped_matmul_k {{.*}} offsets(%{{.*}} : tensor<8xi32>) acc(%{{.*}} : tensor<8x4096x7168xf32>)
  // CHECK-SAME: {tile = #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 4, cluster = 1, swizzle = 128, splits = 1, raster = 8>}
  // CHECK-SAME: -> tensor<8x4096x7168xf32>
  %c1 = blockscale.grouped_matmul_k %gq[%gs], %xq[%xs] offsets(%offs : tensor<8xi32>)
          acc(%acc : tensor<8x4096x7168xf32>)
          {tile = #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 4, cluster = 1,
                                   swizzle = 128, splits = 1, raster = 8>}
      : tensor<4096x?xf8E4M3FN>, tensor<4096x?xf32>, tensor<7168x?xf8E5M2>, tensor<7168x?xf32> -> tensor<8x4096x7168xf32>
  return %c0, %c1 : tensor<8x4096x7168xbf16>, tensor<8x4096x7168xf32>
}
