#include "cuda/cublas_api.hpp"

#include <cuComplex.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <utility>
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

// A failed call of cuBLAS or cuBLASLt as tnrt's typed error, worded by the library's own status text.
void throw_unless_success(cublasStatus_t st, const char* library, const char* (*status_text)(cublasStatus_t), const char* call) {
  if (st == CUBLAS_STATUS_SUCCESS) return;
  const std::string text = std::string(library) + " " + call + " failed: " + status_text(st);
  if (st == CUBLAS_STATUS_ALLOC_FAILED) throw out_of_memory(text);
  if (st == CUBLAS_STATUS_NOT_SUPPORTED || st == CUBLAS_STATUS_ARCH_MISMATCH) throw not_supported(text);
  throw device_error(text);
}

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

struct loaded_lt {
  cublaslt_api api;
  bool ok = false;
};

loaded_lt open_cublaslt() {
  loaded_lt out;
  std::vector<std::string> c;
  if (const char* p = std::getenv("TNRT_CUBLASLT_PATH"); p != nullptr && *p != '\0') {
    c.emplace_back(p);
  } else {
    // Beside the cuBLAS that loaded (it needs this one, so it is most likely there), then by name.
    const std::string& blas = instance().api.path;
    if (const auto slash = blas.rfind('/'); instance().error.empty() && slash != std::string::npos)
      c.push_back(blas.substr(0, slash + 1) + "libcublasLt.so.13");
    c.emplace_back("libcublasLt.so.13");
  }
  const opened_library opened = open_first(c);
  if (opened.handle == nullptr) return out;
  std::string missing;
  auto& a = out.api;
  a.path = opened.path;
#define TNRT_RESOLVE(name) resolve_function(opened.handle, #name, a.name, missing);
  TNRT_RESOLVE(cublasLtCreate)
  TNRT_RESOLVE(cublasLtDestroy)
  TNRT_RESOLVE(cublasLtGetStatusString)
  TNRT_RESOLVE(cublasLtMatmulDescCreate)
  TNRT_RESOLVE(cublasLtMatmulDescDestroy)
  TNRT_RESOLVE(cublasLtMatmulDescSetAttribute)
  TNRT_RESOLVE(cublasLtMatrixLayoutCreate)
  TNRT_RESOLVE(cublasLtMatrixLayoutDestroy)
  TNRT_RESOLVE(cublasLtMatrixLayoutSetAttribute)
  TNRT_RESOLVE(cublasLtMatmulPreferenceCreate)
  TNRT_RESOLVE(cublasLtMatmulPreferenceDestroy)
  TNRT_RESOLVE(cublasLtMatmulPreferenceSetAttribute)
  TNRT_RESOLVE(cublasLtMatmulAlgoGetHeuristic)
  TNRT_RESOLVE(cublasLtMatmul)
#undef TNRT_RESOLVE
  out.ok = missing.empty();
  return out;
}

void check_lt(const cublaslt_api& api, cublasStatus_t st, const char* call) {
  throw_unless_success(st, "cuBLASLt", api.cublasLtGetStatusString, call);
}

// Alpha 1 and beta 0 in the type's scale type, in host memory (read when a call is enqueued).
std::pair<const void*, const void*> one_and_zero(dtype t) {
  static const float f[2] = {1, 0};
  static const double d[2] = {1, 0};
  static const cuComplex c[2] = {{1, 0}, {0, 0}};
  static const cuDoubleComplex z[2] = {{1, 0}, {0, 0}};
  switch (t) {
    case dtype::f32: return {&f[0], &f[1]};
    case dtype::f64: return {&d[0], &d[1]};
    case dtype::c64: return {&c[0], &c[1]};
    case dtype::c128: return {&z[0], &z[1]};
  }
  return {&f[0], &f[1]};
}

cudaDataType_t data_type_of(dtype t) {
  switch (t) {
    case dtype::f32: return CUDA_R_32F;
    case dtype::f64: return CUDA_R_64F;
    case dtype::c64: return CUDA_C_32F;
    case dtype::c128: return CUDA_C_64F;
  }
  return CUDA_R_32F;
}

void check(const cublas_api& api, cublasStatus_t st, const char* call) { throw_unless_success(st, "cuBLAS", api.cublasGetStatusString, call); }

}  // namespace

const cublas_api* cublas() {
  const loaded& l = instance();
  return l.error.empty() ? &l.api : nullptr;
}

std::string cublas_unavailable_reason() { return instance().error; }

const cublaslt_api* cublaslt() {
  static const loaded_lt l = open_cublaslt();
  return l.ok ? &l.api : nullptr;
}

