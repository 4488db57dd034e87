#pragma once
// The `tnrt` tool's exit codes, one per error class (0 is success). The library's errors know
// nothing of them: the tool (and the soak, bench/soak) maps an error to its code by its type.
#include "tnrt/errors.hpp"

namespace tnrt::cli {

enum class exit_code : int {
  ok = 0,
  usage = 2,           // bad command line
  parse = 3,           // malformed JSON, expression or path syntax
  shape = 4,           // rank differs from label count, one label with two extents, ...
  path = 5,            // path index out of range, path not ending in one operand, leaf used twice/never
  dtype = 6,           // unknown or unsupported element type
  io = 7,              // unreadable/unwritable file, bad or mismatched .npy
  out_of_memory = 8,   // host or device memory exhausted, or the network does not fit
  device = 9,          // no GPU, no cuTENSOR, CUDA or cuTENSOR failure
  not_supported = 10,  // a valid request this build or backend cannot do
  verification = 11,   // --verify found a result outside its tolerance
  internal = 70,
};

/// The exit code of `e`'s class (internal for internal_error and any class not listed).
inline exit_code exit_code_of(const tnrt::error& e) noexcept {
  if (dynamic_cast<const usage_error*>(&e) != nullptr) return exit_code::usage;
  if (dynamic_cast<const parse_error*>(&e) != nullptr) return exit_code::parse;
  if (dynamic_cast<const shape_error*>(&e) != nullptr) return exit_code::shape;
  if (dynamic_cast<const path_error*>(&e) != nullptr) return exit_code::path;
  if (dynamic_cast<const dtype_error*>(&e) != nullptr) return exit_code::dtype;
  if (dynamic_cast<const io_error*>(&e) != nullptr) return exit_code::io;
  if (dynamic_cast<const out_of_memory*>(&e) != nullptr) return exit_code::out_of_memory;
  if (dynamic_cast<const device_error*>(&e) != nullptr) return exit_code::device;
  if (dynamic_cast<const not_supported*>(&e) != nullptr) return exit_code::not_supported;
  if (dynamic_cast<const verification_error*>(&e) != nullptr) return exit_code::verification;
  return exit_code::internal;
}

}  // namespace tnrt::cli
