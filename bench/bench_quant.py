#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""blockscale casts vs the device's copy bandwidth, one run.

Bytes counted: input read + FP8 written + scales written. The ceiling is a
device-to-device copy of the input measured in the same run (read + write).
The casts are timed as replays of a CUDA graph of ten calls (median), so
host launch overhead is not counted; the copy as the faster of that and
eager calls.
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
    args = _capi.QuantArgs()
    (L or _capi.lib()).bs_quant_args_init(args)
    args.x, args.q, args.scale = x.data_ptr(), q.data_ptr(), s.data_ptr()
    args.rows, args.ldx = R, C
    args.ldq = R if transpose != col else C  # the result's rows: transposed or not
    args.ld_scale = max(s_strides)
    return (lambda: kern.launch(args, torch.cuda.current_stream().cuda_stream)), q, s


def bit_exact(q, s, qr, sr):
    return torch.equal(q.view(torch.uint8), qr.view(torch.uint8)) and torch.equal(s, sr)


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
    args = p.parse_args()
    cases = [] if args.no_default else list(CASES)
    for item in filter(None, args.rowblock_t.split(",")):
        R, C = (int(v) for v in item.split("x"))
        cases.append((R, C, "1x128", False, "col_major", "activation 1x128 col-major (not recipe)"))
    for item in filter(None, args.extra.split(",")):
        R, C = (int(v) for v in item.split("x"))
        cases += [(R, C, "128x1", False, "col_major", "activation 128x1 col-major, extra"),
                  (R, C, "1x128", True, "row_major", "dY^T 1x128, extra")]
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
        gbs = cast_bytes(x, q, s) / (ms * 1e-3) / 1e9
        copy_gbs = 2 * x.numel() * 2 / (cms * 1e-3) / 1e9
        r = dict(rows=R, cols=C, recipe=recipe, transpose=tr, layout=layout, what=what,
                 ms=ms, gbs=gbs, copy_gbs=copy_gbs, frac=gbs / copy_gbs, bit_exact=exact)
        rows.append(r)
        print(f"{what:42s} {R:6d}x{C:<5d} {ms * 1e3:8.1f} us {gbs:7.0f} GB/s  copy {copy_gbs:6.0f} GB/s"
              f"  {100 * gbs / copy_gbs:5.1f}%  bit-exact={exact}", flush=True)
        del x, q, s, qr, sr, y
    with open(args.json, "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%d"), "rows": rows}, f, indent=1)
    wrong = [r for r in rows if not r["bit_exact"]]
    for r in wrong:
        print(f"NOT BIT-EXACT: {r['what']} {r['rows']}x{r['cols']}")
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
