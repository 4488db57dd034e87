#pragma once
// Opening a shared library at run time (cuTENSOR, CUPTI): the first of several candidate paths
// that loads, and its functions by name. One binary then runs with or without the library, and
// says which paths it tried when none loads.
#include <string>
#include <vector>

namespace tnrt {

struct opened_library {
  void* handle = nullptr;  // null when no candidate loaded
  std::string path;        // the candidate that loaded
  std::string tried;       // "path (dlerror); path (dlerror)..." for the ones that did not
};

/// dlopen(RTLD_NOW | RTLD_LOCAL) of each candidate in order until one loads. Never throws for a
/// missing library: the caller words the error (what it needs the library for, how to install it).
opened_library open_first(const std::vector<std::string>& candidates);

/// The address of `name` in `lib`, or null (then `name` is appended to `missing`, comma-separated).
void* find_symbol(void* lib, const char* name, std::string& missing);

/// find_symbol for a function: `fn` is set when the symbol exists, else left alone.
template <class F>
bool resolve_function(void* lib, const char* name, F& fn, std::string& missing) {
  void* sym = find_symbol(lib, name, missing);
  if (sym == nullptr) return false;
  fn = reinterpret_cast<F>(sym);  // NOLINT: dlsym returns object pointers for functions
  return true;
}

}  // namespace tnrt
