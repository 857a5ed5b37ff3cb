//===- Version.cpp - blockscale's version string ----------------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "blockscale/VersionPrinter.h"
#include "blockscale/Version.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

const char *blockscale::versionString() { return BLOCKSCALE_VERSION_STRING; }

void blockscale::installVersionPrinter() {
  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << BLOCKSCALE_VERSION_STRING << "\n"
       << "  LLVM version " << LLVM_VERSION_STRING << "\n";
  });
}
