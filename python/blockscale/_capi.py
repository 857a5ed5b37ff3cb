# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""ctypes bindings of include/blockscale-c/blockscale.h (no build step).

The shared library is found, in order, at $BLOCKSCALE_LIB, next to this
package (``_lib/libblockscale_c.so``, where a wheel puts it), or in the
repository's ``build/lib``. Before it is loaded, NVRTC is looked up
(``_nvrtc.preload``): without a CUDA toolkit, the one of pip's
``nvidia-cuda-nvrtc`` wheel is loaded so that the library finds it. Needs
only the standard library (no torch).
"""
import ctypes
import operator
import os
import threading

BS_SUCCESS = 0
STATUS_NAMES = {1: "invalid argument", 2: "compile error", 3: "no device",
                4: "CUDA error", 5: "internal error"}
FORMS = {"fwd": 0, "dgrad": 1, "wgrad": 2}
FP8 = {"e4m3": 0, "e5m2": 1}
DTYPES = {"bf16": 0, "f16": 1, "f32": 2}
DEBUG = {"hang": 1, "timeline": 2}
GROUPINGS = {"contiguous": 0, "masked": 1, "k": 2}


class BlockscaleError(RuntimeError):
    """A failing C API call; ``status`` is the bs_status_t code."""

    def __init__(self, status, message):
        super().__init__(f"blockscale ({STATUS_NAMES.get(status, status)}): {message}")
        self.status = status


_C_INT_RANGES = {ctypes.c_int32: (-2**31, 2**31 - 1, "int32"),
                 ctypes.c_int64: (-2**63, 2**63 - 1, "int64")}


def _checked_int(what, value, ctype=ctypes.c_int64):
    """`value` as an integer that `ctype` holds: ctypes would wrap it silently
    (2**64 + 512 as 512), so a size out of range must fail here. Only exact
    integers convert (operator.index: ints, NumPy and 0-d integer tensors,
    torch's SymInt); a float or Decimal would be truncated."""
    lo, hi, cname = _C_INT_RANGES[ctype]
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"expected an integer for {what} but got {value!r}") from None
    if not lo <= value <= hi:
        raise ValueError(f"expected {what} in [{lo}, {hi}] (an {cname}) but got "
                         f"{value}")
    return value


def _pick(table, what, value):
    """table[value], or a ValueError that lists the names `what` takes."""
    try:
        return table[value]
    except (KeyError, TypeError):
        raise ValueError(f"expected {what} from {', '.join(map(repr, table))} but got "
                         f"{value!r}") from None


def _cstr(what, value):
    """A str or bytes option as the bytes of a C string (None: not set)."""
    if value is None or isinstance(value, bytes):
        return value or None
    if isinstance(value, str):
        return value.encode() or None
    raise TypeError(f"expected a str for {what} but got {value!r}")


class _Desc(ctypes.Structure):
    """A descriptor of the C API: its integer fields refuse what their C type
    would wrap and its strings refuse an embedded NUL (C would cut them
    there), so a bad value is an error naming the field, never another
    kernel."""

    def __setattr__(self, name, value):
        t = dict(type(self)._fields_).get(name)
        if t in _C_INT_RANGES:
            value = _checked_int(f"{type(self).__name__}.{name}", value, t)
        elif t is ctypes.c_char_p and isinstance(value, bytes) and b"\0" in value:
            raise ValueError(f"expected {type(self).__name__}.{name} without a NUL byte but "
                             f"got {value!r}")
        super().__setattr__(name, value)


class GemmDesc(_Desc):
    _fields_ = [("struct_size", ctypes.c_int32), ("form", ctypes.c_int32),
                ("m", ctypes.c_int64), ("n", ctypes.c_int64), ("k", ctypes.c_int64),
                ("a_type", ctypes.c_int32), ("b_type", ctypes.c_int32),
                ("out_dtype", ctypes.c_int32), ("accumulate", ctypes.c_int32),
                ("m_hint", ctypes.c_int64), ("force_tile", ctypes.c_char_p),
                ("num_sms", ctypes.c_int32), ("debug", ctypes.c_int32)]


class GemmArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_int32),
                ("a", ctypes.c_void_p), ("a_scale", ctypes.c_void_p),
                ("b", ctypes.c_void_p), ("b_scale", ctypes.c_void_p),
                ("c", ctypes.c_void_p), ("m", ctypes.c_int64),
                ("lda", ctypes.c_int64), ("ldb", ctypes.c_int64), ("ldc", ctypes.c_int64),
                ("ldsa", ctypes.c_int64), ("ldsb", ctypes.c_int64),
                ("sb_stride_k", ctypes.c_int64), ("sb_stride_n", ctypes.c_int64),
                ("workspace", ctypes.c_void_p), ("workspace_bytes", ctypes.c_size_t)]


