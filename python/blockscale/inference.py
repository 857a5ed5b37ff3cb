# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""FP8 inference with pre-quantized weights (DeepSeek-V3 checkpoint layout).

A DeepSeek-style FP8 checkpoint stores each linear layer as
  ``weight``            (N, K) float8_e4m3fn, row-major
  ``weight_scale_inv``  (ceil(N/128), ceil(K/128)) float32, row-major: the
                        decode scale of each 128x128 block (w = q * s)
Both are already the GEMM's B operand: the weight (N, K) row-major is the
(K, N) column-major B, and the scales viewed as (Kb, Nb) have strides
(1, Kb), which blockscale.scaled_mm reads as they are for 128x128 B scales.
So the module keeps the tensors it is given (no copy, no re-quantization)
and quantizes only the activations (1x128) at each call.

    model = build_model()                      # nn.Linear layers, any device
    report = blockscale.load_fp8_checkpoint(model, state_dict, device="cuda")
"""
from typing import Dict, List, Optional

import torch
from torch import nn

from . import ops
from ._select import cdiv, check_fp8_entry, plan_fp8_checkpoint

_OUT = (torch.bfloat16, torch.float32)


def _dtype_name(t):
    return str(t.dtype).replace("torch.", "")


class Float8BlockwiseInferenceLinear(nn.Module):
    """y = x @ dequant(weight, weight_scale_inv)^T (+ bias), computed as
    blockscale.scaled_mm(quantize(x, "1x128"), weight.t(), 128x128 scales).

    Buffers: ``weight`` (N, K) FP8, ``weight_scale_inv`` (ceil(N/128),
    ceil(K/128)) float32, ``bias`` (N,) or None: the checkpoint's names, so
    state_dict() round-trips. ``.to(dtype)`` on the model leaves the FP8
    weight and its float32 scales as they are (only the bias follows).
    Inputs: bf16, f16 or f32 with K = in_features a multiple of 16; any
    number of tokens. Output: the input's dtype (f16 computed in bf16), or
    ``out_dtype`` if given.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = False,
                 device=None, weight_dtype=torch.float8_e4m3fn,
                 out_dtype: Optional[torch.dtype] = None):
        super().__init__()
        if in_features % 16:
            raise ValueError(f"Float8BlockwiseInferenceLinear: in_features must be a multiple "
                             f"of 16 (16-byte FP8 rows) but got {in_features}")
        if out_dtype is not None and out_dtype not in _OUT:
            raise ValueError(f"out_dtype must be bfloat16 or float32 but got {out_dtype}")
        self.in_features, self.out_features = in_features, out_features
        self.out_dtype = out_dtype
        self.register_buffer("weight", torch.empty(out_features, in_features,
                                                   dtype=weight_dtype, device=device))
        self.register_buffer("weight_scale_inv", torch.empty(
            cdiv(out_features, 128), cdiv(in_features, 128), dtype=torch.float32, device=device))
        self.register_buffer("bias", torch.empty(out_features, device=device) if bias else None)

    @classmethod
    def from_state_dict(cls, prefix: str, state_dict: Dict[str, torch.Tensor], device=None,
                        out_dtype: Optional[torch.dtype] = None):
        """The layer ``prefix`` ("model.layers.0.mlp.up_proj." or "") of a
        DeepSeek-style FP8 state dict: ``weight``, ``weight_scale_inv`` and
        optionally ``bias``. The tensors are used as they are (moved to
        `device` if given)."""
        w = state_dict[prefix + "weight"]
        s = state_dict.get(prefix + "weight_scale_inv")
        b = state_dict.get(prefix + "bias")
        if w.dim() != 2:
            raise ValueError(f"{prefix}weight: expected a 2-D (N, K) tensor but got shape "
                             f"{tuple(w.shape)}")
        n, k = w.shape
        err = check_fp8_entry(prefix.rstrip("."), k, n, (_dtype_name(w), tuple(w.shape)),
                              None if s is None else (_dtype_name(s), tuple(s.shape)))
        if err:
            raise ValueError("Float8BlockwiseInferenceLinear.from_state_dict: " + err)
        mod = cls(k, n, bias=b is not None, device="meta", weight_dtype=w.dtype,
                  out_dtype=out_dtype)
        mod.weight = _aligned(w.to(device) if device is not None else w)
        mod.weight_scale_inv = s.to(device=mod.weight.device, dtype=torch.float32).contiguous()
        if b is not None:
            mod.bias = b.to(mod.weight.device)
        return mod

    @classmethod
    def from_float(cls, linear: nn.Linear, out_dtype: Optional[torch.dtype] = None):
        """Quantizes a high-precision nn.Linear's weight once (128x128
        blocks, the kernels' rounding; blockscale.reference.quantize_ref)."""
        from .reference import quantize_ref
        with torch.no_grad():
            q, s = quantize_ref(linear.weight.detach(), "128x128")
        sd = {"weight": q, "weight_scale_inv": s}
        if linear.bias is not None:
            sd["bias"] = linear.bias.detach()
        return cls.from_state_dict("", sd, out_dtype=out_dtype)

    def _apply(self, fn, *args, **kwargs):
        # Module.to(dtype) converts every floating-point buffer, FP8 included:
        # keep the FP8 weight (FP8 -> f16/bf16/f32 -> FP8 is exact) and the
        # f32 scales (kept from before: a cast to bf16 would lose bits).
        scale = self.weight_scale_inv
        wdtype = self.weight.dtype
        out = super()._apply(fn, *args, **kwargs)
        if self.weight.dtype != wdtype:
            self.weight = self.weight.to(wdtype)
        if self.weight_scale_inv.dtype != torch.float32:
            self.weight_scale_inv = scale.to(self.weight_scale_inv.device)
        return out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        k, n = self.in_features, self.out_features
        if x.shape[-1] != k:
            raise ValueError(f"Float8BlockwiseInferenceLinear: expected inputs with last "
                             f"dimension {k} but got shape {tuple(x.shape)}")
        x2 = x.reshape(-1, k)
        if not x2.is_contiguous() or x2.data_ptr() % 16:
            x2 = x2.contiguous()
        out_dtype = self.out_dtype or (x.dtype if x.dtype in _OUT else torch.bfloat16)
        xq, xs = ops.quantize(x2, "1x128")
        # The weight (N, K) row-major is the (K, N) column-major B operand;
        # the (Nb, Kb) row-major scales viewed as (Kb, Nb) have strides (1, Kb).
        y = ops.scaled_mm(xq, xs, self.weight.t(), self.weight_scale_inv.t(), "1x128",
                          "128x128", out_dtype)
        if self.bias is not None:
            y = y + self.bias.to(y.dtype)
        if self.out_dtype is None and y.dtype != x.dtype:
            y = y.to(x.dtype)
        return y.reshape(*x.shape[:-1], n)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}, weight={self.weight.dtype}, "
                f"weight_scale_inv=128x128")


