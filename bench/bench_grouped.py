#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""blockscale's m-grouped GEMMs beside DeepGEMM's and a loop of dense GEMMs, one process.

Run on the GPU machine (scripts/gpu-check.sh gbench does, with DeepGEMM set up
when its archive is in .anchors/):
  PYTHONPATH=python python3 bench/bench_grouped.py [--quick] [--vary 0.3] [--json F]

Shapes (DeepSeek-V3 routed experts, issue 29):
  contiguous (G, tokens per expert) in (4, 8192), (8, 4096), (32, 1024) with
    (N, K) in (6144, 7168), (7168, 3072), (4096, 4096), (4096, 2048);
  masked (G, Mmax) in (32, 192), (6, 1024), (32, 20) with the same (N, K).
--vary F draws each contiguous group's size in [1 - F, 1 + F] times the
tokens per expert (seeded); masked groups hold [0.7, 1] x Mmax valid rows.
k-grouped (the experts' weight gradient dW_g (M, N) = dY_g^T X_g):
  (G, M, N, tokens per expert) in (4, 4096, 7168, 8192), (8, 7168, 2048, 4096),
  (16, 4096, 7168, 2048), each group's tokens drawn in [0.7, 1.3] x tokens per
  expert (--k-vary).

Every candidate gets the same FP8 operands (random bf16 quantized by
blockscale's casts), each in its own layouts:
  blockscale   grouped_mm / grouped_mm_masked (offsets and counts on the device);
  DeepGEMM     m_grouped_fp8_gemm_nt_contiguous on A copied into groups padded to
               its M alignment with a per-row group index (-1 on padding rows),
               and m_grouped_fp8_gemm_nt_masked with expected_m = Mmax on
               buffers of Mmax rounded up to 128 rows per group; its scales
               MN-major as it reads them (copies made outside the timing);
  dense loop   one blockscale.scaled_mm per group on the group's rows (sizes
               known on the host).
For the k-grouped rows:
  blockscale   quantize_grouped_tokens of dY and X on the unpadded sizes (not
               timed), then grouped_mm_k (f32 out; also with the bm = 128,
               bn = 128 tile forced, the rule's tile up to 1024 tokens per group)
               and grouped_mm_k_accumulate (f32 +=,
               DeepGEMM's form; also with bn = 128) on its padded operands;
  DeepGEMM     k_grouped_fp8_gemm_nt_contiguous (its sm_90 k-grouped kernel,
               d = c + A^T B in f32) on the same FP8 operands, each group padded
               to 128 tokens as it requires (the cast's layout, rearranged into
               its per-group K-major chunks outside the timing);
  dense loop   one wgrad scaled_mm per group (f32 out) on the group's padded
               tokens.
TFLOP/s count the real tokens.
Each is checked against an f32 product of the dequantized operands (relative
Frobenius error per group < 3e-3) before it is timed. Timing follows
bench_gemm.py: a CUDA graph of ten calls replayed under triton's do_bench
(L2 flushed, median). The table's "vs DeepGEMM" is DeepGEMM's time over
blockscale's (above 1: blockscale faster); the last line is its geometric mean.
--profile CALLS replaces the timing with CALLS calls of each candidate between
cudaProfilerStart and cudaProfilerStop, for `ncu --profile-from-start off`
(scripts/gpu-check.sh gprofile).
"""
import argparse
import json
import math
import os
import random
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import blockscale  # noqa: E402
from blockscale import _capi  # noqa: E402
from blockscale.grouped import (grouped_mm, grouped_mm_masked,  # noqa: E402
                                quantize_grouped_weight, quantize_grouped_activation_masked)
from blockscale.reference import dequantize  # noqa: E402
from bench_gemm import bench_graph, import_deepgemm, warm_up  # noqa: E402

TOL = 3e-3
NK = [(6144, 7168), (7168, 3072), (4096, 4096), (4096, 2048)]
CONTIGUOUS = [(4, 8192), (8, 4096), (32, 1024)]
MASKED = [(32, 192), (6, 1024), (32, 20)]


def weights(G, N, K, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    w = torch.randn(G, N, K, device="cuda", generator=g).to(torch.bfloat16)
    return quantize_grouped_weight(w)


def profiled(fn, calls):
    """fn called `calls` times with the profiler on; no time (NaN)."""
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    return float("nan")


def relerr(out, ref):
    return ((out.float() - ref).norm() / ref.norm().clamp(min=1e-30)).item()


def check_groups(out_rows, refs):
    """Worst relative error over the groups; out_rows(i) is group i's output."""
    worst = 0.0
    for i, ref in refs:
        worst = max(worst, relerr(out_rows(i), ref))
    return worst


def tflops(rows, N, K, ms):
    return 2.0 * rows * N * K / (ms * 1e-3) / 1e12


def dg_m_alignment(dg):
    """DeepGEMM's per-group M alignment of the contiguous layout."""
    for owner in (dg, getattr(dg, "utils", None), getattr(dg, "_C", None)):
        f = getattr(owner, "get_mk_alignment_for_contiguous_layout", None)
        if f is not None:
            return f()
    return 128


def contiguous_case(G, tpe, N, K, vary, dg, seed, timer=bench_graph):
    rnd = random.Random(seed)
    sizes = [max(0, int(round(tpe * rnd.uniform(1 - vary, 1 + vary)))) if vary else tpe
             for _ in range(G)]
    M = sum(sizes)
    x = torch.randn(M, K, device="cuda").to(torch.bfloat16)
    aq, as_ = blockscale.quantize(x, "1x128")
    bq, bs = weights(G, N, K, seed)
    starts = [0]
    for s in sizes:
        starts.append(starts[-1] + s)
    offs = torch.tensor(starts[1:], device="cuda", dtype=torch.int32)
    torch.backends.cuda.matmul.allow_tf32 = False
    a32 = dequantize(aq, as_, "1x128")
    refs = [(i, a32[starts[i]:starts[i + 1]] @ dequantize(bq[i], bs[i], "128x128").t())
            for i in range(G) if sizes[i]]
    del a32
    row = {"kind": "contiguous", "G": G, "m_per_group": tpe, "rows": M, "N": N, "K": K,
           "sizes": sizes}

    ours = lambda: grouped_mm(aq, as_, bq, bs, offs)  # noqa: E731
    res = ours()
    row["ours_relerr"] = check_groups(lambda i: res[starts[i]:starts[i + 1]], refs)
    row["ours_ok"] = row["ours_relerr"] < TOL
    if row["ours_ok"]:
        row["ours_ms"] = timer(ours)

    def loop():
        for i in range(G):
            if sizes[i]:
                blockscale.scaled_mm(aq[starts[i]:starts[i + 1]], as_[starts[i]:starts[i + 1]],
                                     bq[i].t(), bs[i].t(), "1x128", "128x128", torch.bfloat16)
    # (each group's rows start at a multiple of 4 scales for TMA: true for
    # the sizes; with --vary the loop is skipped when not)
    if all(s % 4 == 0 for s in starts):
        outs = [blockscale.scaled_mm(aq[starts[i]:starts[i + 1]], as_[starts[i]:starts[i + 1]],
                                     bq[i].t(), bs[i].t(), "1x128", "128x128", torch.bfloat16)
                for i in range(G)]
        row["loop_relerr"] = max(relerr(outs[i], ref) for i, ref in refs)
        if row["loop_relerr"] < TOL:
            row["loop_ms"] = timer(loop)
        del outs

    if dg is not None:
        try:
            align = dg_m_alignment(dg)
            padded = [-(-s // align) * align for s in sizes]
            Mp = sum(padded)
            a_dg = torch.zeros(Mp, K, device="cuda", dtype=aq.dtype)
            sa_dg = torch.zeros(Mp, as_.shape[1], device="cuda", dtype=torch.float32)
            layout = torch.full((Mp,), -1, device="cuda", dtype=torch.int32)
            pstarts = [0]
            for i, s in enumerate(sizes):
                p0 = pstarts[-1]
                a_dg[p0:p0 + s] = aq[starts[i]:starts[i + 1]]
                sa_dg[p0:p0 + s] = as_[starts[i]:starts[i + 1]]
                layout[p0:p0 + s] = i
                pstarts.append(p0 + padded[i])
            sa_dg = sa_dg.t().contiguous().t()  # MN-major, as its TMA reads it
            sb_dg = bs.contiguous()              # (G, ceil(N/128), ceil(K/128))
            d = torch.full((Mp, N), float("nan"), device="cuda", dtype=torch.bfloat16)
            call = lambda: dg.m_grouped_fp8_gemm_nt_contiguous(  # noqa: E731
                (a_dg, sa_dg), (bq, sb_dg), d, layout)
            call()
            torch.cuda.synchronize()
            row["deepgemm_rows"] = Mp
            row["deepgemm_relerr"] = check_groups(
                lambda i: d[pstarts[i]:pstarts[i] + sizes[i]], refs)
            row["deepgemm_ok"] = row["deepgemm_relerr"] < TOL
            if row["deepgemm_ok"]:
                row["deepgemm_ms"] = timer(call)
        except Exception as e:  # noqa: BLE001  (reported, the row stays)
            row["deepgemm_error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    return row


def masked_case(G, Mmax, N, K, dg, seed, timer=bench_graph):
    rnd = random.Random(seed)
    counts_l = [int(Mmax * rnd.uniform(0.7, 1.0)) for _ in range(G)]
    x = torch.randn(G, Mmax, K, device="cuda").to(torch.bfloat16)
    aq, as_ = quantize_grouped_activation_masked(x)
    bq, bs = weights(G, N, K, seed)
    counts = torch.tensor(counts_l, device="cuda", dtype=torch.int32)
    kb = as_.shape[2]
    as2 = as_.as_strided((G * Mmax, kb), (1, as_.stride(2)), as_.storage_offset())
    torch.backends.cuda.matmul.allow_tf32 = False
    a32 = dequantize(aq.reshape(G * Mmax, K), as2, "1x128").view(G, Mmax, K)
    refs = [(g, a32[g, :c] @ dequantize(bq[g], bs[g], "128x128").t())
            for g, c in enumerate(counts_l) if c]
    del a32
    rows = sum(counts_l)
    row = {"kind": "masked", "G": G, "m_per_group": Mmax, "rows": rows, "N": N, "K": K,
           "sizes": counts_l}
    ours = lambda: grouped_mm_masked(aq, as_, bq, bs, counts)  # noqa: E731
    res = ours()
    row["ours_relerr"] = check_groups(lambda g: res[g, :counts_l[g]], refs)
    row["ours_ok"] = row["ours_relerr"] < TOL
    if row["ours_ok"]:
        row["ours_ms"] = timer(ours)

    if Mmax % 4 == 0:
        def loop():
            for g, c in enumerate(counts_l):
                if c:
                    blockscale.scaled_mm(aq[g, :c], as2[g * Mmax:g * Mmax + c], bq[g].t(),
                                         bs[g].t(), "1x128", "128x128", torch.bfloat16)
        outs = {g: blockscale.scaled_mm(aq[g, :c], as2[g * Mmax:g * Mmax + c], bq[g].t(),
                                        bs[g].t(), "1x128", "128x128", torch.bfloat16)
                for g, c in enumerate(counts_l) if c}
        row["loop_relerr"] = max(relerr(outs[g], ref) for g, ref in refs)
        if row["loop_relerr"] < TOL:
            row["loop_ms"] = timer(loop)

    if dg is not None:
        try:
            # Its masked kernel reads whole blocks of rows per group: a
            # buffer of Mmax rows rounded up to 128 per group, as its users
            # allocate (the valid rows are the same).
            Mdg = -(-Mmax // 128) * 128
            aq_dg = torch.zeros((G, Mdg, K), device="cuda", dtype=aq.dtype)
            aq_dg[:, :Mmax] = aq
            sa_dg = torch.zeros((G, kb, Mdg), device="cuda", dtype=torch.float32)
            sa_dg[:, :, :Mmax] = as_.transpose(1, 2)
            sa_dg = sa_dg.transpose(1, 2)  # per group MN-major
            d = torch.full((G, Mdg, N), float("nan"), device="cuda", dtype=torch.bfloat16)
            call = lambda: dg.m_grouped_fp8_gemm_nt_masked(  # noqa: E731
                (aq_dg, sa_dg), (bq, bs.contiguous()), d, counts, Mmax)
            call()
            torch.cuda.synchronize()
            row["deepgemm_relerr"] = check_groups(lambda g: d[g, :counts_l[g]], refs)
            row["deepgemm_ok"] = row["deepgemm_relerr"] < TOL
            if row["deepgemm_ok"]:
                row["deepgemm_ms"] = timer(call)
        except Exception as e:  # noqa: BLE001
            row["deepgemm_error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    return row


KGROUPED = [(4, 4096, 7168, 8192), (8, 7168, 2048, 4096), (16, 4096, 7168, 2048)]


def kgrouped_operands(G, M, N, tpe, vary, seed):
    """The k-grouped weight gradient's operands: G groups of [1 - vary, 1 +
    vary] x tpe tokens (seeded), dY (tokens, M) and X (tokens, N) through the
    group-aware casts, and each group's f32 reference dY_g^T X_g. Returns
    (sizes, offs, (aq, as_), (bq, bs), refs, nbs, b0s): nbs / b0s are each
    group's 128-token blocks and its first block."""
    from blockscale.grouped import quantize_grouped_tokens
    rnd = random.Random(seed)
    sizes = [max(1, int(round(tpe * rnd.uniform(1 - vary, 1 + vary)))) for _ in range(G)]
    T = sum(sizes)
    offs = torch.tensor(sizes, device="cuda").cumsum(0).to(torch.int32)
    dy = torch.randn(T, M, device="cuda").to(torch.bfloat16)
    x = torch.randn(T, N, device="cuda").to(torch.bfloat16)
    aq, as_ = quantize_grouped_tokens(dy, offs)
    bq, bs = quantize_grouped_tokens(x, offs)
    del dy, x
    nbs = [-(-n // 128) for n in sizes]
    b0s = [sum(nbs[:i]) for i in range(G)]
    torch.backends.cuda.matmul.allow_tf32 = False

    def deq(q, sc, i):
        b0, nb, n = b0s[i], nbs[i], sizes[i]
        return (q[:, b0 * 128:b0 * 128 + n].float()
                * sc[:, b0:b0 + nb].repeat_interleave(128, 1)[:, :n])

    refs = [(i, deq(aq, as_, i) @ deq(bq, bs, i).t()) for i in range(G)]
    return sizes, offs, (aq, as_), (bq, bs), refs, nbs, b0s


def kgrouped_forced(ops, c, G, M, N, accumulate, force_tile, tpe=0, L=None):
    """A k-grouped weight gradient of a forced tile into c (G, M, N) f32, as
    its kernel and launch arguments from library L (default: the package's):
    this bench's 128 x 128 data point and bench/ab.py's variants. ops is
    (aq, as_, bq, bs, offs), taken from kgrouped_operands' results."""
    from blockscale import _grouped_check as gm_check
    from blockscale import grouped as gm
    aq, as_, bq, bs, offs = ops
    dims = gm_check.check_k(*(gm._t(x) for x in ops), "f32")
    kern = _capi.GroupedGemmKernel(_capi.grouped_desc(
        "k", G, N, 0, m=M, out_dtype="f32", accumulate=accumulate,
        m_per_group_hint=tpe, force_tile=force_tile, L=L), L)
    args = _capi.GroupedGemmArgs()
    (L or _capi.lib()).bs_grouped_gemm_args_init(args)
    args.a, args.a_scale, args.b, args.b_scale = (aq.data_ptr(), as_.data_ptr(),
                                                  bq.data_ptr(), bs.data_ptr())
    args.groups, args.c = offs.data_ptr(), c.data_ptr()
    args.capacity, args.ldsa, args.ldsb = dims[3], dims[4], dims[5]
    return kern, args


def kgrouped_case(G, M, N, tpe, vary, dg, seed, timer=bench_graph):
    from blockscale import grouped as gm
    from blockscale.grouped import grouped_mm_k, grouped_mm_k_accumulate
    sizes, offs, (aq, as_), (bq, bs), refs, nbs, b0s = kgrouped_operands(
        G, M, N, tpe, vary, seed)
    T = sum(sizes)
    row = {"kind": "k", "G": G, "m_per_group": tpe, "rows": T, "M": M, "N": N,
           "sizes": sizes}

    ours = lambda: grouped_mm_k(aq, as_, bq, bs, offs)  # noqa: E731
    res = ours()
    row["ours_relerr"] = check_groups(lambda i: res[i], refs)
    row["ours_ok"] = row["ours_relerr"] < TOL
    if row["ours_ok"]:
        row["ours_ms"] = timer(ours)
    del res
    # The default tile beside 128 x 128, the rule's other choice for f32
    # output (a data point for the tile rule), for both the plain and the
    # accumulating form.
    for accumulate, key in ((False, "ours_bn128_ms"), (True, "ours_acc_bn128_ms")):
        other = torch.zeros(G, M, N, device="cuda")
        kern, args = kgrouped_forced((aq, as_, bq, bs, offs), other, G, M, N, accumulate,
                                     "bm=128,bn=128")
        call_other = (lambda k, a: lambda: gm._launch_on(k, a, aq.device))(kern, args)
        call_other()
        if check_groups(lambda i: other[i], refs) < TOL:
            row[key] = timer(call_other)
        del other
    c = torch.zeros(G, M, N, device="cuda")
    acc = lambda: grouped_mm_k_accumulate(c, aq, as_, bq, bs, offs)  # noqa: E731
    acc()
    row["ours_acc_relerr"] = check_groups(lambda i: c[i], refs)
    if row["ours_acc_relerr"] < TOL:
        row["ours_acc_ms"] = timer(acc)

    def loop_outs():
        return [blockscale.scaled_mm(
            aq[:, b0s[i] * 128:(b0s[i] + nbs[i]) * 128], as_[:, b0s[i]:b0s[i] + nbs[i]],
            bq[:, b0s[i] * 128:(b0s[i] + nbs[i]) * 128].t(),
            bs[:, b0s[i]:b0s[i] + nbs[i]].t(), "1x128", "128x1", torch.float32)
            for i in range(G)]
    outs = loop_outs()
    row["loop_relerr"] = max(relerr(outs[i], ref) for i, ref in refs)
    del outs
    if row["loop_relerr"] < TOL:
        row["loop_ms"] = timer(loop_outs)

    if dg is not None:
        try:
            # Its sm_90 k-grouped kernel: per group a K-major (M, K_g) chunk,
            # K_g a multiple of 128, chunks back to back; scales (M, blocks).
            ks = [128 * nb for nb in nbs]
            tb = sum(nbs)
            a_dg = torch.cat([aq[:, b0s[i] * 128:(b0s[i] + nbs[i]) * 128].reshape(-1)
                              for i in range(G)])
            b_dg = torch.cat([bq[:, b0s[i] * 128:(b0s[i] + nbs[i]) * 128].reshape(-1)
                              for i in range(G)])
            sa_dg = as_[:, :tb].t().contiguous().t()
            sb_dg = bs[:, :tb].t().contiguous().t()
            layout = torch.tensor(ks, device="cuda", dtype=torch.int32)
            d = torch.zeros(G, M, N, device="cuda")
            call = lambda: dg.k_grouped_fp8_gemm_nt_contiguous(  # noqa: E731
                (a_dg, sa_dg), (b_dg, sb_dg), d, ks, layout, d)
            call()
            torch.cuda.synchronize()
            row["deepgemm_relerr"] = check_groups(lambda i: d[i], refs)
            row["deepgemm_ok"] = row["deepgemm_relerr"] < TOL
            if row["deepgemm_ok"]:
                row["deepgemm_ms"] = timer(call)
        except Exception as e:  # noqa: BLE001
            row["deepgemm_error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    return row


def markdown_k(rows):
    lines = ["| G | M | N | tokens/group | blockscale ms | TFLOP/s | bn=128 ms | += ms | "
             "+= bn=128 ms | DeepGEMM += ms | vs DeepGEMM (+=) | dense loop ms | vs loop |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ours, oa = r.get("ours_ms"), r.get("ours_acc_ms")
        dgm, lp = r.get("deepgemm_ms"), r.get("loop_ms")
        lines.append("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
            r["G"], r["M"], r["N"], r["m_per_group"], fmt(ours, ".4f"),
            fmt(tflops(r["rows"], r["M"], r["N"], ours) if ours else None, ".0f"),
            fmt(r.get("ours_bn128_ms"), ".4f"), fmt(oa, ".4f"),
            fmt(r.get("ours_acc_bn128_ms"), ".4f"), fmt(dgm, ".4f"),
            fmt(dgm / oa if oa and dgm else None, ".3f"),
            fmt(lp, ".4f"), fmt(lp / ours if ours and lp else None, ".3f")))
    return "\n".join(lines)


def fmt(v, spec):
    return format(v, spec) if isinstance(v, (int, float)) and not math.isnan(v) else "-"


def markdown(rows):
    lines = ["| grouping | G | M/group | N | K | blockscale ms | TFLOP/s | DeepGEMM ms | "
             "vs DeepGEMM | dense loop ms | vs loop |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ours = r.get("ours_ms")
        dgm = r.get("deepgemm_ms")
        lp = r.get("loop_ms")
        lines.append("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
            r["kind"], r["G"], r["m_per_group"], r["N"], r["K"],
            fmt(ours, ".4f"), fmt(tflops(r["rows"], r["N"], r["K"], ours) if ours else None, ".0f"),
            fmt(dgm, ".4f"), fmt(dgm / ours if ours and dgm else None, ".3f"),
            fmt(lp, ".4f"), fmt(lp / ours if ours and lp else None, ".3f")))
    return "\n".join(lines)


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true", help="one (N, K) per grouping shape")
    p.add_argument("--vary", type=float, default=0.0,
                   help="contiguous group sizes drawn in [1 - F, 1 + F] x tokens per expert")
    p.add_argument("--no-deepgemm", action="store_true")
    p.add_argument("--k-vary", type=float, default=0.3,
                   help="k-grouped group sizes drawn in [1 - F, 1 + F] x tokens per expert")
    p.add_argument("--only", choices=("m", "k"), default=None,
                   help="only the m-grouped or only the k-grouped rows")
    p.add_argument("--profile", type=int, default=0, metavar="CALLS",
                   help="call each candidate CALLS times between cudaProfilerStart and "
                        "cudaProfilerStop instead of timing it (for ncu --profile-from-start off)")
    p.add_argument("--json", default=os.path.join(os.environ.get("OUT", "."), "bench_grouped.json"))
    args = p.parse_args()
    dg = None if args.no_deepgemm else import_deepgemm()
    timer = bench_graph
    if args.profile:
        timer = lambda fn: profiled(fn, args.profile)  # noqa: E731
    dev = torch.cuda.get_device_properties(0)
    head = {"device": dev.name, "sms": dev.multi_processor_count, "torch": torch.__version__,
            "blockscale": _capi.version(), "deepgemm": getattr(dg, "__version__", None),
            "vary": args.vary, "date": time.strftime("%Y-%m-%d")}
    print(" ".join(f"{k}={v}" for k, v in head.items()), flush=True)
    warm_up()
    nk = NK[:1] if args.quick else NK
    rows = []
    t0 = time.time()
    seed = 0
    krows = []
    if args.only != "m":
        for G, M, N, tpe in (KGROUPED[:1] if args.quick else KGROUPED):
            seed += 1
            krows.append(kgrouped_case(G, M, N, tpe, args.k_vary, dg, seed, timer))
            print(json.dumps({k: v for k, v in krows[-1].items() if k != "sizes"}), flush=True)
            torch.cuda.empty_cache()
    for G, tpe in (CONTIGUOUS if args.only != "k" else []):
        for N, K in nk:
            seed += 1
            rows.append(contiguous_case(G, tpe, N, K, args.vary, dg, seed, timer))
            print(json.dumps({k: v for k, v in rows[-1].items() if k != "sizes"}), flush=True)
            torch.cuda.empty_cache()
    for G, Mmax in (MASKED if args.only != "k" else []):
        for N, K in nk:
            seed += 1
            rows.append(masked_case(G, Mmax, N, K, dg, seed, timer))
            print(json.dumps({k: v for k, v in rows[-1].items() if k != "sizes"}), flush=True)
            torch.cuda.empty_cache()
    print(f"\n({time.time() - t0:.0f} s)")
    bad = [r for r in rows + krows if not r.get("ours_ok") or r.get("deepgemm_ok") is False]
    for r in bad:
        print(f"WRONG RESULT: {r['kind']} G={r['G']} M={r.get('M', r['m_per_group'])} "
              f"N={r['N']} K={r.get('K', '-')}: ours relerr {r.get('ours_relerr')}, "
              f"DeepGEMM relerr {r.get('deepgemm_relerr')}")
    ratio = geomean([r["deepgemm_ms"] / r["ours_ms"] for r in rows
                     if r.get("deepgemm_ms") and r.get("ours_ms")])
    loop_ratio = geomean([r["loop_ms"] / r["ours_ms"] for r in rows
                          if r.get("loop_ms") and r.get("ours_ms")])
    table = markdown(rows) if rows else ""
    if rows:
        print("\n" + table)
        print(f"\ngrouped geomean vs DeepGEMM: {ratio:.3f}")
        print(f"grouped geomean vs dense loop: {loop_ratio:.3f}", flush=True)
    k_ratio = geomean([r["deepgemm_ms"] / r["ours_acc_ms"] for r in krows
                       if r.get("deepgemm_ms") and r.get("ours_acc_ms")])
    k_loop = geomean([r["loop_ms"] / r["ours_ms"] for r in krows
                      if r.get("loop_ms") and r.get("ours_ms")])
    ktable = markdown_k(krows) if krows else ""
    if krows:
        print("\n" + ktable)
        print(f"\nk-grouped geomean vs DeepGEMM (+=): {k_ratio:.3f}")
        print(f"k-grouped geomean vs dense loop: {k_loop:.3f}", flush=True)
    with open(args.json, "w") as f:
        json.dump({**head, "rows": rows, "geomean_vs_deepgemm": ratio,
                   "geomean_vs_loop": loop_ratio, "table": table, "k_rows": krows,
                   "k_geomean_vs_deepgemm": k_ratio, "k_geomean_vs_loop": k_loop,
                   "k_table": ktable}, f, indent=1)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
