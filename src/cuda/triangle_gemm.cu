// Block-column GEMMs for symmetric results and triangular factors (see triangle_gemm.hpp).
#include "src/cuda/triangle_gemm.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <type_traits>

#include "src/cuda/check.hpp"
#include "src/cuda/cholqr_blas.hpp"
#include "src/cuda/gram_kernels.hpp"

namespace gpuqr::kernels::cuda {
namespace {

using cholqr_detail::blas;
using cholqr_detail::gemm;

constexpr int kThreads = 256;

/// g(i, j) := g(j, i) below the diagonal.
template <class T>
__global__ void mirror_upper_kernel(T* g, std::int64_t ldg, std::int64_t n) {
  for (std::int64_t j = blockIdx.y; j < n; j += gridDim.y)
    for (std::int64_t i = j + 1 + blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
         i += std::int64_t(gridDim.x) * blockDim.x)
      g[i + j * ldg] = g[j + i * ldg];
}

/// The upper triangle of an n x n G = X^T X by recursive halves: `gemm_at(xc, yc, xs, ys)`
/// computes G(xc : xc + xs, yc : yc + ys) := X(:, xc : xc + xs)^T X(:, yc : yc + ys); for the
/// columns o .. o + s, the off-diagonal block by one GEMM,
/// then each half the same way, down to diagonal blocks of at most nb columns (full GEMMs).
/// h is a multiple of nb, so the leaves are nb wide but the last.
template <class Gemm>
void upper_by_halves(std::int64_t n, std::int64_t nb, Gemm gemm_at) {
  std::int64_t stack[2 * 64];
  int top = 0;
  stack[top++] = 0;
  stack[top++] = n;
  while (top > 0) {
    const std::int64_t s = stack[--top], o = stack[--top];
    if (s <= nb) {
      gemm_at(o, o, s, s);
      continue;
    }
    const std::int64_t h = std::min(s - 1, (s / 2 + nb - 1) / nb * nb);
    gemm_at(o, o + h, h, s - h);
    stack[top++] = o;
    stack[top++] = h;
    stack[top++] = o + h;
    stack[top++] = s - h;
  }
}

/// TF32 rounding to nearest (ties away from zero), as cvt.rna.tf32.f32 for finite x.
__device__ __forceinline__ float tf32_rna(float x) {
  return __uint_as_float((__float_as_uint(x) + 0x1000u) & 0xffffe000u);
}

/// The split kernel's blocks per column: each column's sum of squares is kSplitBlocks partial
/// sums (a fixed order: reproducible), which gram_split_tf32 adds at the end.
constexpr int kSplitBlocks = 64;

/// hi := tf32(w), lo := tf32(w - hi) for w rows x cols (ld ldw; hi and lo ld ldh), and
/// sumsq(b, j) += the sum of w(i, j)^2 over the rows of block b, in FP64.
__global__ void split_tf32_kernel(const float* w, std::int64_t ldw, std::int64_t rows,
                                  std::int64_t cols, float* hi, float* lo, std::int64_t ldh,
                                  double* sumsq) {
  __shared__ double part[kThreads / 32];
  for (std::int64_t j = blockIdx.y; j < cols; j += gridDim.y) {
    double sq = 0.0;
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < rows;
         i += std::int64_t(gridDim.x) * blockDim.x) {
      const float v = w[i + j * ldw];
      const float h = tf32_rna(v);
      hi[i + j * ldh] = h;
      lo[i + j * ldh] = tf32_rna(v - h);
      sq += double(v) * double(v);
    }
    for (int o = 16; o > 0; o >>= 1) sq += __shfl_down_sync(0xffffffffu, sq, o);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = sq;
    __syncthreads();
    if (threadIdx.x == 0) {
      double t = 0.0;
      for (int k = 0; k < kThreads / 32; ++k) t += part[k];
      sumsq[blockIdx.x + j * gridDim.x] += t;
    }
    __syncthreads();
  }
}

/// The diagonal's treatment (GPUQR_TF32_DIAG, measurements): the tensor cores' truncation
/// leaves every entry short by ~0.118 u per row of its chain (same-sign sums; session 22 run
/// 1: -242 u at chains of 2048 rows, linear in the length). kDiagNone keeps it; kDiagExact
/// (the default) puts the columns' FP64 sums of squares on the diagonal; kDiagTrace scales
/// all of G by trace(exact) / trace(G); kDiagCongruence scales G to S G S with S =
/// diag(sqrt(exact_j / G_jj)). CholeskyQR2's certificate on the ill-conditioned FP32 input
/// of `CholeskyQr2OnWideTallShapes` (run 2, ||W^T W - I||_F, must be < 0.25): chains of
/// 2048 rows 2.09 / 0.847 / 2.11 / 2.10 by mode; of 512 rows 0.296 / pass / 0.295 / 0.298.
/// A diagonal short against its row pushes G toward singular; the exact one does not.
enum DiagMode { kDiagNone = 0, kDiagExact = 1, kDiagTrace = 2, kDiagCongruence = 3 };

/// The computed diagonal d_j = sum_b parts_b(j, j) + 2 c(j, j) and the exact one e_j, then
/// factor(j) for combine_tf32_kernel by `mode`. One block.
__global__ void diag_factors_kernel(const float* parts, std::int64_t nparts, const float* c,
                                    const double* sumsq, int nsq, std::int64_t n, int mode,
                                    double* factor) {
  __shared__ double sd[kThreads], se[kThreads];
  const std::int64_t nn = n * n;
  double td = 0.0, te = 0.0;
  for (std::int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    double d = 2.0 * double(c[j + j * n]), e = 0.0;
    for (std::int64_t b = 0; b < nparts; ++b) d += double(parts[b * nn + j + j * n]);
    for (int b = 0; b < nsq; ++b) e += sumsq[b + j * nsq];
    td += d;
    te += e;
    factor[j] = mode == kDiagCongruence && d > 0.0 && e > 0.0 ? sqrt(e / d) : 1.0;
  }
  sd[threadIdx.x] = td;
  se[threadIdx.x] = te;
  __syncthreads();
  if (mode != kDiagTrace) return;
  for (int o = kThreads / 2; o > 0; o >>= 1) {
    if (threadIdx.x < o) {
      sd[threadIdx.x] += sd[threadIdx.x + o];
      se[threadIdx.x] += se[threadIdx.x + o];
    }
    __syncthreads();
  }
  const double f = sd[0] > 0.0 && se[0] > 0.0 ? sqrt(se[0] / sd[0]) : 1.0;
  for (std::int64_t j = threadIdx.x; j < n; j += blockDim.x) factor[j] = f;
}

/// For i <= j: g(i, j) = g(j, i) := factor(i) factor(j) (the sum of the nparts partials
/// (i, j) (ld n, stride n^2) + c(i, j) + c(j, i)), in FP64, rounded once; with kDiagExact
/// the diagonal is the columns' sums of squares (sumsq, nsq partials a column) instead.
__global__ void combine_tf32_kernel(const float* parts, std::int64_t nparts, const float* c,
                                    const double* sumsq, int nsq, const double* factor, int mode,
                                    std::int64_t n, float* g, std::int64_t ldg) {
  const std::int64_t nn = n * n;
  for (std::int64_t j = blockIdx.y; j < n; j += gridDim.y)
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i <= j;
         i += std::int64_t(gridDim.x) * blockDim.x) {
      double v = 0.0;
      if (i == j && mode == kDiagExact) {
        for (int b = 0; b < nsq; ++b) v += sumsq[b + j * nsq];
      } else {
        v = double(c[i + j * n]) + double(c[j + i * n]);
        for (std::int64_t b = 0; b < nparts; ++b) v += double(parts[b * nn + i + j * n]);
        v *= factor[i] * factor[j];
      }
      g[i + j * ldg] = float(v);
      g[j + i * ldg] = float(v);
    }
}

