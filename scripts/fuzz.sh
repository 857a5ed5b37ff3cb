#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Builds the libFuzzer targets of test/fuzz with clang (ASan + UBSan) into
# ./build-fuzz and runs each for a bounded time, seeded with the lit inputs
# of test/Dialect and test/Target. Findings (crash-*, leak-*, timeout-*) are
# left in build-fuzz/fuzz-findings/<target>/ and fail the script.
#
#   scripts/fuzz.sh              # 60 s per target
#   FUZZ_SECONDS=600 scripts/fuzz.sh
#
# Needs clang with libFuzzer: Debian's clang-14 (with libclang-rt-14-dev,
# which ships libclang_rt.fuzzer; installed here when missing) compiles
# against the MLIR 22 headers and links with the gcc-built LLVM archives;
# set FUZZ_CXX (e.g. clang++-22 with libclang-rt-22-dev) to use another.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
seconds=${FUZZ_SECONDS:-60}
cxx=${FUZZ_CXX:-clang++-14}
cc=${FUZZ_CC:-${cxx/clang++/clang}}
jobs=${BLOCKSCALE_JOBS:-$(nproc)}
scripts/setup.sh
if [ "$cxx" = clang++-14 ]; then
  # Debian's clang-14 and its runtime (libclang_rt.fuzzer, asan, ubsan).
  missing=()
  for p in clang-14 libclang-rt-14-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
  fi
fi
command -v "$cxx" >/dev/null || { echo "fuzz: $cxx not found" >&2; exit 2; }
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
  -DBLOCKSCALE_FUZZ=ON -DBLOCKSCALE_SANITIZE=address,undefined \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
  -DCUDAToolkit_ROOT="${CUDA_HOME:-/usr/local/cuda}" >/dev/null
cmake --build build-fuzz -j"$jobs" --target blockscale-fuzz-jit blockscale-fuzz-shard \
  blockscale-fuzz-capi blockscale-fuzz-cache

# Seeds: every `// -----` piece of the lit inputs, behind a knob byte.
corpus=build-fuzz/fuzz-corpus
rm -rf "$corpus" && mkdir -p "$corpus"
python3 - "$root" "$corpus" <<'PY'
import os, re, sys
root, out = sys.argv[1], sys.argv[2]
n = 0
for sub in ("test/Dialect", "test/Target"):
    for d, _, fs in sorted(os.walk(os.path.join(root, sub))):
        for f in sorted(fs):
            if not f.endswith(".mlir"):
                continue
            text = open(os.path.join(d, f), encoding="utf-8").read()
            for piece in re.split(r"(?m)^// -----\s*$", text):
                if piece.strip():
                    with open(os.path.join(out, "seed%04d" % n), "wb") as g:
                        g.write(bytes([n % 256]) + piece.encode())
                    n += 1
print("fuzz: %d seeds" % n)
PY

source test/sanitizer-suppressions/options.sh
status=0
for t in blockscale-fuzz-jit blockscale-fuzz-shard blockscale-fuzz-capi blockscale-fuzz-cache; do
  findings=build-fuzz/fuzz-findings/$t
  mkdir -p "$findings"
  work=$(mktemp -d)
  # (The MLIR seeds serve the MLIR targets; the others start from nothing.)
  case $t in *-jit|*-shard) cp "$corpus"/* "$work"/ ;; esac
  echo "fuzz: $t for $seconds s"
  if ! build-fuzz/bin/$t "$work" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=4096 -max_len=16384 -print_final_stats=1 \
      -artifact_prefix="$findings/" 2>&1 | tail -n 25; then
    status=1
  fi
  rm -rf "$work"
done
if ls build-fuzz/fuzz-findings/*/* >/dev/null 2>&1; then
  echo "fuzz: findings in build-fuzz/fuzz-findings" >&2
  status=1
fi
exit $status
