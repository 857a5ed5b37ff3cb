#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Robustness generator (issue 31): mutates the valid lit inputs of
test/Dialect/** and test/Target/** and the flags of blockscale's tools, runs
every pass, pipeline and tool on them with a time limit, and fails on any
crash: a signal (return code < 0, or > 128 as a shell reports one), a hang
(the time limit), or a crash report on stderr (an assertion, LLVM's stack
dump, UNREACHABLE, a sanitizer report).

Standard library only. Deterministic: the cases depend on the seed and the
inputs only.

  robustness.py --src <repo> --opt <blockscale-opt> --translate <...>
                --gen <...> --run-sharded <...> --work <dir>

Environment:
  BLOCKSCALE_ROBUSTNESS_CASES    number of cases (default 2500; e.g. 20000 for a long run)
  BLOCKSCALE_ROBUSTNESS_SEED     seed (default 31)
  BLOCKSCALE_ROBUSTNESS_TIMEOUT  seconds per tool run (default 10; doubled
                                 when a sanitizer runtime is configured)
  BLOCKSCALE_ROBUSTNESS_JOBS     parallel runs (default: the CPU count)
  BLOCKSCALE_ROBUSTNESS_KEEP     keep every case's input under --work

Failing cases are written to <work>/failures/<n>/ (input.mlir and cmd.sh, a
reproducer) and listed at the end.
"""

import argparse
import concurrent.futures
import os
import random
import re
import shlex
import subprocess
import sys
import time

# --------------------------------------------------------------------------
# Extreme values
# --------------------------------------------------------------------------

I31 = 2**31
I62 = 2**62
I63 = 2**63
DIMS = ["0", "1", "?", "16", "17", "127", "129", "2147483647", "2147483648",
        "4294967296", "4611686018427387904", "9223372036854775807",
        "99999999999999999999", "-1"]
INTS = [0, 1, 2, 3, -1, -5, -16, 16, 4096, I31 - 1, I31, 2**32 + 4, 2**40,
        I62, I63 - 1, -I63]
ELEMENT_TYPES = ["f8E4M3FN", "f8E5M2", "bf16", "f16", "f32", "i8", "f64",
                 "index"]
RECIPES = ["blk_1x128", "blk_128x128", "blk_128x1", "tensorwise"]
FORMS = ["fwd", "dgrad", "wgrad"]
LAYOUTS = ["row_major", "col_major"]
TILE_KEYS = ["bm", "bn", "bk", "stages", "cluster", "swizzle", "splits",
             "raster", "ksplit"]
GRID_SHAPES = ["0", "1", "2", "3", "?", "2x0", "2x2", "0x2", "1x1x1x1",
               "4611686018427387904", "4611686018427387904x4",
               "2147483648x2147483648", "2097152", "9223372036854775807"]
SPLIT_AXES = ["[[0]]", "[[], [0]]", "[[0], [1]]", "[[0, 1]]", "[[1, 0]]",
              "[[], [], [0]]", "[[5]]", "[[0], [0]]", "[[]]", "[]",
              "[[-1]]", "[[0], [], [], []]"]

# What counts as a crash on stderr.
CRASH_PATTERNS = [
    "Assertion", "Stack dump", "UNREACHABLE", "PLEASE submit a bug report",
    "AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer",
    "runtime error:", "terminate called", "Segmentation fault",
    "Floating point exception", "double free", "stack smashing",
]


def split_chunks(text):
    """The `// -----` pieces of a lit input (as --split-input-file cuts)."""
    return [c for c in re.split(r"(?m)^// -----\s*$", text) if c.strip()]


def load_inputs(src):
    chunks = []
    for sub in ("test/Dialect", "test/Target"):
        root = os.path.join(src, sub)
        for dirpath, _, files in sorted(os.walk(root)):
            for f in sorted(files):
                if f.endswith(".mlir"):
                    with open(os.path.join(dirpath, f), encoding="utf-8") as fh:
                        for c in split_chunks(fh.read()):
                            # Drop RUN/CHECK lines: they are not input.
                            lines = [l for l in c.splitlines()
                                     if not re.match(r"\s*//\s*(RUN|CHECK|[A-Z0-9]+:)", l)]
                            chunks.append((f, "\n".join(lines) + "\n"))
    return chunks


