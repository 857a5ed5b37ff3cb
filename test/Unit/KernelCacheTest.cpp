// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "TestUtils.h"

#include "blockscale/JIT/Jit.h"
#include "blockscale/Runtime/KernelCache.h"
#include "blockscale/Runtime/Nvrtc.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <sys/stat.h>
#include <unistd.h>

using namespace blockscale;
using blockscale::test::TempDir;

static void overwrite(const std::string &path, llvm::StringRef bytes) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  ASSERT_FALSE(ec);
  os << bytes;
}

static std::string readAll(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFile(path, false, false);
  EXPECT_TRUE(bool(buf));
  return buf ? (*buf)->getBuffer().str() : "";
}

// Keys are 32 hex digits (computeCacheKey).
static const std::string kKey = "0123456789abcdef0123456789abcdef";
static const std::string kOtherKey = "fedcba9876543210fedcba9876543210";

TEST(CacheKey, DependsOnEveryInput) {
  std::string k = computeCacheKey("src", {"-a", "-b"}, "13.0");
  EXPECT_EQ(k.size(), 32u);
  EXPECT_EQ(k, computeCacheKey("src", {"-a", "-b"}, "13.0"));
  EXPECT_NE(k, computeCacheKey("src2", {"-a", "-b"}, "13.0"));
  EXPECT_NE(k, computeCacheKey("src", {"-a"}, "13.0"));
  EXPECT_NE(k, computeCacheKey("src", {"-a", "-c"}, "13.0"));
  EXPECT_NE(k, computeCacheKey("src", {"-a", "-b"}, "13.1"));
  // Flag boundaries matter: {"-a", "-b"} is not {"-a-b"}.
  EXPECT_NE(k, computeCacheKey("src", {"-a-b"}, "13.0"));
}

TEST(CacheKey, NoEnvironmentReachesTheCompileFlags) {
  // The flags (part of the key) are the options alone: no environment
  // variable adds defines to a shipped kernel.
  ::setenv("BLOCKSCALE_EXP_DEFINES", "BS_EXP_ANYTHING", 1);
  CompileOptions o;
  std::vector<std::string> f = o.flags();
  ::unsetenv("BLOCKSCALE_EXP_DEFINES");
  EXPECT_EQ(f, CompileOptions().flags());
  for (const std::string &flag : f)
    EXPECT_EQ(flag.find("BS_EXP"), std::string::npos) << flag;
}

TEST(DiskCache, StoreThenLoad) {
  TempDir dir;
  DiskCache cache(dir.path + "/nested/dir");
  std::string payload(10000, '\0');
  for (size_t i = 0; i < payload.size(); ++i)
    payload[i] = char(i * 31);
  EXPECT_EQ(cache.load(kKey).status, DiskCache::LookupStatus::Miss);
  ASSERT_FALSE(bool(cache.store(kKey, payload)));
  DiskCache::Lookup l = cache.load(kKey);
  ASSERT_EQ(l.status, DiskCache::LookupStatus::Hit);
  EXPECT_EQ(l.payload, payload);
}

TEST(DiskCache, TruncatedEntryIsCorruptNotLoaded) {
  TempDir dir;
  DiskCache cache(dir.path);
  ASSERT_FALSE(bool(cache.store(kKey, std::string(4096, 'x'))));
  std::string bytes = readAll(cache.entryPath(kKey));
  overwrite(cache.entryPath(kKey), llvm::StringRef(bytes).take_front(bytes.size() / 2));
  DiskCache::Lookup l = cache.load(kKey);
  EXPECT_EQ(l.status, DiskCache::LookupStatus::Corrupt);
  EXPECT_NE(l.reason.find("size"), std::string::npos) << l.reason;
  EXPECT_TRUE(l.payload.empty());
}

TEST(DiskCache, FlippedByteIsCorrupt) {
  TempDir dir;
  DiskCache cache(dir.path);
  ASSERT_FALSE(bool(cache.store(kKey, std::string(4096, 'x'))));
  std::string bytes = readAll(cache.entryPath(kKey));
  bytes[bytes.size() - 100] ^= 0x20;
  overwrite(cache.entryPath(kKey), bytes);
  DiskCache::Lookup l = cache.load(kKey);
  EXPECT_EQ(l.status, DiskCache::LookupStatus::Corrupt);
  EXPECT_EQ(l.reason, "checksum mismatch");
}

