#include "tnrt/dtype.hpp"

#include <algorithm>
#include <cctype>
#include <string>

#include "tnrt/errors.hpp"

namespace tnrt {

std::string_view name_of(dtype t) noexcept {
  switch (t) {
    case dtype::f32: return "f32";
    case dtype::f64: return "f64";
    case dtype::c64: return "c64";
    case dtype::c128: return "c128";
  }
  return "?";
}

dtype parse_dtype(std::string_view text) {
  std::string s(text);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (s == "f32" || s == "float32" || s == "float" || s == "single" || s == "<f4") return dtype::f32;
  if (s == "f64" || s == "float64" || s == "double" || s == "<f8") return dtype::f64;
  if (s == "c64" || s == "complex64" || s == "complexf32" || s == "<c8") return dtype::c64;
  if (s == "c128" || s == "complex128" || s == "complex" || s == "complexf64" || s == "<c16") return dtype::c128;
  throw dtype_error("unknown dtype '" + std::string(text) + "' (expected f32, f64, c64 or c128)");
}

}  // namespace tnrt
