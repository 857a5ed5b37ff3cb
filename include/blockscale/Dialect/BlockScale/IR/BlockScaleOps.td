//===- BlockScaleOps.td - blockscale operations ------------*- tablegen -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKSCALE_DIALECT_BLOCKSCALE_IR_OPS_TD
#define BLOCKSCALE_DIALECT_BLOCKSCALE_IR_OPS_TD

include "blockscale/Dialect/BlockScale/IR/BlockScaleBase.td"
include "blockscale/Dialect/BlockScale/IR/BlockScaleAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def BlockScale_FP8Tensor2D : TensorRankOf<[F8E4M3FN, F8E5M2], [2]>;
def BlockScale_ScaleTensor : TensorOf<[F32]>;

//===----------------------------------------------------------------------===//
// QuantizeOp
//===----------------------------------------------------------------------===//

def BlockScale_QuantizeOp : BlockScale_Op<"quantize", [Pure]> {
  let summary = "Quantize a 2-D tensor to FP8 with blockwise decode scales";
  let description = [{
    Computes, for every block of the (optionally transposed) input, the f32
    decode scale `s = max(amax, 1e-12) / fp8_max` and the FP8 values
    `q = rne_satfinite(x * (fp8_max / max(amax, 1e-12)))`. A partial block at
    a tail uses the amax of its valid elements.

    The input is a row-major `(R, C)` tensor. The logical result has shape
    `(R, C)`, or `(C, R)` with `transpose`; `recipe` is relative to the
    logical result and `layout` is the physical order of the result. So the
    kernel writes the data transposed exactly when `transpose` and
    `layout = col_major` differ, and the matmul kernels can consume the
    result without any copy. `scale_layout` is the physical layout of the
    scales (set by `--blockscale-pad-scales` when absent). Two casts of one
    tensor that differ only in `transpose` can share one read of the input
    as a `blockscale.quantize_dual`.

    The three activation casts and two weight casts of the FP8 recipe:

    ```mlir
    // LHS activations, 1x128 along K.
    %xq, %xs = blockscale.quantize %x {recipe = #blockscale.recipe<blk_1x128>}
        : tensor<4096x7168xbf16> -> tensor<4096x7168xf8E4M3FN>, tensor<4096x56xf32>
    // Weight W (N, K) as the forward B operand (K, N), K-contiguous.
    %wq, %ws = blockscale.quantize %w {recipe = #blockscale.recipe<blk_128x128>,
                                        transpose, layout = #blockscale.layout<col_major>}
        : tensor<2112x7168xbf16> -> tensor<7168x2112xf8E4M3FN>, tensor<56x17xf32>
    // dY^T as the grad-weight A operand (1x128 along tokens).
    %gq, %gs = blockscale.quantize %dy {recipe = #blockscale.recipe<blk_1x128>, transpose}
        : tensor<8192x4096xbf16> -> tensor<4096x8192xf8E4M3FN>, tensor<4096x64xf32>
    ```
  }];
  let arguments = (ins
    TensorRankOf<[BF16, F16, F32], [2]>:$input,
    BlockScale_ScaleRecipeAttr:$recipe,
    DefaultValuedAttr<BlockScale_LayoutAttr,
                      "::mlir::blockscale::Layout::row_major">:$layout,
    UnitAttr:$transpose,
    OptionalAttr<BlockScale_ScaleLayoutAttr>:$scale_layout);
  let results = (outs BlockScale_FP8Tensor2D:$result,
                      BlockScale_ScaleTensor:$scale);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($result) `,` type($scale)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// True when the kernel must write the input's transpose physically.
    bool writesTransposed() {
      return getTranspose() != (getLayout() == Layout::col_major);
    }
  }];
}

//===----------------------------------------------------------------------===//
// QuantizeDualOp
//===----------------------------------------------------------------------===//