# --------------------------------------------------------------------------
# Mutations of MLIR text
# --------------------------------------------------------------------------

def sub_nth(pattern, text, rng, repl, flags=0):
    """Replaces one random match of `pattern` by repl(match)."""
    ms = list(re.finditer(pattern, text, flags))
    if not ms:
        return None
    m = rng.choice(ms)
    return text[:m.start()] + repl(m) + text[m.end():]


def mut_dim(text, rng):
    # One dimension of one tensor type (everywhere that exact type occurs:
    # signatures and op types stay consistent), or one occurrence only.
    types = sorted(set(re.findall(r"tensor<[0-9?x]+x[a-zA-Z0-9]+>", text)))
    if not types:
        return None
    t = rng.choice(types)
    dims = t[len("tensor<"):-1].split("x")
    i = rng.randrange(len(dims) - 1)
    dims[i] = rng.choice(DIMS)
    new = "tensor<" + "x".join(dims) + ">"
    if rng.random() < 0.7:
        return text.replace(t, new)
    return text.replace(t, new, 1)


def mut_unranked(text, rng):
    types = sorted(set(re.findall(r"tensor<[0-9?x]*f32>", text)))
    if not types:
        return None
    t = rng.choice(types)
    new = rng.choice(["tensor<*xf32>", "tensor<f32>", "tensor<1x1x1xf32>",
                      "tensor<?x?xf32>"])
    return text.replace(t, new)


def mut_element_type(text, rng):
    types = sorted(set(re.findall(r"tensor<[0-9?x]*x([a-zA-Z0-9]+)>", text)))
    if not types:
        return None
    old = rng.choice(types)
    new = rng.choice(ELEMENT_TYPES)
    return re.sub(r"x%s>" % re.escape(old), "x%s>" % new, text,
                  count=0 if rng.random() < 0.6 else 1)


def mut_ld(text, rng):
    key = rng.choice(["lda", "ldb", "ldc"])
    value = rng.choice(INTS)
    attr = "%s = %d : i64" % (key, value)
    if re.search(r"\b%s = -?\d+ : i64" % key, text):
        return re.sub(r"\b%s = -?\d+ : i64" % key, attr, text, count=1)
    return sub_nth(r"form = #blockscale\.form<\w+>", text, rng,
                   lambda m: m.group(0) + ", " + attr)


def mut_align(text, rng):
    value = rng.choice(INTS + [4, 8, 2**30])
    if "align =" in text:
        return sub_nth(r"align = -?\d+", text, rng,
                       lambda m: "align = %d" % value)
    layout = "#blockscale.scale_layout<%s, align = %d>" % (
        rng.choice(LAYOUTS), value)
    key = rng.choice(["a_scale_layout", "b_scale_layout", "scale_layout"])
    return sub_nth(r"recipe = #blockscale\.recipe<\w+>", text, rng,
                   lambda m: m.group(0) + ", %s = %s" % (key, layout))


def random_tile(rng):
    vals = {"bm": rng.choice([64, 128, 256]), "bn": rng.choice([16, 64, 128, 192]),
            "bk": 128, "stages": rng.choice([2, 4, 8]), "cluster": 1,
            "swizzle": 128, "splits": 1, "raster": 8}
    k = rng.choice(TILE_KEYS)
    vals[k] = rng.choice(INTS)
    if rng.random() < 0.3:
        vals["ksplit"] = rng.choice([1, 2, 4, -1, I62])
    return "#blockscale.tile<%s>" % ", ".join(
        "%s = %d" % (key, v) for key, v in vals.items())


def mut_tile(text, rng):
    if "#blockscale.tile<" in text and rng.random() < 0.6:
        key = rng.choice(TILE_KEYS)
        return sub_nth(r"\b%s = -?\d+" % key, text, rng,
                       lambda m: "%s = %d" % (key, rng.choice(INTS)))
    return sub_nth(r"form = #blockscale\.form<\w+>", text, rng,
                   lambda m: m.group(0) + ", tile = " + random_tile(rng))


