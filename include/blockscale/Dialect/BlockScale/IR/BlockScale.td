//===- BlockScale.td - everything in the blockscale dialect -*- tablegen -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_DIALECT_BLOCKSCALE_IR_TD
#define BLOCKSCALE_DIALECT_BLOCKSCALE_IR_TD
include "blockscale/Dialect/BlockScale/IR/BlockScaleBase.td"
include "blockscale/Dialect/BlockScale/IR/BlockScaleEnums.td"
include "blockscale/Dialect/BlockScale/IR/BlockScaleAttrs.td"
include "blockscale/Dialect/BlockScale/IR/BlockScaleOps.td"
#endif
