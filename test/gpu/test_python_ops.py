# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""GPU tests of the Python package (run on the H200: scripts/gpu-check.sh python)."""
import os
import socket

import pytest
import torch

import blockscale
from blockscale import _capi
from blockscale.reference import dequantize, quantize_ref, sqnr_db

FP8 = torch.float8_e4m3fn


def rel(out, ref):
    return ((out.double() - ref.double()).norm() / ref.double().norm()).item()


@pytest.mark.parametrize("recipe", ["1x128", "128x1", "128x128"])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("layout", ["row_major", "col_major"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_quantize_bit_exact(recipe, transpose, layout, dtype):
    R, C = 1008, 2112 + 16  # partial 128-blocks in both dimensions
    x = (torch.randn(R, C, device="cuda") * torch.logspace(-3, 3, R, device="cuda")[:, None]).to(dtype)
    q, s = blockscale.quantize(x, recipe, transpose=transpose, layout=layout)
    qr, sr = quantize_ref(x, recipe, transpose=transpose)
    assert q.shape == qr.shape and s.shape == sr.shape
    if layout == "col_major":
        assert q.stride(0) == 1
    else:
        assert q.stride(1) == 1
    assert torch.equal(q.view(torch.uint8), qr.view(torch.uint8)), "FP8 bytes differ"
    assert torch.equal(s, sr), "scales differ"


@pytest.mark.parametrize("recipe", ["1x128", "128x128"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
@pytest.mark.parametrize("fp8", [torch.float8_e4m3fn, torch.float8_e5m2])
@pytest.mark.parametrize("shape", [(1008, 2128), (16, 4096), (4096, 16), (2048, 7168)])
def test_quantize_dual_matches_the_single_casts(recipe, dtype, fp8, shape):
    R, C = shape
    x = (torch.randn(R, C, device="cuda") *
         torch.logspace(-3, 3, R, device="cuda")[:, None]).to(dtype)
    blockscale.quantize_dual(x, recipe, fp8_dtype=fp8)  # compiles outside the poisoning
    # Poisoned: the results are carved from freed memory full of 0xFF bytes
    # (NaN in FP8 and f32), so an element the kernel misses cannot match.
    torch.cuda.synchronize()
    poison = torch.full((64 << 20,), 0xFF, dtype=torch.uint8, device="cuda")
    del poison
    q, s, qt, st = blockscale.quantize_dual(x, recipe, fp8_dtype=fp8)
    q1, s1 = blockscale.quantize(x, recipe, fp8_dtype=fp8)
    qt1, st1 = blockscale.quantize(x, recipe, transpose=True, fp8_dtype=fp8)
    for a, b in ((q, q1), (s, s1), (qt, qt1), (st, st1)):
        assert a.shape == b.shape and a.stride() == b.stride()
    assert torch.equal(q.view(torch.uint8), q1.view(torch.uint8)), "in-order FP8 bytes differ"
    assert torch.equal(qt.view(torch.uint8), qt1.view(torch.uint8)), "transposed FP8 bytes differ"
    assert torch.equal(s, s1) and torch.equal(st, st1), "scales differ"
    qr, sr = quantize_ref(x, recipe, fp8_dtype=fp8)
    assert torch.equal(q.view(torch.uint8), qr.view(torch.uint8)) and torch.equal(s, sr)
    qtr, str_ = quantize_ref(x, recipe, transpose=True, fp8_dtype=fp8)
    assert torch.equal(qt.view(torch.uint8), qtr.view(torch.uint8)) and torch.equal(st, str_)
    if recipe == "128x128":
        assert torch.equal(st, s.t())


def test_quantize_dual_rejects_bad_input():
    x = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="cast a 128x1 result with blockscale.quantize"):
        blockscale.quantize_dual(x, "128x1")
    with pytest.raises(ValueError, match="row-major input"):
        blockscale.quantize_dual(x.t(), "1x128")
    with pytest.raises(ValueError, match="multiples of 16"):
        blockscale.quantize_dual(torch.randn(100, 256, device="cuda", dtype=torch.bfloat16),
                                 "1x128")


def test_linear_reads_each_operand_once_and_matches_single_casts():
    """The layer's step runs one dual cast each for x, W and dy and no other
    cast, and its outputs equal the same GEMMs on single-layout casts."""
    T, K, N = 1024, 1024, 2048
    torch.manual_seed(3)
    x = torch.randn(T, K, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    g = torch.randn(T, N, device="cuda", dtype=torch.bfloat16)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        y = blockscale.nn._Fp8BlockwiseLinearFn.apply(x, w, None)
        y.backward(g)
        torch.cuda.synchronize()
    names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    casts = [n for n in names if n.startswith("bs_quantize")]
    assert sorted(casts) == sorted(["bs_quantize_bf16_e4m3_1x128_dual",
                                    "bs_quantize_bf16_e4m3_128x128_dual",
                                    "bs_quantize_bf16_e4m3_1x128_dual"]), casts
    # The same step from single-layout casts (what the layer ran before).
    q = blockscale.quantize
    xq, xs = q(x.detach(), "1x128")
    wq, ws = q(w.detach(), "128x128", transpose=True, layout="col_major")
    y_ref = blockscale.scaled_mm(xq, xs, wq, ws, "1x128", "128x128", torch.bfloat16)
    gq, gs = q(g, "1x128")
    wtq, wts = q(w.detach(), "128x128", layout="col_major")
    dx_ref = blockscale.scaled_mm(gq, gs, wtq, wts, "1x128", "128x128", torch.bfloat16)
    gtq, gts = q(g, "1x128", transpose=True)
    xbq, xbs = q(x.detach(), "128x1", layout="col_major")
    dw_ref = blockscale.scaled_mm(gtq, gts, xbq, xbs, "1x128", "128x1", torch.bfloat16)
    assert torch.equal(y, y_ref)
    assert torch.equal(x.grad, dx_ref)
    assert rel(w.grad, dw_ref) < 1e-6
    # Only one input needing a gradient: single-layout casts where one layout
    # is enough, and the gradient still matches.
    x2 = x.detach().clone().requires_grad_()
    y2 = blockscale.nn._Fp8BlockwiseLinearFn.apply(x2, w.detach(), None)
    y2.backward(g)
    assert torch.equal(y2, y_ref) and torch.equal(x2.grad, dx_ref)
    w2 = w.detach().clone().requires_grad_()
    y3 = blockscale.nn._Fp8BlockwiseLinearFn.apply(x.detach(), w2, None)
    y3.backward(g)
    assert torch.equal(y3, y_ref) and rel(w2.grad, dw_ref) < 1e-6


def test_quantize_rejects_bad_layouts():
    x = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="row-major input"):
        blockscale.quantize(x.t(), "1x128")
    with pytest.raises(ValueError, match="recipe"):
        blockscale.quantize(x, "64x64")
    with pytest.raises(ValueError, match="multiple of 16"):
        blockscale.quantize(torch.randn(100, 256, device="cuda", dtype=torch.bfloat16),
                            "1x128", transpose=True)


def operands(M, N, K, form):
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
    aq, as_ = blockscale.quantize(a, "1x128")
    if form == "wgrad":
        bq, bs = blockscale.quantize(w, "128x1", transpose=True, layout="col_major")
        rb = "128x1"
    else:
        bq, bs = blockscale.quantize(w, "128x128", transpose=True, layout="col_major")
        rb = "128x128"
    ref = dequantize(aq, as_, "1x128") @ dequantize(bq, bs, rb)
    return aq, as_, bq, bs, rb, ref


@pytest.mark.parametrize("form", ["fwd", "wgrad"])
@pytest.mark.parametrize("M,N,K", [(1, 256, 128), (77, 200, 7008), (512, 2112, 7168),
                                   (1000, 1040, 2944), (128, 2112, 7168)])
@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float32])
def test_scaled_mm(form, M, N, K, out_dtype):
    aq, as_, bq, bs, rb, ref = operands(M, N, K, form)
    out = blockscale.scaled_mm(aq, as_, bq, bs, "1x128", rb, out_dtype)
    assert out.dtype == out_dtype and out.shape == (M, N)
    assert torch.isfinite(out).all()
    assert rel(out, ref) <= (2e-3 if out_dtype == torch.bfloat16 else 5e-4)


def test_scaled_mm_accumulate():
    aq, as_, bq, bs, rb, ref = operands(512, 512, 1024, "wgrad")
    c0 = torch.randn(512, 512, device="cuda")
    c = c0.clone()
    blockscale.scaled_mm_accumulate(c, aq, as_, bq, bs)
    assert rel(c, c0 + ref) <= 5e-4


def test_scaled_mm_rejects_wrong_layouts():
    aq, as_, bq, bs, rb, ref = operands(256, 256, 256, "fwd")
    with pytest.raises(ValueError, match="column-major"):
        blockscale.scaled_mm(aq, as_, bq.contiguous(), bs, "1x128", rb, torch.bfloat16)
    with pytest.raises(ValueError, match="M-contiguous"):
        blockscale.scaled_mm(aq, as_.contiguous(), bq, bs, "1x128", rb, torch.bfloat16)
    with pytest.raises(ValueError, match="recipe_b"):
        blockscale.scaled_mm(aq, as_, bq, bs, "1x128", "1x128", torch.bfloat16)
    with pytest.raises(ValueError, match="b_scale of shape"):
        blockscale.scaled_mm(aq, as_, bq, bs[:1], "1x128", rb, torch.bfloat16)


def test_expanded_views_are_refused():
    # Stride 0 along a dim of size > 1 (torch's expand): the kernels would
    # read past the storage, and the launch takes a zero stride as "the
    # default layout". Each is refused naming the fix.
    aq, as_, bq, bs, rb, ref = operands(256, 256, 256, "fwd")
    with pytest.raises(ValueError, match="expanded view"):
        blockscale.scaled_mm(aq[:1].expand(256, 256), as_, bq, bs, "1x128", rb,
                             torch.bfloat16)
    with pytest.raises(ValueError, match="expanded view"):
        blockscale.scaled_mm(aq, as_[:, :1].expand(256, 2), bq, bs, "1x128", rb,
                             torch.bfloat16)
    with pytest.raises(ValueError, match="expanded view"):
        blockscale.scaled_mm(aq, as_, bq, bs[:1, :1].expand(2, 2), "1x128", rb,
                             torch.bfloat16)
    # A broadcast along one dim of the B scales is read as given; an empty
    # batch (whose scales have a zero K-block stride) is no expanded view.
    out = blockscale.scaled_mm(aq, as_, bq, bs[:, :1].expand(2, 2), "1x128", rb,
                               torch.bfloat16)
    ref_b = dequantize(aq, as_, "1x128") @ dequantize(bq, bs[:, :1].expand(2, 2).contiguous(), rb)
    assert rel(out, ref_b) <= 2e-3
    # One B scale block: its default layout is that one element, so a
    # scalar expanded to (1, 1) is read as given.
    aq1, as1, bq1, bs1, rb1, ref1 = operands(256, 128, 128, "fwd")
    out = blockscale.scaled_mm(aq1, as1, bq1, bs1.reshape(()).expand(1, 1), "1x128", rb1,
                               torch.bfloat16)
    assert rel(out, ref1) <= 2e-3
    a0, s0 = blockscale.quantize(torch.randn(0, 256, device="cuda", dtype=torch.bfloat16),
                                 "1x128")
    assert blockscale.scaled_mm(a0, s0, bq, bs, "1x128", rb, torch.bfloat16).shape == (0, 256)
    with pytest.raises(ValueError, match="expanded view"):
        blockscale.quantize(torch.randn(1, 256, device="cuda").expand(64, 256), "1x128")
    aq, as_, bq, bs, rb, ref = operands(256, 256, 256, "wgrad")
    c = torch.zeros(1, 256, device="cuda").expand(256, 256)
    with pytest.raises(ValueError, match="not to overlap"):
        blockscale.scaled_mm_accumulate(c, aq, as_, bq, bs)


def test_dynamic_m_reuses_kernel():
    stats0 = _capi.cache_stats()
    for M in (96, 100, 120, 128):  # one M bucket
        aq, as_, bq, bs, rb, ref = operands(M, 1024, 1024, "fwd")
        out = blockscale.scaled_mm(aq, as_, bq, bs, "1x128", rb, torch.bfloat16)
        assert rel(out, ref) <= 2e-3
    stats1 = _capi.cache_stats()
    # quantize kernels + at most one GEMM compile (possibly a disk hit)
    assert (stats1["compiles"] + stats1["disk_hits"]) - (stats0["compiles"] + stats0["disk_hits"]) <= 3


def linear_pair(T=2048, K=2048, N=2048, bias=True, seed=0):
    torch.manual_seed(seed)
    ref = torch.nn.Linear(K, N, bias=bias, device="cuda", dtype=torch.bfloat16)
    fp8 = blockscale.nn.convert(torch.nn.Sequential(
        torch.nn.Linear(K, N, bias=bias, device="cuda", dtype=torch.bfloat16)))
    fp8[0].weight.data.copy_(ref.weight.data)
    if bias:
        fp8[0].bias.data.copy_(ref.bias.data)
    x = torch.randn(T, K, device="cuda", dtype=torch.bfloat16)
    return ref, fp8, x


def test_linear_sqnr_torchao_protocol():
    # torchao's blockwise-linear test: y.sum().backward(), i.e. dy = 1.
    ref, fp8, x = linear_pair(T=1024, K=4096, N=4096, bias=False)
    x1 = x.clone().requires_grad_()
    x2 = x.clone().requires_grad_()
    y1, y2 = ref(x1), fp8(x2)
    y1.sum().backward()
    y2.sum().backward()
    s_out = sqnr_db(y1, y2)
    s_dx = sqnr_db(x1.grad, x2.grad)
    s_dw = sqnr_db(ref.weight.grad, fp8[0].weight.grad)
    print(f"SQNR (dy = 1) out {s_out:.1f} dB, dx {s_dx:.1f} dB, dW {s_dw:.1f} dB")
    assert not torch.isnan(y2).any()
    assert s_out >= 25.0
    assert s_dx >= 30.0 and s_dw >= 30.0


def test_linear_sqnr_random_grad():
    ref, fp8, x = linear_pair()
    assert isinstance(fp8[0], blockscale.nn.Float8BlockwiseLinear)
    x1 = x.clone().requires_grad_()
    x2 = x.clone().requires_grad_()
    y1 = ref(x1)
    y2 = fp8(x2)
    g = torch.randn_like(y1)
    y1.backward(g)
    y2.backward(g)
    s_out = sqnr_db(y1, y2)
    s_dx = sqnr_db(x1.grad, x2.grad)
    s_dw = sqnr_db(ref.weight.grad, fp8[0].weight.grad)
    s_db = sqnr_db(ref.bias.grad, fp8[0].bias.grad)
    print(f"SQNR out {s_out:.1f} dB, dx {s_dx:.1f} dB, dW {s_dw:.1f} dB, db {s_db:.1f} dB")
    assert s_out >= 25.0
    assert s_dx >= 25.0 and s_dw >= 25.0


def test_compile_fullgraph_no_graph_break():
    aq, as_, bq, bs, rb, ref = operands(512, 1024, 1024, "fwd")
    x = torch.randn(512, 1024, device="cuda", dtype=torch.bfloat16)

    def f(x, bq, bs):
        q, s = blockscale.quantize(x, "1x128")
        return blockscale.scaled_mm(q, s, bq, bs, "1x128", "128x128", torch.bfloat16) * 2

    torch._dynamo.reset()
    compiled = torch.compile(f, fullgraph=True)
    out = compiled(x, bq, bs)
    assert torch.equal(out, f(x, bq, bs))
    from torch._dynamo.utils import counters
    assert sum(counters["graph_break"].values()) == 0


def test_linear_compile_fullgraph():
    ref, fp8, x = linear_pair(T=512, K=1024, N=1024)
    compiled = torch.compile(fp8, fullgraph=True)
    xr = x.clone().requires_grad_()
    y = compiled(xr)
    y.sum().backward()
    y_eager = fp8(x)
    assert rel(y, y_eager) < 1e-6
    assert xr.grad is not None and torch.isfinite(xr.grad).all()


def test_cuda_graph_capture():
    ref, fp8, x = linear_pair(T=1024, K=1024, N=2048)
    xs = x.clone().requires_grad_()
    # warm up (JIT compile, kernel load) outside the capture
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            fp8(xs).sum().backward()
    torch.cuda.current_stream().wait_stream(s)
    fp8.zero_grad(set_to_none=False)
    xs.grad = None
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = fp8(xs)
        y.sum().backward()
    x_new = torch.randn_like(x)
    xs.data.copy_(x_new)
    fp8[0].weight.grad.zero_()
    g.replay()
    torch.cuda.synchronize()
    y_eager = fp8(x_new)
    assert rel(y, y_eager) < 1e-6


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_dtensor_sharding_rules_single_rank():
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor, Replicate, Shard
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(_free_port()))
    if not dist.is_initialized():
        dist.init_process_group("nccl", rank=0, world_size=1)
    mesh = init_device_mesh("cuda", (1,))
    aq, as_, bq, bs, rb, ref = operands(256, 512, 1024, "fwd")
    local = blockscale.scaled_mm(aq, as_, bq, bs, "1x128", rb, torch.bfloat16)
    for pa, pb in [((Shard(0), Shard(0)), (Replicate(), Replicate())),
                   ((Replicate(), Replicate()), (Shard(1), Shard(1))),
                   ((Shard(1), Shard(1)), (Shard(0), Shard(0)))]:
        # from_local keeps the local tensors' strides (the layouts matter).
        da = DTensor.from_local(aq, mesh, [pa[0]])
        das = DTensor.from_local(as_, mesh, [pa[1]])
        db = DTensor.from_local(bq, mesh, [pb[0]])
        dbs = DTensor.from_local(bs, mesh, [pb[1]])
        out = blockscale.scaled_mm(da, das, db, dbs, "1x128", rb, torch.bfloat16)
        assert isinstance(out, DTensor)
        assert torch.equal(out.full_tensor(), local)
    x = torch.randn(256, 512, device="cuda", dtype=torch.bfloat16)
    dq, ds = blockscale.quantize(DTensor.from_local(x, mesh, [Shard(0)]), "1x128")
    q, s = blockscale.quantize(x, "1x128")
    assert torch.equal(dq.full_tensor().view(torch.uint8), q.view(torch.uint8))
    assert dq.placements[0] == Shard(0)
    outs = blockscale.quantize_dual(DTensor.from_local(x, mesh, [Shard(0)]), "1x128")
    ref = blockscale.quantize_dual(x, "1x128")
    assert [o.placements[0] for o in outs] == [Shard(0), Shard(0), Shard(1), Shard(1)]
    for o, r in zip(outs, ref):
        o = o.full_tensor()
        if o.element_size() == 1:  # FP8: compare the bytes
            o, r = o.contiguous().view(torch.uint8), r.contiguous().view(torch.uint8)
        assert torch.equal(o, r)
    dist.destroy_process_group()



