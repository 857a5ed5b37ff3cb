# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The GPUs of this machine through the CUDA driver API (ctypes; no torch),
and the architecture check: blockscale's kernels are sm_90a code (wgmma,
TMA, clusters), so they run on Hopper (H100, H200, GH200) only."""
import ctypes
import os

REQUIRED = (9, 0)
_ATTR_CC_MAJOR, _ATTR_CC_MINOR = 75, 76  # CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_*


class UnsupportedGPUError(RuntimeError):
    """Raised when blockscale is asked to convert a model for, or run on, a
    GPU that is not sm_90."""


def unsupported_message(name, cc, index=None):
    where = f"GPU {index} ({name})" if index is not None else f"GPU {name}"
    return (f"blockscale: {where} has compute capability {cc[0]}.{cc[1]} "
            f"(sm_{cc[0]}{cc[1]}); blockscale's FP8 kernels need sm_90 "
            f"(Hopper: H100, H200, GH200)")


def check_capability(name, cc, index=None):
    """Raises UnsupportedGPUError unless `cc` is (9, 0)."""
    if tuple(cc) != REQUIRED:
        raise UnsupportedGPUError(unsupported_message(name, tuple(cc), index))


def driver_gpus():
    """[(index, name, (major, minor))] of the visible GPUs, or a string
    saying why there are none (no driver, no device, ...)."""
    try:
        cu = ctypes.CDLL("libcuda.so.1", mode=os.RTLD_LOCAL)
    except OSError as e:
        return f"no CUDA driver ({e})"
    r = cu.cuInit(0)
    if r != 0:
        return f"no GPU (cuInit returned CUresult {r})"
    n = ctypes.c_int(0)
    if cu.cuDeviceGetCount(ctypes.byref(n)) != 0 or n.value == 0:
        return "no GPU (the driver sees no device)"
    gpus = []
    for i in range(n.value):
        dev = ctypes.c_int(0)
        if cu.cuDeviceGet(ctypes.byref(dev), i) != 0:
            continue
        name = ctypes.create_string_buffer(256)
        cu.cuDeviceGetName(name, 256, dev)
        major, minor = ctypes.c_int(0), ctypes.c_int(0)
        cu.cuDeviceGetAttribute(ctypes.byref(major), _ATTR_CC_MAJOR, dev)
        cu.cuDeviceGetAttribute(ctypes.byref(minor), _ATTR_CC_MINOR, dev)
        gpus.append((i, name.value.decode(errors="replace"), (major.value, minor.value)))
    return gpus


def cache_dir():
    """The kernel cache directory the runtime uses (KernelCache.cpp,
    defaultCacheDir): $BLOCKSCALE_CACHE_DIR ("" disables it), else
    $XDG_CACHE_HOME/blockscale, else ~/.cache/blockscale, else
    /tmp/blockscale."""
    d = os.environ.get("BLOCKSCALE_CACHE_DIR")
    if d is not None:
        return d
    x = os.environ.get("XDG_CACHE_HOME")
    if x:
        return os.path.join(x, "blockscale")
    h = os.environ.get("HOME")
    if h:
        return os.path.join(h, ".cache", "blockscale")
    return "/tmp/blockscale"
