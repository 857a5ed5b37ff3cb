# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""PyTorch custom ops over the blockscale JIT.

``scaled_mm``, ``quantize`` and ``quantize_dual`` are registered with ``torch.library.custom_op``
and have fake implementations, so ``torch.compile(fullgraph=True)`` traces
them without graph breaks. Layouts are checked, never fixed up: a tensor in
the wrong order is an error that names the layout needed (no hidden
``.contiguous()``). The public functions call the implementation directly
when nothing needs the dispatcher (plain tensors in eager mode, see
``_direct``), and the custom op otherwise.
"""
import functools
import os
from typing import Tuple

import torch
from torch import Tensor

from . import _capi
from . import _device

FP8_DTYPES = {torch.float8_e4m3fn: "e4m3", torch.float8_e5m2: "e5m2"}
OUT_DTYPES = {torch.bfloat16: "bf16", torch.float32: "f32"}
IN_DTYPES = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32"}
RECIPES = {"1x128": (1, 128), "128x1": (128, 1), "128x128": (128, 128)}
LAYOUTS = ("row_major", "col_major")


def _cdiv(a, b):
    return (a + b - 1) // b


def _round_up(a, b):
    return _cdiv(a, b) * b


@functools.lru_cache(maxsize=4096)
def scale_geometry(recipe, shape, ld=0):
    """Logical shape, strides and allocation (elements) of the scales of a
    tensor with logical ``shape`` quantized with ``recipe``, in the layout the
    kernels read: the library's one rule (ScaleLayout.h, also what
    ``--blockscale-pad-scales`` writes into the IR), asked through the C API.
    """
    if recipe not in RECIPES:
        raise ValueError(f"expected recipe '1x128', '128x1' or '128x128' but got {recipe!r}")
    r0, r1, sr, sc, alloc = _capi.recipe_scale_geometry(RECIPES[recipe], int(shape[0]),
                                                        int(shape[1]), ld)
    return (r0, r1), (sr, sc), alloc


_ELEM_BYTES = {torch.bfloat16: 2, torch.float16: 2, torch.float32: 4}


def _out_strides(n, dtype):
    size = _ELEM_BYTES.get(dtype) or torch.empty((), dtype=dtype).element_size()
    return (_round_up(n, 16 // size), 1)


_ALWAYS_DISPATCH = os.environ.get("BLOCKSCALE_ALWAYS_DISPATCH", "") not in ("", "0")
_dispatch_stack_len = getattr(torch._C, "_len_torch_dispatch_stack", None)
_function_mode_on = getattr(torch._C, "_is_torch_function_mode_enabled", None)
_PLAIN = (torch.Tensor, torch.nn.Parameter)  # no __torch_function__ / dispatch of their own


def _direct(*tensors):
    """Whether an eager call may run the implementation without going through
    the PyTorch dispatcher, whose custom-op path cost ~47 of the ~79 us of a
    scaled_mm call (bench/tools/host_path_probe.py measures it): plain
    tensors, no torch.compile tracing, no torch-function or dispatch mode, and
    nothing for autograd to record. Everything else (torch.compile, DTensor,
    fake tensors, modes such as profilers' and FlopCounterMode, inputs that
    require grad) goes through the custom op, as does every call when
    BLOCKSCALE_ALWAYS_DISPATCH=1."""
    if torch.compiler.is_compiling() or _ALWAYS_DISPATCH:
        return False
    if _dispatch_stack_len is None or _function_mode_on is None:
        return False
    if _dispatch_stack_len() or _function_mode_on():
        return False
    grad = torch.is_grad_enabled()
    for t in tensors:
        if type(t) not in _PLAIN or (grad and t.requires_grad):
            return False
    return True


_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
_sm90_devices = set()


def _require_sm90(idx):
    """UnsupportedGPUError naming the GPU unless device `idx` is sm_90 (the
    kernels are sm_90a code); checked once per device."""
    _device.check_capability(torch.cuda.get_device_name(idx),
                             torch.cuda.get_device_capability(idx), idx)
    _sm90_devices.add(idx)


def _launch_on(kern, args, device):
    """Launches on the current stream of `device`, with that device current
    (the runtime launches in the current CUDA context)."""
    idx = device.index if device.index is not None else torch.cuda.current_device()
    if idx not in _sm90_devices:
        _require_sm90(idx)
    stream = (_raw_stream(idx) if _raw_stream is not None
              else torch.cuda.current_stream(idx).cuda_stream)
    if torch.cuda.current_device() == idx:
        kern.launch(args, stream)
    else:
        with torch.cuda.device(idx):
            kern.launch(args, stream)


def _err(msg):
    raise ValueError("blockscale.scaled_mm: " + msg)


def _major_stride(t, dim, name, needed):
    """Stride of `dim` of a 2-D tensor that must have the other dim unit
    stride; dims of size 1 have any stride."""
    other = 1 - dim
    if t.shape[other] > 1 and t.stride(other) != 1:
        _err(f"expected {name} to be {needed} (unit stride along dim {other}) but got "
             f"shape {tuple(t.shape)} strides {tuple(t.stride())}")
    _own_storage(t, name)
    return t.stride(dim) if t.shape[dim] > 1 else 0


def _own_storage(t, name, err=None, all_zero=False):
    """Refuses an expanded view (stride 0 along a dim of size > 1) where the
    launch takes a zero stride as "the default layout" and the kernels would
    read past the storage: a row stride (any zero), or the B scales' strides
    (`all_zero`: only all of them zero is the default; a broadcast along
    some dims is read as given). Empty and one-element tensors have nothing
    to read past: the default layout of one element is that element."""
    if t.numel() <= 1:
        return
    if all_zero:
        expanded = all(s == 0 for s in t.stride())
    else:
        expanded = any(n > 1 and s == 0 for n, s in zip(t.shape, t.stride()))
    if expanded:
        (err or _err)(f"expected {name} to hold its own elements but got shape "
                      f"{tuple(t.shape)} with strides {tuple(t.stride())} (stride 0: an "
                      f"expanded view); call .contiguous()")


def _check_mm(a, a_scale, b, b_scale, recipe_a, recipe_b, out_dtype):
    if recipe_a != "1x128":
        _err(f"expected recipe_a '1x128' but got {recipe_a!r}")
    if recipe_b not in ("128x128", "128x1"):
        _err(f"expected recipe_b '128x128' (fwd/dgrad) or '128x1' (wgrad) but got {recipe_b!r}")
    if out_dtype not in OUT_DTYPES:
        _err(f"expected out_dtype bfloat16 or float32 but got {out_dtype}")
    for t, name in ((a, "a"), (b, "b")):
        if t.dim() != 2 or t.dtype not in FP8_DTYPES:
            _err(f"expected {name} to be a 2-D float8_e4m3fn/float8_e5m2 tensor but got "
                 f"{t.dim()}-D {t.dtype}")
    M, K = a.shape
    if b.shape[0] != K:
        _err(f"expected b of shape (K={K}, N) but got {tuple(b.shape)}")
    N = b.shape[1]
    if K % 16:
        _err(f"expected K to be a multiple of 16 (16-byte FP8 rows for TMA) but got {K}")
    lda = _major_stride(a, 0, "a", "(M, K) row-major (K-contiguous)") or K
    ldb = _major_stride(b, 1, "b", "(K, N) column-major, i.e. the weight (N, K) "
                        "row-major passed as w.t(); quantize it with layout='col_major'") or K
    if lda < K or lda % 16 or ldb < K or ldb % 16:
        _err(f"expected row strides lda={lda}, ldb={ldb} >= K={K} and multiples of 16")
    Kb = _cdiv(K, 128)
    for t, name in ((a_scale, "a_scale"), (b_scale, "b_scale")):
        if t.dtype != torch.float32 or t.dim() != 2:
            _err(f"expected {name} to be a 2-D float32 tensor but got {t.dim()}-D {t.dtype}")
    if tuple(a_scale.shape) != (M, Kb):
        _err(f"expected a_scale of shape (M, ceil(K/128)) = {(M, Kb)} but got {tuple(a_scale.shape)}")
    # (0: a single K block, any stride; the library takes its default.)
    ldsa = _major_stride(a_scale, 1, "a_scale", "M-contiguous, e.g. "
                         "torch.empty(ceil(K/128), round_up(M, 4)).t()[:M]")
    if ldsa and (ldsa < M or ldsa % 4):
        _err(f"expected a_scale's K-block stride to be >= M={M} and a multiple of 4 "
             f"(16 bytes, TMA) but got {ldsa}")
    if recipe_b == "128x128":
        want = (Kb, _cdiv(N, 128))
        if tuple(b_scale.shape) != want:
            _err(f"expected b_scale of shape (ceil(K/128), ceil(N/128)) = {want} but got "
                 f"{tuple(b_scale.shape)} (a cuBLASLt-padded tensor can be passed as s[:{Kb}])")
        _own_storage(b_scale, "b_scale", all_zero=True)
        ldsb = 0
    else:
        want = (Kb, N)
        if tuple(b_scale.shape) != want:
            _err(f"expected b_scale of shape (ceil(K/128), N) = {want} but got {tuple(b_scale.shape)}")
        ldsb = _major_stride(b_scale, 0, "b_scale", "N-contiguous (ceil(K/128), N)")
        if ldsb and (ldsb < N or ldsb % 4):
            _err(f"expected b_scale's K-block stride to be >= N={N} and a multiple of 4 but got {ldsb}")
    devs = {t.device for t in (a, a_scale, b, b_scale)}
    if len(devs) != 1 or next(iter(devs)).type != "cuda":
        _err(f"expected all operands on one CUDA device but got {sorted(map(str, devs))}")
    for t, name in ((a, "a"), (b, "b"), (a_scale, "a_scale")) + (
            ((b_scale, "b_scale"),) if recipe_b == "128x1" else ()):
        if t.data_ptr() % 16:
            _err(f"expected {name} to start at a 16-byte aligned address (TMA)")
    return M, N, K, lda, ldb, ldsa, ldsb


_gemm_kernels = {}
_quant_kernels = {}
_workspaces = {}


def _workspace(device, nbytes):
    """Split-K scratch per device: partial tiles plus arrival counters that
    start at zero and that every launch leaves at zero, so one zeroed buffer
    serves all launches that are ordered with respect to each other."""
    ws = _workspaces.get(device.index)
    if ws is None or ws.numel() < nbytes:
        if torch.cuda.is_current_stream_capturing():
            raise RuntimeError(
                "blockscale.scaled_mm: this shape needs a larger split-K workspace than "
                "exists; run it once before capturing the CUDA graph (warm-up)")
        ws = torch.zeros(max(nbytes, 16 << 20), dtype=torch.uint8, device=device)
        _workspaces[device.index] = ws
    return ws


def _m_bucket(m):
    b = 64
    while b < m and b < 16384:
        b *= 2
    return b


def _gemm_kernel(form, n, k, a_t, b_t, out, accumulate, m):
    key = (form, n, k, a_t, b_t, out, accumulate, _m_bucket(m))
    kern = _gemm_kernels.get(key)
    if kern is None:
        desc = _capi.gemm_desc(form=form, m=-1, n=n, k=k, a_type=a_t, b_type=b_t,
                               out_dtype=out, accumulate=accumulate, m_hint=key[-1])
        kern = _gemm_kernels.setdefault(key, _capi.GemmKernel(desc))
    return kern


def _launch_mm(a, a_scale, b, b_scale, recipe_b, out, accumulate, dims):
    M, N, K, lda, ldb, ldsa, ldsb = dims
    if M == 0:
        return
    form = "wgrad" if recipe_b == "128x1" else "fwd"
    kern = _gemm_kernel(form, N, K, FP8_DTYPES[a.dtype], FP8_DTYPES[b.dtype],
                        OUT_DTYPES[out.dtype], accumulate, M)
    args = _capi.GemmArgs()
    _capi.lib().bs_gemm_args_init(args)
    args.a, args.a_scale, args.b, args.b_scale, args.c = (
        a.data_ptr(), a_scale.data_ptr(), b.data_ptr(), b_scale.data_ptr(), out.data_ptr())
    args.m, args.lda, args.ldb, args.ldc = M, lda, ldb, out.stride(0) if M > 1 else N
    args.ldsa, args.ldsb = ldsa, ldsb
    if recipe_b == "128x128":
        args.sb_stride_k, args.sb_stride_n = b_scale.stride(0), b_scale.stride(1)
    need = kern.workspace_size(M)
    if need:
        ws = _workspace(a.device, need)
        args.workspace, args.workspace_bytes = ws.data_ptr(), ws.numel()
    _launch_on(kern, args, a.device)


def _scaled_mm_impl(a: Tensor, a_scale: Tensor, b: Tensor, b_scale: Tensor, recipe_a: str,
                    recipe_b: str, out_dtype: torch.dtype) -> Tensor:
    dims = _check_mm(a, a_scale, b, b_scale, recipe_a, recipe_b, out_dtype)
    M, N = dims[0], dims[1]
    out = torch.empty_strided((M, N), _out_strides(N, out_dtype), dtype=out_dtype,
                              device=a.device)
    _launch_mm(a, a_scale, b, b_scale, recipe_b, out, False, dims)
    return out


_scaled_mm_op = torch.library.custom_op("blockscale::scaled_mm", mutates_args=())(
    _scaled_mm_impl)


def scaled_mm(a: Tensor, a_scale: Tensor, b: Tensor, b_scale: Tensor, recipe_a: str,
              recipe_b: str, out_dtype: torch.dtype) -> Tensor:
    """C = A @ B with blockwise decode scales (see the module docstring of
    blockscale for the layouts). ``recipe_b`` '128x128' is the forward /
    grad-input GEMM, '128x1' the grad-weight GEMM. The custom op
    ``torch.ops.blockscale.scaled_mm``; plain eager calls skip the
    dispatcher (``_direct``)."""
    if _direct(a, a_scale, b, b_scale):
        return _scaled_mm_impl(a, a_scale, b, b_scale, recipe_a, recipe_b, out_dtype)
    return _scaled_mm_op(a, a_scale, b, b_scale, recipe_a, recipe_b, out_dtype)


@_scaled_mm_op.register_fake
def _(a, a_scale, b, b_scale, recipe_a, recipe_b, out_dtype):
    M, N = a.shape[0], b.shape[1]
    return torch.empty_strided((M, N), _out_strides(N, out_dtype), dtype=out_dtype,
                               device=a.device)


def _scaled_mm_accumulate_impl(c: Tensor, a: Tensor, a_scale: Tensor, b: Tensor,
                               b_scale: Tensor) -> None:
    dims = _check_mm(a, a_scale, b, b_scale, "1x128", "128x1", torch.float32)
    if c.dtype != torch.float32 or tuple(c.shape) != (dims[0], dims[1]) or (
            dims[1] > 1 and c.stride(1) != 1):
        _err(f"expected c to be a row-major float32 {(dims[0], dims[1])} tensor but got "
             f"{c.dtype} {tuple(c.shape)} strides {tuple(c.stride())}")
    if (c.stride(0) * 4) % 16 or c.data_ptr() % 16:
        _err("expected c's rows to be 16-byte aligned (TMA reduce-add)")
    if dims[0] > 1 and c.stride(0) < dims[1]:
        _err(f"expected c's rows not to overlap (row stride >= N = {dims[1]}) but got "
             f"strides {tuple(c.stride())}; call .contiguous()")
    _launch_mm(a, a_scale, b, b_scale, "128x1", c, True, dims)


_scaled_mm_accumulate_op = torch.library.custom_op(
    "blockscale::scaled_mm_accumulate", mutates_args=("c",))(_scaled_mm_accumulate_impl)


def scaled_mm_accumulate(c: Tensor, a: Tensor, a_scale: Tensor, b: Tensor,
                         b_scale: Tensor) -> None:
    """c += A @ B for the grad-weight form (1x128 x 128x1), c float32 (the
    custom op ``torch.ops.blockscale.scaled_mm_accumulate``)."""
    if _direct(c, a, a_scale, b, b_scale):
        return _scaled_mm_accumulate_impl(c, a, a_scale, b, b_scale)
    return _scaled_mm_accumulate_op(c, a, a_scale, b, b_scale)


def _scale_tensor(shape, strides, device):
    """Scales as a view of a buffer that includes the padding of the leading
    stride, so that e.g. cuBLASLt's padded (round_up(Kb, 4), Nb) view of
    128x128 scales stays in bounds."""
    outer = shape[1] if strides[0] == 1 else shape[0]
    ld = max(strides)
    return torch.empty(ld * outer, dtype=torch.float32, device=device).as_strided(shape, strides)


def _q_err(msg):
    raise ValueError("blockscale.quantize: " + msg)


def _dual_err(msg):
    raise ValueError("blockscale.quantize_dual: " + msg)


def _input_row_stride(x, err):
    """The row stride of a cast's 2-D input, which the kernels read as
    16-byte aligned rows of unit column stride (TMA); `err` raises."""
    R, C = x.shape
    if C > 1 and x.stride(1) != 1:
        err(f"expected a row-major input (unit column stride) but got strides "
            f"{tuple(x.stride())}")
    ldx = x.stride(0) if R > 1 else C
    _own_storage(x, "the input", err)
    if (ldx * x.element_size()) % 16 or x.data_ptr() % 16:
        err(f"expected 16-byte aligned input rows but got row stride {ldx} x {x.dtype}")
    return ldx


def _quant_layout(x, recipe, transpose, layout, fp8_dtype):
    if recipe not in RECIPES:
        _q_err(f"expected recipe '1x128', '128x1' or '128x128' but got {recipe!r}")
    if layout not in LAYOUTS:
        _q_err(f"expected layout 'row_major' or 'col_major' but got {layout!r}")
    if fp8_dtype not in FP8_DTYPES:
        _q_err(f"expected fp8_dtype float8_e4m3fn or float8_e5m2 but got {fp8_dtype}")
    if x.dim() != 2 or x.dtype not in IN_DTYPES:
        _q_err(f"expected a 2-D bfloat16/float16/float32 tensor but got {x.dim()}-D {x.dtype}")
    R, C = x.shape
    L = (C, R) if transpose else (R, C)
    col = layout == "col_major"
    q_strides = (1, L[0]) if col else (L[1], 1)
    s_shape, s_strides, _ = scale_geometry(recipe, L)
    return R, C, L, q_strides, s_shape, s_strides


def _quant_args(lib, x: Tensor, ldx: int, q: Tensor, s: Tensor, writes_t: bool):
    """The launch arguments of a cast of the row-major (R, C) x (row stride
    ldx) into q and s, for library `lib` (the package's, or a bench's other
    build): q's rows are x's columns when the cast writes it transposed."""
    args = _capi.QuantArgs()
    lib.bs_quant_args_init(args)
    args.x, args.q, args.scale = x.data_ptr(), q.data_ptr(), s.data_ptr()
    args.rows, args.ldx = x.shape[0], ldx
    args.ldq = x.shape[0] if writes_t else x.shape[1]
    args.ld_scale = max(s.stride())
    return args


def _dual_args(lib, x: Tensor, ldx: int, q: Tensor, s: Tensor, qt: Tensor, st: Tensor):
    """The launch arguments of a dual-layout cast of x into the results of
    _dual_outputs, for library `lib` (as _quant_args)."""
    args = _quant_args(lib, x, ldx, q, s, False)
    args.q_t, args.scale_t = qt.data_ptr(), st.data_ptr()
    args.ldq_t, args.ld_scale_t = x.shape[0], max(st.stride())
    return args


def _quantize_impl(x: Tensor, recipe: str, transpose: bool = False,
                   layout: str = "row_major",
                   fp8_dtype: torch.dtype = torch.float8_e4m3fn) -> Tuple[Tensor, Tensor]:
    R, C, L, q_strides, s_shape, s_strides = _quant_layout(x, recipe, transpose, layout,
                                                           fp8_dtype)
    ldx = _input_row_stride(x, _q_err)
    writes_t = transpose != (layout == "col_major")
    if writes_t and R % 16:
        _q_err(f"expected rows to be a multiple of 16 for a transposed result (its FP8 rows "
               f"are the input's columns) but got {R}")
    if not writes_t and C % 16:
        _q_err(f"expected columns to be a multiple of 16 (16-byte FP8 rows) but got {C}")
    if x.device.type != "cuda":
        _q_err(f"expected a CUDA tensor but got {x.device}")
    q = torch.empty_strided(L, q_strides, dtype=fp8_dtype, device=x.device)
    s = _scale_tensor(s_shape, s_strides, x.device)
    if R == 0 or C == 0:
        return q, s
    key = (IN_DTYPES[x.dtype], FP8_DTYPES[fp8_dtype], recipe, transpose, layout, C)
    kern = _quant_kernels.get(key)
    if kern is None:
        desc = _capi.quant_desc(in_dtype=key[0], out_type=key[1], block=RECIPES[recipe],
                                transpose=transpose, col_major=layout == "col_major",
                                rows=-1, cols=C)
        kern = _quant_kernels.setdefault(key, _capi.QuantKernel(desc))
    _launch_on(kern, _quant_args(_capi.lib(), x, ldx, q, s, writes_t), x.device)
    return q, s


_quantize_op = torch.library.custom_op("blockscale::quantize", mutates_args=())(_quantize_impl)


def quantize(x: Tensor, recipe: str, transpose: bool = False, layout: str = "row_major",
             fp8_dtype: torch.dtype = torch.float8_e4m3fn) -> Tuple[Tensor, Tensor]:
    """FP8 cast with blockwise decode scales of the (optionally transposed)
    row-major input; returns (q, scale) as logical tensors whose strides are
    the physical layout the matmul kernels read. The custom op
    ``torch.ops.blockscale.quantize``; plain eager calls skip the dispatcher
    (``_direct``)."""
    if _direct(x):
        return _quantize_impl(x, recipe, transpose, layout, fp8_dtype)
    return _quantize_op(x, recipe, transpose, layout, fp8_dtype)


@_quantize_op.register_fake
def _(x, recipe, transpose=False, layout="row_major", fp8_dtype=torch.float8_e4m3fn):
    R, C, L, q_strides, s_shape, s_strides = _quant_layout(x, recipe, transpose, layout,
                                                           fp8_dtype)
    q = torch.empty_strided(L, q_strides, dtype=fp8_dtype, device=x.device)
    s = _scale_tensor(s_shape, s_strides, x.device)
    return q, s


@_scaled_mm_accumulate_op.register_fake
def _(c, a, a_scale, b, b_scale):
    return None


DUAL_RECIPES = ("1x128", "128x128")


def _dual_layout(x, recipe, fp8_dtype):
    if recipe not in DUAL_RECIPES:
        _dual_err(f"expected recipe '1x128' or '128x128' (blocks of the result in input "
                  f"order) but got {recipe!r}; cast a 128x1 result with blockscale.quantize")
    R, C, L, q_strides, s_shape, s_strides = _quant_layout(x, recipe, False, "row_major",
                                                           fp8_dtype)
    _, _, Lt, qt_strides, st_shape, st_strides = _quant_layout(x, recipe, True, "row_major",
                                                               fp8_dtype)
    return R, C, (L, q_strides, s_shape, s_strides), (Lt, qt_strides, st_shape, st_strides)


def _dual_outputs(x, recipe, fp8_dtype):
    R, C, first, second = _dual_layout(x, recipe, fp8_dtype)
    out = []
    for L, q_strides, s_shape, s_strides in (first, second):
        out.append(torch.empty_strided(L, q_strides, dtype=fp8_dtype, device=x.device))
        out.append(_scale_tensor(s_shape, s_strides, x.device))
    return R, C, out


def _quantize_dual_impl(x: Tensor, recipe: str,
                        fp8_dtype: torch.dtype = torch.float8_e4m3fn
                        ) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    R, C, (q, s, qt, st) = _dual_outputs(x, recipe, fp8_dtype)
    ldx = _input_row_stride(x, _dual_err)
    if R % 16 or C % 16:
        _dual_err(f"expected rows and columns to be multiples of 16 (each is the FP8 row "
                  f"length of one result) but got {R}x{C}; pad the tensor or use two "
                  f"blockscale.quantize calls")
    if x.device.type != "cuda":
        _dual_err(f"expected a CUDA tensor but got {x.device}")
    if R == 0 or C == 0:
        return q, s, qt, st
    key = (IN_DTYPES[x.dtype], FP8_DTYPES[fp8_dtype], recipe, "dual", C)
    kern = _quant_kernels.get(key)
    if kern is None:
        desc = _capi.quant_desc(in_dtype=key[0], out_type=key[1], block=RECIPES[recipe],
                                rows=-1, cols=C, dual=True)
        kern = _quant_kernels.setdefault(key, _capi.QuantKernel(desc))
    _launch_on(kern, _dual_args(_capi.lib(), x, ldx, q, s, qt, st), x.device)
    return q, s, qt, st


_quantize_dual_op = torch.library.custom_op("blockscale::quantize_dual", mutates_args=())(
    _quantize_dual_impl)


def quantize_dual(x: Tensor, recipe: str, fp8_dtype: torch.dtype = torch.float8_e4m3fn
                  ) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    """Both FP8 layouts of a row-major (R, C) tensor from one read of it:
    ``(q, s, qt, st)`` where ``q, s`` equal ``quantize(x, recipe)`` and ``qt,
    st`` equal ``quantize(x, recipe, transpose=True)``, bit for bit.

    * ``'1x128'``: an activation or output gradient: ``q`` is the 1x128 (M,
      K) operand of the forward / grad-input GEMM, ``qt`` the 1x128-along-
      rows operand of the grad-weight GEMM (``dy^T``), or, as ``qt.t()``,
      ``st.t()``, ``x``'s 128x1 column-major grad-weight operand.
    * ``'128x128'``: a weight (N, K): ``q.t()``, ``s.t()`` is the forward B
      operand, ``qt.t()``, ``st.t()`` the grad-input one (``st`` holds the
      same block scales as ``s``, transposed).

    R and C must be multiples of 16. The custom op
    ``torch.ops.blockscale.quantize_dual``."""
    if _direct(x):
        return _quantize_dual_impl(x, recipe, fp8_dtype)
    return _quantize_dual_op(x, recipe, fp8_dtype)


@_quantize_dual_op.register_fake
def _(x, recipe, fp8_dtype=torch.float8_e4m3fn):
    return tuple(_dual_outputs(x, recipe, fp8_dtype)[2])
