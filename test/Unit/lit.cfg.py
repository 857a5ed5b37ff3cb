# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# -*- Python -*-
# Runs the GoogleTest binaries of test/Unit (C++ runtime, cache, C API).
import os
import sys

import lit.formats

config.name = "BLOCKSCALE-Unit"
# A sanitized build runs each shard under lsan-tracer-retry.py, which reruns
# it only when LeakSanitizer's tracer crashed at exit (see that file).
run_under = []
if "address" in getattr(config, "blockscale_sanitize", ""):
    run_under = [sys.executable,
                 os.path.join(config.blockscale_src_root, "test", "Unit",
                              "lsan-tracer-retry.py")]
config.test_format = lit.formats.GoogleTest(".", "Tests", run_under=run_under)
config.test_source_root = os.path.join(config.blockscale_obj_root, "test", "Unit")
config.test_exec_root = config.test_source_root
config.environment["BLOCKSCALE_CACHE_DIR"] = os.path.join(
    config.test_exec_root, "kernel-cache")
for var in ("HOME", "PATH", "CUDA_HOME", "LD_LIBRARY_PATH", "TMPDIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
