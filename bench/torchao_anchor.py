#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""torchao's blockwise FP8 training prototype beside blockscale in the
benches (issue 32): its Float8BlockwiseLinear (linear.py: cuBLASLt GEMMs
through F.scaled_mm, Triton casts) and its Triton casts (kernels.py). Never
part of the project: its sources stay outside the tree (.torchao/, ignored).

Looked for in this order, the first found is used:
  $BLOCKSCALE_TORCHAO  a folder holding torchao/ (scripts/gpu-check.sh sets it
                       to where it unpacked .torchao/torchao.tar.xz); 'off'
                       leaves torchao out
  .torchao/src         what scripts/fetch-torchao.sh extracted into this checkout
  an installed torchao

`python3 bench/torchao_anchor.py` says what it found and imports it (exit 1
when torchao was found but does not import). Imports nothing at import time
but the standard library.
"""
import importlib
import importlib.util
import os
import sys
import types

ENV = "BLOCKSCALE_TORCHAO"
REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
LINEAR = "torchao.prototype.blockwise_fp8_training.linear"
KERNELS = "torchao.prototype.blockwise_fp8_training.kernels"

# blockscale.quantize(x, recipe, transpose, layout) -> torchao's Triton cast of
# the same recipe and layout (kernels.py), where it has one.
CASTS = {
    ("1x128", False, "row_major"): "triton_fp8_blockwise_act_quant_lhs",
    ("1x128", True, "row_major"): "triton_fp8_blockwise_act_quant_transposed_lhs",
    ("128x1", False, "col_major"): "triton_fp8_blockwise_act_quant_rhs",
    ("128x128", True, "col_major"): "triton_fp8_blockwise_weight_quant_transposed_rhs",
    ("128x128", False, "col_major"): "triton_fp8_blockwise_weight_quant_rhs",
}


def locate(environ=None, repo=REPO, installed=None):
    """(kind, folder, why): kind 'folder' (put folder first on sys.path),
    'installed' (import as it is) or None (torchao left out; why says why)."""
    environ = os.environ if environ is None else environ
    v = environ.get(ENV, "")
    if v.lower() in ("off", "0", "no", "none"):
        return None, None, f"{ENV}={v}"
    if v:
        if os.path.isfile(os.path.join(v, "torchao", "__init__.py")):
            return "folder", os.path.abspath(v), f"{ENV}={v}"
        return None, None, f"{ENV}={v} holds no torchao/__init__.py"
    src = os.path.join(repo, ".torchao", "src")
    if os.path.isfile(os.path.join(src, "torchao", "__init__.py")):
        return "folder", src, ".torchao/src of the checkout"
    if installed is None:
        installed = importlib.util.find_spec("torchao") is not None
    if installed:
        return "installed", None, "the installed torchao"
    return None, None, "not found (scripts/fetch-torchao.sh, or set " + ENV + ")"


def source_commit(folder):
    """The commit named in folder/SOURCE.txt (written by fetch-torchao.sh), or None."""
    try:
        with open(os.path.join(folder, "SOURCE.txt")) as f:
            for line in f:
                key, _, val = line.strip().partition(" ")
                if key == "commit" and val:
                    return val
    except OSError:
        pass
    return None


def load(verbose=True, environ=None):
    """SimpleNamespace(linear, kernels, where, version) of torchao's modules,
    or None (torchao left out: the reason is printed)."""
    kind, folder, why = locate(environ)
    say = print if verbose else (lambda *a, **k: None)
    if kind is None:
        say(f"torchao: {why}; its columns are left out")
        return None
    if kind == "folder" and folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        lin, kern = importlib.import_module(LINEAR), importlib.import_module(KERNELS)
    except Exception as e:  # noqa: BLE001 (any failure leaves torchao out, said)
        say(f"torchao: found ({why}) but does not import: {type(e).__name__}: {e}; "
            f"its columns are left out")
        return None
    import torchao
    where = os.path.dirname(os.path.dirname(torchao.__file__))
    if kind == "folder" and os.path.abspath(where) != folder:
        say(f"torchao: {torchao.__file__} was imported, not the one in {folder}; left out")
        return None
    version = getattr(torchao, "__commit__", None) or (folder and source_commit(folder)) or \
        getattr(torchao, "__version__", "unknown")
    say(f"torchao: {version} from {where} ({why})")
    return types.SimpleNamespace(linear=lin, kernels=kern, where=where, version=version)


def cast_fn(ao, recipe, transpose, layout):
    """torchao's Triton cast matching blockscale.quantize(x, recipe, transpose,
    layout), as fn(x) -> (q, s), or None where torchao has none."""
    name = CASTS.get((recipe, bool(transpose), layout))
    if ao is None or name is None:
        return None
    fn = getattr(ao.kernels, name)
    return lambda x: fn(x, 128)


if __name__ == "__main__":
    sys.exit(0 if load() is not None or locate()[0] is None else 1)