class QuantDesc(_Desc):
    _fields_ = [("struct_size", ctypes.c_int32), ("in_dtype", ctypes.c_int32),
                ("out_type", ctypes.c_int32), ("block_rows", ctypes.c_int32),
                ("block_cols", ctypes.c_int32), ("transpose", ctypes.c_int32),
                ("col_major", ctypes.c_int32), ("rows", ctypes.c_int64),
                ("cols", ctypes.c_int64), ("debug", ctypes.c_int32),
                ("dual", ctypes.c_int32), ("groups", ctypes.c_int64)]


class QuantArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_int32), ("x", ctypes.c_void_p),
                ("q", ctypes.c_void_p), ("scale", ctypes.c_void_p),
                ("rows", ctypes.c_int64), ("ldx", ctypes.c_int64),
                ("ldq", ctypes.c_int64), ("ld_scale", ctypes.c_int64),
                ("q_t", ctypes.c_void_p), ("scale_t", ctypes.c_void_p),
                ("ldq_t", ctypes.c_int64), ("ld_scale_t", ctypes.c_int64),
                ("groups", ctypes.c_int64), ("group_stride_x", ctypes.c_int64),
                ("group_stride_q", ctypes.c_int64), ("group_stride_scale", ctypes.c_int64),
                ("group_stride_q_t", ctypes.c_int64),
                ("group_stride_scale_t", ctypes.c_int64)]


class GroupedGemmDesc(_Desc):
    _fields_ = [("struct_size", ctypes.c_int32), ("grouping", ctypes.c_int32),
                ("groups", ctypes.c_int64), ("n", ctypes.c_int64), ("k", ctypes.c_int64),
                ("m_max", ctypes.c_int64), ("a_type", ctypes.c_int32),
                ("b_type", ctypes.c_int32), ("out_dtype", ctypes.c_int32),
                ("m_per_group_hint", ctypes.c_int64), ("force_tile", ctypes.c_char_p),
                ("num_sms", ctypes.c_int32), ("debug", ctypes.c_int32),
                ("m", ctypes.c_int64), ("accumulate", ctypes.c_int32)]


class GroupedGemmArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_int32),
                ("a", ctypes.c_void_p), ("a_scale", ctypes.c_void_p),
                ("b", ctypes.c_void_p), ("b_scale", ctypes.c_void_p),
                ("groups", ctypes.c_void_p), ("c", ctypes.c_void_p),
                ("m", ctypes.c_int64), ("ldsa", ctypes.c_int64),
                ("sb_stride_g", ctypes.c_int64), ("sb_stride_n", ctypes.c_int64),
                ("sb_stride_k", ctypes.c_int64), ("capacity", ctypes.c_int64),
                ("ldsb", ctypes.c_int64)]


class GroupedQuantDesc(_Desc):
    _fields_ = [("struct_size", ctypes.c_int32), ("in_dtype", ctypes.c_int32),
                ("out_type", ctypes.c_int32), ("cols", ctypes.c_int64),
                ("groups", ctypes.c_int64), ("debug", ctypes.c_int32)]


class GroupedQuantArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_int32), ("x", ctypes.c_void_p),
                ("q", ctypes.c_void_p), ("scale", ctypes.c_void_p),
                ("offs", ctypes.c_void_p), ("tokens", ctypes.c_int64),
                ("capacity", ctypes.c_int64), ("ldx", ctypes.c_int64),
                ("ld_scale", ctypes.c_int64)]


# Functions a build from before the grouped GEMMs lacks (bench/ab.py loads
# such builds); calling one of them there raises AttributeError.
_OPTIONAL = frozenset(("bs_grouped_gemm_desc_init", "bs_grouped_gemm_args_init",
                       "bs_grouped_gemm_kernel_create", "bs_grouped_gemm_kernel_destroy",
                       "bs_grouped_gemm_launch", "bs_grouped_gemm_kernel_info",
                       "bs_grouped_gemm_source", "bs_grouped_quant_desc_init",
                       "bs_grouped_quant_args_init", "bs_grouped_quant_kernel_create",
                       "bs_grouped_quant_kernel_destroy", "bs_grouped_quant_launch",
                       "bs_grouped_quant_kernel_info", "bs_grouped_quant_source",
                       "bs_grouped_token_capacity"))


