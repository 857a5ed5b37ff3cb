//===- SassPatch.h - post-compile edits of sm_90a machine code --*- C++ -*-===//
//
// Scheduling-hint edits of the SASS inside a cubin that NVRTC produced. They
// change no instruction's meaning: only the per-instruction control bits that
// tell the warp scheduler whether to stay on a warp (the "yield" hint) and
// whether an operand may be kept in the operand reuse cache.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_RUNTIME_SASSPATCH_H
#define BLOCKSCALE_RUNTIME_SASSPATCH_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace blockscale {

struct FfmaYieldStats {
  int textSections = 0; // .text.* sections walked
  int ffma = 0;         // FFMA R, R, R, R instructions seen
  int runs = 0;         // runs of >= kMinRun consecutive FFMAs
  int changed = 0;      // instructions whose hints were edited
  int yieldWasSet = 0;  // of those, how many had the yield bit set before
};

/// The FP32 promotion of a blockwise-scaled GEMM is a long run of FFMAs
/// (acc += t * scale) in which ptxas keeps the scale in the operand reuse
/// cache and lets the warp run without yielding, so the other consumer
/// warpgroup on the same scheduler cannot issue its wgmmas until the run
/// ends and the tensor cores idle. For each run of at least `kMinRun`
/// FFMAs, the FFMAs in its first `sixteenths`/16 that hold only operand b in
/// the reuse cache get that reuse flag cleared and their yield hint
/// flipped, which lets the scheduler switch warps there. The idea and the
/// bit positions (Volta-style 128-bit encoding: reuse flags in bits
/// 122-125, yield in bit 109) follow DeepGEMM's description of its
/// "FFMA interleaving"; the code here walks the ELF sections itself and
/// needs no disassembler. FFMA R, R, R, R is recognized by its opcode field
/// (bits 0-11 == 0x223), which `scripts/gpu-check.sh sass_ffma` checks
/// against cuobjdump on the GPU machine.
constexpr int kMinRun = 8;
llvm::Expected<FfmaYieldStats> interleaveFfmaYield(std::string &cubin,
                                                   int sixteenths);

/// Instruction-level helpers, exposed for tests.
namespace sass {
constexpr uint64_t kReuseB = 1ull << 59; // high word: operand b reuse flag
constexpr uint64_t kReuseAll = 0xfull << 58;
constexpr uint64_t kYield = 1ull << 45; // high word: yield hint
inline bool isFfmaRRR(uint64_t lo) { return (lo & 0xfff) == 0x223; }
inline unsigned destReg(uint64_t lo) { return (lo >> 16) & 0xff; }
} // namespace sass

} // namespace blockscale

#endif
