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
