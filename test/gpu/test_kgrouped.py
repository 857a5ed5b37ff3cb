# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""GPU tests of the k-grouped weight gradient and its group-aware cast (run on
the H200: scripts/gpu-check.sh kgrouped).

The cast is checked bit for bit against the torch reference of the recipe
(blockscale.reference.quantize_ref on each group's tokens: amax per column
over each 128-token block of the group, scale = max(amax, 1e-12) / 448, q =
round-to-nearest-even saturate of x * 448 / amax) and its padding against
zeros; the GEMM against a float64 product of the dequantized FP8 operands,
into NaN-poisoned outputs, with empty groups required to be exactly zero (or
untouched when accumulating).
"""
import random

import pytest
import torch

import blockscale
from blockscale import grouped as gm
from blockscale.grouped import grouped_mm_k, grouped_mm_k_accumulate, quantize_grouped_tokens
from blockscale.reference import quantize_ref

FP8 = torch.float8_e4m3fn
TOL = 2e-3  # relative error per group against f64 of the dequantized operands


def offsets(sizes):
    return torch.tensor(sizes, device="cuda", dtype=torch.int64).cumsum(0).to(torch.int32)


def padded_starts(sizes):
    """First padded 128-token block of each group and its block count."""
    starts, b = [], 0
    for n in sizes:
        starts.append((b, -(-n // 128)))
        b += -(-n // 128)
    return starts


def check_cast(x, sizes, q, s, what=""):
    """q (C, cap), s (C, cap/128) against the recipe on each group's tokens."""
    C = x.shape[1]
    t0 = 0
    for g, (n, (b0, nb)) in enumerate(zip(sizes, padded_starts(sizes))):
        if n:
            qr, sr = quantize_ref(x[t0:t0 + n], "1x128", transpose=True)
            got = q[:, b0 * 128:b0 * 128 + n]
            assert torch.equal(got.view(torch.uint8), qr.view(torch.uint8)), \
                f"{what} group {g} ({n} tokens): FP8 bits differ"
            pad = q[:, b0 * 128 + n:(b0 + nb) * 128]
            assert (pad.view(torch.uint8) == 0).all(), \
                f"{what} group {g}: padding past the group's end is not zero"
            assert torch.equal(s[:, b0:b0 + nb], sr[:C]), \
                f"{what} group {g} ({n} tokens): scales differ"
        t0 += n