def _find_library():
    env = os.environ.get("BLOCKSCALE_LIB")
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [env] if env else []
    candidates += [os.path.join(here, "_lib", "libblockscale_c.so"),
                   os.path.join(here, "..", "..", "build", "lib", "libblockscale_c.so")]
    for c in candidates:
        if c and os.path.exists(c):
            return os.path.abspath(c)
    raise OSError("libblockscale_c.so not found; build it (cmake --build build "
                  "--target blockscale_c) or set BLOCKSCALE_LIB. Looked in: "
                  + ", ".join(c for c in candidates if c))


_SIGNATURES = None


def _signatures():
    P = ctypes.POINTER
    return {
        "bs_version": ([], ctypes.c_char_p),
        "bs_last_error": ([], ctypes.c_char_p),
        "bs_gemm_desc_init": ([P(GemmDesc)], None),
        "bs_gemm_args_init": ([P(GemmArgs)], None),
        "bs_gemm_kernel_create": ([P(GemmDesc), P(ctypes.c_void_p)], ctypes.c_int),
        "bs_gemm_kernel_destroy": ([ctypes.c_void_p], None),
        "bs_gemm_launch": ([ctypes.c_void_p, P(GemmArgs), ctypes.c_void_p], ctypes.c_int),
        "bs_gemm_workspace_size": ([ctypes.c_void_p, ctypes.c_int64,
                                    P(ctypes.c_size_t)], ctypes.c_int),
        "bs_gemm_kernel_info": ([ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t], ctypes.c_int),
        "bs_quant_desc_init": ([P(QuantDesc)], None),
        "bs_quant_args_init": ([P(QuantArgs)], None),
        "bs_quant_kernel_create": ([P(QuantDesc), P(ctypes.c_void_p)], ctypes.c_int),
        "bs_quant_kernel_destroy": ([ctypes.c_void_p], None),
        "bs_quant_launch": ([ctypes.c_void_p, P(QuantArgs), ctypes.c_void_p], ctypes.c_int),
        "bs_quant_kernel_info": ([ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t],
                                 ctypes.c_int),
        "bs_quant_scale_geometry": ([P(QuantDesc), ctypes.c_int64, ctypes.c_int64,
                                     P(ctypes.c_int64)], ctypes.c_int),
        "bs_scale_geometry": ([ctypes.c_int32, ctypes.c_int32, ctypes.c_int64,
                               ctypes.c_int64, ctypes.c_int64, P(ctypes.c_int64)],
                              ctypes.c_int),
        "bs_gemm_source": ([P(GemmDesc), ctypes.c_char_p, ctypes.c_size_t,
                            P(ctypes.c_size_t)], ctypes.c_int),
        "bs_quant_source": ([P(QuantDesc), ctypes.c_char_p, ctypes.c_size_t,
                             P(ctypes.c_size_t)], ctypes.c_int),
        "bs_grouped_gemm_desc_init": ([P(GroupedGemmDesc)], None),
        "bs_grouped_gemm_args_init": ([P(GroupedGemmArgs)], None),
        "bs_grouped_gemm_kernel_create": ([P(GroupedGemmDesc), P(ctypes.c_void_p)],
                                          ctypes.c_int),
        "bs_grouped_gemm_kernel_destroy": ([ctypes.c_void_p], None),
        "bs_grouped_gemm_launch": ([ctypes.c_void_p, P(GroupedGemmArgs), ctypes.c_void_p],
                                   ctypes.c_int),
        "bs_grouped_gemm_kernel_info": ([ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t],
                                        ctypes.c_int),
        "bs_grouped_gemm_source": ([P(GroupedGemmDesc), ctypes.c_char_p, ctypes.c_size_t,
                                    P(ctypes.c_size_t)], ctypes.c_int),
        "bs_grouped_quant_desc_init": ([P(GroupedQuantDesc)], None),
        "bs_grouped_quant_args_init": ([P(GroupedQuantArgs)], None),
        "bs_grouped_quant_kernel_create": ([P(GroupedQuantDesc), P(ctypes.c_void_p)],
                                           ctypes.c_int),
        "bs_grouped_quant_kernel_destroy": ([ctypes.c_void_p], None),
        "bs_grouped_quant_launch": ([ctypes.c_void_p, P(GroupedQuantArgs),
                                     ctypes.c_void_p], ctypes.c_int),
        "bs_grouped_quant_kernel_info": ([ctypes.c_void_p, ctypes.c_char_p,
                                          ctypes.c_size_t], ctypes.c_int),
        "bs_grouped_quant_source": ([P(GroupedQuantDesc), ctypes.c_char_p, ctypes.c_size_t,
                                     P(ctypes.c_size_t)], ctypes.c_int),
        "bs_grouped_token_capacity": ([ctypes.c_int64, ctypes.c_int64], ctypes.c_int64),
        "bs_cache_stats": ([P(ctypes.c_int64)], ctypes.c_int),
        "bs_clear_memory_cache": ([], None),
        "bs_set_programmatic_launch": ([ctypes.c_int], None),
        "bs_programmatic_launch": ([], ctypes.c_int),
    }


