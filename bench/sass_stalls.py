#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Summarizes an Nsight Compute source page (SASS, CSV) by opcode.

    ncu -i report.ncu-rep --page source --csv --print-source sass > k.csv
    python3 bench/sass_stalls.py k.csv [--loop LO HI]

For each opcode: warp-state samples (the share of all samples), how many
times it executed, and its largest stall reasons. With --loop, the same per
instruction for the address range [LO, HI) (hex offsets from the kernel's
first instruction). The report comes from ncu on the GPU machine, e.g.
`ncu -k regex:bs_gemm -c 1 --section SourceCounters -o k build/bin/blockscale-gen --run ...`.
"""
import argparse
import collections
import csv


def load(path):
    rows = list(csv.reader(open(path)))
    hdr, data = rows[1], rows[2:]
    ix = {h: i for i, h in enumerate(hdr)}
    stalls = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
    return data, ix, stalls


def opcode(src):
    words = src.split()
    op = words[1] if words[0].startswith("@") else words[0]
    return op.split(".")[0]


def num(r, ix, key):
    return int(r[ix[key]] or 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--loop", nargs=2, metavar=("LO", "HI"))
    ap.add_argument("--top", type=int, default=18)
    a = ap.parse_args()
    data, ix, stalls = load(a.csv)
    samples = "Warp Stall Sampling (All Samples)"
    by = collections.defaultdict(collections.Counter)
    executed = collections.Counter()
    for r in data:
        op = opcode(r[1].strip())
        for s in stalls:
            by[op][s[6:]] += num(r, ix, s)
        by[op]["ALL"] += num(r, ix, samples)
        executed[op] += num(r, ix, "Instructions Executed")
    total = sum(c["ALL"] for c in by.values())
    print(f"samples {total}, instructions executed {sum(executed.values())}")
    for op, c in sorted(by.items(), key=lambda x: -x[1]["ALL"])[: a.top]:
        top = " ".join(f"{k}:{v}" for k, v in c.most_common(6) if k != "ALL")
        print(f"{op:12s} {c['ALL']:7d} ({100 * c['ALL'] / total:4.1f}%) "
              f"executed {executed[op]:11d}  {top}")
    if a.loop:
        lo, hi = (int(x, 16) for x in a.loop)
        base = int(data[0][0], 16)
        for r in data:
            off = int(r[0], 16) - base
            if lo <= off < hi:
                top = sorted(((num(r, ix, s), s[6:]) for s in stalls), reverse=True)[:3]
                top = " ".join(f"{s}:{v}" for v, s in top if v)
                print(f"{off:05x} {num(r, ix, samples):6d} "
                      f"{r[ix['Instructions Executed']]:>9} {r[1].strip()[:60]:60s} {top}")


if __name__ == "__main__":
    main()
