// Baselines of gpuqr_batched_bench: cuBLAS geqrfBatched and cuSOLVER geqrf over streams.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "bench/batched_baseline.hpp"

namespace gpuqr::bench {
namespace {

void check(cudaError_t s, const char* what) {
  if (s != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(s));
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + " failed (cuBLAS)");
}
void check(cusolverStatus_t s, const char* what) {
  if (s != CUSOLVER_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed (cuSOLVER " + std::to_string(s) + ")");
}

template <class T>
__global__ void fill_kernel(T* p, std::size_t count, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    std::uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    p[i] = T(double(x >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0);
  }
}

cublasStatus_t geqrf_batched(cublasHandle_t h, int m, int n, float** a, int lda, float** tau,
                             int* info, int count) {
  return cublasSgeqrfBatched(h, m, n, a, lda, tau, info, count);
}
cublasStatus_t geqrf_batched(cublasHandle_t h, int m, int n, double** a, int lda, double** tau,
                             int* info, int count) {
  return cublasDgeqrfBatched(h, m, n, a, lda, tau, info, count);
}
cublasStatus_t gels_batched(cublasHandle_t h, int m, int n, int nrhs, float** a, int lda,
                            float** c, int ldc, int* info, int* dev_info, int count) {
  return cublasSgelsBatched(h, CUBLAS_OP_N, m, n, nrhs, a, lda, c, ldc, info, dev_info, count);
}
cublasStatus_t gels_batched(cublasHandle_t h, int m, int n, int nrhs, double** a, int lda,
                            double** c, int ldc, int* info, int* dev_info, int count) {
  return cublasDgelsBatched(h, CUBLAS_OP_N, m, n, nrhs, a, lda, c, ldc, info, dev_info, count);
}
cusolverStatus_t geqrf_size(cusolverDnHandle_t h, int m, int n, float* a, int lda, int* lwork) {
  return cusolverDnSgeqrf_bufferSize(h, m, n, a, lda, lwork);
}
cusolverStatus_t geqrf_size(cusolverDnHandle_t h, int m, int n, double* a, int lda, int* lwork) {
  return cusolverDnDgeqrf_bufferSize(h, m, n, a, lda, lwork);
}
cusolverStatus_t geqrf(cusolverDnHandle_t h, int m, int n, float* a, int lda, float* tau,
                       float* work, int lwork, int* info) {
  return cusolverDnSgeqrf(h, m, n, a, lda, tau, work, lwork, info);
}
cusolverStatus_t geqrf(cusolverDnHandle_t h, int m, int n, double* a, int lda, double* tau,
                       double* work, int lwork, int* info) {
  return cusolverDnDgeqrf(h, m, n, a, lda, tau, work, lwork, info);
}

}  // namespace

struct BatchedBaseline::State {
  int device = 0;
  cublasHandle_t blas = nullptr;
  std::vector<cudaStream_t> streams;
  std::vector<cusolverDnHandle_t> solvers;
  std::vector<void*> work;
  std::vector<std::size_t> work_bytes;
  void** ptrs = nullptr;  // device: a pointers, then tau pointers
  std::size_t ptr_count = 0;
  int* info = nullptr;
  int* dev_info = nullptr;  // gelsBatched: one per matrix
  std::size_t dev_info_count = 0;
};

BatchedBaseline::BatchedBaseline(int device, int streams) : s_(new State) {
  s_->device = device;
  check(cudaSetDevice(device), "cudaSetDevice");
  check(cublasCreate(&s_->blas), "cublasCreate");
  for (int i = 0; i < streams; ++i) {
    cudaStream_t st = nullptr;
    check(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "cudaStreamCreate");
    cusolverDnHandle_t h = nullptr;
    check(cusolverDnCreate(&h), "cusolverDnCreate");
    check(cusolverDnSetStream(h, st), "cusolverDnSetStream");
    s_->streams.push_back(st);
    s_->solvers.push_back(h);
    s_->work.push_back(nullptr);
    s_->work_bytes.push_back(0);
  }
  check(cublasSetStream(s_->blas, s_->streams.empty() ? nullptr : s_->streams[0]), "cublasSetStream");
  check(cudaMalloc(&s_->info, sizeof(int) * (streams + 1)), "cudaMalloc info");
}

BatchedBaseline::~BatchedBaseline() {
  cudaDeviceSynchronize();
  for (void* w : s_->work) cudaFree(w);
  for (auto h : s_->solvers) cusolverDnDestroy(h);
  for (auto st : s_->streams) cudaStreamDestroy(st);
  if (s_->blas) cublasDestroy(s_->blas);
  cudaFree(s_->ptrs);
  cudaFree(s_->info);
  cudaFree(s_->dev_info);
}

template <class T>
void BatchedBaseline::prepare_cublas(const std::vector<T*>& a, const std::vector<T*>& tau) {
  cudaFree(s_->ptrs);
  s_->ptr_count = a.size();
  check(cudaMalloc(&s_->ptrs, 2 * a.size() * sizeof(void*)), "cudaMalloc pointers");
  std::vector<void*> host(a.begin(), a.end());
  host.insert(host.end(), tau.begin(), tau.end());
  check(cudaMemcpy(s_->ptrs, host.data(), host.size() * sizeof(void*), cudaMemcpyHostToDevice),
        "upload pointers");
}

template <class T>
void BatchedBaseline::run_cublas(std::int64_t m, std::int64_t n, std::int64_t lda,
                                 std::int64_t count) {
  int info = 0;  // host: reports a bad argument only
  T** a = reinterpret_cast<T**>(s_->ptrs);
  check(geqrf_batched(s_->blas, int(m), int(n), a, int(lda), a + s_->ptr_count, &info,
                      int(count)),
        "cublasgeqrfBatched");
  if (info != 0) throw std::runtime_error("cublasgeqrfBatched: argument " + std::to_string(-info));
}

template <class T>
void BatchedBaseline::run_cublas_gels(std::int64_t m, std::int64_t n, std::int64_t nrhs,
                                      std::int64_t lda, std::int64_t ldb, std::int64_t count) {
  if (s_->dev_info_count < static_cast<std::size_t>(count)) {
    cudaFree(s_->dev_info);
    check(cudaMalloc(&s_->dev_info, sizeof(int) * static_cast<std::size_t>(count)),
          "cudaMalloc dev_info");
    s_->dev_info_count = static_cast<std::size_t>(count);
  }
  int info = 0;
  T** a = reinterpret_cast<T**>(s_->ptrs);
  check(gels_batched(s_->blas, int(m), int(n), int(nrhs), a, int(lda), a + s_->ptr_count,
                     int(ldb), &info, s_->dev_info, int(count)),
        "cublasgelsBatched");
  if (info != 0) throw std::runtime_error("cublasgelsBatched: argument " + std::to_string(-info));
}

template <class T>
void BatchedBaseline::run_cusolver(const std::vector<std::int64_t>& m,
                                   const std::vector<std::int64_t>& n, const std::vector<T*>& a,
                                   const std::vector<std::int64_t>& lda,
                                   const std::vector<T*>& tau) {
  const std::size_t lanes = s_->solvers.size();
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::size_t l = i % lanes;
    int lwork = 0;
    check(geqrf_size(s_->solvers[l], int(m[i]), int(n[i]), a[i], int(lda[i]), &lwork),
          "geqrf_bufferSize");
    const std::size_t bytes = std::size_t(lwork) * sizeof(T);
    if (bytes > s_->work_bytes[l]) {  // grows during the warm-up run only
      check(cudaStreamSynchronize(s_->streams[l]), "sync before growing");
      cudaFree(s_->work[l]);
      check(cudaMalloc(&s_->work[l], bytes), "cudaMalloc work");
      s_->work_bytes[l] = bytes;
    }
    check(geqrf(s_->solvers[l], int(m[i]), int(n[i]), a[i], int(lda[i]), tau[i],
                static_cast<T*>(s_->work[l]), lwork, s_->info + l),
          "cusolverDngeqrf");
  }
}

