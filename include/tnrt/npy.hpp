#pragma once
// NumPy .npy files (format 1.0/2.0/3.0), little-endian f4/f8/c8/c16, C order (fortran_order False;
// a Fortran-ordered file is read and transposed into C order).
#include <string>

#include "tnrt/tensor.hpp"

namespace tnrt {

/// Throws io_error naming the file and the problem (unreadable, bad magic, unsupported descr,
/// truncated data).
host_tensor read_npy(const std::string& path);
/// Writes to a temporary file beside `path` and renames it into place, so a failed write leaves no
/// half-written file. Throws io_error.
void write_npy(const std::string& path, const host_tensor& t);

}  // namespace tnrt
