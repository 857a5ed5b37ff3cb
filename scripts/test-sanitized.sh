#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Builds blockscale with AddressSanitizer + UndefinedBehaviorSanitizer into
# ./build-asan and runs the CPU suite (lit regression tests, the robustness
# generator, GoogleTest binaries) under them. Any sanitizer report fails the
# run. Known false positives from mixing instrumented code with Debian's
# uninstrumented LLVM/MLIR and the CUDA libraries are suppressed, narrowly
# and each with its reason, in test/sanitizer-suppressions/.
#
#   scripts/test-sanitized.sh            # configure, build, run
#   BLOCKSCALE_SANITIZE=address scripts/test-sanitized.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
scripts/setup.sh
sanitize=${BLOCKSCALE_SANITIZE:-address,undefined}
jobs=${BLOCKSCALE_JOBS:-$(nproc)}
start=$(date +%s)
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DBLOCKSCALE_SANITIZE="$sanitize" \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
  -DCUDAToolkit_ROOT="${CUDA_HOME:-/usr/local/cuda}" >/dev/null
cmake --build build-asan -j"$jobs" --target BlockScaleUnitTestsAll \
  blockscale-opt blockscale-translate blockscale-gen blockscale-run-sharded \
  blockscale_c
built=$(date +%s)

supp="$root/test/sanitizer-suppressions"
# shellcheck source=/dev/null
source "$supp/options.sh"
# The robustness generator runs ~4x slower instrumented: 1000 cases.
export BLOCKSCALE_ROBUSTNESS_CASES=${BLOCKSCALE_ROBUSTNESS_CASES:-1000}
echo "test-sanitized: built in $((built - start)) s; running the CPU suite"
cmake --build build-asan --target check-blockscale
echo "test-sanitized: build $((built - start)) s, suite $(($(date +%s) - built)) s"
