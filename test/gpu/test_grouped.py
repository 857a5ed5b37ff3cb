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


def forced_contiguous(tile, sizes, N, K, seed=3):
    """The contiguous kernel of forced `tile` on poisoned output; returns its
    name (the kernel's spec line)."""
    from blockscale import _capi, grouped as gm
    G = len(sizes)
    M = sum(sizes) + 9
    x = torch.randn(M, K, device="cuda").to(torch.bfloat16)
    aq, as_ = blockscale.quantize(x, "1x128")
    bq, bs = expert_weights(G, N, K, seed)
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
                       f"{tile} K={K} group {i}")
        start += n
    assert torch.isnan(out[start:]).all()
    return kern.info()


@pytest.mark.parametrize("tile", ["bm=64,bn=128", "bm=256,bn=128", "bm=128,bn=64",
                                  "bm=128,bn=192"])
def test_contiguous_forced_tiles(tile):
    forced_contiguous(tile, [0, 1, 127, 129, 300, 0, 64], 384, 512)


# Two-wave tiles specialized for K (the stage-aligned rounds of the dense
# kernels): K-blocks filling whole rounds of 3 stages (384), one padded stage
# in the last round (4096), two (4352), and a K tail (4288: 34 K-blocks).
@pytest.mark.parametrize("K", [384, 4096, 4352, 4288])
def test_contiguous_stage_aligned(K):
    info = forced_contiguous("bm=256,bn=128,stages=3", [300, 0, 1, 257, 512, 129], 256, K,
                             seed=K)
    assert f"_kb{-(-K // 128)}" in info, info


def test_contiguous_op_and_zero_rows():
    run_contiguous([5, 0, 200], 256, 256, torch.bfloat16)
    aq = torch.empty(0, 256, device="cuda", dtype=FP8)
    as_ = torch.empty(0, 2, device="cuda")
    bq, bs = expert_weights(3, 256, 256, 0)
    offs = torch.zeros(3, device="cuda", dtype=torch.int32)
    assert grouped_mm(aq, as_, bq, bs, offs).shape == (0, 256)


# CTA pairs: two N tiles of one row tile, A multicast to both CTAs; with the
# run-time K loop (512, 640) and the stage-aligned rounds (4352).
@pytest.mark.parametrize("tile,N,K", [("bm=128,bn=128,cluster=2", 512, 512),
                                      ("bm=256,bn=128,cluster=2", 512, 640),
                                      ("bm=256,bn=128,stages=3,cluster=2", 256, 4352),
                                      ("bm=128,bn=192,cluster=2", 384, 640)])
def test_contiguous_cta_pairs(tile, N, K):
    info = forced_contiguous(tile, [300, 0, 1, 257, 512, 129, 64], N, K, seed=N + K)
    assert "_c2" in info, info


# More work units than CTAs, so every CTA (pair) walks several, in each form
# of the K loop: stage-aligned rounds alone and in pairs, the run-time loop
# in pairs (256 x 128 and 128 x 192), the pipelined 128 x 128 loop. Groups
# whose last tile holds at most 64 rows (2049, 2112, 1: none for the tile's
# second warpgroup) and 65 (one for it).
@pytest.mark.parametrize("tile,K,name", [("bm=256,bn=128,stages=3", 4352, "_s3_kb34"),
                                         ("bm=256,bn=128,stages=3,cluster=2", 4352, "_c2_kb34"),
                                         ("bm=256,bn=128,cluster=2", 2048, "bm256_bn128_s3_c2"),
                                         ("bm=128,bn=192,cluster=2", 1024, "bm128_bn192_s4_c2"),
                                         ("bm=128,bn=128", 1024, "bm128_bn128_s5")])
def test_contiguous_many_units(tile, K, name):
    sizes = [2049, 1984, 2112, 0, 2200, 1, 65, 1920]
    info = forced_contiguous(tile, sizes, 2304, K, seed=K)
    assert name in info, info


def test_masked_many_units():
    # 32 groups of up to 192 rows in 128 x 192 pairs (12 N tiles): a
    # group's second row tile, where it has one, holds at most 64 rows.
    test_masked(32, 192, torch.bfloat16, N=2304)