_libs = {}
_lock = threading.Lock()
nvrtc_source = None  # where NVRTC came from (_nvrtc.preload), once loaded


def _preload_nvrtc():
    try:
        from . import _nvrtc
    except ImportError:  # this file loaded by path, outside the package
        import importlib.util
        spec = importlib.util.spec_from_file_location(
            "_blockscale_nvrtc", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                              "_nvrtc.py"))
        _nvrtc = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(_nvrtc)
    return _nvrtc.preload()


def load(path=None):
    """The C API library at `path` (default: _find_library()) with its
    signatures bound, loaded once per path. Libraries are loaded with
    RTLD_LOCAL and export only bs_* symbols, so several builds can live in
    one process side by side (bench/ab.py compares them that way)."""
    global nvrtc_source
    path = os.path.abspath(path) if path else _find_library()
    with _lock:
        L = _libs.get(path)
        if L is None:
            if nvrtc_source is None:
                nvrtc_source = _preload_nvrtc()
            L = ctypes.CDLL(path, mode=os.RTLD_LOCAL)
            sig = _signatures()
            # A build from before bs_scale_geometry (bench/ab.py compares
            # against such builds) returned the workspace size directly and
            # the cache statistics through `out` alone.
            L.bs_abi = 2 if hasattr(L, "bs_scale_geometry") else 1
            if L.bs_abi == 1:
                sig["bs_gemm_workspace_size"] = ([ctypes.c_void_p, ctypes.c_int64], ctypes.c_size_t)
                sig["bs_cache_stats"] = ([ctypes.POINTER(ctypes.c_int64)], None)
            for name, (args, res) in sig.items():
                f = getattr(L, name, None)
                if f is None and (L.bs_abi == 1 or name in _OPTIONAL):
                    continue  # (functions that build does not have)
                f.argtypes = args
                f.restype = res
            _libs[path] = L
    return L


_default = None


def lib():
    """The default library (see _find_library)."""
    global _default
    if _default is None:
        _default = load()
    return _default


def check(status, L=None):
    if status != BS_SUCCESS:
        raise BlockscaleError(status, (L or lib()).bs_last_error().decode())


def _debug_flags(debug):
    """"hang,timeline" (or an iterable of names) -> BS_DEBUG_* flags."""
    if isinstance(debug, str):
        debug = [d for d in debug.split(",") if d.strip()]
    flags = 0
    for d in debug or ():
        if d.strip() not in DEBUG:
            raise ValueError(f"expected debug options from {', '.join(DEBUG)} but got {d!r}")
        flags |= DEBUG[d.strip()]
    return flags


def gemm_desc(form="fwd", m=-1, n=0, k=0, a_type="e4m3", b_type="e4m3",
              out_dtype="bf16", accumulate=False, m_hint=4096, force_tile=None,
              num_sms=0, debug=""):
    d = GemmDesc()
    lib().bs_gemm_desc_init(ctypes.byref(d))
    d.form, d.m, d.n, d.k = _pick(FORMS, "form", form), m, n, k
    d.a_type, d.b_type = _pick(FP8, "a_type", a_type), _pick(FP8, "b_type", b_type)
    d.out_dtype = _pick(DTYPES, "out_dtype", out_dtype)
    d.accumulate, d.m_hint, d.num_sms = int(accumulate), m_hint, num_sms
    d.force_tile = _cstr("force_tile", force_tile)
    d.debug = _debug_flags(debug)
    return d


