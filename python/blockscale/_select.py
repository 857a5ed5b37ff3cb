# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Which modules blockscale converts, as plain functions of names, sizes
and dtypes (no torch: the CPU tests run them without it).

Module filters (``Float8BlockwiseConfig``, ``dry_run``): a linear layer is
converted unless
  * its fully-qualified name matches one of ``skip_names`` (equal to the
    name, a module above it: "layers.0" skips "layers.0.attn.wq", or its
    last components: "output" skips "output" and "model.output"), or one of
    the regular expressions ``skip_regex`` (re.search);
  * in_features or out_features is below ``min_features``;
  * in_features or out_features is not a multiple of ``multiple_of``
    (128 by default: whole scale blocks; the kernels need 16);
  * the user's ``filter_fn(module, fqn)`` returns False.

FP8 checkpoints (``load_fp8_checkpoint``): a linear layer ``p`` is loaded
as FP8 when the state dict has ``p.weight`` in float8_e4m3fn (or e5m2) and
``p.weight_scale_inv`` of shape (ceil(N/128), ceil(K/128)) (the DeepSeek-V3
layout, row-major float32 decode scales).
"""
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

FP8_WEIGHT_DTYPES = ("float8_e4m3fn", "float8_e5m2")
SCALE_DTYPES = ("float32", "bfloat16", "float16")


def cdiv(a, b):
    return (a + b - 1) // b


def name_matches(fqn: str, name: str) -> bool:
    """Whether skip name `name` selects the module `fqn`."""
    if not name:
        return False
    return fqn == name or fqn.startswith(name + ".") or fqn.endswith("." + name)


def check_filter_options(min_features, multiple_of):
    if multiple_of < 16 or multiple_of % 16:
        raise ValueError(f"multiple_of must be a positive multiple of 16 (the kernels read "
                         f"16-byte FP8 rows) but got {multiple_of}")
    if min_features < 0:
        raise ValueError(f"min_features must be >= 0 but got {min_features}")


def skip_reason(fqn: str, in_features: int, out_features: int, *,
                skip_names: Sequence[str] = (), skip_regex: Sequence[str] = (),
                min_features: int = 0, multiple_of: int = 128) -> Optional[str]:
    """Why a linear layer is not converted, or None when it is. (The user's
    filter_fn and the module type are checked by the caller.)"""
    for n in skip_names:
        if name_matches(fqn, n):
            return f"skipped by name ({n!r})"
    for r in skip_regex:
        if re.search(r, fqn):
            return f"skipped by regex ({r!r})"
    small = [f"{what}={v}" for what, v in (("in_features", in_features),
                                            ("out_features", out_features)) if v < min_features]
    if small:
        return f"{', '.join(small)} below min_features={min_features}"
    odd = [f"{what}={v}" for what, v in (("in_features", in_features),
                                          ("out_features", out_features)) if v % multiple_of]
    if odd:
        return f"{', '.join(odd)} not a multiple of {multiple_of}"
    return None


@dataclass
class ConversionReport:
    """What a conversion did (or, from dry_run, would do): the linear layers
    converted, and for each one left alone, why."""
    converted: List[str] = field(default_factory=list)
    skipped: Dict[str, str] = field(default_factory=dict)

    def __str__(self):
        lines = [f"blockscale: {len(self.converted)} linear layer(s) converted, "
                 f"{len(self.skipped)} skipped"]
        lines += [f"  convert  {n}" for n in self.converted]
        lines += [f"  skip     {n}: {why}" for n, why in self.skipped.items()]
        return "\n".join(lines)


@dataclass
class CheckpointPlan:
    """Which linear layers a state dict holds in FP8 (``convert``: fqn ->
    has bias), the keys they consume, FP8 weights that match no linear
    layer, and errors (fqn -> message)."""
    convert: Dict[str, bool] = field(default_factory=dict)
    consumed: List[str] = field(default_factory=list)
    unmatched: List[str] = field(default_factory=list)
    errors: Dict[str, str] = field(default_factory=dict)


def check_fp8_entry(fqn: str, in_features: int, out_features: int,
                    weight: Tuple[str, tuple], scale: Optional[Tuple[str, tuple]]) -> Optional[str]:
    """None when (weight dtype, shape) and (scale dtype, shape) are a valid
    DeepSeek-style FP8 linear of the given size; else the error."""
    name = fqn or "<root>"
    wd, ws = weight
    if wd not in FP8_WEIGHT_DTYPES:
        return f"{name}.weight is {wd}, expected float8_e4m3fn (or float8_e5m2)"
    if scale is None:
        return f"{name}.weight is {wd} but {name}.weight_scale_inv is missing"
    if tuple(ws) != (out_features, in_features):
        return (f"{name}.weight has shape {tuple(ws)} but the layer is (out_features, "
                f"in_features) = {(out_features, in_features)}")
    sd, ss = scale
    want = (cdiv(out_features, 128), cdiv(in_features, 128))
    if tuple(ss) != want:
        return (f"{name}.weight_scale_inv has shape {tuple(ss)}, expected (ceil(N/128), "
                f"ceil(K/128)) = {want} (128x128 blocks)")
    if sd not in SCALE_DTYPES:
        return f"{name}.weight_scale_inv is {sd}, expected float32"
    if in_features % 16:
        return (f"{name}: in_features={in_features} is not a multiple of 16 (the GEMM reads "
                f"16-byte FP8 rows)")
    return None


def plan_fp8_checkpoint(linears: Dict[str, Tuple[int, int]],
                        entries: Dict[str, Tuple[str, tuple]]) -> CheckpointPlan:
    """`linears`: fqn -> (in_features, out_features) of the model's linear
    layers; `entries`: state-dict key -> (dtype name without "torch.",
    shape)."""
    plan = CheckpointPlan()
    matched = set()
    for fqn, (k, n) in linears.items():
        p = f"{fqn}." if fqn else ""
        w = entries.get(p + "weight")
        if w is None or w[0] not in FP8_WEIGHT_DTYPES:
            continue
        matched.add(p + "weight")
        err = check_fp8_entry(fqn, k, n, w, entries.get(p + "weight_scale_inv"))
        if err:
            plan.errors[fqn] = err
            continue
        has_bias = (p + "bias") in entries
        plan.convert[fqn] = has_bias
        plan.consumed += [p + "weight", p + "weight_scale_inv"] + ([p + "bias"] if has_bias else [])
    for key, (dtype, _) in entries.items():
        if key.endswith("weight") and dtype in FP8_WEIGHT_DTYPES and key not in matched:
            plan.unmatched.append(key)
    return plan
