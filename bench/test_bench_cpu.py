#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""CPU checks of the benches' pure-Python parts (no torch, no GPU):
variants and shape parsing, the A/B verdict and tables, the bench_gemm.py
report. Run: python3 bench/test_bench_cpu.py (or under pytest)."""
import contextlib
import io
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import ab  # noqa: E402
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


if __name__ == "__main__":
    tests = [(n, f) for n, f in sorted(globals().items()) if n.startswith("test_") and callable(f)]
    for name, fn in tests:
        fn()
        print(f"ok {name}")
    print(f"{len(tests)} passed")
