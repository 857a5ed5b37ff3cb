#!/usr/bin/env python3
"""Markdown rows for bench/RESULTS.md from a bench_gemm.py JSON file.

python3 bench/results_table.py bench/notes/<run>-bench_gemm.json
"""
import json
import math
import re
import sys

GOALS = {("fwd", 4096, 7168, 16384): 1500, ("fwd", 4096, 4096, 7168): 1450,
         ("fwd", 4096, 2112, 7168): 1200, ("fwd", 4096, 24576, 1536): 1250,
         ("fwd", 4096, 32768, 512): 850, ("fwd", 16384, 14336, 4096): 1450,
         ("fwd", 128, 7168, 16384): 650, ("fwd", 128, 2112, 7168): 250,
         ("wgrad", 14336, 4096, 16384): 1100}


def tf(r, key):
    return 2.0 * r["M"] * r["N"] * r["K"] / (r[key] * 1e-3) / 1e12


def main():
    d = json.load(open(sys.argv[1]))
    # Runs since 2026-12-03 run 95 also time ours without programmatic launch.
    nopdl = any("ours_nopdl_ms" in r for r in d["rows"])
    print("| form | M | N | K | blockscale | cuBLASLt | ratio | " +
          ("blockscale without PDL (ratio) | " if nopdl else "") + "bf16 cuBLAS | "
          "blockscale eager | config (bm, bn, stages, splits; cluster) | best forced variant | goal (issue 3) |")
    print("|---|---:|---:|---:|---:|---:|---:|" + ("---:|" if nopdl else "") + "---:|---:|---|---|---:|")
    ratios, ratios_nopdl = [], []
    for r in d["rows"]:
        key = (r["form"], r["M"], r["N"], r["K"])
        spec = dict(kv.split("=") for kv in r["ours_kernel"].split() if "=" in kv)
        cfg = f"{spec['bm']}, {spec['bn']}, {spec['stages']}, {spec['splits']}"
        if spec.get("cluster", "1") != "1":
            cfg += f"; cluster {spec['cluster']}"
        if spec.get("ksplit", "1") != "1":  # splits summed in a cluster
            cfg += f"; summed in clusters of {spec['ksplit']}"
        ratio = tf(r, "ours_ms") / tf(r, "cublaslt_ms")
        if key in GOALS:
            ratios.append(ratio)
        np_col = ""
        if nopdl:
            r2 = tf(r, "ours_nopdl_ms") / tf(r, "cublaslt_ms")
            np_col = f"{tf(r, 'ours_nopdl_ms'):.0f} ({r2:.2f}) | "
            if key in GOALS:
                ratios_nopdl.append(r2)
        best = ""
        if "best_variant" in r:
            best = f"{r['best_variant']}: {tf(r, 'best_variant_ms'):.0f}"
        rs = f"**{ratio:.2f}**" if ratio >= 1 else f"{ratio:.2f}"
        print(f"| {r['form']} | {r['M']} | {r['N']} | {r['K']} | {tf(r, 'ours_ms'):.0f} | "
              f"{tf(r, 'cublaslt_ms'):.0f} | {rs} | {np_col}{tf(r, 'bf16_ms'):.0f} | "
              f"{tf(r, 'ours_eager_ms'):.0f} | {cfg} | {best} | {GOALS.get(key, '')} |")
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
    print(f"\ngeomean vs cuBLASLt: {geo:.3f}")
    if ratios_nopdl:
        g2 = math.exp(sum(map(math.log, ratios_nopdl)) / len(ratios_nopdl))
        print(f"(without programmatic launch, same run: {g2:.3f})")


if __name__ == "__main__":
    main()
