// RUN: blockscale-opt %s --split-input-file --blockscale-select-tiles="m-hint=4096" | FileCheck %s
// RUN: blockscale-opt %s --split-input-file --blockscale-select-tiles | FileCheck %s --check-prefix=DEFAULT
// RUN: blockscale-opt %s --split-input-file --blockscale-select-tiles="force=bm=256" | FileCheck %s --check-prefix=BM256
// RUN: not blockscale-opt %s --split-input-file --blockscale-select-tiles="force=bm=128,bn=144,cluster=2" 2>&1 | FileCheck %s --check-prefix=ODD

// An m-grouped matmul takes the runtime family's rule
// (GroupedGemmFamily::defaultTile): groups of 512 rows (m-hint = 4096 rows
// over 8 groups) in 128 x 192 tiles in CTA pairs, which need an even count
// of N tiles; with an odd count (N = 4416: 23 tiles of 192) the 128 x 128
// tile, one CTA each. Without m-hint, dynamic rows are planned as the
// runtime plans them (GroupedGemmFamily::rowsPerGroup: 4096 per group), in
// 256 x 128 tiles. A forced bm of 256 alone takes bn = 128 (the kernel has
// no 256 x 192 tile).

// CHECK-LABEL: func.func @pairs
// CHECK: tile = #blockscale.tile<bm = 128, bn = 192, bk = 128, stages = 4, cluster = 2, swizzle = 128, splits = 1, raster = 8>
// DEFAULT-LABEL: func.func @pairs
// DEFAULT: tile = #blockscale.tile<bm = 256, bn = 128, bk = 128, stages = 3, cluster = 1, swizzle = 128, splits = 1, raster = 8>
// BM256-LABEL: func.func @pairs
// BM256: tile = #blockscale.tile<bm = 256, bn = 128, bk = 128, stages = 3, cluster = 1, swizzle = 128, splits = 1, raster = 8>
// ODD: error: 'blockscale.grouped_matmul' op expected an even count of N tiles for CTA pairs (cluster = 2) but got N = 4096 in 29 tiles of bn = 144; force cluster=1 or a bn that splits N into an even count
func.func @pairs(%a: tensor<?x7168xf8E4M3FN>, %as: tensor<?x56xf32>,
                 %b: tensor<8x7168x4096xf8E4M3FN>, %bs: tensor<8x56x32xf32>,
                 %offs: tensor<8xi32>) -> tensor<?x4096xbf16> {
  %c = blockscale.grouped_matmul %a[%as], %b[%bs] groups(%offs : tensor<8xi32>)
         {grouping = #blockscale.grouping<m_contiguous>}
      : tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<8x7168x4096xf8E4M3FN>, tensor<8x56x32xf32> -> tensor<?x4096xbf16>
  return %c : tensor<?x4096xbf16>
}

// -----

// CHECK-LABEL: func.func @odd_n_tiles
// CHECK: tile = #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 5, cluster = 1, swizzle = 128, splits = 1, raster = 8>
// BM256-LABEL: func.func @odd_n_tiles
// BM256: tile = #blockscale.tile<bm = 256, bn = 128, bk = 128, stages = 3, cluster = 1,
func.func @odd_n_tiles(%a: tensor<?x7168xf8E4M3FN>, %as: tensor<?x56xf32>,
                       %b: tensor<8x7168x4416xf8E4M3FN>, %bs: tensor<8x56x35xf32>,
                       %offs: tensor<8xi32>) -> tensor<?x4416xbf16> {
  %c = blockscale.grouped_matmul %a[%as], %b[%bs] groups(%offs : tensor<8xi32>)
         {grouping = #blockscale.grouping<m_contiguous>}
      : tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<8x7168x4416xf8E4M3FN>, tensor<8x56x35xf32> -> tensor<?x4416xbf16>
  return %c : tensor<?x4416xbf16>
}
