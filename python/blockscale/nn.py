# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Drop-in FP8 blockwise linear layer (DeepSeek-V3 recipe).

Forward  y  = x @ W^T       : x 1x128, W 128x128            (fwd GEMM)
Backward dx = dy @ W        : dy 1x128, W^T 128x128          (dgrad GEMM)
         dW = dy^T @ x      : dy^T 1x128 along tokens, x 128x1 (wgrad GEMM)
Every cast is a fused blockscale kernel writing the layout its GEMM reads;
x, W and dy are each read once per step (``ops.quantize_dual`` writes both of
a tensor's layouts), and the backward reads the FP8 tensors the forward saved.
"""
import torch
from torch import nn

from . import ops

_DTYPES = (torch.bfloat16, torch.float16, torch.float32)


def _check_dims(x2, weight):
    T, K = x2.shape
    N = weight.shape[0]
    if K % 16 or N % 16:
        raise ValueError(f"Float8BlockwiseLinear: expected in_features and out_features "
                         f"to be multiples of 16 but got {K} and {N}")
    if T % 16:
        raise ValueError(f"Float8BlockwiseLinear: expected the number of tokens to be a "
                         f"multiple of 16 (the grad-weight GEMM reads activations "
                         f"transposed) but got {T}; pad the batch")


def _row_major(t):
    # Autograd may hand a non-contiguous gradient; the GEMM reads rows.
    return t if t.stride(-1) == 1 and t.is_contiguous() else t.contiguous()


class _Fp8BlockwiseLinearFn(torch.autograd.Function):
    """Each operand is read and cast once per step: a tensor whose two FP8
    layouts are both needed (x when the weight needs a gradient, the weight
    when x does, dy when both do) goes through one dual-layout cast, and the
    backward reuses the forward's FP8 tensors instead of re-reading x and W
    in 16 bits."""

    @staticmethod
    def forward(ctx, x, weight, bias):
        x2 = _row_major(x.reshape(-1, x.shape[-1]))
        _check_dims(x2, weight)
        need_dx, need_dw = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        out_dtype = x.dtype if x.dtype in (torch.bfloat16, torch.float32) else torch.bfloat16
        xtq = xts = wtq = wts = None
        if need_dw:
            # x^T (K_in, T), 1x128 along tokens: as .t() x's 128x1
            # column-major operand of the grad-weight GEMM.
            xq, xs, xtq, xts = ops.quantize_dual(x2, "1x128")
        else:
            xq, xs = ops.quantize(x2, "1x128")
        if need_dx:
            # W (N, K) row-major is the (K, N) column-major B operand; W^T
            # row-major the grad-input one.
            wq, ws, wtq, wts = ops.quantize_dual(weight, "128x128")
            bq, bs = wq.t(), ws.t()
        else:
            bq, bs = ops.quantize(weight, "128x128", transpose=True, layout="col_major")
        y = ops.scaled_mm(xq, xs, bq, bs, "1x128", "128x128", out_dtype)
        if bias is not None:
            y = y + bias.to(y.dtype)
        ctx.save_for_backward(xtq, xts, wtq, wts)
        ctx.has_bias = bias is not None
        ctx.x_shape = x.shape
        ctx.x_dtype = x.dtype
        ctx.w_dtype = weight.dtype
        return y.view(*x.shape[:-1], weight.shape[0])

    @staticmethod
    def backward(ctx, gy):
        xtq, xts, wtq, wts = ctx.saved_tensors
        g2 = _row_major(gy.reshape(-1, gy.shape[-1]))
        need_dx, need_dw = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        out_dtype = ctx.x_dtype if ctx.x_dtype in (torch.bfloat16, torch.float32) else torch.bfloat16
        dx = dw = db = None
        if need_dx and need_dw:
            gq, gs, gtq, gts = ops.quantize_dual(g2, "1x128")
        elif need_dx:
            gq, gs = ops.quantize(g2, "1x128")
        elif need_dw:
            # dy^T (N_out, T), 1x128 along tokens.
            gtq, gts = ops.quantize(g2, "1x128", transpose=True)
        if need_dx:
            dx = ops.scaled_mm(gq, gs, wtq.t(), wts.t(), "1x128", "128x128", out_dtype)
            dx = dx.view(ctx.x_shape).to(ctx.x_dtype)
        if need_dw:
            w_dtype = ctx.w_dtype if ctx.w_dtype in (torch.bfloat16, torch.float32) else torch.float32
            dw = ops.scaled_mm(gtq, gts, xtq.t(), xts.t(), "1x128", "128x1", w_dtype)
            dw = dw.to(ctx.w_dtype)
        if ctx.has_bias and ctx.needs_input_grad[2]:
            db = g2.float().sum(0).to(gy.dtype)
        return dx, dw, db


class Float8BlockwiseLinear(nn.Linear):
    """nn.Linear whose three GEMMs and casts run through blockscale."""

    @classmethod
    def from_float(cls, mod: nn.Linear) -> "Float8BlockwiseLinear":
        with torch.device("meta"):
            new = cls(mod.in_features, mod.out_features, bias=mod.bias is not None)
        new.weight = mod.weight
        new.bias = mod.bias
        return new

    def forward(self, x):
        return _Fp8BlockwiseLinearFn.apply(x, self.weight, self.bias)


def convert(model: nn.Module, module_filter_fn=None) -> nn.Module:
    """Swaps every nn.Linear (for which module_filter_fn(module, fqn) is true,
    and whose features are multiples of 16) for Float8BlockwiseLinear, in
    place; parameters are shared, not copied. Returns the model."""

    def visit(mod, prefix):
        for name, child in list(mod.named_children()):
            fqn = f"{prefix}.{name}" if prefix else name
            if type(child) is nn.Linear and child.in_features % 16 == 0 and \
                    child.out_features % 16 == 0 and \
                    (module_filter_fn is None or module_filter_fn(child, fqn)):
                setattr(mod, name, Float8BlockwiseLinear.from_float(child))
            else:
                visit(child, fqn)

    if type(model) is nn.Linear:
        return Float8BlockwiseLinear.from_float(model)
    visit(model, "")
    return model
