#include "cuda/cublas_api.hpp"

#include <cuComplex.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/dynamic_library.hpp"
#include "tnrt/errors.hpp"

#ifndef TNRT_CUDA_TOOLKIT_LIBDIR
#define TNRT_CUDA_TOOLKIT_LIBDIR ""
#endif
#ifndef TNRT_PYTHON_SITE_DIR
#define TNRT_PYTHON_SITE_DIR ""
#endif

namespace tnrt::cuda {
namespace {

struct loaded {
  cublas_api api;
  std::string error;  // empty when loaded
};

std::vector<std::string> candidates() {
  if (const char* p = std::getenv("TNRT_CUBLAS_PATH"); p != nullptr && *p != '\0') return {p};
  std::vector<std::string> c{"libcublas.so.13", "/opt/tnrt-deps/lib/libcublas.so.13"};
  if (const std::string dir = TNRT_CUDA_TOOLKIT_LIBDIR; !dir.empty()) c.push_back(dir + "/libcublas.so.13");
  c.emplace_back("/usr/local/cuda/lib64/libcublas.so.13");
  if (const std::string site = TNRT_PYTHON_SITE_DIR; !site.empty()) {
    c.push_back(site + "/nvidia/cu13/lib/libcublas.so.13");
    c.push_back(site + "/nvidia/cublas/lib/libcublas.so.13");
  }
  return c;
}

loaded open_cublas() {
  loaded out;
  const opened_library opened = open_first(candidates());
  void* lib = opened.handle;
  out.api.path = opened.path;
  if (lib == nullptr) {
    out.error = "cuBLAS not found: tried " + opened.tried + "; set TNRT_CUBLAS_PATH to libcublas.so.13";
    return out;
  }
  std::string missing;
  auto& a = out.api;
#define TNRT_RESOLVE(name) resolve_function(lib, #name, a.name, missing);
  TNRT_RESOLVE(cublasCreate_v2)
  TNRT_RESOLVE(cublasDestroy_v2)
  TNRT_RESOLVE(cublasSetStream_v2)
  TNRT_RESOLVE(cublasSetWorkspace_v2)
  TNRT_RESOLVE(cublasSetMathMode)
  TNRT_RESOLVE(cublasGetVersion_v2)
  TNRT_RESOLVE(cublasGetStatusString)
  TNRT_RESOLVE(cublasSgemmStridedBatched)
  TNRT_RESOLVE(cublasDgemmStridedBatched)
  TNRT_RESOLVE(cublasCgemmStridedBatched)
  TNRT_RESOLVE(cublasZgemmStridedBatched)
#undef TNRT_RESOLVE
  if (!missing.empty()) {
    out.error = "cuBLAS at " + a.path + " lacks " + missing;
    return out;
  }
  return out;
}

const loaded& instance() {
  static const loaded l = open_cublas();
  return l;
}

void check(const cublas_api& api, cublasStatus_t st, const char* call) {
  if (st == CUBLAS_STATUS_SUCCESS) return;
  const std::string text = std::string("cuBLAS ") + call + " failed: " + api.cublasGetStatusString(st);
  if (st == CUBLAS_STATUS_ALLOC_FAILED) throw out_of_memory(text);
  if (st == CUBLAS_STATUS_NOT_SUPPORTED || st == CUBLAS_STATUS_ARCH_MISMATCH) throw not_supported(text);
  throw device_error(text);
}

}  // namespace

const cublas_api* cublas() {
  const loaded& l = instance();
  return l.error.empty() ? &l.api : nullptr;
}

std::string cublas_unavailable_reason() { return instance().error; }

blas_handle::blas_handle(bool tf32) : api_(cublas()) {
  if (api_ == nullptr) throw device_error(cublas_unavailable_reason());
  check(*api_, api_->cublasCreate_v2(&handle_), "cublasCreate");
  try {
    check(*api_, api_->cublasSetMathMode(handle_, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  } catch (...) {
    (void)api_->cublasDestroy_v2(handle_);
    throw;
  }
}

blas_handle::~blas_handle() {
  if (handle_ != nullptr) (void)api_->cublasDestroy_v2(handle_);
}

void blas_handle::gemm(const gemm_form& g, dtype t, const void* a, const void* b, void* d, void* workspace, std::size_t workspace_bytes,
                       cudaStream_t stream) {
  check(*api_, api_->cublasSetStream_v2(handle_, stream), "cublasSetStream");
  check(*api_, api_->cublasSetWorkspace_v2(handle_, workspace, workspace == nullptr ? 0 : workspace_bytes), "cublasSetWorkspace");
  const void* x = g.swapped ? b : a;
  const void* y = g.swapped ? a : b;
  const cublasOperation_t tx = g.trans_x ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t ty = g.trans_y ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int m = static_cast<int>(g.m), n = static_cast<int>(g.n), k = static_cast<int>(g.k), batch = static_cast<int>(g.batch);
  const int ldx = static_cast<int>(g.ldx), ldy = static_cast<int>(g.ldy), ldc = static_cast<int>(g.ldc);
  cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
  switch (t) {
    case dtype::f32: {
      const float one = 1, zero = 0;
      st = api_->cublasSgemmStridedBatched(handle_, tx, ty, m, n, k, &one, static_cast<const float*>(x), ldx, g.stride_x,
                                           static_cast<const float*>(y), ldy, g.stride_y, &zero, static_cast<float*>(d), ldc, g.stride_c, batch);
      break;
    }
    case dtype::f64: {
      const double one = 1, zero = 0;
      st = api_->cublasDgemmStridedBatched(handle_, tx, ty, m, n, k, &one, static_cast<const double*>(x), ldx, g.stride_x,
                                           static_cast<const double*>(y), ldy, g.stride_y, &zero, static_cast<double*>(d), ldc, g.stride_c, batch);
      break;
    }
    case dtype::c64: {
      const cuComplex one{1, 0}, zero{0, 0};
      st = api_->cublasCgemmStridedBatched(handle_, tx, ty, m, n, k, &one, static_cast<const cuComplex*>(x), ldx, g.stride_x,
                                           static_cast<const cuComplex*>(y), ldy, g.stride_y, &zero, static_cast<cuComplex*>(d), ldc, g.stride_c,
                                           batch);
      break;
    }
    case dtype::c128: {
      const cuDoubleComplex one{1, 0}, zero{0, 0};
      st = api_->cublasZgemmStridedBatched(handle_, tx, ty, m, n, k, &one, static_cast<const cuDoubleComplex*>(x), ldx, g.stride_x,
                                           static_cast<const cuDoubleComplex*>(y), ldy, g.stride_y, &zero, static_cast<cuDoubleComplex*>(d), ldc,
                                           g.stride_c, batch);
      break;
    }
  }
  check(*api_, st, "gemmStridedBatched");
}

}  // namespace tnrt::cuda