def BlockScale_QuantizeDualOp : BlockScale_Op<"quantize_dual", [Pure]> {
  let summary = "Quantize a 2-D tensor to FP8 in two layouts from one read";
  let description = [{
    The two casts of one tensor that a training step needs, from a single
    read of the input: `result, scale` are
    `blockscale.quantize %input {recipe, layout, transpose}` and
    `t_result, t_scale` are the same cast with `transpose` negated
    (`quantize(input, recipe, layout, !transpose)`), both with the math and
    the shape, type and scale-shape rules of `blockscale.quantize`.
    `scale_layout` and `t_scale_layout` are the physical layouts of the two
    scale tensors (set by `--blockscale-pad-scales` when absent).

    The kernel reads a tile of the input once and writes `result` in input
    order and `t_result` physically transposed, so:

    * `result` must be written in input order (`transpose` and
      `layout = col_major` agree); `t_result` is then the transposed one;
    * `result`'s blocks, seen in the input's frame, must be 1x128 or
      128x128 (those of `t_result` are then 128x1 or 128x128 of the input);
    * both results have the same FP8 element type.

    `--blockscale-fuse-dual-quantize` forms these ops from pairs of
    `blockscale.quantize`. The two tensors a training step casts twice:

    ```mlir
    // dY for grad-input (1x128 along N) and dY^T for grad-weight (1x128
    // along tokens).
    %gq, %gs, %gtq, %gts = blockscale.quantize_dual %dy {recipe = #blockscale.recipe<blk_1x128>}
        : tensor<8192x4096xbf16> -> tensor<8192x4096xf8E4M3FN>, tensor<8192x32xf32>,
                                    tensor<4096x8192xf8E4M3FN>, tensor<4096x64xf32>
    // W (N, K) as the forward B operand (K, N) and as the grad-input B
    // operand (N, K), both K-contiguous.
    %wq, %ws, %wtq, %wts = blockscale.quantize_dual %w {recipe = #blockscale.recipe<blk_128x128>,
                                                        transpose, layout = #blockscale.layout<col_major>}
        : tensor<2112x7168xbf16> -> tensor<7168x2112xf8E4M3FN>, tensor<56x17xf32>,
                                    tensor<2112x7168xf8E4M3FN>, tensor<17x56xf32>
    ```
  }];
  let arguments = (ins
    TensorRankOf<[BF16, F16, F32], [2]>:$input,
    BlockScale_ScaleRecipeAttr:$recipe,
    DefaultValuedAttr<BlockScale_LayoutAttr,
                      "::mlir::blockscale::Layout::row_major">:$layout,
    UnitAttr:$transpose,
    OptionalAttr<BlockScale_ScaleLayoutAttr>:$scale_layout,
    OptionalAttr<BlockScale_ScaleLayoutAttr>:$t_scale_layout);
  let results = (outs BlockScale_FP8Tensor2D:$result,
                      BlockScale_ScaleTensor:$scale,
                      BlockScale_FP8Tensor2D:$t_result,
                      BlockScale_ScaleTensor:$t_scale);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($result) `,` type($scale) `,`
    type($t_result) `,` type($t_scale)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// True when the kernel must write `result` physically transposed
    /// (never, for a verified op).
    bool writesTransposed() {
      return getTranspose() != (getLayout() == Layout::col_major);
    }
    /// True when the kernel must write `t_result` physically transposed
    /// (always, for a verified op).
    bool writesTransposedT() { return !writesTransposed(); }
    /// `result`'s scale block (rows, cols) in the input's frame: the
    /// recipe's block, swapped with `transpose`; {0, 0} for tensorwise.
    std::pair<int64_t, int64_t> getInputFrameBlock();
  }];
}

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