@pytest.mark.parametrize("pdl", [False, True])
def test_programmatic_launch_orders_dependent_kernels(pdl):
    """cast -> GEMM -> cast captured back to back in a CUDA graph, each
    kernel reading what the previous one wrote. The GEMM has a few CTAs and
    the casts one per tile, so under programmatic launch each kernel starts
    on idle SMs while the previous one still runs: without its wait for that
    kernel it would read the poison put in its input before the replay
    (compiled without the kernels' gridDepWait, this test fails with pdl=True)."""
    prev = blockscale.programmatic_launch()
    try:
        blockscale.programmatic_launch(pdl)
        g = torch.Generator(device="cuda").manual_seed(3)
        x = torch.randn(128, 16384, device="cuda", dtype=torch.bfloat16, generator=g)
        w = torch.randn(256, 16384, device="cuda", dtype=torch.bfloat16, generator=g)
        bq, bs = blockscale.quantize(w, "128x128", transpose=True, layout="col_major")

        def chain():
            aq, as_ = blockscale.quantize(x, "1x128")
            y = blockscale.scaled_mm(aq, as_, bq, bs, "1x128", "128x128", torch.bfloat16)
            return (aq, as_, y) + tuple(blockscale.quantize(y, "1x128"))

        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            chain()  # compiles and loads outside the capture
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            aq, as_, y, yq, ys = chain()
        for _ in range(3):
            x.copy_(torch.randn(x.shape, device="cuda", dtype=x.dtype, generator=g))
            aq.view(torch.uint8).fill_(0x7F)  # e4m3 NaN
            as_.fill_(float("nan"))
            y.fill_(float("nan"))
            yq.view(torch.uint8).fill_(0)
            ys.fill_(0)
            graph.replay()
            torch.cuda.synchronize()
            ref = dequantize(aq, as_, "1x128") @ dequantize(bq, bs, "128x128")
            assert torch.isfinite(y).all()
            assert rel(y, ref) <= 2e-3
            qr, sr = quantize_ref(y, "1x128")
            assert torch.equal(yq.view(torch.uint8), qr.view(torch.uint8))
            assert torch.equal(ys, sr)
    finally:
        blockscale.programmatic_launch(prev)


