# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The grouped GEMMs' Python layer without torch or a GPU: the ctypes bindings
of bs_grouped_gemm_* and the operand checks that grouped_mm,
grouped_mm_masked and their fake implementations share."""
import ctypes
import importlib.util
import os

here = os.path.dirname(os.path.abspath(__file__))


def load(name):
    path = os.path.join(here, "..", "..", "python", "blockscale", name + ".py")
    spec = importlib.util.spec_from_file_location("bs_" + name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


capi = load("_capi")
chk = load("_grouped_check")

L = capi.lib()
for cls, init in ((capi.GroupedGemmDesc, L.bs_grouped_gemm_desc_init),
                  (capi.GroupedGemmArgs, L.bs_grouped_gemm_args_init)):
    obj = cls()
    init(ctypes.byref(obj))
    assert obj.struct_size == ctypes.sizeof(cls), (cls.__name__, obj.struct_size)
print("struct sizes ok")

src = capi.grouped_source(capi.grouped_desc("masked", groups=32, n=4096, k=7168, m_max=20))
print("masked source:", [l for l in src.splitlines() if l.startswith("using BsKernel")][0])
try:
    capi.grouped_source(capi.grouped_desc("contiguous", groups=8, n=4096, k=7000))
except capi.BlockscaleError as e:
    print(f"error status {e.status}: {e}")


def t(shape, dtype, strides=None):
    if strides is None:
        strides, acc = [], 1
        for d in reversed(shape):
            strides.insert(0, acc)
            acc *= d
    return (tuple(shape), tuple(strides), dtype)


G, N, K, M = 8, 4096, 7168, 1000
Kb, Nb = 56, 32
a = t((M, K), "e4m3")
a_s = t((M, Kb), "f32", (1, 1000))
b = t((G, N, K), "e4m3")
b_s = t((G, Nb, Kb), "f32")
offs = t((G,), "i32")
print("contiguous ok:", chk.check_contiguous(a, a_s, b, b_s, offs, "bf16"))


def expect(fn, *args):
    try:
        fn(*args)
        print("accepted (unexpected)")
    except ValueError as e:
        print(e)


expect(chk.check_contiguous, a, a_s, b, b_s, t((G,), "i64"), "bf16")
expect(chk.check_contiguous, a, a_s, b, t((G, Kb, Nb), "f32"), offs, "bf16")
expect(chk.check_contiguous, a, t((M, Kb), "f32"), b, b_s, offs, "bf16")
expect(chk.check_contiguous, a, t((M, Kb), "f32", (1, 1002)), b, b_s, offs, "bf16")
expect(chk.check_contiguous, t((M, 4096), "e4m3"), a_s, b, b_s, offs, "bf16")
expect(chk.check_contiguous, a, a_s, t((G, N, K), "e4m3", (N * K, 1, N)), b_s, offs, "bf16")
expect(chk.check_contiguous, a, a_s, t((G, 100, K), "e4m3"), t((G, 1, Kb), "f32"), offs,
       "bf16")
expect(chk.check_contiguous, a, a_s, b, b_s, offs, "f16")

Mmax = 20
am = t((G, Mmax, K), "e4m3")
am_s = t((G, Mmax, Kb), "f32", (Mmax, 1, G * Mmax))
counts = t((G,), "i32")
print("masked ok:", chk.check_masked(am, am_s, b, b_s, counts, "f32"))
expect(chk.check_masked, am, t((G, Mmax, Kb), "f32"), b, b_s, counts, "f32")
expect(chk.check_masked, t((4, Mmax, K), "e4m3"), am_s, b, b_s, counts, "f32")
expect(chk.check_masked, am, t((G, Mmax, Kb), "f32", (Mmax, 1, 150)), b, b_s, counts, "f32")

# k-grouped weight gradient and its group-aware cast.
for cls, init in ((capi.GroupedQuantDesc, L.bs_grouped_quant_desc_init),
                  (capi.GroupedQuantArgs, L.bs_grouped_quant_args_init)):
    obj = cls()
    init(ctypes.byref(obj))
    assert obj.struct_size == ctypes.sizeof(cls), (cls.__name__, obj.struct_size)
print("k struct sizes ok")
print("capacity:", L.bs_grouped_token_capacity(1000, 8), chk.token_capacity(1000, 8))
src = capi.grouped_source(capi.grouped_desc("k", groups=8, n=7168, m=4096, out_dtype="f32",
                                            accumulate=True))
print("k source:", [l for l in src.splitlines() if l.startswith("using BsKernel")][0])
src = capi.grouped_quant_source(capi.grouped_quant_desc("bf16", "e4m3", cols=7168, groups=8))
print("cast source:", [l for l in src.splitlines() if l.startswith("using BsKernel")][0])
try:
    capi.grouped_source(capi.grouped_desc("k", groups=8, n=7168, m=4096, k=7168))
except capi.BlockscaleError as e:
    print(f"error status {e.status}: {e}")

T, C = 1000, 7168
x = t((T, C), "bf16")
offs_k = t((G,), "i32")
print("cast ok:", chk.check_grouped_tokens(x, offs_k, "e4m3"))
expect(chk.check_grouped_tokens, t((T, 100), "bf16"), offs_k, "e4m3")
expect(chk.check_grouped_tokens, t((T, C), "bf16", (1, T)), offs_k, "e4m3")
expect(chk.check_grouped_tokens, x, t((G,), "i64"), "e4m3")
expect(chk.check_grouped_tokens, t((T, C), "i32"), offs_k, "e4m3")

cap = chk.token_capacity(T, G)
Mk, Nk, nb = 4096, 7168, cap // 128
ak = t((Mk, cap), "e4m3")
ask = t((Mk, nb), "f32", (1, Mk))
bk = t((Nk, cap), "e4m3")
bsk = t((Nk, nb), "f32", (1, Nk))
print("k ok:", chk.check_k(ak, ask, bk, bsk, offs_k, "f32"))
expect(chk.check_k, ak, ask, t((Nk, cap - 128), "e4m3"), bsk, offs_k, "f32")
expect(chk.check_k, t((Mk, 1000), "e4m3"), t((Mk, 8), "f32", (1, Mk)), t((Nk, 1000), "e4m3"),
       t((Nk, 8), "f32", (1, Nk)), offs_k, "f32")
expect(chk.check_k, t((Mk, 512), "e4m3"), t((Mk, 4), "f32", (1, Mk)), t((Nk, 512), "e4m3"),
       t((Nk, 4), "f32", (1, Nk)), offs_k, "f32")
expect(chk.check_k, ak, t((Mk, nb), "f32"), bk, bsk, offs_k, "f32")
expect(chk.check_k, ak, ask, bk, t((Nk, nb), "f32", (1, Nk + 2)), offs_k, "f32")
expect(chk.check_k, ak, ask, bk, t((Nk, nb - 1), "f32", (1, Nk)), offs_k, "f32")
expect(chk.check_k, ak, ask, bk, bsk, t((G, 1), "i32"), "f32")
expect(chk.check_k, t((Mk, cap), "bf16"), ask, bk, bsk, offs_k, "f32")

# Views the kernels cannot read as the strides promise: expanded scales
# (stride 0, which the launch would take as "the default layout"), empty
# dims, sizes past the C API's limits, malformed triples.
print("-- refused views")
expect(chk.check_contiguous, a, t((M, Kb), "f32", (1, 0)), b, b_s, offs, "bf16")
expect(chk.check_contiguous, a, a_s, b, t((G, Nb, Kb), "f32", (0, 0, 0)), offs, "bf16")
expect(chk.check_masked, am, am_s, b, t((G, Nb, Kb), "f32", (0, 0, 0)), counts, "f32")
# A broadcast along some dims is read as given, an empty batch has no scales.
print("broadcast ok:", chk.check_masked(am, am_s, b, t((G, Nb, Kb), "f32", (Nb * Kb, 0, 1)),
                                        counts, "f32")[-1])
print("empty ok:", chk.check_contiguous(t((0, K), "e4m3"), t((0, Kb), "f32", (1, 0)), b, b_s,
                                        offs, "bf16")[:1])
expect(chk.check_masked, am, t((G, Mmax, Kb), "f32", (Mmax, 1, 0)), b, b_s, counts, "f32")
expect(chk.check_k, ak, t((Mk, nb), "f32", (1, 0)), bk, bsk, offs_k, "f32")
expect(chk.check_contiguous, a, a_s, t((G, 0, K), "e4m3"), t((G, 0, Kb), "f32"), offs, "bf16")
expect(chk.check_contiguous, a, a_s, t((65537, 16, K), "e4m3"), t((65537, 1, Kb), "f32"),
       t((65537,), "i32"), "bf16")
expect(chk.check_contiguous, t((2**31, K), "e4m3"), t((2**31, Kb), "f32", (1, 2**31)), b, b_s,
       offs, "bf16")
expect(chk.check_contiguous, a, (a_s[0], (1,), "f32"), b, b_s, offs, "bf16")
expect(chk.check_contiguous, a, a_s, ((G, None, K), (1, 1, 1), "e4m3"), b_s, offs, "bf16")
expect(chk.check_grouped_tokens, t((2**31, 16), "bf16"), offs_k, "e4m3")
