//===- KernelCache.h - on-disk cache of compiled kernels --------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Entries are keyed by a 128-bit hash of everything that determines the
// binary: generated source, every embedded template header, NVRTC version,
// flags and target architecture. Writes go to a unique temporary file that is
// renamed into place, so many processes (ranks) can share one directory;
// every entry carries its size and a checksum, so a truncated or corrupted
// file is detected, reported as a miss and rewritten, never loaded.
//
//===----------------------------------------------------------------------===//
#ifndef BLOCKSCALE_RUNTIME_KERNELCACHE_H
#define BLOCKSCALE_RUNTIME_KERNELCACHE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace blockscale {

/// $BLOCKSCALE_CACHE_DIR, else $XDG_CACHE_HOME/blockscale, else
/// ~/.cache/blockscale. An empty BLOCKSCALE_CACHE_DIR ("") disables it.
std::string defaultCacheDir();

/// 32 hex digits identifying a compilation.
std::string computeCacheKey(llvm::StringRef source,
                            const std::vector<std::string> &flags,
                            llvm::StringRef nvrtcVersion);

class DiskCache {
public:
  explicit DiskCache(std::string dir) : dir(std::move(dir)) {}
  bool enabled() const { return !dir.empty(); }
  const std::string &directory() const { return dir; }
  std::string entryPath(llvm::StringRef key) const;
  std::string sourcePath(llvm::StringRef key) const;

  enum class LookupStatus { Hit, Miss, Corrupt };
  struct Lookup {
    LookupStatus status = LookupStatus::Miss;
    std::string payload;
    std::string reason; // for Corrupt: what was wrong
  };
  Lookup load(llvm::StringRef key) const;

  /// Atomically publishes `payload` under `key`.
  llvm::Error store(llvm::StringRef key, llvm::StringRef payload) const;
  /// Writes the generated source next to the entry (for error messages and
  /// debugging); best effort, returns the path or "".
  std::string storeSource(llvm::StringRef key, llvm::StringRef source) const;

private:
  std::string dir;
};

} // namespace blockscale

#endif
