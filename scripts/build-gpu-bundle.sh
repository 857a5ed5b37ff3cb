#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Builds, on the CPU machine, what the GPU machine runs (it has no LLVM/MLIR)
# and packs it for the device tool's `carry` (64 MiB at most in all).
#
#   scripts/build-gpu-bundle.sh                      this checkout, into build/bin and
#                                                    build/lib/libblockscale_c.so; packed as .gpu/main.tar.xz
#   scripts/build-gpu-bundle.sh --ref REF --out DIR  git REF (a commit, tag or branch) built in a temporary
#                                                    worktree with the same flags; DIR/bin and
#                                                    DIR/lib/libblockscale_c.so, packed as DIR.tar.xz
#   scripts/build-gpu-bundle.sh --ref REF --patch FILE [--patch FILE2 ...] --out DIR
#                                                    the same, with each FILE (a git diff, e.g. one of
#                                                    bench/patches/) applied to REF in order: a kernel
#                                                    variant measured before it lands
#
# DIR is a folder directly in .gpu/ (ignored by git), e.g. .gpu/base; it is
# left only in its archive (tar -xJf DIR.tar.xz unpacks it), so that .gpu
# holds nothing but archives. Carry [".gpu"] (about 7 MB a bundle):
# scripts/gpu-check.sh unpacks every .gpu/*.tar.xz at the repository root
# before it runs anything.
set -euo pipefail
caller=$PWD  # (a --patch path is the caller's)
cd "$(dirname "$0")/.."
ref="" out="" patches=()
while [ $# -gt 0 ]; do
  case $1 in
    --ref) ref=${2:?--ref needs a git ref}; shift 2 ;;
    --out) out=${2:?--out needs a folder}; shift 2 ;;
    --patch) patches+=("${2:?--patch needs a file}"); shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "build-gpu-bundle: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if { [ -n "$ref" ] && [ -z "$out" ]; } || { [ -z "$ref" ] && [ -n "$out" ]; }; then
  echo "build-gpu-bundle: --ref and --out go together" >&2; exit 2
fi
for i in "${!patches[@]}"; do
  f=${patches[$i]}
  [ -n "$ref" ] || { echo "build-gpu-bundle: --patch goes with --ref and --out" >&2; exit 2; }
  case $f in /*) ;; *) f=$caller/$f ;; esac
  [ -f "$f" ] || { echo "build-gpu-bundle: no patch file '${patches[$i]}'" >&2; exit 2; }
  patches[$i]=$f
done

BINS=(blockscale-gen blockscale-opt blockscale-run-sharded blockscale-bench-jit)

build() { # build <source dir> <build dir>: the same flags for every bundle
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir >/dev/null
  cmake --build "$2" --target "${BINS[@]}" blockscale_c -j"$(nproc)"
}

pack() { # pack <archive> <paths relative to the repository root...>
  mkdir -p "$(dirname "$1")"
  tar -cf - "${@:2}" | xz -T0 -6 > "$1.tmp"
  mv "$1.tmp" "$1"
}

if [ -z "$ref" ]; then
  build . build
  pack .gpu/main.tar.xz "${BINS[@]/#/build/bin/}" build/lib/libblockscale_c.so
  du -sh build/bin build/lib/libblockscale_c.so .gpu/main.tar.xz
  exit 0
fi

out=${out%/}
case $out in
  .gpu/*/*|*..*) echo "build-gpu-bundle: --out must be a folder directly in .gpu/, e.g. .gpu/base" >&2; exit 2 ;;
  .gpu/main) echo "build-gpu-bundle: .gpu/main.tar.xz is this checkout's bundle; choose another name" >&2; exit 2 ;;
  .gpu/?*) ;;
  *) echo "build-gpu-bundle: --out must be a folder directly in .gpu/, e.g. .gpu/base" >&2; exit 2 ;;
esac
git check-ignore -q "$out/lib/libblockscale_c.so" || { echo "build-gpu-bundle: .gpu/ is not ignored by git" >&2; exit 2; }
sha=$(git rev-parse --verify "$ref^{commit}")
tmp=$(mktemp -d /tmp/bs-bundle.XXXXXX)
cleanup() {
  git worktree remove --force "$tmp/src" >/dev/null 2>&1 || true
  rm -rf "$tmp"
  git worktree prune
}
trap cleanup EXIT
git worktree add --detach "$tmp/src" "$sha" >/dev/null
applied=""
for f in "${patches[@]}"; do
  git -C "$tmp/src" apply "$f" ||
    { echo "build-gpu-bundle: $f does not apply to $ref${applied:+ after$applied}" >&2; exit 2; }
  applied+=" + $(basename "$f") $(sha256sum < "$f" | cut -c1-12)"
done
build "$tmp/src" "$tmp/build"
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
for b in "${BINS[@]}"; do cp "$tmp/build/bin/$b" "$out/bin/"; done
cp "$tmp/build/lib/libblockscale_c.so" "$out/lib/"
echo "$sha$applied" > "$out/REF"
pack "$out.tar.xz" "$out"
du -sh "$out" "$out.tar.xz"
rm -rf "$out"
echo "build-gpu-bundle: $ref = $sha$applied in $out.tar.xz"