def mut_swap_enum(text, rng):
    choice = rng.randrange(4)
    if choice == 0:
        return sub_nth(r"recipe<\w+>", text, rng,
                       lambda m: "recipe<%s>" % rng.choice(RECIPES))
    if choice == 1:
        return sub_nth(r"form<\w+>", text, rng,
                       lambda m: "form<%s>" % rng.choice(FORMS))
    if choice == 2:
        return sub_nth(r"layout<\w+>", text, rng,
                       lambda m: "layout<%s>" % rng.choice(LAYOUTS))
    # Swap two attribute values of the same op (a_recipe <-> b_recipe ...).
    return sub_nth(r"a_recipe = (#blockscale\.recipe<\w+>), b_recipe = (#blockscale\.recipe<\w+>)",
                   text, rng, lambda m: "a_recipe = %s, b_recipe = %s" %
                   (m.group(2), m.group(1)))


def mut_transpose(text, rng):
    if ", transpose" in text and rng.random() < 0.5:
        return text.replace(", transpose", "", 1)
    return sub_nth(r"recipe = #blockscale\.recipe<\w+>(?=[,}])", text, rng,
                   lambda m: m.group(0) + ", transpose")


def mut_grid(text, rng):
    if "shard.grid" not in text:
        # Shard the first tensor argument of a function over a new grid.
        m = re.search(r"func\.func @\w+\(%(\w+): (tensor<[^>]+>)", text)
        if not m or "{" not in text[m.end():]:
            return None
        name, ty = m.group(1), m.group(2)
        brace = text.index("{", m.end())
        head, body = text[:brace + 1], text[brace + 1:]
        body = re.sub(r"%" + name + r"(?!\w)", "%rb_x", body)
        ann = ("\n  %%rb_s = shard.sharding @rb split_axes = %s : !shard.sharding\n"
               "  %%rb_x = shard.shard %%%s to %%rb_s annotate_for_users : %s\n"
               % (rng.choice(SPLIT_AXES), name, ty))
        return ("shard.grid @rb(shape = %s)\n" % rng.choice(GRID_SHAPES)
                + head + ann + body)
    choice = rng.randrange(5)
    if choice == 0:
        return sub_nth(r"shape = [0-9x?]+", text, rng,
                       lambda m: "shape = " + rng.choice(GRID_SHAPES))
    if choice == 1:
        return sub_nth(r"split_axes = \[[^:]*?\](?= *(:|halo|sharded))", text,
                       rng, lambda m: "split_axes = " + rng.choice(SPLIT_AXES))
    if choice == 2:
        extra = rng.choice([
            " halo_sizes = [1, 2]", " halo_sizes = [-1, 4]",
            " sharded_dims_offsets = [0, 128, 256]",
            " sharded_dims_offsets = [0, 384, 1024]",
            " sharded_dims_offsets = [0, 0, 0]",
            " sharded_dims_offsets = [0, 9223372036854775807, 5]",
            " sharded_dims_offsets = [0, 3, 8]"])
        return sub_nth(r"split_axes = \[[^:]*?\](?= *:)", text, rng,
                       lambda m: m.group(0) + extra)
    if choice == 3:
        # A second grid, and one sharding moved onto it.
        m = re.search(r"shard\.grid @(\w+)", text)
        text = "shard.grid @other(shape = %s)\n" % rng.choice(GRID_SHAPES) + text
        return sub_nth(r"shard\.sharding @\w+", text, rng,
                       lambda m: "shard.sharding @other")
    # Drop or flip annotate_for_users.
    if " annotate_for_users" in text and rng.random() < 0.5:
        return text.replace(" annotate_for_users", "", 1)
    return sub_nth(r"(shard\.shard %\w+ to %\w+)(?= :)", text, rng,
                   lambda m: m.group(1) + " annotate_for_users")


