#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""One cuBLASLt blockwise GEMM per shape, for Nsight Compute to describe.

Run under ncu on the GPU machine, e.g.
  ncu --clock-control none --launch-count 12 --section LaunchStats --section SpeedOfLight \
      env PYTHONPATH=python python3 bench/profile_cublaslt.py
for the kernel name (tile, cluster, schedule), launch geometry, registers and
shared memory of what cuBLASLt picks, beside ours for the same shapes.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
import bench_gemm as bg  # noqa: E402

SHAPES = [("fwd", 4096, 7168, 16384), ("fwd", 4096, 4096, 7168), ("fwd", 4096, 2112, 7168),
          ("wgrad", 14336, 4096, 16384)]
for form, M, N, K in SHAPES:
    a, w, aq, as_, bq, bs, recipe_b = bg.make_operands(form, M, N, K)
    fn = bg.cublaslt_fn(form, aq, as_, bq, bs, K)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push(f"lt {form} {M}x{N}x{K}")
    fn()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    ours = lambda: bg.blockscale.scaled_mm(aq, as_, bq, bs, "1x128", recipe_b, torch.bfloat16)
    ours()
    torch.cuda.synchronize()
    print(form, M, N, K, "done", flush=True)
