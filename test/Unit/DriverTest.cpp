// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Without a GPU the driver loads lazily and fails with a clear message, and
// generation still works.
#include "TestUtils.h"

#include "blockscale/JIT/Jit.h"
#include "blockscale/Runtime/CudaDriver.h"

using namespace blockscale;

TEST(Driver, MissingGpuIsAClearError) {
  auto d = getCudaDriver();
  if (d)
    GTEST_SKIP() << "a CUDA driver is present";
  std::string msg = llvm::toString(d.takeError());
  EXPECT_TRUE(msg.find("libcuda") != std::string::npos ||
              msg.find("no CUDA device") != std::string::npos)
      << msg;
  // Asking twice gives the same answer (the load is attempted once).
  auto again = getCudaDriver();
  ASSERT_FALSE(bool(again));
  EXPECT_EQ(llvm::toString(again.takeError()), msg);
}

TEST(Driver, LaunchWithoutGpuFailsButCompileWorks) {
  if (getCudaDriver())
    GTEST_SKIP() << "a CUDA driver is present";
  BS_REQUIRE_NVRTC();
  GemmDesc d;
  d.m = 256;
  d.n = 256;
  d.k = 256;
  auto k = getGemmKernel(d);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  EXPECT_FALSE((*k)->compiled->cubin.empty());
  GemmArgs a;
  int dummy[64];
  a.a = a.b = a.c = dummy;
  a.sa = a.sb = reinterpret_cast<float *>(dummy);
  llvm::Error e = (**k)(a, nullptr);
  ASSERT_TRUE(bool(e));
  std::string msg = llvm::toString(std::move(e));
  EXPECT_NE(msg.find("CUDA"), std::string::npos) << msg;
  // A kernel built for M = 256 launches M = 256 only: another M, or the 0
  // of a zero-filled GemmArgs, is refused before any device work.
  for (int64_t m : {int64_t(100), int64_t(0)}) {
    a.m = m;
    llvm::Error bad = (**k)(a, nullptr);
    ASSERT_TRUE(bool(bad));
    std::string why = llvm::toString(std::move(bad));
    EXPECT_NE(
        why.find("the kernel was built for M = 256 but got GemmArgs::m = " +
                 std::to_string(m)),
        std::string::npos)
        << why;
  }
}
