#include "tnrt/tensor.hpp"

#include <cstdlib>
#include <new>
#include <string>

#include "tnrt/errors.hpp"

namespace tnrt {

std::int64_t element_count(std::span<const std::int64_t> shape) {
  std::int64_t n = 1;
  for (std::int64_t e : shape) {
    if (e < 0) throw shape_error("negative extent " + std::to_string(e));
    if (e != 0 && n > INT64_MAX / e) throw shape_error("tensor too large: element count overflows 64 bits");
    n *= e;
  }
  return n;
}

std::vector<std::int64_t> row_major_strides(std::span<const std::int64_t> shape) {
  std::vector<std::int64_t> s(shape.size());
  std::int64_t acc = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    acc *= shape[i];
  }
  return s;
}

void host_tensor::aligned_free::operator()(void* p) const noexcept { std::free(p); }

host_tensor::host_tensor(dtype type, std::vector<std::int64_t> shape)
    : type_(type), shape_(std::move(shape)), size_(element_count(shape_)) {
  const std::size_t want = static_cast<std::size_t>(size_) * size_of(type_);
  const std::size_t bytes = ((want ? want : 1) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, bytes);
  if (p == nullptr) throw out_of_memory("cannot allocate " + std::to_string(want) + " bytes of host memory for a tensor");
  data_.reset(p);
}

namespace {
// splitmix64: a counter-based generator, so element i's value does not depend on threading.
inline std::uint64_t mix(std::uint64_t x) noexcept {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}
inline double unit(std::uint64_t x) noexcept { return static_cast<double>(x >> 11) * 0x1.0p-53; }
}  // namespace

void fill_constant(host_tensor& t, double value) {
  visit_dtype(t.type(), [&](auto zero) {
    using T = decltype(zero);
    T* p = t.as<T>();
    const T v = static_cast<T>(value);
    for (std::int64_t i = 0; i < t.size(); ++i) p[i] = v;
  });
}

void fill_random(host_tensor& t, std::uint64_t seed, std::uint64_t stream, double lo, double hi) {
  const std::uint64_t key = mix(seed ^ mix(stream + 0x632BE59BD9B4E019ULL));
  visit_dtype(t.type(), [&](auto zero) {
    using T = decltype(zero);
    T* p = t.as<T>();
    for (std::int64_t i = 0; i < t.size(); ++i) {
      const auto c = static_cast<std::uint64_t>(i) * 2;
      const double re = lo + (hi - lo) * unit(mix(key ^ c));
      if constexpr (std::is_floating_point_v<T>) {
        p[i] = static_cast<T>(re);
      } else {
        const double im = lo + (hi - lo) * unit(mix(key ^ (c + 1)));
        p[i] = T(static_cast<typename T::value_type>(re), static_cast<typename T::value_type>(im));
      }
    }
  });
}

}  // namespace tnrt
