# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# -*- Python -*-
# Runs the GoogleTest binaries of test/Unit (C++ runtime, cache, C API).
import os

import lit.formats

config.name = "BLOCKSCALE-Unit"
config.test_format = lit.formats.GoogleTest(".", "Tests")
config.test_source_root = os.path.join(config.blockscale_obj_root, "test", "Unit")
config.test_exec_root = config.test_source_root
config.environment["BLOCKSCALE_CACHE_DIR"] = os.path.join(
    config.test_exec_root, "kernel-cache")
for var in ("HOME", "PATH", "CUDA_HOME", "LD_LIBRARY_PATH", "TMPDIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
