//===- KernelCache.cpp - on-disk cache of compiled kernels ------*- C++ -*-===//

#include "blockscale/Runtime/KernelCache.h"
#include "blockscale/Runtime/EmbeddedHeaders.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <unistd.h>

using namespace blockscale;

namespace {
// Entry layout: magic (8) | payload size (8, LE) | xxh3-64 of payload (8) |
// payload. The magic's last byte is the format version.
constexpr char kMagic[8] = {'B', 'S', 'K', 'E', 'R', 'N', '\0', '1'};
constexpr size_t kHeader = 24;
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
  os << "blockscale-cache-v1\0" << nvrtcVersion << '\0';
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

DiskCache::Lookup DiskCache::load(llvm::StringRef key) const {
  Lookup out;
  if (!enabled())
    return out;
  auto buf = llvm::MemoryBuffer::getFile(entryPath(key), /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf)
    return out; // miss
  llvm::StringRef data = (*buf)->getBuffer();
  auto corrupt = [&](std::string why) {
    out.status = LookupStatus::Corrupt;
    out.reason = std::move(why);
    return out;
  };
  if (data.size() < kHeader || std::memcmp(data.data(), kMagic, 8) != 0)
    return corrupt("bad header");
  uint64_t size = readLE64(data.data() + 8);
  uint64_t sum = readLE64(data.data() + 16);
  if (data.size() - kHeader != size)
    return corrupt(llvm::formatv("size {0} but header says {1}",
                                 data.size() - kHeader, size)
                       .str());
  llvm::StringRef payload = data.drop_front(kHeader);
  if (llvm::xxh3_64bits(payload) != sum)
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
      return llvm::createStringError(ec, "cannot write %s: %s", tmp.c_str(),
                                     ec.message().c_str());
    os << bytes;
    os.close();
    if (os.has_error()) {
      os.clear_error();
      llvm::sys::fs::remove(tmp);
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "short write to %s", tmp.c_str());
    }
  }
  // rename(2) replaces the target atomically: readers see the old or the
  // new complete file, never a mix.
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path)) {
    llvm::sys::fs::remove(tmp);
    return llvm::createStringError(ec, "cannot rename %s to %s: %s",
                                   tmp.c_str(), path.c_str(),
                                   ec.message().c_str());
  }
  return llvm::Error::success();
}

llvm::Error DiskCache::store(llvm::StringRef key,
                             llvm::StringRef payload) const {
  if (!enabled())
    return llvm::Error::success();
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError(ec, "cannot create cache directory %s: %s",
                                   dir.c_str(), ec.message().c_str());
  std::string bytes(kMagic, 8);
  appendLE64(bytes, payload.size());
  appendLE64(bytes, llvm::xxh3_64bits(payload));
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
