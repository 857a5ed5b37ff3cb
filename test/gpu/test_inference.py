# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""GPU tests of the FP8 inference linear and the DeepSeek-style checkpoint
loader (python/blockscale/inference.py): scripts/gpu-check.sh python."""
import pytest
import torch
from torch import nn

import blockscale
from blockscale import Float8BlockwiseInferenceLinear, load_fp8_checkpoint
from blockscale.reference import dequantize, quantize_ref

FP8 = torch.float8_e4m3fn


def rel(out, ref):
    return ((out.double() - ref.double()).norm() / ref.double().norm()).item()


def fp8_weight(n, k, seed=0):
    """A DeepSeek-V3-layout weight: (N, K) e4m3 row-major and (ceil(N/128),
    ceil(K/128)) float32 row-major decode scales, from a random bf16 weight
    whose rows and blocks span several magnitudes."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    w = torch.randn(n, k, device="cuda", generator=g)
    w = w * torch.logspace(-2, 2, n, device="cuda")[:, None]
    q, s = quantize_ref(w.to(torch.bfloat16), "128x128")
    return q.contiguous(), s.contiguous()


def dequant_ref(x, q, s):
    """float64 reference: the activations quantized 1x128 (bit-exact with
    the kernel), both operands dequantized, then a matmul."""
    xq, xs = quantize_ref(x, "1x128")
    return dequantize(xq, xs, "1x128").double() @ dequantize(q, s, "128x128").double().t()


@pytest.mark.parametrize("M,N,K", [(1, 256, 128), (77, 200, 7008), (128, 2112, 7168),
                                   (512, 1536, 7168), (300, 576, 1040), (4096, 7168, 2048)])
