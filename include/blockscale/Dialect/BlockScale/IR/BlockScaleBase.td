//===- BlockScaleBase.td - blockscale dialect definition ---*- tablegen -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The `blockscale` dialect: blockwise-scaled FP8 quantization and matrix
// multiplication in the DeepSeek-V3 recipe, as consumed by Hopper kernels.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKSCALE_DIALECT_BLOCKSCALE_IR_BASE_TD
#define BLOCKSCALE_DIALECT_BLOCKSCALE_IR_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def BlockScale_Dialect : Dialect {
  let name = "blockscale";
  let cppNamespace = "::mlir::blockscale";
  let summary = "Blockwise-scaled FP8 quantization and matmul for Hopper";
  let description = [{
    The `blockscale` dialect describes FP8 training GEMMs with blockwise
    scaling as used by the DeepSeek-V3 recipe:

    * `blockscale.quantize` turns a bf16/f32 tensor into an FP8 tensor plus
      f32 *decode* scales (`amax / fp8_max`, amax clamped at 1e-12), one
      scale per block of `1x128`, `128x1` or `128x128` elements (or one for
      the whole tensor, `tensorwise`). `blockscale.quantize_dual` writes
      two such casts of one tensor, in input order and transposed, from one
      read of it.
    * `blockscale.matmul` computes `C = sum_kb (A_kb @ B_kb) * sA * sB` with
      f32 accumulation, for the three training GEMMs: forward and
      grad-input (`1x128 x 128x128`) and grad-weight (`1x128 x 128x1`).

    Shapes are *logical*: `A` is `(M, K)`, `B` is `(K, N)`, `C` is `(M, N)`.
    Physical order is carried by layout attributes so that the compiler can
    check it against what the kernels need; it never inserts copies.
    The scales of an operand with logical shape `(R, C)` and blocks of
    `br x bc` elements have logical shape `(ceil(R/br), ceil(C/bc))`.
  }];
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

class BlockScale_Op<string mnemonic, list<Trait> traits = []>
    : Op<BlockScale_Dialect, mnemonic, traits>;

class BlockScale_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<BlockScale_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

#endif // BLOCKSCALE_DIALECT_BLOCKSCALE_IR_BASE_TD
