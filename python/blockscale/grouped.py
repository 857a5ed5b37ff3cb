# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""m-grouped FP8 GEMMs for mixture-of-experts layers (torch custom ops).

``grouped_mm`` (contiguous: the rows of ``a`` sorted by expert, group ``g``
owning rows ``[offs[g-1], offs[g])``, the convention of
``torch._scaled_grouped_mm``'s ``offs``) and ``grouped_mm_masked`` (a fixed
``(G, Mmax, K)`` buffer with ``counts[g]`` valid rows per group) compute
``out[rows of g] = a[rows of g] @ b[g].T`` with the dense forward recipe:

  a        (M, K) / (G, Mmax, K) float8, row-major
  a_scale  1x128: (M, ceil(K/128)) M-contiguous, as blockscale.quantize(x,
           '1x128') writes it; masked: those of a.view(G * Mmax, K), viewed
           (G, Mmax, ceil(K/128)) (see quantize_grouped_activation_masked)
  b        (G, N, K) float8, each expert's weight row-major (contiguous)
  b_scale  128x128: (G, ceil(N/128), ceil(K/128)) any strides (not all zero)
           (quantize_grouped_weight makes both)
  offs / counts  (G,) int32 on the device: read by the kernel only, so no
           host synchronization and the calls can be captured in a CUDA graph
  out      (M, N) / (G, Mmax, N) bf16 or f32

