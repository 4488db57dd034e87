#pragma once
// Typed errors. Each owns its message and names its class (kind()); the library knows no exit
// codes: the CLI maps each class to its own by type (apps/tnrt/exit_codes.hpp) and prints the
// message as one line. Expected outcomes (a backend cannot take a step as it is) are values, not
// exceptions.
#include <stdexcept>
#include <string>

namespace tnrt {

class error : public std::runtime_error {
 public:
  explicit error(const std::string& message) : std::runtime_error(message) {}
  /// Short class name printed before the message ("parse error").
  [[nodiscard]] virtual const char* kind() const noexcept { return "internal error"; }
};

#define TNRT_DEFINE_ERROR(name, text)                                          \
  class name : public error {                                                  \
   public:                                                                     \
    explicit name(const std::string& message) : error(message) {}              \
    [[nodiscard]] const char* kind() const noexcept override { return text; }  \
  };

TNRT_DEFINE_ERROR(usage_error, "usage error")
TNRT_DEFINE_ERROR(parse_error, "parse error")
TNRT_DEFINE_ERROR(shape_error, "shape error")
TNRT_DEFINE_ERROR(path_error, "path error")
TNRT_DEFINE_ERROR(dtype_error, "dtype error")
TNRT_DEFINE_ERROR(io_error, "i/o error")
TNRT_DEFINE_ERROR(out_of_memory, "out of memory")
TNRT_DEFINE_ERROR(device_error, "device error")
TNRT_DEFINE_ERROR(not_supported, "not supported")
TNRT_DEFINE_ERROR(verification_error, "verification failed")
TNRT_DEFINE_ERROR(internal_error, "internal error")
#undef TNRT_DEFINE_ERROR

}  // namespace tnrt
