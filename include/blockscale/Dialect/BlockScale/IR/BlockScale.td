//===- BlockScale.td - everything in the blockscale dialect -*- tablegen -*-===//
#ifndef BLOCKSCALE_DIALECT_BLOCKSCALE_IR_TD
#define BLOCKSCALE_DIALECT_BLOCKSCALE_IR_TD
include "blockscale/Dialect/BlockScale/IR/BlockScaleBase.td"
include "blockscale/Dialect/BlockScale/IR/BlockScaleEnums.td"
include "blockscale/Dialect/BlockScale/IR/BlockScaleAttrs.td"
include "blockscale/Dialect/BlockScale/IR/BlockScaleOps.td"
#endif
