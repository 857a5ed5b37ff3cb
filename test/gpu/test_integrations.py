# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""GPU tests of the framework integration (python/blockscale/integrations.py):
the torchao-style config and quantize_, torchao's own quantize_ when
torchao is installed, the torchtitan-style converter, module filters,
dry_run, the sm_90 check, and python -m blockscale."""
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest
import torch
from torch import nn

import blockscale
from blockscale import Float8BlockwiseConfig, Float8BlockwiseConverter
from blockscale import integrations, ops
from blockscale.nn import Float8BlockwiseLinear


class Attn(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.wq = nn.Linear(d, d, bias=False)
        self.wo = nn.Linear(d, d, bias=False)


class Model(nn.Module):
    def __init__(self, d=1024):
        super().__init__()
        self.attn = Attn(d)
        self.w1 = nn.Linear(d, 2816, bias=False)
        self.w2 = nn.Linear(2816, d, bias=False)
        self.small = nn.Linear(d, 256)      # below min_features
        self.odd = nn.Linear(d, 1040)       # not a multiple of 128
        self.output = nn.Linear(d, 32000)   # skipped by name

    def forward(self, x):
        h = x + self.attn.wo(self.attn.wq(x))
        h = h + self.w2(torch.relu(self.w1(h)))
        return self.output(h), self.small(h), self.odd(h)


def model():
    return Model().cuda().to(torch.bfloat16)


def test_dry_run_names_every_reason():
    cfg = Float8BlockwiseConfig(skip_names=["output"])
    rep = blockscale.dry_run(model(), cfg)
    assert rep.converted == ["attn.wq", "attn.wo", "w1", "w2"]
    assert rep.skipped["small"] == "out_features=256 below min_features=1024"
    assert rep.skipped["odd"] == "out_features=1040 not a multiple of 128"
    assert rep.skipped["output"] == "skipped by name ('output')"
    assert "4 linear layer(s) converted, 3 skipped" in str(rep)


def test_quantize_converts_in_place_sharing_parameters():
    m = model()
    w1 = m.w1.weight
    cfg = Float8BlockwiseConfig(skip_names=["output"], skip_regex=[r"attn\.wo$"])
    rep = blockscale.quantize_(m, cfg)
    assert rep.converted == ["attn.wq", "w1", "w2"] and "attn.wo" in rep.skipped
    assert type(m.attn.wq) is Float8BlockwiseLinear and type(m.attn.wo) is nn.Linear
    assert m.w1.weight is w1  # shared, not copied
    assert type(m.output) is nn.Linear and type(m.small) is nn.Linear
    x = torch.randn(4, 32, 1024, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    out = m(x)[0]
    out.float().pow(2).mean().backward()
    assert torch.isfinite(x.grad).all() and m.w1.weight.grad is not None
    # converting again changes nothing
    assert blockscale.quantize_(m, cfg).converted == []


def test_filter_fn_and_options():
    seen = []

    def keep_mlp(mod, fqn):
        seen.append(fqn)
        return not fqn.startswith("attn")

    rep = blockscale.dry_run(model(), Float8BlockwiseConfig(filter_fn=keep_mlp, min_features=0,
                                                            multiple_of=16))
    assert rep.converted == ["w1", "w2", "small", "odd", "output"]
    assert rep.skipped["attn.wq"] == "filter_fn returned False"
    assert "attn.wq" in seen
    with pytest.raises(ValueError, match="multiple of 16"):
        Float8BlockwiseConfig(multiple_of=8)
    with pytest.raises(ValueError, match="bare nn.Linear"):
        blockscale.quantize_(nn.Linear(1024, 1024).cuda())


def test_torchao_quantize_():
    pytest.importorskip("torchao")
    from torchao.quantization import quantize_ as ao_quantize_

    cfg = Float8BlockwiseConfig(skip_names=["output"])
    assert integrations._torchao_registered
    m = model()
    ao_quantize_(m, cfg, filter_fn=cfg.module_filter)  # names apply through filter_fn
    assert type(m.w1) is Float8BlockwiseLinear and type(m.output) is nn.Linear
    m2 = model()
    ao_quantize_(m2, Float8BlockwiseConfig())  # torchao's default filter: sizes only
    assert type(m2.w1) is Float8BlockwiseLinear and type(m2.output) is Float8BlockwiseLinear
    assert type(m2.small) is nn.Linear and type(m2.odd) is nn.Linear
    m2(torch.randn(64, 1024, device="cuda", dtype=torch.bfloat16))


def test_torchtitan_style_converter():
    m = model()
    conv = Float8BlockwiseConverter({"skip_names": ["output"]}, parallel_dims=None)
    conv.convert(m)
    assert type(m.w1) is Float8BlockwiseLinear and type(m.output) is nn.Linear
    assert conv.report.converted == ["attn.wq", "attn.wo", "w1", "w2"]
    conv.post_optimizer_hook(m)  # nothing to do
    # A torchtitan JobConfig: float8.filter_fqns become skip names; a
    # `blockscale` section wins.
    job = SimpleNamespace(float8=SimpleNamespace(filter_fqns=["output", "w2"]))
    assert Float8BlockwiseConverter(job).config.skip_names == ("output", "w2")
    job.blockscale = SimpleNamespace(min_features=2048)
    assert Float8BlockwiseConverter(job).config.min_features == 2048
    with pytest.raises(TypeError, match="unknown option"):
        Float8BlockwiseConverter(min_feature=1)
    # On the meta device, as torchtitan converts before parallelizing.
    with torch.device("meta"):
        mm = Model()
    Float8BlockwiseConverter(check_device=True).convert(mm)
    assert type(mm.w1) is Float8BlockwiseLinear


def test_register_torchtitan():
    ok = integrations.register_torchtitan()
    try:
        import torchtitan.protocols.model_converter as mc  # noqa: F401
    except Exception:
        assert ok is False
        return
    if hasattr(mc, "_registry_model_converter_cls"):
        assert mc._registry_model_converter_cls["blockscale"] is Float8BlockwiseConverter


def test_non_sm90_gpu_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a, **k: (8, 0))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a, **k: "NVIDIA A100-SXM4-80GB")
    msg = r"NVIDIA A100-SXM4-80GB\) has compute capability 8\.0 \(sm_80\).*need sm_90 \(Hopper"
    with pytest.raises(blockscale.UnsupportedGPUError, match=msg):
        blockscale.quantize_(model())
    saved = set(ops._sm90_devices)
    ops._sm90_devices.clear()
    try:
        x = torch.randn(128, 256, device="cuda", dtype=torch.bfloat16)
        with pytest.raises(blockscale.UnsupportedGPUError, match=msg):
            blockscale.quantize(x, "1x128")
    finally:
        ops._sm90_devices.clear()
        ops._sm90_devices.update(saved)
    # dry_run needs no GPU check
    assert blockscale.dry_run(model()).converted


def test_python_m_blockscale_self_check():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(os.path.dirname(__file__), "..", "..", "python") + \
        os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-m", "blockscale"], env=env, capture_output=True,
                       text=True, timeout=300)
    print(r.stdout, r.stderr)
    assert r.returncode == 0
    assert "compute capability 9.0 (sm_90)" in r.stdout
    assert "self-check: quantize + scaled_mm" in r.stdout and "-> PASS" in r.stdout
