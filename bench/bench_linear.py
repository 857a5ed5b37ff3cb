#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Float8BlockwiseLinear forward + backward vs bf16 nn.Linear and vs the same
FP8 recipe through cuBLASLt (torchao-style: F.scaled_mm blockwise for the
three GEMMs, blockscale casts for the quantization), one run.
PYTHONPATH=python python3 bench/bench_linear.py
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.nn.functional as F
from triton.testing import do_bench

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import blockscale  # noqa: E402

ST = F.ScalingType


def lt_mm(aq, as_, bq, bs, wgrad):
    if wgrad:
        sb, rb = bs.t(), ST.BlockWise1x128
    else:
        kp = -(-bs.shape[0] // 4) * 4
        sb, rb = torch.as_strided(bs, (kp, bs.shape[1]), (1, bs.stride(1))), ST.BlockWise128x128
    return F.scaled_mm(aq, bq, scale_a=as_, scale_recipe_a=ST.BlockWise1x128, scale_b=sb,
                       scale_recipe_b=rb, output_dtype=torch.bfloat16)


class _CublasLtFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        xq, xs = blockscale.quantize(x, "1x128")
        wq, ws = blockscale.quantize(w, "128x128", transpose=True, layout="col_major")
        ctx.save_for_backward(x, w)
        return lt_mm(xq, xs, wq, ws, False)

    @staticmethod
    def backward(ctx, gy):
        x, w = ctx.saved_tensors
        gq, gs = blockscale.quantize(gy, "1x128")
        wtq, wts = blockscale.quantize(w, "128x128", layout="col_major")
        dx = lt_mm(gq, gs, wtq, wts, False)
        gtq, gts = blockscale.quantize(gy, "1x128", transpose=True)
        xq, xs = blockscale.quantize(x, "128x1", layout="col_major")
        dw = lt_mm(gtq, gts, xq, xs, True)
        return dx, dw


def graph_bench(run, rep=100):
    """Median time of a replay of `run` captured in a CUDA graph (no host
    cost: the kernels alone, back to back)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            run()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        run()
    return do_bench(g.replay, warmup=10, rep=rep, return_mode="median")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--graph", action="store_true",
                   help="also time each step captured in a CUDA graph (columns *_graph)")
    p.add_argument("--pdl", default="on", choices=["on", "off", "both"],
                   help="blockscale with programmatic dependent launch, without, or both "
                        "(blockscale_nopdl columns)")
    p.add_argument("--graph-only", action="store_true",
                   help="time the graph-captured steps only (no eager columns)")
    p.add_argument("--rep", type=int, default=100,
                   help="milliseconds of repetitions per timing (triton do_bench)")
    args = p.parse_args()
    args.graph = args.graph or args.graph_only
    rows = []
    for T, K, N in [(8192, 4096, 4096), (8192, 4096, 14336), (8192, 14336, 4096), (16384, 7168, 2112)]:
        x = torch.randn(T, K, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        lin = torch.nn.Linear(K, N, bias=False, device="cuda", dtype=torch.bfloat16)
        fp8 = blockscale.nn.Float8BlockwiseLinear.from_float(lin)
        gy = torch.randn(T, N, device="cuda", dtype=torch.bfloat16)

        def step(fn):
            def run():
                x.grad = None
                lin.weight.grad = None
                fn().backward(gy)
            return run

        res = {}
        cases = [("bf16", None, lambda: lin(x))]
        if args.pdl in ("on", "both"):
            cases.append(("blockscale", True, lambda: fp8(x)))
        if args.pdl in ("off", "both"):
            cases.append(("blockscale" if args.pdl == "off" else "blockscale_nopdl", False,
                          lambda: fp8(x)))
        cases.append(("cublaslt_fp8", None, lambda: _CublasLtFn.apply(x, lin.weight)))
        for name, pdl, fn in cases:
            if pdl is not None:
                blockscale.programmatic_launch(pdl)
            if not args.graph_only:
                res[name] = do_bench(step(fn), warmup=10, rep=args.rep, return_mode="median")
            if args.graph:
                res[name + "_graph"] = graph_bench(step(fn), args.rep)
        flops = 3 * 2 * T * K * N
        r = dict(T=T, K=K, N=N, **{k + "_ms": v for k, v in res.items()})
        rows.append(r)
        ratios = []
        if not args.graph_only:
            ratios += [f"speedup vs bf16 {res['bf16'] / res['blockscale']:.2f}x",
                       f"vs cuBLASLt fp8 {res['cublaslt_fp8'] / res['blockscale']:.2f}x"]
        if args.graph:
            ratios += [f"graphs: vs bf16 {res['bf16_graph'] / res['blockscale_graph']:.2f}x",
                       f"vs cuBLASLt fp8 {res['cublaslt_fp8_graph'] / res['blockscale_graph']:.2f}x"]
        print(f"T={T} K={K} N={N}: " + ", ".join(
            f"{k} {v:.3f} ms ({flops / v / 1e9:.0f} TF/s)" for k, v in res.items())
            + " | " + ", ".join(ratios), flush=True)
    out = os.environ.get("OUT", ".")
    with open(os.path.join(out, "bench_linear.json"), "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%d"), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
