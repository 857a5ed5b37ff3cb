# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Torch references of the kernels' math (bit-exact for the casts)."""
import torch

from .ops import RECIPES

FP8_MAX = {torch.float8_e4m3fn: 448.0, torch.float8_e5m2: 57344.0}


def quantize_ref(x, recipe, transpose=False, fp8_dtype=torch.float8_e4m3fn):
    """Returns (q, scale) as contiguous logical tensors: q = rne_sat(x * (max /
    amax_b)), scale = amax_b / max, amax clamped at 1e-12, partial blocks over
    their valid elements only; same f32 operations as the kernels."""
    xl = (x.t() if transpose else x).float()
    L0, L1 = xl.shape
    br, bc = RECIPES[recipe]
    P0, P1 = -(-L0 // br) * br, -(-L1 // bc) * bc
    xp = torch.zeros(P0, P1, dtype=torch.float32, device=x.device)
    xp[:L0, :L1] = xl
    blocks = xp.view(P0 // br, br, P1 // bc, bc)
    amax = blocks.abs().amax(dim=(1, 3)).clamp(min=1e-12)
    fmax = torch.tensor(FP8_MAX[fp8_dtype], dtype=torch.float32, device=x.device)
    inv = fmax / amax
    scale = amax / fmax
    y = blocks * inv[:, None, :, None]
    y = y.clamp(-FP8_MAX[fp8_dtype], FP8_MAX[fp8_dtype])  # satfinite
    q = y.view(P0, P1)[:L0, :L1].to(fp8_dtype)
    return q, scale


def dequantize(q, scale, recipe):
    """The f32 tensor a (q, scale) pair stands for (logical shapes)."""
    br, bc = RECIPES[recipe]
    s = scale.float().repeat_interleave(br, 0).repeat_interleave(bc, 1)
    return q.float() * s[: q.shape[0], : q.shape[1]]


def sqnr_db(ref, out):
    ref, out = ref.double(), out.double()
    return (10 * torch.log10(ref.pow(2).sum() / (ref - out).pow(2).sum())).item()
