#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The install paths on the CPU machine (scripts/test.sh runs this after the
# test suite), against an already built tree (default ./build):
#   1. cmake --install into a temporary prefix; the files a user needs are there;
#   2. examples/c_host (CMake and pkg-config) and examples/cpp_host built
#      against that prefix and run (without a GPU: generate + NVRTC compile);
#   3. the wheel built from the same build directory (only blockscale_c is
#      built, which is up to date: no second MLIR build), checked (RECORD,
#      metadata, bundled library), installed into a temporary directory and
#      run as `python3 -m blockscale --no-torch` (no torch here).
# Everything goes to a temporary directory that is removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
B=$(cd "${1:-build}" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export BLOCKSCALE_CACHE_DIR=$T/kernel-cache
unset BLOCKSCALE_LIB
say() { echo "test-install: $*"; }

# 1. cmake --install
cmake --install "$B" --prefix "$T/prefix" >/dev/null
for f in include/blockscale-c/blockscale.h include/blockscale/Version.h \
         include/blockscale/Runtime/Runtime.h include/blockscale/Runtime/CudaDriverFunctions.def \
         include/blockscale/Target/Cuda/Kernels/params.h \
         lib/libblockscale_c.so lib/libBlockScaleRuntime.a \
         lib/cmake/blockscale/blockscaleConfig.cmake lib/cmake/blockscale/blockscaleConfigVersion.cmake \
         lib/pkgconfig/blockscale.pc \
         bin/blockscale-opt bin/blockscale-translate bin/blockscale-gen bin/blockscale-run-sharded; do
  [ -e "$T/prefix/$f" ] || { say "cmake --install did not install $f"; exit 1; }
done
"$T/prefix/bin/blockscale-gen" --version | head -1
say "installed into a temporary prefix"

# 2. the examples against the installed package
G=()
command -v ninja >/dev/null && G=(-G Ninja)
for ex in c_host cpp_host; do
  cmake -S "examples/$ex" -B "$T/$ex" "${G[@]}" -DCMAKE_PREFIX_PATH="$T/prefix" >/dev/null
  cmake --build "$T/$ex" >/dev/null
  "$T/$ex/bs_$ex" | tee "$T/$ex.log"
  grep -q "generated and compiled\|-> PASS" "$T/$ex.log"
done
PKG_CONFIG_PATH="$T/prefix/lib/pkgconfig" sh -c 'cc examples/c_host/main.c -o "$1" \
  $(pkg-config --cflags --libs blockscale) -Wl,-rpath,$(pkg-config --variable=libdir blockscale) -ldl -lm' \
  sh "$T/bs_c_host_pc"
"$T/bs_c_host_pc" | tail -1
say "examples built with find_package(blockscale) and pkg-config, and ran"

# 3. the wheel, from the configured build directory
export BLOCKSCALE_BUILD_DIR=$B
if python3 -m pip --version >/dev/null 2>&1; then
  python3 -m pip wheel . -w "$T/dist" --no-build-isolation --no-deps --no-cache-dir -q
else  # no pip: the backend's build_wheel directly
  python3 -c 'import sys; sys.path.insert(0, "python/_build_backend"); import blockscale_build as b; b.build_wheel(sys.argv[1])' "$T/dist"
fi
python3 - "$T/dist" <<'EOF'
# Checks the wheel: name, RECORD, metadata, the bundled library.
import base64, glob, hashlib, os, re, sys, zipfile
(dist,) = sys.argv[1:]
(whl,) = glob.glob(os.path.join(dist, "*.whl"))
version = re.search(r"project\(blockscale VERSION ([0-9.]+)", open("CMakeLists.txt").read()).group(1)
assert os.path.basename(whl) == f"blockscale-{version}-py3-none-linux_x86_64.whl", whl
z = zipfile.ZipFile(whl)
di = f"blockscale-{version}.dist-info"
names = set(z.namelist())
for need in ("blockscale/__init__.py", "blockscale/__main__.py", "blockscale/_capi.py",
             "blockscale/_build_info.py", "blockscale/_lib/libblockscale_c.so",
             f"{di}/METADATA", f"{di}/WHEEL", f"{di}/RECORD", f"{di}/LICENSE"):
    assert need in names, f"wheel lacks {need}"
meta = z.read(f"{di}/METADATA").decode()
for line in (f"Version: {version}", "Requires-Dist: torch>=2.4", "Requires-Python: >=3.9"):
    assert line in meta.splitlines(), f"METADATA lacks {line!r}"
assert "Root-Is-Purelib: false" in z.read(f"{di}/WHEEL").decode()
rows = [r.split(",") for r in z.read(f"{di}/RECORD").decode().splitlines() if r]
assert {r[0] for r in rows} == names, "RECORD does not list exactly the wheel's files"
for path, digest, size in rows:
    if path.endswith("RECORD"):
        continue
    data = z.read(path)
    h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    assert digest == f"sha256={h}" and int(size) == len(data), f"RECORD mismatch for {path}"
lib = z.getinfo("blockscale/_lib/libblockscale_c.so")
assert (lib.external_attr >> 16) & 0o111, "the library is not executable in the wheel"
print(f"wheel ok: {os.path.basename(whl)}, {len(names)} files, "
      f"library {lib.file_size >> 20} MiB")
EOF
# Install it into a directory (pip without an index; torch is not here, so
# no dependencies), else unpack it as an installer would.
if python3 -m pip --version >/dev/null 2>&1; then
  python3 -m pip install --no-deps --no-index --no-cache-dir -q --target "$T/site" "$T"/dist/*.whl
else
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
    "$T"/dist/*.whl "$T/site"
  chmod 755 "$T/site/blockscale/_lib/libblockscale_c.so"
fi
# From elsewhere, so that the source tree's python/ is not on the path.
(cd "$T" && PYTHONPATH="$T/site" python3 -m blockscale --no-torch) | tee "$T/main.log"
grep -q "C library: .*\[$T/site/blockscale/_lib/libblockscale_c.so\]" "$T/main.log"
grep -q "self-check: PASS" "$T/main.log"
(cd "$T" && PYTHONPATH="$T/site" python3 -c 'import blockscale, blockscale._capi as c; print("import ok:", blockscale.__version__, c.version())')
say "wheel built from $B, installed and imported without torch"
say "PASS"
