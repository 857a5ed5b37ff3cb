// RUN: blockscale-translate %s --split-input-file --verify-diagnostics --blockscale-emit-cuda
// RUN: not blockscale-opt %s --split-input-file --blockscale-select-tiles="force=bm=128,bn=128,splits=2" 2>&1 | FileCheck %s --check-prefix=FORCE
// RUN: not blockscale-opt %s --split-input-file --blockscale-select-tiles="force=bm=128,bn=144,cluster=2" 2>&1 | FileCheck %s --check-prefix=PAIRS

// A grouped matmul is never skipped: without a tile, or with one the
// grouped kernel cannot run, the translation fails naming the fix.

func.func @no_tile(%a: tensor<?x7168xf8E4M3FN>, %as: tensor<?x56xf32>,
                   %b: tensor<8x7168x4096xf8E4M3FN>, %bs: tensor<8x56x32xf32>,
                   %offs: tensor<8xi32>) -> tensor<?x4096xbf16> {
  // expected-error @+1 {{expected a tile attribute but got none; run --blockscale-select-tiles (or --blockscale-jit-pipeline) first}}
  %c = blockscale.grouped_matmul %a[%as], %b[%bs] groups(%offs : tensor<8xi32>)
         {grouping = #blockscale.grouping<m_contiguous>}
      : tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<8x7168x4096xf8E4M3FN>, tensor<8x56x32xf32> -> tensor<?x4096xbf16>
  return %c : tensor<?x4096xbf16>
}

// -----

func.func @cluster(%a: tensor<?x7168xf8E4M3FN>, %as: tensor<?x56xf32>,
                   %b: tensor<8x7168x4096xf8E4M3FN>, %bs: tensor<8x56x32xf32>,
                   %offs: tensor<8xi32>) -> tensor<?x4096xbf16> {
  // expected-error @+1 {{grouped GEMM: expected cluster = 1, or 2 (CTA pairs) for an m-grouped kernel with bm = 128 or 256, but got cluster = 2 with bm = 64}}
  %c = blockscale.grouped_matmul %a[%as], %b[%bs] groups(%offs : tensor<8xi32>)
         {grouping = #blockscale.grouping<m_contiguous>,
          tile = #blockscale.tile<bm = 64, bn = 128, bk = 128, stages = 4, cluster = 2,
                                  swizzle = 128, splits = 1, raster = 8>}
      : tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<8x7168x4096xf8E4M3FN>, tensor<8x56x32xf32> -> tensor<?x4096xbf16>
  return %c : tensor<?x4096xbf16>
}

// -----

func.func @stages(%a: tensor<?x7168xf8E4M3FN>, %as: tensor<?x56xf32>,
                  %b: tensor<8x7168x4096xf8E4M3FN>, %bs: tensor<8x56x32xf32>,
                  %offs: tensor<8xi32>) -> tensor<?x4096xbf16> {
  // expected-error @+1 {{grouped GEMM: expected 2 <= stages <= 5 for bm = 128, bn = 128 (shared memory) but got stages = 9}}
  %c = blockscale.grouped_matmul %a[%as], %b[%bs] groups(%offs : tensor<8xi32>)
         {grouping = #blockscale.grouping<m_contiguous>,
          tile = #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 9, cluster = 1,
                                  swizzle = 128, splits = 1, raster = 8>}
      : tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<8x7168x4096xf8E4M3FN>, tensor<8x56x32xf32> -> tensor<?x4096xbf16>
  return %c : tensor<?x4096xbf16>
}

// FORCE: error: 'blockscale.grouped_matmul' op expected a forced tile for a grouped matmul with bm, bn, stages and cluster (1 or 2) only (its kernel has no split-K) but got 'bm=128,bn=128,splits=2'

// N = 4096 in tiles of 144 columns is 29 tiles: no CTA pairs.
// PAIRS: error: 'blockscale.grouped_matmul' op expected an even count of N tiles for CTA pairs (cluster = 2) but got N = 4096 in 29 tiles of bn = 144; force cluster=1 or a bn that splits N into an even count
