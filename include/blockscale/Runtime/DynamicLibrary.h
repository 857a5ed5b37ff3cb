//===- DynamicLibrary.h - dlopen, candidates, symbol checks -----*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// libcuda, NVRTC and NCCL are all opened at run time, so that everything but
// running kernels (and collectives) works on a machine without them. This is
// the one place that tries the candidate names and collects the symbols a
// library lacks.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_RUNTIME_DYNAMICLIBRARY_H
#define BLOCKSCALE_RUNTIME_DYNAMICLIBRARY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace blockscale {

class DynamicLibrary {
public:
  /// dlopens the first of `candidates` that loads (RTLD_NOW | RTLD_LOCAL).
  /// Returns false and leaves dlerror()'s text of the last attempt in
  /// lastError() when none does.
  bool open(llvm::ArrayRef<std::string> candidates);
  const std::string &lastError() const { return dlError; }

  /// Resolves `name`; when it is absent, records it for missing() and
  /// returns null.
  void *symbol(llvm::StringRef name);
  /// The same, trying `fallback` before recording `name` as missing.
  void *symbol(llvm::StringRef name, llvm::StringRef fallback);
  template <class F> void load(F *&slot, llvm::StringRef name) {
    slot = reinterpret_cast<F *>(symbol(name));
  }

  /// Comma-separated names of the symbols that were not found, or "".
  const std::string &missing() const { return missingNames; }

private:
  void *handle = nullptr;
  std::string dlError;
  std::string missingNames;
};

} // namespace blockscale

#endif // BLOCKSCALE_RUNTIME_DYNAMICLIBRARY_H