TEST(DiskCache, GarbageHeaderIsCorruptAndRewritable) {
  TempDir dir;
  DiskCache cache(dir.path);
  overwrite(cache.entryPath(kKey), "not a cache entry at all");
  EXPECT_EQ(cache.load(kKey).status, DiskCache::LookupStatus::Corrupt);
  ASSERT_FALSE(bool(cache.store(kKey, "fresh")));
  DiskCache::Lookup l = cache.load(kKey);
  ASSERT_EQ(l.status, DiskCache::LookupStatus::Hit);
  EXPECT_EQ(l.payload, "fresh");
}

TEST(DiskCache, NoTemporaryFilesLeftBehind) {
  TempDir dir;
  DiskCache cache(dir.path);
  for (int i = 0; i < 5; ++i)
    ASSERT_FALSE(bool(cache.store(kKey, std::string(100 + i, 'y'))));
  int files = 0;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir.path, ec), end; it != end && !ec;
       it.increment(ec)) {
    ++files;
    EXPECT_EQ(llvm::StringRef(it->path()).find(".tmp."), llvm::StringRef::npos);
  }
  EXPECT_EQ(files, 1);
}

TEST(DiskCache, DisabledWithEmptyDirectory) {
  DiskCache cache("");
  EXPECT_FALSE(cache.enabled());
  EXPECT_FALSE(bool(cache.store(kKey, "x")));
  EXPECT_EQ(cache.load(kKey).status, DiskCache::LookupStatus::Miss);
}

TEST(DiskCache, DefaultDirectoryFollowsEnvironment) {
  const char *old = std::getenv("BLOCKSCALE_CACHE_DIR");
  std::string saved = old ? old : "";
  setenv("BLOCKSCALE_CACHE_DIR", "/tmp/some-dir", 1);
  EXPECT_EQ(defaultCacheDir(), "/tmp/some-dir");
  unsetenv("BLOCKSCALE_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  EXPECT_EQ(defaultCacheDir(), "/tmp/xdg/blockscale");
  if (old)
    setenv("BLOCKSCALE_CACHE_DIR", saved.c_str(), 1);
}

TEST(DiskCache, AnEntryIsBoundToItsKey) {
  // A valid entry of another key (a debug build of the same kernel, say)
  // copied under this key's file name is not served.
  TempDir dir;
  DiskCache cache(dir.path);
  ASSERT_FALSE(bool(cache.store(kOtherKey, "other binary")));
  overwrite(cache.entryPath(kKey), readAll(cache.entryPath(kOtherKey)));
  DiskCache::Lookup l = cache.load(kKey);
  EXPECT_EQ(l.status, DiskCache::LookupStatus::Corrupt);
  EXPECT_NE(l.reason.find("an entry of key " + kOtherKey), std::string::npos)
      << l.reason;
  EXPECT_EQ(cache.load("not-a-key").status, DiskCache::LookupStatus::Corrupt);
  llvm::Error e = cache.store("../escape", "x");
  EXPECT_TRUE(bool(e));
  llvm::consumeError(std::move(e));
}

TEST(DiskCache, OnlyRegularFilesAreRead) {
  TempDir dir;
  DiskCache cache(dir.path);
  ASSERT_FALSE(bool(llvm::sys::fs::create_directories(dir.path)));
  // A FIFO would block a plain open forever.
  ASSERT_EQ(::mkfifo(cache.entryPath(kKey).c_str(), 0600), 0);
  DiskCache::Lookup l = cache.load(kKey);
  EXPECT_EQ(l.status, DiskCache::LookupStatus::Corrupt);
  EXPECT_NE(l.reason.find("not a regular file"), std::string::npos) << l.reason;
  // Rewriting replaces it with an entry.
  ASSERT_FALSE(bool(cache.store(kKey, "fresh")));
  EXPECT_EQ(cache.load(kKey).status, DiskCache::LookupStatus::Hit);
  // A link to an endless file is not followed.
  ASSERT_EQ(::symlink("/dev/zero", cache.entryPath(kOtherKey).c_str()), 0);
  l = cache.load(kOtherKey);
  EXPECT_EQ(l.status, DiskCache::LookupStatus::Corrupt);
  EXPECT_FALSE(l.reason.empty());
}
