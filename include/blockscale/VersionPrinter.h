//===- VersionPrinter.h - --version of the blockscale tools -----*- C++ -*-===//
//
// `<tool> --version` prints "blockscale <version> (<commit>)" and, after it,
// the version of the LLVM/MLIR it was built with.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_VERSIONPRINTER_H
#define BLOCKSCALE_VERSIONPRINTER_H

#include "blockscale/Version.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

namespace blockscale {
/// Call before the tool parses its command line.
inline void installVersionPrinter() {
  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << BLOCKSCALE_VERSION_STRING << "\n"
       << "  LLVM version " << LLVM_VERSION_STRING << "\n";
  });
}
} // namespace blockscale

#endif
