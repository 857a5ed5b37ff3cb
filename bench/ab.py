#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Same-process A/B of blockscale builds and launch options, GEMMs and casts.

Run on the GPU machine (scripts/gpu-check.sh ab does):
  PYTHONPATH=python python3 bench/ab.py --variants FILE [--variant 'LINE' ...]
      [--shapes issue28] [--casts] [--grouped all] [--rounds 2] [--tolerance 0.02]
      [--json F]

Variants file: one variant per line, `name key=value ...`; `#` starts a
comment, blank lines are skipped; or a JSON list of objects with the same
keys ({"name": "base", "lib": "..."}). Keys:
  lib=PATH     libblockscale_c.so of a build (relative to the current
               directory); default: the library the package loads
               ($BLOCKSCALE_LIB, python/blockscale/_lib, build/lib)
  force=TILE   forced tile of every GEMM, e.g. bm=256,bn=128,cluster=2
               (force_tile syntax); default: the planner's choice
  pdl=on|off   programmatic dependent launch (default on)
Nothing else, and no environment: every variant lives in this one process,
so a variant that computes differently is another build
(scripts/build-gpu-bundle.sh --ref <commit> --out .gpu/base). Example, the
core rebuild's check (bench/variants/rebuild.txt):
  base lib=.gpu/base/lib/libblockscale_c.so
  new