Rows of ``out`` that belong to no group (past ``offs[-1]``, or past a
group's count) are not written: they hold whatever ``torch.empty`` left.
Both are ``torch.library.custom_op``s with fake implementations.

The weight gradient of such a layer is k-grouped: ``grouped_mm_k`` (and
``grouped_mm_k_accumulate``) compute ``dW[g] = dY[tokens of g].T @ X[tokens
of g]`` over the same ``offs``, from operands that
``quantize_grouped_tokens`` casts per 128-token block of each group
(transposed, every group padded to a multiple of 128 tokens on the device,
so any group size works without the caller padding).
"""
from typing import Tuple

import torch
from torch import Tensor

from . import _capi
from . import _grouped_check
from .ops import FP8_DTYPES, OUT_DTYPES, _direct, _launch_on, _m_bucket

_NAMES = {torch.float8_e4m3fn: "e4m3", torch.float8_e5m2: "e5m2", torch.float32: "f32",
          torch.bfloat16: "bf16", torch.float16: "f16", torch.int32: "i32",
          torch.int64: "i64"}


def _t(x):
    return (tuple(x.shape), tuple(x.stride()), _NAMES.get(x.dtype, str(x.dtype)))


def _out_name(op, dtype):
    if dtype not in OUT_DTYPES:
        raise ValueError(f"blockscale.{op}: expected out_dtype bfloat16 or float32 but got "
                         f"{dtype}")
    return OUT_DTYPES[dtype]


def _same_device(op, *tensors):
    devs = {t.device for t in tensors}
    if len(devs) != 1 or next(iter(devs)).type != "cuda":
        raise ValueError(f"blockscale.{op}: expected all operands on one CUDA device but got "
                         f"{sorted(map(str, devs))}")
    for t in tensors[:3]:
        if t.numel() and t.data_ptr() % 16:
            raise ValueError(f"blockscale.{op}: expected a, a_scale and b to start at "
                             f"16-byte aligned addresses (TMA)")


_kernels = {}


def _kernel(grouping, G, N, K, m_max, a_t, b_t, out, hint):
    key = (grouping, G, N, K, m_max, a_t, b_t, out, hint)
    kern = _kernels.get(key)
    if kern is None:
        desc = _capi.grouped_desc(grouping=grouping, groups=G, n=N, k=K, m_max=m_max,
                                  a_type=a_t, b_type=b_t, out_dtype=out,
                                  m_per_group_hint=hint)
        kern = _kernels.setdefault(key, _capi.GroupedGemmKernel(desc))
    return kern


def _args(a, a_scale, b, b_scale, groups, out, m, ldsa, sb):
    args = _capi.GroupedGemmArgs()
    _capi.lib().bs_grouped_gemm_args_init(args)
    args.a, args.a_scale, args.b, args.b_scale = (a.data_ptr(), a_scale.data_ptr(),
                                                  b.data_ptr(), b_scale.data_ptr())
    args.groups, args.c, args.m, args.ldsa = groups.data_ptr(), out.data_ptr(), m, ldsa
    args.sb_stride_g, args.sb_stride_n, args.sb_stride_k = sb
    return args


def _grouped_mm_impl(a: Tensor, a_scale: Tensor, b: Tensor, b_scale: Tensor, offs: Tensor,
                     out_dtype: torch.dtype = torch.bfloat16) -> Tensor:
    out_name = _out_name("grouped_mm", out_dtype)
    M, N, K, G, ldsa, sb = _grouped_check.check_contiguous(
        _t(a), _t(a_scale), _t(b), _t(b_scale), _t(offs), out_name)
    _same_device("grouped_mm", a, a_scale, b, b_scale, offs)
    out = torch.empty((M, N), dtype=out_dtype, device=a.device)
    if M == 0:
        return out
    kern = _kernel("contiguous", G, N, K, 0, FP8_DTYPES[a.dtype], FP8_DTYPES[b.dtype],
                   out_name, _m_bucket(max(1, M // G)))
    _launch_on(kern, _args(a, a_scale, b, b_scale, offs, out, M, ldsa, sb), a.device)
    return out


_grouped_mm_op = torch.library.custom_op("blockscale::grouped_mm", mutates_args=())(
    _grouped_mm_impl)


@_grouped_mm_op.register_fake
def _(a, a_scale, b, b_scale, offs, out_dtype=torch.bfloat16):
    _grouped_check.check_contiguous(_t(a), _t(a_scale), _t(b), _t(b_scale), _t(offs),
                                    _out_name("grouped_mm", out_dtype))
    return a.new_empty((a.shape[0], b.shape[1]), dtype=out_dtype)


def grouped_mm(a: Tensor, a_scale: Tensor, b: Tensor, b_scale: Tensor, offs: Tensor,
               out_dtype: torch.dtype = torch.bfloat16) -> Tensor:
    """out (M, N) with out[offs[g-1]:offs[g]] = a[offs[g-1]:offs[g]] @ b[g].T (the
    custom op ``torch.ops.blockscale.grouped_mm``); see the module docstring."""
    if _direct(a, a_scale, b, b_scale, offs):
        return _grouped_mm_impl(a, a_scale, b, b_scale, offs, out_dtype)
    return _grouped_mm_op(a, a_scale, b, b_scale, offs, out_dtype)


def _grouped_mm_masked_impl(a: Tensor, a_scale: Tensor, b: Tensor, b_scale: Tensor,
                            counts: Tensor,
                            out_dtype: torch.dtype = torch.bfloat16) -> Tensor:
    out_name = _out_name("grouped_mm_masked", out_dtype)
    G, Mmax, N, K, ldsa, sb = _grouped_check.check_masked(
        _t(a), _t(a_scale), _t(b), _t(b_scale), _t(counts), out_name)
    _same_device("grouped_mm_masked", a, a_scale, b, b_scale, counts)
    out = torch.empty((G, Mmax, N), dtype=out_dtype, device=a.device)
    kern = _kernel("masked", G, N, K, Mmax, FP8_DTYPES[a.dtype], FP8_DTYPES[b.dtype],
                   out_name, _m_bucket(Mmax))
    _launch_on(kern, _args(a, a_scale, b, b_scale, counts, out, -1, ldsa, sb), a.device)
    return out


_grouped_mm_masked_op = torch.library.custom_op("blockscale::grouped_mm_masked",
                                                mutates_args=())(_grouped_mm_masked_impl)


@_grouped_mm_masked_op.register_fake
def _(a, a_scale, b, b_scale, counts, out_dtype=torch.bfloat16):
    _grouped_check.check_masked(_t(a), _t(a_scale), _t(b), _t(b_scale), _t(counts),
                                _out_name("grouped_mm_masked", out_dtype))
    return a.new_empty((a.shape[0], a.shape[1], b.shape[1]), dtype=out_dtype)


def grouped_mm_masked(a: Tensor, a_scale: Tensor, b: Tensor, b_scale: Tensor,
                      counts: Tensor, out_dtype: torch.dtype = torch.bfloat16) -> Tensor:
    """out (G, Mmax, N) with out[g, :counts[g]] = a[g, :counts[g]] @ b[g].T (the custom
    op ``torch.ops.blockscale.grouped_mm_masked``); rows past a count are not
    written."""
    if _direct(a, a_scale, b, b_scale, counts):
        return _grouped_mm_masked_impl(a, a_scale, b, b_scale, counts, out_dtype)
    return _grouped_mm_masked_op(a, a_scale, b, b_scale, counts, out_dtype)


def quantize_grouped_weight(w: Tensor, fp8_dtype: torch.dtype = torch.float8_e4m3fn
                            ) -> Tuple[Tensor, Tensor]:
    """(G, N, K) expert weights -> (q (G, N, K) float8, s (G, ceil(N/128),
    ceil(K/128)) float32): each expert's 128x128 cast (blockscale.quantize),
    stacked in the layout grouped_mm and grouped_mm_masked read. A step that
    also needs the transposed weights (the grad-input GEMM) gets both layouts
    from one cast with quantize_grouped_weight_dual."""
    from .ops import quantize
    if w.dim() != 3:
        raise ValueError(f"blockscale.quantize_grouped_weight: expected a 3-D (G, N, K) "
                         f"tensor but got {w.dim()}-D")
    qs, ss = zip(*(quantize(w[g], "128x128", fp8_dtype=fp8_dtype) for g in range(w.shape[0])))
    return torch.stack(qs), torch.stack([s.contiguous() for s in ss])


_gwdual_kernels = {}


def _gw_err(msg):
    raise ValueError("blockscale.quantize_grouped_weight_dual: " + msg)


def _grouped_weight_dual_outputs(w, fp8_dtype):
    if fp8_dtype not in FP8_DTYPES:
        _gw_err(f"expected fp8_dtype float8_e4m3fn or float8_e5m2 but got {fp8_dtype}")
    if w.dim() != 3 or w.dtype not in _IN_NAMES:
        _gw_err(f"expected a 3-D (G, N, K) bfloat16/float16/float32 tensor but got "
                f"{w.dim()}-D {w.dtype}")
    G, N, K = w.shape
    if N % 16 or K % 16:
        _gw_err(f"expected N and K to be multiples of 16 (each is the FP8 row length of one "
                f"result) but got N = {N}, K = {K}; use quantize_grouped_weight on w and on "
                f"w.transpose(1, 2).contiguous()")
    nb, kb = (N + 127) // 128, (K + 127) // 128
    dev = w.device
    return (torch.empty((G, N, K), dtype=fp8_dtype, device=dev),
            torch.empty((G, nb, kb), dtype=torch.float32, device=dev),
            torch.empty((G, K, N), dtype=fp8_dtype, device=dev),
            torch.empty((G, kb, nb), dtype=torch.float32, device=dev))


def _quantize_grouped_weight_dual_impl(w: Tensor,
                                       fp8_dtype: torch.dtype = torch.float8_e4m3fn
                                       ) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    wq, ws, wtq, wts = _grouped_weight_dual_outputs(w, fp8_dtype)
    G, N, K = w.shape
    if w.device.type != "cuda":
        _gw_err(f"expected a CUDA tensor but got {w.device}")
    if G == 0 or N == 0 or K == 0:
        return wq, ws, wtq, wts
    # Strides of dims of size 1 are arbitrary; the kernel reads packed ones.
    ldx = w.stride(1) if N > 1 else K
    gsx = w.stride(0) if G > 1 else N * ldx
    esize = w.element_size()
    if (K > 1 and w.stride(2) != 1) or ldx < K or gsx < N * ldx or (
            ldx * esize) % 16 or (gsx * esize) % 16 or w.data_ptr() % 16:
        _gw_err(f"expected each expert row-major (unit K stride) with 16-byte aligned rows "
                f"and experts, not overlapping, but got strides {tuple(w.stride())} of "
                f"{w.dtype}")
    key = (_IN_NAMES[w.dtype], FP8_DTYPES[fp8_dtype], K)
    kern = _gwdual_kernels.get(key)
    if kern is None:
        desc = _capi.quant_desc(in_dtype=key[0], out_type=key[1], block=(128, 128),
                                rows=-1, cols=K, dual=True, groups=-1)
        kern = _gwdual_kernels.setdefault(key, _capi.QuantKernel(desc))
    args = _capi.QuantArgs()
    _capi.lib().bs_quant_args_init(args)
    args.x, args.q, args.scale = w.data_ptr(), wq.data_ptr(), ws.data_ptr()
    args.q_t, args.scale_t = wtq.data_ptr(), wts.data_ptr()
    args.rows, args.ldx, args.ldq, args.ldq_t = N, ldx, K, N
    args.ld_scale, args.ld_scale_t = ws.shape[2], wts.shape[2]
    args.groups, args.group_stride_x = G, gsx
    _launch_on(kern, args, w.device)
    return wq, ws, wtq, wts


_quantize_grouped_weight_dual_op = torch.library.custom_op(
    "blockscale::quantize_grouped_weight_dual", mutates_args=())(
        _quantize_grouped_weight_dual_impl)


@_quantize_grouped_weight_dual_op.register_fake
def _(w, fp8_dtype=torch.float8_e4m3fn):
    return _grouped_weight_dual_outputs(w, fp8_dtype)


def quantize_grouped_weight_dual(w: Tensor, fp8_dtype: torch.dtype = torch.float8_e4m3fn
                                 ) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    """Both layouts of (G, N, K) expert weights from one read of them (the
    custom op ``torch.ops.blockscale.quantize_grouped_weight_dual``): ``(wq,
    ws, wtq, wts)`` where ``wq, ws`` equal ``quantize_grouped_weight(w)``, the
    forward's b and b_scale, and ``wtq`` (G, K, N), ``wts`` (G, ceil(K/128),
    ceil(N/128)) equal ``quantize_grouped_weight(w.transpose(1, 2)
    .contiguous())``, the grad-input GEMM's, bit for bit, without the bf16
    transpose copy or a second cast. One kernel casts every expert (128x128
    blocks that never straddle two experts). N and K must be multiples of
    16; each expert row-major (any 16-byte aligned row and expert strides).
    """
    if _direct(w):
        return _quantize_grouped_weight_dual_impl(w, fp8_dtype)
    return _quantize_grouped_weight_dual_op(w, fp8_dtype)


def quantize_grouped_activation_masked(x: Tensor, fp8_dtype: torch.dtype = torch.float8_e4m3fn
                                       ) -> Tuple[Tensor, Tensor]:
    """(G, Mmax, K) activations -> (q (G, Mmax, K), s (G, Mmax, ceil(K/128))): the
    1x128 cast of x.view(G * Mmax, K), its scales viewed 3-D (strides (Mmax, 1,
    ldsa)), as grouped_mm_masked reads them."""
    from .ops import quantize
    if x.dim() != 3:
        raise ValueError(f"blockscale.quantize_grouped_activation_masked: expected a 3-D "
                         f"(G, Mmax, K) tensor but got {x.dim()}-D")
    G, Mmax, K = x.shape
    q, s = quantize(x.reshape(G * Mmax, K), "1x128", fp8_dtype=fp8_dtype)
    kb = s.shape[1]
    ld = s.stride(1) if kb > 1 else G * Mmax
    return (q.view(G, Mmax, K),
            s.as_strided((G, Mmax, kb), (Mmax, 1, ld), s.storage_offset()))


# ---------------------------------------------------------------------------
# k-grouped weight gradient: dW[g] = dY[tokens of g]^T @ X[tokens of g]
# ---------------------------------------------------------------------------

_IN_NAMES = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32"}
_gquant_kernels = {}


def _k_scale(rows, blocks, device):
    """(rows, blocks) f32 scales, rows-contiguous with a 16-byte block stride."""
    ld = (rows + 3) // 4 * 4
    buf = torch.empty(max(blocks * ld, 1), dtype=torch.float32, device=device)
    return buf.as_strided((rows, blocks), (1, ld))


def _quantize_grouped_tokens_impl(x: Tensor, offs: Tensor,
                                  fp8_dtype: torch.dtype = torch.float8_e4m3fn
                                  ) -> Tuple[Tensor, Tensor]:
    T, C, G, ldx, cap = _grouped_check.check_grouped_tokens(
        _t(x), _t(offs), FP8_DTYPES.get(fp8_dtype, str(fp8_dtype)))
    devs = {x.device, offs.device}
    if len(devs) != 1 or x.device.type != "cuda":
        raise ValueError(f"blockscale.quantize_grouped_tokens: expected x and offs on one "
                         f"CUDA device but got {sorted(map(str, devs))}")
    if T and x.data_ptr() % 16:
        raise ValueError("blockscale.quantize_grouped_tokens: expected x to start at a "
                         "16-byte aligned address (TMA)")
    q = torch.empty((C, cap), dtype=fp8_dtype, device=x.device)
    s = _k_scale(C, cap // 128, x.device)
    if T == 0:
        return q, s
    key = (_IN_NAMES[x.dtype], FP8_DTYPES[fp8_dtype], C, G)
    kern = _gquant_kernels.get(key)
    if kern is None:
        desc = _capi.grouped_quant_desc(in_dtype=key[0], out_type=key[1], cols=C, groups=G)
        kern = _gquant_kernels.setdefault(key, _capi.GroupedQuantKernel(desc))
    args = _capi.GroupedQuantArgs()
    _capi.lib().bs_grouped_quant_args_init(args)
    args.x, args.q, args.scale, args.offs = (x.data_ptr(), q.data_ptr(), s.data_ptr(),
                                             offs.data_ptr())
    args.tokens, args.capacity, args.ldx, args.ld_scale = T, cap, ldx, s.stride(1)
    _launch_on(kern, args, x.device)
    return q, s


_quantize_grouped_tokens_op = torch.library.custom_op(
    "blockscale::quantize_grouped_tokens", mutates_args=())(_quantize_grouped_tokens_impl)


@_quantize_grouped_tokens_op.register_fake
def _(x, offs, fp8_dtype=torch.float8_e4m3fn):
    T, C, G, ldx, cap = _grouped_check.check_grouped_tokens(
        _t(x), _t(offs), FP8_DTYPES.get(fp8_dtype, str(fp8_dtype)))
    return x.new_empty((C, cap), dtype=fp8_dtype), _k_scale(C, cap // 128, x.device)


def quantize_grouped_tokens(x: Tensor, offs: Tensor,
                            fp8_dtype: torch.dtype = torch.float8_e4m3fn
                            ) -> Tuple[Tensor, Tensor]:
    """The group-aware FP8 cast of a k-grouped GEMM's operand (the custom op
    ``torch.ops.blockscale.quantize_grouped_tokens``).

    x (T, C) bf16/f16/f32 row-major holds tokens sorted by group, group g
    owning tokens [offs[g-1], offs[g]) (offs (G,) int32 on the device, as
    grouped_mm's). Returns q (C, capacity) float8, x^T with every group
    starting at a multiple of 128 tokens (group g at padded token block
    sum_{i<g} ceil(size_i/128), zero past its end), and s (C, capacity/128)
    float32, C-contiguous: one decode scale per column and 128-token block of
    a group, amax over the group's tokens in the block / fp8_max. capacity =
    round_up(T, 128) + 128 * G, fixed by the shapes, so no host
    synchronization. dY^T and X^T cast this way are the a and b of
    grouped_mm_k (1x128 and 128x1 along tokens, the dense weight gradient's
    recipe). Blocks past the last group's are left unwritten.
    """
    if _direct(x, offs):
        return _quantize_grouped_tokens_impl(x, offs, fp8_dtype)
    return _quantize_grouped_tokens_op(x, offs, fp8_dtype)


_k_kernels = {}


def _k_kernel(G, M, N, a_t, b_t, out, accumulate, hint):
    key = (G, M, N, a_t, b_t, out, accumulate, hint)
    kern = _k_kernels.get(key)
    if kern is None:
        desc = _capi.grouped_desc(grouping="k", groups=G, n=N, k=0, m=M, a_type=a_t,
                                  b_type=b_t, out_dtype=out, accumulate=accumulate,
                                  m_per_group_hint=hint)
        kern = _k_kernels.setdefault(key, _capi.GroupedGemmKernel(desc))
    return kern


def _k_devices(op, *tensors):
    devs = {t.device for t in tensors}
    if len(devs) != 1 or next(iter(devs)).type != "cuda":
        raise ValueError(f"blockscale.{op}: expected all operands on one CUDA device but got "
                         f"{sorted(map(str, devs))}")
    for t, name in zip(tensors, ("a", "a_scale", "b", "b_scale")):
        if t.data_ptr() % 16:
            raise ValueError(f"blockscale.{op}: expected {name} to start at a 16-byte "
                             f"aligned address (TMA)")


def _launch_k(a, a_scale, b, b_scale, offs, out, accumulate, dims):
    G, M, N, cap, ldsa, ldsb = dims
    kern = _k_kernel(G, M, N, FP8_DTYPES[a.dtype], FP8_DTYPES[b.dtype],
                     OUT_DTYPES[out.dtype], accumulate,
                     _m_bucket(max(1, (cap - 128 * G) // G)))
    args = _capi.GroupedGemmArgs()
    _capi.lib().bs_grouped_gemm_args_init(args)
    args.a, args.a_scale, args.b, args.b_scale = (a.data_ptr(), a_scale.data_ptr(),
                                                  b.data_ptr(), b_scale.data_ptr())
    args.groups, args.c = offs.data_ptr(), out.data_ptr()
    args.capacity, args.ldsa, args.ldsb = cap, ldsa, ldsb
    _launch_on(kern, args, a.device)


def _grouped_mm_k_impl(a: Tensor, a_scale: Tensor, b: Tensor, b_scale: Tensor, offs: Tensor,
                       out_dtype: torch.dtype = torch.float32) -> Tensor:
    dims = _grouped_check.check_k(_t(a), _t(a_scale), _t(b), _t(b_scale), _t(offs),
                                  _out_name("grouped_mm_k", out_dtype))
    _k_devices("grouped_mm_k", a, a_scale, b, b_scale, offs)
    G, M, N = dims[:3]
    out = torch.empty((G, M, N), dtype=out_dtype, device=a.device)
    _launch_k(a, a_scale, b, b_scale, offs, out, False, dims)
    return out


_grouped_mm_k_op = torch.library.custom_op("blockscale::grouped_mm_k", mutates_args=())(
    _grouped_mm_k_impl)


@_grouped_mm_k_op.register_fake
def _(a, a_scale, b, b_scale, offs, out_dtype=torch.float32):
    G, M, N = _grouped_check.check_k(_t(a), _t(a_scale), _t(b), _t(b_scale), _t(offs),
                                     _out_name("grouped_mm_k", out_dtype))[:3]
    return a.new_empty((G, M, N), dtype=out_dtype)


def grouped_mm_k(a: Tensor, a_scale: Tensor, b: Tensor, b_scale: Tensor, offs: Tensor,
                 out_dtype: torch.dtype = torch.float32) -> Tensor:
    """The k-grouped GEMM of a mixture-of-experts weight gradient (the custom op
    ``torch.ops.blockscale.grouped_mm_k``): out (G, M, N) with out[g] =
    a[:, tokens of g] @ b[:, tokens of g].T, i.e. dW[g] = dY_g^T X_g for

      a, a_scale = quantize_grouped_tokens(dY, offs)   # (M, capacity), (M, capacity/128)
      b, b_scale = quantize_grouped_tokens(X, offs)    # (N, capacity), (N, capacity/128)

    with the same offs (G,) int32 on the device. A group without tokens gets
    zeros. out_dtype float32 or bfloat16; grouped_mm_k_accumulate adds into
    an f32 tensor instead. No host synchronization (CUDA-graph capturable).
    """
    if _direct(a, a_scale, b, b_scale, offs):
        return _grouped_mm_k_impl(a, a_scale, b, b_scale, offs, out_dtype)
    return _grouped_mm_k_op(a, a_scale, b, b_scale, offs, out_dtype)


def _grouped_mm_k_accumulate_impl(c: Tensor, a: Tensor, a_scale: Tensor, b: Tensor,
                                  b_scale: Tensor, offs: Tensor) -> None:
    op = "grouped_mm_k_accumulate"
    dims = _grouped_check.check_k(_t(a), _t(a_scale), _t(b), _t(b_scale), _t(offs), "f32",
                                  op=op)
    G, M, N = dims[:3]
    if c.dtype != torch.float32 or tuple(c.shape) != (G, M, N) or not c.is_contiguous():
        raise ValueError(f"blockscale.{op}: expected c to be a contiguous float32 tensor of "
                         f"shape (G, M, N) = {(G, M, N)} but got {c.dtype} "
                         f"{tuple(c.shape)} strides {tuple(c.stride())}")
    _k_devices(op, a, a_scale, b, b_scale, offs, c)
    if c.data_ptr() % 16:
        raise ValueError(f"blockscale.{op}: expected c to start at a 16-byte aligned "
                         f"address (TMA reduce-add)")
    _launch_k(a, a_scale, b, b_scale, offs, c, True, dims)


_grouped_mm_k_accumulate_op = torch.library.custom_op(
    "blockscale::grouped_mm_k_accumulate", mutates_args=("c",))(
        _grouped_mm_k_accumulate_impl)


@_grouped_mm_k_accumulate_op.register_fake
def _(c, a, a_scale, b, b_scale, offs):
    return None


def grouped_mm_k_accumulate(c: Tensor, a: Tensor, a_scale: Tensor, b: Tensor,
                            b_scale: Tensor, offs: Tensor) -> None:
    """c (G, M, N) float32 += grouped_mm_k(a, a_scale, b, b_scale, offs) (the
    custom op ``torch.ops.blockscale.grouped_mm_k_accumulate``); a group without
    tokens leaves its c[g] as it was."""
    if _direct(c, a, a_scale, b, b_scale, offs):
        return _grouped_mm_k_accumulate_impl(c, a, a_scale, b, b_scale, offs)
    return _grouped_mm_k_accumulate_op(c, a, a_scale, b, b_scale, offs)
