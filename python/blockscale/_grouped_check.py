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


# The C API's limits (GroupedGemmDesc::validate, launchGroupedGemm), checked
# here too so that a shape the launch would refuse fails as the checks'
# ValueError, also under torch.compile's fake tensors.
MAX_GROUPS = 65536
MAX_INT32 = 2**31 - 1
MAX_STRIDE = 2**40


def _triple(op, name, t):
    """A well-formed (shape, strides, dtype): as many strides as dims, all
    of them integers (ints, or torch.compile's symbolic sizes)."""
    try:
        shape, strides, dtype = t
        shape, strides = tuple(shape), tuple(strides)
    except (TypeError, ValueError):
        _fail(op, f"expected {name} as (shape, strides, dtype) but got {t!r}")
    if len(strides) != len(shape) or any(
            v is None or isinstance(v, (bool, float, str, bytes)) for v in shape + strides):
        _fail(op, f"expected {name}'s shape and strides to be integers, one stride per "
                  f"dim, but got shape {shape} and strides {strides}")
    if any(v < 0 for v in shape):
        _fail(op, f"expected {name}'s sizes to be >= 0 but got {shape}")
    return shape, strides, dtype


def _own_storage(op, name, shape, strides):
    """B scales with all strides zero (torch's expand of one element) are
    what the launch takes as "the default layout": the kernels would read
    the packed layout, past the storage. (A broadcast along some dims is
    read as given.)"""
    n = 1
    for d in shape:
        n *= d
    if n > 1 and all(s == 0 for s in strides):
        _fail(op, f"expected {name} to hold its own elements but got shape {tuple(shape)} "
                  f"with strides {tuple(strides)} (stride 0: an expanded view); call "
                  f".contiguous()")


def _check_b(op, b, b_scale):
    shape, strides, dtype = _triple(op, "b", b)
    if len(shape) != 3 or dtype not in FP8_NAMES:
        _fail(op, f"expected b to be a 3-D (G, N, K) float8 tensor (each expert's weight "
                  f"row-major) but got {len(shape)}-D {dtype}")
    G, N, K = shape
    if G < 1 or N < 1 or K < 1:
        _fail(op, f"expected b of shape (G, N, K) with G, N, K >= 1 but got {tuple(shape)}")
    if G > MAX_GROUPS or G * N > MAX_INT32:
        _fail(op, f"expected G <= {MAX_GROUPS} groups and G * N < 2^31 but got b of shape "
                  f"{tuple(shape)}")
    if tuple(strides) != (N * K, K, 1):
        _fail(op, f"expected b to be contiguous (G, N, K) with strides {(N * K, K, 1)} but "
                  f"got strides {tuple(strides)}; call .contiguous() on the stacked weights")
    if K % 16:
        _fail(op, f"expected K to be a multiple of 16 (16-byte FP8 rows for TMA) but got "
                  f"K = {K}; pad K with zeros")
    s_shape, s_strides, s_dtype = _triple(op, "b_scale", b_scale)
    want = (G, _cdiv(N, 128), _cdiv(K, 128))
    if s_dtype != "f32" or tuple(s_shape) != want:
        _fail(op, f"expected b_scale to be a float32 tensor of shape (G, ceil(N/128), "
                  f"ceil(K/128)) = {want} but got {s_dtype} {tuple(s_shape)} (make it with "
                  f"blockscale.quantize_grouped_weight)")
    if any(s < 0 or s > MAX_STRIDE for s in s_strides):
        _fail(op, f"expected b_scale strides in [0, 2^40] but got {tuple(s_strides)}")
    _own_storage(op, "b_scale", s_shape, s_strides)
    return G, N, K, tuple(s_strides)


def _check_out(op, N, out_dtype):
    if out_dtype not in OUT_NAMES:
        _fail(op, f"expected out_dtype bfloat16 or float32 but got {out_dtype}")
    per16 = 8 if out_dtype == "bf16" else 4
    if N % per16:
        _fail(op, f"expected N to be a multiple of {per16} ({out_dtype} rows of C in "
                  f"16-byte TMA units) but got N = {N}")


def _check_groups(op, groups, G, what):
    shape, strides, dtype = _triple(op, what.split(" ")[0], groups)
    if dtype != "i32" or tuple(shape) != (G,):
        _fail(op, f"expected {what} to be an int32 tensor of shape ({G},) (one per group of "
                  f"b) but got {dtype} {tuple(shape)}")
    if G > 1 and strides[0] != 1:
        _fail(op, f"expected {what} to be contiguous but got stride {strides[0]}")


