//===- KernelCache.cpp - on-disk cache of compiled kernels ------*- C++ -*-===//
//
// Part of blockscale, under the Apache License v2.0 with LLVM Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "blockscale/Runtime/KernelCache.h"
#include "blockscale/Runtime/EmbeddedHeaders.h"
#include "blockscale/Runtime/Error.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace blockscale;

namespace {
// Entry layout: magic (8) | key (32 hex digits) | payload size (8, LE) |
// xxh3-64 of key and payload (8) | payload. The magic's last byte is the
// format version. The key inside binds an entry to its file name: an entry
// copied or linked under another key's name is not served.
constexpr char kMagic[8] = {'B', 'S', 'K', 'E', 'R', 'N', '\0', '2'};
constexpr size_t kKeyBytes = 32;
constexpr size_t kHeader = 8 + kKeyBytes + 16;
// No cubin comes near this; a larger file is not ours.
constexpr uint64_t kMaxEntryBytes = uint64_t(256) << 20;

uint64_t entrySum(llvm::StringRef key, llvm::StringRef payload) {
  std::string material = key.str();
  material.push_back('\0');
  material += payload;
  return llvm::xxh3_64bits(llvm::arrayRefFromStringRef(material));
}
} // namespace

std::string blockscale::defaultCacheDir() {
  if (const char *d = std::getenv("BLOCKSCALE_CACHE_DIR"))
    return d; // "" disables
  llvm::SmallString<256> path;
  if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x)
    path = x;
  else if (const char *h = std::getenv("HOME"); h && *h)
    llvm::sys::path::append(path, h, ".cache");
  else
    path = "/tmp";
  llvm::sys::path::append(path, "blockscale");
  return std::string(path);
}

std::string blockscale::computeCacheKey(llvm::StringRef source,
                                        const std::vector<std::string> &flags,
                                        llvm::StringRef nvrtcVersion) {
  std::string material;
  llvm::raw_string_ostream os(material);
  os << "blockscale-cache-v2\0" << nvrtcVersion << '\0';
  for (const std::string &f : flags)
    os << f << '\0';
  for (const EmbeddedHeader &h : getEmbeddedHeaders())
    os << h.name << '\0' << h.content << '\0';
  os << source;
  llvm::XXH128_hash_t h = llvm::xxh3_128bits(llvm::arrayRefFromStringRef(material));
  return llvm::formatv("{0:x-16}{1:x-16}", h.high64, h.low64).str();
}

std::string DiskCache::entryPath(llvm::StringRef key) const {
  llvm::SmallString<256> p(dir);
  llvm::sys::path::append(p, key + ".cubin");
  return std::string(p);
}

std::string DiskCache::sourcePath(llvm::StringRef key) const {
  llvm::SmallString<256> p(dir);
  llvm::sys::path::append(p, key + ".cu");
  return std::string(p);
}

static uint64_t readLE64(const char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

static void appendLE64(std::string &s, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

/// The bytes of `path` if it is a regular file (not a link, FIFO or
/// device) of at most kMaxEntryBytes; opened without blocking. `why` says
/// what else it was; nothing and an empty `why` for a missing file.
static std::optional<std::string> readRegularFile(const std::string &path,
                                                  std::string &why) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT)
      why = std::string("cannot open it: ") + std::strerror(errno);
    return std::nullopt;
  }
  struct stat st;
  std::optional<std::string> out;
  if (::fstat(fd, &st) != 0) {
    why = std::string("cannot stat it: ") + std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    why = "not a regular file";
  } else if (uint64_t(st.st_size) > kMaxEntryBytes) {
    why = llvm::formatv("{0} bytes, more than any kernel", st.st_size).str();
  } else {
    std::string data(size_t(st.st_size), '\0');
    size_t got = 0;
    while (got < data.size()) {
      ssize_t n = ::read(fd, data.data() + got, data.size() - got);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      got += size_t(n);
    }
    if (got == data.size())
      out = std::move(data);
    else
      why = "short read";
  }
  ::close(fd);
  return out;
}

