// Split-K products for a long inner dimension (see long_gemm.hpp).
#include "src/cuda/long_gemm.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "src/cuda/check.hpp"
#include "src/cuda/cholqr_blas.hpp"

namespace gpuqr::kernels::cuda {
namespace {

using cholqr_detail::blas;
using cholqr_detail::gemm;
using cholqr_detail::gemm_strided;

constexpr int kThreads = 256;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

template <class T>
__global__ void sum_partials_kernel(const T* parts, std::int64_t count, std::int64_t k,
                                    std::int64_t n, T* c, std::int64_t ldc) {
  const std::int64_t kn = k * n;
  for (std::int64_t idx = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; idx < kn;
       idx += std::int64_t(gridDim.x) * blockDim.x) {
    T sum = T(0);
    for (std::int64_t p = 0; p < count; ++p) sum += parts[p * kn + idx];
    c[idx % k + (idx / k) * ldc] = sum;
  }
}

}  // namespace

template <class T>
void partial_products(detail::ContextImpl& ctx, std::int64_t k, std::int64_t n, std::int64_t h,
                      const T* a, std::int64_t lda, const T* b, std::int64_t ldb,
                      std::int64_t rows, T* parts, std::int64_t first) {
  const std::int64_t kn = k * n, full = h / rows, tail = h - full * rows;
  if (full > 0)
    gemm_strided(blas(ctx), CUBLAS_OP_T, CUBLAS_OP_N, k, n, rows, T(1), a, lda, rows, b, ldb,
                 rows, T(0), parts + first * kn, k, kn, full);
  if (tail > 0)
    gemm(blas(ctx), CUBLAS_OP_T, CUBLAS_OP_N, k, n, tail, T(1), a + full * rows, lda,
         b + full * rows, ldb, T(0), parts + (first + full) * kn, k);
}

template <class T>
void sum_partials(detail::ContextImpl& ctx, const T* parts, std::int64_t count, std::int64_t k,
                  std::int64_t n, T* c, std::int64_t ldc) {
  const std::int64_t blocks = std::min<std::int64_t>(ceil_div(k * n, kThreads), 4096);
  sum_partials_kernel<T><<<static_cast<unsigned>(std::max<std::int64_t>(blocks, 1)), kThreads, 0,
                           ctx.stream>>>(parts, count, k, n, c, ldc);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

#define GPUQR_INSTANTIATE_LONG_GEMM(T)                                                        \
  template void partial_products<T>(detail::ContextImpl&, std::int64_t, std::int64_t,          \
                                    std::int64_t, const T*, std::int64_t, const T*,            \
                                    std::int64_t, std::int64_t, T*, std::int64_t);             \
  template void sum_partials<T>(detail::ContextImpl&, const T*, std::int64_t, std::int64_t,    \
                                std::int64_t, T*, std::int64_t);

GPUQR_INSTANTIATE_LONG_GEMM(float)
GPUQR_INSTANTIATE_LONG_GEMM(double)

}  // namespace gpuqr::kernels::cuda
