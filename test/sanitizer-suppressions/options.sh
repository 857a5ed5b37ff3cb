# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Sanitizer options of the sanitized CPU suite (scripts/test-sanitized.sh
# sources this file; `source` it by hand before running a sanitized binary).
# Every departure from the defaults is narrow and has its reason here.
supp=${supp:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}

# halt_on_error / exitcode: the first report ends the process with exit code
#   86 (a test failure; the robustness generator counts it too).
# allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons its slabs with
#   __asan_poison_memory_region when the including code is instrumented
#   (LLVM_ADDRESS_SANITIZER_BUILD from llvm/Support/Compiler.h), but the
#   copies of the allocator compiled into Debian's uninstrumented
#   libMLIR*.a never unpoison what they hand out, so MLIRContext
#   construction (Dialect::addType) reports use-after-poison on valid
#   memory. This turns off only manual poisoning (nothing of ours uses it);
#   redzones, use-after-free, leaks and the rest stay on.
export ASAN_OPTIONS="halt_on_error=1:exitcode=86:detect_leaks=1:allow_user_poisoning=0:check_initialization_order=1:suppressions=$supp/asan.supp"
# Leaks: suppressions (lsan.supp) for allocations we do not own.
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0:exitcode=86"
# UBSan: stop at the first report (our code is built with
# -fno-sanitize-recover=undefined too), with a stack.
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=86:suppressions=$supp/ubsan.supp"