lt_matmul::lt_matmul(const cublaslt_api& api, cublasLtHandle_t handle, const gemm_form& g, dtype t, bool tf32, std::uint32_t alignment)
    : api_(&api), handle_(handle), g_(g), type_(t), alignment_(alignment) {
  const bool wide = t == dtype::f64 || t == dtype::c128;
  const cublasComputeType_t compute = wide ? CUBLAS_COMPUTE_64F : (tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F);
  const cudaDataType_t data = data_type_of(t);
  try {
    check_lt(api, api.cublasLtMatmulDescCreate(&desc_, compute, data), "MatmulDescCreate");
    const cublasOperation_t tx = g.trans_x ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t ty = g.trans_y ? CUBLAS_OP_T : CUBLAS_OP_N;
    check_lt(api, api.cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &tx, sizeof tx), "MatmulDescSetAttribute");
    check_lt(api, api.cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &ty, sizeof ty), "MatmulDescSetAttribute");
    // Column-major, as stored: X is m x k (k x m when transposed), Y k x n (n x k), C m x n.
    const auto make = [&](cublasLtMatrixLayout_t& out, std::int64_t rows, std::int64_t cols, std::int64_t ld, std::int64_t stride) {
      check_lt(api, api.cublasLtMatrixLayoutCreate(&out, data, static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(cols), ld),
               "MatrixLayoutCreate");
      if (g.batch <= 1) return;
      const auto count = static_cast<std::int32_t>(g.batch);
      check_lt(api, api.cublasLtMatrixLayoutSetAttribute(out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count), "MatrixLayoutSetAttribute");
      check_lt(api, api.cublasLtMatrixLayoutSetAttribute(out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride),
               "MatrixLayoutSetAttribute");
    };
    make(x_, g.trans_x ? g.k : g.m, g.trans_x ? g.m : g.k, g.ldx, g.stride_x);
    make(y_, g.trans_y ? g.n : g.k, g.trans_y ? g.k : g.n, g.ldy, g.stride_y);
    make(c_, g.m, g.n, g.ldc, g.stride_c);
  } catch (...) {
    release();
    throw;
  }
}

lt_matmul::~lt_matmul() { release(); }

void lt_matmul::release() noexcept {
  for (cublasLtMatrixLayout_t* l : {&x_, &y_, &c_}) {
    if (*l != nullptr) (void)api_->cublasLtMatrixLayoutDestroy(*l);
    *l = nullptr;
  }
  if (desc_ != nullptr) (void)api_->cublasLtMatmulDescDestroy(desc_);
  desc_ = nullptr;
}

void lt_matmul::enqueue(int i, const void* a, const void* b, void* d, void* workspace, std::size_t workspace_bytes, cudaStream_t stream) const {
  const void* x = g_.swapped ? b : a;
  const void* y = g_.swapped ? a : b;
  const cublasLtMatmulAlgo_t* algo = &algos_.at(static_cast<std::size_t>(i));
  const auto [one, zero] = one_and_zero(type_);
  check_lt(*api_, api_->cublasLtMatmul(handle_, desc_, one, x, x_, y, y_, zero, d, c_, d, c_, algo, workspace, workspace_bytes, stream), "Matmul");
}

blas_handle::blas_handle(bool tf32) : api_(cublas()), tf32_(tf32) {
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
  if (lt_ != nullptr) (void)cublaslt()->cublasLtDestroy(lt_);
  if (handle_ != nullptr) (void)api_->cublasDestroy_v2(handle_);
}

std::shared_ptr<const lt_matmul> blas_handle::prepare_lt(const gemm_form& g, dtype t, std::uint32_t alignment, std::size_t max_workspace,
                                                         int max_algos) {
  const cublaslt_api* lt = cublaslt();
  if (lt == nullptr || max_algos <= 0) return nullptr;
  if (!lt_tried_) {
    lt_tried_ = true;
    if (lt->cublasLtCreate(&lt_) != CUBLAS_STATUS_SUCCESS) lt_ = nullptr;
  }
  if (lt_ == nullptr) return nullptr;
  std::shared_ptr<lt_matmul> m(new lt_matmul(*lt, lt_, g, t, tf32_, alignment));
  cublasLtMatmulPreference_t pref = nullptr;
  check_lt(*lt, lt->cublasLtMatmulPreferenceCreate(&pref), "MatmulPreferenceCreate");
  std::vector<cublasLtMatmulHeuristicResult_t> found(static_cast<std::size_t>(max_algos));
  int count = 0;
  cublasStatus_t st = lt->cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_workspace, sizeof max_workspace);
  for (const cublasLtMatmulPreferenceAttributes_t which :
       {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    if (st == CUBLAS_STATUS_SUCCESS) st = lt->cublasLtMatmulPreferenceSetAttribute(pref, which, &alignment, sizeof alignment);
  if (st == CUBLAS_STATUS_SUCCESS)
    st = lt->cublasLtMatmulAlgoGetHeuristic(lt_, m->desc_, m->x_, m->y_, m->c_, m->c_, pref, max_algos, found.data(), &count);
  (void)lt->cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS) return nullptr;  // no algorithm for this form (NOT_SUPPORTED) or a refused preference
  for (int i = 0; i < count; ++i)
    if (found[static_cast<std::size_t>(i)].state == CUBLAS_STATUS_SUCCESS && found[static_cast<std::size_t>(i)].workspaceSize <= max_workspace)
      m->algos_.push_back(found[static_cast<std::size_t>(i)].algo);
  if (m->algos_.empty()) return nullptr;
  return m;
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