def check_contiguous(a, a_scale, b, b_scale, offs, out_dtype):
    """grouped_mm: returns (M, N, K, G, ldsa, b_scale strides)."""
    op = "grouped_mm"
    G, N, K, sb = _check_b(op, b, b_scale)
    shape, strides, dtype = _triple(op, "a", a)
    if len(shape) != 2 or dtype not in FP8_NAMES:
        _fail(op, f"expected a to be a 2-D (M, K) float8 tensor but got {len(shape)}-D {dtype}")
    M = shape[0]
    if shape[1] != K:
        _fail(op, f"expected a of shape (M, K = {K}) (K of b) but got {tuple(shape)}")
    if M > MAX_INT32:
        _fail(op, f"expected M < 2^31 rows but got a of shape {tuple(shape)}")
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
    shape, strides, dtype = _triple(op, "a", a)
    if len(shape) != 3 or dtype not in FP8_NAMES:
        _fail(op, f"expected a to be a 3-D (G, Mmax, K) float8 tensor but got "
                  f"{len(shape)}-D {dtype}")
    if shape[0] != G or shape[2] != K:
        _fail(op, f"expected a of shape (G = {G}, Mmax, K = {K}) but got {tuple(shape)}")
    Mmax = shape[1]
    if Mmax < 1 or G * Mmax > MAX_INT32:
        _fail(op, f"expected Mmax >= 1 and G * Mmax < 2^31 but got a of shape "
                  f"{tuple(shape)}")
    if tuple(strides) != (Mmax * K, K, 1):
        _fail(op, f"expected a to be contiguous (G, Mmax, K) with strides "
                  f"{(Mmax * K, K, 1)} but got {tuple(strides)}")
    s_shape, s_strides, s_dtype = _triple(op, "a_scale", a_scale)
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
    # (0: a single K block, any stride; the launch takes its default.)
    ldsa = s_strides[2] if want[2] > 1 else 0
    if want[2] > 1 and (ldsa < rows or ldsa % 4):
        _fail(op, f"expected a_scale's K-block stride to be >= G * Mmax = {rows} and a "
                  f"multiple of 4 (16 bytes, TMA) but got {ldsa}")
    _check_out(op, N, out_dtype)
    _check_groups(op, counts, G, "counts (valid rows per group)")
    return G, Mmax, N, K, ldsa, sb


def _check_a_scale(op, a_scale, want, M):
    s_shape, s_strides, s_dtype = _triple(op, "a_scale", a_scale)
    if s_dtype != "f32" or tuple(s_shape) != want:
        _fail(op, f"expected a_scale to be a float32 tensor of shape (M, ceil(K/128)) = "
                  f"{want} but got {s_dtype} {tuple(s_shape)}")
    if M > 1 and s_strides[0] != 1:
        _fail(op, f"expected a_scale to be M-contiguous (as blockscale.quantize(x, '1x128') "
                  f"writes it) but got strides {tuple(s_strides)}")
    # (0: a single K block, any stride; the launch takes its default.)
    ldsa = s_strides[1] if want[1] > 1 and M > 0 else 0
    if want[1] > 1 and M > 0 and (ldsa < M or ldsa % 4):
        _fail(op, f"expected a_scale's K-block stride to be >= M = {M} and a multiple of 4 "
                  f"(16 bytes, TMA) but got {ldsa}")
    return ldsa


# k-grouped weight gradient (grouped_mm_k) and its group-aware cast
# (quantize_grouped_tokens): the tokens of the operands are padded so that
# every group starts at a multiple of 128 (token_capacity).

IN_NAMES = ("bf16", "f16", "f32")
_IN_BYTES = {"bf16": 2, "f16": 2, "f32": 4}


def token_capacity(tokens, groups):
    """Tokens of the padded operands: round_up(tokens, 128) + 128 * groups
    (every group may pad up to 127 tokens), as bs_grouped_token_capacity."""
    return _cdiv(tokens, 128) * 128 + 128 * groups


def _check_offs_k(op, offs):
    shape, strides, dtype = _triple(op, "offs", offs)
    if dtype != "i32" or len(shape) != 1 or shape[0] < 1:
        _fail(op, f"expected offs to be a 1-D int32 tensor of shape (G,) with G >= 1 "
                  f"(cumulative end tokens of the groups) but got {dtype} {tuple(shape)}")
    if shape[0] > 1 and strides[0] != 1:
        _fail(op, f"expected offs to be contiguous but got stride {strides[0]}")
    if shape[0] > MAX_GROUPS:
        _fail(op, f"expected at most {MAX_GROUPS} groups but got offs of shape {tuple(shape)}")
    return shape[0]