def test_matches_dequantize_then_matmul(M, N, K):
    q, s = fp8_weight(N, K)
    assert q.dtype == FP8 and q.shape == (N, K) and q.is_contiguous()
    assert s.dtype == torch.float32 and s.shape == (-(-N // 128), -(-K // 128)) and s.is_contiguous()
    mod = Float8BlockwiseInferenceLinear.from_state_dict("", {"weight": q, "weight_scale_inv": s})
    # The checkpoint's tensors are used as they are: no copy, no re-layout.
    assert mod.weight.data_ptr() == q.data_ptr()
    assert mod.weight_scale_inv.data_ptr() == s.data_ptr()
    x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    y = mod(x)
    assert y.shape == (M, N) and y.dtype == torch.bfloat16
    assert torch.isfinite(y).all()
    assert rel(y, dequant_ref(x, q, s)) <= 2e-3


def test_equals_scaled_mm_on_the_same_operands():
    """The module is quantize(x, 1x128) + scaled_mm with the checkpoint's
    scales read in place: the same result as scaled_mm on the same values
    with the scales in blockscale's own layout."""
    M, N, K = 256, 2112, 7168
    q, s = fp8_weight(N, K, seed=1)
    mod = Float8BlockwiseInferenceLinear.from_state_dict("", {"weight": q, "weight_scale_inv": s})
    x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    xq, xs = blockscale.quantize(x, "1x128")
    # 128x128 B scales as (Kb, Nb) with blockscale's default strides.
    kb, nb = s.shape[1], s.shape[0]
    ld = -(-kb // 4) * 4
    s_own = torch.empty(nb * ld, device="cuda").as_strided((kb, nb), (1, ld))
    s_own.copy_(s.t())
    a = blockscale.scaled_mm(xq, xs, q.t(), s_own, "1x128", "128x128", torch.bfloat16)
    b = blockscale.scaled_mm(xq, xs, q.t(), s_own, "1x128", "128x128", torch.bfloat16)
    y = mod(x)
    if torch.equal(a, b):  # deterministic kernel: bit-identical
        assert torch.equal(y, a)
    else:
        assert rel(y, a) <= 1e-3


def test_bias_batch_dims_and_dtypes():
    N, K = 384, 1024
    q, s = fp8_weight(N, K, seed=2)
    bias = torch.randn(N, device="cuda", dtype=torch.bfloat16)
    mod = Float8BlockwiseInferenceLinear.from_state_dict(
        "layer.", {"layer.weight": q, "layer.weight_scale_inv": s, "layer.bias": bias})
    x = torch.randn(2, 5, K, device="cuda", dtype=torch.bfloat16)
    y = mod(x)
    assert y.shape == (2, 5, N) and y.dtype == torch.bfloat16
    ref = dequant_ref(x.reshape(-1, K), q, s) + bias.double()
    assert rel(y.reshape(-1, N), ref) <= 2e-3
    assert mod(x.float()).dtype == torch.float32
    assert mod(x.half()).dtype == torch.float16
    f32 = Float8BlockwiseInferenceLinear.from_state_dict(
        "", {"weight": q, "weight_scale_inv": s}, out_dtype=torch.float32)
    assert f32(x).dtype == torch.float32
    assert rel(f32(x).reshape(-1, N), dequant_ref(x.reshape(-1, K), q, s)) <= 5e-4


def test_to_dtype_keeps_fp8_weight_and_f32_scales():
    q, s = fp8_weight(256, 512, seed=3)
    mod = Float8BlockwiseInferenceLinear.from_state_dict(
        "", {"weight": q.clone(), "weight_scale_inv": s.clone(),
             "bias": torch.zeros(256, device="cuda")})
    mod.to(torch.bfloat16)
    assert mod.weight.dtype == FP8 and torch.equal(mod.weight.view(torch.uint8), q.view(torch.uint8))
    assert mod.weight_scale_inv.dtype == torch.float32 and torch.equal(mod.weight_scale_inv, s)
    assert mod.bias.dtype == torch.bfloat16
    mod.cpu()
    assert mod.weight.device.type == "cpu" and mod.weight.dtype == FP8
    mod.cuda()
    assert torch.equal(mod.weight_scale_inv, s)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(1024)
        self.q_proj = nn.Linear(1024, 512, bias=False)
        self.o_proj = nn.Linear(512, 1024, bias=True)


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Block(), Block()])
        self.lm_head = nn.Linear(1024, 256, bias=False)


def fp8_state_dict():
    sd = {}
    for i in range(2):
        p = f"layers.{i}."
        sd[p + "norm.weight"] = torch.ones(1024, device="cuda")
        sd[p + "norm.bias"] = torch.zeros(1024, device="cuda")
        sd[p + "q_proj.weight"], sd[p + "q_proj.weight_scale_inv"] = fp8_weight(512, 1024, 10 + i)
        sd[p + "o_proj.weight"], sd[p + "o_proj.weight_scale_inv"] = fp8_weight(1024, 512, 20 + i)
        sd[p + "o_proj.bias"] = torch.randn(1024, device="cuda")
    sd["lm_head.weight"] = torch.randn(256, 1024, device="cuda")  # kept high precision
    return sd


def test_load_fp8_checkpoint():
    sd = fp8_state_dict()
    model = Tiny().cuda()
    report = load_fp8_checkpoint(model, sd)
    assert sorted(report.converted) == ["layers.0.o_proj", "layers.0.q_proj",
                                        "layers.1.o_proj", "layers.1.q_proj"]
    assert report.missing == [] and report.unexpected == [] and report.unmatched == []
    for blk in model.layers:
        assert isinstance(blk.q_proj, Float8BlockwiseInferenceLinear)
        assert isinstance(blk.o_proj, Float8BlockwiseInferenceLinear)
    assert type(model.lm_head) is nn.Linear and torch.equal(model.lm_head.weight, sd["lm_head.weight"])
    assert model.layers[1].q_proj.weight.data_ptr() == sd["layers.1.q_proj.weight"].data_ptr()
    x = torch.randn(64, 1024, device="cuda", dtype=torch.bfloat16)
    y = model.layers[0].q_proj(x)
    assert rel(y, dequant_ref(x, sd["layers.0.q_proj.weight"], sd["layers.0.q_proj.weight_scale_inv"])) <= 2e-3
    # state_dict() round-trips under the checkpoint's names.
    assert set(model.state_dict()) == set(sd)


def test_load_fp8_checkpoint_meta_model_and_errors():
    sd = fp8_state_dict()
    with torch.device("meta"):
        model = Tiny()
    load_fp8_checkpoint(model, sd, assign=True)
    assert model.layers[0].q_proj.weight.device.type == "cuda"
    assert model.lm_head.weight.device.type == "cuda"

    with pytest.raises(RuntimeError, match="unexpected keys"):
        load_fp8_checkpoint(Tiny().cuda(), {**sd, "extra.weight": torch.zeros(3)}, strict=True)
    bad = dict(sd)
    bad["layers.1.o_proj.weight_scale_inv"] = sd["layers.1.o_proj.weight_scale_inv"].t().contiguous()
    with pytest.raises(ValueError, match=r"layers\.1\.o_proj\.weight_scale_inv has shape"):
        load_fp8_checkpoint(Tiny().cuda(), bad)
    del bad["layers.1.o_proj.weight_scale_inv"]
    with pytest.raises(ValueError, match="weight_scale_inv is missing"):
        load_fp8_checkpoint(Tiny().cuda(), bad)


def test_from_float():
    lin = nn.Linear(1024, 768, bias=True, device="cuda", dtype=torch.bfloat16)
    mod = Float8BlockwiseInferenceLinear.from_float(lin)
    x = torch.randn(33, 1024, device="cuda", dtype=torch.bfloat16)
    ref = lin(x).double()
    # FP8 weights and activations: ~the SQNR of the training recipe.
    err = (mod(x).double() - ref).norm() / ref.norm()
    assert err < 0.1
