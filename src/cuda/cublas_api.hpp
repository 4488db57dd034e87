#pragma once
// cuBLAS, opened at run time with dlopen like cuTENSOR (src/cuda/cutensor_api.hpp): compiled
// programs time a step lowered to a strided-batched GEMM (core/gemm_lowering.hpp) against
// cuTENSOR's plans, and a machine without cuBLAS simply keeps cuTENSOR. Types and signatures come
// from the CUDA toolkit's header (never committed); only the entry points tnrt uses are resolved.
// cuBLASLt, beside it, gives compiled programs the runners-up of its heuristic to time
// (options::gemm_algos).
#include <cublasLt.h>
#include <cublas_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

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

struct cublaslt_api {
#define TNRT_CUBLASLT_FN(name) decltype(&::name) name = nullptr;
  TNRT_CUBLASLT_FN(cublasLtCreate)
  TNRT_CUBLASLT_FN(cublasLtDestroy)
  TNRT_CUBLASLT_FN(cublasLtGetStatusString)
  TNRT_CUBLASLT_FN(cublasLtMatmulDescCreate)
  TNRT_CUBLASLT_FN(cublasLtMatmulDescDestroy)
  TNRT_CUBLASLT_FN(cublasLtMatmulDescSetAttribute)
  TNRT_CUBLASLT_FN(cublasLtMatrixLayoutCreate)
  TNRT_CUBLASLT_FN(cublasLtMatrixLayoutDestroy)
  TNRT_CUBLASLT_FN(cublasLtMatrixLayoutSetAttribute)
  TNRT_CUBLASLT_FN(cublasLtMatmulPreferenceCreate)
  TNRT_CUBLASLT_FN(cublasLtMatmulPreferenceDestroy)
  TNRT_CUBLASLT_FN(cublasLtMatmulPreferenceSetAttribute)
  TNRT_CUBLASLT_FN(cublasLtMatmulAlgoGetHeuristic)
  TNRT_CUBLASLT_FN(cublasLtMatmul)
#undef TNRT_CUBLASLT_FN
  std::string path;
};

/// The process-wide table, opened on first use from $TNRT_CUBLAS_PATH, the default search path,
/// /opt/tnrt-deps/lib, the CUDA toolkit's and the Python wheels' lib folders; null (with the
/// reason from cublas_unavailable_reason) when none loads. Never throws.
const cublas_api* cublas();
std::string cublas_unavailable_reason();

/// cuBLASLt's table, opened on first use from $TNRT_CUBLASLT_PATH, else beside the cuBLAS that
/// loaded (libcublasLt.so.13 in its folder, then by name); null when none loads. Never throws.
const cublaslt_api* cublaslt();

/// One GEMM form prepared for cuBLASLt: its descriptors, and the algorithms cuBLASLt's heuristic
/// ranks first for it (at most `max_algos`, each needing at most `max_workspace` bytes and at most
/// `alignment`), to be timed by a compiled program. Made by blas_handle::prepare_lt.
class lt_matmul {
 public:
  ~lt_matmul();
  lt_matmul(const lt_matmul&) = delete;
  lt_matmul& operator=(const lt_matmul&) = delete;
  [[nodiscard]] int algorithms() const noexcept { return static_cast<int>(algos_.size()); }
  /// The alignment the algorithms were chosen under: operands less aligned must not run them.
  [[nodiscard]] std::uint32_t alignment() const noexcept { return alignment_; }
  /// Enqueues C = op(X) op(Y) (alpha 1, beta 0) with algorithm `i` (< algorithms()). Capturable.
  void enqueue(int i, const void* a, const void* b, void* d, void* workspace, std::size_t workspace_bytes, cudaStream_t stream) const;

 private:
  friend class blas_handle;
  lt_matmul(const cublaslt_api& api, cublasLtHandle_t handle, const gemm_form& g, dtype t, bool tf32, std::uint32_t alignment);
  void release() noexcept;
  const cublaslt_api* api_;
  cublasLtHandle_t handle_;
  gemm_form g_;
  dtype type_;
  std::uint32_t alignment_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t x_ = nullptr, y_ = nullptr, c_ = nullptr;
  std::vector<cublasLtMatmulAlgo_t> algos_;
};

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
  /// The form prepared for cuBLASLt with up to `max_algos` of its heuristic's algorithms, or null
  /// when cuBLASLt is missing or offers none. Same precision as gemm(). Throws device_error when
  /// a descriptor cannot be made.
  std::shared_ptr<const lt_matmul> prepare_lt(const gemm_form& g, dtype t, std::uint32_t alignment, std::size_t max_workspace,
                                              int max_algos);

 private:
  const cublas_api* api_;
  cublasHandle_t handle_ = nullptr;
  bool tf32_ = false;
  cublasLtHandle_t lt_ = nullptr;  // made at the first prepare_lt
  bool lt_tried_ = false;
};

}  // namespace tnrt::cuda
