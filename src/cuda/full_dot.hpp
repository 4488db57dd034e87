#pragma once
// tnrt's kernel for full contractions, a step whose result is one element (see src/core/full_dot.hpp).
#include <cuda_runtime_api.h>

#include "core/full_dot.hpp"
#include "tnrt/dtype.hpp"

namespace tnrt::cuda {

/// Enqueues d[0] = sum_i a[a(i)] * b[b(i)] as `r` describes (passed by value: graph capture keeps a
/// copy). `scratch` holds full_dot_scratch_bytes(size_of(t)) bytes, 256-byte aligned, whose counter
/// (after the partial sums) is zero; the launch leaves it zero. Launches that share a scratch must
/// not overlap. Throws cuda_error when the launch fails.
void launch_full_dot(dtype t, const full_dot_record& r, const void* a, const void* b, void* d, void* scratch, cudaStream_t stream);

/// Zeroes the counter of a scratch (once, before its first launch).
void reset_full_dot_scratch(dtype t, void* scratch, cudaStream_t stream);

}  // namespace tnrt::cuda
