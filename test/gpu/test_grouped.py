# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""GPU tests of the m-grouped GEMMs (run on the H200: scripts/gpu-check.sh grouped).

Every case poisons the output with NaN, runs the kernel, and compares each
group's rows against a float64 product of the dequantized operands; rows
that belong to no group must still hold the poison (never written).
"""
import random

import pytest
import torch

import blockscale
from blockscale.grouped import (grouped_mm, grouped_mm_masked, quantize_grouped_weight,
                                quantize_grouped_activation_masked)
from blockscale.reference import dequantize

FP8 = torch.float8_e4m3fn
TOL = 2e-3  # relative error per group against f64 (bf16 output rounding dominates)


def expert_weights(G, N, K, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    w = torch.randn(G, N, K, device="cuda", generator=g, dtype=torch.float32)
    w *= torch.logspace(-1, 1, G, device="cuda")[:, None, None]  # experts of different scale
    bq, bs = quantize_grouped_weight(w.to(torch.bfloat16))
    return bq, bs


def deq_b(bq, bs, g):
    return dequantize(bq[g], bs[g], "128x128").double()


def check_rows(out, ref, what):
    assert not torch.isnan(out).any(), f"{what}: NaN in written rows (a tile skipped rows)"
    err = (out.double() - ref).norm() / ref.norm().clamp(min=1e-30)
    assert err.item() < TOL, f"{what}: relative error {err.item():.2e}"


def run_contiguous(sizes, N, K, out_dtype, seed=0, pad_rows=0):
    G = len(sizes)
    M = sum(sizes) + pad_rows
    g = torch.Generator(device="cuda").manual_seed(seed + 1)
    x = torch.randn(M, K, device="cuda", generator=g).to(torch.bfloat16)
    aq, as_ = blockscale.quantize(x, "1x128")
    bq, bs = expert_weights(G, N, K, seed)
    offs = torch.tensor(sizes, device="cuda", dtype=torch.int64).cumsum(0).to(torch.int32)
    out = grouped_mm(aq, as_, bq, bs, offs, out_dtype)
    torch.cuda.synchronize()
    a64 = dequantize(aq, as_, "1x128").double()
    start = 0
    for i, n in enumerate(sizes):
        if n:
            ref = a64[start:start + n] @ deq_b(bq, bs, i).t()
            check_rows(out[start:start + n], ref, f"group {i} ({n} rows)")
        start += n
    return out


def poisoned_contiguous(sizes, N, K, out_dtype, seed=0, pad_rows=0):
    """As the op does, but into a NaN-poisoned buffer through the C API, so that
    rows past the last offset can be checked to be untouched."""
    G = len(sizes)
    M = sum(sizes) + pad_rows
    g = torch.Generator(device="cuda").manual_seed(seed + 1)
    x = torch.randn(M, K, device="cuda", generator=g).to(torch.bfloat16)
    aq, as_ = blockscale.quantize(x, "1x128")
    bq, bs = expert_weights(G, N, K, seed)
    offs = torch.tensor(sizes, device="cuda", dtype=torch.int64).cumsum(0).to(torch.int32)
    out = torch.full((M, N), float("nan"), device="cuda", dtype=out_dtype)
    from blockscale import _capi, grouped as gm
    M_, N_, K_, G_, ldsa, sb = gm._grouped_check.check_contiguous(
        gm._t(aq), gm._t(as_), gm._t(bq), gm._t(bs), gm._t(offs), gm.OUT_DTYPES[out_dtype])
    kern = gm._kernel("contiguous", G, N, K, 0, "e4m3", "e4m3", gm.OUT_DTYPES[out_dtype],
                      gm._m_bucket(max(1, M // G)))
    gm._launch_on(kern, gm._args(aq, as_, bq, bs, offs, out, M, ldsa, sb), aq.device)
    torch.cuda.synchronize()
    a64 = dequantize(aq, as_, "1x128").double()
    start = 0
    for i, n in enumerate(sizes):
        if n:
            ref = a64[start:start + n] @ deq_b(bq, bs, i).t()
            check_rows(out[start:start + n], ref, f"group {i} ({n} rows)")
        start += n
    if pad_rows:
        assert torch.isnan(out[start:]).all(), "rows past the last offset were written"


SIZES = {
    "empty_and_odd": [0, 1, 127, 129, 0, 256, 3, 0],
    "all_empty_but_one": [0, 0, 0, 300, 0, 0],
    "unbalanced": [4000, 1, 1, 2, 0, 130, 1, 64],
    "single": [777],
    "aligned": [128] * 8,
}


@pytest.mark.parametrize("name", list(SIZES))
@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float32])
def test_contiguous(name, out_dtype):
    poisoned_contiguous(SIZES[name], 512, 768, out_dtype, pad_rows=37)


@pytest.mark.parametrize("seed", range(6))
def test_contiguous_random(seed):
    rnd = random.Random(seed)
    G = rnd.choice([2, 4, 8, 16, 32])
    sizes = [rnd.choice([0, 1, 127, 128, 129, rnd.randint(0, 600)]) for _ in range(G)]
    N = rnd.choice([128, 256, 384, 1024, 136])
    K = rnd.choice([128, 256, 512, 7168, 400])
    poisoned_contiguous(sizes, N, K, torch.bfloat16, seed=seed, pad_rows=rnd.choice([0, 5]))


@pytest.mark.parametrize("tile", ["bm=64,bn=128", "bm=256,bn=128", "bm=128,bn=64",
                                  "bm=128,bn=192"])
def test_contiguous_forced_tiles(tile):
    from blockscale import _capi, grouped as gm
    sizes = [0, 1, 127, 129, 300, 0, 64]
    G, N, K = len(sizes), 384, 512
    M = sum(sizes) + 9
    x = torch.randn(M, K, device="cuda").to(torch.bfloat16)
    aq, as_ = blockscale.quantize(x, "1x128")
    bq, bs = expert_weights(G, N, K, 3)
    offs = torch.tensor(sizes, device="cuda").cumsum(0).to(torch.int32)
    out = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
    kern = _capi.GroupedGemmKernel(_capi.grouped_desc("contiguous", G, N, K, force_tile=tile))
    _, _, _, _, ldsa, sb = gm._grouped_check.check_contiguous(
        gm._t(aq), gm._t(as_), gm._t(bq), gm._t(bs), gm._t(offs), "bf16")
    gm._launch_on(kern, gm._args(aq, as_, bq, bs, offs, out, M, ldsa, sb), aq.device)
    torch.cuda.synchronize()
    a64 = dequantize(aq, as_, "1x128").double()
    start = 0
    for i, n in enumerate(sizes):
        if n:
            check_rows(out[start:start + n], a64[start:start + n] @ deq_b(bq, bs, i).t(),
                       f"{tile} group {i}")
        start += n
    assert torch.isnan(out[start:]).all()


def test_contiguous_op_and_zero_rows():
    run_contiguous([5, 0, 200], 256, 256, torch.bfloat16)
    aq = torch.empty(0, 256, device="cuda", dtype=FP8)
    as_ = torch.empty(0, 2, device="cuda")
    bq, bs = expert_weights(3, 256, 256, 0)
    offs = torch.zeros(3, device="cuda", dtype=torch.int32)
    assert grouped_mm(aq, as_, bq, bs, offs).shape == (0, 256)


@pytest.mark.parametrize("G,Mmax", [(4, 192), (6, 130), (8, 20), (3, 1)])
@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float32])
def test_masked(G, Mmax, out_dtype):
    N, K = 384, 640
    rnd = random.Random(G * 1000 + Mmax)
    counts_l = [rnd.choice([0, 1, Mmax, rnd.randint(0, Mmax)]) for _ in range(G)]
    counts_l[0] = Mmax
    x = torch.randn(G, Mmax, K, device="cuda").to(torch.bfloat16)
    aq, as_ = quantize_grouped_activation_masked(x)
    bq, bs = expert_weights(G, N, K, 7)
    counts = torch.tensor(counts_l, device="cuda", dtype=torch.int32)
    from blockscale import grouped as gm
    out = torch.full((G, Mmax, N), float("nan"), device="cuda", dtype=out_dtype)
    _, _, _, _, ldsa, sb = gm._grouped_check.check_masked(
        gm._t(aq), gm._t(as_), gm._t(bq), gm._t(bs), gm._t(counts), gm.OUT_DTYPES[out_dtype])
    kern = gm._kernel("masked", G, N, K, Mmax, "e4m3", "e4m3", gm.OUT_DTYPES[out_dtype],
                      gm._m_bucket(Mmax))
    gm._launch_on(kern, gm._args(aq, as_, bq, bs, counts, out, -1, ldsa, sb), aq.device)
    torch.cuda.synchronize()
    a64 = dequantize(aq.reshape(G * Mmax, K), as_.as_strided(
        (G * Mmax, as_.shape[2]), (1, as_.stride(2)), as_.storage_offset()), "1x128").double()
    for g, c in enumerate(counts_l):
        if c:
            ref = a64[g * Mmax:g * Mmax + c] @ deq_b(bq, bs, g).t()
            check_rows(out[g, :c], ref, f"group {g} ({c} of {Mmax} rows)")
        assert torch.isnan(out[g, c:]).all(), f"group {g}: rows past its count were written"
    # The op itself agrees on the valid rows.
    out2 = grouped_mm_masked(aq, as_, bq, bs, counts, out_dtype)
    for g, c in enumerate(counts_l):
        assert torch.equal(out2[g, :c], out[g, :c])


def test_cuda_graph_and_compile():
    sizes = [100, 0, 300, 28]
    G, N, K = len(sizes), 256, 512
    M = sum(sizes)
    x = torch.randn(M, K, device="cuda").to(torch.bfloat16)
    aq, as_ = blockscale.quantize(x, "1x128")
    bq, bs = expert_weights(G, N, K, 1)
    offs = torch.tensor(sizes, device="cuda").cumsum(0).to(torch.int32)
    eager = grouped_mm(aq, as_, bq, bs, offs)

    f = torch.compile(lambda *t: torch.ops.blockscale.grouped_mm(*t), fullgraph=True)
    assert torch.equal(f(aq, as_, bq, bs, offs), eager)

    # The group sizes stay on the device: new offsets replay correctly.
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        grouped_mm(aq, as_, bq, bs, offs)
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        out = torch.ops.blockscale.grouped_mm(aq, as_, bq, bs, offs, torch.bfloat16)
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, eager)
    offs.copy_(torch.tensor([428, 428, 428, 428], device="cuda", dtype=torch.int32))
    g.replay()
    torch.cuda.synchronize()
    ref = dequantize(aq, as_, "1x128").double() @ deq_b(bq, bs, 0).t()
    check_rows(out, ref, "replay with new offsets")


def test_validation_messages():
    bq, bs = expert_weights(2, 256, 256, 0)
    aq, as_ = blockscale.quantize(torch.randn(10, 256, device="cuda").to(torch.bfloat16), "1x128")
    offs = torch.tensor([4, 10], device="cuda", dtype=torch.int32)
    with pytest.raises(ValueError, match=r"offs .* int32 tensor of shape \(2,\)"):
        grouped_mm(aq, as_, bq, bs, offs.long())
    with pytest.raises(ValueError, match=r"b_scale .* \(G, ceil\(N/128\), ceil\(K/128\)\)"):
        grouped_mm(aq, as_, bq, bs[:, :1], offs)
    with pytest.raises(ValueError, match="a of shape"):
        grouped_mm(aq[:, :128], as_[:, :1], bq, bs, offs)


def test_fakes_match_the_ops():
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        aq = torch.empty(300, 512, device="cuda", dtype=FP8)
        as_ = torch.empty(4, 300, device="cuda").t()
        bq = torch.empty(4, 256, 512, device="cuda", dtype=FP8)
        bs = torch.empty(4, 2, 4, device="cuda")
        offs = torch.empty(4, device="cuda", dtype=torch.int32)
        out = torch.ops.blockscale.grouped_mm(aq, as_, bq, bs, offs, torch.float32)
        assert out.shape == (300, 256) and out.dtype == torch.float32
        am = torch.empty(4, 20, 512, device="cuda", dtype=FP8)
        ams = torch.empty(4 * 80, device="cuda").as_strided((4, 20, 4), (20, 1, 80))
        out = torch.ops.blockscale.grouped_mm_masked(am, ams, bq, bs, offs, torch.bfloat16)
        assert out.shape == (4, 20, 256)
        with pytest.raises(ValueError, match="offs"):
            torch.ops.blockscale.grouped_mm(aq, as_, bq, bs, offs.long(), torch.float32)
