// Leaf operations of the CholeskyQR drivers and of Householder reconstruction
// (src/core/cholesky_qr.cpp, src/core/tsqr.cpp), declared once and implemented per backend:
// kernels::cpu (CBLAS/LAPACK: the reference twins, src/cpu/cholqr_kernels.cpp) and
// kernels::cuda (cuBLAS GEMM, cuSOLVER potrf and our small kernels, src/cuda/cholqr_kernels.cu,
// src/cuda/orhr_col.cu and src/cuda/gram_product.cu; NotCompiled stubs in
// src/stubs/cholqr_stubs.cpp).
//
// All views are in the backend's memory space and already checked by the drivers. On CUDA
// every leaf is enqueued on the context's stream and returns without waiting; numerical
// outcomes (a Cholesky breakdown) are written to a status vector in context memory that the
// driver reads back once, never thrown.
#pragma once

#include <cstdint>

#include "gpuqr/dense.hpp"
#include "src/core/context_impl.hpp"

namespace gpuqr::detail {

/// Entries of the status vector (doubles, context memory) of cholesky_inverse.
enum CholeskyStatus : int {
  kStatusBreakdown = 0,    // 0: R and R^{-1} are valid and finite; k > 0: failed at column k
                           // (k = n + 1: R^{-1} has a NaN/Inf, R is numerically singular)
  kStatusOffset = 1,       // ||G - I||_F of the input Gram matrix (before the shift)
  kStatusTrace = 2,        // trace(G) = ||A||_F^2
  kStatusInverseNorm = 3,  // ||R^{-1}||_F
  kStatusMinDiag = 4,      // min_i |R(i, i)|
  kStatusMaxDiag = 5,      // max_i |R(i, i)|
  kStatusShift = 6,        // the shift added to G's diagonal
  kStatusRowSum = 7,       // gram_status only (0 from cholesky_inverse): max_j sum_i
                           // |G(i, j) - delta_ij|, Gershgorin's bound of ||G - I||_2
  kStatusSize = 8,
};

}  // namespace gpuqr::detail

