# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""blockscale._nvrtc against fake nvidia-wheel layouts (no torch, no GPU).

argv[1]: "load" to also load a real NVRTC (this machine's, symlinked into a
fake wheel layout) through preload(), or "-" for the lookup tests only."""
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "python"))
from blockscale import _nvrtc  # noqa: E402  (imports without torch)


def touch(path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "w").close()


with tempfile.TemporaryDirectory() as tmp:
    # CUDA 13 wheels: nvidia/cu13/lib; CUDA 12 ones: nvidia/cuda_nvrtc/lib.
    cu13 = os.path.join(tmp, "site13")
    touch(os.path.join(cu13, "nvidia", "cu13", "lib", "libnvrtc.so.13"))
    cu12 = os.path.join(tmp, "site12")
    touch(os.path.join(cu12, "nvidia", "cuda_nvrtc", "lib", "libnvrtc.so.13.0.88"))
    empty = os.path.join(tmp, "empty")
    os.makedirs(os.path.join(empty, "nvidia", "cu13", "lib"))
    rel = lambda p: os.path.relpath(p, tmp) if p else p  # noqa: E731
    print("cu13:", rel(_nvrtc.find_wheel_nvrtc([cu13])))
    print("versioned only:", rel(_nvrtc.find_wheel_nvrtc([cu12])))
    print("first on the path wins:", rel(_nvrtc.find_wheel_nvrtc([empty, cu12, cu13])))
    print("none:", _nvrtc.find_wheel_nvrtc([empty, os.path.join(tmp, "missing")]))
    print("toolkit in empty dirs:", _nvrtc.find_toolkit_nvrtc([empty]))
    touch(os.path.join(tmp, "tk", "lib64", "libnvrtc.so"))
    print("toolkit:", rel(_nvrtc.find_toolkit_nvrtc([os.path.join(tmp, "tk", "lib64")])))
    os.environ.pop("BLOCKSCALE_NVRTC", None)
    print("not found:", _nvrtc.preload(search_paths=[empty], toolkit=[], loader_path=False,
                                       force=True))

    if len(sys.argv) > 1 and sys.argv[1] == "load":
        # This machine's NVRTC: a toolkit's, else where the loader finds it
        # (looked up in a child process: this one must not load it yet).
        real = _nvrtc.find_toolkit_nvrtc() or subprocess.run(
            [sys.executable, "-c", "import ctypes; ctypes.CDLL('libnvrtc.so.13'); "
             "print(next(l.split()[-1] for l in open('/proc/self/maps') "
             "if 'libnvrtc.so' in l))"], capture_output=True, text=True).stdout.strip()
        # A wheel layout whose files are the toolkit's NVRTC and builtins.
        lib = os.path.join(tmp, "site", "nvidia", "cu13", "lib")
        os.makedirs(lib)
        src = os.path.dirname(os.path.realpath(real))
        for fn in os.listdir(src):
            if fn.startswith("libnvrtc.so.13") or fn.startswith("libnvrtc-builtins.so.13"):
                os.symlink(os.path.join(src, fn), os.path.join(lib, fn))
        print("loaded before:", _nvrtc._loaded(_nvrtc.SONAME))
        got = _nvrtc.preload(search_paths=[os.path.join(tmp, "site")], toolkit=[],
                             loader_path=False, force=True)
        print("preload:", got.replace(tmp, "TMP"))
        # The C library's dlopen("libnvrtc.so.13") now finds it by soname.
        print("loaded after:", _nvrtc._loaded(_nvrtc.SONAME))
        print("again (kept):", _nvrtc.preload().replace(tmp, "TMP"))