/// A knob read on every call (tests, measurements): GPUQR_<name> in [lo, hi], else dflt.
std::int64_t int_knob(const char* name, std::int64_t dflt, std::int64_t lo, std::int64_t hi) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return dflt;
  char* end = nullptr;
  const long long x = std::strtoll(v, &end, 10);
  return *end == '\0' && x >= lo && x <= hi ? std::int64_t(x) : dflt;
}

void gemm_tf32(cublasHandle_t h, std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
               std::int64_t lda, const float* b, std::int64_t ldb, float* c, std::int64_t ldc) {
  const float one = 1.0f;
  GPUQR_CUBLAS_CHECK(cublasGemmEx_64(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, a, CUDA_R_32F, lda,
                                     b, CUDA_R_32F, ldb, &one, c, CUDA_R_32F, ldc,
                                     CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
}

/// batches of C_b += A_b^T B_b, A_b = a + b k, B_b = b + b k (k rows each), C_b = c + b n^2.
void gemm_tf32_batches(cublasHandle_t h, std::int64_t m, std::int64_t n, std::int64_t k,
                       const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* c,
                       std::int64_t ldc, std::int64_t stride_c, std::int64_t batches) {
  const float one = 1.0f;
  GPUQR_CUBLAS_CHECK(
      cublasGemmStridedBatchedEx_64(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, a, CUDA_R_32F, lda,
                                    k, b, CUDA_R_32F, ldb, k, &one, c, CUDA_R_32F, ldc, stride_c,
                                    batches, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
}

/// G := W^T W in FP32 on the TF32 tensor cores, 3xTF32: W = H + L with H = tf32(W) and
/// L = tf32(W - H) (|W - H - L| <= 2^-22 |W|), W^T W = H^T H + H^T L + L^T H (+ L^T L,
/// <= 2^-22 |W|^T |W|, dropped). The tensor cores add with truncation, so one long mma chain
/// biases a sum of same-sign terms toward zero by ~0.118 u per row (session 21: ~1e-4 on G's
/// diagonal over cuBLAS's k of 65536, which broke CholeskyQR2's certificate). Here no chain
/// of the main term H^T H is longer than kc rows (GPUQR_TF32_KC, 512 by default; 2048 failed
/// the certificate, see DiagMode): the split's row chunk (GPUQR_TF32_CHUNK_MB of H and L,
/// 1024) is kc-row batches, each adding into its own partial (strided-batched GEMMs with
/// beta = 1: FP32 adds, rounded to nearest, between chains); the upper triangle by recursive
/// halves down to leaves of GPUQR_TF32_LEAF columns (256). C = H^T L, 2^-11 of G, takes
/// whole chunks (its bias is below FP32's rounding of G). G's upper triangle = the partials'
/// sum + C + C^T in FP64, rounded once, mirrored; the diagonal by DiagMode (exact).
/// Session 22 (H100, run 2, 2^20 x 1024): the FP32 explicit Q by CholeskyQR2 93.8 ms with
/// chains of 512 (88.1 with 2048; 112.0 with SGEMM). False (nothing done) when the split
/// workspace cannot be allocated.
bool gram_split_tf32(detail::ContextImpl& ctx, const float* w, std::int64_t ldw, std::int64_t m,
                     std::int64_t n, float* g, std::int64_t ldg) {
  const std::int64_t kc = int_knob("GPUQR_TF32_KC", 512, 64, std::int64_t(1) << 20);
  const std::int64_t leaf = int_knob("GPUQR_TF32_LEAF", 256, 32, 1024);
  const std::int64_t chunk_bytes = int_knob("GPUQR_TF32_CHUNK_MB", 1024, 16, 16384) << 20;
  // The chunk's H and L, and the partials (one n x n per kc rows of the chunk), each within
  // chunk_bytes (at n = 1024 and the defaults: 131072 rows, 256 partials, 1 GiB each).
  const std::int64_t max_parts =
      std::max<std::int64_t>(1, chunk_bytes / (std::int64_t(sizeof(float)) * n * n));
  std::int64_t rows = chunk_bytes / (2 * std::int64_t(sizeof(float)) * n) / kc * kc;
  rows = std::min(std::max(rows, kc), max_parts * kc);
  rows = std::min(rows, m);
  const std::int64_t nparts = std::max<std::int64_t>(1, rows / kc);
  const auto pad = [](std::size_t e) { return (e + 63) / 64 * 64; };
  const std::size_t nn = std::size_t(n) * std::size_t(n);
  const int mode = static_cast<int>(int_knob("GPUQR_TF32_DIAG", kDiagExact, 0, 3));
  // the sums of squares and the factors, doubles counted as two floats
  const std::size_t sq_floats = pad(2 * (kSplitBlocks + 1) * std::size_t(n));
  const std::size_t zeroed = sq_floats + pad(nn) + nparts * nn;
  float* base = nullptr;
  try {
    base = static_cast<float*>(detail::cuda_workspace(
        ctx, (zeroed + 2 * pad(std::size_t(rows) * std::size_t(n))) * sizeof(float),
        detail::ContextImpl::kSplitWorkspace));
  } catch (const OutOfMemory&) {
    return false;  // the caller takes SGEMM, which needs no workspace
  }
  double* sumsq = reinterpret_cast<double*>(base);
  float* c = base + sq_floats;
  float* parts = c + pad(nn);
  float* hi = base + zeroed;
  float* lo = hi + pad(std::size_t(rows) * std::size_t(n));
  GPUQR_CUDA_CHECK(cudaMemsetAsync(base, 0, zeroed * sizeof(float), ctx.stream));
  const cublasHandle_t h = blas(ctx);
  const auto by = static_cast<unsigned>(std::min<std::int64_t>(n, 65535));
  for (std::int64_t s = 0; s < m; s += rows) {
    const std::int64_t k = std::min(rows, m - s);
    split_tf32_kernel<<<dim3(kSplitBlocks, by), kThreads, 0, ctx.stream>>>(w + s, ldw, k, n, hi, lo,
                                                                           rows, sumsq);
    GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
    const std::int64_t full = k / kc, rest = k - full * kc;
    upper_by_halves(n, leaf,
                    [&](std::int64_t xc, std::int64_t yc, std::int64_t xs, std::int64_t ys) {
                      float* p = parts + xc + yc * n;
                      if (full > 0)
                        gemm_tf32_batches(h, xs, ys, kc, hi + xc * rows, rows, hi + yc * rows, rows,
                                          p, n, std::int64_t(nn), full);
                      if (rest > 0)
                        gemm_tf32(h, xs, ys, rest, hi + full * kc + xc * rows, rows,
                                  hi + full * kc + yc * rows, rows, p, n);
                    });
    gemm_tf32(h, n, n, k, hi, rows, lo, rows, c, n);
  }
  const auto bx = static_cast<unsigned>(std::max<std::int64_t>((n + kThreads - 1) / kThreads, 1));
  double* factor = sumsq + kSplitBlocks * n;
  diag_factors_kernel<<<1, kThreads, 0, ctx.stream>>>(parts, nparts, c, sumsq, kSplitBlocks, n,
                                                      mode, factor);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  combine_tf32_kernel<<<dim3(bx, by), kThreads, 0, ctx.stream>>>(
      parts, nparts, c, sumsq, kSplitBlocks, factor, mode, n, g, ldg);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  return true;
}

/// w (rows x cols, ld ldw) := a rounded to FP32 (to nearest; NaN and Inf kept, |a| beyond
/// FP32's range becomes Inf).
__global__ void to_float_kernel(const double* a, std::int64_t lda, std::int64_t rows,
                                std::int64_t cols, float* w, std::int64_t ldw) {
  for (std::int64_t j = blockIdx.y; j < cols; j += gridDim.y)
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < rows;
         i += std::int64_t(gridDim.x) * blockDim.x)
      w[i + j * ldw] = __double2float_rn(a[i + j * lda]);
}

/// g(i, j) = g(j, i) := g32(i, j) for i <= j (g32 n x n, ld n, its upper triangle).
__global__ void widen_upper_kernel(const float* g32, std::int64_t n, double* g, std::int64_t ldg) {
  for (std::int64_t j = blockIdx.y; j < n; j += gridDim.y)
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i <= j;
         i += std::int64_t(gridDim.x) * blockDim.x) {
      const double v = double(g32[i + j * n]);
      g[i + j * ldg] = v;
      g[j + i * ldg] = v;
    }
}

/// The upper triangle of G += W^T W (W rows x n, ld ldw; G ld ldg) by TF32 GEMMs over
/// recursive halves with leaves of GPUQR_TF32_LEAF columns.
void gram_tf32_upper(cublasHandle_t h, const float* w, std::int64_t ldw, std::int64_t rows,
                     std::int64_t n, float* g, std::int64_t ldg) {
  const std::int64_t leaf = int_knob("GPUQR_TF32_LEAF", 256, 32, 1024);
  upper_by_halves(n, leaf, [&](std::int64_t xc, std::int64_t yc, std::int64_t xs, std::int64_t ys) {
    gemm_tf32(h, xs, ys, rows, w + xc * ldw, ldw, w + yc * ldw, ldw, g + xc + yc * ldg, ldg);
  });
}

}  // namespace

std::int64_t low_gram_from() { return int_knob("GPUQR_CHOLQR_LOW_GRAM_FROM", 256, 1, 1 << 30); }

bool gram_low_tf32(detail::ContextImpl& ctx, const float* a, std::int64_t lda, std::int64_t m,
                   std::int64_t n, float* g, std::int64_t ldg) {
  if (n == 0) return true;
  GPUQR_CUDA_CHECK(cudaMemset2DAsync(g, ldg * sizeof(float), 0, n * sizeof(float), n, ctx.stream));
  if (m > 0) gram_tf32_upper(blas(ctx), a, lda, m, n, g, ldg);
  const auto bx = static_cast<unsigned>(std::max<std::int64_t>((n + kThreads - 1) / kThreads, 1));
  const auto by = static_cast<unsigned>(std::min<std::int64_t>(n, 65535));
  mirror_upper_kernel<float><<<dim3(bx, by), kThreads, 0, ctx.stream>>>(g, ldg, n);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  return true;
}

bool gram_low_tf32(detail::ContextImpl& ctx, const double* a, std::int64_t lda, std::int64_t m,
                   std::int64_t n, double* g, std::int64_t ldg) {
  if (n == 0) return true;
  // Row chunks of A in FP32 (GPUQR_TF32_CHUNK_MB, 1 GiB: 262144 rows at n = 1024) in the
  // split workspace, after G's FP32 upper triangle.
  const std::int64_t chunk_bytes = int_knob("GPUQR_TF32_CHUNK_MB", 1024, 16, 16384) << 20;
  std::int64_t rows = std::max<std::int64_t>(chunk_bytes / (std::int64_t(sizeof(float)) * n), 256);
  rows = std::max<std::int64_t>(std::min(rows, m), 1);
  const std::size_t g_floats = (std::size_t(n) * std::size_t(n) + 63) / 64 * 64;
  float* base = nullptr;
  try {
    base = static_cast<float*>(detail::cuda_workspace(
        ctx, (g_floats + std::size_t(rows) * std::size_t(n)) * sizeof(float),
        detail::ContextImpl::kSplitWorkspace));
  } catch (const OutOfMemory&) {
    return false;  // the caller takes the full-precision Gram matrix
  }
  float* g32 = base;
  float* w = base + g_floats;
  GPUQR_CUDA_CHECK(cudaMemsetAsync(g32, 0, std::size_t(n) * std::size_t(n) * sizeof(float),
                                   ctx.stream));
  const auto by = static_cast<unsigned>(std::min<std::int64_t>(n, 65535));
  for (std::int64_t s = 0; s < m; s += rows) {
    const std::int64_t k = std::min(rows, m - s);
    const auto cx = static_cast<unsigned>(std::min<std::int64_t>((k + kThreads - 1) / kThreads, 64));
    to_float_kernel<<<dim3(cx, by), kThreads, 0, ctx.stream>>>(a + s, lda, k, n, w, rows);
    GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
    gram_tf32_upper(blas(ctx), w, rows, k, n, g32, n);
  }
  const auto bx = static_cast<unsigned>(std::max<std::int64_t>((n + kThreads - 1) / kThreads, 1));
  widen_upper_kernel<<<dim3(bx, by), kThreads, 0, ctx.stream>>>(g32, n, g, ldg);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  return true;
}

std::int64_t triangle_block_width() {
  static const std::int64_t width = [] {
    const char* v = std::getenv("GPUQR_TRI_BLOCK");
    const long w = v != nullptr ? std::strtol(v, nullptr, 10) : 0;
    return w >= 32 && w <= 1024 ? std::int64_t(w) : kTriangleBlock;
  }();
  return width;
}

template <class T>
void gram_blocked(detail::ContextImpl& ctx, const T* w, std::int64_t ldw, std::int64_t m,
                  std::int64_t n, T* g, std::int64_t ldg) {
  if (n == 0) return;
  if constexpr (std::is_same_v<T, float>) {
    // 3xTF32 with short mma chains (gram_split_tf32) from GPUQR_TF32_WIDE_FROM columns (512;
    // tests and measurements), SGEMM below and when gram_tf32_enabled() is off. Session 22
    // (H100, runs 2 and 4, m = 2^20, CholeskyQR2): n = 1024 R alone 69.5 ms against 87.1,
    // n = 512 22.7-24.6 against 25.6; n = 256 slower (9.65 against 8.28: the split pass and
    // the partials weigh more against SGEMM's 2 ms).
    // Where its workspace cannot be had (OutOfMemory), SGEMM.
    if (m > 0 && n >= int_knob("GPUQR_TF32_WIDE_FROM", 512, 1, std::int64_t(1) << 30) &&
        gram_tf32_enabled() && gram_split_tf32(ctx, w, ldw, m, n, g, ldg))
      return;
  }
  // The upper triangle by recursive halves (upper_by_halves). Measured on the H100 (session
  // 21, scripts/dev/gemm_probe.cu, 2^20 x 1024 FP64): 22.2 ms against 25.7 for block columns
  // of 128 (the off-diagonal GEMMs are wider: 512 x 512, 256 x 256, ...).
  // m = 0 included: beta = 0 writes zeros.
  upper_by_halves(n, triangle_block_width(),
                  [&](std::int64_t xc, std::int64_t yc, std::int64_t xs, std::int64_t ys) {
                    gemm(blas(ctx), CUBLAS_OP_T, CUBLAS_OP_N, xs, ys, m, T(1), w + xc * ldw, ldw,
                         w + yc * ldw, ldw, T(0), g + xc + yc * ldg, ldg);
                  });
  const auto bx = static_cast<unsigned>(std::max<std::int64_t>((n + kThreads - 1) / kThreads, 1));
  const auto by = static_cast<unsigned>(std::min<std::int64_t>(n, 65535));
  mirror_upper_kernel<T><<<dim3(bx, by), kThreads, 0, ctx.stream>>>(g, ldg, n);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

template <class T>
void upper_product_blocked(detail::ContextImpl& ctx, const T* a, std::int64_t lda, std::int64_t m,
                           std::int64_t n, const T* x, std::int64_t ldx, T* q, std::int64_t ldq) {
  if (m == 0 || n == 0) return;
  const std::int64_t nb = triangle_block_width();
  // Block columns; recursive halves (Q's right part by one GEMM, then each part's triangle
  // adding to it with beta = 1) measured slower in session 22 (run 5, H100, 2^20 rows): FP64
  // explicit Q at n = 1024 116.5 against 106.2 ms, n = 512 35.9 against 29.6; FP32 1024
  // 101.7 against 92.9 (the leaves' beta = 1 passes over Q are memory-bound).
  for (std::int64_t j0 = 0; j0 < n; j0 += nb) {
    const std::int64_t j1 = std::min(n, j0 + nb);
    gemm(blas(ctx), CUBLAS_OP_N, CUBLAS_OP_N, m, j1 - j0, j1, T(1), a, lda, x + j0 * ldx, ldx, T(0),
         q + j0 * ldq, ldq);
  }
}

template <class T>
void upper_product_blocked_in_place(detail::ContextImpl& ctx, T* a, std::int64_t lda,
                                    std::int64_t m, std::int64_t n, const T* x, std::int64_t ldx,
                                    T* w, std::int64_t chunk_rows) {
  if (m == 0 || n == 0) return;
  const std::int64_t nb = triangle_block_width();
  const std::int64_t last = (n - 1) / nb * nb;
  for (std::int64_t s = 0; s < m; s += chunk_rows) {
    const std::int64_t h = std::min(chunk_rows, m - s);
    for (std::int64_t j0 = last; j0 >= 0; j0 -= nb) {
      const std::int64_t jb = std::min(n, j0 + nb) - j0;
      gemm(blas(ctx), CUBLAS_OP_N, CUBLAS_OP_N, h, jb, j0 + jb, T(1), a + s, lda, x + j0 * ldx, ldx,
           T(0), w, chunk_rows);
      GPUQR_CUDA_CHECK(cudaMemcpy2DAsync(a + s + j0 * lda, lda * sizeof(T), w,
                                         chunk_rows * sizeof(T), h * sizeof(T), jb,
                                         cudaMemcpyDeviceToDevice, ctx.stream));
    }
  }
}

#define GPUQR_INSTANTIATE_TRIANGLE_GEMM(T)                                                       \
  template void gram_blocked<T>(detail::ContextImpl&, const T*, std::int64_t, std::int64_t,      \
                                std::int64_t, T*, std::int64_t);                                 \
  template void upper_product_blocked<T>(detail::ContextImpl&, const T*, std::int64_t,           \
                                         std::int64_t, std::int64_t, const T*, std::int64_t, T*, \
                                         std::int64_t);                                          \
  template void upper_product_blocked_in_place<T>(detail::ContextImpl&, T*, std::int64_t,        \
                                                  std::int64_t, std::int64_t, const T*,          \
                                                  std::int64_t, T*, std::int64_t);

GPUQR_INSTANTIATE_TRIANGLE_GEMM(float)
GPUQR_INSTANTIATE_TRIANGLE_GEMM(double)

}  // namespace gpuqr::kernels::cuda
