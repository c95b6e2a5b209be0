// Status checks and small shared pieces of the CUDA backend (src/cuda/ only; this header
// includes the CUDA headers, so no public header or core file may include it).
//
// Every CUDA runtime, cuBLAS and cuSOLVER call goes through one of the GPUQR_*_CHECK macros,
// which throw with the caller's file and line, so what() reads "file:line: call failed: ...".
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <string>

#include "gpuqr/error.hpp"

namespace gpuqr::cuda_detail {

// ---- status names ---------------------------------------------------------------------------

/// "cudaErrorInvalidValue (invalid argument)": the enum name and the runtime's sentence.
inline std::string cuda_status_text(cudaError_t status) {
  return std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ")";
}

/// "CUBLAS_STATUS_ALLOC_FAILED (resource allocation failed)".
inline std::string cublas_status_text(cublasStatus_t status) {
  return std::string(cublasGetStatusName(status)) + " (" + cublasGetStatusString(status) + ")";
}

/// The enum name of a cuSOLVER status (cuSOLVER has no cusolverGetStatusName).
inline const char* cusolver_status_name(cusolverStatus_t status) {
  switch (status) {
    case CUSOLVER_STATUS_SUCCESS: return "CUSOLVER_STATUS_SUCCESS";
    case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_MAPPING_ERROR: return "CUSOLVER_STATUS_MAPPING_ERROR";
    case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED:
      return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
    case CUSOLVER_STATUS_ZERO_PIVOT: return "CUSOLVER_STATUS_ZERO_PIVOT";
    case CUSOLVER_STATUS_INVALID_LICENSE: return "CUSOLVER_STATUS_INVALID_LICENSE";
    case CUSOLVER_STATUS_IRS_PARAMS_NOT_INITIALIZED:
      return "CUSOLVER_STATUS_IRS_PARAMS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_IRS_PARAMS_INVALID: return "CUSOLVER_STATUS_IRS_PARAMS_INVALID";
    case CUSOLVER_STATUS_IRS_PARAMS_INVALID_PREC:
      return "CUSOLVER_STATUS_IRS_PARAMS_INVALID_PREC";
    case CUSOLVER_STATUS_IRS_PARAMS_INVALID_REFINE:
      return "CUSOLVER_STATUS_IRS_PARAMS_INVALID_REFINE";
    case CUSOLVER_STATUS_IRS_PARAMS_INVALID_MAXITER:
      return "CUSOLVER_STATUS_IRS_PARAMS_INVALID_MAXITER";
    case CUSOLVER_STATUS_IRS_INTERNAL_ERROR: return "CUSOLVER_STATUS_IRS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_IRS_NOT_SUPPORTED: return "CUSOLVER_STATUS_IRS_NOT_SUPPORTED";
    case CUSOLVER_STATUS_IRS_OUT_OF_RANGE: return "CUSOLVER_STATUS_IRS_OUT_OF_RANGE";
    case CUSOLVER_STATUS_IRS_NRHS_NOT_SUPPORTED_FOR_REFINE_GMRES:
      return "CUSOLVER_STATUS_IRS_NRHS_NOT_SUPPORTED_FOR_REFINE_GMRES";
    case CUSOLVER_STATUS_IRS_INFOS_NOT_INITIALIZED:
      return "CUSOLVER_STATUS_IRS_INFOS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_IRS_INFOS_NOT_DESTROYED:
      return "CUSOLVER_STATUS_IRS_INFOS_NOT_DESTROYED";
    case CUSOLVER_STATUS_IRS_MATRIX_SINGULAR: return "CUSOLVER_STATUS_IRS_MATRIX_SINGULAR";
    case CUSOLVER_STATUS_INVALID_WORKSPACE: return "CUSOLVER_STATUS_INVALID_WORKSPACE";
  }
  return "CUSOLVER_STATUS_<unknown>";
}

// ---- throwing helpers (file and line are the caller's, passed in by the macros) -------------

/// Throws OutOfMemory for cudaErrorMemoryAllocation, CudaError otherwise.
[[noreturn]] inline void throw_cuda(cudaError_t status, const char* call, const char* file,
                                    int line) {
  const std::string message = std::string(call) + " failed: " + cuda_status_text(status);
  if (status == cudaErrorMemoryAllocation) {
    // An allocation failure is not sticky but is remembered as the "last error"; clear it so
    // that the next launch check does not report it again.
    (void)cudaGetLastError();
    throw ::gpuqr::OutOfMemory(file, line, message);
  }
  throw ::gpuqr::CudaError(file, line, message);
}

/// Throws CublasError.
[[noreturn]] inline void throw_cublas(cublasStatus_t status, const char* call, const char* file,
                                      int line) {
  throw ::gpuqr::CublasError(file, line,
                             std::string(call) + " failed: " + cublas_status_text(status));
}

/// Throws CusolverError.
[[noreturn]] inline void throw_cusolver(cusolverStatus_t status, const char* call,
                                        const char* file, int line) {
  throw ::gpuqr::CusolverError(file, line, std::string(call) + " failed: " +
                                               cusolver_status_name(status) + " (status " +
                                               std::to_string(static_cast<int>(status)) + ")");
}

// ---- shared pieces --------------------------------------------------------------------------

/// Makes `device` current for the guard's lifetime and restores the previous device after.
/// cuBLAS/cuSOLVER handles and our streams belong to one device, and using them while another
/// device is current fails, so every backend entry point holds one of these.
class DeviceGuard {
 public:
  /// Throws CudaError when the device cannot be made current.
  explicit DeviceGuard(int device);
  /// Best effort for noexcept paths (release, free): failures are swallowed.
  DeviceGuard(int device, std::nothrow_t) noexcept;
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
  bool changed_ = false;
};

inline DeviceGuard::DeviceGuard(int device) {
  const cudaError_t got = cudaGetDevice(&previous_);
  if (got != cudaSuccess) {
    (void)cudaGetLastError();
    throw ::gpuqr::CudaError(__FILE__, __LINE__,
                             "cannot select cuda:" + std::to_string(device) +
                                 ": cudaGetDevice failed: " + cuda_status_text(got));
  }
  if (previous_ != device) {
    const cudaError_t set = cudaSetDevice(device);
    if (set != cudaSuccess) {
      (void)cudaGetLastError();
      throw ::gpuqr::CudaError(__FILE__, __LINE__,
                               "cannot select cuda:" + std::to_string(device) +
                                   ": cudaSetDevice failed: " + cuda_status_text(set));
    }
    changed_ = true;
  }
}

inline DeviceGuard::DeviceGuard(int device, std::nothrow_t) noexcept {
  if (cudaGetDevice(&previous_) != cudaSuccess) {
    (void)cudaGetLastError();
    previous_ = -1;
  }
  if (previous_ != device) {
    changed_ = previous_ >= 0 && cudaSetDevice(device) == cudaSuccess;
    if (!changed_) (void)cudaGetLastError();
  }
}

inline DeviceGuard::~DeviceGuard() {
  if (changed_ && cudaSetDevice(previous_) != cudaSuccess) (void)cudaGetLastError();
}

/// `v` as the int that cuBLAS/cuSOLVER take; InvalidArgument naming `routine` and `what`
/// when it does not fit (the 32-bit APIs cannot address such a matrix).
inline int to_cuda_int(std::int64_t v, const char* what, const char* routine) {
  if (v < 0 || v > std::numeric_limits<int>::max()) {
    throw ::gpuqr::InvalidArgument(__FILE__, __LINE__,
                                   std::string(routine) + ": " + what + " = " +
                                       std::to_string(v) + " does not fit the 32-bit int of " +
                                       "the CUDA library interface (max " +
                                       std::to_string(std::numeric_limits<int>::max()) + ")");
  }
  return static_cast<int>(v);
}

// Layout of ContextImpl::scratch, the small per-context device buffer allocated by
// cuda_init_context. Only stream-ordered work touches it, so kernels may share it freely.
inline constexpr std::size_t kScratchBytes = 4096;
inline constexpr std::size_t kScratchInfoOffset = 0;      // int devInfo of cuSOLVER calls
inline constexpr std::size_t kScratchResultOffset = 256;  // doubles read back to the host
inline constexpr std::size_t kScratchResultDoubles =
    (kScratchBytes - kScratchResultOffset) / sizeof(double);

}  // namespace gpuqr::cuda_detail