#define GPUQR_DECLARE_CHOLQR_KERNELS                                                               \
  /* G (n x n) := A^T A for A m x n, the full symmetric matrix, by GEMM (not SYRK: SYRK            \
     runs far below the memory bandwidth on tall-skinny shapes). */                                \
  template <class T>                                                                               \
  void gram(detail::ContextImpl& ctx, MatrixView<const T> a, MatrixView<T> g);                     \
  /* G (n x n) ~ A^T A in reduced precision, the full symmetric matrix: A's entries rounded        \
     to TF32 (10 explicit mantissa bits), products summed in FP32 (CUDA: cuBLAS's TF32 GEMMs,      \
     FP64 input converted chunk by chunk; CPU, the twin: SSYRK on a rounded float copy). Only      \
     CholeskyQR2's first-step preconditioner uses it (mixed-precision CholeskyQR, see              \
     cholesky_qr.cpp). False (nothing written) when its workspace cannot be had. */                \
  template <class T>                                                                               \
  bool gram_low(detail::ContextImpl& ctx, MatrixView<const T> a, MatrixView<T> g);                 \
  /* Whether gram_low is the backend's choice for CholeskyQR2's first Gram matrix of an m x n      \
     A (CUDA: n >= GPUQR_CHOLQR_LOW_GRAM_FROM, 256 by default, where cuBLAS's DGEMM or SGEMM       \
     Gram matrix is compute-bound; never on the CPU). The driver's GPUQR_CHOLQR_LOW_GRAM=0/1       \
     overrides it. */                                                                              \
  template <class T>                                                                               \
  bool gram_low_wanted(detail::ContextImpl& ctx, std::int64_t m, std::int64_t n);                  \
  /* G (n x n) := (A X)^T (A X) for A m x n, X n x n, without storing A X whole: row chunks        \
     of W = A X pass through a bounded scratch (CUDA: the leaf workspace, a few tens of MiB,       \
     so the chunk stays in L2) and their Gram matrices are summed. One read of A. */               \
  template <class T>                                                                               \
  void gram_of_product(detail::ContextImpl& ctx, MatrixView<const T> a, MatrixView<const T> x,     \
                       MatrixView<T> g);                                                           \
  /* As gram_of_product for X upper triangular with zeros below its diagonal (CholeskyQR's         \
     R^{-1}): CUDA skips the zero blocks for n > 128 (triangle_gemm.hpp), forming A X whole        \
     in the leaf workspace. */                                                                     \
  template <class T>                                                                               \
  void gram_of_upper_product(detail::ContextImpl& ctx, MatrixView<const T> a,                      \
                             MatrixView<const T> x, MatrixView<T> g);                              \
  /* Cholesky of the n x n Gram matrix G + s I, s = shift_factor * trace(G): on exit `g`           \
     holds the upper factor R (zeros below) and `rinv` R^{-1} (zeros below). Breakdown is          \
     reported in `status` (kStatusSize doubles, see detail::CholeskyStatus), never thrown;         \
     after a breakdown g and rinv hold no meaningful values. */                                    \
  template <class T>                                                                               \
  void cholesky_inverse(detail::ContextImpl& ctx, MatrixView<T> g, MatrixView<T> rinv,             \
                        double shift_factor, VectorView<double> status);                           \
  /* The status of the n x n symmetric G without factoring it (kStatusSize doubles): its           \
     offset ||G - I||_F, trace and row sum (kStatusRowSum), every other entry 0. G unchanged. */   \
  template <class T>                                                                               \
  void gram_status(detail::ContextImpl& ctx, MatrixView<const T> g, VectorView<double> status);    \
  /* C := alpha op(A) B, op(A) m x k, B k x n (GEMM); C must not overlap A or B. */                \
  template <class T>                                                                               \
  void multiply(detail::ContextImpl& ctx, Op op_a, MatrixView<const T> a, MatrixView<const T> b,   \
                MatrixView<T> c, double alpha = 1.0);                                              \
  /* A := A X in place (A m x n, X n x n, not overlapping A), row chunk by row chunk through       \
     a bounded scratch (CUDA: the leaf workspace, small enough to stay in L2). */                  \
  template <class T>                                                                               \
  void multiply_in_place(detail::ContextImpl& ctx, MatrixView<T> a, MatrixView<const T> x);        \
  /* B := B R^{-1} (TRSM from the right, R n x n upper, B m x n): the row-wise backward            \
     stable way to apply R^{-1} when R is too ill-conditioned for the explicit inverse. */         \
  template <class T>                                                                               \
  void trsm_right_upper(detail::ContextImpl& ctx, MatrixView<const T> r, MatrixView<T> b);         \
  /* Householder reconstruction (LAPACK's orhr_col) of Q (m x n, orthonormal columns,              \
     m >= n): V (unit lower trapezoidal; written strictly below v's diagonal, v's upper            \
     triangle is left unspecified), T (n x n, upper, zeros below) and the signs d (n) with         \
     Q diag(d) = the first n columns of I - V T V^T. q and v must not overlap. */                  \
  template <class T>                                                                               \
  void orhr_col(detail::ContextImpl& ctx, MatrixView<const T> q, MatrixView<T> v, MatrixView<T> t, \
                VectorView<T> d);                                                                  \
  /* geqrf's form from orhr_col's output: a(i, j) := d_i r(i, j) for i <= j (the strictly          \
     lower part of `a` is kept) and tau_i := t(i, i). r, t n x n; a m x n. */                      \
  template <class T>                                                                               \
  void finish_geqrf(detail::ContextImpl& ctx, MatrixView<const T> r, VectorView<const T> d,        \
                    MatrixView<const T> t, MatrixView<T> a, VectorView<T> tau);                    \
  /* orhr_col of Q = W X (W m x n, X n x n) without forming Q: only Q's top n x n block is         \
     formed; V's tall part is W (X U^{-1}) by one GEMM. Outputs as orhr_col's; `work` is           \
     n x n scratch. w may be v itself (then V's tall part is formed in place). */                  \
  template <class T>                                                                               \
  void orhr_col_of_product(detail::ContextImpl& ctx, MatrixView<const T> w, MatrixView<const T> x, \
                           MatrixView<T> v, MatrixView<T> t, VectorView<T> d, MatrixView<T> work);

