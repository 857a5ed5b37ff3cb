# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Loads python/blockscale/_capi.py by path (the package itself imports torch)."""
import ctypes
import importlib.util
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
path = os.path.join(here, "..", "..", "python", "blockscale", "_capi.py")
spec = importlib.util.spec_from_file_location("bs_capi", path)
capi = importlib.util.module_from_spec(spec)
spec.loader.exec_module(capi)

print("version", capi.version())
src = capi.gemm_source(capi.gemm_desc(m=-1, n=2112, k=7168, num_sms=132))
print("source has wgmma template:", "blockscale/gemm_sm90.cuh" in src)
print("geometry", capi.scale_geometry(capi.quant_desc(rows=-1, cols=7168), 4096))
try:
    capi.GemmKernel(capi.gemm_desc(m=-1, n=2112, k=7000))
except capi.BlockscaleError as e:
    print(f"error status {e.status}: {e}")
# A description the planning pipeline refuses (a forced tile no kernel has)
# and one the description's own checks refuse (num_sms) are both bad
# arguments (status 1), not failed compiles (2).
for bad in (dict(force_tile="bm=96"), dict(num_sms=70000)):
    try:
        capi.GemmKernel(capi.gemm_desc(m=-1, n=2112, k=7168, **bad))
    except capi.BlockscaleError as e:
        print(f"{list(bad)[0]} status {e.status}: {str(e).splitlines()[0]}")
# The ctypes structures must match the C header's layout: the init functions
# write sizeof() of the C struct into struct_size.
L = capi.lib()
for cls, init in ((capi.GemmDesc, L.bs_gemm_desc_init), (capi.GemmArgs, L.bs_gemm_args_init),
                  (capi.QuantDesc, L.bs_quant_desc_init), (capi.QuantArgs, L.bs_quant_args_init)):
    obj = cls()
    init(ctypes.byref(obj))
    assert obj.struct_size == ctypes.sizeof(cls), (cls.__name__, obj.struct_size, ctypes.sizeof(cls))
print("struct sizes ok")

# Values a C field or argument would wrap (ctypes truncates silently) or cut
# (a NUL in a string) are refused with the field named.
def refused(what, fn):
    try:
        fn()
    except (ValueError, TypeError) as e:
        print(f"refused {what}: {type(e).__name__}: {e}")
        return
    raise SystemExit(f"accepted {what}")


refused("m", lambda: capi.gemm_desc(m=2**64 + 512, n=2112, k=7168))
refused("num_sms", lambda: capi.gemm_desc(n=2112, k=7168, num_sms=2**32 + 132))
refused("accumulate", lambda: capi.gemm_desc(n=2112, k=7168, accumulate=2**32))
refused("block", lambda: capi.quant_desc(block=(2**32 + 1, 128)))
refused("groups", lambda: capi.grouped_desc(groups=2**64 + 8, n=128, k=128))
refused("float", lambda: capi.gemm_desc(n=2112.0, k=7168))
refused("nul", lambda: capi.gemm_desc(n=2112, k=7168, force_tile="bm=128\0,bn=64"))
refused("rows", lambda: capi.scale_geometry(capi.quant_desc(cols=256), 2**63))
refused("workspace m", lambda: capi.GemmKernel(capi.gemm_desc(n=2112, k=7168)).workspace_size(2**64 + 5))
refused("decimal", lambda: capi.gemm_desc(n=__import__("decimal").Decimal("2112.9"), k=7168))
refused("form", lambda: capi.gemm_desc(form="sideways", n=2112, k=7168))
refused("in_dtype", lambda: capi.quant_desc(in_dtype="fp64", cols=256))
refused("force_tile type", lambda: capi.gemm_desc(n=2112, k=7168, force_tile=128))
print("in range", capi.gemm_desc(m=2**63 - 1, n=2112, k=7168).m, capi.quant_desc(groups=-1).groups)
print("force_tile bytes", capi.gemm_desc(n=2112, k=7168, force_tile=b"bm=128").force_tile,
      capi.gemm_desc(n=2112, k=7168, force_tile="").force_tile)
