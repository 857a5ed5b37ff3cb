#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Where the host time of one eager ``blockscale.scaled_mm`` call goes
(~80-90 us at M = 128 through the custom op, ~35 us on the direct eager path,
against ~5 us for the C++ launch).

Times each piece of the Python path alone, in loops of N calls without
synchronizing (so a piece that launches a kernel is its launch cost), and a
few cheaper forms of the same pieces as candidates, for the M = 128 target
shape. Run on the GPU machine: PYTHONPATH=python python3 bench/tools/host_path_probe.py
"""
import ctypes
import sys
import time

import torch

sys.path.insert(0, "bench")
import bench_gemm as bg  # noqa: E402
import blockscale  # noqa: E402
from blockscale import _capi, ops  # noqa: E402

N = 3000


def per_call(fn, n=N):
    fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    dt = (time.perf_counter() - t) / n
    torch.cuda.synchronize()
    return dt * 1e6


def main():
    M, Nn, K = 128, 2112, 7168
    a, w, aq, as_, bq, bs, rb = bg.make_operands("fwd", M, Nn, K)
    out = torch.empty(M, Nn, device="cuda", dtype=torch.bfloat16)
    dims = ops._check_mm(aq, as_, bq, bs, "1x128", rb, torch.bfloat16)
    kern = ops._gemm_kernel("fwd", Nn, K, "e4m3", "e4m3", "bf16", False, M)

    def build_args():
        g = _capi.GemmArgs()
        _capi.lib().bs_gemm_args_init(g)
        g.a, g.a_scale, g.b, g.b_scale, g.c = (
            aq.data_ptr(), as_.data_ptr(), bq.data_ptr(), bs.data_ptr(), out.data_ptr())
        g.m, g.lda, g.ldb, g.ldc = M, dims[3], dims[4], Nn
        g.ldsa, g.ldsb = dims[5], dims[6]
        g.sb_stride_k, g.sb_stride_n = bs.stride(0), bs.stride(1)
        return g

    args = build_args()
    stream = torch.cuda.current_stream().cuda_stream
    lib = _capi.lib()
    handle = kern.handle
    pargs = ctypes.byref(args)
    cstream = ctypes.c_void_p(stream)

    def devctx():
        with torch.cuda.device(aq.device):
            pass

    dev_index = aq.device.index

    def devcheck():
        return torch.cuda.current_device() == dev_index

    rows = [
        ("blockscale.scaled_mm (whole call)",
         lambda: blockscale.scaled_mm(aq, as_, bq, bs, "1x128", rb, torch.bfloat16)),
        ("torch.ops.blockscale.scaled_mm.default",
         lambda: torch.ops.blockscale.scaled_mm.default(aq, as_, bq, bs, "1x128", rb,
                                                        torch.bfloat16)),
        ("_check_mm", lambda: ops._check_mm(aq, as_, bq, bs, "1x128", rb, torch.bfloat16)),
        ("_out_strides", lambda: ops._out_strides(Nn, torch.bfloat16)),
        ("torch.empty_strided (M, N) bf16",
         lambda: torch.empty_strided((M, Nn), (Nn, 1), dtype=torch.bfloat16, device=aq.device)),
        ("_launch_mm (args, device context, stream, launch)",
         lambda: ops._launch_mm(aq, as_, bq, bs, rb, out, False, dims)),
        ("_gemm_kernel lookup", lambda: ops._gemm_kernel("fwd", Nn, K, "e4m3", "e4m3", "bf16",
                                                         False, M)),
        ("GemmArgs built and filled", build_args),
        ("with torch.cuda.device(...)", devctx),
        ("torch.cuda.current_device() == index", devcheck),
        ("torch.cuda.current_stream(dev).cuda_stream",
         lambda: torch.cuda.current_stream(aq.device).cuda_stream),
        ("kern.launch(args, stream) (ctypes + C launch)", lambda: kern.launch(args, stream)),
        ("bs_gemm_launch, prebuilt ctypes arguments",
         lambda: lib.bs_gemm_launch(handle, pargs, cstream)),
        ("blockscale.quantize (128, 7168) bf16 1x128",
         lambda: blockscale.quantize(a, "1x128")),
        ("4 x tensor.data_ptr()", lambda: (aq.data_ptr(), as_.data_ptr(), bq.data_ptr(),
                                           bs.data_ptr())),
    ]
    for name, fn in rows:
        print(f"{name:52s} {per_call(fn):7.2f} us per call", flush=True)


if __name__ == "__main__":
    main()
