#!/usr/bin/env bash
# Builds, on the CPU machine, what the GPU machine runs: static tools in
# build/bin and the C API library in build/lib (name both in `carry`).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir >/dev/null
cmake --build build --target blockscale-gen blockscale-opt blockscale-run-sharded blockscale_c blockscale-bench-jit -j"$(nproc)"
du -sh build/bin build/lib/libblockscale_c.so
