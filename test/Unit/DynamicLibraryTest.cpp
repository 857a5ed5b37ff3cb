// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "blockscale/Runtime/DynamicLibrary.h"

#include "gtest/gtest.h"

using namespace blockscale;

TEST(DynamicLibrary, FirstLoadableCandidateWins) {
  DynamicLibrary lib;
  EXPECT_FALSE(lib.open({"libblockscale-does-not-exist.so"}));
  EXPECT_NE(lib.lastError().find("libblockscale-does-not-exist.so"),
            std::string::npos)
      << lib.lastError();
  ASSERT_TRUE(lib.open({"libblockscale-does-not-exist.so", "libc.so.6"}));
  EXPECT_NE(lib.symbol("strlen"), nullptr);
  EXPECT_TRUE(lib.missing().empty());
}

TEST(DynamicLibrary, MissingSymbolsAreCollectedAndFallbacksTried) {
  DynamicLibrary lib;
  ASSERT_TRUE(lib.open({"libc.so.6"}));
  EXPECT_EQ(lib.symbol("bs_no_such_symbol_1"), nullptr);
  // The fallback name resolves, so nothing more is missing.
  EXPECT_NE(lib.symbol("bs_no_such_symbol_v2", "strlen"), nullptr);
  EXPECT_EQ(lib.symbol("bs_no_such_symbol_2"), nullptr);
  EXPECT_EQ(lib.missing(), "bs_no_such_symbol_1, bs_no_such_symbol_2");
}
