#!/usr/bin/env python3
"""A/B timing of kernel experiments (-D defines) for the GEMM, one run.

Run on the GPU machine (scripts/gpu-check.sh ffma_yield does):
  PYTHONPATH=python python3 bench/ab_gemm.py --defines ";BS_X;BS_X=16" [--json F]

Each define set (the empty one is the shipped kernel) gets its own kernel
for each shape (the defines are NVRTC flags and so part of the cache key);
the planner's tile is used unless --tiles forces others. The variants are
timed in rounds, round-robin, after a 3 s warm-up, so that clock drift on
the power-limited H200 spreads over all of them; each time is the median
of do_bench over replays of a CUDA graph of ten launches (L2 flushed), like
bench_gemm.py. cuBLASLt blockwise is timed once per shape in the same run.
Every variant's output is checked against an f32 reference.
"""
import argparse
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
import bench_gemm as bg  # noqa: E402
from bench_gemm import _capi  # noqa: E402
from bench_gemm import tflops  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--defines", required=True, help="';'-separated define sets ('' = shipped)")
    p.add_argument("--max-workspace-mb", type=int, default=64,
                   help="skip a variant whose split-K workspace is larger (forced splits "
                        "on large shapes ask for gigabytes)")
    p.add_argument("--tiles", default="", help="';'-separated force_tile configs ('' = planner); "
                   "'tile@D1,D2' times that tile with defines D1 D2 only; 'MxNxK%%tile' only "
                   "for that shape")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--pdl", default="on", choices=["on", "off", "both"],
                   help="programmatic dependent launch (blockscale.programmatic_launch) for "
                        "every variant, or each variant timed with and without it")
    p.add_argument("--shapes", default="targets",
                   help="targets | all | a list like 128x7168x16384,wgrad:7168x2048x4096")
    p.add_argument("--json", default=os.path.join(os.environ.get("OUT", "."), "ab_gemm.json"))
    args = p.parse_args()
    defines = args.defines.split(";")
    tiles = args.tiles.split(";")
    # "tile@D1,D2" pairs a tile with its own define set (no cross product)
    combos = []
    for t in tiles:
        tile, at, own = t.partition("@")
        combos += [(tile, own.replace(",", " "))] if at else [(t, d) for d in defines]
    if args.shapes in ("targets", "all"):
        shapes = bg.TARGETS + (bg.EXTRA if args.shapes == "all" else [])
    else:  # no cuBLASLt figure or goal from the issue for a listed shape
        shapes = [(*s, None, None) for s in bg.parse_shapes(args.shapes)]

    bg.warm_up()

    rows = []
    for form, M, N, K, _, _ in shapes:
        torch.manual_seed(hash((form, M, N, K)) % 2**31)
        a, w, aq, as_, bq, bs, recipe_b = bg.make_operands(form, M, N, K)
        ref = bg.dequantize(aq, as_, "1x128") @ bg.dequantize(bq, bs, recipe_b)
        refn = ref.norm().item()
        out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        ga = bg.gemm_args(form, M, aq, as_, bq, bs, out)
        cur = lambda: torch.cuda.current_stream().cuda_stream  # the capture's
        variants = []
        for t, d in combos:
            # "MxNxK%tile": that tile for that shape only
            only, pct, rest = t.partition("%")
            if pct:
                if only != f"{M}x{N}x{K}":
                    continue
                t = rest
            k = bg.forced_kernel(form, M, N, K, t, d)
            ws = k.workspace_size(M)
            if ws > args.max_workspace_mb << 20:
                continue
            # split-K partials: allocated here, not during graph capture
            wbuf = torch.zeros(max(ws, 1), device="cuda", dtype=torch.uint8)  # split-K counters start at 0
            ga.workspace, ga.workspace_bytes = (wbuf.data_ptr(), ws) if ws else (None, 0)
            out.fill_(float("nan"))  # poisoned
            k.launch(ga, cur())
            torch.cuda.synchronize()
            err = ((out.float() - ref).norm() / refn).item()
            for pdl in ([False, True] if args.pdl == "both" else [args.pdl == "on"]):
                variants.append({"tile": t, "defines": d, "pdl": pdl, "kernel": k, "relerr": err,
                                 "ws": ws, "wbuf": wbuf, "info": k.info().split(" cache_key")[0],
                                 "key": bg.cache_key(k), "ms": []})
        # Different define sets must be different binaries: until 2026-12-03
        # the JIT's per-thread shortcut handed the previous kernel back for
        # the same tile, so that such A/B runs timed one kernel twice.
        owner = {}
        for v in variants:
            o = owner.setdefault(v["key"], v)
            if o is not v and o["defines"] != v["defines"]:
                sys.exit(f"ab_gemm: defines {o['defines']!r} and {v['defines']!r} gave the same "
                         f"kernel {v['key']} for {form} {M}x{N}x{K}")
        fn = bg.cublaslt_fn(form, aq, as_, bq, bs, K)
        try:
            lt_ms = bg.bench_graph(fn) if fn else float("nan")
        except (RuntimeError, ValueError) as e:  # a shape cuBLASLt refuses (M = 1)
            print(f"cuBLASLt: {form} {M}x{N}x{K}: {str(e).splitlines()[0]}", flush=True)
            lt_ms = float("nan")
        for r in range(args.rounds):
            order = variants if r % 2 == 0 else variants[::-1]
            for v in order:
                k = v["kernel"]
                ga.workspace, ga.workspace_bytes = (v["wbuf"].data_ptr(), v["ws"]) if v["ws"] else (None, 0)
                _capi.programmatic_launch(v["pdl"])  # captured with the graph
                v["ms"].append(bg.bench_graph(lambda: k.launch(ga, cur())))
        row = {"form": form, "M": M, "N": N, "K": K, "cublaslt_ms": lt_ms, "variants": []}
        base = None
        for v in variants:
            best = min(v["ms"])
            if base is None:
                base = best
            tf = tflops(M, N, K, best)
            print(f"{form:5s} {M:6d} {N:6d} {K:6d} tile={v['tile'] or 'planner':28s} "
                  f"defines={v['defines'] or '-':28s} pdl={int(v['pdl'])} {tf:7.1f} TF/s "
                  f"({base / best:5.3f}x first, {lt_ms / best:5.3f}x cuBLASLt {tflops(M, N, K, lt_ms):6.1f}) "
                  f"runs {' '.join(f'{tflops(M, N, K, m):.0f}' for m in v['ms'])} "
                  f"relerr {v['relerr']:.2e} {'PASS' if v['relerr'] < 3e-3 else 'FAIL'} [{v['info']}]",
                  flush=True)
            row["variants"].append({k2: v[k2] for k2 in ("tile", "defines", "pdl", "relerr", "info",
                                                         "key", "ms")})
        rows.append(row)
    # geomean vs cuBLASLt per (tile, defines) over the shapes that have it
    keys = {(v["tile"], v["defines"], v["pdl"]) for r in rows for v in r["variants"]}
    for key in sorted(keys):
        rs = [r["cublaslt_ms"] / min(v["ms"]) for r in rows for v in r["variants"]
              if (v["tile"], v["defines"], v["pdl"]) == key]
        print(f"geomean vs cuBLASLt tile={key[0] or 'planner'} defines={key[1] or '-'} "
              f"pdl={int(key[2])}: "
              f"{math.exp(sum(map(math.log, rs)) / len(rs)):.3f} over {len(rs)} shapes")
    with open(args.json, "w") as f:
        json.dump(rows, f, indent=1)
    bad = [v for r in rows for v in r["variants"] if not v["relerr"] < 3e-3]
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