def mut_garbage(text, rng):
    lines = text.splitlines()
    if not lines:
        return None
    choice = rng.randrange(4)
    i = rng.randrange(len(lines))
    if choice == 0:
        del lines[i]
    elif choice == 1:
        lines.insert(i, lines[rng.randrange(len(lines))])
    elif choice == 2:
        return text[:rng.randrange(len(text) + 1)]
    else:
        line = lines[i]
        if line:
            j = rng.randrange(len(line))
            lines[i] = line[:j] + rng.choice(["}", "{", ">", "<", "%", "?",
                                              "\x00", "\xff", "-", "9" * 30]) + line[j + 1:]
    return "\n".join(lines) + "\n"


MUTATIONS = [(mut_dim, 5), (mut_unranked, 2), (mut_element_type, 2),
             (mut_ld, 3), (mut_align, 2), (mut_tile, 3), (mut_swap_enum, 3),
             (mut_transpose, 1), (mut_grid, 4), (mut_garbage, 2)]


def mutate(text, rng):
    total = sum(w for _, w in MUTATIONS)
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        for _attempt in range(8):
            r = rng.uniform(0, total)
            for fn, w in MUTATIONS:
                r -= w
                if r <= 0:
                    break
            out = fn(text, rng)
            if out is not None:
                text = out
                break
    return text


# --------------------------------------------------------------------------
# Synthesized programs: valid types (scale shapes derived from the sizes)
# with extreme sizes, attributes and shardings, so that cases get past the
# verifier into the passes.
# --------------------------------------------------------------------------

SIZES = [1, 16, 100, 128, 129, 256, 1000, 1024, 1152, 4096, 7168,
         2147483520, 2147483647, 2147483648, 2**32, 2**40, 2**52, 2**61, 2**62]


