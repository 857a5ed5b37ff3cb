#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""blockscale's and DeepGEMM's kernels for some shapes, for a profiler.

Both libraries get the same operands (as in bench_gemm.py); both kernels are
compiled and run once, then each is called --calls times between
cudaProfilerStart and cudaProfilerStop, so that a profiler started with
profiling off captures exactly those launches:

  ncu --profile-from-start off --section SpeedOfLight --section WarpStateStats \\
      -o pair python3 bench/profile_pair.py --shape fwd:4096x7168x16384

Nsight Compute locks the clocks to base by default (--clock-control base), so
the two kernels' durations compare work per clock cycle, without the power
cap's clock changes. Needs DeepGEMM importable (scripts/gpu-check.sh's
setup); without it only blockscale's kernel runs.

  --summarize NAME=CSV ...  (no GPU needed) reads the CSV of runs of
      `ncu --csv --metrics gpu__time_duration.sum` of this script, one per
      build NAME (all with the same --shape and --calls), and prints the
      median duration per shape of each library's GEMM kernel and each
      one's speed relative to the first build's (its duration over theirs;
      > 1: faster). scripts/gpu-check.sh profile does all of this.
"""
import argparse
import csv
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(__file__))
import results_table as rt  # noqa: E402

# A library's GEMM kernels, by name: anything else they launch (layout
# transforms of scales, casts) is not counted.
KERNELS = {"blockscale": "bs_gemm", "DeepGEMM": "fp8_gemm"}
# (ncu writes the short units; older versions spelled them out)
UNITS = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3}


def durations(path, calls, nshapes):
    """{library: [median microseconds per shape]} from one ncu CSV: each
    library launches `calls` GEMM kernels per shape, shapes in order."""
    rows = []
    with open(path) as f:
        lines = [ln for ln in f if ln.startswith('"')]  # ncu's own messages are not CSV
    for r in csv.DictReader(lines):
        if r.get("Metric Name") == "gpu__time_duration.sum":
            scale = UNITS[r["Metric Unit"]]
            rows.append((r["Kernel Name"], float(r["Metric Value"].replace(",", "")) * scale))
    out = {}
    for lib, key in KERNELS.items():
        d = [t for name, t in rows if key in name]
        if not d:
            continue
        if len(d) != calls * nshapes:
            raise SystemExit(f"{path}: {len(d)} {lib} kernels, expected {calls} x {nshapes} shapes")
        out[lib] = [statistics.median(d[i * calls:(i + 1) * calls]) for i in range(nshapes)]
    return out


def summarize(shape_arg, calls, specs):
    shapes = rt.parse_shapes(shape_arg)
    cols = []  # (column name, [us per shape])
    for spec in specs:
        name, _, path = spec.partition("=")
        for lib, d in durations(path, calls, len(shapes)).items():
            cols.append((name if lib == "blockscale" else lib, d))
    print("| shape | " + " | ".join(f"{c} (us)" for c, _ in cols) + " | "
          + " | ".join(f"{c} vs {cols[0][0]}" for c, _ in cols[1:]) + " |")
    print("|---" * (2 * len(cols)) + "|")
    for i, s in enumerate(shapes):
        base = cols[0][1][i]
        print(f"| {rt.shape_name(s)} | " + " | ".join(f"{d[i]:.1f}" for _, d in cols) + " | "
              + " | ".join(f"{base / d[i]:.3f}" for _, d in cols[1:]) + " |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shape", default="fwd:4096x7168x16384",
                   help="shapes in bench_gemm.py's --shapes syntax, profiled in this order")
    p.add_argument("--no-deepgemm", action="store_true")
    p.add_argument("--calls", type=int, default=2)
    p.add_argument("--summarize", nargs="+", metavar="NAME=CSV")
    args = p.parse_args()
    if args.summarize:
        return summarize(args.shape, args.calls, args.summarize)
    import torch
    import bench_gemm as bg
    dg = None if args.no_deepgemm else bg.import_deepgemm()
    for s in rt.parse_shapes(args.shape):
        form, M, N, K, out = s.form, s.M, s.N, s.K, s.out
        dtype = bg.DTYPES[out]
        bg.seed_for(form, M, N, K)
        _, _, aq, as_, bq, bs, recipe_b = bg.make_operands(form, M, N, K)
        calls = {"blockscale": lambda: bg.blockscale.scaled_mm(aq, as_, bq, bs, "1x128", recipe_b, dtype)}
        if dg is not None:
            calls["DeepGEMM"] = bg.deepgemm_fns(dg, form, aq, as_, bq, bs, M, N)[0]
        for fn in calls.values():  # JIT compilation and first-launch set-up, not profiled
            fn()
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStart()
        for fn in calls.values():
            for _ in range(args.calls):
                fn()
            torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStop()
        print(f"profiled {args.calls} call(s) each of {', '.join(calls)} on {rt.shape_name(s)}", flush=True)


if __name__ == "__main__":
    main()
