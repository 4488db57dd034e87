#pragma once
// A minimal complex type for tnrt's kernels: cuda::std::complex's multiply carries C99 Annex G
// NaN/infinity handling that these bandwidth-bound kernels do not need. Layout matches
// std::complex (real, imaginary), so host buffers of std::complex<R> are read as is.

#include "tnrt/dtype.hpp"

namespace tnrt::cuda {

template <class R>
struct device_complex {
  R re, im;
  __device__ device_complex() : re(0), im(0) {}
  __device__ device_complex& operator+=(const device_complex& o) {
    re += o.re;
    im += o.im;
    return *this;
  }
  __device__ friend device_complex operator*(const device_complex& x, const device_complex& y) {
    device_complex r;
    r.re = x.re * y.re - x.im * y.im;
    r.im = x.re * y.im + x.im * y.re;
    return r;
  }
};

/// Calls `f` with a tag whose `type` is the element type tnrt's kernels use for `t` (float, double,
/// device_complex<float>, device_complex<double>): one dtype dispatch for every kernel launcher.
template <class T>
struct element_tag {
  using type = T;
};

template <class F>
void with_element_type(dtype t, F&& f) {
  switch (t) {
    case dtype::f32: f(element_tag<float>{}); break;
    case dtype::f64: f(element_tag<double>{}); break;
    case dtype::c64: f(element_tag<device_complex<float>>{}); break;
    case dtype::c128: f(element_tag<device_complex<double>>{}); break;
  }
}

}  // namespace tnrt::cuda
