#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The test command: builds, then runs the CPU suite (lit regression tests and
# GoogleTest binaries), then the install paths (scripts/test-install.sh:
# cmake --install into a temporary prefix, the C and C++ examples built and
# run against it, the wheel built from build/ and imported without torch).
# GPU tests are separate: scripts/gpu-check.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
cmake --build build --target check-blockscale
scripts/test-install.sh build
