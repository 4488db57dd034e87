#pragma once
// A minimal complex type for tnrt's kernels: cuda::std::complex's multiply carries C99 Annex G
// NaN/infinity handling that these bandwidth-bound kernels do not need. Layout matches
// std::complex (real, imaginary), so host buffers of std::complex<R> are read as is.

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

}  // namespace tnrt::cuda
