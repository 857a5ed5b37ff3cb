# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# -*- Python -*-
import ctypes
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "BLOCKSCALE"
# The internal shell: portable, and it provides `not`.
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.blockscale_obj_root, "test")
# GPU tests (test/gpu) run on the GPU machine through scripts/gpu-check.sh;
# gtest binaries run through test/Unit's own config.
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "gpu", "Unit"]

llvm_config.with_system_environment(["HOME", "PATH", "CUDA_HOME", "LD_LIBRARY_PATH"])
# The robustness generator's knobs (test/robustness/robustness.py).
llvm_config.with_system_environment(
    ["BLOCKSCALE_ROBUSTNESS_" + k
     for k in ("CASES", "SEED", "TIMEOUT", "JOBS", "KEEP", "STRICT")])
llvm_config.use_default_substitutions()
llvm_config.add_tool_substitutions(
    ["blockscale-opt", "blockscale-translate", "blockscale-gen",
     "blockscale-run-sharded"],
    [config.blockscale_tools_dir, config.llvm_tools_dir])
python = config.python_executable
if "address" in getattr(config, "blockscale_sanitize", ""):
    # A sanitized build (scripts/test-sanitized.sh): Python is not
    # instrumented but loads the instrumented C library, so the ASan runtime
    # is preloaded. LeakSanitizer is off for that process tree only: it would
    # report the interpreter's own allocations (and its children's, e.g. a
    # shell); the library's leaks are checked in BlockScaleCAPITests.
    import subprocess
    libasan = subprocess.run([config.cxx_compiler, "-print-file-name=libasan.so"],
                             capture_output=True, text=True).stdout.strip()
    asan = os.environ.get("ASAN_OPTIONS", "")
    python = "env LD_PRELOAD=%s ASAN_OPTIONS=%s%sdetect_leaks=0 %s" % (
        libasan, asan, ":" if asan else "", python)
# (use_default_substitutions defined %python already: replace it.)
config.substitutions = [(k, v) for k, v in config.substitutions
                        if k != "%python"]
config.substitutions.append(("%python", python))
# Python as a driver of instrumented tools (test/robustness): no preload,
# and the children keep the suite's sanitizer options, leak checks included.
config.substitutions.append(("%pydriver", config.python_executable))
config.substitutions.append(("%blockscale_src", config.blockscale_src_root))
config.substitutions.append(("%blockscale_obj", config.blockscale_obj_root))
config.substitutions.append(("%blockscale_lib",
                             os.path.join(config.blockscale_obj_root, "lib",
                                          "libblockscale_c.so")))

# Every test gets its own kernel cache under the build tree.
config.environment["BLOCKSCALE_CACHE_DIR"] = os.path.join(
    config.test_exec_root, "kernel-cache")


def _loads(names):
    for n in names:
        try:
            ctypes.CDLL(n)
            return True
        except OSError:
            pass
    return False


# NVRTC compiles sm_90a code without a GPU; libcuda is needed to run it.
if _loads(["libnvrtc.so.13", "libnvrtc.so",
           os.path.join(config.cuda_lib_dir, "libnvrtc.so")]):
    config.available_features.add("nvrtc")
if _loads(["libcuda.so.1"]):
    config.available_features.add("cuda-driver")
else:
    config.available_features.add("no-cuda-driver")