def cdiv(a, b):
    return -(-a // b)


def size(rng):
    return rng.choice(SIZES) if rng.random() < 0.4 else rng.choice(
        [128, 256, 512, 1024, 2048, 7168])


def dim(v, dynamic):
    return "?" if dynamic else str(v)


def synth_matmul(rng):
    m, n, k = size(rng), size(rng), size(rng)
    form = rng.choice(FORMS)
    wgrad = form == "wgrad"
    dm = rng.random() < 0.25
    dk = rng.random() < 0.05
    out = "f32" if (wgrad or rng.random() < 0.3) else "bf16"
    acc = out == "f32" and rng.random() < 0.3
    fa = rng.choice(["f8E4M3FN", "f8E4M3FN", "f8E5M2"])
    fb = rng.choice(["f8E4M3FN", "f8E4M3FN", "f8E5M2"])
    kb = cdiv(k, 128)
    a = "tensor<%sx%sx%s>" % (dim(m, dm), dim(k, dk), fa)
    as_ = "tensor<%sx%sxf32>" % (dim(m, dm), dim(kb, dk))
    b = "tensor<%sx%dx%s>" % (dim(k, dk), n, fb)
    bs = "tensor<%sx%dxf32>" % (dim(kb, dk), n if wgrad else cdiv(n, 128))
    c = "tensor<%sx%dx%s>" % (dim(m, dm), n, out)
    attrs = ["form = #blockscale.form<%s>" % form,
             "a_recipe = #blockscale.recipe<blk_1x128>",
             "b_recipe = #blockscale.recipe<%s>" % ("blk_128x1" if wgrad else "blk_128x128")]
    if rng.random() < 0.3:
        attrs.append("a_scale_layout = #blockscale.scale_layout<col_major, align = %d>"
                     % rng.choice([4, 4, 8, 1, 2**20, 2**62]))
        attrs.append("b_scale_layout = #blockscale.scale_layout<%s, align = %d>"
                     % ("row_major" if wgrad else rng.choice(LAYOUTS),
                        rng.choice([4, 4, 16, 2**40])))
    for ld in ("lda", "ldb", "ldc"):
        if rng.random() < 0.1:
            attrs.append("%s = %d : i64" % (ld, rng.choice(INTS + [k, n, k + 16])))
    if rng.random() < 0.25:
        attrs.append("tile = " + random_tile(rng))
    args = ["%%a: %s" % a, "%%as: %s" % as_, "%%b: %s" % b, "%%bs: %s" % bs]
    if acc:
        args.append("%%acc: %s" % c)
    accs = " acc(%%acc : %s)" % c if acc else ""
    body = ("  %%c = blockscale.matmul %%a[%%as], %%b[%%bs]%s {%s}\n"
            "      : %s, %s, %s, %s -> %s\n" % (accs, ", ".join(attrs), a, as_, b, bs, c))
    return ["a", "as", "b", "bs"] + (["acc"] if acc else []), args, body, "%c", c


def synth_quantize(rng):
    r, c = size(rng), size(rng)
    recipe = rng.choice(RECIPES)
    transpose = rng.random() < 0.3
    dr = rng.random() < 0.2
    lr, lc = (c, r) if transpose else (r, c)
    dlr, dlc = (False, dr) if transpose else (dr, False)
    it = rng.choice(["bf16", "bf16", "f16", "f32"])
    x = "tensor<%sx%dx%s>" % (dim(r, dr), c, it)
    q = "tensor<%sx%sxf8E4M3FN>" % (dim(lr, dlr), dim(lc, dlc))
    blocks = {"blk_1x128": (1, 128), "blk_128x128": (128, 128),
              "blk_128x1": (128, 1)}
    if recipe == "tensorwise":
        sc = "tensor<f32>"
    else:
        br, bc = blocks[recipe]
        sc = "tensor<%sx%sxf32>" % (dim(cdiv(lr, br), dlr), dim(cdiv(lc, bc), dlc))
    attrs = ["recipe = #blockscale.recipe<%s>" % recipe]
    if transpose:
        attrs.append("transpose")
    if rng.random() < 0.4:
        attrs.append("layout = #blockscale.layout<%s>" % rng.choice(LAYOUTS))
    if recipe != "tensorwise" and rng.random() < 0.3:
        attrs.append("scale_layout = #blockscale.scale_layout<%s, align = %d>"
                     % (rng.choice(LAYOUTS), rng.choice([1, 4, 2**31, 2**62])))
    body = ("  %%c, %%s = blockscale.quantize %%x {%s}\n"
            "      : %s -> %s, %s\n" % (", ".join(attrs), x, q, sc))
    return ["x"], ["%%x: %s" % x], body, "%c", q


def synth_program(rng):
    names, args, body, result, rtype = (
        synth_matmul(rng) if rng.random() < 0.7 else synth_quantize(rng))
    header = ""
    if rng.random() < 0.45:
        shape = rng.choice(["2", "2", "4", "2x2", "3", "8"] + GRID_SHAPES)
        header = "shard.grid @g(shape = %s)\n" % shape
        ann = []
        for i, nm in enumerate(names):
            if rng.random() < 0.5:
                continue
            axes = rng.choice(["[[0]]", "[[], [0]]", "[[0]]", "[[], [1]]",
                               "[[1]]", "[[0], [1]]"] + SPLIT_AXES)
            extra = rng.choice([""] * 6 + [" sharded_dims_offsets = [0, 128, 256]",
                                           " halo_sizes = [1, 1]"])
            ty = args[i].split(": ", 1)[1]
            ann.append("  %%s_%s = shard.sharding @g split_axes = %s%s : !shard.sharding\n"
                       "  %%%s_s = shard.shard %%%s to %%s_%s%s : %s\n"
                       % (nm, axes, extra, nm, nm, nm,
                          rng.choice([" annotate_for_users", ""]), ty))
            body = re.sub(r"%%%s(?![\w])" % nm, "%%%s_s" % nm, body)
        if rng.random() < 0.5:
            ann.append("")
            body += ("  %%s_r = shard.sharding @g split_axes = %s : !shard.sharding\n"
                     "  %%r_s = shard.shard %s to %%s_r : %s\n"
                     % (rng.choice(["[[0]]", "[[], [0]]", "[[]]"]), result, rtype))
            result = "%r_s"
        body = "".join(ann) + body
    return (header + "func.func @f(%s) -> %s {\n%s  return %s : %s\n}\n"
            % (", ".join(args), rtype, body, result, rtype))


# --------------------------------------------------------------------------
# Tool command lines
# --------------------------------------------------------------------------

def force_string(rng):
    if rng.random() < 0.2:
        return rng.choice(["", "bm=", "=", ",,,", "bm=128,,bn=64", "colour=7",
                           "bm=99999999999", "bm=1e3", "bm=0x80", "bm=-0",
                           "bm=128,bm=64", "ksplit", "\u00e9=1", "bm=128 bn=64"])
    keys = rng.sample(TILE_KEYS[:1] + ["bn", "stages", "splits", "raster",
                                       "cluster", "ksplit"], rng.randint(1, 4))
    parts = []
    for k in keys:
        v = rng.choice([rng.choice(INTS), rng.choice([64, 128, 256, 16, 192]),
                        rng.choice([1, 2, 4, 8])])
        parts.append("%s=%d" % (k, v))
    return ",".join(parts)


def select_tiles_options(rng):
    opts = []
    if rng.random() < 0.6:
        opts.append("num-sms=%d" % rng.choice([0, 1, -5, 2, 132, I31, 2**32 + 4, I62]))
    if rng.random() < 0.4:
        opts.append("m-hint=%d" % rng.choice([0, -1, 1, 4096, I31, I62]))
    if rng.random() < 0.3:
        opts.append("smem-bytes=%d" % rng.choice([0, 1, 1000, 232448, I31, I62, -1]))
    if rng.random() < 0.4:
        opts.append("force=%s" % force_string(rng))
    return " ".join(opts)


OPT_PASSES = ["blockscale-fuse-dual-quantize",
              "blockscale-pad-scales", "blockscale-verify-layouts",
              "blockscale-select-tiles", "blockscale-check-shard-alignment",
              "blockscale-check-shardings", "blockscale-jit-pipeline",
              "blockscale-shard-pipeline"]


def opt_args(rng):
    p = rng.choice(OPT_PASSES + ["blockscale-jit-pipeline",
                                 "blockscale-shard-pipeline"])
    if p in ("blockscale-select-tiles", "blockscale-jit-pipeline"):
        o = select_tiles_options(rng)
        return ["--%s=%s" % (p, o)] if o else ["--" + p]
    if p in ("blockscale-check-shard-alignment", "blockscale-shard-pipeline"):
        if rng.random() < 0.5:
            return ["--%s=allow-padding=%d" % (p, rng.randint(0, 1))]
    if p == "blockscale-check-shardings" and rng.random() < 0.5:
        return ["--%s=before-partition=1" % p]
    return ["--" + p]


def gen_args(rng):
    a = []
    if rng.random() < 0.3:
        a += ["--op", rng.choice(["quantize", "quantize", "gemm", "sideways", ""])]
    vals = ["0", "1", "-1", "-2", "16", "128", "7168", "7000", str(I31 - 1),
            str(I31), str(2**32), str(I62), str(I63 - 1), "99999999999999999999",
            "abc", ""]
    for flag in ("--m", "--n", "--k", "--rows", "--cols"):
        if rng.random() < 0.45:
            a += [flag, rng.choice(vals)]
    if rng.random() < 0.3:
        a += ["--num-sms", rng.choice(["0", "1", "-5", "132", str(I31), "x"])]
    if rng.random() < 0.3:
        a += ["--force-tile", force_string(rng)]
    if rng.random() < 0.25:
        a += ["--form", rng.choice(FORMS + ["sideways", ""])]
    if rng.random() < 0.25:
        a += ["--out-dtype", rng.choice(["bf16", "f32", "f16", "f8", ""])]
    if rng.random() < 0.2:
        a += ["--in-dtype", rng.choice(["bf16", "f16", "f32", "i8"])]
    if rng.random() < 0.25:
        a += ["--recipe", rng.choice(["1x128", "128x1", "128x128", "tensorwise",
                                      "1x1", "", "128x128x1"])]
    for flag in ("--accumulate", "--transpose", "--col-major"):
        if rng.random() < 0.15:
            a.append(flag)
    if rng.random() < 0.15:
        a += ["--a-type", rng.choice(["e4m3", "e5m2", "e3m4"])]
    if rng.random() < 0.15:
        a += ["--b-type", rng.choice(["e4m3", "e5m2", "e3m4"])]
    # Never --run (that needs a GPU); never the flags the main checkout
    # removes (--define, --nvrtc-opt, --no-check, --debug-hang, --timeline).
    a += ["--emit", rng.choice(["cuda", "mlir", "spec"])]
    return a


class Case:
    def __init__(self, idx, kind, argv, text=None, pipe=None):
        self.idx, self.kind, self.argv, self.text, self.pipe = (
            idx, kind, argv, text, pipe)


def make_cases(n, seed, chunks, tools):
    rng = random.Random(seed)
    cases = []
    for i in range(n):
        r = rng.random()
        if rng.random() < 0.4:
            base = synth_program(rng)
            text = mutate(base, rng) if rng.random() < 0.3 else base
        else:
            name, base = rng.choice(chunks)
            text = mutate(base, rng) if rng.random() < 0.93 else base
        if r < 0.50:
            cases.append(Case(i, "opt", [tools.opt, "{input}"] + opt_args(rng), text))
        elif r < 0.62:
            # The JIT pipeline, then a translation of what it produced.
            sel = select_tiles_options(rng) if rng.random() < 0.4 else ""
            first = [tools.opt, "{input}",
                     "--blockscale-jit-pipeline" + ("=" + sel if sel else "")]
            emit = "--blockscale-emit-ptx" if rng.random() < 0.04 else "--blockscale-emit-cuda"
            cases.append(Case(i, "opt|translate", first, text,
                              pipe=[tools.translate, emit]))
        elif r < 0.72:
            emit = "--blockscale-emit-ptx" if rng.random() < 0.04 else "--blockscale-emit-cuda"
            cases.append(Case(i, "translate", [tools.translate, "{input}", emit], text))
        elif r < 0.90:
            cases.append(Case(i, "gen", [tools.gen] + gen_args(rng)))
        elif r < 0.95:
            args = [tools.gen, "{input}", "--emit", rng.choice(["cuda", "mlir", "spec"])]
            if rng.random() < 0.4:
                args += ["--num-sms", rng.choice(["0", "1", "-5", "132"])]
            if rng.random() < 0.3:
                args += ["--force-tile", force_string(rng)]
            cases.append(Case(i, "gen-mlir", args, text))
        else:
            args = [tools.run_sharded, "{input}", "--plan-only"]
            if rng.random() < 0.6:
                args += ["--rank=%s" % rng.choice(["0", "1", "3", "4", "-1", str(I31 - 1)])]
            if rng.random() < 0.3:
                args.append("--allow-padding")
            cases.append(Case(i, "run-sharded", args, text))
    return cases


def crash_reason(rc, err, timed_out):
    if timed_out:
        return "hang (time limit)"
    if rc < 0:
        return "signal %d" % -rc
    if rc > 128:
        return "exit code %d (a signal, as a shell reports it)" % rc
    if rc == 86:
        return "sanitizer exit code 86"
    for p in CRASH_PATTERNS:
        if p in err:
            return "stderr has %r" % p
    return None


def run_one(case, work, timeout, keep):
    d = os.path.join(work, "cases", str(case.idx))
    argv = list(case.argv)
    if case.text is not None:
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "input.mlir")
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(case.text)
        argv = [path if a == "{input}" else a for a in argv]
    env = dict(os.environ)
    env.setdefault("BLOCKSCALE_CACHE_DIR", os.path.join(work, "kernel-cache"))
    results = []
    stdin = None
    for step in ([argv] + ([case.pipe] if case.pipe else [])):
        try:
            p = subprocess.run(step, input=stdin, capture_output=True,
                               timeout=timeout, env=env)
            rc, out, err, to = p.returncode, p.stdout, p.stderr, False
        except subprocess.TimeoutExpired as e:
            rc, out, err, to = -9, e.stdout or b"", e.stderr or b"", True
        err_s = err.decode("utf-8", "replace")
        reason = crash_reason(rc, err_s, to)
        results.append((step, rc, reason, err_s))
        if reason or rc != 0:
            break
        stdin = out
    failed = [r for r in results if r[2]]
    if not failed and not keep and case.text is not None:
        try:
            os.remove(os.path.join(d, "input.mlir"))
            os.rmdir(d)
        except OSError:
            pass
    return case, results, failed


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", required=True)
    ap.add_argument("--opt", required=True)
    ap.add_argument("--translate", required=True)
    ap.add_argument("--gen", required=True)
    ap.add_argument("--run-sharded", dest="run_sharded", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--cases", type=int,
                    default=int(os.environ.get("BLOCKSCALE_ROBUSTNESS_CASES", "2500")))
    ap.add_argument("--seed", type=int,
                    default=int(os.environ.get("BLOCKSCALE_ROBUSTNESS_SEED", "31")))
    ap.add_argument("--print-synth", type=int, default=0,
                    help="print this many synthesized programs and exit")
    ap.add_argument("--list", action="store_true",
                    help="print the command lines and exit")
    tools = ap.parse_args()
    sanitized = any(k in os.environ for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS"))
    timeout = float(os.environ.get("BLOCKSCALE_ROBUSTNESS_TIMEOUT",
                                   "20" if sanitized else "10"))
    jobs = int(os.environ.get("BLOCKSCALE_ROBUSTNESS_JOBS", os.cpu_count() or 2))
    keep = bool(os.environ.get("BLOCKSCALE_ROBUSTNESS_KEEP"))

    if tools.print_synth:
        rng = random.Random(tools.seed)
        for _ in range(tools.print_synth):
            print(synth_program(rng) + "// -----")
        return 0
    chunks = load_inputs(tools.src)
    if not chunks:
        print("robustness: no inputs under %s" % tools.src, file=sys.stderr)
        return 2
    cases = make_cases(tools.cases, tools.seed, chunks, tools)
    if tools.list:
        for c in cases:
            print(c.idx, c.kind, " ".join(shlex.quote(a) for a in c.argv),
                  "|", " ".join(c.pipe) if c.pipe else "")
        return 0
    os.makedirs(tools.work, exist_ok=True)
    start = time.time()
    failures, rcs = [], {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for case, results, failed in pool.map(
                lambda c: run_one(c, tools.work, timeout, keep), cases):
            last = results[-1]
            rcs[(case.kind, last[1])] = rcs.get((case.kind, last[1]), 0) + 1
            if failed:
                failures.append((case, failed))
    elapsed = time.time() - start
    summary = ", ".join("%s rc=%d: %d" % (k, rc, n)
                        for (k, rc), n in sorted(rcs.items()))
    print("robustness: %d cases (seed %d, %d jobs, %.0f s limit) in %.1f s; %s"
          % (len(cases), tools.seed, jobs, timeout, elapsed, summary))
    fdir = os.path.join(tools.work, "failures")
    for case, failed in failures:
        step, rc, reason, err = failed[0]
        d = os.path.join(fdir, str(case.idx))
        os.makedirs(d, exist_ok=True)
        cmd = " ".join(shlex.quote(a) for a in step)
        if case.text is not None:
            with open(os.path.join(d, "input.mlir"), "w", encoding="utf-8",
                      errors="surrogateescape") as f:
                f.write(case.text)
            cmd = cmd.replace(os.path.join(tools.work, "cases", str(case.idx),
                                           "input.mlir"),
                              os.path.join(d, "input.mlir"))
        with open(os.path.join(d, "cmd.sh"), "w") as f:
            f.write("#!/bin/sh\n%s\n" % cmd)
        tail = "\n    ".join(err.strip().splitlines()[-6:])
        print("CRASH case %d (%s): %s\n  %s\n    %s" % (case.idx, case.kind,
                                                      reason, cmd, tail))
    if failures:
        print("robustness: %d of %d cases crashed or hung; reproducers in %s"
              % (len(failures), len(cases), fdir))
        return 1
    print("robustness: no crash, no hang, no sanitizer report")
    return 0


if __name__ == "__main__":
    sys.exit(main())
