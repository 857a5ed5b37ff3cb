// RUN: blockscale-opt %s --split-input-file --blockscale-select-tiles --verify-diagnostics | FileCheck %s
// RUN: blockscale-opt %s --split-input-file --blockscale-select-tiles="m-hint=8192" --verify-diagnostics | FileCheck %s --check-prefix=HINT
// RUN: blockscale-opt %s --split-input-file --blockscale-select-tiles="force=bn=192,stages=2" --verify-diagnostics | FileCheck %s --check-prefix=FORCE
// RUN: not blockscale-opt %s --split-input-file --blockscale-select-tiles="force=bm=128,splits=2" 2>&1 | FileCheck %s --check-prefix=SPLIT

// A k-grouped matmul takes the runtime family's tile (GroupedGemmFamily's
// rule, shared) for its tokens per group: the capacity less each group's
// padding block, or, with a dynamic capacity, m-hint's tokens over the
// groups, else 4096 per group as the runtime plans them. f32 output over
// more than 1024 tokens per group takes 128x192, else 128x128; as many
// stages as the shared memory holds for the output type (the f32 epilogue
// leaves fewer than bf16). A forced tile may set bm, bn, stages and raster.

// CHECK-LABEL: func.func @kgrouped_f32
// CHECK: tile = #blockscale.tile<bm = 128, bn = 192, bk = 128, stages = 3, cluster = 1, swizzle = 128, splits = 1, raster = 8>
// HINT-LABEL: func.func @kgrouped_f32
// HINT: tile = #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 4, cluster = 1, swizzle = 128, splits = 1, raster = 8>
// FORCE-LABEL: func.func @kgrouped_f32
// FORCE: tile = #blockscale.tile<bm = 128, bn = 192, bk = 128, stages = 2, cluster = 1, swizzle = 128, splits = 1, raster = 8>
func.func @kgrouped_f32(%a: tensor<4096x?xf8E4M3FN>, %as: tensor<4096x?xf32>,
                        %b: tensor<7168x?xf8E4M3FN>, %bs: tensor<7168x?xf32>,
                        %offs: tensor<8xi32>) -> tensor<8x4096x7168xf32> {
  // SPLIT: error: 'blockscale.grouped_matmul_k' op expected a forced tile for a k-grouped matmul with bm, bn and stages only (its kernel has no split-K and no clusters) but got 'bm=128,splits=2'
  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%offs : tensor<8xi32>)
      : tensor<4096x?xf8E4M3FN>, tensor<4096x?xf32>, tensor<7168x?xf8E4M3FN>, tensor<7168x?xf32> -> tensor<8x4096x7168xf32>
  return %c : tensor<8x4096x7168xf32>
}

// -----

// CHECK-LABEL: func.func @kgrouped_bf16
// CHECK: tile = #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 5, cluster = 1, swizzle = 128, splits = 1, raster = 8>
func.func @kgrouped_bf16(%a: tensor<2048x9216xf8E4M3FN>, %as: tensor<2048x72xf32>,
                         %b: tensor<1024x9216xf8E4M3FN>, %bs: tensor<1024x72xf32>,
                         %offs: tensor<8xi32>) -> tensor<8x2048x1024xbf16> {
  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%offs : tensor<8xi32>)
      : tensor<2048x9216xf8E4M3FN>, tensor<2048x72xf32>, tensor<1024x9216xf8E4M3FN>, tensor<1024x72xf32> -> tensor<8x2048x1024xbf16>
  return %c : tensor<8x2048x1024xbf16>
}

// -----

// A tile already there stands.
// CHECK-LABEL: func.func @kgrouped_kept
// CHECK: tile = #blockscale.tile<bm = 64, bn = 64, bk = 128, stages = 2, cluster = 1, swizzle = 128, splits = 1, raster = 4>
func.func @kgrouped_kept(%a: tensor<4096x?xf8E4M3FN>, %as: tensor<4096x?xf32>,
                         %b: tensor<7168x?xf8E4M3FN>, %bs: tensor<7168x?xf32>,
                         %offs: tensor<8xi32>, %acc: tensor<8x4096x7168xf32>) -> tensor<8x4096x7168xf32> {
  %c = blockscale.grouped_matmul_k %a[%as], %b[%bs] offsets(%offs : tensor<8xi32>) acc(%acc : tensor<8x4096x7168xf32>)
      {tile = #blockscale.tile<bm = 64, bn = 64, bk = 128, stages = 2, cluster = 1, swizzle = 128, splits = 1, raster = 4>}
      : tensor<4096x?xf8E4M3FN>, tensor<4096x?xf32>, tensor<7168x?xf8E4M3FN>, tensor<7168x?xf32> -> tensor<8x4096x7168xf32>
  return %c : tensor<8x4096x7168xf32>
}
