// open_first / find_symbol / resolve_function (src/core/dynamic_library), the loading behind
// cuTENSOR and CUPTI, against the C library every host has: the first candidate that loads wins
// and the ones before it are listed with their reasons; missing symbols are collected
// comma-separated; a function resolves to a callable pointer; nothing loadable gives a null handle
// and every path tried.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "core/dynamic_library.hpp"

namespace tnrt {
namespace {

TEST(DynamicLibrary, FirstLoadableCandidateWins) {
  const opened_library lib = open_first({"/nonexistent/libtnrt_nothing.so", "libc.so.6", "libm.so.6"});
  ASSERT_NE(lib.handle, nullptr) << lib.tried;
  EXPECT_EQ(lib.path, "libc.so.6");
  EXPECT_NE(lib.tried.find("/nonexistent/libtnrt_nothing.so ("), std::string::npos) << lib.tried;
  EXPECT_EQ(lib.tried.find("libm"), std::string::npos) << "candidates after the one that loaded are not tried";
}

TEST(DynamicLibrary, SymbolsAndMissingOnes) {
  const opened_library lib = open_first({"libc.so.6"});
  ASSERT_NE(lib.handle, nullptr) << lib.tried;
  std::string missing;
  std::size_t (*len)(const char*) = nullptr;
  EXPECT_TRUE(resolve_function(lib.handle, "strlen", len, missing));
  ASSERT_NE(len, nullptr);
  EXPECT_EQ(len("tnrt"), 4U);
  EXPECT_TRUE(missing.empty());
  int (*none)() = nullptr;
  EXPECT_FALSE(resolve_function(lib.handle, "tnrt_no_such_symbol_a", none, missing));
  EXPECT_EQ(none, nullptr);
  EXPECT_EQ(find_symbol(lib.handle, "tnrt_no_such_symbol_b", missing), nullptr);
  EXPECT_EQ(missing, "tnrt_no_such_symbol_a, tnrt_no_such_symbol_b");
}

TEST(DynamicLibrary, NothingLoads) {
  const opened_library lib = open_first({"/nonexistent/a.so", "/nonexistent/b.so"});
  EXPECT_EQ(lib.handle, nullptr);
  EXPECT_TRUE(lib.path.empty());
  EXPECT_NE(lib.tried.find("/nonexistent/a.so"), std::string::npos);
  EXPECT_NE(lib.tried.find("; /nonexistent/b.so"), std::string::npos) << lib.tried;
}

}  // namespace
}  // namespace tnrt