DiskCache::Lookup DiskCache::load(llvm::StringRef key) const {
  Lookup out;
  if (!enabled())
    return out;
  auto corrupt = [&](std::string why) {
    out.status = LookupStatus::Corrupt;
    out.reason = std::move(why);
    return out;
  };
  if (key.size() != kKeyBytes || !llvm::all_of(key, llvm::isHexDigit))
    return corrupt("not a cache key: '" + key.str() + "'");
  std::string why;
  std::optional<std::string> file = readRegularFile(entryPath(key), why);
  if (!file)
    return why.empty() ? out : corrupt(why); // missing: a miss
  llvm::StringRef data = *file;
  if (data.size() < kHeader || std::memcmp(data.data(), kMagic, 8) != 0)
    return corrupt("bad header");
  if (data.substr(8, kKeyBytes) != key)
    return corrupt("an entry of key " + data.substr(8, kKeyBytes).str());
  uint64_t size = readLE64(data.data() + 8 + kKeyBytes);
  uint64_t sum = readLE64(data.data() + 16 + kKeyBytes);
  if (data.size() - kHeader != size)
    return corrupt(llvm::formatv("size {0} but header says {1}",
                                 data.size() - kHeader, size)
                       .str());
  llvm::StringRef payload = data.drop_front(kHeader);
  if (entrySum(key, payload) != sum)
    return corrupt("checksum mismatch");
  out.status = LookupStatus::Hit;
  out.payload = payload.str();
  return out;
}

/// Unique per process, thread and call: no two writers share a temp file.
static std::string tempSuffix() {
  static std::atomic<uint64_t> counter{0};
  return llvm::formatv(".tmp.{0}.{1}.{2}", ::getpid(),
                       std::hash<std::thread::id>()(std::this_thread::get_id()),
                       counter++)
      .str();
}

static llvm::Error writeAtomically(const std::string &path,
                                   llvm::StringRef bytes) {
  std::string tmp = path + tempSuffix();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec, llvm::sys::fs::OF_None);
    if (ec)
      return makeError(ErrorCode::Internal,
                       "cannot write " + tmp + ": " + ec.message());
    os << bytes;
    os.close();
    if (os.has_error()) {
      os.clear_error();
      llvm::sys::fs::remove(tmp);
      return makeError(ErrorCode::Internal, "short write to " + tmp);
    }
  }
  // rename(2) replaces the target atomically: readers see the old or the
  // new complete file, never a mix.
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path)) {
    llvm::sys::fs::remove(tmp);
    return makeError(ErrorCode::Internal, "cannot rename " + tmp + " to " +
                                              path + ": " + ec.message());
  }
  return llvm::Error::success();
}

llvm::Error DiskCache::store(llvm::StringRef key,
                             llvm::StringRef payload) const {
  if (!enabled())
    return llvm::Error::success();
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return makeError(ErrorCode::Internal, "cannot create cache directory " +
                                              dir + ": " + ec.message());
  if (key.size() != kKeyBytes || !llvm::all_of(key, llvm::isHexDigit))
    return makeError(ErrorCode::Internal,
                     "not a cache key: '" + key + "'");
  std::string bytes(kMagic, 8);
  bytes += key;
  appendLE64(bytes, payload.size());
  appendLE64(bytes, entrySum(key, payload));
  bytes += payload;
  return writeAtomically(entryPath(key), bytes);
}

std::string DiskCache::storeSource(llvm::StringRef key,
                                   llvm::StringRef source) const {
  llvm::SmallString<256> path;
  if (enabled()) {
    llvm::sys::fs::create_directories(dir);
    path = sourcePath(key);
  } else {
    llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, path);
    llvm::sys::path::append(path, "blockscale-" + key + ".cu");
  }
  if (llvm::Error e = writeAtomically(std::string(path), source)) {
    llvm::consumeError(std::move(e));
    return "";
  }
  return std::string(path);
}
