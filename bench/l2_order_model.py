#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Bytes a GEMM's tile order reads from DRAM, in a first-order model of the
L2 cache (pure Python, no GPU): the persistent grid runs its work units in
waves of `concurrent` units that walk K in lockstep, each K-block touching
the 128-deep K-slices of its A and B tiles in an LRU cache of `l2_mb` MB.
It ignores timing skew, scales and C, so it ranks tile orders; it does not
predict time. For a given tile it compares the grouped scheduler's order
(gemm_grouped.cuh), "band": N fastest inside bands of `raster` N units,
with "column": M fastest over groups of at most `raster` row units (an
alternative measured without gain, docs/decisions.md).

    python3 bench/l2_order_model.py                 # bench_grouped.py's m-grouped shapes
    python3 bench/l2_order_model.py --l2-mb 25 40   # two cache sizes
    python3 bench/l2_order_model.py --case masked:6:1024:6144:7168:128:192:2
"""
import argparse
import os
import subprocess
from collections import OrderedDict

# bench_grouped.py's m-grouped shapes (kept here: that module needs torch)
NK = [(6144, 7168), (7168, 3072), (4096, 4096), (4096, 2048)]
CONTIGUOUS = [(4, 8192), (8, 4096), (32, 1024)]
MASKED = [(32, 192), (6, 1024), (32, 20)]
SMS = 132


def unit_order(units_m, units_n, order, raster):
    """(row unit, column unit) of a group's units in the scheduler's order."""
    out = []
    for l in range(units_m * units_n):
        if order == "column" and units_m <= raster:
            out.append((l % units_m, l // units_m))
            continue
        band = l // (raster * units_m)
        first = band * raster
        width = min(raster, units_n - first)
        local = l - band * raster * units_m
        out.append((local // width, first + local % width))
    return out


def work_units(groups, rows, n, bm, bn, cluster, pair_m, order, raster):
    """Each unit's A tiles and B tiles, as (group, tile) keys."""
    tiles_m, tiles_n = -(-rows // bm), -(-n // bn)
    along_m = cluster == 2 and pair_m and tiles_m > 1
    units_m = -(-tiles_m // 2) if along_m else tiles_m
    units_n = tiles_n if along_m else tiles_n // cluster
    units = []
    for g in range(groups):
        for um, un in unit_order(units_m, units_n, order, raster):
            if cluster == 1:
                units.append(([(g, um)], [(g, un)]))
            elif along_m:
                units.append(([(g, 2 * um), (g, 2 * um + 1)], [(g, un)]))
            else:
                units.append(([(g, um)], [(g, 2 * un), (g, 2 * un + 1)]))
    return units


def dram_bytes(units, k, bm, bn, concurrent, l2_mb):
    """Bytes the lockstep waves miss in an LRU cache of l2_mb MB."""
    cap, used, missed = l2_mb * 2**20, 0, 0
    lru = OrderedDict()
    a_bytes, b_bytes = bm * 128, bn * 128
    for w0 in range(0, len(units), concurrent):
        wave = units[w0:w0 + concurrent]
        for kb in range(-(-k // 128)):
            for a_tiles, b_tiles in wave:
                for key, size in ([(("A", t, kb), a_bytes) for t in a_tiles] +
                                  [(("B", t, kb), b_bytes) for t in b_tiles]):
                    if key in lru:
                        lru.move_to_end(key)
                        continue
                    missed += size
                    lru[key] = size
                    used += size
                    while used > cap:
                        used -= lru.popitem(last=False)[1]
    return missed


def ratio(kind, groups, rows, n, k, bm, bn, cluster, order, l2_mb, raster=8):
    """DRAM bytes over the unique bytes of A and B (FP8)."""
    # GroupedGemmFamily::pairsAlongM: pairs of 128-row tiles share B where
    # a group (slot) has two row tiles.
    pair_m = cluster == 2 and bm == 128 and 128 < rows <= 256
    units = work_units(groups, rows, n, bm, bn, cluster, pair_m, order, raster)
    missed = dram_bytes(units, k, bm, bn, SMS // cluster, l2_mb)
    return missed / (groups * rows * k + groups * n * k)


def planner_tile(gen, kind, groups, rows, n, k):
    """The tile rule's (bm, bn, cluster) for a shape, from `blockscale-gen
    --emit spec` (planning only: no GPU, no compile)."""
    cmd = [gen, "--op", "grouped", "--grouping", kind, "--groups", str(groups),
           "--m", str(rows), "--n", str(n), "--k", str(k), "--emit", "spec"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: {out.stderr.strip()}")
    spec = dict(w.split("=", 1) for w in out.stdout.split() if "=" in w)
    return int(spec["bm"]), int(spec["bn"]), int(spec.get("cluster", 1))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--l2-mb", type=float, nargs="+", default=[25.0],
                   help="modelled cache sizes (H100/H200: 50 MB in two halves)")
    p.add_argument("--gen", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                 "..", "build", "bin", "blockscale-gen"),
                   help="blockscale-gen that names the tile rule's tiles (default: build/bin's)")
    p.add_argument("--case", action="append", default=[],
                   help="kind:G:rows:N:K:bm:bn:cluster (default: bench_grouped.py's shapes "
                        "in the tile rule's tiles, from --gen)")
    args = p.parse_args(argv)
    cases = []
    for c in args.case:
        kind, *nums = c.split(":")
        if kind not in ("contiguous", "masked") or len(nums) != 7:
            p.error(f"expected --case kind:G:rows:N:K:bm:bn:cluster but got {c!r}")
        cases.append((kind, *map(int, nums)))
    if not cases:
        for kind, shapes in (("contiguous", CONTIGUOUS), ("masked", MASKED)):
            for (g, rows), (n, k) in ((s, nk) for s in shapes for nk in NK):
                cases.append((kind, g, rows, n, k, *planner_tile(args.gen, kind, g, rows, n, k)))
    print("| shape | tile | " + " | ".join(f"band / column, {mb:g} MB" for mb in args.l2_mb)
          + " |")
    print("|---|---|" + "---:|" * len(args.l2_mb))
    for kind, g, rows, n, k, bm, bn, cl in cases:
        cells = []
        for mb in args.l2_mb:
            band = ratio(kind, g, rows, n, k, bm, bn, cl, "band", mb)
            col = ratio(kind, g, rows, n, k, bm, bn, cl, "column", mb)
            cells.append(f"{band:.2f} / {col:.2f}")
        print(f"| {kind} {g} x {rows}, N {n}, K {k} | {bm} x {bn}, cluster {cl} | "
              + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
