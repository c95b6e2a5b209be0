// CUDA Householder reconstruction (the twin of LAPACK's orhr_col; src/core/cholqr_kernels.hpp).
//
// With Q = [Q1; Q2] (Q1 n x n) and the signs S = diag(d) chosen on the fly as
// d_k = -sign(pivot) (LAPACK's choice, so every pivot has |pivot| >= 1):
//   Q1 - S = L U         LU without pivoting of the n x n top block, blocked: a one-block
//                        panel kernel for 32 columns, TRSM for U's row block, GEMM for the rest
//   V = [L; Q2 U^{-1}]   V2 by one GEMM with U's explicit inverse (TRSM on the identity, n x n)
//   T = -U S L^{-T}      the n x n factor of I - V T V^T (one n x n TRSM)
// Everything is enqueued on the context's stream; the tall part (Q2) is read once and V2
// written once. orhr_col_of_product takes Q = W X as W and X and never forms Q's tall part:
// V2 = W2 (X U^{-1}), so CholeskyQR's last GEMM and orhr_col's are one.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "src/core/blocked_kernels.hpp"
#include "src/core/cholqr_kernels.hpp"
#include "src/core/dense_kernels.hpp"
#include "src/cuda/check.hpp"
#include "src/cuda/cholqr_blas.hpp"

namespace gpuqr::kernels::cuda {
namespace {

using cholqr_detail::blas;
using cholqr_detail::gemm;
using cholqr_detail::grid_2d;
using cholqr_detail::trsm;
using cuda_detail::DeviceGuard;

constexpr int kThreads = 256;
constexpr std::int64_t kPanel = 32;

/// GPUQR_ORHR_STREAMED=0 forms V's tall part by multiply / multiply_in_place's GEMMs instead
/// of tall_times_upper (measurements; read on every call).
bool orhr_product_streamed() {
  const char* v = std::getenv("GPUQR_ORHR_STREAMED");
  return v == nullptr || *v == '\0' || std::string(v) != "0";
}

/// LU without pivoting of the h x b panel at `a` (b <= kPanel), with the signs: for each column
/// k, d_k = -sign(a_kk) (+1 for a_kk < 0, -1 otherwise, as Fortran's SIGN(1, x)),
/// a_kk -= d_k, then the column below is scaled by the pivot and the panel's remaining
/// columns are updated. One block; each thread owns rows i = tid, tid + blockDim, ...
template <class T>
__global__ void lu_panel_signs_kernel(T* a, std::int64_t lda, std::int64_t h, int b, T* d) {
  for (int k = 0; k < b; ++k) {
    if (threadIdx.x == 0) {
      const T x = a[k + k * lda];
      const T dk = x >= T(0) ? T(-1) : T(1);
      d[k] = dk;
      a[k + k * lda] = x - dk;
    }
    __syncthreads();  // the pivot is read by every thread
    const T pivot = a[k + k * lda];
    for (std::int64_t i = k + 1 + threadIdx.x; i < h; i += blockDim.x) {
      const T l = a[i + k * lda] / pivot;
      a[i + k * lda] = l;
      for (int c = k + 1; c < b; ++c) a[i + c * lda] -= l * a[k + c * lda];
    }
    __syncthreads();  // row k + 1 is final before its pivot is taken
  }
}

/// t(i, j) := -u(i, j) d_j on and above the diagonal, 0 below (T's right-hand side).
template <class T>
__global__ void minus_u_s_kernel(const T* u, std::int64_t ldu, const T* d, T* t,
                                 std::int64_t ldt, std::int64_t n) {
  for (std::int64_t j = blockIdx.y; j < n; j += gridDim.y)
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
         i += std::int64_t(gridDim.x) * blockDim.x)
      t[i + j * ldt] = i <= j ? -u[i + j * ldu] * d[j] : T(0);
}

}  // namespace

