# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""blockscale: JIT-compiled FP8 blockwise GEMMs and casts for Hopper.

Layouts (logical shapes; strides are the physical order):
  a        (M, K)  float8, row-major              a_scale (M, ceil(K/128)) f32, M-contiguous
  b        (K, N)  float8, column-major (= w.t()) b_scale 128x128: (ceil(K/128), ceil(N/128))
                                                          128x1:   (ceil(K/128), N), N-contiguous
  out      (M, N)  bf16/f32 row-major

``quantize`` returns tensors already in these layouts; ``quantize_dual``
returns both layouts of one tensor (forward and backward operands) from one
read of it. The mixture-of-experts grouped GEMMs (``grouped_mm``,
``grouped_mm_masked``, and the k-grouped weight gradient ``grouped_mm_k``
with its cast ``quantize_grouped_tokens``) are in
``blockscale.grouped``.

Without PyTorch only the C API layer (``blockscale._capi``) and
``python -m blockscale --no-torch`` work; the torch APIs then raise an
ImportError that says so.
"""
from . import _capi
from ._capi import programmatic_launch
from ._device import UnsupportedGPUError
from ._version import __version__

_TORCH_API = ["quantize", "quantize_dual", "scaled_mm", "scaled_mm_accumulate", "scale_geometry", "nn",
              "grouped_mm", "grouped_mm_masked", "quantize_grouped_weight",
              "quantize_grouped_weight_dual", "quantize_grouped_activation_masked", "grouped_mm_k",
              "grouped_mm_k_accumulate", "quantize_grouped_tokens", "grouped_expert_linear",
              "Float8BlockwiseInferenceLinear", "load_fp8_checkpoint",
              "Float8BlockwiseConfig", "Float8BlockwiseConverter", "quantize_", "dry_run"]

try:
    import torch as _torch
    _torch_error = None
except ImportError as e:  # the C API and the CLI work without torch
    _torch = None
    _torch_error = e

if _torch is not None:
    from .ops import quantize, quantize_dual, scaled_mm, scaled_mm_accumulate, scale_geometry
    from .grouped import (grouped_mm, grouped_mm_masked, quantize_grouped_weight,
                          quantize_grouped_weight_dual, quantize_grouped_activation_masked, grouped_mm_k,
                          grouped_mm_k_accumulate, quantize_grouped_tokens)
    from .moe import grouped_expert_linear
    from . import sharding as _sharding
    from . import nn
    from .inference import Float8BlockwiseInferenceLinear, load_fp8_checkpoint
    from .integrations import (Float8BlockwiseConfig, Float8BlockwiseConverter, quantize_,
                               dry_run)
    from . import integrations as _integrations

    _sharding.register()
    _integrations.register_if_imported()
else:
    def __getattr__(name):
        if name in _TORCH_API:
            raise ImportError(f"blockscale.{name} needs PyTorch (torch>=2.4), which could not "
                              f"be imported: {_torch_error}")
        raise AttributeError(f"module 'blockscale' has no attribute {name!r}")

__all__ = _TORCH_API + ["programmatic_launch", "UnsupportedGPUError", "__version__"]