def check_grouped_tokens(x, offs, fp8):
    """quantize_grouped_tokens: returns (T, C, G, ldx, capacity)."""
    op = "quantize_grouped_tokens"
    shape, strides, dtype = _triple(op, "x", x)
    if len(shape) != 2 or dtype not in IN_NAMES:
        _fail(op, f"expected x to be a 2-D (tokens, cols) bfloat16, float16 or float32 "
                  f"tensor but got {len(shape)}-D {dtype}")
    if fp8 not in FP8_NAMES:
        _fail(op, f"expected fp8_dtype float8_e4m3fn or float8_e5m2 but got {fp8}")
    T, C = shape
    es = _IN_BYTES[dtype]
    if C < 1:
        _fail(op, f"expected at least one column but got x of shape {tuple(shape)}")
    if (C * es) % 16:
        per = 16 // es
        _fail(op, f"expected rows of a multiple of 16 bytes (TMA) but got cols = {C} "
                  f"({dtype}); pad cols to {_cdiv(C, per) * per}")
    if C > 1 and T > 0 and strides[1] != 1:
        _fail(op, f"expected x row-major (unit column stride) but got strides "
                  f"{tuple(strides)}; call .contiguous()")
    ldx = strides[0] if T > 1 else C
    if ldx < C or (ldx * es) % 16:
        _fail(op, f"expected x's row stride to be >= cols = {C} and 16-byte aligned but "
                  f"got {ldx}")
    G = _check_offs_k(op, offs)
    cap = token_capacity(T, G)
    if cap > MAX_INT32:
        _fail(op, f"expected a token capacity round_up(tokens, 128) + 128 * G below 2^31 but "
                  f"got {cap} (x of shape {tuple(shape)}, G = {G})")
    return T, C, G, ldx, cap


def _check_k_scale(op, name, t, rows, blocks, what):
    s_shape, s_strides, s_dtype = _triple(op, name, t)
    want = (rows, blocks)
    if s_dtype != "f32" or tuple(s_shape) != want:
        _fail(op, f"expected {name} to be a float32 tensor of shape ({what}, capacity/128) "
                  f"= {want} but got {s_dtype} {tuple(s_shape)} (make it with "
                  f"blockscale.quantize_grouped_tokens)")
    if rows > 1 and s_strides[0] != 1:
        _fail(op, f"expected {name} to be {what}-contiguous (strides (1, ld), as "
                  f"blockscale.quantize_grouped_tokens writes it) but got strides "
                  f"{tuple(s_strides)}")
    # (0: a single block, any stride; the launch takes its default.)
    ld = s_strides[1] if blocks > 1 else 0
    if blocks > 1 and (ld < rows or ld % 4):
        _fail(op, f"expected {name}'s block stride to be >= {what} = {rows} and a multiple "
                  f"of 4 (16 bytes, TMA) but got {ld}")
    return ld


def check_k(a, a_scale, b, b_scale, offs, out_dtype, op="grouped_mm_k"):
    """grouped_mm_k: returns (G, M, N, capacity, ldsa, ldsb)."""
    a, b = _triple(op, "a", a), _triple(op, "b", b)
    for t, name, what in ((a, "a", "M"), (b, "b", "N")):
        shape, strides, dtype = t
        if len(shape) != 2 or dtype not in FP8_NAMES:
            _fail(op, f"expected {name} to be a 2-D ({what}, capacity) float8 tensor (the "
                      f"transposed, group-padded operand from "
                      f"blockscale.quantize_grouped_tokens) but got {len(shape)}-D {dtype}")
    M, cap = a[0]
    N, cap_b = b[0]
    if cap_b != cap:
        _fail(op, f"expected a and b to have the same token capacity but got a "
                  f"{tuple(a[0])} and b {tuple(b[0])}; cast both with the same offs")
    G = _check_offs_k(op, offs)
    if M < 1 or N < 1:
        _fail(op, f"expected M, N >= 1 but got a {tuple(a[0])}, b {tuple(b[0])}")
    if cap % 128 or cap < 128 * G or cap > MAX_INT32:
        _fail(op, f"expected a token capacity that is a multiple of 128, at least "
                  f"128 * G = {128 * G} and below 2^31 but got {cap}; make the operands with "
                  f"blockscale.quantize_grouped_tokens (capacity round_up(tokens, 128) + "
                  f"128 * G)")
    for t, name, rows in ((a, "a", M), (b, "b", N)):
        if tuple(t[1]) != (cap, 1) and not (rows == 1 and t[1][1] == 1):
            _fail(op, f"expected {name} to be contiguous with strides {(cap, 1)} but got "
                      f"{tuple(t[1])}")
    blocks = cap // 128
    ldsa = _check_k_scale(op, "a_scale", a_scale, M, blocks, "M")
    ldsb = _check_k_scale(op, "b_scale", b_scale, N, blocks, "N")
    _check_out(op, N, out_dtype)
    return G, M, N, cap, ldsa, ldsb