def BlockScale_MatmulOp : BlockScale_Op<"matmul", [Pure]> {
  let summary = "Blockwise-scaled FP8 matrix multiplication";
  let description = [{
    `C(M, N) = sum_kb (A[:, kb] @ B[kb, :]) * sA * sB`, accumulated in f32 with
    one scale per 128-deep K-block, written as bf16 or f32. With an `acc`
    operand the product is added to it (`C = acc + A @ B`, f32 only; the
    grad-weight accumulation of training).

    Supported recipe pairs are the three training GEMMs of the DeepSeek-V3
    FP8 recipe:

    | form            | A         | B           | scales of B      |
    |-----------------|-----------|-------------|------------------|
    | `fwd`, `dgrad`  | `1x128`   | `128x128`   | `(ceil(K/128), ceil(N/128))` |
    | `wgrad`         | `1x128`   | `128x1`     | `(ceil(K/128), N)` |

    and the scales of A are `(M, ceil(K/128))`. `a_layout`/`b_layout` are the
    physical orders of the logical `(M, K)` and `(K, N)` operands (the
    kernels need both K-contiguous: `row_major` A, `col_major` B; checked by
    `--blockscale-verify-layouts`). `lda`/`ldb`/`ldc` are optional physical
    leading dimensions in elements when rows are padded. `tile` is filled in
    by `--blockscale-select-tiles`.

    ```mlir
    %c = blockscale.matmul %a[%as], %b[%bs] {
           form = #blockscale.form<fwd>,
           a_recipe = #blockscale.recipe<blk_1x128>,
           b_recipe = #blockscale.recipe<blk_128x128>}
        : tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>,
          tensor<7168x2112xf8E4M3FN>, tensor<56x17xf32> -> tensor<?x2112xbf16>
    ```
  }];
  let arguments = (ins
    BlockScale_FP8Tensor2D:$a,
    BlockScale_ScaleTensor:$a_scale,
    BlockScale_FP8Tensor2D:$b,
    BlockScale_ScaleTensor:$b_scale,
    Optional<TensorRankOf<[BF16, F32], [2]>>:$acc,
    BlockScale_GemmFormAttr:$form,
    BlockScale_ScaleRecipeAttr:$a_recipe,
    BlockScale_ScaleRecipeAttr:$b_recipe,
    DefaultValuedAttr<BlockScale_LayoutAttr,
                      "::mlir::blockscale::Layout::row_major">:$a_layout,
    DefaultValuedAttr<BlockScale_LayoutAttr,
                      "::mlir::blockscale::Layout::col_major">:$b_layout,
    OptionalAttr<BlockScale_ScaleLayoutAttr>:$a_scale_layout,
    OptionalAttr<BlockScale_ScaleLayoutAttr>:$b_scale_layout,
    OptionalAttr<I64Attr>:$lda,
    OptionalAttr<I64Attr>:$ldb,
    OptionalAttr<I64Attr>:$ldc,
    OptionalAttr<BlockScale_TileConfigAttr>:$tile);
  let results = (outs TensorRankOf<[BF16, F32], [2]>:$c);
  let assemblyFormat = [{
    $a `[` $a_scale `]` `,` $b `[` $b_scale `]` (`acc` `(` $acc^ `:` type($acc) `)`)?
    attr-dict `:` type($a) `,` type($a_scale) `,` type($b) `,` type($b_scale)
    `->` type($c)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Logical sizes; ShapedType::kDynamic when unknown.
    int64_t getM() { return getA().getType().getDimSize(0); }
    int64_t getN() { return getB().getType().getDimSize(1); }
    int64_t getK() { return getA().getType().getDimSize(1); }
  }];
}

//===----------------------------------------------------------------------===//
// GroupedMatmulOp
//===----------------------------------------------------------------------===//

