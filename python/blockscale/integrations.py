# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Framework integration: a torchao-style config, a torchtitan-style model
converter, module filters and the GPU architecture check.

    cfg = blockscale.Float8BlockwiseConfig(skip_names=["output"], min_features=1024)
    print(blockscale.dry_run(model, cfg))        # what would convert, and why not
    blockscale.quantize_(model, cfg)             # no torchao needed
    torchao.quantization.quantize_(model, cfg, filter_fn=cfg.module_filter)  # with torchao

Neither torchao nor torchtitan is imported by ``import blockscale``.
Creating a Float8BlockwiseConfig registers its handler with torchao when
torchao is installed (``torchao.quantization.transform_module.
register_quantize_module_handler``; the config is registered as a virtual
subclass of torchao's AOBaseConfig). Float8BlockwiseConverter is registered
under the name "blockscale" with torchtitan's ``register_model_converter``
when torchtitan's converter registry is imported, before or after
blockscale (``register_torchtitan()`` does it by hand).

Conversion swaps nn.Linear for blockscale.nn.Float8BlockwiseLinear (shared
parameters, no copy) through blockscale.nn.convert.
"""
import importlib.util
import logging
import sys
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence

import torch
from torch import nn as _tnn

from . import _device, _lazy
from . import nn as _bnn
from ._select import ConversionReport, check_filter_options, skip_reason

log = logging.getLogger("blockscale")

# --------------------------------------------------------------------------
# The architecture check
# --------------------------------------------------------------------------


def check_device(device=None):
    """Raises UnsupportedGPUError (a RuntimeError) unless `device` (default:
    the current CUDA device) is an sm_90 GPU, naming the GPU and its compute
    capability."""
    if not torch.cuda.is_available():
        raise _device.UnsupportedGPUError(
            "blockscale: no CUDA GPU is visible; blockscale's FP8 kernels need an sm_90 "
            "(Hopper: H100, H200, GH200) GPU")
    if device is None or (isinstance(device, torch.device) and device.type != "cuda"):
        idx = torch.cuda.current_device()
    else:
        d = torch.device(device)
        idx = d.index if d.index is not None else torch.cuda.current_device()
    _device.check_capability(torch.cuda.get_device_name(idx),
                             torch.cuda.get_device_capability(idx), idx)


# --------------------------------------------------------------------------
# The config (torchao style)
# --------------------------------------------------------------------------


@dataclass
class Float8BlockwiseConfig:
    """Which linear layers to run through blockscale's FP8 blockwise recipe
    (1x128 activations, 128x128 weights, 128x1 for the weight gradient).

    filter_fn:    optional ``(module, fqn) -> bool``; False skips the module.
    skip_names:   fully-qualified names to skip (a name also selects the
                  modules below it, and matches trailing components:
                  "output" skips "model.output").
    skip_regex:   regular expressions (re.search on the fqn) to skip.
    min_features: layers with in_ or out_features below this stay as they
                  are (FP8 does not pay off for small GEMMs; default 1024).
    multiple_of:  in_ and out_features must be multiples of this (default
                  128, whole scale blocks; at least 16).
    check_device: at conversion, require an sm_90 GPU (default True).
    """
    filter_fn: Optional[Callable[[_tnn.Module, str], bool]] = None
    skip_names: Sequence[str] = field(default_factory=tuple)
    skip_regex: Sequence[str] = field(default_factory=tuple)
    min_features: int = 1024
    multiple_of: int = 128
    check_device: bool = True

    VERSION = 1  # what torchao's AOBaseConfig subclasses carry

    def __post_init__(self):
        if isinstance(self.skip_names, str):
            self.skip_names = (self.skip_names,)
        if isinstance(self.skip_regex, str):
            self.skip_regex = (self.skip_regex,)
        self.skip_names = tuple(self.skip_names)
        self.skip_regex = tuple(self.skip_regex)
        check_filter_options(self.min_features, self.multiple_of)
        _register_torchao()

    def reason(self, module: _tnn.Module, fqn: str) -> Optional[str]:
        """Why `module` (named `fqn`) is not converted, or None if it is."""
        if isinstance(module, _bnn.Float8BlockwiseLinear):
            return "already a Float8BlockwiseLinear"
        if type(module) is not _tnn.Linear:
            return f"{type(module).__name__} is not an nn.Linear"
        why = skip_reason(fqn, module.in_features, module.out_features,
                          skip_names=self.skip_names, skip_regex=self.skip_regex,
                          min_features=self.min_features, multiple_of=self.multiple_of)
        if why is None and self.filter_fn is not None and not self.filter_fn(module, fqn):
            why = "filter_fn returned False"
        return why

    def module_filter(self, module: _tnn.Module, fqn: str) -> bool:
        """``(module, fqn) -> bool``: pass as torchao's ``quantize_(...,
        filter_fn=cfg.module_filter)`` to apply the name filters there too
        (torchao's handler sees modules, not names)."""
        return self.reason(module, fqn) is None


def dry_run(model: _tnn.Module, config: Optional[Float8BlockwiseConfig] = None) -> ConversionReport:
    """Which linear layers of `model` quantize_(model, config) would convert,
    and why each other one would not. Changes nothing, needs no GPU."""
    config = config or Float8BlockwiseConfig()
    report = ConversionReport()
    for fqn, mod in model.named_modules():
        if not isinstance(mod, _tnn.Linear):
            continue
        why = config.reason(mod, fqn)
        if why is None:
            report.converted.append(fqn)
        else:
            report.skipped[fqn] = why
    return report


def quantize_(model: _tnn.Module, config: Optional[Float8BlockwiseConfig] = None) -> ConversionReport:
    """Converts `model`'s linear layers in place (torchao's quantize_ style,
    without torchao): every nn.Linear that `config` selects becomes a
    blockscale.nn.Float8BlockwiseLinear sharing its parameters. Returns the
    ConversionReport. Raises UnsupportedGPUError on a GPU that is not sm_90
    (unless config.check_device is False)."""
    config = config or Float8BlockwiseConfig()
    if type(model) is _tnn.Linear:
        raise ValueError("blockscale.quantize_ converts the linear layers inside a module in "
                         "place; for a bare nn.Linear use blockscale.nn.convert(linear), "
                         "which returns the new module")
    if config.check_device:
        check_device()
    report = dry_run(model, config)
    chosen = set(report.converted)
    _bnn.convert(model, module_filter_fn=lambda m, fqn: fqn in chosen)
    log.info("%s", report)
    return report


# --------------------------------------------------------------------------
# torchao
# --------------------------------------------------------------------------

_torchao_registered = None


def _torchao_handler(module, config, *args, **kwargs):
    """torchao's per-module transform (it passes modules, not names: name
    filters apply through quantize_(..., filter_fn=config.module_filter))."""
    if config.reason(module, "") is not None:
        return module
    if config.check_device:
        check_device()
    return _bnn.Float8BlockwiseLinear.from_float(module)


def _register_torchao():
    """Registers Float8BlockwiseConfig with torchao if torchao is
    installed (once). Returns whether it is registered."""
    global _torchao_registered
    if _torchao_registered is not None:
        return _torchao_registered
    _torchao_registered = False
    if "torchao" not in sys.modules and importlib.util.find_spec("torchao") is None:
        return False
    try:
        from torchao.core.config import AOBaseConfig
        from torchao.quantization.transform_module import register_quantize_module_handler
    except Exception as e:  # an incompatible torchao: blockscale.quantize_ still works
        log.warning("blockscale: torchao is installed but its quantize_ registry could not be "
                    "imported (%s); use blockscale.quantize_", e)
        return False
    if not issubclass(Float8BlockwiseConfig, AOBaseConfig):
        AOBaseConfig.register(Float8BlockwiseConfig)
    register_quantize_module_handler(Float8BlockwiseConfig)(_torchao_handler)
    _torchao_registered = True
    return True


# --------------------------------------------------------------------------
# torchtitan
# --------------------------------------------------------------------------

_CONFIG_KEYS = ("filter_fn", "skip_names", "skip_regex", "min_features", "multiple_of",
                "check_device")


def _options(job_config, kwargs):
    """Float8BlockwiseConfig options from a torchtitan JobConfig (its
    ``blockscale`` section if it has one, else ``float8.filter_fqns`` as
    skip_names), a dict, a Float8BlockwiseConfig, or keywords (which win)."""
    opts = {}
    if isinstance(job_config, Float8BlockwiseConfig):
        opts = {k: getattr(job_config, k) for k in _CONFIG_KEYS}
    elif isinstance(job_config, dict):
        opts = dict(job_config)
    elif job_config is not None:
        section = getattr(job_config, "blockscale", None)
        if section is not None:
            src = section if isinstance(section, dict) else vars(section)
            opts = {k: v for k, v in src.items() if k in _CONFIG_KEYS}
        else:
            f8 = getattr(job_config, "float8", None)
            fqns = getattr(f8, "filter_fqns", None) if f8 is not None else None
            if fqns:
                opts["skip_names"] = tuple(fqns)
    opts.update(kwargs)
    unknown = sorted(set(opts) - set(_CONFIG_KEYS))
    if unknown:
        raise TypeError(f"Float8BlockwiseConverter: unknown option(s) {unknown}; known: "
                        f"{list(_CONFIG_KEYS)}")
    return opts


class Float8BlockwiseConverter:
    """A torchtitan model converter (``model.converters = ["blockscale"]``
    after register_torchtitan()): ``convert(model)`` swaps the selected
    linear layers for Float8BlockwiseLinear in place (torchtitan calls it
    on the meta-device model, before parallelization);
    ``post_optimizer_hook`` does nothing (scales are computed per step
    inside the casts).

        Float8BlockwiseConverter(job_config, parallel_dims)   # torchtitan
        Float8BlockwiseConverter(skip_names=["output"])       # by hand
    """

    def __init__(self, job_config=None, parallel_dims=None, *, model_compile_enabled=None,
                 **kwargs):
        self.config = Float8BlockwiseConfig(**_options(job_config, kwargs))
        self.parallel_dims = parallel_dims
        self.report = None

    def convert(self, model: _tnn.Module):
        self.report = quantize_(model, self.config)
        log.info("%s", self.report)
        return model

    def post_optimizer_hook(self, model):
        pass


_torchtitan_registered = False


def register_torchtitan(name: str = "blockscale") -> bool:
    """Registers Float8BlockwiseConverter with torchtitan's
    register_model_converter under `name`. Returns False when torchtitan
    (or that registry) is not importable."""
    global _torchtitan_registered
    if _torchtitan_registered:
        return True
    try:
        from torchtitan.protocols.model_converter import register_model_converter
    except Exception:
        return False
    try:
        register_model_converter(Float8BlockwiseConverter, name)
    except (AssertionError, ValueError):  # registered already
        pass
    _torchtitan_registered = True
    return True


def register_if_imported():
    """At ``import blockscale`` (imports neither torchao nor torchtitan):
    registers with torchao if it is imported already (else a config's
    creation does), and with torchtitan now if its converter registry is
    imported, else when it is."""
    if "torchao" in sys.modules:
        _register_torchao()
    _lazy.call_after_import("torchtitan.protocols.model_converter",
                            lambda module: register_torchtitan())
