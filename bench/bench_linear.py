#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""One linear layer's forward + backward, one process: bf16 nn.Linear,
torchao's Float8BlockwiseLinear (cuBLASLt GEMMs, Triton casts; when
bench/torchao_anchor.py finds it), the same FP8 recipe through cuBLASLt
(F.scaled_mm blockwise for the three GEMMs, blockscale's casts) and
blockscale's Float8BlockwiseLinear. Shapes: bench/fp8_report.py.

Each path's output and both gradients are first checked against an fp32
reference (SQNR in dB, printed); an FP8 path below --min-sqnr is reported
WRONG and the run exits 1, so that a broken path cannot look fast. Timings are
medians (triton do_bench): eager steps and, with --graph, replays of the step
captured in a CUDA graph. The last lines check issue 32's goals.
PYTHONPATH=python python3 bench/bench_linear.py [--graph] [--shapes TxKxN,...]
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
import fp8_report as lr  # noqa: E402  (same folder)
import torchao_anchor  # noqa: E402
from bench_gemm import warm_up  # noqa: E402

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


def sqnr(ref, out):
    """SQNR (dB) of out against the fp32 reference (sums in float64)."""
    out = out.float()
    return lr.db(ref.pow(2).sum(dtype=torch.float64).item(),
                 (ref - out).pow(2).sum(dtype=torch.float64).item())


def paths(lin, ao, pdl):
    """(name, programmatic launch or None, module or function of x)."""
    fp8 = blockscale.nn.Float8BlockwiseLinear.from_float(lin)
    out = [("bf16", None, lin)]
    if pdl in ("on", "both"):
        out.append(("blockscale", True, fp8))
    if pdl in ("off", "both"):
        out.append(("blockscale" if pdl == "off" else "blockscale_nopdl", False, fp8))
    if ao is not None:
        out.append(("torchao", None, ao.linear.Float8BlockwiseLinear.from_float(lin)))
    out.append(("cublaslt_fp8", None, lambda x: _CublasLtFn.apply(x, lin.weight)))
    return out


def save(args, ao, rows):
    """Writes the JSON (rows so far and the goal lines); returns the goal lines."""
    goals = lr.goal_lines(rows, graph=args.graph)[1]
    with open(args.json, "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%d"), "gpu": torch.cuda.get_device_name(),
                   "torch": torch.__version__, "torchao": ao.version if ao else None,
                   "timing": "graph" if args.graph else "eager", "goals": goals,
                   "rows": rows}, f, indent=1)
    return goals


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
    p.add_argument("--shapes", default="default",
                   help="TxKxN,... (tokens x in_features x out_features); default: "
                        + ",".join("x".join(map(str, s)) for s in lr.SHAPES))
    p.add_argument("--min-sqnr", type=float, default=20.0,
                   help="dB below which an FP8 path's output or gradient is WRONG")
    p.add_argument("--no-torchao", action="store_true", help="leave torchao's column out")
    p.add_argument("--json", default=os.path.join(os.environ.get("OUT", "."), "bench_linear.json"))
    args = p.parse_args()
    args.graph = args.graph or args.graph_only
    shapes = lr.parse_shapes(args.shapes)
    ao = None if args.no_torchao else torchao_anchor.load()
    print(f"GPU {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"blockscale {blockscale._capi.version()}", flush=True)
    warm_up()
    rows, wrong = [], []
    for T, K, N in shapes:
        torch.manual_seed(T * 31 + K * 7 + N)
        x = torch.randn(T, K, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        lin = torch.nn.Linear(K, N, bias=False, device="cuda", dtype=torch.bfloat16)
        gy = torch.randn(T, N, device="cuda", dtype=torch.bfloat16)
        xf, wf, gf = x.detach().float(), lin.weight.detach().float(), gy.float()
        ref = {"y": xf @ wf.t(), "dx": gf @ wf, "dw": gf.t() @ xf}
        del xf, wf, gf

        def step(fn):
            def run():
                x.grad = None
                lin.weight.grad = None
                fn(x).backward(gy)
            return run

        res = dict(T=T, K=K, N=N)
        flops = 3 * 2 * T * K * N
        line = [f"T={T} {K}->{N}:"]
        for name, pdl, fn in paths(lin, ao, args.pdl):
            if pdl is not None:
                blockscale.programmatic_launch(pdl)
            t0 = time.perf_counter()
            x.grad = lin.weight.grad = None
            y = fn(x)
            y.backward(gy)
            torch.cuda.synchronize()
            first_s = time.perf_counter() - t0
            q = {"y": sqnr(ref["y"], y), "dx": sqnr(ref["dx"], x.grad),
                 "dw": sqnr(ref["dw"], lin.weight.grad)}
            del y
            ok = name == "bf16" or min(q.values()) >= args.min_sqnr
            res[f"{name}_sqnr"], res[f"{name}_ok"] = q, ok
            if not ok:
                wrong.append(f"{name} T={T} {K}->{N}")
            times = {}
            if not args.graph_only:
                times[""] = do_bench(step(fn), warmup=10, rep=args.rep, return_mode="median")
            if args.graph:
                times["_graph"] = graph_bench(step(fn), args.rep)
            for k, v in times.items():
                res[f"{name}{k}_ms"] = v
            print(f"  {name:16s} " + "  ".join(
                f"{'graph' if k else 'eager'} {v:.3f} ms ({flops / v / 1e9:.0f} TF/s)"
                for k, v in times.items())
                + f"  SQNR y/dx/dw {q['y']:.1f}/{q['dx']:.1f}/{q['dw']:.1f} dB"
                + ("" if ok else "  WRONG") + (f"  first call {first_s:.1f} s" if first_s > 1 else ""),
                flush=True)
        rows.append(res)
        base = lr.fp8_baseline([res])
        for graph in ([] if args.graph_only else [False]) + ([True] if args.graph else []):
            ours = lr.time_of(res, "blockscale", graph)
            rat = [f"vs {vs} {lr.time_of(res, vs, graph) / ours:.2f}x"
                   for vs in dict.fromkeys([base, "bf16", "cublaslt_fp8"])
                   if lr.time_of(res, vs, graph) and ours]
            line.append(f"({'graphs' if graph else 'eager'}) blockscale " + ", ".join(rat))
        print(" ".join(line), flush=True)
        x = lin = gy = ref = None  # (freed before the next layer)
        torch.cuda.empty_cache()
        save(args, ao, rows)  # after each layer: a run cut short keeps what it measured
    for g in save(args, ao, rows):
        print(g)
    for w in wrong:
        print(f"WRONG (SQNR below {args.min_sqnr} dB): {w}")
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
