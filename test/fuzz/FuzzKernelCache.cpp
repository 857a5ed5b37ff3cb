//===- FuzzKernelCache.cpp - libFuzzer: the kernel cache's loader --------===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The disk cache reads files that other processes (or anything with write
// access to the cache directory) put there (issue 31): the fuzz input is
// written as the entry of a key, and loading it must end in a hit whose
// payload is bound to that key, a miss, or a "corrupt" verdict, never a
// crash, a hang or a read past the file. Half the inputs start from a valid
// entry of the key (or of another key) with bytes of the input laid over it,
// so that the checks after the header are reached too.
//
//===----------------------------------------------------------------------===//

#include "blockscale/Runtime/KernelCache.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <unistd.h>

using namespace blockscale;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string dir = [] {
    std::string d = "/tmp/blockscale-fuzz-cache-" + std::to_string(::getpid());
    llvm::sys::fs::create_directories(d);
    return d;
  }();
  static const std::string key = "0123456789abcdef0123456789abcdef";
  static const std::string other = "fedcba9876543210fedcba9876543210";
  DiskCache cache(dir);
  std::string bytes(reinterpret_cast<const char *>(data), size);
  if (size && (data[0] & 1)) {
    // A valid entry, of this key or another, with the input laid over it.
    const std::string &k = data[0] & 2 ? key : other;
    if (llvm::Error e = cache.store(k, "payload of the entry"))
      llvm::consumeError(std::move(e));
    std::string path = cache.entryPath(k), entry;
    if (auto f = std::fopen(path.c_str(), "rb")) {
      char c[512];
      size_t n;
      while ((n = std::fread(c, 1, sizeof(c), f)) > 0)
        entry.append(c, n);
      std::fclose(f);
    }
    size_t at = size > 1 ? data[1] % (entry.size() + 1) : 0;
    entry.replace(at, std::min(bytes.size(), entry.size() - at), bytes);
    bytes = entry;
  }
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(cache.entryPath(key), ec);
    if (ec)
      return 0;
    os << bytes;
  }
  DiskCache::Lookup l = cache.load(key);
  if (l.status == DiskCache::LookupStatus::Hit &&
      l.payload.size() > bytes.size())
    std::abort(); // a payload larger than the file
  return 0;
}
