#pragma once
// A fresh directory under the system's temporary directory, removed with everything in it when the
// owner goes (tests of the rendezvous and of ranks as processes).
#include <stdlib.h>  // mkdtemp

#include <filesystem>
#include <string>
#include <system_error>

#include "tnrt/errors.hpp"

namespace tnrt::testing {

struct temp_dir {
  std::string path;
  explicit temp_dir(const std::string& prefix = "tnrt-test") {
    std::string t = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(t.data()) == nullptr) throw io_error("mkdtemp failed for " + t);
    path = t;
  }
  ~temp_dir() {
    std::error_code e;
    std::filesystem::remove_all(path, e);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
};

}  // namespace tnrt::testing
