// RUN: blockscale-opt %s --split-input-file --blockscale-pad-scales --verify-diagnostics | FileCheck %s

// The cast feeding a grouped matmul's A writes its scales as the grouped
// kernel reads them (M-contiguous, leading stride a multiple of 4), as for
// the dense matmul.

// CHECK-LABEL: func.func @cast_gets_layout
// CHECK: blockscale.quantize %{{.*}} {recipe = #blockscale.recipe<blk_1x128>, scale_layout = #blockscale.scale_layout<col_major, align = 4>}
func.func @cast_gets_layout(%x: tensor<4096x7168xbf16>, %b: tensor<8x7168x4096xf8E4M3FN>,
                            %bs: tensor<8x56x32xf32>, %offs: tensor<8xi32>) -> tensor<4096x4096xbf16> {
  %q, %s = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<4096x7168xbf16> -> tensor<4096x7168xf8E4M3FN>, tensor<4096x56xf32>
  %c = blockscale.grouped_matmul %q[%s], %b[%bs] groups(%offs : tensor<8xi32>)
         {grouping = #blockscale.grouping<m_contiguous>}
      : tensor<4096x7168xf8E4M3FN>, tensor<4096x56xf32>, tensor<8x7168x4096xf8E4M3FN>, tensor<8x56x32xf32> -> tensor<4096x4096xbf16>
  return %c : tensor<4096x4096xbf16>
}

// -----

func.func @cast_layout_conflicts(%x: tensor<4096x7168xbf16>, %b: tensor<8x7168x4096xf8E4M3FN>,
                                 %bs: tensor<8x56x32xf32>, %offs: tensor<8xi32>) -> tensor<4096x4096xbf16> {
  // expected-note @+1 {{scales produced here}}
  %q, %s = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>,
                                   scale_layout = #blockscale.scale_layout<row_major, align = 1>}
      : tensor<4096x7168xbf16> -> tensor<4096x7168xf8E4M3FN>, tensor<4096x56xf32>
  // expected-error @+1 {{expected A scales laid out as #blockscale.scale_layout<col_major, align = 4> (1x128 scales as the grouped kernel reads them) but the producing quantize writes #blockscale.scale_layout<row_major>}}
  %c = blockscale.grouped_matmul %q[%s], %b[%bs] groups(%offs : tensor<8xi32>)
         {grouping = #blockscale.grouping<m_contiguous>}
      : tensor<4096x7168xf8E4M3FN>, tensor<4096x56xf32>, tensor<8x7168x4096xf8E4M3FN>, tensor<8x56x32xf32> -> tensor<4096x4096xbf16>
  return %c : tensor<4096x4096xbf16>
}

// -----

// The group-aware casts feeding a k-grouped matmul write their scales
// rows-contiguous (the runtime's (capacity / 128, rows) buffers), as the
// k-grouped kernel reads both operands' scales.

// CHECK-LABEL: func.func @grouped_cast_gets_layout
// CHECK-COUNT-2: blockscale.quantize_grouped_tokens %{{.*}} offsets(%{{.*}} : tensor<8xi32>) {scale_layout = #blockscale.scale_layout<col_major, align = 4>}
func.func @grouped_cast_gets_layout(%dy: tensor<?x4096xbf16>, %x: tensor<?x7168xbf16>,
                                    %offs: tensor<8xi32>) -> tensor<8x4096x7168xf32> {
  %gq, %gs = blockscale.quantize_grouped_tokens %dy offsets(%offs : tensor<8xi32>)
      : tensor<?x4096xbf16> -> tensor<4096x?xf8E4M3FN>, tensor<4096x?xf32>
  %xq, %xs = blockscale.quantize_grouped_tokens %x offsets(%offs : tensor<8xi32>)
      : tensor<?x7168xbf16> -> tensor<7168x?xf8E4M3FN>, tensor<7168x?xf32>
  %c = blockscale.grouped_matmul_k %gq[%gs], %xq[%xs] offsets(%offs : tensor<8xi32>)
      : tensor<4096x?xf8E4M3FN>, tensor<4096x?xf32>, tensor<7168x?xf8E4M3FN>, tensor<7168x?xf32> -> tensor<8x4096x7168xf32>
  return %c : tensor<8x4096x7168xf32>
}

// -----

// A coarser alignment of the same order stands.
// CHECK-LABEL: func.func @grouped_cast_coarser_layout
// CHECK: {scale_layout = #blockscale.scale_layout<col_major, align = 16>}
func.func @grouped_cast_coarser_layout(%x: tensor<?x7168xbf16>, %offs: tensor<8xi32>)
    -> (tensor<7168x?xf8E4M3FN>, tensor<7168x?xf32>) {
  %xq, %xs = blockscale.quantize_grouped_tokens %x offsets(%offs : tensor<8xi32>)
      {scale_layout = #blockscale.scale_layout<col_major, align = 16>}
      : tensor<?x7168xbf16> -> tensor<7168x?xf8E4M3FN>, tensor<7168x?xf32>
  return %xq, %xs : tensor<7168x?xf8E4M3FN>, tensor<7168x?xf32>
}

// -----

func.func @grouped_cast_layout_conflicts(%x: tensor<?x7168xbf16>, %offs: tensor<8xi32>)
    -> (tensor<7168x?xf8E4M3FN>, tensor<7168x?xf32>) {
  // expected-error @+1 {{expected scale_layout #blockscale.scale_layout<col_major, align = 4> (the group-aware cast writes its scales rows-contiguous, as the k-grouped kernel reads them) but got #blockscale.scale_layout<row_major, align = 4>}}
  %xq, %xs = blockscale.quantize_grouped_tokens %x offsets(%offs : tensor<8xi32>)
      {scale_layout = #blockscale.scale_layout<row_major, align = 4>}
      : tensor<?x7168xbf16> -> tensor<7168x?xf8E4M3FN>, tensor<7168x?xf32>
  return %xq, %xs : tensor<7168x?xf8E4M3FN>, tensor<7168x?xf32>
}
