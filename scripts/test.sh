#!/usr/bin/env bash
# The test command: builds, then runs the CPU suite (lit regression tests and
# GoogleTest binaries). GPU tests are separate: scripts/gpu-check.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
cmake --build build --target check-blockscale
