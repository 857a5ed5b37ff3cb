#!/usr/bin/env python3
"""Checks blockscale's FFMA recognition (SassPatch.h) against cuobjdump.

Run on the GPU machine (scripts/gpu-check.sh ffma_yield does):
  python3 bench/sass_ffma_check.py plain.cubin patched.cubin

For every instruction of the plain cubin, the opcode test that the cubin
patch uses (low word bits 0-11 == 0x223) must agree with cuobjdump's
mnemonic (FFMA with four register operands). Between the plain and the
patched cubin, only FFMAs may differ, and only in the operand-b reuse flag
(bit 59 of the high word) and the yield hint (bit 45).
"""
import re
import subprocess
import sys

LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?);\s*/\*\s*(0x[0-9a-f]+)\s*\*/")
HI = re.compile(r"^\s*/\*\s*(0x[0-9a-f]+)\s*\*/\s*$")


def disasm(path):
    out = subprocess.run(["cuobjdump", "-sass", path], check=True,
                         capture_output=True, text=True).stdout
    lines = out.splitlines()
    ins = []
    for i, l in enumerate(lines):
        m = LINE.search(l)
        if not m:
            continue
        h = HI.match(lines[i + 1])
        assert h, f"no high word after: {l}"
        ins.append((m.group(2).strip(), int(m.group(3), 16), int(h.group(1), 16)))
    return ins


def is_ffma_rrr(text):
    t = re.sub(r"^@!?U?P\w+\s+", "", text)
    if not re.match(r"FFMA(\.\w+)*\s", t):
        return False
    ops = [o.strip() for o in t.split(None, 1)[1].split(",")]
    return len(ops) == 4 and all(re.fullmatch(r"-?\|?R(\d+|Z)\|?(\.reuse)?", o) for o in ops)


def main():
    plain, patched = disasm(sys.argv[1]), disasm(sys.argv[2])
    bad = 0
    n_ffma = 0
    for text, lo, hi in plain:
        ours = (lo & 0xFFF) == 0x223
        theirs = is_ffma_rrr(text)
        n_ffma += theirs
        if ours != theirs:
            bad += 1
            if bad < 20:
                print(f"MISMATCH opcode test={ours} cuobjdump={theirs}: {text} {lo:#x}")
    print(f"{len(plain)} instructions, {n_ffma} FFMA R,R,R,R by cuobjdump; {bad} disagreements")
    assert len(plain) == len(patched)
    changed = 0
    for (t0, lo0, hi0), (t1, lo1, hi1) in zip(plain, patched):
        if (lo0, hi0) == (lo1, hi1):
            continue
        changed += 1
        ok = (lo0 == lo1 and (hi0 ^ hi1) == (1 << 59 | 1 << 45) and is_ffma_rrr(t0)
              and ".reuse" in t0 and ".reuse" not in t1)
        if not ok:
            bad += 1
            print(f"UNEXPECTED EDIT: {t0} -> {t1} ({hi0:#x} -> {hi1:#x})")
    print(f"{changed} instructions edited; {'PASS' if bad == 0 and changed > 0 else 'FAIL'}")
    sys.exit(0 if bad == 0 and changed > 0 else 1)


if __name__ == "__main__":
    main()
