//===- DynamicLibrary.cpp - dlopen with candidates and symbol checks ------===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "blockscale/Runtime/DynamicLibrary.h"

#include <dlfcn.h>

using namespace blockscale;

bool DynamicLibrary::open(llvm::ArrayRef<std::string> candidates) {
  for (const std::string &c : candidates) {
    if ((handle = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)))
      return true;
    const char *e = dlerror();
    dlError = e ? e : "dlopen failed";
  }
  return false;
}

void *DynamicLibrary::symbol(llvm::StringRef name) {
  return symbol(name, llvm::StringRef());
}

void *DynamicLibrary::symbol(llvm::StringRef name, llvm::StringRef fallback) {
  void *f = handle ? dlsym(handle, name.str().c_str()) : nullptr;
  if (!f && handle && !fallback.empty())
    f = dlsym(handle, fallback.str().c_str());
  if (!f)
    missingNames += (missingNames.empty() ? "" : ", ") + name.str();
  return f;
}
