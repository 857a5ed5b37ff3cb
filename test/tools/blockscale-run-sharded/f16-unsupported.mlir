// RUN: not blockscale-run-sharded %s --simulate --check 2>&1 | FileCheck %s
// RUN: blockscale-run-sharded %s --plan-only | FileCheck %s --check-prefix=PLAN

// The runner's host side (random inputs, reference, --simulate) converts
// FP8, bf16 and f32 only: an f16 program is refused before any GPU work,
// while planning it is fine.
// CHECK: blockscale-run-sharded: error: f16 tensors are not supported by blockscale-run-sharded (its host side converts FP8, bf16 and f32); use bf16
// PLAN: // plan
func.func @cast(%x: tensor<256x512xf16>) -> (tensor<256x512xf8E4M3FN>, tensor<256x4xf32>) {
  %q, %qs = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>}
      : tensor<256x512xf16> -> tensor<256x512xf8E4M3FN>, tensor<256x4xf32>
  return %q, %qs : tensor<256x512xf8E4M3FN>, tensor<256x4xf32>
}
