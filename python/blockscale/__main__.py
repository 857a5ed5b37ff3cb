# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""``python -m blockscale``: what is installed, and a one-kernel self-check.

Prints the package and C library versions (with the git commit the library
was built from), where NVRTC comes from, PyTorch, the GPUs (name and
compute capability) and the kernel cache directory, then checks one kernel:

* on an sm_90 GPU with PyTorch: quantize + scaled_mm of a small problem
  against a float64 reference of the dequantized operands (PASS/FAIL);
* otherwise (no GPU, or --no-torch): the C API generates the CUDA source of
  one GEMM and compiles it with NVRTC; without a GPU, a launch must then
  report "no device".

Exit status: 0 pass, 1 fail (or a GPU that is not sm_90), 2 the C library
cannot be loaded.
"""
import argparse
import ctypes
import sys
import time


def _gpu_check(torch, index):
    import blockscale
    from blockscale.reference import dequantize

    M, N, K = 256, 384, 1024
    torch.manual_seed(0)
    with torch.cuda.device(index):
        x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
        t0 = time.perf_counter()
        xq, xs = blockscale.quantize(x, "1x128")
        wq, ws = blockscale.quantize(w, "128x128", transpose=True, layout="col_major")
        y = blockscale.scaled_mm(xq, xs, wq, ws, "1x128", "128x128", torch.bfloat16)
        torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        ref = dequantize(xq, xs, "1x128").double() @ dequantize(wq, ws, "128x128").double()
        rel = ((y.double() - ref).norm() / ref.norm()).item()
        finite = bool(torch.isfinite(y).all())
    ok = finite and rel <= 2e-3
    print(f"self-check: quantize + scaled_mm fwd {M}x{N}x{K} bf16 on GPU {index}: "
          f"rel_err={rel:.2e} (bound 2e-3){'' if finite else ', non-finite output'}, "
          f"{dt:.2f} s with compilation -> {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


def _compile_check(_capi, launch_probe):
    desc = _capi.gemm_desc(form="fwd", m=-1, n=256, k=512, m_hint=256)
    src = _capi.gemm_source(desc)
    spec = next((line for line in src.splitlines() if "blockscale-spec:" in line), "")
    name = next((f for f in spec.split() if f.startswith("name=")), "name=?")[5:]
    t0 = time.perf_counter()
    try:
        kern = _capi.GemmKernel(desc)
    except _capi.BlockscaleError as e:
        print(f"self-check: generated {len(src)} bytes of CUDA ({name}); compiling failed: {e}"
              " -> FAIL")
        return 1
    dt = time.perf_counter() - t0
    info = dict(f.split("=", 1) for f in kern.info().split() if "=" in f)
    print(f"self-check: generated {len(src)} bytes of CUDA ({name}) and compiled it with NVRTC "
          f"in {dt:.2f} s (registers={info.get('registers', '?')}, from_disk_cache="
          f"{info.get('from_disk_cache', '?')})")
    if launch_probe:
        args = _capi.GemmArgs()
        _capi.lib().bs_gemm_args_init(ctypes.byref(args))
        args.m = 256
        # Pointers that pass the argument checks (16-byte aligned); without a
        # GPU nothing reads them.
        buf = ctypes.create_string_buffer(64)
        addr = (ctypes.addressof(buf) + 15) // 16 * 16
        args.a = args.a_scale = args.b = args.b_scale = args.c = addr
        try:
            kern.launch(args, 0)
        except _capi.BlockscaleError as e:
            if e.status != 3:  # BS_ERROR_NO_DEVICE
                print(f"self-check: a launch without a GPU failed with {e} instead of "
                      f"'no device' -> FAIL")
                return 1
            print("self-check: launching says 'no device', as it should without a GPU")
        else:
            print("self-check: a launch without a GPU succeeded -> FAIL")
            return 1
    print("self-check: PASS (generated and compiled; not run)")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m blockscale", description=__doc__.split("\n\n")[0])
    ap.add_argument("--no-torch", action="store_true",
                    help="do not use PyTorch: report, and check generation + compilation only")
    args = ap.parse_args(argv)

    from blockscale import _capi, _device, _version

    built = f", built from {_version.git_commit}" if _version.git_commit else ""
    print(f"blockscale {_version.__version__} (Python package{built})")
    try:
        L = _capi.lib()
    except OSError as e:
        print(f"C library: cannot be loaded: {e}")
        return 2
    path = next((p for p, lib in _capi._libs.items() if lib is L), "?")
    print(f"C library: {_capi.version()} [{path}]")
    print(f"NVRTC: {_capi.nvrtc_source}")

    torch = None
    if args.no_torch:
        print("PyTorch: not used (--no-torch)")
    else:
        try:
            import torch
            print(f"PyTorch: {torch.__version__} (CUDA {torch.version.cuda})")
        except ImportError:
            print("PyTorch: not installed (the C API works without it)")

    gpus = _device.driver_gpus()
    if isinstance(gpus, str):
        print(f"GPU: none ({gpus})")
    else:
        for i, name, cc in gpus:
            note = "" if tuple(cc) == _device.REQUIRED else \
                "  -- not supported: blockscale's kernels need sm_90 (Hopper)"
            print(f"GPU {i}: {name}, compute capability {cc[0]}.{cc[1]} (sm_{cc[0]}{cc[1]}){note}")
    print(f"kernel cache: {_device.cache_dir() or '(disabled: BLOCKSCALE_CACHE_DIR is empty)'}")
    sys.stdout.flush()

    if isinstance(gpus, str):
        return _compile_check(_capi, launch_probe=True)
    rc = 0
    first = gpus[0]
    if tuple(first[2]) != _device.REQUIRED:
        print(_device.unsupported_message(first[1], first[2], first[0]))
        rc = 1
    if torch is None or not torch.cuda.is_available() or rc:
        if torch is not None and not torch.cuda.is_available() and not rc:
            print("PyTorch sees no GPU (a CPU-only build?): checking compilation only")
        return max(rc, _compile_check(_capi, launch_probe=False))
    return _gpu_check(torch, torch.cuda.current_device())


if __name__ == "__main__":
    sys.exit(main())
