#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""blockscale casts vs the device's copy bandwidth and torchao's Triton casts
of the same recipe and layout (when bench/torchao_anchor.py finds torchao),
one run.

Bytes counted: input read + FP8 written + scales written. The ceiling is a
device-to-device copy of the input measured in the same run (read + write).
The casts are timed as replays of a CUDA graph of ten calls (median), so
host launch overhead is not counted; the copy as the faster of that and
eager calls. torchao's casts are timed the same way and credited with the
same bytes (so their ratio is a time ratio); their FP8 values and scales are
compared with ours (bit-exact, or how many differ and by how much).

Dual-layout casts (blockscale.ops.quantize_dual, when the package has it):
one kernel writes both layouts, (q, s) and the transposed (qt, st). Checked
bit-exact against the two single-layout casts it replaces, and timed against
them (one graph holding both), against torchao's two casts of the same
layouts, and against a copy that reads the input once and writes twice the
FP8 bytes: for a bf16 input that is a bf16 -> bf16 copy of it, 2 bytes read
and 2 bytes written per element. The dual cast is credited with input read +
both FP8 results written + the scales written (once where st shares s's
storage).
PYTHONPATH=python python3 bench/bench_quant.py [--json F]
"""
import argparse
import functools
import json
import os
import sys
import time

import torch
from triton.testing import do_bench


sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import blockscale  # noqa: E402
from blockscale import _capi, ops  # noqa: E402
from blockscale.reference import quantize_ref  # noqa: E402
from bench_gemm import bench_graph  # noqa: E402  (same folder)
import fp8_report as rep  # noqa: E402
import torchao_anchor  # noqa: E402

CASES = [  # (rows, cols, recipe, transpose, layout, what)
    (32768, 4096, "1x128", False, "row_major", "activation 1x128 (LHS)"),
    (32768, 4096, "128x1", False, "col_major", "activation 128x1 col-major (wgrad RHS)"),
    (32768, 4096, "1x128", True, "row_major", "dY^T 1x128 (wgrad LHS)"),
    (32768, 4096, "128x128", True, "col_major", "weight 128x128 (fwd B)"),
    (32768, 4096, "128x128", False, "col_major", "weight^T 128x128 (dgrad B)"),
    (65536, 8192, "1x128", False, "row_major", "activation 1x128, large"),
    (65536, 8192, "128x1", False, "col_major", "activation 128x1, large"),
    (4096, 7168, "1x128", False, "row_major", "activation 1x128, small"),
]

# Weights of the linear layers (ab.py --casts times these too).
WEIGHT_CASES = [
    (16384, 7168, "128x128", True, "col_major", "weight 128x128 (fwd B)"),
    (16384, 7168, "128x128", False, "col_major", "weight^T 128x128 (dgrad B)"),
    (14336, 4096, "128x128", True, "col_major", "weight 128x128 (fwd B)"),
    (14336, 4096, "128x128", False, "col_major", "weight^T 128x128 (dgrad B)"),
]

DUAL_CASES = [  # (rows, cols, recipe, what): quantize_dual
    (32768, 4096, "1x128", "dY 1x128 + dY^T 1x128 (dgrad + wgrad LHS)"),
    (16384, 14336, "1x128", "dY 1x128 + dY^T 1x128, 14336 wide"),
    (16384, 7168, "128x128", "W + W^T 128x128 (dgrad + fwd B)"),
    (14336, 4096, "128x128", "W + W^T 128x128"),
]


def copy_ms(x, y):
    """The ceiling: the faster of a captured and an eager copy x -> y (in a
    graph a large copy becomes a memcpy node, measured at 2.8 TB/s for 1 GB
    against 4.2 TB/s eagerly)."""
    return min(bench_graph(lambda: y.copy_(x)),
               do_bench(lambda: y.copy_(x), warmup=25, rep=200, return_mode="median"))


def cast_bytes(x, q, s):
    """Bytes a cast moves: input read, FP8 written, scales written."""
    return x.numel() * x.element_size() + q.numel() + s.numel() * 4


def cast_launcher(x, recipe, transpose, layout, L=None):
    """(launch, q, s): blockscale's cast of x from library L (default: the
    package's) into q and s, laid out as blockscale.quantize lays them out;
    launch() launches it on the current stream (graph-capturable)."""
    R, C = x.shape
    shape = (C, R) if transpose else (R, C)
    col = layout == "col_major"
    q = torch.empty_strided(shape, (1, shape[0]) if col else (shape[1], 1),
                            dtype=torch.float8_e4m3fn, device=x.device)
    s_shape, s_strides, _ = ops.scale_geometry(recipe, shape)
    s = ops._scale_tensor(s_shape, s_strides, x.device)
    desc = _capi.quant_desc(in_dtype=ops.IN_DTYPES[x.dtype], out_type="e4m3",
                            block=ops.RECIPES[recipe], transpose=transpose, col_major=col,
                            rows=-1, cols=C, L=L)
    kern = _capi.QuantKernel(desc, L)
    args = ops._quant_args(L or _capi.lib(), x, x.stride(0), q, s, transpose != col)
    return (lambda: kern.launch(args, torch.cuda.current_stream().cuda_stream)), q, s


def dual_launcher(x, recipe, L=None):
    """(launch, (q, s, qt, st)): blockscale's dual-layout cast of x from
    library L (default: the package's), laid out as ops.quantize_dual lays
    its results out; launch() launches it on the current stream."""
    R, C, outs = ops._dual_outputs(x, recipe, torch.float8_e4m3fn)
    q, s, qt, st = outs
    desc = _capi.quant_desc(in_dtype=ops.IN_DTYPES[x.dtype], out_type="e4m3",
                            block=ops.RECIPES[recipe], rows=-1, cols=C, dual=True, L=L)
    kern = _capi.QuantKernel(desc, L)
    args = ops._dual_args(L or _capi.lib(), x, x.stride(0), q, s, qt, st)
    return (lambda: kern.launch(args, torch.cuda.current_stream().cuda_stream)), outs


def dual_bytes(x, q, s, qt, st):
    """Bytes a dual cast moves: input read, both FP8 results and the scales
    written (once where st shares s's storage)."""
    shared = st.untyped_storage().data_ptr() == s.untyped_storage().data_ptr()
    return x.numel() * x.element_size() + q.numel() + qt.numel() + \
        4 * (s.numel() + (0 if shared else st.numel()))


def bit_exact(q, s, qr, sr):
    return torch.equal(q.view(torch.uint8), qr.view(torch.uint8)) and torch.equal(s, sr)


def differences(q, s, q2, s2):
    """How (q2, s2) differs from (q, s), compared as logical tensors: {} when
    bit-exact, else the FP8 elements and scales that differ, the largest
    difference of the FP8 values and the largest relative scale difference."""
    if q.shape != q2.shape or s.shape != s2.shape:
        return {"shapes": f"{tuple(q.shape)}/{tuple(s.shape)} vs {tuple(q2.shape)}/{tuple(s2.shape)}"}
    nq = (q.view(torch.uint8) != q2.view(torch.uint8)).sum().item()
    ns = (s != s2).sum().item()
    if nq == 0 and ns == 0:
        return {}
    return {"q_differ": nq, "q_max_abs": (q.float() - q2.float()).abs().max().item(),
            "s_differ": ns, "s_max_rel": ((s - s2).abs() / s.abs()).max().item()}


def describe(d):
    if not d:
        return "bit-exact"
    if "shapes" in d:
        return "shapes differ: " + d["shapes"]
    return (f"{d['q_differ']} FP8 values differ (max {d['q_max_abs']:g}), "
            f"{d['s_differ']} scales (max rel {d['s_max_rel']:.1e})")


def time_torchao(fn, x):
    """(ms, q, s) of torchao's cast fn; the first call autotunes (Triton), out
    of the timing and reported when long."""
    t0 = time.perf_counter()
    q, s = fn(x)
    torch.cuda.synchronize()
    first = time.perf_counter() - t0
    if first > 2:
        print(f"  (torchao first call {first:.1f} s: Triton autotuning)", flush=True)
    return bench_graph(lambda: fn(x)), q, s


def dual_row(R, C, recipe, what, ao):
    """quantize_dual against the two single-layout casts it replaces (bit-exact
    and time), torchao's two casts of the same layouts, and the copy."""
    x = torch.randn(R, C, device="cuda", dtype=torch.bfloat16)
    q, s, qt, st = ops.quantize_dual(x, recipe)
    singles = [(recipe, False), (recipe, True)]
    got = [(q, s), (qt, st)]
    exact = True
    for (rc, tr), (gq, gs) in zip(singles, got):
        sq, ss = blockscale.quantize(x, rc, transpose=tr)
        rq, rs = quantize_ref(x, rc, transpose=tr)
        exact &= not differences(sq, ss, gq, gs) and bit_exact(gq, gs, rq, rs)
    ms = bench_graph(lambda: ops.quantize_dual(x, recipe))
    pair_ms = bench_graph(lambda: [blockscale.quantize(x, rc, transpose=tr) for rc, tr in singles])
    nbytes = dual_bytes(x, q, s, qt, st)
    # The copy: reads the input once and writes 2x the FP8 bytes, i.e. for
    # bf16 a bf16 -> bf16 copy (2 bytes read, 2 written per element).
    assert x.dtype == torch.bfloat16
    copy_bytes = x.numel() * 2 + 2 * x.numel()
    y = torch.empty_like(x)
    cms = copy_ms(x, y)
    gbs, copy_gbs = nbytes / (ms * 1e-3) / 1e9, copy_bytes / (cms * 1e-3) / 1e9
    r = dict(rows=R, cols=C, recipe=recipe, dual=True, what=what, ms=ms, gbs=gbs,
             copy_gbs=copy_gbs, frac=gbs / copy_gbs, bit_exact=exact, singles_ms=pair_ms)
    ao_txt = ""
    if ao is not None:
        # the two layouts the layer reads: 1x128 and 1x128 transposed (dY);
        # W (fwd B, same bytes as W row-major) and W^T (dgrad B)
        layout = "row_major" if recipe == "1x128" else "col_major"
        fns = [torchao_anchor.cast_fn(ao, recipe, tr, layout) for tr in (False, True)]
        for f in fns:
            time_torchao(f, x)
        r["torchao_pair_ms"] = bench_graph(lambda: [f(x) for f in fns])
        r["vs_torchao"] = r["torchao_pair_ms"] / ms
        ao_txt = f"  vs torchao's two {r['torchao_pair_ms'] / ms:.2f}x"
    print(f"{'dual: ' + what:58s} {R:6d}x{C:<5d} {ms * 1e3:8.1f} us {gbs:7.0f} GB/s  copy "
          f"{copy_gbs:6.0f} GB/s  {100 * gbs / copy_gbs:5.1f}%  vs the two casts "
          f"{pair_ms / ms:.2f}x{ao_txt}  bit-exact={exact}", flush=True)
    return r


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--json", default=os.path.join(os.environ.get("OUT", "."), "bench_quant.json"))
    p.add_argument("--extra", default="",
                   help="more sizes RxC (comma-separated) for the two transposing activation "
                        "casts, e.g. 32768x8192,65536x4096")
    p.add_argument("--rowblock-t", default="",
                   help="sizes RxC (comma-separated) for the 1x128 cast stored col-major, the "
                        "16-bit cast with 1x128 blocks that transposes (not one of the recipe's)")
    p.add_argument("--no-default", action="store_true",
                   help="only the sizes given by --extra / --rowblock-t")
    p.add_argument("--no-torchao", action="store_true", help="leave torchao's casts out")
    p.add_argument("--no-dual", action="store_true", help="leave the dual-layout casts out")
    args = p.parse_args()
    cases = [] if args.no_default else CASES + WEIGHT_CASES
    for item in filter(None, args.rowblock_t.split(",")):
        R, C = (int(v) for v in item.split("x"))
        cases.append((R, C, "1x128", False, "col_major", "activation 1x128 col-major (not recipe)"))
    for item in filter(None, args.extra.split(",")):
        R, C = (int(v) for v in item.split("x"))
        cases += [(R, C, "128x1", False, "col_major", "activation 128x1 col-major, extra"),
                  (R, C, "1x128", True, "row_major", "dY^T 1x128, extra")]
    ao = None if args.no_torchao else torchao_anchor.load()
    rows = []
    for R, C, recipe, tr, layout, what in cases:
        x = torch.randn(R, C, device="cuda", dtype=torch.bfloat16)
        q, s = blockscale.quantize(x, recipe, transpose=tr, layout=layout)
        qr, sr = quantize_ref(x, recipe, transpose=tr)
        exact = bit_exact(q, s, qr, sr)
        # Graphs of ten calls: the small case is shorter than the host's
        # launch path through the custom op, which would be timed otherwise.
        ms = bench_graph(functools.partial(blockscale.quantize, x, recipe, transpose=tr, layout=layout))
        y = torch.empty_like(x)
        cms = copy_ms(x, y)
        nbytes = cast_bytes(x, q, s)
        gbs = nbytes / (ms * 1e-3) / 1e9
        copy_gbs = 2 * x.numel() * 2 / (cms * 1e-3) / 1e9
        r = dict(rows=R, cols=C, recipe=recipe, transpose=tr, layout=layout, what=what,
                 ms=ms, gbs=gbs, copy_gbs=copy_gbs, frac=gbs / copy_gbs, bit_exact=exact)
        ao_fn = torchao_anchor.cast_fn(ao, recipe, tr, layout)
        ao_txt = ""
        if ao_fn is not None:
            ams, aq, as_ = time_torchao(ao_fn, x)
            d = differences(q, s, aq, as_)
            agbs = nbytes / (ams * 1e-3) / 1e9
            r.update(torchao_ms=ams, torchao_gbs=agbs, torchao_frac=agbs / copy_gbs,
                     vs_torchao=ams / ms, torchao_diff=d)
            ao_txt = (f"  torchao {ams * 1e3:8.1f} us {100 * agbs / copy_gbs:5.1f}%  ours "
                      f"{ams / ms:.2f}x  torchao vs ours: {describe(d)}")
            del aq, as_
        rows.append(r)
        print(f"{what:42s} {R:6d}x{C:<5d} {ms * 1e3:8.1f} us {gbs:7.0f} GB/s  copy {copy_gbs:6.0f} GB/s"
              f"  {100 * gbs / copy_gbs:5.1f}%  bit-exact={exact}{ao_txt}", flush=True)
        del x, q, s, qr, sr, y
    if not args.no_dual and not args.no_default:
        if hasattr(ops, "quantize_dual"):
            rows += [dual_row(R, C, recipe, what, ao) for R, C, recipe, what in DUAL_CASES]
        else:
            print("dual-layout casts: blockscale.ops has no quantize_dual; left out")
    for line in rep.cast_goal_lines(rows):
        print(line)
    with open(args.json, "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%d"), "torchao": ao.version if ao else None,
                   "rows": rows}, f, indent=1)
    wrong = [r for r in rows if not r["bit_exact"]]
    for r in wrong:
        print(f"NOT BIT-EXACT: {r['what']} {r['rows']}x{r['cols']}")
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
