// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compile-or-load through the KernelRegistry: memory and disk hits, corrupt
// entries, concurrent compiles of one key from threads and from processes,
// and the content of compile errors. Needs NVRTC, not a GPU.
#include "TestUtils.h"

#include "blockscale/Runtime/Runtime.h"
#include "blockscale/Runtime/KernelFamily.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace blockscale;
using blockscale::test::TempDir;

static std::string castSource() {
  KernelSpec s;
  s.kind = KernelKind::Quantize;
  s.quant.br = 1;
  s.quant.bc = 128;
  s.name = kernelName(s);
  return generateCudaSource(s, "registry test");
}

TEST(Registry, CompilesOnceThenHitsMemoryThenDisk) {
  BS_REQUIRE_NVRTC();
  TempDir dir;
  std::string src = castSource();
  KernelRegistry reg(dir.path);
  auto a = reg.getOrCompile(src);
  ASSERT_TRUE(bool(a)) << llvm::toString(a.takeError());
  EXPECT_EQ(reg.stats().compiles, 1);
  EXPECT_FALSE((*a)->fromDiskCache);
  EXPECT_FALSE((*a)->cubin.empty());
  EXPECT_EQ((*a)->spillBytes, 0);
  auto b = reg.getOrCompile(src);
  ASSERT_TRUE(bool(b));
  EXPECT_EQ(a->get(), b->get());
  EXPECT_EQ(reg.stats().memoryHits, 1);

  KernelRegistry other(dir.path); // a new process, in effect
  auto c = other.getOrCompile(src);
  ASSERT_TRUE(bool(c));
  EXPECT_TRUE((*c)->fromDiskCache);
  EXPECT_EQ(other.stats().diskHits, 1);
  EXPECT_EQ(other.stats().compiles, 0);
  EXPECT_EQ((*c)->cubin, (*a)->cubin);
}

TEST(Registry, CorruptEntryIsRebuiltNotLoaded) {
  BS_REQUIRE_NVRTC();
  TempDir dir;
  std::string src = castSource();
  std::string key;
  {
    KernelRegistry reg(dir.path);
    auto k = reg.getOrCompile(src);
    ASSERT_TRUE(bool(k));
    key = (*k)->cacheKey;
  }
  DiskCache cache(dir.path);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(cache.entryPath(key), ec);
    os << "BSKERN"; // truncated garbage
  }
  KernelRegistry reg(dir.path);
  auto k = reg.getOrCompile(src);
  ASSERT_TRUE(bool(k));
  EXPECT_FALSE((*k)->fromDiskCache);
  EXPECT_EQ(reg.stats().corruptEntries, 1);
  EXPECT_EQ(reg.stats().compiles, 1);
  EXPECT_EQ(cache.load(key).status, DiskCache::LookupStatus::Hit);
}

TEST(Registry, ConcurrentThreadsCompileOnce) {
  BS_REQUIRE_NVRTC();
  TempDir dir;
  std::string src = castSource();
  KernelRegistry reg(dir.path);
  std::vector<std::thread> threads;
  std::vector<const CompiledKernel *> got(16, nullptr);
  for (int i = 0; i < 16; ++i)
    threads.emplace_back([&, i] {
      auto k = reg.getOrCompile(src);
      if (k)
        got[i] = k->get();
      else
        llvm::consumeError(k.takeError());
    });
  for (auto &t : threads)
    t.join();
  EXPECT_EQ(reg.stats().compiles, 1);
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(got[i], got[0]);
  EXPECT_NE(got[0], nullptr);
}

TEST(Registry, ConcurrentProcessesShareOneDirectory) {
  BS_REQUIRE_NVRTC();
  TempDir dir;
  std::string src = castSource();
  std::vector<pid_t> kids;
  for (int i = 0; i < 4; ++i) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      KernelRegistry reg(dir.path);
      auto k = reg.getOrCompile(src);
      bool ok = k && !(*k)->cubin.empty();
      if (!k)
        llvm::consumeError(k.takeError());
      _exit(ok ? 0 : 1);
    }
    kids.push_back(pid);
  }
  for (pid_t pid : kids) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  KernelRegistry reg(dir.path);
  auto k = reg.getOrCompile(src);
  ASSERT_TRUE(bool(k));
  EXPECT_TRUE((*k)->fromDiskCache);
  EXPECT_EQ(reg.stats().corruptEntries, 0);
}

TEST(Registry, CompileErrorCarriesLogSourceAndKey) {
  BS_REQUIRE_NVRTC();
  TempDir dir;
  KernelSpec s;
  s.kind = KernelKind::Quantize;
  s.name = "broken";
  std::string src = "// blockscale-spec: " + s.serialize() +
                    "\nextern \"C\" __global__ void broken() { not_a_thing; }\n";
  KernelRegistry reg(dir.path);
  auto k = reg.getOrCompile(src);
  ASSERT_FALSE(bool(k));
  std::string msg = llvm::toString(k.takeError());
  EXPECT_NE(msg.find("NVRTC failed to compile"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not_a_thing"), std::string::npos) << msg;
  EXPECT_NE(msg.find("generated source: " + dir.path), std::string::npos) << msg;
  EXPECT_NE(msg.find("cache key: "), std::string::npos) << msg;
  // A failed compile is not remembered: fixing the input works next time.
  EXPECT_EQ(reg.stats().compiles, 0);
}

TEST(Registry, SourceWithoutSpecLineIsRejected) {
  BS_REQUIRE_NVRTC();
  TempDir dir;
  KernelRegistry reg(dir.path);
  auto k = reg.getOrCompile("__global__ void f() {}");
  ASSERT_FALSE(bool(k));
  EXPECT_NE(llvm::toString(k.takeError()).find("blockscale-spec"),
            std::string::npos);
}

TEST(Registry, EveryGemmTileCompilesWithoutSpills) {
  BS_REQUIRE_NVRTC();
  // The configurations the tile model can pick must fit their register
  // budgets (ptxas -v reports no spill).
  TempDir dir;
  KernelRegistry reg(dir.path);
  for (int bm : {64, 128})
    for (int bn : {64, 128, 192})
      for (GemmForm form : {GemmForm::Fwd, GemmForm::Wgrad}) {
        KernelSpec s;
        s.gemm.form = form;
        s.gemm.bm = bm;
        s.gemm.bn = bn;
        s.gemm.stages = 3;
        s.name = kernelName(s);
        auto k = reg.getOrCompile(generateCudaSource(s));
        ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
        EXPECT_EQ((*k)->spillBytes, 0) << s.name;
        EXPECT_GT((*k)->registers, 0) << s.name;
      }
}
