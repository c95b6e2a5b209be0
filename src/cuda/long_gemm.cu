// Split-K products for a long inner dimension (see long_gemm.hpp).
#include "src/cuda/long_gemm.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "src/cuda/check.hpp"
#include "src/cuda/cholqr_blas.hpp"

namespace gpuqr::kernels::cuda {
namespace {

using cholqr_detail::blas;
using cholqr_detail::gemm;
using cholqr_detail::gemm_strided;

constexpr int kThreads = 256;
constexpr std::int64_t kMinRows = 8192;        // per block: long enough to run near the GEMM rate
constexpr std::int64_t kOutputTile = 64;       // what a tile of cuBLAS's GEMM covers, about
constexpr std::int64_t kTilesPerSm = 4;
constexpr std::int64_t kMaxBlocks = 128;
constexpr std::size_t kMaxPartialBytes = std::size_t(64) << 20;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

bool split_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("GPUQR_LONG_SPLIT");
    return v == nullptr || std::string(v) != "0";
  }();
  return on;
}

int multiprocessors(int device) {
  static int cached[64] = {};
  if (device < 0 || device >= 64) return 132;
  if (cached[device] == 0) {
    int count = 0;
    if (cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        count <= 0) {
      (void)cudaGetLastError();
      count = 132;
    }
    cached[device] = count;
  }
  return cached[device];
}

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

LongSplit long_gemm_split(const detail::ContextImpl& ctx, std::int64_t m, std::int64_t k,
                          std::int64_t n, std::size_t elem) {
  LongSplit s;
  s.rows = std::max<std::int64_t>(m, 1);
  if (!split_enabled() || k <= 0 || n <= 0 || m < 2 * kMinRows) return s;
  const std::int64_t tiles = ceil_div(k, kOutputTile) * ceil_div(n, kOutputTile);
  const std::int64_t wanted = kTilesPerSm * multiprocessors(ctx.device);
  if (tiles * 2 >= wanted) return s;  // the plain GEMM has enough tiles
  const std::size_t one = std::size_t(k) * std::size_t(n) * elem;
  const std::int64_t by_bytes = static_cast<std::int64_t>(kMaxPartialBytes / one);
  const std::int64_t blocks = std::min({ceil_div(wanted, tiles), m / kMinRows, kMaxBlocks,
                                        by_bytes});
  if (blocks <= 1) return s;
  s.rows = ceil_div(ceil_div(m, blocks), 256) * 256;
  s.blocks = ceil_div(m, s.rows);
  return s;
}

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

template <class T>
void gemm_tn_long(detail::ContextImpl& ctx, std::int64_t k, std::int64_t n, std::int64_t m,
                  const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T* c,
                  std::int64_t ldc, LongSplit split, T* parts) {
  if (k == 0 || n == 0) return;
  if (split.blocks <= 1) {  // m = 0 included: beta = 0 writes C = 0
    gemm(blas(ctx), CUBLAS_OP_T, CUBLAS_OP_N, k, n, m, T(1), a, lda, b, ldb, T(0), c, ldc);
    return;
  }
  partial_products<T>(ctx, k, n, m, a, lda, b, ldb, split.rows, parts, 0);
  sum_partials<T>(ctx, parts, split.blocks, k, n, c, ldc);
}

#define GPUQR_INSTANTIATE_LONG_GEMM(T)                                                        \
  template void gemm_tn_long<T>(detail::ContextImpl&, std::int64_t, std::int64_t, std::int64_t, \
                                const T*, std::int64_t, const T*, std::int64_t, T*,            \
                                std::int64_t, LongSplit, T*);                                  \
  template void partial_products<T>(detail::ContextImpl&, std::int64_t, std::int64_t,          \
                                    std::int64_t, const T*, std::int64_t, const T*,            \
                                    std::int64_t, std::int64_t, T*, std::int64_t);             \
  template void sum_partials<T>(detail::ContextImpl&, const T*, std::int64_t, std::int64_t,    \
                                std::int64_t, T*, std::int64_t);

GPUQR_INSTANTIATE_LONG_GEMM(float)
GPUQR_INSTANTIATE_LONG_GEMM(double)

}  // namespace gpuqr::kernels::cuda