def dequant_group(q, s, b0, n):
    """The (rows, n) f64 operand of one group from the padded cast."""
    nb = -(-n // 128)
    scale = s[:, b0:b0 + nb].double().repeat_interleave(128, 1)[:, :n]
    return q[:, b0 * 128:b0 * 128 + n].double() * scale


def reference(aq, as_, bq, bs, sizes):
    refs = []
    for n, (b0, _) in zip(sizes, padded_starts(sizes)):
        if n == 0:
            refs.append(None)
            continue
        refs.append(dequant_group(aq, as_, b0, n) @ dequant_group(bq, bs, b0, n).t())
    return refs


def check_out(out, refs, what, base=None):
    for g, ref in enumerate(refs):
        o = out[g] if base is None else out[g].double() - base[g].double()
        if ref is None:
            if base is None:
                assert (out[g] == 0).all(), f"{what}: group {g} without tokens is not zero"
            else:
                assert torch.equal(out[g], base[g]), \
                    f"{what}: group {g} without tokens changed c"
            continue
        assert not torch.isnan(out[g]).any(), f"{what}: NaN in group {g}"
        err = (o.double() - ref).norm() / ref.norm().clamp(min=1e-30)
        assert err.item() < TOL, f"{what}: group {g} relative error {err.item():.2e}"


def inputs(sizes, M, N, seed, pad_tokens=0):
    T = sum(sizes) + pad_tokens
    gen = torch.Generator(device="cuda").manual_seed(seed)
    dy = torch.randn(T, M, device="cuda", generator=gen).to(torch.bfloat16)
    x = torch.randn(T, N, device="cuda", generator=gen)
    # Tokens of very different magnitudes, so that a block's scale matters.
    x *= torch.logspace(-2, 2, T, device="cuda")[:, None]
    return dy, x.to(torch.bfloat16), offsets(sizes)


def poisoned_k(sizes, M, N, out_dtype, seed=0, tile=None, pad_tokens=0):
    """Casts, then the GEMM into a NaN-poisoned (G, M, N) buffer through the
    C API (the op itself allocates its output)."""
    G = len(sizes)
    dy, x, offs = inputs(sizes, M, N, seed, pad_tokens)
    aq, as_ = quantize_grouped_tokens(dy, offs)
    bq, bs = quantize_grouped_tokens(x, offs)
    torch.cuda.synchronize()
    check_cast(dy, sizes, aq, as_, "dY")
    check_cast(x, sizes, bq, bs, "X")
    out = torch.full((G, M, N), float("nan"), device="cuda", dtype=out_dtype)
    dims = gm._grouped_check.check_k(gm._t(aq), gm._t(as_), gm._t(bq), gm._t(bs),
                                     gm._t(offs), gm.OUT_DTYPES[out_dtype])
    if tile is None:
        gm._launch_k(aq, as_, bq, bs, offs, out, False, dims)
    else:
        from blockscale import _capi
        kern = _capi.GroupedGemmKernel(_capi.grouped_desc(
            "k", G, N, 0, m=M, out_dtype=gm.OUT_DTYPES[out_dtype], force_tile=tile))
        _, _, _, cap, ldsa, ldsb = dims
        args = _capi.GroupedGemmArgs()
        _capi.lib().bs_grouped_gemm_args_init(args)
        args.a, args.a_scale, args.b, args.b_scale = (aq.data_ptr(), as_.data_ptr(),
                                                      bq.data_ptr(), bs.data_ptr())
        args.groups, args.c = offs.data_ptr(), out.data_ptr()
        args.capacity, args.ldsa, args.ldsb = cap, ldsa, ldsb
        gm._launch_on(kern, args, aq.device)
    torch.cuda.synchronize()
    check_out(out, reference(aq, as_, bq, bs, sizes), f"{sizes} {out_dtype} {tile}")
    return out


SIZES = {
    "empty_and_odd": [0, 1, 127, 129, 0, 256, 3, 0],
    "all_empty_but_one": [0, 0, 0, 300, 0, 0],
    "unbalanced": [4000, 1, 1, 2, 0, 130, 1, 64],
    "single": [777],
    "aligned": [128] * 8,
    "all_empty": [0, 0, 0],
}


@pytest.mark.parametrize("name", list(SIZES))
@pytest.mark.parametrize("out_dtype", [torch.float32, torch.bfloat16])
def test_kgrouped(name, out_dtype):
    poisoned_k(SIZES[name], 384, 512, out_dtype, pad_tokens=0)


@pytest.mark.parametrize("seed", range(6))
def test_kgrouped_random(seed):
    rnd = random.Random(seed)
    G = rnd.choice([2, 4, 8, 16, 32])
    sizes = [rnd.choice([0, 1, 127, 128, 129, rnd.randint(0, 700)]) for _ in range(G)]
    M = rnd.choice([128, 256, 200, 1024])  # 200: tiles that end past M
    N = rnd.choice([128, 256, 136, 1024])
    poisoned_k(sizes, M, N, rnd.choice([torch.float32, torch.bfloat16]), seed=seed,
               pad_tokens=rnd.choice([0, 5]))


@pytest.mark.parametrize("tile,out", [("bm=64,bn=128", torch.float32),
                                      ("bm=128,bn=192", torch.float32),
                                      ("bm=128,bn=64", torch.float32),
                                      ("bm=256,bn=128", torch.bfloat16)])
def test_kgrouped_forced_tiles(tile, out):
    # (256 x 128 with f32 output leaves shared memory for one stage only, which
    # the planner refuses.)
    poisoned_k([0, 1, 127, 129, 300, 0, 64], 320, 384, out, seed=3, tile=tile)


def test_cast_inputs_and_unsorted_tail():
    """f16 and f32 inputs, columns past a 128 tile, tokens past offs[-1]."""
    sizes = [5, 0, 300, 128]
    for dtype, C in ((torch.float16, 136), (torch.float32, 260), (torch.bfloat16, 1032)):
        T = sum(sizes) + 50
        x = (torch.randn(T, C, device="cuda") * 3).to(dtype)
        offs = offsets(sizes)
        q, s = quantize_grouped_tokens(x, offs)
        torch.cuda.synchronize()
        assert q.shape == (C, -(-T // 128) * 128 + 128 * len(sizes))
        assert s.shape == (C, q.shape[1] // 128) and s.stride(0) == 1
        check_cast(x, sizes, q, s, str(dtype))


def test_cast_e5m2():
    sizes = [129, 1, 0, 255]
    x = torch.randn(sum(sizes), 256, device="cuda").to(torch.bfloat16)
    q, s = quantize_grouped_tokens(x, offsets(sizes), torch.float8_e5m2)
    torch.cuda.synchronize()
    t0 = 0
    for n, (b0, nb) in zip(sizes, padded_starts(sizes)):
        if n:
            qr, sr = quantize_ref(x[t0:t0 + n], "1x128", transpose=True,
                                  fp8_dtype=torch.float8_e5m2)
            assert torch.equal(q[:, b0 * 128:b0 * 128 + n].view(torch.uint8),
                               qr.view(torch.uint8))
            assert torch.equal(s[:, b0:b0 + nb], sr)
        t0 += n


def test_accumulate():
    sizes = [300, 0, 1, 129, 0, 700]
    G, M, N = len(sizes), 256, 384
    dy, x, offs = inputs(sizes, M, N, 11)
    aq, as_ = quantize_grouped_tokens(dy, offs)
    bq, bs = quantize_grouped_tokens(x, offs)
    c = torch.randn(G, M, N, device="cuda")
    base = c.clone()
    grouped_mm_k_accumulate(c, aq, as_, bq, bs, offs)
    torch.cuda.synchronize()
    check_out(c, reference(aq, as_, bq, bs, sizes), "accumulate", base=base)
    # The op's f32 output is the same sum from zero.
    out = grouped_mm_k(aq, as_, bq, bs, offs)
    z = torch.zeros_like(c)
    grouped_mm_k_accumulate(z, aq, as_, bq, bs, offs)
    torch.cuda.synchronize()
    assert torch.equal(out, z)


def test_accumulate_wide_tile():
    # Groups of more than 1024 tokens with f32 output take the 128 x 192 tile
    # (plain and +=); an uneven split with a tail in the last block.
    sizes = [4100, 4229]
    G, M, N = len(sizes), 256, 400
    dy, x, offs = inputs(sizes, M, N, 12)
    aq, as_ = quantize_grouped_tokens(dy, offs)
    bq, bs = quantize_grouped_tokens(x, offs)
    cap = aq.shape[1]
    hint = gm._m_bucket(max(1, (cap - 128 * G) // G))
    for acc in (False, True):
        info = gm._k_kernel(G, M, N, "e4m3", "e4m3", "f32", acc, hint).info()
        assert "bn192" in info, info
    c = torch.randn(G, M, N, device="cuda")
    base = c.clone()
    grouped_mm_k_accumulate(c, aq, as_, bq, bs, offs)
    torch.cuda.synchronize()
    ref = reference(aq, as_, bq, bs, sizes)
    check_out(c, ref, "accumulate bn192", base=base)
    check_out(grouped_mm_k(aq, as_, bq, bs, offs), ref, "bn192")


def test_zero_tokens():
    offs = torch.zeros(3, device="cuda", dtype=torch.int32)
    dy = torch.empty(0, 256, device="cuda", dtype=torch.bfloat16)
    x = torch.empty(0, 128, device="cuda", dtype=torch.bfloat16)
    aq, as_ = quantize_grouped_tokens(dy, offs)
    bq, bs = quantize_grouped_tokens(x, offs)
    assert aq.shape == (256, 384)
    out = grouped_mm_k(aq, as_, bq, bs, offs, torch.bfloat16)
    torch.cuda.synchronize()
    assert out.shape == (3, 256, 128) and (out == 0).all()


def test_cuda_graph_and_compile():
    sizes = [100, 0, 300, 28]
    G, M, N = len(sizes), 256, 512
    T = sum(sizes)
    dy, x, offs = inputs(sizes, M, N, 5)

    def wgrad(dy, x, offs):
        a, sa = quantize_grouped_tokens(dy, offs)
        b, sb = quantize_grouped_tokens(x, offs)
        return grouped_mm_k(a, sa, b, sb, offs)

    eager = wgrad(dy, x, offs)
    f = torch.compile(wgrad, fullgraph=True)
    assert torch.equal(f(dy, x, offs), eager)

    # The group sizes stay on the device: a replay with new offsets is right.
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        wgrad(dy, x, offs)
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        a, sa = torch.ops.blockscale.quantize_grouped_tokens(dy, offs, FP8)
        b, sb = torch.ops.blockscale.quantize_grouped_tokens(x, offs, FP8)
        out = torch.ops.blockscale.grouped_mm_k(a, sa, b, sb, offs, torch.float32)
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, eager)
    new = [T - 3, 0, 1, 2]
    offs.copy_(offsets(new))
    g.replay()
    torch.cuda.synchronize()
    check_cast(dy, new, a, sa, "replay")
    check_out(out, reference(a, sa, b, sb, new), "replay with new offsets")
    assert torch.equal(out, wgrad(dy, x, offs))


def test_against_dense_wgrad():
    """One group equals the dense weight gradient of its tokens (same recipe)."""
    T, M, N = 640, 256, 384
    dy = torch.randn(T, M, device="cuda").to(torch.bfloat16)
    x = torch.randn(T, N, device="cuda").to(torch.bfloat16)
    offs = offsets([T])
    a, sa = quantize_grouped_tokens(dy, offs)
    b, sb = quantize_grouped_tokens(x, offs)
    out = grouped_mm_k(a, sa, b, sb, offs)
    ref = dy.double().t() @ x.double()
    err = (out[0].double() - ref).norm() / ref.norm()
    assert err.item() < 0.1, f"FP8 recipe error {err.item():.3f}"


def test_validation_messages():
    offs = offsets([4, 6])
    dy = torch.randn(10, 256, device="cuda").to(torch.bfloat16)
    x = torch.randn(10, 128, device="cuda").to(torch.bfloat16)
    a, sa = quantize_grouped_tokens(dy, offs)
    b, sb = quantize_grouped_tokens(x, offs)
    with pytest.raises(ValueError, match=r"offs to be a 1-D int32 tensor"):
        quantize_grouped_tokens(dy, offs.long())
    with pytest.raises(ValueError, match=r"pad cols to 104"):
        quantize_grouped_tokens(torch.randn(10, 100, device="cuda").to(torch.bfloat16), offs)
    with pytest.raises(ValueError, match="row-major"):
        quantize_grouped_tokens(dy.t().contiguous().t(), offs)
    with pytest.raises(ValueError, match="same token capacity"):
        grouped_mm_k(a, sa, b[:, :128], sb[:, :1], offs)
    with pytest.raises(ValueError, match=r"b_scale .* \(N, capacity/128\)"):
        grouped_mm_k(a, sa, b, sb[:, :1], offs)
    with pytest.raises(ValueError, match="out_dtype"):
        grouped_mm_k(a, sa, b, sb, offs, torch.float16)
    with pytest.raises(ValueError, match=r"c to be a contiguous float32 tensor"):
        grouped_mm_k_accumulate(torch.zeros(2, 256, 128, device="cuda",
                                            dtype=torch.bfloat16), a, sa, b, sb, offs)


def test_fakes_match_the_ops():
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        x = torch.empty(300, 512, device="cuda", dtype=torch.bfloat16)
        offs = torch.empty(4, device="cuda", dtype=torch.int32)
        q, s = torch.ops.blockscale.quantize_grouped_tokens(x, offs, FP8)
        assert q.shape == (512, 384 + 512) and q.dtype == FP8
        assert s.shape == (512, 7) and s.stride() == (1, 512)
        out = torch.ops.blockscale.grouped_mm_k(q, s, q, s, offs, torch.bfloat16)
        assert out.shape == (4, 512, 512) and out.dtype == torch.bfloat16
        with pytest.raises(ValueError, match="offs"):
            torch.ops.blockscale.grouped_mm_k(q, s, q, s, offs.long(), torch.float32)


def expert_pair(sizes, K, N, seed):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    T, G = sum(sizes), len(sizes)
    x = torch.randn(T, K, device="cuda", generator=gen).to(torch.bfloat16)
    w = (torch.randn(G, N, K, device="cuda", generator=gen) / K ** 0.5).to(torch.bfloat16)
    return x, w, offsets(sizes)


def reference_expert(x, w, sizes):
    ys, t0 = [], 0
    for g, n in enumerate(sizes):
        ys.append(x[t0:t0 + n] @ w[g].t())
        t0 += n
    return torch.cat(ys)


@pytest.mark.parametrize("ones", [True, False])
def test_expert_linear_sqnr(ones):
    """The MoE expert block (grouped_mm forward and dgrad, grouped_mm_k wgrad)
    against bf16 autograd: y.sum() (dy = 1, torchao's protocol: >= 25 dB out,
    >= 30 dB gradients) and a random dy (>= 25 dB everywhere)."""
    from blockscale.moe import grouped_expert_linear
    from blockscale.reference import sqnr_db
    sizes = [700, 0, 129, 1, 1200, 350, 127, 400]
    x, w, offs = expert_pair(sizes, 1024, 768, 21)
    x1, w1 = x.clone().requires_grad_(), w.clone().requires_grad_()
    x2, w2 = x.clone().requires_grad_(), w.clone().requires_grad_()
    y1 = reference_expert(x1, w1, sizes)
    y2 = grouped_expert_linear(x2, w2, offs)
    gy = torch.ones_like(y1) if ones else torch.randn_like(y1)
    y1.backward(gy)
    y2.backward(gy)
    s_out, s_dx, s_dw = (sqnr_db(y1, y2), sqnr_db(x1.grad, x2.grad),
                         sqnr_db(w1.grad, w2.grad))
    print(f"MoE expert SQNR ({'dy = 1' if ones else 'random dy'}) out {s_out:.1f} dB, "
          f"dx {s_dx:.1f} dB, dW {s_dw:.1f} dB")
    assert not torch.isnan(y2).any() and not torch.isnan(w2.grad).any()
    assert (w2.grad[1] == 0).all(), "an expert without tokens has a zero gradient"
    assert s_out >= 25.0
    need = 30.0 if ones else 25.0
    assert s_dx >= need and s_dw >= need


class _TwoCastExpertLinear(torch.autograd.Function):
    """grouped_expert_linear as it was before quantize_grouped_weight_dual: w
    cast in the forward, and w^T copied in bf16 and cast again in the
    backward."""

    @staticmethod
    def forward(ctx, x, w, offs):
        xq, xs = blockscale.quantize(x, "1x128")
        wq, ws = gm.quantize_grouped_weight(w)
        ctx.save_for_backward(x, w, offs)
        return gm.grouped_mm(xq, xs, wq, ws, offs, x.dtype)

    @staticmethod
    def backward(ctx, gy):
        x, w, offs = ctx.saved_tensors
        g = gy.contiguous()
        dx = dw = None
        if ctx.needs_input_grad[0]:
            gq, gs = blockscale.quantize(g, "1x128")
            wtq, wts = gm.quantize_grouped_weight(w.transpose(1, 2).contiguous())
            dx = gm.grouped_mm(gq, gs, wtq, wts, offs, x.dtype)
        if ctx.needs_input_grad[1]:
            a, sa = quantize_grouped_tokens(g, offs)
            b, sb = quantize_grouped_tokens(x, offs)
            dw = grouped_mm_k(a, sa, b, sb, offs, torch.float32).to(w.dtype)
        return dx, dw, None


@pytest.mark.parametrize("needs", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("N,K", [(768, 1024), (272, 400)])
def test_expert_linear_unchanged_by_the_dual_weight_cast(needs, N, K):
    """One read and cast of w per step (quantize_grouped_weight_dual when x
    needs a gradient) gives the outputs and gradients of the two casts
    before it, bit for bit (the casts are bit-exact, the GEMMs the same)."""
    from blockscale.moe import grouped_expert_linear
    sizes = [700, 0, 129, 1, 300, 350, 127, 40]
    x, w, offs = expert_pair(sizes, K, N, 23)
    x1, w1 = x.clone().requires_grad_(needs[0]), w.clone().requires_grad_(needs[1])
    x2, w2 = x.clone().requires_grad_(needs[0]), w.clone().requires_grad_(needs[1])
    y1 = _TwoCastExpertLinear.apply(x1, w1, offs)
    y2 = grouped_expert_linear(x2, w2, offs)
    assert torch.equal(y1, y2), "forward output differs"
    gy = torch.randn_like(y1)
    y1.backward(gy)
    y2.backward(gy)
    if needs[0]:
        assert torch.equal(x1.grad, x2.grad), "dx differs"
    if needs[1]:
        assert torch.equal(w1.grad, w2.grad), "dW differs"