#define GPUQR_INSTANTIATE_CHOLQR_KERNELS(T)                                                        \
  template void gram<T>(detail::ContextImpl&, MatrixView<const T>, MatrixView<T>);                 \
  template bool gram_low<T>(detail::ContextImpl&, MatrixView<const T>, MatrixView<T>);             \
  template bool gram_low_wanted<T>(detail::ContextImpl&, std::int64_t, std::int64_t);              \
  template void gram_of_product<T>(detail::ContextImpl&, MatrixView<const T>, MatrixView<const T>, \
                                   MatrixView<T>);                                                 \
  template void gram_of_upper_product<T>(detail::ContextImpl&, MatrixView<const T>,                \
                                         MatrixView<const T>, MatrixView<T>);                      \
  template void cholesky_inverse<T>(detail::ContextImpl&, MatrixView<T>, MatrixView<T>, double,    \
                                    VectorView<double>);                                           \
  template void gram_status<T>(detail::ContextImpl&, MatrixView<const T>, VectorView<double>);     \
  template void multiply<T>(detail::ContextImpl&, Op, MatrixView<const T>, MatrixView<const T>,    \
                            MatrixView<T>, double);                                                \
  template void multiply_in_place<T>(detail::ContextImpl&, MatrixView<T>, MatrixView<const T>);    \
  template void trsm_right_upper<T>(detail::ContextImpl&, MatrixView<const T>, MatrixView<T>);     \
  template void finish_geqrf<T>(detail::ContextImpl&, MatrixView<const T>, VectorView<const T>,    \
                                MatrixView<const T>, MatrixView<T>, VectorView<T>);

// Q = A X for upper triangular X, apart: the CUDA backend defines it in src/cuda/gram_product.cu.
#define GPUQR_DECLARE_TALL_TIMES_UPPER                                                        \
  /* Q := A X for A m x n and X n x n upper triangular (its strictly lower part is not read:   \
     it may hold anything, NaN included). Q m x n, its own ld; q may be a itself (same data   \
     and ld: in place), else it must not overlap a; x must not overlap q. CPU: TRMM (BLAS).   \
     CUDA: one streamed pass over A on the tensor cores for n <= 128 (gram_product.cu; FP64   \
     by DMMA, FP32 by 3xTF32: a GEMM's accuracy in the precision), block-column GEMMs above   \
     (triangle_gemm.hpp; in place through row chunks), cuBLAS TRMM where neither applies.     \
     Asynchronous on CUDA. */                                                                 \
  template <class T>                                                                          \
  void tall_times_upper(detail::ContextImpl& ctx, MatrixView<const T> a, MatrixView<const T> x, \
                        MatrixView<T> q);                                                     \
  /* Whether the drivers should form Q = A X (X upper) by tall_times_upper rather than by      \
     multiply's GEMM for an m x n A: on CUDA where the streamed kernel or the block columns   \
     (n > 128, m >= 65536) are expected to win                                                \
     (GPUQR_QPROD, read on every call, and the test hook tall_times_upper_mode in             \
     src/cuda/gram_kernels.hpp); never on the CPU (the GEMM path there is unchanged). */       \
  template <class T>                                                                          \
  bool tall_times_upper_wanted(detail::ContextImpl& ctx, std::int64_t m, std::int64_t n);

#define GPUQR_INSTANTIATE_TALL_TIMES_UPPER(T)                                                 \
  template void tall_times_upper<T>(detail::ContextImpl&, MatrixView<const T>,                \
                                    MatrixView<const T>, MatrixView<T>);                      \
  template bool tall_times_upper_wanted<T>(detail::ContextImpl&, std::int64_t, std::int64_t);

// orhr_col apart: the CUDA backend defines it in a file of its own.
#define GPUQR_INSTANTIATE_ORHR_COL_KERNEL(T)                                                  \
  template void orhr_col<T>(detail::ContextImpl&, MatrixView<const T>, MatrixView<T>,         \
                            MatrixView<T>, VectorView<T>);                                    \
  template void orhr_col_of_product<T>(detail::ContextImpl&, MatrixView<const T>,             \
                                       MatrixView<const T>, MatrixView<T>, MatrixView<T>,     \
                                       VectorView<T>, MatrixView<T>);

namespace gpuqr::kernels::cpu {
GPUQR_DECLARE_CHOLQR_KERNELS
GPUQR_DECLARE_TALL_TIMES_UPPER
}  // namespace gpuqr::kernels::cpu

namespace gpuqr::kernels::cuda {
GPUQR_DECLARE_CHOLQR_KERNELS
GPUQR_DECLARE_TALL_TIMES_UPPER
}  // namespace gpuqr::kernels::cuda
