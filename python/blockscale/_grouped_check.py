# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Operand rules of the m-grouped GEMMs, on shapes, strides and dtype names
only (no torch): ``blockscale.grouped_mm`` and ``grouped_mm_masked`` call
these before touching a device, and the CPU tests call them directly.

Each checker takes ``(shape, strides, dtype)`` triples, with dtype names
from FP8 ('e4m3', 'e5m2'), 'f32', 'i32', 'bf16' and so on, and returns the
sizes and strides a launch needs, or raises ValueError naming what was
expected, what was found and the fix.
"""

FP8_NAMES = ("e4m3", "e5m2")
OUT_NAMES = ("bf16", "f32")


def _cdiv(a, b):
    return (a + b - 1) // b


def _fail(op, msg):
    raise ValueError(f"blockscale.{op}: {msg}")


def _check_b(op, b, b_scale):
    shape, strides, dtype = b
    if len(shape) != 3 or dtype not in FP8_NAMES:
        _fail(op, f"expected b to be a 3-D (G, N, K) float8 tensor (each expert's weight "
                  f"row-major) but got {len(shape)}-D {dtype}")
    G, N, K = shape
    if tuple(strides) != (N * K, K, 1) and not (N * K == 0):
        _fail(op, f"expected b to be contiguous (G, N, K) with strides {(N * K, K, 1)} but "
                  f"got strides {tuple(strides)}; call .contiguous() on the stacked weights")
    if G < 1:
        _fail(op, f"expected at least one group but got b of shape {tuple(shape)}")
    if K % 16:
        _fail(op, f"expected K to be a multiple of 16 (16-byte FP8 rows for TMA) but got "
                  f"K = {K}; pad K with zeros")
    s_shape, s_strides, s_dtype = b_scale
    want = (G, _cdiv(N, 128), _cdiv(K, 128))
    if s_dtype != "f32" or tuple(s_shape) != want:
        _fail(op, f"expected b_scale to be a float32 tensor of shape (G, ceil(N/128), "
                  f"ceil(K/128)) = {want} but got {s_dtype} {tuple(s_shape)} (make it with "
                  f"blockscale.quantize_grouped_weight)")
    if any(s < 0 for s in s_strides):
        _fail(op, f"expected non-negative b_scale strides but got {tuple(s_strides)}")
    return G, N, K, tuple(s_strides)


def _check_out(op, N, out_dtype):
    if out_dtype not in OUT_NAMES:
        _fail(op, f"expected out_dtype bfloat16 or float32 but got {out_dtype}")
    per16 = 8 if out_dtype == "bf16" else 4
    if N % per16:
        _fail(op, f"expected N to be a multiple of {per16} ({out_dtype} rows of C in "
                  f"16-byte TMA units) but got N = {N}")


def _check_groups(op, groups, G, what):
    shape, strides, dtype = groups
    if dtype != "i32" or tuple(shape) != (G,):
        _fail(op, f"expected {what} to be an int32 tensor of shape ({G},) (one per group of "
                  f"b) but got {dtype} {tuple(shape)}")
    if G > 1 and strides[0] != 1:
        _fail(op, f"expected {what} to be contiguous but got stride {strides[0]}")


def check_contiguous(a, a_scale, b, b_scale, offs, out_dtype):
    """grouped_mm: returns (M, N, K, G, ldsa, b_scale strides)."""
    op = "grouped_mm"
    G, N, K, sb = _check_b(op, b, b_scale)
    shape, strides, dtype = a
    if len(shape) != 2 or dtype not in FP8_NAMES:
        _fail(op, f"expected a to be a 2-D (M, K) float8 tensor but got {len(shape)}-D {dtype}")
    M = shape[0]
    if shape[1] != K:
        _fail(op, f"expected a of shape (M, K = {K}) (K of b) but got {tuple(shape)}")
    if M > 0 and tuple(strides) != (K, 1) and not (M == 1 and strides[1] == 1):
        _fail(op, f"expected a to be contiguous (M, K) with strides {(K, 1)} but got "
                  f"{tuple(strides)}")
    ldsa = _check_a_scale(op, a_scale, (M, _cdiv(K, 128)), M)
    _check_out(op, N, out_dtype)
    _check_groups(op, offs, G, "offs (cumulative end rows of the groups)")
    return M, N, K, G, ldsa, sb


def check_masked(a, a_scale, b, b_scale, counts, out_dtype):
    """grouped_mm_masked: returns (G, Mmax, N, K, ldsa, b_scale strides)."""
    op = "grouped_mm_masked"
    G, N, K, sb = _check_b(op, b, b_scale)
    shape, strides, dtype = a
    if len(shape) != 3 or dtype not in FP8_NAMES:
        _fail(op, f"expected a to be a 3-D (G, Mmax, K) float8 tensor but got "
                  f"{len(shape)}-D {dtype}")
    if shape[0] != G or shape[2] != K:
        _fail(op, f"expected a of shape (G = {G}, Mmax, K = {K}) but got {tuple(shape)}")
    Mmax = shape[1]
    if Mmax < 1:
        _fail(op, f"expected Mmax >= 1 but got a of shape {tuple(shape)}")
    if tuple(strides) != (Mmax * K, K, 1):
        _fail(op, f"expected a to be contiguous (G, Mmax, K) with strides "
                  f"{(Mmax * K, K, 1)} but got {tuple(strides)}")
    s_shape, s_strides, s_dtype = a_scale
    want = (G, Mmax, _cdiv(K, 128))
    if s_dtype != "f32" or tuple(s_shape) != want:
        _fail(op, f"expected a_scale to be a float32 tensor of shape (G, Mmax, ceil(K/128)) "
                  f"= {want} but got {s_dtype} {tuple(s_shape)}")
    rows = G * Mmax
    if want[2] > 1 or G > 1 or Mmax > 1:
        if (G > 1 and s_strides[0] != Mmax) or (Mmax > 1 and s_strides[1] != 1):
            _fail(op, f"expected a_scale rows-contiguous across groups, strides (Mmax = "
                      f"{Mmax}, 1, ldsa) (the 1x128 scales of a.view(G * Mmax, K) from "
                      f"blockscale.quantize, viewed 3-D) but got {tuple(s_strides)}")
    ldsa = s_strides[2] if want[2] > 1 else 0
    if ldsa and (ldsa < rows or ldsa % 4):
        _fail(op, f"expected a_scale's K-block stride to be >= G * Mmax = {rows} and a "
                  f"multiple of 4 (16 bytes, TMA) but got {ldsa}")
    _check_out(op, N, out_dtype)
    _check_groups(op, counts, G, "counts (valid rows per group)")
    return G, Mmax, N, K, ldsa, sb


def _check_a_scale(op, a_scale, want, M):
    s_shape, s_strides, s_dtype = a_scale
    if s_dtype != "f32" or tuple(s_shape) != want:
        _fail(op, f"expected a_scale to be a float32 tensor of shape (M, ceil(K/128)) = "
                  f"{want} but got {s_dtype} {tuple(s_shape)}")
    if M > 1 and s_strides[0] != 1:
        _fail(op, f"expected a_scale to be M-contiguous (as blockscale.quantize(x, '1x128') "
                  f"writes it) but got strides {tuple(s_strides)}")
    ldsa = s_strides[1] if want[1] > 1 and M > 0 else 0
    if ldsa and (ldsa < M or ldsa % 4):
        _fail(op, f"expected a_scale's K-block stride to be >= M = {M} and a multiple of 4 "
                  f"(16 bytes, TMA) but got {ldsa}")
    return ldsa
