//===- BlockScaleAttrs.td - blockscale attributes ----------*- tablegen -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKSCALE_DIALECT_BLOCKSCALE_IR_ATTRS_TD
#define BLOCKSCALE_DIALECT_BLOCKSCALE_IR_ATTRS_TD

include "blockscale/Dialect/BlockScale/IR/BlockScaleBase.td"
include "blockscale/Dialect/BlockScale/IR/BlockScaleEnums.td"

def BlockScale_ScaleRecipeAttr
    : EnumAttr<BlockScale_Dialect, BlockScale_ScaleRecipe, "recipe"> {
  let summary = "Scale granularity, e.g. `#blockscale.recipe<blk_1x128>`";
  let assemblyFormat = "`<` $value `>`";
}

def BlockScale_LayoutAttr
    : EnumAttr<BlockScale_Dialect, BlockScale_Layout, "layout"> {
  let summary = "Physical order, e.g. `#blockscale.layout<col_major>`";
  let assemblyFormat = "`<` $value `>`";
}

def BlockScale_FP8FormatAttr
    : EnumAttr<BlockScale_Dialect, BlockScale_FP8Format, "fp8"> {
  let summary = "FP8 encoding, e.g. `#blockscale.fp8<e4m3fn>`";
  let assemblyFormat = "`<` $value `>`";
}

def BlockScale_GemmFormAttr
    : EnumAttr<BlockScale_Dialect, BlockScale_GemmForm, "form"> {
  let summary = "Training GEMM, e.g. `#blockscale.form<wgrad>`";
  let assemblyFormat = "`<` $value `>`";
}

def BlockScale_GroupingAttr
    : EnumAttr<BlockScale_Dialect, BlockScale_Grouping, "grouping"> {
  let summary = "Row split of a grouped matmul, e.g. `#blockscale.grouping<m_masked>`";
  let assemblyFormat = "`<` $value `>`";
}

def BlockScale_ScaleLayoutAttr : BlockScale_Attr<"ScaleLayout", "scale_layout"> {
  let summary = "Physical layout of a scale tensor";
  let description = [{
    `order` says which logical dimension of the scale tensor is contiguous;
    the stride of the other (the *leading stride*) is the contiguous extent
    rounded up to a multiple of `align` elements. Kernels and libraries
    have rules here: TMA needs 16-byte strides (`align = 4` for f32), and
    cuBLASLt wants 128x128 scales K-major with the K-block stride rounded up
    to 4. `--blockscale-pad-scales` fills these in.

    ```mlir
    #blockscale.scale_layout<col_major, align = 4>
    ```
  }];
  let parameters = (ins EnumParameter<BlockScale_Layout>:$order,
                        DefaultValuedParameter<"int64_t", "1">:$align);
  let assemblyFormat = "`<` $order (`,` `align` `=` $align^)? `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Leading stride in elements of a 2-D scale tensor with logical
    /// `shape`: ShapedType::kDynamic when the contiguous dimension is
    /// dynamic, -1 when `shape` is not 2-D or the padded stride does not fit
    /// in int64.
    int64_t getLeadingStride(ArrayRef<int64_t> shape) const;
    /// Number of elements the padded buffer holds: ShapedType::kDynamic
    /// when a dimension is dynamic, -1 when the elements or their f32 bytes
    /// do not fit in int64.
    int64_t getAllocatedElements(ArrayRef<int64_t> shape) const;
  }];
}

def BlockScale_TileConfigAttr : BlockScale_Attr<"TileConfig", "tile"> {
  let summary = "Kernel tile configuration chosen by --blockscale-select-tiles";
  let description = [{
    One CTA computes a `bm x bn` tile of C (split `splits` ways along K),
    streaming `bk`-deep slices of A and B through a `stages`-deep TMA /
    mbarrier ring in shared memory that is swizzled at `swizzle` bytes.
    `cluster` CTAs form a thread-block cluster that shares A, and `raster`
    is the width of the L2-friendly tile rasterization group. With
    `ksplit = splits` (2 to 8) the splits of a tile are instead the CTAs of
    one cluster, which sum their partials through distributed shared memory;
    with the default `ksplit = 1` (not printed) split-K partials go through a
    global workspace.

    ```mlir
    #blockscale.tile<bm = 128, bn = 128, bk = 128, stages = 5, cluster = 1,
                     swizzle = 128, splits = 1, raster = 8>
    #blockscale.tile<bm = 128, bn = 64, bk = 128, stages = 8, cluster = 1,
                     swizzle = 128, splits = 4, raster = 8, ksplit = 4>
    ```
  }];
  let parameters = (ins "int64_t":$bm, "int64_t":$bn, "int64_t":$bk,
                        "int64_t":$stages, "int64_t":$cluster,
                        "int64_t":$swizzle, "int64_t":$splits,
                        "int64_t":$raster,
                        DefaultValuedParameter<"int64_t", "1">:$ksplit);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // BLOCKSCALE_DIALECT_BLOCKSCALE_IR_ATTRS_TD
