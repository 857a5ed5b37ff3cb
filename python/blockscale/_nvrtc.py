# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Finding NVRTC when no CUDA toolkit is installed.

The C library (lib/Runtime/Nvrtc.cpp) dlopens ``libnvrtc.so.13`` by name
(then ``$CUDA_HOME/lib64`` and ``/usr/local/cuda/lib64``). On a machine
with only pip's CUDA wheels (``nvidia-cuda-nvrtc``, which PyTorch depends
on) that name is not on the loader's path. ``preload()`` then loads the
wheel's ``libnvrtc.so.13`` (and its ``libnvrtc-builtins``) with RTLD_GLOBAL
before the C library is loaded, so that the C library's dlopen by soname
finds the library already in the process. Standard library only.
"""
import ctypes
import glob
import os
import sys

SONAME = "libnvrtc.so.13"
# Where the nvidia-* wheels put their libraries, under a site-packages
# directory: CUDA 12 wheels per component, CUDA 13 wheels in one tree.
WHEEL_SUBDIRS = (os.path.join("nvidia", "cu13", "lib"),
                 os.path.join("nvidia", "cuda_nvrtc", "lib"))


def toolkit_dirs():
    """The directories in which the C library looks for a toolkit's NVRTC
    after the loader's path."""
    dirs = []
    for env in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(env):
            dirs.append(os.path.join(os.environ[env], "lib64"))
    dirs.append("/usr/local/cuda/lib64")
    return dirs


def find_toolkit_nvrtc(dirs=None):
    """Path of a toolkit's libnvrtc (.so.13 or the .so link), or None."""
    for d in toolkit_dirs() if dirs is None else dirs:
        for name in (SONAME, "libnvrtc.so"):
            p = os.path.join(d, name)
            if os.path.exists(p):
                return p
    return None


def find_wheel_nvrtc(search_paths=None):
    """Path of libnvrtc.so.13 in an installed nvidia wheel under one of
    `search_paths` (default: sys.path), or None."""
    for base in sys.path if search_paths is None else search_paths:
        if not base or not os.path.isdir(base):
            continue
        for sub in WHEEL_SUBDIRS:
            d = os.path.join(base, sub)
            p = os.path.join(d, SONAME)
            if os.path.exists(p):
                return p
            # Some wheels ship only the full version (libnvrtc.so.13.0.x).
            found = sorted(glob.glob(os.path.join(d, SONAME + ".*")))
            if found:
                return found[0]
    return None


def _loaded(name):
    """Whether a library with soname `name` is already in the process."""
    try:
        ctypes.CDLL(name, mode=os.RTLD_NOLOAD | os.RTLD_GLOBAL)
        return True
    except OSError:
        return False


_result = None


def preload(search_paths=None, toolkit=None, loader_path=True, force=False):
    """Makes ``dlopen("libnvrtc.so.13")`` succeed for the C library when no
    toolkit provides it. Returns a short description of where NVRTC comes
    from: "toolkit: <path>", "already loaded", "loader path", "wheel:
    <path>", "BLOCKSCALE_NVRTC: <path>" or "not found" (then the C library
    reports that it cannot load NVRTC when it first compiles).

    Order: $BLOCKSCALE_NVRTC (a file to load), a toolkit (toolkit_dirs(),
    or `toolkit`), a libnvrtc.so.13 already in the process, the loader's
    path (LD_LIBRARY_PATH, ldconfig; skipped when `loader_path` is False),
    an nvidia wheel under `search_paths` (default sys.path). The result is
    kept; `force` searches again."""
    global _result
    if _result is not None and not force:
        return _result
    explicit = os.environ.get("BLOCKSCALE_NVRTC")
    if explicit:
        _result = "BLOCKSCALE_NVRTC: " + _load_with_builtins(explicit)
        return _result
    tk = find_toolkit_nvrtc(toolkit)
    if tk:
        _result = "toolkit: " + tk
        return _result
    if _loaded(SONAME):
        _result = "already loaded"
        return _result
    if loader_path:
        try:  # LD_LIBRARY_PATH, ldconfig
            ctypes.CDLL(SONAME, mode=os.RTLD_GLOBAL)
            _result = "loader path"
            return _result
        except OSError:
            pass
    wheel = find_wheel_nvrtc(search_paths)
    if wheel:
        _result = "wheel: " + _load_with_builtins(wheel)
        return _result
    _result = "not found"
    return _result


def _load_with_builtins(path):
    """Loads NVRTC's builtins library from beside `path` (NVRTC opens it by
    soname when it compiles), then `path`, both RTLD_GLOBAL."""
    d = os.path.dirname(os.path.abspath(path))
    for b in sorted(glob.glob(os.path.join(d, "libnvrtc-builtins.so.13*"))):
        try:
            ctypes.CDLL(b, mode=os.RTLD_GLOBAL)
            break
        except OSError:
            continue
    ctypes.CDLL(path, mode=os.RTLD_GLOBAL)
    return path