def test_decreasing_offsets_never_overlap():
    # offs = [300, 100, 500, 500] over 500 rows: group 1 (whose end lies
    # before its start) and group 3 are empty, group 2 starts where group 0
    # ended; no row is written by two groups.
    from blockscale import grouped as gm
    M, N, K, G = 500, 256, 512, 4
    x = torch.randn(M, K, device="cuda").to(torch.bfloat16)
    aq, as_ = blockscale.quantize(x, "1x128")
    bq, bs = expert_weights(G, N, K, 11)
    offs = torch.tensor([300, 100, 500, 500], device="cuda", dtype=torch.int32)
    for _ in range(3):  # the same result every time
        out = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        _, _, _, _, ldsa, sb = gm._grouped_check.check_contiguous(
            gm._t(aq), gm._t(as_), gm._t(bq), gm._t(bs), gm._t(offs), "bf16")
        kern = gm._kernel("contiguous", G, N, K, 0, "e4m3", "e4m3", "bf16", 128)
        gm._launch_on(kern, gm._args(aq, as_, bq, bs, offs, out, M, ldsa, sb), aq.device)
        torch.cuda.synchronize()
        a64 = dequantize(aq, as_, "1x128").double()
        check_rows(out[:300], a64[:300] @ deq_b(bq, bs, 0).t(), "group 0")
        check_rows(out[300:], a64[300:] @ deq_b(bq, bs, 2).t(), "group 2")


def test_cta_pairs_need_an_even_tile_count():
    from blockscale import _capi
    with pytest.raises(_capi.BlockscaleError, match="even count of N tiles"):
        forced_contiguous("bm=128,bn=128,cluster=2", [64, 64], 384, 256)


@pytest.mark.parametrize("G,Mmax", [(4, 192), (6, 130), (8, 20), (3, 1)])
@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float32])
def test_masked(G, Mmax, out_dtype, tile=None, N=384):
    K = 640
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
    if tile:
        from blockscale import _capi
        kern = _capi.GroupedGemmKernel(_capi.grouped_desc(
            "masked", G, N, K, m_max=Mmax, out_dtype=gm.OUT_DTYPES[out_dtype], force_tile=tile))
    else:
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
    if tile is None:  # the op itself agrees on the valid rows
        out2 = grouped_mm_masked(aq, as_, bq, bs, counts, out_dtype)
        for g, c in enumerate(counts_l):
            assert torch.equal(out2[g, :c], out[g, :c])


@pytest.mark.parametrize("tile,N,out2", [("bm=128,bn=192,cluster=2", 384, torch.float32),
                                         ("bm=256,bn=128,cluster=2", 512, torch.bfloat16)])
def test_masked_cta_pairs(tile, N, out2):
    # (256 x 128 with f32 output leaves shared memory for one stage only, which
    # the planner refuses.)
    test_masked(5, 192, torch.bfloat16, tile=tile, N=N)
    test_masked(3, 300, out2, tile=tile, N=N)


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


# ---------------------------------------------------------------------------
# The batched dual cast of the expert weights
# ---------------------------------------------------------------------------

