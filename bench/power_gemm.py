#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Sustained clocks and power of ours vs cuBLASLt on the power-limited H200.

Run on the GPU machine (issue 28's power-cap question; not in gpu-check):
  PYTHONPATH=python python3 bench/power_gemm.py [--seconds 4] [--tiles T1;T2] [--shapes S]

For each shape and candidate (cuBLASLt blockwise, blockscale's planner
tile, optional forced tiles), graph replays of ten launches are queued for
`--seconds`; nvidia-smi samples the SM clock and board power every 100 ms
meanwhile. Reported: TFLOP/s over the window (CUDA events), the median
clock and power of its second half, and TFLOP/s per GHz, which separates
"slower per clock" from "clocked lower because it draws more power".
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(__file__))
import bench_gemm as bg  # noqa: E402
import results_table as rt  # noqa: E402
from results_table import tflops  # noqa: E402


def sustained(fn, seconds):
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        for _ in range(10):
            fn()
    g.replay()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    g.replay()
    torch.cuda.synchronize()
    per = time.perf_counter() - t0
    n = max(2, int(seconds / per))
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw",
                            "--format=csv,noheader,nounits", "-lms", "100"],
                           stdout=subprocess.PIPE, text=True)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(n):
        g.replay()
    end.record()
    torch.cuda.synchronize()
    smi.terminate()
    out = smi.communicate()[0]
    samples = []
    for line in out.strip().splitlines():
        try:
            c, p = (float(x) for x in line.split(","))
            samples.append((c, p))
        except ValueError:
            pass
    half = samples[len(samples) // 2:] or samples
    ms = start.elapsed_time(end) / (10 * n)
    return ms, statistics.median(c for c, _ in half), statistics.median(p for _, p in half)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=4.0)
    p.add_argument("--tiles", default="", help="';'-separated extra force_tile configs")
    p.add_argument("--shapes", default="4096x7168x16384,16384x14336x4096,4096x2112x7168",
                   help="','-separated [form:]MxNxK[:out] shapes (bench/results_table.py)")
    args = p.parse_args()
    for form, M, N, K, out_name, _ in rt.parse_shapes(args.shapes):
        dtype = bg.DTYPES[out_name]
        a, w, aq, as_, bq, bs, recipe_b = bg.make_operands(form, M, N, K)
        cands = [("cuBLASLt", bg.cublaslt_fn(form, aq, as_, bq, bs, K, dtype)),
                 ("ours", lambda: bg.blockscale.scaled_mm(aq, as_, bq, bs, "1x128", recipe_b,
                                                          dtype))]
        out = torch.empty(M, N, device="cuda", dtype=dtype)
        for t in [t for t in args.tiles.split(";") if t]:
            k = bg.gemm_kernel(form, M, N, K, out_name, t)
            t = f"{t} [{bg.cache_key(k)[:8]}]"
            ga = bg.gemm_args(form, M, aq, as_, bq, bs, out)
            cands.append((t, (lambda k, ga: lambda: k.launch(
                ga, torch.cuda.current_stream().cuda_stream))(k, ga)))
        bf16 = lambda: a @ w.t()
        sustained(bf16, 2.0)  # the same thermal/power state for the first candidate
        for name, fn in cands + cands[:1]:
            ms, clk, pw = sustained(fn, args.seconds)
            tf = tflops(M, N, K, ms)
            print(f"{form} {M}x{N}x{K} {name:28s} {tf:7.1f} TF/s  SM clock {clk:6.0f} MHz  "
                  f"power {pw:5.0f} W  {tf / clk * 1000:6.1f} TF/s per GHz  "
                  f"{tf / pw:5.2f} TF/s per W", flush=True)


if __name__ == "__main__":
    main()
