# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Eager (host-included) time of blockscale.scaled_mm at small M, and the host
# cost of one call alone (launch rate without synchronizing).
import sys, time, torch
sys.path.insert(0, "bench")
import bench_gemm as bg
import blockscale
for (M, N, K) in [(128, 2112, 7168), (128, 24576, 1536), (4096, 7168, 16384)]:
    a, w, aq, as_, bq, bs, rb = bg.make_operands("fwd", M, N, K)
    f = lambda: blockscale.scaled_mm(aq, as_, bq, bs, "1x128", rb, torch.bfloat16)
    f(); torch.cuda.synchronize()
    eager = bg.bench(f)
    graph = bg.bench_graph(f)
    torch.cuda.synchronize()
    n = 2000
    t = time.perf_counter()
    for _ in range(n):
        f()
    host = (time.perf_counter() - t) / n
    torch.cuda.synchronize()
    print(f"{M}x{N}x{K}: eager {eager*1e3:.1f} us, graph {graph*1e3:.1f} us, host per call {host*1e6:.1f} us", flush=True)
