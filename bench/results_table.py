#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The GEMM shapes of the benches and the bench_gemm.py report (pure Python,
no torch: bench_gemm.py and ab.py import it, and it runs on any machine).

    python3 bench/results_table.py bench_gemm.json     # the RESULTS.md table again

The table's last two lines are `geomean vs DeepGEMM: <ratio>` and
`geomean vs cuBLASLt: <ratio>`, blockscale's speed over the other library's
(> 1: blockscale faster), over the nine targets of issue 3, from graphs of ten
back-to-back calls.
"""
import json
import math
import sys
from collections import namedtuple

# out: the output dtype of every library's call; goal: issue 28's, TFLOP/s.
Shape = namedtuple("Shape", "form M N K out goal")

# Issue 3's nine targets (the wgrad one with f32 output, as issue 28 measures it).
TARGETS = [
    Shape("fwd", 4096, 7168, 16384, "bf16", 1330),
    Shape("fwd", 4096, 4096, 7168, "bf16", 1300),
    Shape("fwd", 4096, 2112, 7168, "bf16", 1200),
    Shape("fwd", 4096, 24576, 1536, "bf16", 1200),
    Shape("fwd", 4096, 32768, 512, "bf16", 980),
    Shape("fwd", 16384, 14336, 4096, "bf16", 1320),
    Shape("fwd", 128, 7168, 16384, "bf16", 800),
    Shape("fwd", 128, 2112, 7168, "bf16", 470),
    Shape("wgrad", 14336, 4096, 16384, "f32", 980),
]
# Issue 28's shapes: the targets and two more.
ISSUE28 = TARGETS + [
    Shape("fwd", 8192, 8192, 8192, "bf16", 1310),
    Shape("fwd", 64, 7168, 2048, "bf16", 340),
]
EXTRA = [
    Shape("wgrad", 14336, 4096, 16384, "bf16", None),
    Shape("fwd", 128, 24576, 1536, "bf16", None),
    Shape("fwd", 128, 4096, 7168, "bf16", None),
    Shape("fwd", 4096, 7168, 2048, "bf16", None),
    Shape("fwd", 16384, 4096, 14336, "bf16", None),
    Shape("dgrad", 4096, 7168, 2048, "bf16", None),
    Shape("wgrad", 4096, 4096, 16384, "bf16", None),
    Shape("wgrad", 4096, 14336, 16384, "bf16", None),
    Shape("wgrad", 7168, 2048, 4096, "bf16", None),
]
SETS = {"targets": TARGETS, "issue28": ISSUE28, "all": ISSUE28 + EXTRA}
FORMS = ("fwd", "dgrad", "wgrad")
OUTS = ("bf16", "f32")


def parse_shapes(spec):
    """'issue28' | 'targets' | 'all' | a ','-separated list of [form:]MxNxK[:out]
    (form fwd, dgrad or wgrad, default fwd; out bf16 or f32, default bf16),
    e.g. '128x7168x16384,wgrad:14336x4096x16384:f32'. Raises ValueError."""
    if spec in SETS:
        return list(SETS[spec])
    shapes = []
    for item in spec.split(","):
        item = item.strip()
        if not item:
            continue
        parts = item.split(":")
        form = parts.pop(0) if parts[0] in FORMS else "fwd"
        out = parts.pop() if len(parts) > 1 and parts[-1] in OUTS else "bf16"
        if len(parts) != 1:
            raise ValueError(f"shape {item!r}: expected [form:]MxNxK[:out]")
        dims = parts[0].split("x")
        if len(dims) != 3 or not all(d.isdigit() and int(d) > 0 for d in dims):
            raise ValueError(f"shape {item!r}: expected three positive sizes MxNxK")
        M, N, K = (int(d) for d in dims)
        goal = next((s.goal for s in SETS["all"] if s[:5] == (form, M, N, K, out)), None)
        shapes.append(Shape(form, M, N, K, out, goal))
    if not shapes:
        raise ValueError(f"no shapes in {spec!r}")
    return shapes


def shape_name(s):
    return f"{s.form} {s.M}x{s.N}x{s.K}" + (f" {s.out} out" if s.out != "bf16" else "")


def tflops(M, N, K, ms):
    return 2.0 * M * N * K / (ms * 1e-3) / 1e12


def geomean(xs):
    xs = list(xs)
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def _key(r):
    return (r["form"], r["M"], r["N"], r["K"], r.get("out", "bf16"))


def target_geomean(rows, ours, other):
    """Geomean of rows[other] / rows[ours] (times: > 1 means blockscale is
    faster) over the nine targets that have both, and how many had."""
    targets = {s[:5] for s in TARGETS}
    ratios = [r[other] / r[ours] for r in rows
              if _key(r) in targets and r.get(other) and r.get(ours)]
    return geomean(ratios), len(ratios)


def _tf(r, key):
    return tflops(r["M"], r["N"], r["K"], r[key]) if r.get(key) else None


def _num(x, fmt="{:.0f}"):
    return "—" if x is None else fmt.format(x)


def _ratio(r, ours, other):
    if not (r.get(ours) and r.get(other)):
        return "—"
    x = r[other] / r[ours]
    return f"**{x:.2f}**" if x >= 1 else f"{x:.2f}"


def _config(info):
    """'bm, bn, stages, splits; cluster' from a kernel info string."""
    spec = dict(kv.split("=", 1) for kv in (info or "").split() if "=" in kv)
    if "bm" not in spec:
        return info or "—"
    cfg = ", ".join(spec.get(k, "?") for k in ("bm", "bn", "stages", "splits"))
    if spec.get("cluster", "1") != "1":
        cfg += f"; cluster {spec['cluster']}"
    if spec.get("ksplit", "1") != "1":
        cfg += f"; summed in clusters of {spec['ksplit']}"
    return cfg


def summary_lines(rows):
    """The geomean lines; the last two are the ones RESULTS.md quotes."""
    lines = []
    for ctx, suffix in (("after a foreign kernel", "_foreign_ms"), ("without PDL", None)):
        if suffix is None:
            g, n = target_geomean(rows, "ours_nopdl_ms", "cublaslt_ms")
            if n:
                lines.append(f"({ctx}, back to back: geomean vs cuBLASLt {g:.3f} over {n})")
            continue
        parts = []
        for lib, key in (("DeepGEMM", "deepgemm"), ("cuBLASLt", "cublaslt")):
            g, n = target_geomean(rows, "ours" + suffix, key + suffix)
            if n:
                parts.append(f"vs {lib} {g:.3f} over {n}")
        if parts:
            lines.append(f"({ctx}: geomean " + ", ".join(parts) + ")")
    for lib, key in (("DeepGEMM", "deepgemm_ms"), ("cuBLASLt", "cublaslt_ms")):
        g, n = target_geomean(rows, "ours_ms", key)
        if n == len(TARGETS):
            lines.append(f"geomean vs {lib}: {g:.3f}")
        elif n:
            lines.append(f"geomean vs {lib}: {g:.3f} (over {n} of the {len(TARGETS)} targets)")
        else:
            lines.append(f"geomean vs {lib}: not measured")
    return lines


def row_line(r):
    """One printed line of bench_gemm.py."""
    s = (f"{r['form']:5s} {r['M']:6d} {r['N']:6d} {r['K']:6d} {r.get('out', 'bf16'):4s}"
         f" | ours {_num(_tf(r, 'ours_ms'), '{:7.1f}')} ({r.get('ours_relerr', float('nan')):.1e})"
         f" | DeepGEMM {_num(_tf(r, 'deepgemm_ms'), '{:7.1f}')}"
         f" | cuBLASLt {_num(_tf(r, 'cublaslt_ms'), '{:7.1f}')}"
         f" | vs DG {_ratio(r, 'ours_ms', 'deepgemm_ms').strip('*')}"
         f" vs LT {_ratio(r, 'ours_ms', 'cublaslt_ms').strip('*')}"
         f" | after foreign: ours {_num(_tf(r, 'ours_foreign_ms'), '{:.0f}')}"
         f" DG {_num(_tf(r, 'deepgemm_foreign_ms'), '{:.0f}')}"
         f" LT {_num(_tf(r, 'cublaslt_foreign_ms'), '{:.0f}')}"
         f" | no PDL {_num(_tf(r, 'ours_nopdl_ms'), '{:.0f}')}"
         f" | eager {_num(_tf(r, 'ours_eager_ms'), '{:.0f}')}")
    for lib in ("ours", "deepgemm", "cublaslt"):
        if r.get(lib + "_err"):
            s += f" | {lib} ERROR {r[lib + '_err']}"
        elif not r.get(lib + "_ok", True):
            s += f" | {lib} WRONG (relerr {r.get(lib + '_relerr', float('nan')):.1e})"
    return s


def markdown_table(rows):
    """The RESULTS.md table, ending with the geomean lines."""
    out = ["| form | M | N | K | out | blockscale | DeepGEMM | cuBLASLt | vs DeepGEMM | vs cuBLASLt "
           "| after a foreign kernel: blockscale / DeepGEMM / cuBLASLt | vs DeepGEMM | vs cuBLASLt "
           "| blockscale without PDL | bf16 cuBLAS | blockscale eager "
           "| config (bm, bn, stages, splits; cluster) | goal (issue 28) |",
           "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|"]
    for r in rows:
        dg = _num(_tf(r, "deepgemm_ms"))
        if r.get("deepgemm_note") and dg != "—":
            dg += f" ({r['deepgemm_note']})"
        lt = _num(_tf(r, "cublaslt_ms"))
        if r.get("cublaslt_out", r.get("out", "bf16")) != r.get("out", "bf16") and lt != "—":
            lt += f" ({r['cublaslt_out']} out)"
        foreign = " / ".join(_num(_tf(r, k + "_foreign_ms")) for k in ("ours", "deepgemm", "cublaslt"))
        out.append(
            f"| {r['form']} | {r['M']} | {r['N']} | {r['K']} | {r.get('out', 'bf16')} "
            f"| {_num(_tf(r, 'ours_ms'))} | {dg} | {lt} "
            f"| {_ratio(r, 'ours_ms', 'deepgemm_ms')} | {_ratio(r, 'ours_ms', 'cublaslt_ms')} "
            f"| {foreign} | {_ratio(r, 'ours_foreign_ms', 'deepgemm_foreign_ms')} "
            f"| {_ratio(r, 'ours_foreign_ms', 'cublaslt_foreign_ms')} "
            f"| {_num(_tf(r, 'ours_nopdl_ms'))} | {_num(_tf(r, 'bf16_ms'))} "
            f"| {_num(_tf(r, 'ours_eager_ms'))} | {_config(r.get('ours_kernel'))} "
            f"| {r.get('goal') or ''} |")
    out.append("")
    out += summary_lines(rows)
    return "\n".join(out)


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    with open(argv[1]) as f:
        d = json.load(f)
    print(markdown_table(d["rows"]))


if __name__ == "__main__":
    main(sys.argv)
