#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The main job: generate the CUDA kernel for a default DeepSeek-V3 shape
# (forward, M=512 N=2112 K=7168), compile it with NVRTC for sm_90a, and, where
# a GPU exists, run it, check it against an f64 host reference and time it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
M=${M:-512} N=${N:-2112} K=${K:-7168}
out=build/main
mkdir -p "$out"
gen=build/bin/blockscale-gen
$gen --m "$M" --n "$N" --k "$K" --emit mlir -o "$out/gemm.mlir"
$gen --m "$M" --n "$N" --k "$K" --emit cuda -o "$out/gemm.cu"
$gen --m "$M" --n "$N" --k "$K" --emit ptx -o "$out/gemm.ptx"
$gen --m "$M" --n "$N" --k "$K" --emit cubin -o "$out/gemm.cubin"
echo "main: generated $out/gemm.mlir, gemm.cu, gemm.ptx, gemm.cubin for fwd ${M}x${N}x${K}"
grep -m1 "blockscale-spec" "$out/gemm.cu"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  $gen --m "$M" --n "$N" --k "$K" --run
else
  echo "main: no GPU on this machine: generated and compiled; skipped the run"
fi
