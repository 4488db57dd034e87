#pragma once
// Element types tnrt computes in.
#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tnrt {

enum class dtype : std::uint8_t { f32, f64, c64, c128 };

/// Bytes per element.
constexpr std::size_t size_of(dtype t) noexcept {
  switch (t) {
    case dtype::f32: return 4;
    case dtype::f64: return 8;
    case dtype::c64: return 8;
    case dtype::c128: return 16;
  }
  return 0;
}
constexpr bool is_complex(dtype t) noexcept { return t == dtype::c64 || t == dtype::c128; }
/// True for the double-precision types (f64, c128).
constexpr bool is_double(dtype t) noexcept { return t == dtype::f64 || t == dtype::c128; }

/// "f32", "f64", "c64", "c128".
std::string_view name_of(dtype t) noexcept;
/// Accepts f32/float32/float, f64/float64/double, c64/complex64, c128/complex128 (case-insensitive);
/// throws dtype_error naming the text otherwise.
dtype parse_dtype(std::string_view text);

template <class T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr dtype value = dtype::f32; };
template <> struct dtype_of<double> { static constexpr dtype value = dtype::f64; };
template <> struct dtype_of<std::complex<float>> { static constexpr dtype value = dtype::c64; };
template <> struct dtype_of<std::complex<double>> { static constexpr dtype value = dtype::c128; };

/// Calls f with a value-initialised scalar of the C++ type for t (float, double, complex<float>,
/// complex<double>): `visit_dtype(t, [&](auto zero) { using T = decltype(zero); ... })`.
template <class F>
decltype(auto) visit_dtype(dtype t, F&& f) {
  switch (t) {
    case dtype::f32: return f(float{});
    case dtype::f64: return f(double{});
    case dtype::c64: return f(std::complex<float>{});
    case dtype::c128: break;
  }
  return f(std::complex<double>{});
}

}  // namespace tnrt