def grouped_weights(G, N, K, dtype, seed, pad=(0, 0)):
    """(G, N, K) weights whose experts, rows and columns differ in scale (so
    that every 128x128 block has its own amax), carved from a buffer with
    `pad` extra rows per expert and columns per row when asked."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    big = torch.randn(G, N + pad[0], K + pad[1], device="cuda", generator=g)
    big *= torch.logspace(-2, 2, G, device="cuda")[:, None, None]
    big *= torch.logspace(-1, 1, N + pad[0], device="cuda")[None, :, None]
    big[..., ::97] *= 16
    return big.to(dtype)[:, :N, :K]


def poison_allocator():
    """Results carved from freed memory full of 0xFF bytes (NaN in FP8 and
    f32): an element the kernel misses cannot match."""
    torch.cuda.synchronize()
    poison = torch.full((256 << 20,), 0xFF, dtype=torch.uint8, device="cuda")
    del poison


def check_weight_dual(w, fp8=FP8):
    from blockscale.grouped import quantize_grouped_weight_dual
    quantize_grouped_weight_dual(w, fp8)  # compiles outside the poisoning
    poison_allocator()
    wq, ws, wtq, wts = quantize_grouped_weight_dual(w, fp8)
    torch.cuda.synchronize()
    q1, s1 = quantize_grouped_weight(w, fp8)
    qt1, st1 = quantize_grouped_weight(w.transpose(1, 2).contiguous(), fp8)
    for got, want, name in ((wq, q1, "wq"), (ws, s1, "ws"), (wtq, qt1, "wtq"),
                            (wts, st1, "wts")):
        assert got.shape == want.shape and got.stride() == want.stride(), \
            f"{name}: {tuple(got.shape)} {got.stride()} vs {tuple(want.shape)} {want.stride()}"
        assert got.dtype == want.dtype
    for g in range(w.shape[0]):
        assert torch.equal(wq[g].view(torch.uint8), q1[g].view(torch.uint8)), \
            f"expert {g}: FP8 bytes in input order differ"
        assert torch.equal(wtq[g].view(torch.uint8), qt1[g].view(torch.uint8)), \
            f"expert {g}: transposed FP8 bytes differ"
        assert torch.equal(ws[g], s1[g]), f"expert {g}: scales differ"
        assert torch.equal(wts[g], st1[g]), f"expert {g}: transposed scales differ"
    assert torch.equal(wts, ws.transpose(1, 2))


@pytest.mark.parametrize("G", [1, 3, 8])
@pytest.mark.parametrize("N,K", [(272, 400), (256, 512), (16, 16), (400, 144), (1040, 7168)])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_quantize_grouped_weight_dual_matches_both_casts(G, N, K, dtype):
    check_weight_dual(grouped_weights(G, N, K, dtype, seed=G * 7 + N + K).contiguous())


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_quantize_grouped_weight_dual_strided_and_e5m2(dtype):
    # Rows and experts with padding between them, and the other FP8 format.
    w = grouped_weights(3, 272, 400, dtype, seed=5, pad=(16, 32))
    assert not w.is_contiguous()
    check_weight_dual(w)
    check_weight_dual(w, torch.float8_e5m2)


def test_quantize_grouped_weight_dual_feeds_grouped_mm():
    from blockscale.grouped import quantize_grouped_weight_dual
    sizes = [100, 0, 300, 28]
    G, N, K = len(sizes), 272, 400
    w = grouped_weights(G, N, K, torch.bfloat16, seed=3).contiguous()
    x = torch.randn(sum(sizes), K, device="cuda").to(torch.bfloat16)
    aq, as_ = blockscale.quantize(x, "1x128")
    offs = torch.tensor(sizes, device="cuda").cumsum(0).to(torch.int32)
    wq, ws, wtq, wts = quantize_grouped_weight_dual(w)
    out = grouped_mm(aq, as_, wq, ws, offs)
    q1, s1 = quantize_grouped_weight(w)
    assert torch.equal(out, grouped_mm(aq, as_, q1, s1, offs))
    gy = torch.randn(sum(sizes), N, device="cuda").to(torch.bfloat16)
    gq, gs = blockscale.quantize(gy, "1x128")
    dx = grouped_mm(gq, gs, wtq, wts, offs)
    qt1, st1 = quantize_grouped_weight(w.transpose(1, 2).contiguous())
    assert torch.equal(dx, grouped_mm(gq, gs, qt1, st1, offs))


def test_quantize_grouped_weight_dual_op_fake_and_errors():
    from blockscale.grouped import quantize_grouped_weight_dual
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        w = torch.empty(3, 272, 400, device="cuda", dtype=torch.bfloat16)
        wq, ws, wtq, wts = torch.ops.blockscale.quantize_grouped_weight_dual(w)
        assert wq.shape == (3, 272, 400) and wq.dtype == FP8
        assert ws.shape == (3, 3, 4) and wts.shape == (3, 4, 3)
        assert wtq.shape == (3, 400, 272) and wtq.is_contiguous()
    w = torch.randn(3, 272, 400, device="cuda").to(torch.bfloat16)
    f = torch.compile(lambda t: torch.ops.blockscale.quantize_grouped_weight_dual(t),
                      fullgraph=True)
    for a, b in zip(f(w), quantize_grouped_weight_dual(w)):
        assert torch.equal(a.view(torch.uint8) if a.dtype == FP8 else a,
                           b.view(torch.uint8) if b.dtype == FP8 else b)
    with pytest.raises(ValueError, match="multiples of 16"):
        quantize_grouped_weight_dual(w[:, :100])
    with pytest.raises(ValueError, match="3-D"):
        quantize_grouped_weight_dual(w[0])
    with pytest.raises(ValueError, match="unit K stride"):
        quantize_grouped_weight_dual(w.transpose(1, 2)[:, :, :256])
    # No experts: empty results, no launch.
    e = quantize_grouped_weight_dual(w[:0])
    assert e[0].shape == (0, 272, 400) and e[3].shape == (0, 4, 3)