def test_eager_calls_skip_the_dispatcher_only_when_nothing_needs_it():
    """Plain eager calls run the implementation directly; a dispatch mode
    (here one that logs ops), autograd and torch.compile still see the op."""
    from blockscale import ops
    from torch.utils._python_dispatch import TorchDispatchMode

    aq, as_, bq, bs, rb, ref = operands(128, 2112, 7168, "fwd")
    assert ops._direct(aq, as_, bq, bs)
    y_direct = blockscale.scaled_mm(aq, as_, bq, bs, "1x128", rb, torch.bfloat16)
    y_op = torch.ops.blockscale.scaled_mm.default(aq, as_, bq, bs, "1x128", rb, torch.bfloat16)
    assert rel(y_direct, ref) <= 2e-3 and rel(y_direct, y_op) <= 1e-3

    class Log(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    with Log() as log:
        assert not ops._direct(aq)
        blockscale.scaled_mm(aq, as_, bq, bs, "1x128", rb, torch.bfloat16)
        blockscale.quantize(ref.bfloat16(), "1x128")
    assert any("blockscale.scaled_mm" in o for o in log.ops), log.ops
    assert any("blockscale.quantize" in o for o in log.ops), log.ops

    x = torch.randn(256, 256, device="cuda", requires_grad=True)
    assert not ops._direct(x)
    with torch.no_grad():
        assert ops._direct(x)
    w = torch.nn.Parameter(torch.randn(256, 256, device="cuda"), requires_grad=False)
    assert ops._direct(w)
    q1, s1 = blockscale.quantize(x.detach(), "1x128")
    q2, s2 = torch.ops.blockscale.quantize.default(x.detach(), "1x128")
    assert torch.equal(q1.view(torch.uint8), q2.view(torch.uint8)) and torch.equal(s1, s2)
