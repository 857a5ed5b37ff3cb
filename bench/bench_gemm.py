#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""blockscale GEMMs beside DeepGEMM and cuBLASLt blockwise (F.scaled_mm), one process.

Run on the GPU machine (scripts/gpu-check.sh bench does, with DeepGEMM set up
when its archive is in .anchors/):
  PYTHONPATH=python python3 bench/bench_gemm.py [--shapes S] [--quick] [--json F]

Shapes (bench/results_table.py): issue 28's eleven (issue 3's nine targets,
the wgrad one with f32 output, and fwd 8192^3, 64x7168x2048), then more
shapes (--shapes issue28 for those alone). Every library gets the same FP8
operands (random bf16 quantized by blockscale's casts), each in its layouts.

Each call is timed in two contexts, as replays of a CUDA graph timed with
triton.testing.do_bench (CUDA events, L2 flushed before each replay, median):
  back to back: ten calls of the GEMM (blockscale's programmatic launch
    overlaps each call's launch and set-up with the previous call);
  after a foreign kernel: ten times a tiny torch elementwise kernel and the
    GEMM; the foreign kernel's own time (a graph of ten of it) is subtracted.
blockscale is also timed without programmatic launch and eagerly through
the op (host included); bf16 cuBLAS (a @ w.t()) for scale.

DeepGEMM (when `import deep_gemm` works): fp8_gemm_nt with 1x128 A and
128x128 B scales, bf16 out. Its sm_90 weight-gradient kernel only
accumulates into f32 (d += A @ B^T, recipe (1, 1, 128)), so the wgrad rows
time it that way ("f32 +=" in the table) while blockscale writes its output.

Checks: every library's result against an f32 reference of the dequantized
operands (relative Frobenius error < 3e-3). blockscale and DeepGEMM write
into outputs poisoned with NaN first (DeepGEMM's accumulating form into a
random C, C subtracted); blockscale again after the timings (split-K
counters must be back at zero).
"""
import argparse
import json
import os
import sys
import time
import zlib

import torch
import torch.nn.functional as F
from triton.testing import do_bench

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import blockscale  # noqa: E402
from blockscale import _capi  # noqa: E402
from blockscale.reference import dequantize  # noqa: E402
import results_table as rt  # noqa: E402

tflops = rt.tflops  # (bench/tools and power_gemm.py use it from here)

ST = getattr(F, "ScalingType", None)
DTYPES = {"bf16": torch.bfloat16, "f32": torch.float32}
TOL = 3e-3


def bench(fn):
    return do_bench(fn, warmup=25, rep=150, return_mode="median")


def capture_graph(fn, reps=10):
    """A CUDA graph of `reps` calls of fn (after one call outside the capture,
    which compiles kernels and allocates workspaces)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(reps):
            fn()
    return g


def bench_graph(fn, reps=10):
    """Median time of one call, from replays of a graph of `reps` calls."""
    return bench(capture_graph(fn, reps).replay) / reps


_foreign_buf = None


def foreign_kernel():
    """A tiny elementwise torch kernel: not blockscale's, so nothing of the
    GEMM after it overlaps it by programmatic launch."""
    global _foreign_buf
    if _foreign_buf is None:
        _foreign_buf = torch.zeros(4096, device="cuda")
    _foreign_buf.add_(1.0)


def bench_after_foreign(fn, foreign_ms, reps=10):
    """Time of one call when each call follows foreign_kernel() in the graph,
    less the foreign kernel's own time (foreign_ms, from a graph of it alone)."""
    return bench_graph(lambda: (foreign_kernel(), fn()), reps) - foreign_ms


def make_operands(form, M, N, K):
    """A (M,K) 1x128; B (K,N) col-major with 128x128 (fwd/dgrad) or 128x1."""
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16) * 0.05
    aq, as_ = blockscale.quantize(a, "1x128")
    if form == "wgrad":
        # B = x (K=tokens, N) col-major with 128x1 scales: quantize w as (N, K)
        # rows -> logical transpose (K, N), col-major, 128x1 along K.
        bq, bs = blockscale.quantize(w, "128x1", transpose=True, layout="col_major")
        recipe_b = "128x1"
    else:
        bq, bs = blockscale.quantize(w, "128x128", transpose=True, layout="col_major")
        recipe_b = "128x128"
    return a, w, aq, as_, bq, bs, recipe_b


def seed_for(*key):
    torch.manual_seed(zlib.crc32(repr(key).encode()))


def reference(aq, as_, bq, bs, recipe_b):
    """f32 product of the dequantized operands, and a relative-error function."""
    ref = dequantize(aq, as_, "1x128") @ dequantize(bq, bs, recipe_b)
    refn = ref.norm().item()
    return ref, lambda out: ((out.float() - ref).norm() / refn).item()


def poisoned(M, N, dtype):
    return torch.full((M, N), float("nan"), device="cuda", dtype=dtype)


def cublaslt_fn(form, aq, as_, bq, bs, K, out_dtype=torch.bfloat16):
    if ST is None:
        return None
    Kb = -(-K // 128)
    if form == "wgrad":
        sb = bs.t()  # (N, Kb) with strides (1, ldsb): N-major, cuBLASLt's 1x128
        rb = ST.BlockWise1x128
    else:
        Kp = -(-Kb // 4) * 4
        # Our (Kb, Nb) K-major scales with the K stride rounded up to 4 are
        # cuBLASLt's BLK128x128 layout; it wants the padded shape.
        sb = torch.as_strided(bs, (Kp, bs.shape[1]), (1, bs.stride(1)))
        rb = ST.BlockWise128x128
    return lambda: F.scaled_mm(aq, bq, scale_a=as_, scale_recipe_a=ST.BlockWise1x128,
                               scale_b=sb, scale_recipe_b=rb, output_dtype=out_dtype)


def mn_major(s):
    """Scales (rows, Kb) with the rows contiguous (DeepGEMM's TMA-aligned
    layout when rows % 4 == 0), as its README builds them."""
    return s.t().contiguous().t()


def deepgemm_fns(dg, form, aq, as_, bq, bs, M, N):
    """(call, call_into, note) for DeepGEMM on blockscale's operands: call()
    computes into a buffer of its own, call_into(d) into d (for wgrad: d +=).
    B is the weight (N, K) row-major, i.e. our column-major (K, N) transposed."""
    assert M % 4 == 0 and N % 4 == 0, "DeepGEMM's TMA-aligned scales need rows % 4 == 0"
    sa, b = mn_major(as_), bq.t()
    if form == "wgrad":  # both 1x128 along K: B's 128x1 scales are (N, Kb) per row
        sb = mn_major(bs.t())
        into = lambda d: dg.fp8_gemm_nt((aq, sa), (b, sb), d, c=d, recipe=(1, 1, 128))
        d = torch.zeros(M, N, device="cuda", dtype=torch.float32)
        note = "f32 +="
    else:  # 128x128 B scales as (ceil(N/128), Kb), contiguous
        sb = bs.t().contiguous()
        into = lambda d: dg.fp8_gemm_nt((aq, sa), (b, sb), d)
        d = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        note = ""
    return (lambda: into(d)), into, note


def warm_up(seconds=3.0):
    """bf16 GEMMs until the power-limited GPU reaches steady clocks and
    temperature, so that the first timed candidate is not favoured."""
    x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    t_end = time.time() + seconds
    while time.time() < t_end:
        for _ in range(20):
            x @ x
        torch.cuda.synchronize()


def gemm_args(form, M, aq, as_, bq, bs, out, L=None):
    """The C API's argument block for blockscale's GEMM on these operands
    (L: the library whose bs_gemm_args_init sets it up; default lib())."""
    args = _capi.GemmArgs()
    (L or _capi.lib()).bs_gemm_args_init(args)
    args.a, args.a_scale, args.b, args.b_scale, args.c = (
        aq.data_ptr(), as_.data_ptr(), bq.data_ptr(), bs.data_ptr(), out.data_ptr())
    args.m, args.ldsa = M, as_.stride(1)
    if form == "wgrad":
        args.ldsb = bs.stride(0)
    else:
        args.sb_stride_k, args.sb_stride_n = bs.stride(0), bs.stride(1)
    return args


def gemm_kernel(form, M, N, K, out="bf16", force=None, L=None):
    """blockscale's kernel for `force` (None: the planner's choice) planned for
    M, from library L (default lib()); raises _capi.BlockscaleError if refused."""
    desc = _capi.gemm_desc(form="wgrad" if form == "wgrad" else "fwd", m=-1, n=N, k=K,
                           m_hint=M, out_dtype=out, force_tile=force or None)
    return _capi.GemmKernel(desc, L)


def cache_key(kernel):
    """The binary's cache key (from its info line), or '?'."""
    info = kernel.info()
    return info.split("cache_key=")[-1].split()[0] if "cache_key=" in info else "?"


def _try(row, lib, fn):
    """fn() or None, with the error recorded in the row (a library refusing a
    shape does not stop the run)."""
    try:
        return fn()
    except Exception as e:  # noqa: BLE001
        row[lib + "_err"] = repr(e)[:300]
        print(f"{lib}: {row['form']} {row['M']}x{row['N']}x{row['K']}: {str(e).splitlines()[0][:200]}",
              flush=True)
        return None


def run_shape(s, dg, foreign_ms):
    form, M, N, K, out = s.form, s.M, s.N, s.K, s.out
    dtype = DTYPES[out]
    seed_for(form, M, N, K)
    a, w, aq, as_, bq, bs, recipe_b = make_operands(form, M, N, K)
    ref, relerr = reference(aq, as_, bq, bs, recipe_b)
    row = {"form": form, "M": M, "N": N, "K": K, "out": out, "goal": s.goal}

    def check(lib, err):
        row[lib + "_relerr"], row[lib + "_ok"] = err, err < TOL

    # blockscale through the op (what users call); checked through the op's
    # own launch path into a poisoned output.
    ours = lambda: blockscale.scaled_mm(aq, as_, bq, bs, "1x128", recipe_b, dtype)
    dims = blockscale.ops._check_mm(aq, as_, bq, bs, "1x128", recipe_b, dtype)

    def ours_checked():
        o = poisoned(M, N, dtype)
        blockscale.ops._launch_mm(aq, as_, bq, bs, recipe_b, o, False, dims)
        torch.cuda.synchronize()
        return relerr(o)

    check("ours", ours_checked())
    kern = _try(row, "ours_info", lambda: blockscale.ops._gemm_kernel(
        "wgrad" if form == "wgrad" else "fwd", N, K, "e4m3", "e4m3", out, False, M))
    row["ours_kernel"] = kern.info().split(" cache_key")[0] if kern else "?"
    first = bench_graph(ours)

    lt = cublaslt_fn(form, aq, as_, bq, bs, K, dtype)
    if lt is not None and out != "bf16":
        try:
            lt()
        except (RuntimeError, ValueError):  # no f32 output: time its bf16 output
            lt = cublaslt_fn(form, aq, as_, bq, bs, K, torch.bfloat16)
            row["cublaslt_out"] = "bf16"
    if lt is not None:
        o = _try(row, "cublaslt", lt)
        if o is not None:
            check("cublaslt", relerr(o))
            row["cublaslt_ms"] = _try(row, "cublaslt", lambda: bench_graph(lt))

    dgc = None
    if dg is not None:
        fns = _try(row, "deepgemm", lambda: deepgemm_fns(dg, form, aq, as_, bq, bs, M, N))
        if fns is not None:
            dgc, dg_into, row["deepgemm_note"] = fns

            def dg_checked():
                if form == "wgrad":  # accumulates: check d - C on a random C
                    c0 = torch.randn(M, N, device="cuda", dtype=torch.float32)
                    d = c0.clone()
                    dg_into(d)
                    torch.cuda.synchronize()
                    return relerr(d - c0)
                d = poisoned(M, N, torch.bfloat16)
                dg_into(d)
                torch.cuda.synchronize()
                return relerr(d)

            err = _try(row, "deepgemm", dg_checked)
            if err is not None:
                check("deepgemm", err)
                row["deepgemm_ms"] = _try(row, "deepgemm", lambda: bench_graph(dgc))
            else:
                dgc = None

    # ours, the others, ours: the two runs of ours bracket the others', so
    # that clock drift between them shows up; the better of the two counts.
    second = bench_graph(ours)
    row["ours_ms"], row["ours_ms_runs"] = min(first, second), [first, second]

    # After a foreign kernel: each call follows foreign_kernel() in the graph.
    row["foreign_ms"] = foreign_ms
    row["ours_foreign_ms"] = bench_after_foreign(ours, foreign_ms)
    if row.get("cublaslt_ms"):
        row["cublaslt_foreign_ms"] = _try(row, "cublaslt", lambda: bench_after_foreign(lt, foreign_ms))
    if dgc is not None and row.get("deepgemm_ms"):
        row["deepgemm_foreign_ms"] = _try(row, "deepgemm", lambda: bench_after_foreign(dgc, foreign_ms))

    if _capi.programmatic_launch():
        # The same ten launches without programmatic launch: each kernel
        # starts only once the previous one has finished.
        _capi.programmatic_launch(False)
        try:
            row["ours_nopdl_ms"] = bench_graph(ours)
        finally:
            _capi.programmatic_launch(True)
    row["ours_eager_ms"] = bench(ours)
    row["bf16_ms"] = bench_graph(lambda: a @ w.t())
    err = ours_checked()  # after hundreds of launches
    row["ours_relerr_after"] = err
    row["ours_ok"] = row["ours_ok"] and err < TOL
    return row


def import_deepgemm():
    """deep_gemm, or None with the reason printed."""
    try:
        import deep_gemm
        return deep_gemm
    except Exception as e:  # noqa: BLE001  (not importable: its columns stay empty)
        print(f"DeepGEMM: not measured ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})",
              flush=True)
        return None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--shapes", default="all",
                   help="issue28 | targets | all | a list like 128x7168x16384,wgrad:14336x4096x16384:f32")
    p.add_argument("--quick", action="store_true", help="four target shapes")
    p.add_argument("--no-deepgemm", action="store_true")
    p.add_argument("--json", default=os.path.join(os.environ.get("OUT", "."), "bench_gemm.json"))
    args = p.parse_args()
    shapes = rt.parse_shapes(args.shapes)
    if args.quick:
        shapes = [rt.TARGETS[i] for i in (0, 4, 7, 8)]
    dg = None if args.no_deepgemm else import_deepgemm()
    dev = torch.cuda.get_device_properties(0)
    head = {"device": dev.name, "sms": dev.multi_processor_count, "torch": torch.__version__,
            "blockscale": _capi.version(), "programmatic_launch": _capi.programmatic_launch(),
            "deepgemm": getattr(dg, "__version__", None),
            "deepgemm_pdl": dg.get_pdl() if dg is not None else None,
            "date": time.strftime("%Y-%m-%d")}
    print(" ".join(f"{k}={v}" for k, v in head.items()), flush=True)
    warm_up()
    foreign_ms = bench_graph(foreign_kernel)
    print(f"foreign kernel alone: {foreign_ms * 1e3:.2f} us per call", flush=True)
    rows = []
    t0 = time.time()
    for s in shapes:
        rows.append(run_shape(s, dg, foreign_ms))
        print(rt.row_line(rows[-1]), flush=True)
    print(f"\n({time.time() - t0:.0f} s)")
    bad = [r for r in rows if not r.get("ours_ok") or r.get("deepgemm_ok") is False
           or r.get("cublaslt_ok") is False]
    for r in bad:
        print(f"WRONG RESULT: {r['form']} {r['M']}x{r['N']}x{r['K']}: "
              + ", ".join(f"{lib} relerr {r.get(lib + '_relerr', float('nan')):.1e}"
                          for lib in ("ours", "deepgemm", "cublaslt") if r.get(lib + "_ok") is False))
    with open(args.json, "w") as f:
        json.dump({**head, "rows": rows, "summary": rt.summary_lines(rows)}, f, indent=1)
    print("\n" + rt.markdown_table(rows), flush=True)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