void BatchedBaseline::synchronize() {
  for (auto st : s_->streams) check(cudaStreamSynchronize(st), "cudaStreamSynchronize");
}

void* device_alloc(std::size_t bytes) {
  void* p = nullptr;
  check(cudaMalloc(&p, bytes), "cudaMalloc");
  return p;
}
void device_free(void* p) noexcept { cudaFree(p); }
void device_copy(void* dst, const void* src, std::size_t bytes) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy D2D");
  // A device-to-device cudaMemcpy may return before it is done, and the timed streams are
  // non-blocking: wait here so that the copy never lands inside a timed region.
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after copy");
}
template <class T>
void device_fill_random(T* p, std::size_t count, std::uint64_t seed) {
  fill_kernel<T><<<1024, 256>>>(p, count, seed);
  check(cudaGetLastError(), "fill_kernel");
  check(cudaDeviceSynchronize(), "fill_kernel");
}
void device_synchronize() { check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

#define GPUQR_BATCHED_BASELINE(T)                                                             \
  template void BatchedBaseline::prepare_cublas<T>(const std::vector<T*>&,                    \
                                                   const std::vector<T*>&);                   \
  template void BatchedBaseline::run_cublas<T>(std::int64_t, std::int64_t, std::int64_t,      \
                                               std::int64_t);                                 \
  template void BatchedBaseline::run_cublas_gels<T>(std::int64_t, std::int64_t, std::int64_t, \
                                                    std::int64_t, std::int64_t, std::int64_t); \
  template void BatchedBaseline::run_cusolver<T>(                                             \
      const std::vector<std::int64_t>&, const std::vector<std::int64_t>&,                     \
      const std::vector<T*>&, const std::vector<std::int64_t>&, const std::vector<T*>&);      \
  template void device_fill_random<T>(T*, std::size_t, std::uint64_t);

GPUQR_BATCHED_BASELINE(float)
GPUQR_BATCHED_BASELINE(double)

}  // namespace gpuqr::bench
