#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""CPU checks of the benches' pure-Python parts (no torch, no GPU):
variants and shape parsing, the A/B verdict and tables, the bench_gemm.py
report, bench_linear.py's and bench_quant.py's SQNR and goal lines, where
torchao is looked for and what scripts/fetch-torchao.sh extracts. Run:
python3 bench/test_bench_cpu.py (or under pytest)."""
import contextlib
import io
import json
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import ab  # noqa: E402
import fp8_report  # noqa: E402
import torchao_anchor  # noqa: E402
import l2_order_model as l2  # noqa: E402
import profile_pair  # noqa: E402
import results_table as rt  # noqa: E402


def raises(fn, *args, match=""):
    try:
        fn(*args)
    except (ValueError, SystemExit) as e:
        assert match in str(e), f"{match!r} not in {str(e)!r}"
        return str(e)
    raise AssertionError(f"{fn.__name__}{args} did not raise")


def test_variant_lines():
    text = """
# a comment
base lib=.gpu/base/lib/libblockscale_c.so   # trailing comment
new
pairs force=bm=256,bn=128,cluster=2 pdl=off
"""
    vs = ab.parse_variants(text, "f")
    assert [v["name"] for v in vs] == ["base", "new", "pairs"]
    assert vs[0] == {"name": "base", "lib": ".gpu/base/lib/libblockscale_c.so", "force": None,
                     "pdl": True}
    assert vs[1]["lib"] is None and vs[1]["pdl"] is True
    assert vs[2]["force"] == "bm=256,bn=128,cluster=2" and vs[2]["pdl"] is False
    assert ab.describe(vs[2]) == "lib=(package) force=bm=256,bn=128,cluster=2 pdl=off"
    assert ab.parse_variant_line("   # only a comment") is None
    assert ab.parse_variant_line('x lib="/a b/lib.so"')["lib"] == "/a b/lib.so"


def test_variant_errors():
    raises(ab.parse_variants, "a env=BLOCKSCALE_PDL=0", match="unknown key 'env'")
    raises(ab.parse_variants, "a defines=BS_X", match="another build")
    raises(ab.parse_variants, "a pdl=maybe", match="pdl=on or pdl=off")
    raises(ab.parse_variants, "a lib", match="key=value")
    raises(ab.parse_variants, "a lib=", match="expected a value")
    raises(ab.parse_variants, "a pdl=on pdl=off", match="given twice")
    raises(ab.parse_variants, "a\na", match="used twice: a")
    raises(ab.parse_variants, "a/b", match="variant name")
    raises(ab.parse_variants, "# nothing\n\n", match="no variants")
    e = raises(ab.parse_variants, "ok\nbad x=1", "f", match="f:2")
    assert "unknown key 'x'" in e


def test_variant_json():
    vs = ab.parse_variants(json.dumps([{"name": "base", "lib": "b.so"},
                                       {"name": "new", "pdl": False}]), "j")
    assert vs[0]["lib"] == "b.so" and vs[1]["pdl"] is False and vs[1]["lib"] is None
    raises(ab.parse_variants, '[{"lib": "x"}]', match="variant name")
    raises(ab.parse_variants, '[{"name": "a", "env": "X=1"}]', match="unknown key")
    raises(ab.parse_variants, "[1]", match="expected an object")
    raises(ab.parse_variants, "[", match="not valid JSON")


def test_ab_arguments():
    # Errors are reported before torch is imported (none here).
    raises(ab.main, [], match="no variants")
    raises(ab.main, ["--variant", "a foo=1"], match="unknown key 'foo'")
    raises(ab.main, ["--variants", "/nonexistent/file"], match="No such file")
    raises(ab.main, ["--variant", "a", "--variant", "a"], match="used twice")
    raises(ab.main, ["--variant", "a", "--shapes", "12x3"], match="MxNxK")
    raises(ab.main, ["--variant", "a", "--rounds", "0"], match="at least 1")
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("base lib=x.so\nbase\n")
    try:
        raises(ab.main, ["--variants", f.name], match="used twice: base")
    finally:
        os.unlink(f.name)
    assert "torch" not in sys.modules


def test_rebuild_variants_file():
    path = os.path.join(os.path.dirname(__file__), "variants", "rebuild.txt")
    with open(path) as f:
        vs = ab.parse_variants(f.read(), path)
    assert [(v["name"], v["lib"]) for v in vs] == [
        ("base", ".gpu/base/lib/libblockscale_c.so"), ("new", None)]


def test_shapes():
    assert len(rt.parse_shapes("targets")) == 9
    i28 = rt.parse_shapes("issue28")
    assert len(i28) == 11 and i28[-1][:4] == ("fwd", 64, 7168, 2048)
    assert rt.TARGETS[-1][:5] == ("wgrad", 14336, 4096, 16384, "f32")
    assert len(rt.parse_shapes("all")) == len(i28) + len(rt.EXTRA)
    s = rt.parse_shapes("128x7168x16384, wgrad:14336x4096x16384:f32,dgrad:1x2x3,4x5x6:f32")
    assert [x[:5] for x in s] == [("fwd", 128, 7168, 16384, "bf16"),
                                  ("wgrad", 14336, 4096, 16384, "f32"),
                                  ("dgrad", 1, 2, 3, "bf16"), ("fwd", 4, 5, 6, "f32")]
    assert s[0].goal == 800 and s[1].goal == 980 and s[2].goal is None
    for bad in ("", "1x2", "axbxc", "wgrad:1x2x3:f16", "foo:1x2x3", "0x1x1"):
        raises(rt.parse_shapes, bad)
    assert rt.shape_name(s[1]) == "wgrad 14336x4096x16384 f32 out"
    assert rt.shape_name(s[0]) == "fwd 128x7168x16384"


def _row(shape, ours, dg=None, lt=None, **kw):
    """A bench_gemm.py row with times from TFLOP/s figures."""
    f, M, N, K, out, goal = shape
    ms = lambda tf: 2.0 * M * N * K / (tf * 1e12) * 1e3
    r = {"form": f, "M": M, "N": N, "K": K, "out": out, "goal": goal, "ours_ms": ms(ours),
         "ours_relerr": 1.7e-3, "ours_ok": True,
         "ours_kernel": "bs_gemm bm=256 bn=128 stages=3 splits=1 cluster=2 ksplit=1"}
    if dg:
        r["deepgemm_ms"], r["deepgemm_ok"] = ms(dg), True
    if lt:
        r["cublaslt_ms"], r["cublaslt_ok"] = ms(lt), True
    for k, v in kw.items():
        r[k] = ms(v) if k.endswith("_ms") else v
    return r


def test_variants_files_and_patches():
    """Every shipped variants file parses; every patch in bench/patches is
    listed in its README, named by a variants file, and applies to this
    checkout (git apply --check), alone and in the order a variants file
    builds it."""
    here = os.path.dirname(os.path.abspath(__file__))
    vdir, pdir = os.path.join(here, "variants"), os.path.join(here, "patches")
    texts = {}
    for f in sorted(os.listdir(vdir)):
        with open(os.path.join(vdir, f)) as fh:
            texts[f] = fh.read()
        assert ab.parse_variants(texts[f], f), f
    with open(os.path.join(pdir, "README.md")) as fh:
        readme = fh.read()
    patches = sorted(f for f in os.listdir(pdir) if f.endswith(".diff"))
    repo = os.path.dirname(here)
    for f in patches:
        assert f"`{f}`" in readme, f"{f} is not listed in bench/patches/README.md"
        users = [v for v, t in texts.items() if f"bench/patches/{f}" in t]
        assert users, f"no variants file builds {f}"
        p = subprocess.run(["git", "apply", "--check", os.path.join(pdir, f)], cwd=repo,
                           capture_output=True, text=True)
        assert p.returncode == 0, f"{f} does not apply: {p.stderr}"
    for v, t in texts.items():  # patches built together, in the order given
        for line in t.splitlines():
            named = [w for w in line.split() if w.startswith("bench/patches/")]
            if len(named) > 1:
                p = subprocess.run(["git", "apply", "--check"] + named, cwd=repo,
                                   capture_output=True, text=True)
                assert p.returncode == 0, f"{v}: {' + '.join(named)} do not apply: {p.stderr}"


def test_l2_order_model():
    """The L2 model: a problem that fits the cache reads each byte once; the
    column order walks a group of few row units M first, and changes
    nothing for a group of more row units than the band width; the
    straddling waves of masked 6 x 1024 read B again in band order."""
    fits = l2.ratio("masked", 2, 256, 1536, 1024, 128, 192, 2, "band", 25)
    assert abs(fits - 1.0) < 1e-9, fits
    assert l2.unit_order(3, 4, "column", 8)[:4] == [(0, 0), (1, 0), (2, 0), (0, 1)]
    assert l2.unit_order(3, 4, "band", 2)[:4] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert l2.unit_order(9, 4, "column", 8) == l2.unit_order(9, 4, "band", 8)
    band = l2.ratio("masked", 6, 1024, 4096, 4096, 128, 192, 2, "band", 25)
    column = l2.ratio("masked", 6, 1024, 4096, 4096, 128, 192, 2, "column", 25)
    assert band > 1.3 and column < 1.05, (band, column)
    with contextlib.redirect_stdout(io.StringIO()) as out:
        l2.main(["--case", "masked:2:256:1536:1024:128:192:2", "--l2-mb", "25", "40"])
    assert out.getvalue().splitlines()[-1] == \
        "| masked 2 x 256, N 1536, K 1024 | 128 x 192, cluster 2 | 1.00 / 1.00 | 1.00 / 1.00 |", \
        out.getvalue()
    with contextlib.redirect_stderr(io.StringIO()) as err:
        raises(l2.main, ["--case", "dense:1:2:3"])
    assert "expected --case kind:G:rows:N:K:bm:bn:cluster but got 'dense:1:2:3'" in err.getvalue()


def test_report():
    rows = [_row(s, 1100, dg=1000, lt=880, ours_foreign_ms=1000, deepgemm_foreign_ms=1000,
                 cublaslt_foreign_ms=800, ours_nopdl_ms=1050)
            for s in rt.TARGETS]
    rows[-1]["deepgemm_note"] = "f32 +="
    rows.append(_row(rt.ISSUE28[-1], 200, dg=300, lt=200))
    table = rt.markdown_table(rows)
    lines = table.splitlines()
    assert lines[-2] == "geomean vs DeepGEMM: 1.100", lines[-2]
    assert lines[-1] == "geomean vs cuBLASLt: 1.250", lines[-1]
    assert "(after a foreign kernel: geomean vs DeepGEMM 1.000 over 9, vs cuBLASLt 1.250 over 9)" in lines
    assert any("| wgrad | 14336 | 4096 | 16384 | f32 | 1100 | 1000 (f32 +=) | 880 |" in l for l in lines)
    assert "256, 128, 3, 1; cluster 2" in table
    assert "| **1.10** | **1.25** |" in table and "| 0.67 | **1.00** |" in table
    n = len(lines[0].split("|"))
    assert all(len(l.split("|")) == n for l in lines[1:len(rows) + 2]), "ragged table"
    # Without DeepGEMM, and a failed row: no fake numbers.
    rows2 = [_row(s, 1100, lt=880) for s in rt.TARGETS[:3]]
    rows2[0]["ours_ok"], rows2[0]["ours_relerr"] = False, float("nan")
    lines = rt.markdown_table(rows2).splitlines()
    assert lines[-2] == "geomean vs DeepGEMM: not measured"
    assert lines[-1] == "geomean vs cuBLASLt: 1.250 (over 3 of the 9 targets)"
    assert "WRONG" in rt.row_line(rows2[0]) and "DeepGEMM — |" in rt.row_line(rows2[0])


def test_results_table_cli():
    rows = [_row(s, 1000, dg=1000, lt=1000) for s in rt.TARGETS]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"rows": rows}, f)
    try:
        import io
        import contextlib
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rt.main(["results_table.py", f.name])
        assert buf.getvalue().rstrip().endswith(
            "geomean vs DeepGEMM: 1.000\ngeomean vs cuBLASLt: 1.000")
    finally:
        os.unlink(f.name)


def test_ab_verdict_and_tables():
    mnk = (4096, 4096, 4096)
    res1 = {"base": {"ms": [1.00, 1.02], "MNK": mnk, "check": "PASS"},
            "new": {"ms": [0.99, 1.01], "MNK": mnk, "check": "PASS"}}
    res2 = {"base": {"ms": [1.00, 1.00], "MNK": mnk, "check": "PASS"},
            "new": {"ms": [1.05, 1.04], "MNK": mnk, "check": "PASS"}}
    res3 = {"base": {"ms": [1.00], "MNK": mnk, "check": "PASS"},
            "new": {"error": "tile refused", "ms": [], "MNK": mnk}}
    order = ["base", "new"]
    r = ab.ratios(res1, "base")
    assert abs(r["new"]["best"] - 1.0 / 0.99) < 1e-12 and r["base"]["best"] == 1.0
    assert [round(x, 4) for x in r["new"]["rounds"]] == [round(1 / 0.99, 4), round(1.02 / 1.01, 4)]
    ok, lines = ab.verdict([("s1", res1)], order, 0.02)
    assert ok and "every shape within ±2.0 %" in lines[-1]
    ok, lines = ab.verdict([("s1", res1), ("s2", res2), ("s3", res3)], order, 0.02)
    assert not ok
    assert "s2: 0.962" in lines[-1] and "s3: not timed" in lines[-1], lines
    assert lines[0].startswith("new / base: geomean") and "over 2 shapes" in lines[0]
    assert ab.verdict([("s1", res1)], ["base"], 0.02) == (True, ["(one variant: nothing to compare)"])
    fmt = lambda rr, ms: f"{ab.tflops_fmt(rr, ms):.0f}"
    block = ab.shape_block("fwd 4096x4096x4096", res3, order, "TFLOP/s", fmt)
    assert block[0] == "fwd 4096x4096x4096" and "ERROR tile refused" in block[2]
    table = ab.summary_table([("s1", res1), ("s3", res3)], order, fmt)
    assert table[0] == "| shape | base | new | new / base |"
    assert table[2] == "| s1 | 137 | 139 | 1.010 |", table[2]
    assert table[3] == "| s3 | 137 | — | — |", table[3]
    cast = {"ms": [0.5, 0.4], "copy_ms": [0.45, 0.36], "bytes": 3e9, "copy_bytes": 4e9}
    assert ab.gbs_fmt(cast, 0.4) == " 7500 (67.5 %)" and ab.gbs_fmt(cast, 0.3) == "—"


NCU_HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
              '"Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit",'
              '"Metric Value"')


def ncu_csv(rows):
    """An `ncu --csv --metrics gpu__time_duration.sum` log of (kernel, unit, value) launches."""
    lines = ["==PROF== Connected to process 1", NCU_HEADER]
    for i, (k, unit, v) in enumerate(rows):
        lines.append(f'"{i}","1","python3","h","{k}","1","7","(384, 1, 1)","(132, 1, 1)","0","9.0",'
                     f'"Command line profiler metrics","gpu__time_duration.sum","{unit}","{v}"')
    f = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False)
    f.write("\n".join(lines) + "\n")
    f.close()
    return f.name


def test_profile_durations():
    bs, dg = "bs_gemm_fwd_e4m3_bf16_bm256_bn128_s3", "void sm90_fp8_gemm_1d2d_impl<0u>"
    base = ncu_csv([(bs, "usecond", "850"), (bs, "usecond", "852"), (bs, "usecond", "900"),
                    ("transpose_sf", "usecond", "3"),  # not a GEMM: not counted
                    (dg, "usecond", "750"), (dg, "msecond", "0.7505"), (dg, "usecond", "751"),
                    (bs, "ns", "1,700,000"), (bs, "usecond", "1,702"), (bs, "usecond", "1,701"),
                    (dg, "us", "1500"), (dg, "us", "1,500"), (dg, "nsecond", "1500000")])
    d = profile_pair.durations(base, 3, 2)
    assert d["blockscale"] == [852.0, 1701.0] and len(d) == 2, d
    assert abs(d["DeepGEMM"][0] - 750.5) < 1e-9 and d["DeepGEMM"][1] == 1500.0, d
    raises(profile_pair.durations, base, 3, 3, match="6 blockscale kernels, expected 3 x 3 shapes")
    new = ncu_csv([(bs, "usecond", "800")] * 3 + [(bs, "usecond", "1600")] * 3)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        profile_pair.summarize("4096x7168x16384,16384x14336x4096", 3, [f"base={base}", f"v1={new}"])
    lines = out.getvalue().splitlines()
    assert lines[0] == ("| shape | base (us) | DeepGEMM (us) | v1 (us) | DeepGEMM vs base | v1 vs base |"), lines[0]
    assert lines[2] == "| fwd 4096x7168x16384 | 852.0 | 750.5 | 800.0 | 1.135 | 1.065 |", lines[2]
    assert lines[3].endswith("| 1.134 | 1.063 |"), lines[3]
    for p in (base, new):
        os.unlink(p)


def test_fp8_report_shapes_and_db():
    assert fp8_report.parse_shapes("default") == fp8_report.SHAPES
    assert (16384, 4096, 14336) in fp8_report.SHAPES and (8192, 7168, 2048) in fp8_report.SHAPES
    assert fp8_report.parse_shapes(" 8192x2048x5632, 16x128x256") == [(8192, 2048, 5632), (16, 128, 256)]
    for bad in ("", "1x2", "8192x2048x100", "0x128x128", "ax128x128"):
        raises(fp8_report.parse_shapes, bad)
    assert fp8_report.db(100.0, 1.0) == 20.0
    assert abs(fp8_report.db(1.0, 10 ** -2.88) - 28.8) < 1e-9
    assert fp8_report.db(1.0, 0.0) == math.inf
    assert fp8_report.db(0.0, 1.0) == -math.inf and fp8_report.db(1.0, math.nan) == -math.inf


def _lrow(T, K, N, ours, bf16, lt, ao=None, ok=True):
    r = {"T": T, "K": K, "N": N, "blockscale_graph_ms": ours, "bf16_graph_ms": bf16,
         "cublaslt_fp8_graph_ms": lt, "blockscale_ok": ok, "blockscale_ms": 2 * ours}
    if ao is not None:
        r["torchao_graph_ms"] = ao
    return r


def test_linear_goals():
    rows = [_lrow(16384, 4096, 4096, 1.0, 1.5, 1.2, ao=1.12),
            _lrow(16384, 4096, 14336, 1.0, 1.46, 1.2, ao=1.11),
            _lrow(8192, 7168, 2048, 1.0, 1.2, 1.0, ao=0.95)]
    assert fp8_report.fp8_baseline(rows) == "torchao"
    ok, lines = fp8_report.goal_lines(rows)
    assert not ok
    assert lines[0].startswith("goal blockscale >= 1.10x torchao on 4096/14336 layers: MET (worst 1.11x"), lines
    assert "over 2 layer(s)" in lines[0]
    assert lines[1].startswith("goal blockscale >= 1.45x bf16 on 4096/14336 layers: MET (worst 1.46x")
    assert lines[2].startswith("goal blockscale >= 1.00x torchao on every layer: MISSED (worst 0.95x "
                               "at T=8192 7168->2048"), lines[2]
    rows[2]["torchao_graph_ms"] = 1.0
    assert fp8_report.goal_lines(rows)[0]
    rows[1]["blockscale_ok"] = False  # a WRONG output is never a speedup
    ok, lines = fp8_report.goal_lines(rows)
    assert not ok and "MISSED (worst 0.00x at T=16384 4096->14336" in lines[0], lines
    # Without torchao: the recipe on cuBLASLt, said so.
    rows = [_lrow(16384, 4096, 4096, 1.0, 1.5, 1.2)]
    assert fp8_report.fp8_baseline(rows) == "cublaslt_fp8"
    ok, lines = fp8_report.goal_lines(rows)
    assert ok and "1.10x the recipe on cuBLASLt (torchao not measured)" in lines[0], lines
    ok, lines = fp8_report.goal_lines([_lrow(8192, 2048, 2048, 1.0, 1.5, 1.2)])
    assert not ok and lines[0].endswith("4096/14336 layers: not measured"), lines
    ok, lines = fp8_report.goal_lines(rows, graph=False)  # eager columns: only blockscale's
    assert not ok and all(l.endswith("not measured") for l in lines), lines


def test_cast_goals():
    rows = [{"what": "a", "rows": 8, "cols": 128, "frac": 0.96, "vs_torchao": 1.05},
            {"what": "b", "rows": 16, "cols": 256, "frac": 0.93, "vs_torchao": 0.98},
            {"what": "c", "rows": 32, "cols": 512, "frac": 0.97}]
    lines = fp8_report.cast_goal_lines(rows)
    assert lines == ["goal every cast >= torchao's: MISSED (worst 0.98x, b 16x256; 1 of 2 slower)",
                     "goal every cast >= 95 % of the copy: MISSED (worst 93.0 %, b 16x256; 1 of 3 below)"], lines
    for r in rows:
        r.pop("vs_torchao", None)
        r["frac"] = 0.951
    lines = fp8_report.cast_goal_lines(rows)
    assert lines[0].endswith("not measured") and lines[1].startswith(
        "goal every cast >= 95 % of the copy: MET (worst 95.1 %"), lines
    assert fp8_report.cast_goal_lines([]) == [
        "goal every cast >= torchao's: not measured",
        "goal every cast >= 95 % of the copy: not measured"]


def test_torchao_locate():
    with tempfile.TemporaryDirectory() as d:
        repo, tree = os.path.join(d, "repo"), os.path.join(d, "tree")
        os.makedirs(os.path.join(tree, "torchao"))
        os.makedirs(repo)
        env = torchao_anchor.ENV
        loc = torchao_anchor.locate
        assert loc({env: "off"}, repo, installed=True)[0] is None
        assert loc({}, repo, installed=False)[0] is None
        assert loc({}, repo, installed=True)[:2] == ("installed", None)
        kind, _, why = loc({env: tree}, repo, installed=True)
        assert kind is None and "no torchao/__init__.py" in why
        open(os.path.join(tree, "torchao", "__init__.py"), "w").close()
        assert loc({env: tree}, repo, installed=False)[:2] == ("folder", os.path.abspath(tree))
        src = os.path.join(repo, ".torchao", "src")
        os.makedirs(os.path.join(src, "torchao"))
        open(os.path.join(src, "torchao", "__init__.py"), "w").close()
        assert loc({}, repo, installed=True)[:2] == ("folder", src)
        assert loc({env: tree}, repo)[1] == os.path.abspath(tree)  # the variable first
        assert torchao_anchor.source_commit(src) is None
        with open(os.path.join(src, "SOURCE.txt"), "w") as f:
            f.write("repository pytorch/ao (x)\ncommit 0123abc\ndate 2026-01-01\n")
        assert torchao_anchor.source_commit(src) == "0123abc"
    assert torchao_anchor.cast_fn(None, "1x128", False, "row_major") is None
    assert set(torchao_anchor.CASTS) == {("1x128", False, "row_major"), ("1x128", True, "row_major"),
                                         ("128x1", False, "col_major"), ("128x128", True, "col_major"),
                                         ("128x128", False, "col_major")}
    assert "torch" not in sys.modules


FAKE_AO = {  # a pytorch/ao-like tree: what linear.py and kernels.py need, and more
    "LICENSE": "BSD\n",
    "torchao/__init__.py": "raise ImportError('the real __init__ needs the C++ ops')\n",
    "torchao/utils.py": "import functools\nUTIL = 1\n",
    "torchao/other.py": "raise ImportError('not needed')\n",
    "torchao/float8/__init__.py": "raise ImportError('heavy')\n",
    "torchao/float8/config.py": "from torchao.utils import UTIL\ne4m3_dtype = 'e4m3'\n",
    "torchao/core/__init__.py": "",
    "torchao/core/config.py": "class AOBaseConfig:\n    pass\n",
    "torchao/prototype/__init__.py": "raise ImportError('heavy')\n",
    "torchao/prototype/blockwise_fp8_training/__init__.py": "",
    "torchao/prototype/blockwise_fp8_training/kernels.py":
        "from torchao.float8.config import e4m3_dtype\n"
        "try:\n    from torchao.missing import x\nexcept ImportError:\n    x = None\n"
        "def lazy():\n    import torchao.other\n",
    "torchao/prototype/blockwise_fp8_training/linear.py":
        "from torchao.core import config\nfrom .kernels import e4m3_dtype\n"
        "class Float8BlockwiseLinear(config.AOBaseConfig):\n    import torchao.utils as u\n",
}


def _fake_ao_repo(d, files):
    git = lambda *a: subprocess.run(["git", "-C", d, *a], check=True, capture_output=True,
                                    text=True).stdout.strip()
    os.makedirs(d)
    git("init", "-q")
    for path, text in files.items():
        os.makedirs(os.path.join(d, os.path.dirname(path)), exist_ok=True)
        with open(os.path.join(d, path), "w") as f:
            f.write(text)
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "fake ao")
    return git("rev-parse", "HEAD")


def test_fetch_torchao():
    script = os.path.join(os.path.dirname(__file__), "..", "scripts", "fetch-torchao.sh")
    with tempfile.TemporaryDirectory() as d:
        src, out = os.path.join(d, "ao"), os.path.join(d, "out")
        sha = _fake_ao_repo(src, FAKE_AO)
        p = subprocess.run(["bash", script, src, "--out", out], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        got = sorted(os.path.relpath(os.path.join(r, f), os.path.join(out, "src"))
                     for r, _, fs in os.walk(os.path.join(out, "src")) for f in fs)
        pkgs = ["torchao/__init__.py", "torchao/core/__init__.py", "torchao/float8/__init__.py",
                "torchao/prototype/__init__.py", "torchao/prototype/blockwise_fp8_training/__init__.py"]
        assert got == sorted(["LICENSE", "SOURCE.txt", "torchao/utils.py", "torchao/float8/config.py",
                              "torchao/core/config.py",
                              "torchao/prototype/blockwise_fp8_training/kernels.py",
                              "torchao/prototype/blockwise_fp8_training/linear.py"] + pkgs), got
        assert os.path.getsize(os.path.join(out, "torchao.tar.xz")) > 0
        assert torchao_anchor.source_commit(os.path.join(out, "src")) == sha
        # The subset imports (stub __init__s) from the folder and from the archive.
        tree = os.path.join(d, "unpacked")
        os.makedirs(tree)
        subprocess.run(["tar", "-xJf", os.path.join(out, "torchao.tar.xz"), "-C", tree], check=True)
        for folder in (os.path.join(out, "src"), tree):
            code = ("import sys; sys.path.insert(0, sys.argv[1]); import torchao; "
                    "import torchao.prototype.blockwise_fp8_training.linear as l; "
                    "print(torchao.__commit__, l.Float8BlockwiseLinear.__name__)")
            p = subprocess.run([sys.executable, "-c", code, folder], capture_output=True, text=True)
            assert p.returncode == 0 and p.stdout.split() == [sha, "Float8BlockwiseLinear"], p.stderr
        # A module that needs a package __init__'s names cannot be served by a stub.
        bad = dict(FAKE_AO)
        bad["torchao/core/config.py"] = "from torchao.float8 import e4m3\n"
        src2 = os.path.join(d, "ao2")
        _fake_ao_repo(src2, bad)
        p = subprocess.run(["bash", script, src2, "--out", os.path.join(d, "out2")],
                           capture_output=True, text=True)
        assert p.returncode != 0 and "torchao.float8: a package's __init__ is needed" in p.stderr, p.stderr


if __name__ == "__main__":
    tests = [(n, f) for n, f in sorted(globals().items()) if n.startswith("test_") and callable(f)]
    for name, fn in tests:
        fn()
        print(f"ok {name}")
    print(f"{len(tests)} passed")
