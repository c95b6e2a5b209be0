// The cuSOLVER refactoring baseline of gpuqr_update_bench (see update_tus.hpp).
#include <cublas_v2.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/update_tus.hpp"

namespace gpuqr::bench {
namespace {

#define TUS_CHECK(call, ok)                                                                   \
  do {                                                                                        \
    const auto s_ = (call);                                                                   \
    if (s_ != (ok)) throw std::runtime_error(std::string(#call " failed: status ") +          \
                                             std::to_string(static_cast<int>(s_)));           \
  } while (0)
#define TUS_CUDA(call) TUS_CHECK(call, cudaSuccess)
#define TUS_BLAS(call) TUS_CHECK(call, CUBLAS_STATUS_SUCCESS)
#define TUS_SOLVER(call) TUS_CHECK(call, CUSOLVER_STATUS_SUCCESS)

cusolverStatus_t geqrf_size(cusolverDnHandle_t h, int m, int n, float* a, int* lw) {
  return cusolverDnSgeqrf_bufferSize(h, m, n, a, m, lw);
}
cusolverStatus_t geqrf_size(cusolverDnHandle_t h, int m, int n, double* a, int* lw) {
  return cusolverDnDgeqrf_bufferSize(h, m, n, a, m, lw);
}
cusolverStatus_t geqrf(cusolverDnHandle_t h, int m, int n, float* a, float* tau, float* w, int lw,
                       int* info) {
  return cusolverDnSgeqrf(h, m, n, a, m, tau, w, lw, info);
}
cusolverStatus_t geqrf(cusolverDnHandle_t h, int m, int n, double* a, double* tau, double* w,
                       int lw, int* info) {
  return cusolverDnDgeqrf(h, m, n, a, m, tau, w, lw, info);
}
cusolverStatus_t ormqr_size(cusolverDnHandle_t h, int m, int n, const float* a, const float* tau,
                            const float* c, int* lw) {
  return cusolverDnSormqr_bufferSize(h, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, m, 1, n, a, m, tau, c, m, lw);
}
cusolverStatus_t ormqr_size(cusolverDnHandle_t h, int m, int n, const double* a,
                            const double* tau, const double* c, int* lw) {
  return cusolverDnDormqr_bufferSize(h, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, m, 1, n, a, m, tau, c, m, lw);
}
cusolverStatus_t ormqr(cusolverDnHandle_t h, int m, int n, const float* a, const float* tau,
                       float* c, float* w, int lw, int* info) {
  return cusolverDnSormqr(h, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, m, 1, n, a, m, tau, c, m, w, lw, info);
}
cusolverStatus_t ormqr(cusolverDnHandle_t h, int m, int n, const double* a, const double* tau,
                       double* c, double* w, int lw, int* info) {
  return cusolverDnDormqr(h, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, m, 1, n, a, m, tau, c, m, w, lw, info);
}
cublasStatus_t trsm(cublasHandle_t h, int n, const float* r, int ldr, float* b) {
  const float one = 1.0f;
  return cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                     CUBLAS_DIAG_NON_UNIT, n, 1, &one, r, ldr, b, n);
}
cublasStatus_t trsm(cublasHandle_t h, int n, const double* r, int ldr, double* b) {
  const double one = 1.0;
  return cublasDtrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                     CUBLAS_DIAG_NON_UNIT, n, 1, &one, r, ldr, b, n);
}

}  // namespace

bool cusolver_baseline_available() { return true; }

void profiler_range(bool start) {
  if (start) cudaProfilerStart(); else cudaProfilerStop();
}

template <class T>
double time_refactor_cusolver(const T* a, const T* b, std::int64_t m64, std::int64_t n64,
                              int repeat, double* residual) {
  const int m = static_cast<int>(m64), n = static_cast<int>(n64);
  cudaStream_t stream = nullptr;
  cusolverDnHandle_t solver = nullptr;
  cublasHandle_t blas = nullptr;
  T *a0 = nullptr, *b0 = nullptr, *ad = nullptr, *bd = nullptr, *tau = nullptr, *work = nullptr;
  int* info = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  std::vector<float> times;
  const std::size_t abytes = sizeof(T) * static_cast<std::size_t>(m) * n;
  TUS_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  TUS_SOLVER(cusolverDnCreate(&solver));
  TUS_SOLVER(cusolverDnSetStream(solver, stream));
  TUS_BLAS(cublasCreate(&blas));
  TUS_BLAS(cublasSetStream(blas, stream));
  TUS_CUDA(cudaMalloc(&a0, abytes));
  TUS_CUDA(cudaMalloc(&ad, abytes));
  TUS_CUDA(cudaMalloc(&b0, sizeof(T) * m));
  TUS_CUDA(cudaMalloc(&bd, sizeof(T) * m));
  TUS_CUDA(cudaMalloc(&tau, sizeof(T) * n));
  TUS_CUDA(cudaMalloc(&info, sizeof(int)));
  TUS_CUDA(cudaMemcpy(a0, a, abytes, cudaMemcpyHostToDevice));
  TUS_CUDA(cudaMemcpy(b0, b, sizeof(T) * m, cudaMemcpyHostToDevice));
  int lw1 = 0, lw2 = 0;
  TUS_SOLVER(geqrf_size(solver, m, n, ad, &lw1));
  TUS_SOLVER(ormqr_size(solver, m, n, ad, tau, bd, &lw2));
  const int lw = std::max(lw1, lw2);
  TUS_CUDA(cudaMalloc(&work, sizeof(T) * std::max(lw, 1)));
  TUS_CUDA(cudaEventCreate(&start));
  TUS_CUDA(cudaEventCreate(&stop));
  for (int r = 0; r < repeat + 1; ++r) {  // the first run warms up
    TUS_CUDA(cudaMemcpyAsync(ad, a0, abytes, cudaMemcpyDeviceToDevice, stream));
    TUS_CUDA(cudaMemcpyAsync(bd, b0, sizeof(T) * m, cudaMemcpyDeviceToDevice, stream));
    TUS_CUDA(cudaEventRecord(start, stream));
    TUS_SOLVER(geqrf(solver, m, n, ad, tau, work, lw, info));
    TUS_SOLVER(ormqr(solver, m, n, ad, tau, bd, work, lw, info));
    TUS_BLAS(trsm(blas, n, ad, m, bd));
    TUS_CUDA(cudaEventRecord(stop, stream));
    TUS_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    TUS_CUDA(cudaEventElapsedTime(&ms, start, stop));
    if (r > 0) times.push_back(ms);
  }
  std::vector<T> qtb(static_cast<std::size_t>(m));
  TUS_CUDA(cudaMemcpy(qtb.data(), bd, sizeof(T) * m, cudaMemcpyDeviceToHost));
  double sum = 0;
  for (int i = n; i < m; ++i) sum += double(qtb[i]) * double(qtb[i]);
  *residual = std::sqrt(sum);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(a0); cudaFree(ad); cudaFree(b0); cudaFree(bd); cudaFree(tau); cudaFree(info);
  cudaFree(work);
  cublasDestroy(blas);
  cusolverDnDestroy(solver);
  cudaStreamDestroy(stream);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

template double time_refactor_cusolver<float>(const float*, const float*, std::int64_t,
                                              std::int64_t, int, double*);
template double time_refactor_cusolver<double>(const double*, const double*, std::int64_t,
                                               std::int64_t, int, double*);

}  // namespace gpuqr::bench