namespace {

/// The reconstruction of Q = W X (x empty: Q = W) once Q's top n x n block is in v's top
/// block: the signed LU there, V's tall part W (X U^{-1}) (`work` n x n holds X U^{-1}), T.
template <class T>
void reconstruct(detail::ContextImpl& ctx, MatrixView<const T> w, MatrixView<const T> x,
                 MatrixView<T> v, MatrixView<T> t, VectorView<T> d, MatrixView<T> work) {
  const std::int64_t m = w.rows(), n = w.cols();
  cublasHandle_t h = blas(ctx);
  T* a = v.data();
  const std::int64_t lda = v.ld();
  for (std::int64_t j = 0; j < n; j += kPanel) {
    const std::int64_t jb = std::min(kPanel, n - j);
    lu_panel_signs_kernel<T><<<1, kThreads, 0, ctx.stream>>>(a + j + j * lda, lda, n - j,
                                                             static_cast<int>(jb), d.data() + j);
    GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
    const std::int64_t rest = n - j - jb;
    if (rest == 0) break;
    // U12 = L11^{-1} A12, then A22 -= L21 U12.
    trsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, jb, rest,
         T(1), a + j + j * lda, lda, a + j + (j + jb) * lda, lda);
    gemm(h, CUBLAS_OP_N, CUBLAS_OP_N, rest, rest, jb, T(-1), a + (j + jb) + j * lda, lda,
         a + j + (j + jb) * lda, lda, T(1), a + (j + jb) + (j + jb) * lda, lda);
  }
  // V2 = W2 (X U^{-1}), with U^{-1} formed in t's storage first (t is written after).
  if (m > n) {
    laset<T>(ctx, T(0), T(1), t);
    trsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n, n,
         T(1), a, lda, t.data(), t.ld());
    const T* y = t.data();
    std::int64_t ldy = t.ld();
    if (x.data() != nullptr) {
      gemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, T(1), x.data(), x.ld(), t.data(), t.ld(), T(0),
           work.data(), work.ld());
      y = work.data();
      ldy = work.ld();
    }
    const MatrixView<const T> yv(y, n, n, ldy, v.space(), v.device());
    if (orhr_product_streamed() && tall_times_upper_wanted<T>(ctx, m - n, n)) {
      // Y is upper triangular (X and U^{-1} are): the streamed pass on the tensor cores for
      // n <= 128 (FP64 DMMA, FP32 3xTF32; in place too), block columns above. Session 23
      // (H100): geqrf's form by CholeskyQR panels of 128 took the row-chunked SGEMM/DGEMM
      // and its copies here, 8 panels a 1024-wide matrix.
      const MatrixView<T> v2 = v.block(n, 0, m - n, n);
      tall_times_upper<T>(ctx, w.data() == v.data() ? MatrixView<const T>(v2) : w.block(n, 0, m - n, n),
                          yv, v2);
    } else if (w.data() == v.data()) {  // in place: V2 = W2 Y row chunk by row chunk
      multiply_in_place<T>(ctx, v.block(n, 0, m - n, n), yv);
    } else {
      gemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m - n, n, n, T(1), w.data() + n, w.ld(), y, ldy, T(0),
           v.data() + n, v.ld());
    }
  }
  // T = -U S L^{-T}: the right-hand side, then one TRSM from the right with L^T (unit upper).
  minus_u_s_kernel<T><<<grid_2d(n, n, kThreads), kThreads, 0, ctx.stream>>>(
      a, lda, d.data(), t.data(), t.ld(), n);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  trsm(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_UNIT, n, n, T(1),
       a, lda, t.data(), t.ld());
}

}  // namespace

template <class T>
void orhr_col(detail::ContextImpl& ctx, MatrixView<const T> q, MatrixView<T> v,
              MatrixView<T> t, VectorView<T> d) {
  const std::int64_t n = q.cols();
  if (n == 0) return;
  DeviceGuard guard(ctx.device);
  // The LU works in place on V's top block (its strictly lower part is V1's).
  copy<T>(ctx, q.block(0, 0, n, n), v.block(0, 0, n, n));
  reconstruct<T>(ctx, q, MatrixView<const T>(), v, t, d, MatrixView<T>());
}

template <class T>
void orhr_col_of_product(detail::ContextImpl& ctx, MatrixView<const T> w, MatrixView<const T> x,
                         MatrixView<T> v, MatrixView<T> t, VectorView<T> d, MatrixView<T> work) {
  const std::int64_t n = w.cols();
  if (n == 0) return;
  DeviceGuard guard(ctx.device);
  // Q1 = W1 X: the only part of Q formed (through `work` when w is v: GEMM must not alias).
  gemm(blas(ctx), CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, T(1), w.data(), w.ld(), x.data(), x.ld(),
       T(0), work.data(), work.ld());
  copy<T>(ctx, MatrixView<const T>(work.block(0, 0, n, n)), v.block(0, 0, n, n));
  reconstruct<T>(ctx, w, x, v, t, d, work);
}

GPUQR_INSTANTIATE_ORHR_COL_KERNEL(float)
GPUQR_INSTANTIATE_ORHR_COL_KERNEL(double)

}  // namespace gpuqr::kernels::cuda
