// The GPU baseline: cuSOLVER (geqrf, orgqr, ormqr) and cuBLAS (trsm) on a stream of their
// own. Inputs are uploaded and workspaces allocated before timing; every repetition restores
// the input with a device-to-device copy, then times only the library calls with a pair of
// CUDA events on the stream. devInfo is checked after each repetition, outside the timing.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "bench/baseline.hpp"

namespace gpuqr::bench {
namespace {

[[noreturn]] void fail(const std::string& what, const char* file, int line) {
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + what);
}

#define BENCH_CUDA(call)                                                                   \
  do {                                                                                     \
    const cudaError_t s_ = (call);                                                         \
    if (s_ != cudaSuccess) fail(std::string(#call " failed: ") + cudaGetErrorString(s_),   \
                                __FILE__, __LINE__);                                       \
  } while (0)
#define BENCH_CUBLAS(call)                                                                 \
  do {                                                                                     \
    const cublasStatus_t s_ = (call);                                                      \
    if (s_ != CUBLAS_STATUS_SUCCESS)                                                       \
      fail(std::string(#call " failed: ") + cublasGetStatusName(s_), __FILE__, __LINE__);  \
  } while (0)
#define BENCH_CUSOLVER(call)                                                               \
  do {                                                                                     \
    const cusolverStatus_t s_ = (call);                                                    \
    if (s_ != CUSOLVER_STATUS_SUCCESS)                                                     \
      fail(std::string(#call " failed: status ") + std::to_string(static_cast<int>(s_)),   \
           __FILE__, __LINE__);                                                            \
  } while (0)

/// `v` as the int of the 32-bit cuSOLVER/cuBLAS interface.
int as_int(std::int64_t v) {
  if (v < 0 || v > std::numeric_limits<int>::max()) {
    throw std::runtime_error("cuSOLVER baseline: size " + std::to_string(v) + " exceeds int");
  }
  return static_cast<int>(v);
}

// ---- typed overloads ------------------------------------------------------------------------
cusolverStatus_t geqrf_size(cusolverDnHandle_t h, int m, int n, double* a, int lda, int* lw) {
  return cusolverDnDgeqrf_bufferSize(h, m, n, a, lda, lw);
}
cusolverStatus_t geqrf_size(cusolverDnHandle_t h, int m, int n, float* a, int lda, int* lw) {
  return cusolverDnSgeqrf_bufferSize(h, m, n, a, lda, lw);
}
cusolverStatus_t geqrf(cusolverDnHandle_t h, int m, int n, double* a, int lda, double* tau,
                       double* w, int lw, int* info) {
  return cusolverDnDgeqrf(h, m, n, a, lda, tau, w, lw, info);
}
cusolverStatus_t geqrf(cusolverDnHandle_t h, int m, int n, float* a, int lda, float* tau,
                       float* w, int lw, int* info) {
  return cusolverDnSgeqrf(h, m, n, a, lda, tau, w, lw, info);
}
cusolverStatus_t orgqr_size(cusolverDnHandle_t h, int m, int n, int k, const double* a, int lda,
                            const double* tau, int* lw) {
  return cusolverDnDorgqr_bufferSize(h, m, n, k, a, lda, tau, lw);
}
cusolverStatus_t orgqr_size(cusolverDnHandle_t h, int m, int n, int k, const float* a, int lda,
                            const float* tau, int* lw) {
  return cusolverDnSorgqr_bufferSize(h, m, n, k, a, lda, tau, lw);
}
cusolverStatus_t orgqr(cusolverDnHandle_t h, int m, int n, int k, double* a, int lda,
                       const double* tau, double* w, int lw, int* info) {
  return cusolverDnDorgqr(h, m, n, k, a, lda, tau, w, lw, info);
}
cusolverStatus_t orgqr(cusolverDnHandle_t h, int m, int n, int k, float* a, int lda,
                       const float* tau, float* w, int lw, int* info) {
  return cusolverDnSorgqr(h, m, n, k, a, lda, tau, w, lw, info);
}
cusolverStatus_t ormqr_size(cusolverDnHandle_t h, int m, int n, int k, const double* a, int lda,
                            const double* tau, const double* c, int ldc, int* lw) {
  return cusolverDnDormqr_bufferSize(h, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, m, n, k, a, lda, tau, c,
                                     ldc, lw);
}
cusolverStatus_t ormqr_size(cusolverDnHandle_t h, int m, int n, int k, const float* a, int lda,
                            const float* tau, const float* c, int ldc, int* lw) {
  return cusolverDnSormqr_bufferSize(h, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, m, n, k, a, lda, tau, c,
                                     ldc, lw);
}
/// C := Q^T C from the left.
cusolverStatus_t ormqr(cusolverDnHandle_t h, int m, int n, int k, const double* a, int lda,
                       const double* tau, double* c, int ldc, double* w, int lw, int* info) {
  return cusolverDnDormqr(h, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, m, n, k, a, lda, tau, c, ldc, w, lw,
                          info);
}
cusolverStatus_t ormqr(cusolverDnHandle_t h, int m, int n, int k, const float* a, int lda,
                       const float* tau, float* c, int ldc, float* w, int lw, int* info) {
  return cusolverDnSormqr(h, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, m, n, k, a, lda, tau, c, ldc, w, lw,
                          info);
}
/// B := R^{-1} B, R upper triangular n x n.
cublasStatus_t trsm_upper(cublasHandle_t h, int n, int nrhs, const double* r, int ldr,
                          double* b, int ldb) {
  const double one = 1.0;
  return cublasDtrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                     CUBLAS_DIAG_NON_UNIT, n, nrhs, &one, r, ldr, b, ldb);
}
cublasStatus_t trsm_upper(cublasHandle_t h, int n, int nrhs, const float* r, int ldr, float* b,
                          int ldb) {
  const float one = 1.0f;
  return cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                     CUBLAS_DIAG_NON_UNIT, n, nrhs, &one, r, ldr, b, ldb);
}

/// Device memory for `count` elements of T (at least one), freed on destruction.
template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(std::int64_t count) {
    const std::size_t bytes = static_cast<std::size_t>(std::max<std::int64_t>(count, 1)) * sizeof(T);
    BENCH_CUDA(cudaMalloc(reinterpret_cast<void**>(&data_), bytes));
  }
  ~DeviceArray() { cudaFree(data_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* get() const { return data_; }

 private:
  T* data_ = nullptr;
};

/// cuSOLVER/cuBLAS on one device and one stream.
class CusolverBaseline final : public Baseline {
 public:
  explicit CusolverBaseline(int device) : device_(device) {
    try {
      BENCH_CUDA(cudaSetDevice(device_));
      BENCH_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
      BENCH_CUSOLVER(cusolverDnCreate(&solver_));
      BENCH_CUSOLVER(cusolverDnSetStream(solver_, stream_));
      BENCH_CUBLAS(cublasCreate(&blas_));
      BENCH_CUBLAS(cublasSetStream(blas_, stream_));
      BENCH_CUDA(cudaEventCreate(&start_));
      BENCH_CUDA(cudaEventCreate(&stop_));
      BENCH_CUDA(cudaMalloc(reinterpret_cast<void**>(&info_), sizeof(int)));
    } catch (...) {
      release();
      throw;
    }
  }
  ~CusolverBaseline() override { release(); }
  CusolverBaseline(const CusolverBaseline&) = delete;
  CusolverBaseline& operator=(const CusolverBaseline&) = delete;

  std::string name() const override { return "cusolver"; }
  std::string describe() const override {
    cudaDeviceProp prop{};
    int version = 0;
    cusolverGetProperty(MAJOR_VERSION, &version);
    int minor = 0;
    cusolverGetProperty(MINOR_VERSION, &minor);
    std::string text = "cuSOLVER " + std::to_string(version) + "." + std::to_string(minor);
    if (cudaGetDeviceProperties(&prop, device_) == cudaSuccess) {
      text += std::string(" on cuda:") + std::to_string(device_) + " " + prop.name;
    }
    return text;
  }

  BaselineRun<double> run_geqrf(MatrixView<const double> a, const TimingPlan& p) override {
    return do_geqrf(a, p);
  }
  BaselineRun<float> run_geqrf(MatrixView<const float> a, const TimingPlan& p) override {
    return do_geqrf(a, p);
  }
  BaselineRun<double> run_orgqr(MatrixView<const double> r, MatrixView<const double> tau,
                                const TimingPlan& p) override {
    return do_orgqr(r, tau, p);
  }
  BaselineRun<float> run_orgqr(MatrixView<const float> r, MatrixView<const float> tau,
                               const TimingPlan& p) override {
    return do_orgqr(r, tau, p);
  }
  BaselineRun<double> run_ormqr(MatrixView<const double> r, MatrixView<const double> tau,
                                MatrixView<const double> c, const TimingPlan& p) override {
    return do_ormqr(r, tau, c, p);
  }
  BaselineRun<float> run_ormqr(MatrixView<const float> r, MatrixView<const float> tau,
                               MatrixView<const float> c, const TimingPlan& p) override {
    return do_ormqr(r, tau, c, p);
  }
  BaselineRun<double> run_gels(MatrixView<const double> a, MatrixView<const double> b,
                               const TimingPlan& p) override {
    return do_gels(a, b, p);
  }
  BaselineRun<float> run_gels(MatrixView<const float> a, MatrixView<const float> b,
                              const TimingPlan& p) override {
    return do_gels(a, b, p);
  }

 private:
  /// Host view -> device array with ld = rows (synchronous with respect to the stream).
  template <class T>
  void upload(MatrixView<const T> src, T* dst) {
    if (src.empty()) return;
    BENCH_CUDA(cudaMemcpy2DAsync(dst, src.rows() * sizeof(T), src.data(), src.ld() * sizeof(T),
                                 src.rows() * sizeof(T), src.cols(), cudaMemcpyHostToDevice,
                                 stream_));
    BENCH_CUDA(cudaStreamSynchronize(stream_));
  }
  /// Device array (ld = rows) -> a new host matrix.
  template <class T>
  Matrix<T> download(const T* src, std::int64_t rows, std::int64_t cols) {
    Matrix<T> out(rows, cols);
    if (rows > 0 && cols > 0) {
      BENCH_CUDA(cudaMemcpy2DAsync(out.data(), out.ld() * sizeof(T), src, rows * sizeof(T),
                                   rows * sizeof(T), cols, cudaMemcpyDeviceToHost, stream_));
    }
    BENCH_CUDA(cudaStreamSynchronize(stream_));
    return out;
  }
  /// Enqueues a device-to-device copy of `count` elements.
  template <class T>
  void restore(T* dst, const T* src, std::int64_t count) {
    BENCH_CUDA(cudaMemcpyAsync(dst, src, static_cast<std::size_t>(count) * sizeof(T),
                               cudaMemcpyDeviceToDevice, stream_));
  }

  /// warmup + repeat repetitions of restore(); [start] call(); [stop]; devInfo checked.
  template <class Restore, class Call>
  std::vector<double> time_events(const TimingPlan& plan, const char* what, Restore&& restore,
                                  Call&& call) {
    std::vector<double> times;
    for (int r = 0; r < plan.warmup + plan.repeat; ++r) {
      restore();
      BENCH_CUDA(cudaMemsetAsync(info_, 0, sizeof(int), stream_));
      BENCH_CUDA(cudaEventRecord(start_, stream_));
      call();
      BENCH_CUDA(cudaEventRecord(stop_, stream_));
      BENCH_CUDA(cudaEventSynchronize(stop_));
      float ms = 0.0f;
      BENCH_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
      int info = 0;
      BENCH_CUDA(cudaMemcpyAsync(&info, info_, sizeof(int), cudaMemcpyDeviceToHost, stream_));
      BENCH_CUDA(cudaStreamSynchronize(stream_));
      if (info != 0) {
        throw std::runtime_error(std::string("cuSOLVER ") + what + " returned devInfo = " +
                                 std::to_string(info));
      }
      if (r >= plan.warmup) times.push_back(static_cast<double>(ms));
    }
    return times;
  }

  template <class T>
  BaselineRun<T> do_geqrf(MatrixView<const T> a, const TimingPlan& plan) {
    BENCH_CUDA(cudaSetDevice(device_));
    const int m = as_int(a.rows()), n = as_int(a.cols()), k = std::min(m, n);
    const std::int64_t count = a.rows() * a.cols();
    DeviceArray<T> pristine(count), work_a(count), tau(k);
    upload(a, pristine.get());
    int lwork = 0;
    BENCH_CUSOLVER(geqrf_size(solver_, m, n, work_a.get(), std::max(1, m), &lwork));
    DeviceArray<T> work(lwork);
    BaselineRun<T> run;
    run.times_ms = time_events(
        plan, "geqrf", [&] { restore(work_a.get(), pristine.get(), count); },
        [&] {
          BENCH_CUSOLVER(geqrf(solver_, m, n, work_a.get(), std::max(1, m), tau.get(),
                               work.get(), lwork, info_));
        });
    run.out = download(work_a.get(), m, n);
    run.tau = download(tau.get(), k, 1);
    return run;
  }

  template <class T>
  BaselineRun<T> do_orgqr(MatrixView<const T> refl, MatrixView<const T> tau_host,
                          const TimingPlan& plan) {
    BENCH_CUDA(cudaSetDevice(device_));
    const int m = as_int(refl.rows()), k = as_int(refl.cols());
    const std::int64_t count = refl.rows() * refl.cols();
    DeviceArray<T> pristine(count), work_a(count), tau(k);
    upload(refl, pristine.get());
    upload(tau_host, tau.get());
    int lwork = 0;
    BENCH_CUSOLVER(orgqr_size(solver_, m, k, k, work_a.get(), std::max(1, m), tau.get(), &lwork));
    DeviceArray<T> work(lwork);
    BaselineRun<T> run;
    run.times_ms = time_events(
        plan, "orgqr", [&] { restore(work_a.get(), pristine.get(), count); },
        [&] {
          BENCH_CUSOLVER(orgqr(solver_, m, k, k, work_a.get(), std::max(1, m), tau.get(),
                               work.get(), lwork, info_));
        });
    run.out = download(work_a.get(), m, k);
    return run;
  }

  template <class T>
  BaselineRun<T> do_ormqr(MatrixView<const T> refl, MatrixView<const T> tau_host,
                          MatrixView<const T> c, const TimingPlan& plan) {
    BENCH_CUDA(cudaSetDevice(device_));
    const int m = as_int(c.rows()), nrhs = as_int(c.cols()), k = as_int(refl.cols());
    const std::int64_t count = c.rows() * c.cols();
    DeviceArray<T> a(refl.rows() * refl.cols()), tau(k), pristine(count), work_c(count);
    upload(refl, a.get());
    upload(tau_host, tau.get());
    upload(c, pristine.get());
    const int ld = std::max(1, m);
    int lwork = 0;
    BENCH_CUSOLVER(ormqr_size(solver_, m, nrhs, k, a.get(), ld, tau.get(), work_c.get(), ld,
                              &lwork));
    DeviceArray<T> work(lwork);
    BaselineRun<T> run;
    run.times_ms = time_events(
        plan, "ormqr", [&] { restore(work_c.get(), pristine.get(), count); },
        [&] {
          BENCH_CUSOLVER(ormqr(solver_, m, nrhs, k, a.get(), ld, tau.get(), work_c.get(), ld,
                               work.get(), lwork, info_));
        });
    run.out = download(work_c.get(), m, nrhs);
    return run;
  }

  template <class T>
  BaselineRun<T> do_gels(MatrixView<const T> a, MatrixView<const T> b, const TimingPlan& plan) {
    BENCH_CUDA(cudaSetDevice(device_));
    const int m = as_int(a.rows()), n = as_int(a.cols()), nrhs = as_int(b.cols());
    if (m < n) throw std::runtime_error("gels baseline: m < n is not timed");
    const std::int64_t count_a = a.rows() * a.cols(), count_b = b.rows() * b.cols();
    DeviceArray<T> pristine_a(count_a), pristine_b(count_b), work_a(count_a), work_b(count_b),
        tau(n);
    upload(a, pristine_a.get());
    upload(b, pristine_b.get());
    const int ld = std::max(1, m);
    int lwork_qr = 0, lwork_mq = 0;
    BENCH_CUSOLVER(geqrf_size(solver_, m, n, work_a.get(), ld, &lwork_qr));
    BENCH_CUSOLVER(ormqr_size(solver_, m, nrhs, n, work_a.get(), ld, tau.get(), work_b.get(), ld,
                              &lwork_mq));
    const int lwork = std::max(lwork_qr, lwork_mq);
    DeviceArray<T> work(lwork);
    BaselineRun<T> run;
    run.times_ms = time_events(
        plan, "gels",
        [&] {
          restore(work_a.get(), pristine_a.get(), count_a);
          restore(work_b.get(), pristine_b.get(), count_b);
        },
        [&] {
          BENCH_CUSOLVER(geqrf(solver_, m, n, work_a.get(), ld, tau.get(), work.get(), lwork,
                               info_));
          BENCH_CUSOLVER(ormqr(solver_, m, nrhs, n, work_a.get(), ld, tau.get(), work_b.get(), ld,
                               work.get(), lwork, info_));
          BENCH_CUBLAS(trsm_upper(blas_, n, nrhs, work_a.get(), ld, work_b.get(), ld));
        });
    run.out = download(work_b.get(), m, nrhs);
    return run;
  }

  /// Frees what the constructor created (any of it may be missing); never throws.
  void release() noexcept {
    cudaSetDevice(device_);
    if (info_) cudaFree(info_);
    if (start_) cudaEventDestroy(start_);
    if (stop_) cudaEventDestroy(stop_);
    if (blas_) cublasDestroy(blas_);
    if (solver_) cusolverDnDestroy(solver_);
    if (stream_) cudaStreamDestroy(stream_);
    (void)cudaGetLastError();
  }

  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  cusolverDnHandle_t solver_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
  int* info_ = nullptr;
};

}  // namespace

bool cusolver_baseline_compiled() { return true; }

std::unique_ptr<Baseline> make_cusolver_baseline(int device) {
  return std::make_unique<CusolverBaseline>(device);
}

}  // namespace gpuqr::bench
