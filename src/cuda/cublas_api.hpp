#pragma once
// cuBLAS, opened at run time with dlopen like cuTENSOR (src/cuda/cutensor_api.hpp): compiled
// programs time a step lowered to a strided-batched GEMM (core/gemm_lowering.hpp) against
// cuTENSOR's plans, and a machine without cuBLAS simply keeps cuTENSOR. Types and signatures come
// from the CUDA toolkit's header (never committed); only the entry points tnrt uses are resolved.
#include <cublas_api.h>

#include <memory>
#include <string>

#include "core/gemm_lowering.hpp"
#include "tnrt/dtype.hpp"

namespace tnrt::cuda {

struct cublas_api {
#define TNRT_CUBLAS_FN(name) decltype(&::name) name = nullptr;
  TNRT_CUBLAS_FN(cublasCreate_v2)
  TNRT_CUBLAS_FN(cublasDestroy_v2)
  TNRT_CUBLAS_FN(cublasSetStream_v2)
  TNRT_CUBLAS_FN(cublasSetWorkspace_v2)
  TNRT_CUBLAS_FN(cublasSetMathMode)
  TNRT_CUBLAS_FN(cublasGetVersion_v2)
  TNRT_CUBLAS_FN(cublasGetStatusString)
  TNRT_CUBLAS_FN(cublasSgemmStridedBatched)
  TNRT_CUBLAS_FN(cublasDgemmStridedBatched)
  TNRT_CUBLAS_FN(cublasCgemmStridedBatched)
  TNRT_CUBLAS_FN(cublasZgemmStridedBatched)
#undef TNRT_CUBLAS_FN
  std::string path;  // the file that was opened
  int version = 0;
};

/// The process-wide table, opened on first use from $TNRT_CUBLAS_PATH, the default search path,
/// /opt/tnrt-deps/lib, the CUDA toolkit's and the Python wheels' lib folders; null (with the
/// reason from cublas_unavailable_reason) when none loads. Never throws.
const cublas_api* cublas();
std::string cublas_unavailable_reason();

/// One cuBLAS handle (created on the engine's device at first use): CUBLAS_DEFAULT_MATH (full
/// precision, TF32 off) unless TF32 is asked for.
class blas_handle {
 public:
  /// `tf32`: CUBLAS_TF32_TENSOR_OP_MATH (reduced precision, options::compute_precision tf32).
  explicit blas_handle(bool tf32 = false);  // throws device_error when cuBLAS is missing or the handle cannot be made
  ~blas_handle();
  blas_handle(const blas_handle&) = delete;
  blas_handle& operator=(const blas_handle&) = delete;
  /// Enqueues C = op(X) op(Y) (alpha 1, beta 0) for the step's operands a, b and result d on
  /// `stream`, with `workspace` (may be null with 0 bytes: cuBLAS then picks algorithms that need
  /// none). Capturable into a CUDA graph.
  void gemm(const gemm_form& g, dtype t, const void* a, const void* b, void* d, void* workspace, std::size_t workspace_bytes,
            cudaStream_t stream);

 private:
  const cublas_api* api_;
  cublasHandle_t handle_ = nullptr;
};

}  // namespace tnrt::cuda
