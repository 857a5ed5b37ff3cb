//===- VersionPrinter.h - blockscale's version string -----------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Defined in lib/Version (BlockScaleVersion), the one file compiled with the
// generated blockscale/Version.h: a new commit then recompiles only that
// file, and the tools and the C API relink.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_VERSIONPRINTER_H
#define BLOCKSCALE_VERSIONPRINTER_H

namespace blockscale {
/// "blockscale <version> (<git commit>)" (BLOCKSCALE_VERSION_STRING).
const char *versionString();
/// Makes `--version` print versionString() and, after it, the LLVM version.
/// Call before the tool parses its command line.
void installVersionPrinter();
} // namespace blockscale

#endif
