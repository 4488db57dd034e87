#pragma once
// Typed errors. Each owns its message; the CLI maps each class to its own exit code and prints the
// message as one line. Expected outcomes (a backend cannot take a step as it is) are values, not
// exceptions.
#include <stdexcept>
#include <string>

namespace tnrt {

/// Exit codes of the `tnrt` tool, one per error class (0 is success).
enum class exit_code : int {
  ok = 0,
  usage = 2,            // bad command line
  parse = 3,            // malformed JSON, expression or path syntax
  shape = 4,            // rank differs from label count, one label with two extents, ...
  path = 5,             // path index out of range, path not ending in one operand, leaf used twice/never
  dtype = 6,            // unknown or unsupported element type
  io = 7,               // unreadable/unwritable file, bad or mismatched .npy
  out_of_memory = 8,    // host or device memory exhausted, or the network does not fit
  device = 9,           // no GPU, no cuTENSOR, CUDA or cuTENSOR failure
  not_supported = 10,   // a valid request this build or backend cannot do
  verification = 11,    // --verify found a result outside its tolerance
  internal = 70,
};

class error : public std::runtime_error {
 public:
  explicit error(const std::string& message) : std::runtime_error(message) {}
  [[nodiscard]] virtual tnrt::exit_code code() const noexcept { return exit_code::internal; }
  /// Short class name printed before the message ("parse error").
  [[nodiscard]] virtual const char* kind() const noexcept { return "internal error"; }
};

#define TNRT_DEFINE_ERROR(name, ec, text)                                                  \
  class name : public error {                                                              \
   public:                                                                                 \
    explicit name(const std::string& message) : error(message) {}                          \
    [[nodiscard]] tnrt::exit_code code() const noexcept override { return exit_code::ec; } \
    [[nodiscard]] const char* kind() const noexcept override { return text; }              \
  };

TNRT_DEFINE_ERROR(usage_error, usage, "usage error")
TNRT_DEFINE_ERROR(parse_error, parse, "parse error")
TNRT_DEFINE_ERROR(shape_error, shape, "shape error")
TNRT_DEFINE_ERROR(path_error, path, "path error")
TNRT_DEFINE_ERROR(dtype_error, dtype, "dtype error")
TNRT_DEFINE_ERROR(io_error, io, "i/o error")
TNRT_DEFINE_ERROR(out_of_memory, out_of_memory, "out of memory")
TNRT_DEFINE_ERROR(device_error, device, "device error")
TNRT_DEFINE_ERROR(not_supported, not_supported, "not supported")
TNRT_DEFINE_ERROR(verification_error, verification, "verification failed")
TNRT_DEFINE_ERROR(internal_error, internal, "internal error")
#undef TNRT_DEFINE_ERROR

}  // namespace tnrt
