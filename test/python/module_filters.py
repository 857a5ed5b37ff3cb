# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Module filters and the FP8 checkpoint plan (python/blockscale/_select.py),
without torch."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from blockscale._select import (check_filter_options, name_matches, plan_fp8_checkpoint,  # noqa
                                skip_reason)

# Names: exact, a module above, trailing components.
for fqn, name in [("output", "output"), ("model.output", "output"),
                  ("layers.0.attn.wq", "layers.0"), ("layers.10.attn.wq", "layers.1"),
                  ("layers.0.attn.wq", "attn.wq"), ("layers.0.attn.wqkv", "wq")]:
    print(f"name {name!r} selects {fqn!r}: {name_matches(fqn, name)}")

kw = dict(min_features=1024, multiple_of=128)
print("big:", skip_reason("layers.0.mlp.w1", 4096, 14336, **kw))
print("small:", skip_reason("layers.0.mlp.w1", 512, 4096, **kw))
print("odd:", skip_reason("layers.0.mlp.w1", 4096, 4100, **kw))
print("by name:", skip_reason("output", 4096, 32768, skip_names=["output"], **kw))
print("by regex:", skip_reason("layers.3.attn.wo", 4096, 4096, skip_regex=[r"attn\.w[ok]$"], **kw))
print("16 allowed:", skip_reason("x", 1040, 2064, min_features=0, multiple_of=16))
for bad in (8, 100):
    try:
        check_filter_options(0, bad)
    except ValueError as e:
        print("bad multiple_of:", e)

# A DeepSeek-style checkpoint: q_proj FP8 with scales and bias, o_proj FP8
# without scales, lm_head bf16, an FP8 weight with no layer.
linears = {"model.q_proj": (7168, 1536), "model.o_proj": (2048, 7168),
           "lm_head": (7168, 129280), "model.k_proj": (7168, 576)}
entries = {
    "model.q_proj.weight": ("float8_e4m3fn", (1536, 7168)),
    "model.q_proj.weight_scale_inv": ("float32", (12, 56)),
    "model.q_proj.bias": ("bfloat16", (1536,)),
    "model.k_proj.weight": ("float8_e4m3fn", (576, 7168)),
    "model.k_proj.weight_scale_inv": ("float32", (5, 56)),
    "lm_head.weight": ("bfloat16", (129280, 7168)),
    "model.gone.weight": ("float8_e4m3fn", (128, 128)),
}
plan = plan_fp8_checkpoint(linears, entries)
print("convert:", plan.convert)
print("consumed:", plan.consumed)
print("unmatched:", plan.unmatched)
print("errors:", plan.errors)
# o_proj (in 2048, out 7168): weight (7168, 2048), scales (56, 16).
entries["model.o_proj.weight"] = ("float8_e4m3fn", (7168, 2048))
entries["model.o_proj.weight_scale_inv"] = ("float32", (56, 16))
print("o_proj converted:", "model.o_proj" in plan_fp8_checkpoint(linears, entries).convert)
entries["model.o_proj.weight_scale_inv"] = ("float32", (16, 56))  # transposed
print("error:", plan_fp8_checkpoint(linears, entries).errors)
entries["model.o_proj.weight"] = ("float8_e4m3fn", (2048, 7168))  # transposed
print("error:", plan_fp8_checkpoint(linears, entries).errors)
entries["model.o_proj.weight"] = ("float8_e4m3fn", (7168, 2048))
del entries["model.o_proj.weight_scale_inv"]
print("error:", plan_fp8_checkpoint(linears, entries).errors)
