#pragma once
// Host tensors: owning, row-major, 64-byte aligned.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "tnrt/dtype.hpp"

namespace tnrt {

/// Number of elements of a shape (1 for a scalar, rank 0).
std::int64_t element_count(std::span<const std::int64_t> shape);
/// Row-major strides in elements.
std::vector<std::int64_t> row_major_strides(std::span<const std::int64_t> shape);

class host_tensor {
 public:
  host_tensor() = default;
  /// Uninitialised storage. Throws out_of_memory naming the size if it cannot be had.
  host_tensor(dtype type, std::vector<std::int64_t> shape);

  [[nodiscard]] dtype type() const noexcept { return type_; }
  [[nodiscard]] const std::vector<std::int64_t>& shape() const noexcept { return shape_; }
  [[nodiscard]] std::size_t rank() const noexcept { return shape_.size(); }
  [[nodiscard]] std::int64_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return static_cast<std::size_t>(size_) * size_of(type_); }
  [[nodiscard]] void* data() noexcept { return data_.get(); }
  [[nodiscard]] const void* data() const noexcept { return data_.get(); }
  template <class T> [[nodiscard]] T* as() noexcept { return static_cast<T*>(data()); }
  template <class T> [[nodiscard]] const T* as() const noexcept { return static_cast<const T*>(data()); }

 private:
  struct aligned_free { void operator()(void* p) const noexcept; };
  dtype type_ = dtype::f32;
  std::vector<std::int64_t> shape_;
  std::int64_t size_ = 0;
  std::unique_ptr<void, aligned_free> data_;
};

/// Fill helpers. `fill_constant` writes `value` (real part; imaginary 0). `fill_random` draws from
/// uniform [lo, hi) (both parts for complex types) with a counter-based generator keyed by
/// (seed, stream), so element i gets the same value whatever the thread count.
void fill_constant(host_tensor& t, double value);
void fill_random(host_tensor& t, std::uint64_t seed, std::uint64_t stream, double lo, double hi);

}  // namespace tnrt
