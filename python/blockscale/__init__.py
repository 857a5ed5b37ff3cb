"""blockscale: JIT-compiled FP8 blockwise GEMMs and casts for Hopper.

Layouts (logical shapes; strides are the physical order):
  a        (M, K)  float8, row-major              a_scale (M, ceil(K/128)) f32, M-contiguous
  b        (K, N)  float8, column-major (= w.t()) b_scale 128x128: (ceil(K/128), ceil(N/128))
                                                          128x1:   (ceil(K/128), N), N-contiguous
  out      (M, N)  bf16/f32 row-major

``quantize`` returns tensors already in these layouts.
"""
from . import _capi
from ._capi import programmatic_launch
from .ops import quantize, scaled_mm, scaled_mm_accumulate, scale_geometry
from . import sharding as _sharding
from . import nn

_sharding.register()

__all__ = ["quantize", "scaled_mm", "scaled_mm_accumulate", "scale_geometry", "nn",
           "programmatic_launch"]
__version__ = "0.1.0"
