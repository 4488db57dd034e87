// Small helpers shared by the unit tests: the source directory CTest passes in, and a check that a
// call throws a given exception whose message names every expected part.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <exception>
#include <initializer_list>
#include <string>

namespace tnrt::test {

/// $TNRT_SOURCE_DIR (set by CTest), or "" when it is not set.
inline std::string source_dir() {
  const char* dir = std::getenv("TNRT_SOURCE_DIR");
  return dir ? dir : "";
}

/// Runs f, expects exception E whose message contains every part.
template <class E, class F>
void expect_error(F&& f, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "no exception thrown";
  } catch (const E& e) {
    const std::string what = e.what();
    for (const auto& p : parts) EXPECT_NE(what.find(p), std::string::npos) << "'" << p << "' not in: " << what;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

}  // namespace tnrt::test

/// Skips the current test when TNRT_SOURCE_DIR is not set (the test was not run through CTest).
#define REQUIRE_SOURCE_DIR() \
  if (::tnrt::test::source_dir().empty()) GTEST_SKIP() << "TNRT_SOURCE_DIR is not set (run through ctest)"
