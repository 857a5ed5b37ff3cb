# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Times FP8 inference (blockscale.Float8BlockwiseInferenceLinear: FP8 weights
with 128x128 scales stored once, activations cast 1x128 per call, the
blockscale GEMM) against bf16 nn.Linear, on DeepSeek-V3 layer shapes and
decode / prefill token counts. Needs a Hopper GPU and PyTorch.

    python bench/bench_inference.py                 # eager calls
    python bench/bench_inference.py --graph         # CUDA-graph replays (no host time)
    python bench/bench_inference.py --tokens 1,128 --shapes 7168x2112

Each row: tokens T, in_features K, out_features N, ms per call for bf16 and
FP8, the speedup, FP8 TFLOP/s, and the FP8 output's relative error against
the bf16 layer (FP8 weights and activations: a few percent).
"""
import argparse
import statistics

import torch
from torch import nn

import blockscale
from blockscale import Float8BlockwiseInferenceLinear

# (K, N) of DeepSeek-V3 projections: q_a, kv_a (fused as 2112), q_b, o_proj,
# MLP gate/up, MLP down.
SHAPES = "7168x1536,7168x2112,1536x24576,16384x7168,7168x18432,18432x7168"


def time_ms(fn, iters, graph):
    """ms per call: the median of `iters` event-timed calls (eager), or of
    `iters` replays of a graph holding 10 calls (divided by 10)."""
    for _ in range(3):
        fn()  # compile kernels, allocate workspaces
    torch.cuda.synchronize()
    reps = 1
    if graph:
        reps = 10
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            fn()
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(g):
            for _ in range(reps):
                fn()
        run = g.replay
    else:
        run = fn
    times = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        run()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / reps)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default=SHAPES, help="KxN,... (default: DeepSeek-V3 projections)")
    ap.add_argument("--tokens", default="1,16,128,1024,4096", help="token counts T")
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--graph", action="store_true", help="time CUDA-graph replays")
    args = ap.parse_args()

    blockscale.integrations.check_device()
    torch.manual_seed(0)
    print(f"GPU: {torch.cuda.get_device_name()}, blockscale {blockscale._capi.version()}, "
          f"{'graph replays' if args.graph else 'eager calls'}")
    # Warm the clocks up (the GPU boosts for short runs).
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    for _ in range(200):
        a @ a
    torch.cuda.synchronize()

    print(f"{'T':>6} {'K':>6} {'N':>6} {'bf16 ms':>9} {'fp8 ms':>9} {'speedup':>8} "
          f"{'fp8 TFLOP/s':>11} {'rel err':>8}")
    speedups = []
    for shape in args.shapes.split(","):
        k, n = map(int, shape.split("x"))
        lin = nn.Linear(k, n, bias=False, device="cuda", dtype=torch.bfloat16)
        nn.init.normal_(lin.weight, std=k ** -0.5)
        fp8 = Float8BlockwiseInferenceLinear.from_float(lin)
        with torch.no_grad():
            for t in map(int, args.tokens.split(",")):
                x = torch.randn(t, k, device="cuda", dtype=torch.bfloat16)
                ref = lin(x)
                out = fp8(x)
                err = ((out.float() - ref.float()).norm() / ref.float().norm()).item()
                ms_bf16 = time_ms(lambda: lin(x), args.iters, args.graph)
                ms_fp8 = time_ms(lambda: fp8(x), args.iters, args.graph)
                speedups.append(ms_bf16 / ms_fp8)
                tflops = 2 * t * k * n / (ms_fp8 * 1e-3) / 1e12
                print(f"{t:>6} {k:>6} {n:>6} {ms_bf16:>9.4f} {ms_fp8:>9.4f} "
                      f"{ms_bf16 / ms_fp8:>7.2f}x {tflops:>11.1f} {err:>8.4f}")
    geo = statistics.geometric_mean(speedups)
    print(f"geomean speedup of FP8 over bf16: {geo:.3f}x over {len(speedups)} rows")


if __name__ == "__main__":
    main()
