// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef BLOCKSCALE_TEST_UNIT_TESTUTILS_H
#define BLOCKSCALE_TEST_UNIT_TESTUTILS_H

#include "blockscale/Runtime/Nvrtc.h"

#include "llvm/Support/FileSystem.h"
#include "gtest/gtest.h"

#include <string>

namespace blockscale::test {

/// A fresh directory under the system temp dir, removed at scope exit.
struct TempDir {
  std::string path;
  TempDir() {
    llvm::SmallString<128> p;
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("blockscale-test", p));
    path = std::string(p);
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
};

inline bool haveNvrtc() {
  auto v = nvrtcVersion();
  if (!v) {
    llvm::consumeError(v.takeError());
    return false;
  }
  return true;
}

#define BS_REQUIRE_NVRTC()                                                     \
  if (!::blockscale::test::haveNvrtc())                                        \
  GTEST_SKIP() << "NVRTC (libnvrtc.so.13) is not available"

} // namespace blockscale::test

#endif