def BlockScale_GroupedMatmulOp : BlockScale_Op<"grouped_matmul", [Pure]> {
  let summary = "Blockwise-scaled FP8 matmul of G groups of rows, each with its own B";
  let description = [{
    The routed experts of a mixture-of-experts layer (forward and dgrad):
    group `g`'s rows of A are multiplied by `B[g]` with the recipe of the
    dense forward matmul (A `1x128`, every `B[g]` `128x128`, f32
    accumulation with one promotion per 128-deep K-block), written as bf16
    or f32. `groups` is a device tensor of G `i32`, read only by the
    kernel, so no host synchronization is needed:

    | grouping       | A, its scales                 | `groups`                          | C             |
    |----------------|-------------------------------|-----------------------------------|---------------|
    | `m_contiguous` | `(M, K)`, `(M, ceil(K/128))`  | cumulative end offsets of the groups' rows (`torch._scaled_grouped_mm`'s `offs`) | `(M, N)` |
    | `m_masked`     | `(G, Mmax, K)`, `(G, Mmax, ceil(K/128))` | valid rows per group, each at most `Mmax` | `(G, Mmax, N)` |

    B is `(G, K, N)` with scales `(G, ceil(K/128), ceil(N/128))`; its
    `b_layout` is the physical order of each group's `(K, N)` matrix, as for
    `blockscale.matmul` (the kernels need `col_major`: K-contiguous). Group
    sizes are arbitrary (0 and sizes that are not multiples of 128
    included); rows of C that belong to no group (past the last offset, or
    past a group's count) are not written. `tile` is filled in by
    `--blockscale-select-tiles`.

    ```mlir
    %c = blockscale.grouped_matmul %a[%as], %b[%bs] groups(%offs : tensor<8xi32>)
           {grouping = #blockscale.grouping<m_contiguous>}
        : tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>,
          tensor<8x7168x4096xf8E4M3FN>, tensor<8x56x32xf32> -> tensor<?x4096xbf16>
    ```
  }];
  let arguments = (ins
    TensorOf<[F8E4M3FN, F8E5M2]>:$a,
    BlockScale_ScaleTensor:$a_scale,
    TensorRankOf<[F8E4M3FN, F8E5M2], [3]>:$b,
    BlockScale_ScaleTensor:$b_scale,
    TensorRankOf<[I32], [1]>:$groups,
    BlockScale_GroupingAttr:$grouping,
    DefaultValuedAttr<BlockScale_LayoutAttr,
                      "::mlir::blockscale::Layout::row_major">:$a_layout,
    DefaultValuedAttr<BlockScale_LayoutAttr,
                      "::mlir::blockscale::Layout::col_major">:$b_layout,
    OptionalAttr<BlockScale_TileConfigAttr>:$tile);
  let results = (outs TensorOf<[BF16, F32]>:$c);
  let assemblyFormat = [{
    $a `[` $a_scale `]` `,` $b `[` $b_scale `]`
    `groups` `(` $groups `:` type($groups) `)`
    attr-dict `:` type($a) `,` type($a_scale) `,` type($b) `,` type($b_scale)
    `->` type($c)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Logical sizes; ShapedType::kDynamic when unknown. M is the rows of
    /// A in total (contiguous) or per group (masked).
    int64_t getNumGroups() { return getB().getType().getDimSize(0); }
    int64_t getN() { return getB().getType().getDimSize(2); }
    int64_t getK() { return getB().getType().getDimSize(1); }
  }];
}

//===----------------------------------------------------------------------===//
// QuantizeGroupedTokensOp
//===----------------------------------------------------------------------===//

def BlockScale_QuantizeGroupedTokensOp
    : BlockScale_Op<"quantize_grouped_tokens", [Pure]> {
  let summary = "Group-aware transposed FP8 cast of token-sorted rows";
  let description = [{
    The cast that feeds `blockscale.grouped_matmul_k`: `input` is `x`
    `(T, C)` with its T tokens sorted by group, `offsets` the G cumulative
    end offsets of the groups' tokens (device `i32`, read only by the
    kernel). `result` is `x^T` as `(C, capacity)` FP8, row-major (tokens
    contiguous), with group `g`'s tokens starting at padded token
    `128 * b_g`, `b_g = sum_{i<g} ceil(size_i / 128)`, and zeros past the
    group's end in its last block: every 128-token block belongs to one
    group, which the k-grouped GEMM's K loop needs. `scale` holds one f32
    decode scale per row of `result` per 128-token block (1x128 blocks of
    `result`), `(C, capacity / 128)`; `scale_layout` is its physical layout
    (set by `--blockscale-pad-scales`: `col_major`, C contiguous, as the
    kernel writes it).

    `capacity = round_up(T, 128) + 128 G` holds any split of the tokens, so
    it follows from the shapes alone; a larger multiple of 128 is allowed.
    It is a separate op rather than a form of `blockscale.quantize`, whose
    result shape and scales follow from the input's shape alone: here they
    depend on the group count and on an operand.

    ```mlir
    %q, %s = blockscale.quantize_grouped_tokens %dy offsets(%offs : tensor<8xi32>)
        : tensor<8192x4096xbf16> -> tensor<4096x9216xf8E4M3FN>, tensor<4096x72xf32>
    ```
  }];
  let arguments = (ins
    AnyTensor:$input,
    AnyTensor:$offsets,
    OptionalAttr<BlockScale_ScaleLayoutAttr>:$scale_layout);
  let results = (outs AnyTensor:$result, AnyTensor:$scale);
  let assemblyFormat = [{
    $input `offsets` `(` $offsets `:` type($offsets) `)` attr-dict `:`
    type($input) `->` type($result) `,` type($scale)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Number of groups: the offsets' extent (static on a verified op).
    int64_t getNumGroups() {
      return cast<RankedTensorType>(getOffsets().getType()).getDimSize(0);
    }
  }];
}