Every variant's library is loaded side by side (RTLD_LOCAL). For each shape
all variants get the same operands (quantized by the package's casts), and
each variant's result is checked, in a NaN-poisoned output, against an f32
reference of the dequantized operands (GEMMs: relative error < 3e-3; casts:
bit-exact against the torch reference), before and after the timings. Each
variant's ten back-to-back calls are captured once in a CUDA graph; the
graphs are then timed in --rounds rounds, in alternating order (first to
last, then last to first, ...), each time the median of do_bench's replays
after a 3 s warm-up of the GPU, as bench_gemm.py times. A cast's GB/s is
also given as % of a device copy of its input timed beside it in each round.
The ratio is a variant's speed over the first variant's (best round of
each; > 1: faster); the verdict says whether every shape is within
--tolerance of the first variant.
"""
import argparse
import json
import os
import re
import shlex
import sys

sys.path.insert(0, os.path.dirname(__file__))
import results_table as rt  # noqa: E402  (pure Python, like everything at module level here)

KEYS = ("lib", "force", "pdl")
MAX_WORKSPACE = 4 << 30  # bytes of split-K workspace a forced tile may ask for
NAME = re.compile(r"[A-Za-z0-9_.+-]+$")


class VariantError(ValueError):
    pass


def _variant(name, kv, where):
    if not NAME.match(name or ""):
        raise VariantError(f"{where}: expected a variant name of letters, digits, '_.+-' but got {name!r}")
    v = {"name": name, "lib": None, "force": None, "pdl": True}
    for k, val in kv.items():
        if k not in KEYS:
            raise VariantError(
                f"{where}: unknown key {k!r} (keys: {', '.join(KEYS)}; a variant that computes "
                "differently is another build, built with scripts/build-gpu-bundle.sh --ref)")
        if k == "pdl" and isinstance(val, bool):  # JSON true / false
            val = "on" if val else "off"
        if not isinstance(val, str) or not val:
            raise VariantError(f"{where}: expected a value for {k!r}")
        if k == "pdl":
            if val not in ("on", "off"):
                raise VariantError(f"{where}: expected pdl=on or pdl=off but got pdl={val}")
            v["pdl"] = val == "on"
        else:
            v[k] = val
    return v


def parse_variant_line(line, where="variant"):
    """`name key=value ...` -> variant dict, or None for a blank/comment line."""
    toks = shlex.split(line, comments=True)
    if not toks:
        return None
    kv = {}
    for t in toks[1:]:
        k, eq, val = t.partition("=")
        if not eq:
            raise VariantError(f"{where}: expected key=value but got {t!r}")
        if k in kv:
            raise VariantError(f"{where}: {k!r} given twice")
        kv[k] = val
    return _variant(toks[0], kv, where)


def parse_variants(text, source="variants"):
    """The variants of a file's text (lines or JSON); raises VariantError."""
    if text.lstrip().startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as e:
            raise VariantError(f"{source}: not valid JSON: {e}") from None
        if not isinstance(items, list):
            raise VariantError(f"{source}: expected a JSON list of variants")
        out = []
        for i, it in enumerate(items):
            if not isinstance(it, dict):
                raise VariantError(f"{source}[{i}]: expected an object")
            it = dict(it)
            name = it.pop("name", None)
            out.append(_variant(name, it, f"{source}[{i}]"))
    else:
        out = [v for i, line in enumerate(text.splitlines())
               for v in [parse_variant_line(line, f"{source}:{i + 1}")] if v is not None]
    if not out:
        raise VariantError(f"{source}: no variants")
    names = [v["name"] for v in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise VariantError(f"{source}: variant names used twice: {', '.join(dup)}")
    return out


def describe(v):
    parts = [f"lib={v['lib']}" if v["lib"] else "lib=(package)"]
    if v["force"]:
        parts.append(f"force={v['force']}")
    parts.append("pdl=" + ("on" if v["pdl"] else "off"))
    return " ".join(parts)


def best(ms):
    return min(ms) if ms else float("nan")


def ratios(results, first):
    """Per-variant speed over the first variant's: best rounds, and per round."""
    b0 = best(results[first]["ms"])
    out = {}
    for name, r in results.items():
        ms = r["ms"]
        out[name] = {"best": b0 / best(ms) if ms else float("nan"),
                     "rounds": [m0 / m for m0, m in zip(results[first]["ms"], ms)]}
    return out


def shape_block(title, results, order, unit, fmt_unit):
    """Lines for one shape: per variant its figure per round, the best, the
    ratio to the first variant, the check and the kernel."""
    lines = [title]
    rs = ratios(results, order[0]) if results.get(order[0], {}).get("ms") else {}
    w = max(len(n) for n in order)
    for name in order:
        r = results.get(name)
        if r is None:
            continue
        if r.get("error"):
            lines.append(f"  {name:{w}s}  ERROR {r['error']}")
            continue
        per = " ".join(fmt_unit(r, m) for m in r["ms"])
        ratio = rs.get(name, {})
        rr = " ".join(f"{x:.3f}" for x in ratio.get("rounds", []))
        lines.append(f"  {name:{w}s}  {unit} per round {per}  best {fmt_unit(r, best(r['ms']))}"
                     f"  ratio {ratio.get('best', float('nan')):.3f} (rounds {rr})"
                     f"  {r['check']}  {r.get('kernel', '')[:90]}")
    return lines


def verdict(shape_results, order, tolerance):
    """(ok, lines): whether every shape of every variant is within tolerance
    of the first variant (best rounds), the geomean ratio per variant, and
    the shapes outside."""
    lines, ok = [], True
    if len(order) < 2:
        return ok, ["(one variant: nothing to compare)"]
    for name in order[1:]:
        rs, outside = [], []
        for title, results in shape_results:
            if name not in results or order[0] not in results:
                continue
            if results[name].get("error") or results[order[0]].get("error"):
                outside.append(f"{title}: not timed")
                continue
            x = ratios(results, order[0])[name]["best"]
            rs.append(x)
            if not abs(x - 1) <= tolerance:
                outside.append(f"{title}: {x:.3f}")
        g = rt.geomean(rs)
        lines.append(f"{name} / {order[0]}: geomean {g:.3f} over {len(rs)} shapes, "
                     f"min {min(rs, default=float('nan')):.3f}, max {max(rs, default=float('nan')):.3f}")
        if outside:
            ok = False
            lines.append(f"  outside ±{100 * tolerance:.1f} %: " + "; ".join(outside))
        else:
            lines.append(f"  every shape within ±{100 * tolerance:.1f} %")
    return ok, lines


def summary_table(shape_results, order, fmt_unit):
    """Markdown rows: per shape each variant's best figure and its ratio to
    the first variant."""
    head = "| shape | " + " | ".join(order) + " | " + " | ".join(f"{n} / {order[0]}" for n in order[1:]) + " |"
    lines = [head, "|---|" + "---:|" * (2 * len(order) - 1)]
    for title, results in shape_results:
        rs = ratios(results, order[0]) if results.get(order[0], {}).get("ms") else {}
        cells = []
        for n in order:
            r = results.get(n, {})
            cells.append(fmt_unit(r, best(r["ms"])).strip() if r.get("ms") else "—")
        cells += [f"{rs[n]['best']:.3f}" if n in rs and results[n].get("ms") else "—" for n in order[1:]]
        lines.append(f"| {title} | " + " | ".join(cells) + " |")
    return lines


# --- GPU part (torch imported here only) ----------------------------------

def load_variants(variants):
    from blockscale import _capi
    for v in variants:
        if v["lib"] and not os.path.isfile(v["lib"]):
            sys.exit(f"ab: variant {v['name']}: no library at {v['lib']}")
        v["L"] = _capi.load(v["lib"]) if v["lib"] else _capi.lib()
        v["version"] = v["L"].bs_version().decode()


def set_pdl(v):
    v["L"].bs_set_programmatic_launch(1 if v["pdl"] else 0)


def gemm_shape(s, variants, rounds):
    import torch
    import bench_gemm as bg
    from blockscale import _capi
    form, M, N, K = s.form, s.M, s.N, s.K
    dtype = bg.DTYPES[s.out]
    bg.seed_for(form, M, N, K)
    _, _, aq, as_, bq, bs, recipe_b = bg.make_operands(form, M, N, K)
    _, relerr = bg.reference(aq, as_, bq, bs, recipe_b)
    res, live = {}, []
    for v in variants:
        try:
            kern = bg.gemm_kernel(form, M, N, K, s.out, v["force"], v["L"])
        except _capi.BlockscaleError as e:
            res[v["name"]] = {"error": str(e).splitlines()[0][:200], "ms": [], "MNK": (M, N, K)}
            continue
        ws = kern.workspace_size(M)
        if ws > MAX_WORKSPACE:  # forced split-K on a large shape
            res[v["name"]] = {"error": f"split-K workspace of {ws >> 20} MiB", "ms": [], "MNK": (M, N, K)}
            continue
        wbuf = torch.zeros(max(ws, 16), device="cuda", dtype=torch.uint8)  # counters start at 0
        out = bg.poisoned(M, N, dtype)
        args = bg.gemm_args(form, M, aq, as_, bq, bs, out, v["L"])
        args.workspace, args.workspace_bytes = (wbuf.data_ptr(), ws) if ws else (None, 0)
        call = (lambda k, a: lambda: k.launch(a, torch.cuda.current_stream().cuda_stream))(kern, args)

        def check(out=out, call=call):
            out.fill_(float("nan"))
            call()
            torch.cuda.synchronize()
            return relerr(out)

        set_pdl(v)  # the graph keeps the setting it was captured with
        err = check()
        r = {"ms": [], "MNK": (M, N, K), "relerr": err, "kernel": kern.info(), "key": bg.cache_key(kern),
             "graph": bg.capture_graph(call), "check": "", "keep": (kern, wbuf, out, args, check)}
        res[v["name"]] = r
        live.append(v)
    for i in range(rounds):
        for v in (live if i % 2 == 0 else live[::-1]):
            r = res[v["name"]]
            r["ms"].append(bg.bench(r["graph"].replay) / 10)
    for v in live:
        r = res[v["name"]]
        r["relerr_after"] = r["keep"][-1]()
        ok = r["relerr"] < bg.TOL and r["relerr_after"] < bg.TOL  # NaN fails
        r["ok"] = ok
        r["check"] = f"relerr {r['relerr']:.1e}/{r['relerr_after']:.1e} {'PASS' if ok else 'FAIL'}"
        del r["graph"], r["keep"]
    keys = {}
    for name, r in res.items():
        if r.get("key", "?") != "?":
            keys.setdefault(r["key"], []).append(name)
    same = [names for names in keys.values() if len(names) > 1]
    return res, same


def _cast_variants(x, variants, rounds, make):
    """Times every variant's cast of x: make(L) -> (launch, outputs, bytes,
    exact()) builds one from library L, exact() checking its outputs
    (poisoned first) bit for bit. Checked before and after the timings; the
    copy of x is timed beside the casts in each round."""
    import torch
    import bench_gemm as bg
    import bench_quant as bquant
    from blockscale import _capi
    y = torch.empty_like(x)
    res, live = {}, []
    for v in variants:
        try:
            launch, outs, nbytes, exact = make(v["L"])
        except _capi.BlockscaleError as e:
            res[v["name"]] = {"error": str(e).splitlines()[0][:200], "ms": []}
            continue

        def check(launch=launch, outs=outs, exact=exact):
            for t in outs:  # NaN in e4m3 and in f32
                (t.view(torch.uint8).fill_(0xFF) if t.element_size() == 1
                 else t.fill_(float("nan")))
            launch()
            torch.cuda.synchronize()
            return exact()

        set_pdl(v)
        ok = check()
        res[v["name"]] = {"ms": [], "copy_ms": [], "bytes": nbytes, "exact": ok,
                          "graph": bg.capture_graph(launch), "check_fn": check, "check": ""}
        live.append(v)
    for i in range(rounds):
        cms = bquant.copy_ms(x, y)
        for v in (live if i % 2 == 0 else live[::-1]):
            r = res[v["name"]]
            r["ms"].append(bg.bench(r["graph"].replay) / 10)
            r["copy_ms"].append(cms)
    for v in live:
        r = res[v["name"]]
        after = r.pop("check_fn")()
        r["ok"] = r["exact"] and after
        r["check"] = "bit-exact" if r["ok"] else "NOT BIT-EXACT"
        r["copy_bytes"] = 2 * x.numel() * x.element_size()
        del r["graph"]
    return res


def cast_shape(case, variants, rounds):
    """A single-layout cast (bench_quant.py's CASES / WEIGHT_CASES)."""
    import torch
    import bench_gemm as bg
    import bench_quant as bquant
    from blockscale.reference import quantize_ref
    R, C, recipe, tr, layout, what = case
    bg.seed_for(R, C, recipe, tr, layout)
    x = torch.randn(R, C, device="cuda", dtype=torch.bfloat16)
    qr, sr = quantize_ref(x, recipe, transpose=tr)

    def make(L):
        launch, q, s = bquant.cast_launcher(x, recipe, tr, layout, L)
        return (launch, (q, s), bquant.cast_bytes(x, q, s),
                lambda: bquant.bit_exact(q, s, qr, sr))
    return _cast_variants(x, variants, rounds, make)


def dual_shape(case, variants, rounds):
    """A dual-layout cast (bench_quant.py's DUAL_CASES); the copy beside it
    moves the same 4 bytes per bf16 element as for the single casts."""
    import torch
    import bench_gemm as bg
    import bench_quant as bquant
    from blockscale.reference import quantize_ref
    R, C, recipe, what = case
    bg.seed_for(R, C, recipe, "dual")
    x = torch.randn(R, C, device="cuda", dtype=torch.bfloat16)
    refs = [quantize_ref(x, recipe, transpose=tr) for tr in (False, True)]

    def make(L):
        launch, outs = bquant.dual_launcher(x, recipe, L)
        q, s, qt, st = outs
        return (launch, outs, bquant.dual_bytes(x, q, s, qt, st),
                lambda: bquant.bit_exact(q, s, *refs[0]) and bquant.bit_exact(qt, st, *refs[1]))
    return _cast_variants(x, variants, rounds, make)


# (G, rows per group) of --grouped ragged-small.
RAGGED_SMALL = [(32, 192), (64, 192)]


def grouped_cases(which, k_tokens=0):
    """(kind, G, rows per group, N, K) of bench_grouped.py's m-grouped table;
    k-grouped: (kind, G, tokens per group, M, N), at k_tokens tokens per
    group when given, with G scaled to keep each shape's tokens."""
    import bench_grouped as bgr
    out = []
    if which in ("all", "contiguous"):
        out += [("contiguous", G, m, N, K) for G, m in bgr.CONTIGUOUS for N, K in bgr.NK]
    if which in ("all", "masked"):
        out += [("masked", G, m, N, K) for G, m in bgr.MASKED for N, K in bgr.NK]
    if which == "ragged":
        out += [("ragged", G, m, N, K) for G, m in bgr.CONTIGUOUS for N, K in bgr.NK]
    if which == "ragged-small":  # decode-sized expert batches: two row tiles a group
        out += [("ragged", G, m, N, K) for G, m in RAGGED_SMALL for N, K in bgr.NK]
    if which in ("k", "k-plain"):  # (G, tokens per group, M, N): M x N per group
        for G, M, N, tpe in bgr.KGROUPED:
            if k_tokens:
                G, tpe = max(1, G * tpe // k_tokens), k_tokens
            out.append((which, G, tpe, M, N))
    return out


def _grouped_entry(kern, args, out, call, check, mnk):
    """A grouped variant's result entry: its first check, and its ten calls
    captured as a graph (`keep` holds what the graph uses)."""
    import bench_gemm as bg
    return {"ms": [], "MNK": mnk, "relerr": check(), "kernel": kern.info(),
            "key": kern.info(), "graph": bg.capture_graph(call), "check": "",
            "keep": (kern, out, args, check)}


def _time_grouped(res, live, rounds):
    """Times the live variants' graphs in alternating order, then checks each
    result again."""
    import bench_gemm as bg
    import bench_grouped as bgr
    for i in range(rounds):
        for v in (live if i % 2 == 0 else live[::-1]):
            r = res[v["name"]]
            r["ms"].append(bg.bench(r["graph"].replay) / 10)
    for v in live:
        r = res[v["name"]]
        r["relerr_after"] = r["keep"][-1]()
        ok = r["relerr"] < bgr.TOL and r["relerr_after"] < bgr.TOL
        r["ok"] = ok
        r["check"] = f"relerr {r['relerr']:.1e}/{r['relerr_after']:.1e} {'PASS' if ok else 'FAIL'}"
        del r["graph"], r["keep"]


def kgrouped_shape(case, variants, rounds):
    """One k-grouped weight gradient, f32 C += per group (the form DeepGEMM's
    k-grouped kernel has; case "k-plain": C = the product), bench_grouped.py's
    operands (kgrouped_operands: group sizes in [0.7, 1.3] x the tokens per
    group, seeded), for every variant; `force` is the k-grouped forceTile (bm,
    bn, stages)."""
    import torch
    import bench_gemm as bg
    import bench_grouped as bgr
    from blockscale import _capi
    kind, G, tpe, M, N = case
    acc = kind == "k"
    bg.seed_for("k", G, tpe, M, N)
    sizes, offs, (aq, as_), (bq, bs), refs, _, _ = bgr.kgrouped_operands(
        G, M, N, tpe, 0.3, G * 7919 + tpe)
    T = sum(sizes)
    res, live = {}, []
    for v in variants:
        c = torch.zeros(G, M, N, device="cuda")
        try:
            kern, args = bgr.kgrouped_forced((aq, as_, bq, bs, offs), c, G, M, N, acc,
                                             v["force"], tpe=tpe, L=v["L"])
        except _capi.BlockscaleError as e:
            res[v["name"]] = {"error": str(e).splitlines()[0][:200], "ms": [],
                              "MNK": (M, N, T)}
            continue
        call = (lambda k, a: lambda: k.launch(a, torch.cuda.current_stream().cuda_stream))(
            kern, args)

        def check(c=c, call=call):
            if acc:
                c.zero_()
            else:  # every element of C is written
                c.fill_(float("nan"))
            call()
            torch.cuda.synchronize()
            return max(bgr.relerr(c[i], ref) for i, ref in refs)

        set_pdl(v)
        res[v["name"]] = _grouped_entry(kern, args, c, call, check, (M, N, T))
        live.append(v)
    _time_grouped(res, live, rounds)
    return res


def grouped_shape(case, variants, rounds):
    """One m-grouped GEMM (bench_grouped.py's operands: equal contiguous groups,
    masked counts in [0.7, 1] x Mmax; "ragged": contiguous groups of [0.7,
    1.3] x the rows per group, seeded, as routed tokens come) for every
    variant; `force` is the grouped forceTile (bm, bn, stages)."""
    import random
    import torch
    import bench_gemm as bg
    import bench_grouped as bgr
    import blockscale
    from blockscale import _capi, _grouped_check
    from blockscale import grouped as gm
    from blockscale.reference import dequantize
    kind, G, mpg, N, K = case
    bg.seed_for(kind, G, mpg, N, K)
    bq, bs = bgr.weights(G, N, K, 1)
    torch.backends.cuda.matmul.allow_tf32 = False
    if kind in ("contiguous", "ragged"):
        rnd = random.Random(G * 7919 + mpg)
        sizes = ([mpg] * G if kind == "contiguous" else
                 [int(round(mpg * rnd.uniform(0.7, 1.3))) for _ in range(G)])
        starts = [0]
        for n in sizes:
            starts.append(starts[-1] + n)
        M = starts[-1]
        x = torch.randn(M, K, device="cuda").to(torch.bfloat16)
        aq, as_ = blockscale.quantize(x, "1x128")
        groups = torch.tensor(starts[1:], device="cuda", dtype=torch.int32)
        a32 = dequantize(aq, as_, "1x128")
        refs = [(i, a32[starts[i]:starts[i + 1]] @ dequantize(bq[i], bs[i], "128x128").t())
                for i in range(G)]
        _, _, _, _, ldsa, sb = _grouped_check.check_contiguous(
            gm._t(aq), gm._t(as_), gm._t(bq), gm._t(bs), gm._t(groups), "bf16")
        rows_of = lambda out, i: out[starts[i]:starts[i + 1]]  # noqa: E731
        out_shape, m_arg, m_max, valid = (M, N), M, 0, M
    else:
        rnd = random.Random(7)
        counts = [int(mpg * rnd.uniform(0.7, 1.0)) for _ in range(G)]
        x = torch.randn(G, mpg, K, device="cuda").to(torch.bfloat16)
        aq, as_ = gm.quantize_grouped_activation_masked(x)
        groups = torch.tensor(counts, device="cuda", dtype=torch.int32)
        kb = as_.shape[2]
        as2 = as_.as_strided((G * mpg, kb), (1, as_.stride(2)), as_.storage_offset())
        a32 = dequantize(aq.reshape(G * mpg, K), as2, "1x128").view(G, mpg, K)
        refs = [(g, a32[g, :c] @ dequantize(bq[g], bs[g], "128x128").t())
                for g, c in enumerate(counts) if c]
        _, _, _, _, ldsa, sb = _grouped_check.check_masked(
            gm._t(aq), gm._t(as_), gm._t(bq), gm._t(bs), gm._t(groups), "bf16")
        rows_of = lambda out, g: out[g, :counts[g]]  # noqa: E731
        out_shape, m_arg, m_max, valid = (G, mpg, N), -1, mpg, sum(counts)
    del a32
    res, live = {}, []
    for v in variants:
        try:
            kern = _capi.GroupedGemmKernel(_capi.grouped_desc(
                "masked" if kind == "masked" else "contiguous", G, N, K, m_max=m_max,
                m_per_group_hint=mpg, force_tile=v["force"],
                L=v["L"]), v["L"])
        except _capi.BlockscaleError as e:
            res[v["name"]] = {"error": str(e).splitlines()[0][:200], "ms": [],
                              "MNK": (valid, N, K)}
            continue
        out = torch.full(out_shape, float("nan"), device="cuda", dtype=torch.bfloat16)
        args = _capi.GroupedGemmArgs()
        v["L"].bs_grouped_gemm_args_init(args)
        args.a, args.a_scale, args.b, args.b_scale = (aq.data_ptr(), as_.data_ptr(),
                                                      bq.data_ptr(), bs.data_ptr())
        args.groups, args.c, args.m, args.ldsa = groups.data_ptr(), out.data_ptr(), m_arg, ldsa
        args.sb_stride_g, args.sb_stride_n, args.sb_stride_k = sb
        call = (lambda k, a: lambda: k.launch(a, torch.cuda.current_stream().cuda_stream))(
            kern, args)

        def check(out=out, call=call):
            out.fill_(float("nan"))
            call()
            torch.cuda.synchronize()
            return max(bgr.relerr(rows_of(out, i), ref) for i, ref in refs)

        set_pdl(v)
        res[v["name"]] = _grouped_entry(kern, args, out, call, check, (valid, N, K))
        live.append(v)
    _time_grouped(res, live, rounds)
    return res


def tflops_fmt(r, ms):
    return rt.tflops(*r["MNK"], ms)


def gbs_fmt(r, ms):
    """'GB/s (% of the copy of the same round)' for a cast time."""
    if ms not in r["ms"]:
        return "—"
    i = r["ms"].index(ms)
    gbs = r["bytes"] / (ms * 1e-3) / 1e9
    copy = r["copy_bytes"] / (r["copy_ms"][i] * 1e-3) / 1e9
    return f"{gbs:5.0f} ({100 * gbs / copy:4.1f} %)"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--variants", help="variants file (lines or JSON, see the module docstring)")
    p.add_argument("--variant", action="append", default=[], metavar="LINE",
                   help="one more variant, 'name key=value ...' (after the file's)")
    p.add_argument("--shapes", default="issue28",
                   help="GEMM shapes: issue28 | targets | all | a list like "
                        "128x7168x16384,wgrad:14336x4096x16384:f32 | none")
    p.add_argument("--casts", action=argparse.BooleanOptionalAction, default=False,
                   help="also the casts of bench_quant.py (single, weight and dual-layout)")
    p.add_argument("--grouped",
                   choices=("none", "all", "contiguous", "masked", "ragged", "ragged-small", "k",
                            "k-plain"),
                   default="none",
                   help="also the grouped GEMMs of bench_grouped.py (all: m-grouped contiguous "
                        "and masked; ragged: the contiguous shapes with group sizes drawn in "
                        "[0.7, 1.3] x rows per group; ragged-small: the same around 192 rows "
                        "per group; k: the k-grouped weight gradient, f32 "
                        "+=; k-plain: the same, C = the product); a variant's force is then "
                        "the grouped forceTile: bm, bn, stages (m-grouped: also cluster)")
    p.add_argument("--k-tokens", type=int, default=0, metavar="T",
                   help="--grouped k / k-plain at T tokens per group, G scaled to keep "
                        "each shape's tokens (rounded down to whole groups)")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--tolerance", type=float, default=0.02,
                   help="the verdict's band around the first variant (0.02: ±2 %%)")
    p.add_argument("--json", default=os.path.join(os.environ.get("OUT", "."), "ab.json"))
    args = p.parse_args(argv)
    if args.k_tokens < 0 or (args.k_tokens and args.grouped not in ("k", "k-plain")):
        p.error(f"--k-tokens goes with --grouped k or k-plain and is positive, but got "
                f"--k-tokens {args.k_tokens} with --grouped {args.grouped}")
    try:
        variants = []
        if args.variants:
            with open(args.variants) as f:
                variants += parse_variants(f.read(), args.variants)
        for i, line in enumerate(args.variant):
            v = parse_variant_line(line, f"--variant {i + 1}")
            if v:
                variants.append(v)
        if not variants:
            raise VariantError("no variants: give --variants FILE or --variant LINE")
        names = [v["name"] for v in variants]
        if len(set(names)) != len(names):
            raise VariantError("variant names used twice")
        shapes = [] if args.shapes == "none" else rt.parse_shapes(args.shapes)
    except (OSError, ValueError) as e:
        sys.exit(f"ab: {e}")
    if args.rounds < 1:
        sys.exit("ab: --rounds must be at least 1")

    import torch
    import bench_gemm as bg
    import bench_quant as bquant
    load_variants(variants)
    dev = torch.cuda.get_device_properties(0)
    print(f"device {dev.name} sms={dev.multi_processor_count} torch={torch.__version__} "
          f"rounds={args.rounds}", flush=True)
    for v in variants:
        print(f"variant {v['name']}: {describe(v)} [{v['version']}]", flush=True)
    order = [v["name"] for v in variants]
    bg.warm_up()
    gemm, casts, bad, notrun = [], [], [], []
    for s in shapes:
        title = rt.shape_name(s)
        res, same = gemm_shape(s, variants, args.rounds)
        gemm.append((title, res))
        fmt = lambda r, ms: f"{tflops_fmt(r, ms):7.1f}"
        print("\n".join(shape_block(title, res, order, "TFLOP/s", fmt)), flush=True)
        for names in same:
            print(f"  note: {', '.join(names)} run the same binary here", flush=True)
        bad += [f"{title} {n}" for n, r in res.items() if r.get("ok") is False]
        notrun += [f"{title} {n}: {r['error']}" for n, r in res.items() if r.get("error")]
    for case in grouped_cases(args.grouped, args.k_tokens):
        if case[0] in ("k", "k-plain"):
            title = "k-grouped G={} tokens={} {}x{} {}".format(
                *case[1:], "+=" if case[0] == "k" else "=")
            res = kgrouped_shape(case, variants, args.rounds)
        else:
            title = "grouped {} G={} m={} {}x{}".format(*case)
            res = grouped_shape(case, variants, args.rounds)
        gemm.append((title, res))
        fmt = lambda r, ms: f"{tflops_fmt(r, ms):7.1f}"
        print("\n".join(shape_block(title, res, order, "TFLOP/s", fmt)), flush=True)
        bad += [f"{title} {n}" for n, r in res.items() if r.get("ok") is False]
        notrun += [f"{title} {n}: {r['error']}" for n, r in res.items() if r.get("error")]
    if args.casts:
        cases = [(f"cast {c[5]} {c[0]}x{c[1]}", cast_shape, c)
                 for c in bquant.CASES + bquant.WEIGHT_CASES]
        cases += [(f"dual cast {c[3]} {c[0]}x{c[1]}", dual_shape, c) for c in bquant.DUAL_CASES]
        for title, shape_fn, case in cases:
            res = shape_fn(case, variants, args.rounds)
            casts.append((title, res))
            print("\n".join(shape_block(title, res, order, "GB/s (% of copy)", gbs_fmt)), flush=True)
            bad += [f"{title} {n}" for n, r in res.items() if r.get("ok") is False]
            notrun += [f"{title} {n}: {r['error']}" for n, r in res.items() if r.get("error")]
    print(f"\nSummary (speed over {order[0]}, best of {args.rounds} rounds):")
    if gemm:
        print("\n".join(summary_table(
            gemm, order, lambda r, ms: f"{tflops_fmt(r, ms):.0f}")) + "\n")
    if casts:
        print("\n".join(summary_table(casts, order, gbs_fmt)) + "\n")
    ok, lines = verdict(gemm + casts, order, args.tolerance)
    print("\n".join(lines))
    for b in notrun:
        print(f"NOT RUN: {b}")
    for b in bad:
        print(f"WRONG RESULT: {b}")
    with open(args.json, "w") as f:
        json.dump({"device": dev.name, "rounds": args.rounds, "tolerance": args.tolerance,
                   "variants": [{k: v[k] for k in ("name", "lib", "force", "pdl", "version")}
                                for v in variants],
                   "gemm": dict(gemm), "casts": dict(casts), "within_tolerance": ok,
                   "wrong": bad, "not_run": notrun}, f, indent=1, default=str)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
