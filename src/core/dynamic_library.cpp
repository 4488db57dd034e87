#include "core/dynamic_library.hpp"

#include <dlfcn.h>

namespace tnrt {

opened_library open_first(const std::vector<std::string>& candidates) {
  opened_library out;
  for (const std::string& c : candidates) {
    out.handle = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (out.handle != nullptr) {
      out.path = c;
      return out;
    }
    const char* why = dlerror();
    out.tried += (out.tried.empty() ? "" : "; ") + c + (why != nullptr ? std::string(" (") + why + ")" : "");
  }
  return out;
}

void* find_symbol(void* lib, const char* name, std::string& missing) {
  void* sym = dlsym(lib, name);
  if (sym == nullptr) missing += missing.empty() ? name : std::string(", ") + name;
  return sym;
}

}  // namespace tnrt