//===----------------------------------------------------------------------===//
// GroupedMatmulKOp
//===----------------------------------------------------------------------===//

def BlockScale_GroupedMatmulKOp : BlockScale_Op<"grouped_matmul_k", [Pure]> {
  let summary = "k-grouped FP8 matmul: one product per group of tokens (MoE weight gradient)";
  let description = [{
    The weight gradient of a mixture-of-experts layer: group `g` owns the
    tokens `[offsets[g-1], offsets[g])` and
    `C[g] (M, N) = dY[tokens of g]^T X[tokens of g]`, with the dense weight
    gradient's recipe along tokens (dY^T 1x128, X 128x1), f32 accumulation
    with one promotion per 128-token block, written as bf16 or f32. With an
    `acc` operand the products are added to it (`C = acc + ...`, f32 only).

    | operand   | shape                       | what |
    |-----------|-----------------------------|------|
    | `a`       | `(M, capacity)` FP8         | dY^T as `blockscale.quantize_grouped_tokens` writes it |
    | `a_scale` | `(M, capacity / 128)` f32   | 1x128 blocks of `a` along tokens |
    | `b`       | `(N, capacity)` FP8         | X^T, likewise |
    | `b_scale` | `(N, capacity / 128)` f32   | 1x128 blocks of `b` (128x1 of X) |
    | `offsets` | `(G)` i32                   | cumulative end offsets of the groups' tokens |
    | `c`       | `(G, M, N)` bf16 or f32     | one product per group |

    Both operands are the group-padded, token-contiguous tensors of the
    group-aware cast (every group from a multiple of 128 tokens; `capacity`
    a multiple of 128 and at least 128 G), and their scales are stored
    rows-contiguous (`col_major`, the `(capacity / 128, M)` and
    `(capacity / 128, N)` buffers of the runtime). Every element of C is
    written: a group without tokens gets zeros (or `acc`).

    A sibling of `blockscale.grouped_matmul` rather than a third grouping
    of it: that op multiplies groups of rows by per-group weights (B rank
    3, 128x128 scales, C shaped like A), while here the groups split the
    reduction, both operands are shared 2-D tensors with per-token scales,
    C gains a group dimension and there is an accumulator; a shared op
    would make every operand's rank and recipe depend on an attribute.
    `tile` is filled in by `--blockscale-select-tiles` (the runtime
    family's rule: 128x128, as many stages as fit).

    ```mlir
    %dw = blockscale.grouped_matmul_k %gq[%gs], %xq[%xs] offsets(%offs : tensor<8xi32>)
        : tensor<4096x9216xf8E4M3FN>, tensor<4096x72xf32>,
          tensor<7168x9216xf8E4M3FN>, tensor<7168x72xf32> -> tensor<8x4096x7168xf32>
    ```
  }];
  let arguments = (ins
    AnyTensor:$a,
    AnyTensor:$a_scale,
    AnyTensor:$b,
    AnyTensor:$b_scale,
    AnyTensor:$offsets,
    Optional<AnyTensor>:$acc,
    OptionalAttr<BlockScale_TileConfigAttr>:$tile);
  let results = (outs AnyTensor:$c);
  let assemblyFormat = [{
    $a `[` $a_scale `]` `,` $b `[` $b_scale `]`
    `offsets` `(` $offsets `:` type($offsets) `)`
    (`acc` `(` $acc^ `:` type($acc) `)`)?
    attr-dict `:` type($a) `,` type($a_scale) `,` type($b) `,` type($b_scale)
    `->` type($c)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Sizes of a verified op; M, N and G are static, the capacity may be
    /// ShapedType::kDynamic.
    int64_t getNumGroups() {
      return cast<RankedTensorType>(getOffsets().getType()).getDimSize(0);
    }
    int64_t getM() { return cast<RankedTensorType>(getA().getType()).getDimSize(0); }
    int64_t getN() { return cast<RankedTensorType>(getB().getType()).getDimSize(0); }
    int64_t getCapacity() {
      return cast<RankedTensorType>(getA().getType()).getDimSize(1);
    }
  }];
}

#endif // BLOCKSCALE_DIALECT_BLOCKSCALE_IR_OPS_TD