class GemmKernel:
    """An owned bs_gemm_kernel_t of library `L` (default: lib())."""

    def __init__(self, desc, L=None):
        self._desc = desc  # keeps force_tile's bytes alive
        self._L = L or lib()
        h = ctypes.c_void_p()
        check(self._L.bs_gemm_kernel_create(ctypes.byref(desc), ctypes.byref(h)), self._L)
        self.handle = h

    def __del__(self):
        if getattr(self, "handle", None):
            self._L.bs_gemm_kernel_destroy(self.handle)

    def launch(self, args, stream):
        check(self._L.bs_gemm_launch(self.handle, ctypes.byref(args), ctypes.c_void_p(stream)),
              self._L)

    def workspace_size(self, m):
        m = _checked_int("m", m)
        if self._L.bs_abi == 1:
            return self._L.bs_gemm_workspace_size(self.handle, m)
        n = ctypes.c_size_t()
        check(self._L.bs_gemm_workspace_size(self.handle, m, ctypes.byref(n)), self._L)
        return n.value

    def info(self):
        buf = ctypes.create_string_buffer(4096)
        check(self._L.bs_gemm_kernel_info(self.handle, buf, len(buf)), self._L)
        return buf.value.decode()


def grouped_desc(grouping="contiguous", groups=0, n=0, k=0, m_max=0, a_type="e4m3",
                 b_type="e4m3", out_dtype="bf16", m_per_group_hint=0, force_tile=None,
                 num_sms=0, debug="", m=0, accumulate=False, L=None):
    """A bs_grouped_gemm_desc_t initialized by library `L` (default: lib()).
    grouping 'k' is the k-grouped weight gradient (m: rows of each group's C)."""
    grouping = _pick(GROUPINGS, "grouping", grouping)
    d = GroupedGemmDesc()
    (L or lib()).bs_grouped_gemm_desc_init(ctypes.byref(d))
    d.grouping, d.groups, d.n, d.k, d.m_max = grouping, groups, n, k, m_max
    d.a_type, d.b_type = _pick(FP8, "a_type", a_type), _pick(FP8, "b_type", b_type)
    d.out_dtype = _pick(DTYPES, "out_dtype", out_dtype)
    d.m_per_group_hint, d.num_sms = m_per_group_hint, num_sms
    d.force_tile = _cstr("force_tile", force_tile)
    d.debug = _debug_flags(debug)
    d.m, d.accumulate = m, int(accumulate)
    return d


def grouped_quant_desc(in_dtype="bf16", out_type="e4m3", cols=0, groups=0, debug="",
                       L=None):
    """A bs_grouped_quant_desc_t (the group-aware cast) initialized by library `L`."""
    d = GroupedQuantDesc()
    (L or lib()).bs_grouped_quant_desc_init(ctypes.byref(d))
    d.in_dtype, d.out_type = _pick(DTYPES, "in_dtype", in_dtype), _pick(FP8, "out_type", out_type)
    d.cols, d.groups = cols, groups
    d.debug = _debug_flags(debug)
    return d


class GroupedQuantKernel:
    """An owned bs_grouped_quant_kernel_t of library `L` (default: lib())."""

    def __init__(self, desc, L=None):
        self._desc = desc
        self._L = L or lib()
        h = ctypes.c_void_p()
        check(self._L.bs_grouped_quant_kernel_create(ctypes.byref(desc), ctypes.byref(h)),
              self._L)
        self.handle = h

    def __del__(self):
        if getattr(self, "handle", None):
            self._L.bs_grouped_quant_kernel_destroy(self.handle)

    def launch(self, args, stream):
        check(self._L.bs_grouped_quant_launch(self.handle, ctypes.byref(args),
                                              ctypes.c_void_p(stream)), self._L)

    def info(self):
        buf = ctypes.create_string_buffer(4096)
        check(self._L.bs_grouped_quant_kernel_info(self.handle, buf, len(buf)), self._L)
        return buf.value.decode()


def grouped_quant_source(desc):
    needed = ctypes.c_size_t()
    check(lib().bs_grouped_quant_source(ctypes.byref(desc), None, 0, ctypes.byref(needed)))
    buf = ctypes.create_string_buffer(needed.value)
    check(lib().bs_grouped_quant_source(ctypes.byref(desc), buf, len(buf), None))
    return buf.value.decode()


class GroupedGemmKernel:
    """An owned bs_grouped_gemm_kernel_t of library `L` (default: lib())."""

    def __init__(self, desc, L=None):
        self._desc = desc  # keeps force_tile's bytes alive
        self._L = L or lib()
        h = ctypes.c_void_p()
        check(self._L.bs_grouped_gemm_kernel_create(ctypes.byref(desc), ctypes.byref(h)),
              self._L)
        self.handle = h

    def __del__(self):
        if getattr(self, "handle", None):
            self._L.bs_grouped_gemm_kernel_destroy(self.handle)

    def launch(self, args, stream):
        check(self._L.bs_grouped_gemm_launch(self.handle, ctypes.byref(args),
                                             ctypes.c_void_p(stream)), self._L)

    def info(self):
        buf = ctypes.create_string_buffer(4096)
        check(self._L.bs_grouped_gemm_kernel_info(self.handle, buf, len(buf)), self._L)
        return buf.value.decode()


