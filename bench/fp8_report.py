# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The pure-Python parts (no torch) of bench_linear.py and bench_quant.py:
the layer shapes, SQNR in dB, and issue 32's goals checked on their rows."""
import math

# (tokens T, in_features K, out_features N)
SHAPES = [
    (16384, 4096, 4096),
    (16384, 4096, 14336),
    (16384, 14336, 4096),
    (8192, 7168, 2048),
    (8192, 2048, 2048),
]
# Each new in_features / out_features costs torchao's first calls a Triton
# autotuning of its activation casts (45 configurations, keyed on the width):
# e.g. examples/train_llama.py's hidden-2048 MLP, 8192x2048x5632,8192x5632x2048,
# only through --shapes.

BIG = (4096, 14336)  # "the 4096/14336 layers": both features in this set

# (name, layers, baseline, minimum speedup of blockscale); baseline None: the
# FP8 baseline (torchao where measured, else the same recipe on cuBLASLt).
GOALS = [
    ("4096/14336 layers", lambda r: r["K"] in BIG and r["N"] in BIG, None, 1.10),
    ("4096/14336 layers", lambda r: r["K"] in BIG and r["N"] in BIG, "bf16", 1.45),
    ("every layer", lambda r: True, None, 1.0),
]


def parse_shapes(text):
    """'TxKxN,...' (tokens x in x out) -> [(T, K, N)]; 'default' -> SHAPES."""
    if text == "default":
        return list(SHAPES)
    out = []
    for item in filter(None, (s.strip() for s in text.split(","))):
        try:
            t, k, n = (int(v) for v in item.split("x"))
        except ValueError:
            raise ValueError(f"expected TxKxN (tokens x in x out) but got {item!r}") from None
        if min(t, k, n) <= 0 or k % 128 or n % 128:
            raise ValueError(f"{item}: features must be positive multiples of 128")
        out.append((t, k, n))
    if not out:
        raise ValueError("no shapes")
    return out


def db(signal, noise):
    """SQNR in dB from the energies sum(ref^2) and sum((ref - out)^2)."""
    if noise == 0:
        return math.inf
    if signal == 0 or not math.isfinite(noise):
        return -math.inf
    return 10 * math.log10(signal / noise)


def fp8_baseline(rows):
    """'torchao' when any row timed it, else 'cublaslt_fp8' (the same recipe)."""
    return "torchao" if any(k.startswith("torchao_") and k.endswith("_ms")
                            for r in rows for k in r) else "cublaslt_fp8"


def time_of(row, path, graph):
    return row.get(f"{path}_graph_ms" if graph else f"{path}_ms")


def goal_lines(rows, graph=True):
    """(all met, lines): each goal with its worst layer, from graph-captured
    (graph=True) or eager timings; a layer with a failed check is a miss."""
    base = fp8_baseline(rows)
    label = {"torchao": "torchao", "cublaslt_fp8": "the recipe on cuBLASLt (torchao not measured)"}
    ok, lines = True, []
    for what, sel, vs, goal in GOALS:
        vs = vs or base
        ratios = []
        for r in filter(sel, rows):
            ours, theirs = time_of(r, "blockscale", graph), time_of(r, vs, graph)
            if ours and theirs:
                ratios.append((theirs / ours if r.get("blockscale_ok", True) else 0.0, r))
        name = f"blockscale >= {goal:.2f}x {label.get(vs, vs)} on {what}"
        if not ratios:
            lines.append(f"goal {name}: not measured")
            ok = False
            continue
        worst, r = min(ratios, key=lambda x: x[0])
        met = worst >= goal
        ok &= met
        lines.append(f"goal {name}: {'MET' if met else 'MISSED'} (worst {worst:.2f}x at "
                     f"T={r['T']} {r['K']}->{r['N']}, over {len(ratios)} layer(s))")
    return ok, lines


def cast_goal_lines(rows, frac=0.95):
    """Issue 32's cast goals: every cast at least as fast as torchao's of the
    same recipe and layout, and at least `frac` of the copy beside it."""
    lines = []
    vs = [(r["vs_torchao"], r) for r in rows if "vs_torchao" in r]
    name = lambda r: f"{r['what']} {r['rows']}x{r['cols']}"  # noqa: E731
    if vs:
        worst, r = min(vs, key=lambda t: t[0])
        lines.append(f"goal every cast >= torchao's: {'MET' if worst >= 1 else 'MISSED'} "
                     f"(worst {worst:.2f}x, {name(r)}; {sum(v < 1 for v, _ in vs)} of {len(vs)} "
                     f"slower)")
    else:
        lines.append("goal every cast >= torchao's: not measured")
    if not rows:
        return lines + [f"goal every cast >= {100 * frac:.0f} % of the copy: not measured"]
    worst = min(rows, key=lambda r: r["frac"])
    lines.append(f"goal every cast >= {100 * frac:.0f} % of the copy: "
                 f"{'MET' if worst['frac'] >= frac else 'MISSED'} (worst {100 * worst['frac']:.1f} %, "
                 f"{name(worst)}; {sum(r['frac'] < frac for r in rows)} of {len(rows)} below)")
    return lines
