#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Installs the build dependencies from Debian's packages (idempotent) and
# checks for the CUDA 13 toolkit (headers + NVRTC), which the machines here
# carry at /usr/local/cuda.
set -euo pipefail
pkgs=(cmake ninja-build g++ python3 llvm-22-dev libmlir-22-dev mlir-22-tools
      llvm-22-tools libgtest-dev libzstd-dev zlib1g-dev libxml2-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  echo "setup: installing ${missing[*]}"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$CUDA_HOME/include/cuda.h" ] || ! ls "$CUDA_HOME"/lib64/libnvrtc.so* >/dev/null 2>&1; then
  echo "setup: the CUDA 13 toolkit (cuda.h, libnvrtc) was not found under $CUDA_HOME;" \
       "install it or set CUDA_HOME" >&2
  exit 1
fi
