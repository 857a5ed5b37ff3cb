# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The expert linear of a mixture-of-experts layer in FP8, forward and backward.

``grouped_expert_linear(x, w, offs)`` is y[tokens of g] = x[tokens of g] @
w[g].T for tokens sorted by expert (offs (G,) int32 cumulative token ends on
the device, as grouped_mm's), with the DeepSeek-V3 recipe in all three
GEMMs:

  forward  y  = x @ W_g^T      x 1x128, W_g 128x128        grouped_mm
  backward dx = dy @ W_g       dy 1x128, W_g^T 128x128      grouped_mm
           dW_g = dy_g^T x_g   dy^T 1x128, x 128x1 along    grouped_mm_k
                               each group's tokens

The weight is read and cast once per step: when x needs a gradient,
quantize_grouped_weight_dual writes W_g and W_g^T from one read of w and the
backward reuses W_g^T; otherwise only W_g is cast. No step synchronizes with
the host. Every token must belong to a group
(offs[-1] = tokens): rows of y and dx past offs[-1] are left unwritten.
"""
import torch
from torch import Tensor

from . import ops
from .grouped import (grouped_mm, grouped_mm_k, quantize_grouped_tokens,
                      quantize_grouped_weight, quantize_grouped_weight_dual)


def _rows(t):
    # Autograd may hand a non-contiguous gradient; the casts read rows.
    return t if t.is_contiguous() else t.contiguous()


class _GroupedExpertLinearFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, offs):
        if x.dim() != 2 or w.dim() != 3 or x.shape[1] != w.shape[2]:
            raise ValueError(f"blockscale.grouped_expert_linear: expected x (T, K) and w "
                             f"(G, N, K) but got {tuple(x.shape)} and {tuple(w.shape)}")
        out_dtype = x.dtype if x.dtype in (torch.bfloat16, torch.float32) else torch.bfloat16
        x = _rows(x)
        xq, xs = ops.quantize(x, "1x128")
        wtq = wts = None
        if ctx.needs_input_grad[0]:
            # W_g^T (K, N) row-major, the grad-input GEMM's b, from the same
            # read of w (same 128x128 blocks, transposed).
            wq, ws, wtq, wts = quantize_grouped_weight_dual(_rows(w))
        else:
            wq, ws = quantize_grouped_weight(_rows(w))
        y = grouped_mm(xq, xs, wq, ws, offs, out_dtype)
        ctx.save_for_backward(x, offs, wtq, wts)
        ctx.w_dtype = w.dtype
        return y

    @staticmethod
    def backward(ctx, gy):
        x, offs, wtq, wts = ctx.saved_tensors
        g = _rows(gy)
        dx = dw = None
        if ctx.needs_input_grad[0]:
            gq, gs = ops.quantize(g, "1x128")
            out_dtype = x.dtype if x.dtype in (torch.bfloat16, torch.float32) \
                else torch.bfloat16
            dx = grouped_mm(gq, gs, wtq, wts, offs, out_dtype).to(x.dtype)
        if ctx.needs_input_grad[1]:
            a, sa = quantize_grouped_tokens(g, offs)
            b, sb = quantize_grouped_tokens(x, offs)
            dw = grouped_mm_k(a, sa, b, sb, offs, torch.float32).to(ctx.w_dtype)
        return dx, dw, None


def grouped_expert_linear(x: Tensor, w: Tensor, offs: Tensor) -> Tensor:
    """y (T, N) with y[offs[g-1]:offs[g]] = x[offs[g-1]:offs[g]] @ w[g].T, x (T, K)
    bf16/f32 tokens sorted by expert, w (G, N, K) the experts' weights, in FP8
    forward and backward (see the module docstring)."""
    return _GroupedExpertLinearFn.apply(x, w, offs)
