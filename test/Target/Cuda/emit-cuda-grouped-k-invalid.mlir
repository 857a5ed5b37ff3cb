// RUN: blockscale-translate %s --split-input-file --verify-diagnostics --blockscale-emit-cuda

// A k-grouped matmul or group-aware cast is never skipped: without a tile,
// with a ring deeper than shared memory holds, or with a width the cast cannot read,
// the translation fails naming the fix.

func.func @no_tile(%a: tensor<4096x?xf8E4M3FN>, %as: tensor<4096x?xf32>,
                   %b: tensor<7168x?xf8E4M3FN>, %bs: tensor<7168x?xf32>,
                   %offs: tensor<8xi32>) -> tensor<8x4096x7168xf32> {
  // expected-error @+1 {{expected a tile attribute but got none; run --blockscale-select-tiles (or --blockscale-jit-pipeline) first}}
  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%offs : tensor<8xi32>)
      : tensor<4096x?xf8E4M3FN>, tensor<4096x?xf32>, tensor<7168x?xf8E4M3FN>, tensor<7168x?xf32> -> tensor<8x4096x7168xf32>
  return %c : tensor<8x4096x7168xf32>
}

// -----

func.func @deep_ring(%a: tensor<4096x?xf8E4M3FN>, %as: tensor<4096x?xf32>,
                     %b: tensor<7168x?xf8E4M3FN>, %bs: tensor<7168x?xf32>,
                     %offs: tensor<8xi32>) -> tensor<8x4096x7168xf32> {
  // expected-error @+1 {{grouped GEMM: expected 2 <= stages <= 4 for bm = 128, bn = 128 (shared memory) but got stages = 9}}
  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%offs : tensor<8xi32>)
      {tile = #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 9, cluster = 1, swizzle = 128, splits = 1, raster = 8>}
      : tensor<4096x?xf8E4M3FN>, tensor<4096x?xf32>, tensor<7168x?xf8E4M3FN>, tensor<7168x?xf32> -> tensor<8x4096x7168xf32>
  return %c : tensor<8x4096x7168xf32>
}

// -----

func.func @cast_without_layout(%x: tensor<?x7168xbf16>, %offs: tensor<8xi32>)
    -> (tensor<7168x?xf8E4M3FN>, tensor<7168x?xf32>) {
  // expected-error @+1 {{expected a scale_layout but got none; run --blockscale-pad-scales}}
  %xq, %xs = blockscale.quantize_grouped_tokens %x offsets(%offs : tensor<8xi32>)
      : tensor<?x7168xbf16> -> tensor<7168x?xf8E4M3FN>, tensor<7168x?xf32>
  return %xq, %xs : tensor<7168x?xf8E4M3FN>, tensor<7168x?xf32>
}
