// CholeskyQR2 and shifted CholeskyQR3 (backend-agnostic drivers over the leaves of
// src/core/cholqr_kernels.hpp), with the a-posteriori certificate that lets the public
// tall-skinny API fall back to Householder QR instead of returning a poor factorization.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpuqr/tsqr.hpp"

namespace gpuqr::detail {

/// Buffers of one tall-skinny call, carved from the context's tall-skinny workspace (CUDA) or
/// a host vector (CPU): up to two m x n work matrices, the n x n factors and the status.
template <class T>
struct TsqrBuffers {
  MatrixView<T> w[2];      // m x n work matrices (w[1] empty unless asked for)
  MatrixView<T> r[3];      // R of each CholeskyQR step (n x n; the Gram matrix first)
  MatrixView<T> rinv[2];   // R_s^{-1} of step s in rinv[s % 2]
  MatrixView<T> rinv_all;  // single pass: R^{-1} = R_1^{-1} R_2^{-1}
  MatrixView<T> work;      // n x n scratch (orhr_col_of_product)
  /// After an accepted (or kept) CholeskyQR: Q = q_left q_right (m x n times n x n), for
  /// callers that did not ask for Q to be written.
  MatrixView<const T> q_left, q_right;
  MatrixView<T> prod;      // R products, then the final R (n x n)
  MatrixView<T> t;         // orhr_col's T (n x n)
  VectorView<T> d;         // orhr_col's signs (n)
  VectorView<T> tau;       // Householder scalars (n) for the householder method
  VectorView<double> status;  // kStatusSlots * kStatusSize doubles, context memory
  std::vector<double> host;   // CPU: the storage behind every view above
};

/// Carves the buffers for an m x n problem; `work_matrices` (0, 1 or 2) m x n work matrices.
template <class T>
TsqrBuffers<T> carve_tsqr_buffers(const Context& ctx, std::int64_t m, std::int64_t n,
                                  int work_matrices);

/// What a CholeskyQR attempt ended with.
struct CholeskyQrOutcome {
  bool ok = false;
  /// Why the result was rejected (empty when ok).
  std::string reason;
  /// Estimate of kappa_2(A): the product over steps of max(|R|_diag ratio, kappa_F(R_k) / n),
  /// each a lower bound of kappa_2(R_k); -1 when a step broke down.
  double condition_estimate = -1;
  /// ||W^T W - I||_F of the last step's input W (the certificate; -1 when not reached).
  double last_offset = -1;
  /// True when CholeskyQR2 ran in single-pass form: the second Gram matrix fused with
  /// W = A R_1^{-1} (W never stored) and Q = A (R_1^{-1} R_2^{-1}) by one GEMM or streamed pass
  /// (multiply_upper).
  bool single_pass = false;
  /// True when the first Gram matrix was computed in reduced precision (low_first).
  bool low_first = false;
  /// True when step 1 was block-Jacobi preconditioned (see cholesky_qr): W = A D^{-1}.
  bool block_jacobi = false;
  /// Block-Jacobi: the row sum of W^T W - I (kStatusRowSum), its certificate; -1 otherwise.
  double last_row_sum = -1;
  /// Step 1's trace(G) = ||A||_F^2 and ||R_1^{-1}||_F (-1 when step 1 was not reached).
  double first_trace = -1;
  double first_inverse_norm = -1;
};

/// The status vector's slots: step s of CholeskyQR at slot s (0, 1, 2), then block-Jacobi's:
/// D's factorization, the predicted W^T W's row sum, and the last Gram matrix's row sum.
inline constexpr int kSlotJacobiFactor = 3;
inline constexpr int kSlotJacobiPredicted = 4;
inline constexpr int kSlotLastGram = 5;
inline constexpr int kStatusSlots = 6;

/// Block-Jacobi preconditioning's diagonal blocks (the streamed product's width on CUDA).
inline constexpr std::int64_t kJacobiBlock = 128;
/// Block-Jacobi is taken when the predicted W^T W (from the first Gram matrix, reduced
/// precision included) has a row sum of |W^T W - I| at most this ...
inline constexpr double kJacobiPredicted = 0.45;
/// ... and its result is certified when the computed one is at most this: a row sum bounds
/// ||W^T W - I||_2 (Gershgorin), so kappa_2(W)^2 <= (1 + 0.5) / (1 - 0.5) = 3 (against 1.7
/// for kCertificateOffset), the same order in Yamamoto et al.'s bound below. The Frobenius
/// offset cannot serve here: with D block diagonal, W^T W - I keeps the cosines between the
/// blocks (of order 1 / sqrt(m) each for a random A, so ||.||_F ~ n / sqrt(m): 0.47 at
/// 2^22 x 1024, where ||.||_2 ~ 2 sqrt(n / m) = 0.03 and the row sum 0.38).
inline constexpr double kJacobiCertificate = 0.5;

/// The largest ||W^T W - I||_F accepted for the last CholeskyQR step's input W: then
/// kappa_2(W)^2 <= (1 + 0.25) / (1 - 0.25) < 1.7, and CholeskyQR of W is as orthogonal as
/// Householder QR (Yamamoto et al. 2015: ||Q^T Q - I|| <= 6 (mn + n(n+1)) u kappa(W)^2).
inline constexpr double kCertificateOffset = 0.25;

/// R^{-1} is applied by GEMM with the explicit inverse when ||R||_F ||R^{-1}||_F / sqrt(n) is
/// at most this (the residual then stays within a small multiple of Householder QR's),
/// else by TRSM.
inline constexpr double kGemmCondition = 100.0;

/// CholeskyQR2 runs in single-pass form (see CholeskyQrOutcome::single_pass) when
/// ||R_1||_F ||R_1^{-1}||_F / sqrt(n) is at most this: then kappa_2(A) <= 50 sqrt(n), and Q =
/// A R^{-1} by one GEMM errs by O(u kappa(A)), within Householder QR's bound; the skipped
/// correction of W's rounding is what CholeskyQR2's second step exists for when kappa is large.
inline constexpr double kSinglePassCondition = 50.0;

/// Whether multiply_upper forms an m x n product by the streamed tall_times_upper leaf (CUDA,
/// n <= 128, tall enough; GPUQR_QPROD=0 says no) rather than by multiply's GEMM.
template <class T>
bool upper_product_streamed(const Context& ctx, std::int64_t m, std::int64_t n);

/// Q := left X for X (n x n) upper triangular with zeros below (the R inverses here), left
/// m x n; q may be left itself (same data: in place). By the tall_times_upper leaf where
/// upper_product_streamed says so, else by multiply's GEMM (multiply_in_place in place).
/// Asynchronous on CUDA.
template <class T>
void multiply_upper(const Context& ctx, MatrixView<const T> left, MatrixView<const T> x,
                    MatrixView<T> q);

/// CholeskyQR2 (shifted = false) or shifted CholeskyQR3 (true) of `a` (m x n, m >= n >= 1).
/// Enqueues the work, synchronizes once per step to read its Cholesky status, and
/// only when all steps succeeded and the certificate holds writes Q to `q` (m x n, may be
/// `a` itself, or a view of buf.w[...] not used by the method: w[0] for CholeskyQR2 with
/// q != a is fine when buf.w[1] exists) and R to buf.prod. On failure `q` and `a` are
/// untouched, unless `keep_rejected` (then Q and R are written whatever they are, and
/// ok = false with the reason). With q empty nothing is written to it: Q = buf.q_left
/// buf.q_right (views of `a` or buf.w and of the R inverses). CholeskyQR2 uses buf.w[0];
/// shifted CholeskyQR3 buf.w[0] and buf.w[1]. `single_pass_ok` allows the single-pass form.
/// `unchecked` (a routine's name, or null): A's NaN/Inf check was left to this call; when
/// the first Gram matrix's trace is not finite, the full check runs (check_finite, which
/// throws InvalidArgument naming `unchecked`) before anything is written. A finite trace
/// proves every entry finite: each one's square is in it.
///
/// `low_first` (CholeskyQR2 only): the first Gram matrix in reduced precision (the gram_low
/// leaf; the full one where it cannot run), as a preconditioner. This is mixed-precision
/// CholeskyQR2 (Yamazaki, Tomov & Dongarra 2015): R_1 from a perturbed Gram matrix still
/// gives A = (A R_1^{-1}) R_1 exactly as before, W = A R_1^{-1} is merely less orthogonal,
/// and the second step, in full precision, corrects it; its certificate (||W^T W - I||_F
/// <= 0.25) is the same test that accepts any CholeskyQR2 result. The caller retries in
/// full precision when it fails (try_cholesky).
///
/// `block_jacobi_ok` (CholeskyQR2, n >= 2 kJacobiBlock: block_jacobi_shape): step 1 may be
/// block-Jacobi preconditioned. D = the Cholesky factor of the first Gram matrix's diagonal
/// blocks (kJacobiBlock columns), W = A D^{-1} by one product per block (n kJacobiBlock
/// columns of work per row where R_1^{-1} takes n (n + kJacobiBlock) / 2), then step 2 as
/// before on W, R = R_2 D. Taken only where D^{-T} G D^{-1} (G the first Gram matrix)
/// predicts a W close to orthonormal (kJacobiPredicted): the blocks' columns may be as
/// ill-conditioned as R_1 allows, but the blocks must be nearly orthogonal to each other
/// (a random A: about m >= (1.8 (n - 128))^2, 2.6M rows at n = 1024, 0.48M at 512); else
/// R_1 as before. Certified by kJacobiCertificate.
template <class T>
CholeskyQrOutcome cholesky_qr(const Context& ctx, MatrixView<const T> a, MatrixView<T> q,
                              bool shifted, bool keep_rejected, TsqrBuffers<T>& buf,
                              bool single_pass_ok = true, const char* unchecked = nullptr,
                              bool low_first = false, bool block_jacobi_ok = true);

/// Whether an m x n A is block-Jacobi's shape (n >= 2 kJacobiBlock, m >= 4 n) and
/// GPUQR_CHOLQR_BLOCK_JACOBI (read on every call) is not "0"; "1" skips the prediction.
bool block_jacobi_shape(std::int64_t m, std::int64_t n);

/// Whether CholeskyQR2's first Gram matrix of an m x n A is taken in reduced precision
/// (cholesky_qr's low_first): GPUQR_CHOLQR_LOW_GRAM=0/1 where set (read on every call:
/// tests, measurements), else the backend's gram_low_wanted.
template <class T>
bool low_gram_first(const Context& ctx, std::int64_t m, std::int64_t n);

/// The shift factor c of shifted CholeskyQR (Fukaya, Kannan, Nakatsukasa, Yamamoto,
/// Yanagisawa 2020): s = 11 (m n + n (n + 1)) u ||A||_2^2, with ||A||_F^2 = trace(A^T A) in
/// place of ||A||_2^2 (an upper bound, which the analysis allows), so s = c trace(G).
double cholesky_shift_factor(std::int64_t m, std::int64_t n, double unit_roundoff);

}  // namespace gpuqr::detail