/// Runs a CUDA runtime call; throws CudaError (OutOfMemory for cudaErrorMemoryAllocation)
/// naming the call and the status.
#define GPUQR_CUDA_CHECK(call)                                                          \
  do {                                                                                  \
    const cudaError_t gpuqr_cuda_status_ = (call);                                      \
    if (gpuqr_cuda_status_ != cudaSuccess) {                                            \
      ::gpuqr::cuda_detail::throw_cuda(gpuqr_cuda_status_, #call, __FILE__, __LINE__);  \
    }                                                                                   \
  } while (0)

/// Runs a cuBLAS call; throws CublasError naming the call and the status.
#define GPUQR_CUBLAS_CHECK(call)                                                            \
  do {                                                                                      \
    const cublasStatus_t gpuqr_cublas_status_ = (call);                                     \
    if (gpuqr_cublas_status_ != CUBLAS_STATUS_SUCCESS) {                                    \
      ::gpuqr::cuda_detail::throw_cublas(gpuqr_cublas_status_, #call, __FILE__, __LINE__);  \
    }                                                                                       \
  } while (0)

/// Runs a cuSOLVER call; throws CusolverError naming the call and the status.
#define GPUQR_CUSOLVER_CHECK(call)                                                              \
  do {                                                                                          \
    const cusolverStatus_t gpuqr_cusolver_status_ = (call);                                     \
    if (gpuqr_cusolver_status_ != CUSOLVER_STATUS_SUCCESS) {                                    \
      ::gpuqr::cuda_detail::throw_cusolver(gpuqr_cusolver_status_, #call, __FILE__, __LINE__);  \
    }                                                                                           \
  } while (0)

/// After a kernel launch: reports a launch failure (bad configuration, no kernel image for
/// this GPU). With GPUQR_DEBUG_SYNC it also waits for `stream`, so that a fault inside the
/// kernel is reported here rather than at some later, unrelated call.
#ifdef GPUQR_DEBUG_SYNC
#define GPUQR_CUDA_CHECK_LAUNCH(stream)                \
  do {                                                 \
    GPUQR_CUDA_CHECK(cudaGetLastError());              \
    GPUQR_CUDA_CHECK(cudaStreamSynchronize(stream));   \
  } while (0)
#else
#define GPUQR_CUDA_CHECK_LAUNCH(stream)                \
  do {                                                 \
    (void)(stream);                                    \
    GPUQR_CUDA_CHECK(cudaGetLastError());              \
  } while (0)
#endif