def grouped_source(desc):
    needed = ctypes.c_size_t()
    check(lib().bs_grouped_gemm_source(ctypes.byref(desc), None, 0, ctypes.byref(needed)))
    buf = ctypes.create_string_buffer(needed.value)
    check(lib().bs_grouped_gemm_source(ctypes.byref(desc), buf, len(buf), None))
    return buf.value.decode()


def quant_desc(in_dtype="bf16", out_type="e4m3", block=(1, 128), transpose=False,
               col_major=False, rows=-1, cols=0, debug="", dual=False, groups=0, L=None):
    """A bs_quant_desc_t initialized by library `L` (default: lib())."""
    d = QuantDesc()
    (L or lib()).bs_quant_desc_init(ctypes.byref(d))
    d.in_dtype, d.out_type = _pick(DTYPES, "in_dtype", in_dtype), _pick(FP8, "out_type", out_type)
    d.block_rows, d.block_cols = block
    d.transpose, d.col_major = int(transpose), int(col_major)
    d.rows, d.cols = rows, cols
    d.debug = _debug_flags(debug)
    d.dual = int(dual)
    d.groups = groups
    return d


class QuantKernel:
    """An owned bs_quant_kernel_t of library `L` (default: lib())."""

    def __init__(self, desc, L=None):
        self._desc = desc
        self._L = L or lib()
        h = ctypes.c_void_p()
        check(self._L.bs_quant_kernel_create(ctypes.byref(desc), ctypes.byref(h)), self._L)
        self.handle = h

    def __del__(self):
        if getattr(self, "handle", None):
            self._L.bs_quant_kernel_destroy(self.handle)

    def launch(self, args, stream):
        check(self._L.bs_quant_launch(self.handle, ctypes.byref(args), ctypes.c_void_p(stream)),
              self._L)


def scale_geometry(desc, rows, ld_scale=0):
    """The scales a cast of `rows` rows writes: (rows, cols, stride_row,
    stride_col, alloc_elements) of the logical scale tensor."""
    out = (ctypes.c_int64 * 5)()
    rows, ld_scale = _checked_int("rows", rows), _checked_int("ld_scale", ld_scale)
    check(lib().bs_quant_scale_geometry(ctypes.byref(desc), rows, ld_scale, out))
    return tuple(out)


def recipe_scale_geometry(block, rows, cols, ld=0):
    """The layout rule of decode scales (ScaleLayout.h) for a logical (rows,
    cols) tensor quantized in `block` = (block_rows, block_cols) blocks:
    (scale rows, scale cols, stride_row, stride_col, alloc_elements)."""
    out = (ctypes.c_int64 * 5)()
    br, bc = (_checked_int(f"block[{i}]", b, ctypes.c_int32) for i, b in enumerate(block))
    rows, cols, ld = (_checked_int(w, v) for w, v in (("rows", rows), ("cols", cols), ("ld", ld)))
    check(lib().bs_scale_geometry(br, bc, rows, cols, ld, out))
    return tuple(out)


def gemm_source(desc):
    needed = ctypes.c_size_t()
    check(lib().bs_gemm_source(ctypes.byref(desc), None, 0, ctypes.byref(needed)))
    buf = ctypes.create_string_buffer(needed.value)
    check(lib().bs_gemm_source(ctypes.byref(desc), buf, len(buf), None))
    return buf.value.decode()


def cache_stats():
    out = (ctypes.c_int64 * 4)()
    check(lib().bs_cache_stats(out))
    return dict(memory_hits=out[0], disk_hits=out[1], compiles=out[2], corrupt=out[3])


def programmatic_launch(on=None):
    """Whether GEMMs and casts use programmatic dependent launch (their
    set-up overlaps the previous kernel of the stream; results are the same).
    With ``on`` given, sets it for the process first. Default: on, unless the
    environment has BLOCKSCALE_PDL=0."""
    if on is not None:
        lib().bs_set_programmatic_launch(1 if on else 0)
    return bool(lib().bs_programmatic_launch())


def version():
    return lib().bs_version().decode()
