//===- BlockScaleEnums.td - blockscale enums ---------------*- tablegen -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKSCALE_DIALECT_BLOCKSCALE_IR_ENUMS_TD
#define BLOCKSCALE_DIALECT_BLOCKSCALE_IR_ENUMS_TD

include "mlir/IR/EnumAttr.td"

// Block shapes are written rows x columns of the logical tensor the scales
// belong to. Keywords cannot start with a digit, hence the `blk_` prefix.
def BlockScale_ScaleRecipe : I32EnumAttr<"ScaleRecipe",
    "granularity of the decode scales", [
      I32EnumAttrCase<"blk_1x128", 0>,
      I32EnumAttrCase<"blk_128x128", 1>,
      I32EnumAttrCase<"blk_128x1", 2>,
      I32EnumAttrCase<"tensorwise", 3>
    ]> {
  let cppNamespace = "::mlir::blockscale";
  let genSpecializedAttr = 0;
}

def BlockScale_Layout : I32EnumAttr<"Layout",
    "physical order of a 2-D tensor", [
      I32EnumAttrCase<"row_major", 0>,
      I32EnumAttrCase<"col_major", 1>
    ]> {
  let cppNamespace = "::mlir::blockscale";
  let genSpecializedAttr = 0;
}

def BlockScale_FP8Format : I32EnumAttr<"FP8Format",
    "8-bit floating-point encoding", [
      I32EnumAttrCase<"e4m3fn", 0>,
      I32EnumAttrCase<"e5m2", 1>
    ]> {
  let cppNamespace = "::mlir::blockscale";
  let genSpecializedAttr = 0;
}

def BlockScale_GemmForm : I32EnumAttr<"GemmForm",
    "which training GEMM a matmul is", [
      I32EnumAttrCase<"fwd", 0>,
      I32EnumAttrCase<"dgrad", 1>,
      I32EnumAttrCase<"wgrad", 2>
    ]> {
  let cppNamespace = "::mlir::blockscale";
  let genSpecializedAttr = 0;
}

// How a grouped (mixture-of-experts) matmul's rows are split among the
// experts. Both forms give every group its own B; they differ in where a
// group's rows of A and C live and how many there are.
def BlockScale_Grouping : I32EnumAttr<"Grouping",
    "how a grouped matmul splits its rows among groups", [
      I32EnumAttrCase<"m_contiguous", 0>,
      I32EnumAttrCase<"m_masked", 1>
    ]> {
  let cppNamespace = "::mlir::blockscale";
  let genSpecializedAttr = 0;
}

#endif // BLOCKSCALE_DIALECT_BLOCKSCALE_IR_ENUMS_TD