def _aligned(t):
    """A contiguous tensor at a 16-byte aligned address (TMA)."""
    t = t.contiguous()
    return t if t.device.type == "meta" or t.data_ptr() % 16 == 0 else t.clone()


class CheckpointReport:
    """What load_fp8_checkpoint did: the layers now FP8 (``converted``),
    and the keys load_state_dict reported for the rest of the model."""

    def __init__(self, converted: List[str], missing: List[str], unexpected: List[str],
                 unmatched: List[str]):
        self.converted, self.missing, self.unexpected = converted, missing, unexpected
        self.unmatched = unmatched

    def __repr__(self):
        return (f"CheckpointReport(converted={len(self.converted)} layers, "
                f"missing={self.missing}, unexpected={self.unexpected}, "
                f"unmatched_fp8={self.unmatched})")


def load_fp8_checkpoint(model: nn.Module, state_dict: Dict[str, torch.Tensor], device=None,
                        strict: bool = False, assign: bool = False,
                        out_dtype: Optional[torch.dtype] = None) -> CheckpointReport:
    """Loads a DeepSeek-style FP8 state dict into `model`: every nn.Linear
    ``p`` whose state has ``p.weight`` in FP8 and ``p.weight_scale_inv``
    becomes a Float8BlockwiseInferenceLinear holding those tensors (on
    `device`, else the layer's device, else the checkpoint's); the other
    entries load through model.load_state_dict (``assign`` is passed on,
    e.g. for a model built on the meta device). With ``strict``, keys missing
    from or unexpected by the model are an error. Inconsistent FP8 entries
    (shapes, a missing scale) are always an error naming the layer."""
    if isinstance(model, nn.Linear):
        raise ValueError("load_fp8_checkpoint replaces the linear layers inside a module; for "
                         "a bare layer use Float8BlockwiseInferenceLinear.from_state_dict('', sd)")
    mods = {fqn: m for fqn, m in model.named_modules() if isinstance(m, nn.Linear)}
    linears = {fqn: (m.in_features, m.out_features) for fqn, m in mods.items()}
    entries = {k: (_dtype_name(v), tuple(v.shape)) for k, v in state_dict.items()
               if isinstance(v, torch.Tensor)}
    plan = plan_fp8_checkpoint(linears, entries)
    if plan.errors:
        raise ValueError("load_fp8_checkpoint: " + "; ".join(plan.errors.values()))
    for fqn in plan.convert:
        old = mods[fqn]
        dev = device
        if dev is None and old.weight.device.type != "meta":
            dev = old.weight.device
        new = Float8BlockwiseInferenceLinear.from_state_dict(f"{fqn}.", state_dict, device=dev,
                                                             out_dtype=out_dtype)
        parent_name, _, child = fqn.rpartition(".")
        parent = model.get_submodule(parent_name) if parent_name else model
        setattr(parent, child, new)
    consumed = set(plan.consumed)
    rest = {k: v for k, v in state_dict.items() if k not in consumed}
    result = model.load_state_dict(rest, strict=False, assign=assign)
    missing = [k for k in result.missing_keys if k not in consumed]
    unexpected = list(result.unexpected_keys)
    if strict and (missing or unexpected):
        raise RuntimeError(f"load_fp8_checkpoint: missing keys {missing}, unexpected keys "
                           f"{unexpected}")
    return CheckpointReport(list(plan.convert), missing, unexpected, plan.unmatched)
