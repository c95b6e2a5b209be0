// gpuqr/tsqr.hpp: QR of tall-and-skinny matrices (m >> n) by several methods, chosen safely.
//
// Methods (every one callable by name; `automatic` chooses):
//   householder            the blocked Householder QR of gpuqr/dense.hpp (the reference)
//   qrf_ah                 Householder QR with approximate Householder vectors (Tomas &
//                          Quintana-Orti 2020): per panel, the Gram block and the top block give
//                          R, V_T and D; V_B = A_B D; a breakdown test ends a panel early
//   tsqr                   a reduction tree of local Householder QRs over row blocks
//   cholesky_qr2           CholeskyQR twice (Gram matrix by GEMM, Cholesky, Q = A R^{-1})
//   shifted_cholesky_qr3   a shifted CholeskyQR, then CholeskyQR2 (condition numbers up to
//                          about 1/eps)
//
// Three outputs, as users ask for them:
//   tsqr_geqrf    geqrf's form (R above the diagonal, Householder vectors below, tau), so that
//                 orgqr/ormqr/HouseholderQR-style use works unchanged. Methods whose natural
//                 output is an explicit Q (CholeskyQR, TSQR) reconstruct the Householder
//                 vectors from it (as LAPACK's orhr_col).
//   tsqr_explicit the thin Q (m x n, overwriting A) and R (n x n).
//   TallSkinnyQR  R with Q kept implicitly (apply Q^T b, Q x, form Q, least squares).
//
// All matrices are column-major views; on a CUDA context in device memory, asynchronous on the
// context's stream except where an info struct comes back. Those calls wait on the host where
// a decision needs a device value: CholeskyQR once per step (its Cholesky status), QRF-AH once
// per panel (the panel's final width), TSQR once at the end (its temporaries are freed), and
// TallSkinnyQR::apply_qt on the tree path. Inputs are checked before anything is written. float and double are instantiated. Requires m >= n.
//
// How `automatic` chooses: for m < 4 n Householder QR (as fast there). Otherwise CholeskyQR2,
// accepted only when both Cholesky factorizations succeed and the second step's Gram matrix
// certifies the result (||W^T W - I||_F <= 0.25, so the last step works on a matrix with
// kappa^2 < 1.7 and is as orthogonal as Householder QR); else shifted CholeskyQR3 under the
// same certificate; else Householder QR. TsqrInfo says which method produced the result and
// why the others were given up. Where Householder QR was measured faster on the GPU it goes
// first (docs/PERF.md): geqrf's form (tsqr_geqrf) for n >= 512 in FP64 and n >= 256 in FP32,
// and TallSkinnyQR in FP32 for n >= 512 with m n >= 2^31 (on a copy of A). When CholeskyQR
// is given up, the TSQR tree replaces Householder QR for n <= 32 and m >= 64 n.
// qrf_ah is only used when asked for by name (panel width
// TsqrOptions::block, at most 32; TsqrInfo::panels_shrunk counts the panels its breakdown
// test ended early).
//
// TallSkinnyQR with CholeskyQR2 on a well-conditioned A (||R_1||_F ||R_1^{-1}||_F / sqrt(n)
// <= 50 for the first step's R_1) keeps Q = A R^{-1} implicit: it copies A, reads it twice
// (the second Gram matrix fused with A R_1^{-1}, never stored) and writes nothing tall.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "gpuqr/context.hpp"
#include "gpuqr/dense.hpp"
#include "gpuqr/matrix.hpp"

namespace gpuqr {

enum class TsqrMethod {
  automatic,
  householder,
  qrf_ah,
  tsqr,
  cholesky_qr2,
  shifted_cholesky_qr3,
};

/// "automatic", "householder", "qrf_ah", "tsqr", "cholesky_qr2", "shifted_cholesky_qr3".
const char* to_string(TsqrMethod method);
/// Parses the names above (and "auto"); throws InvalidArgument otherwise.
TsqrMethod parse_tsqr_method(const std::string& text);

struct TsqrOptions {
  TsqrMethod method = TsqrMethod::automatic;
  /// Panel width (qrf_ah) or rows per leaf block (tsqr); 0 picks one by shape and precision.
  std::int64_t block = 0;
  /// When a named CholeskyQR method's result is rejected (its Cholesky broke down, or the
  /// certificate below failed), true (the default) recomputes by Householder QR and says why
  /// in TsqrInfo::fallback_reason; false returns the rejected result anyway (info.method stays
  /// the method, fallback_reason says why it is not to be trusted): for experiments only.
  /// `automatic` always falls back.
  bool fallback = true;
  /// TallSkinnyQR only: when the factorization can keep Q implicit as A R^{-1} (single-pass
  /// CholeskyQR2, the well-conditioned case), keep a view of the caller's `a` instead of a
  /// copy: the object allocates no m x n storage and copies nothing (the second Gram pass
  /// still uses an m x n scratch in the context's grow-only workspace, which stays allocated). The caller must then keep
  /// `a` alive and unchanged while the object is used. Otherwise (other methods, or Q that must
  /// be formed) the object copies A as usual; TsqrInfo::input_borrowed says which happened.
  bool borrow_input = false;
};

/// What a tall-skinny factorization did.
struct TsqrInfo {
  /// The method that produced the result (never `automatic`).
  TsqrMethod method = TsqrMethod::householder;
  /// The 2-norm condition estimate of A the choice was based on; -1 when none was computed.
  double condition_estimate = -1;
  /// A method that was tried first and given up (e.g. the Cholesky factorization of the Gram
  /// matrix broke down) before `method` produced the result; empty when none.
  std::string fallback_reason;
  /// TallSkinnyQR with borrow_input: true when the object kept a view of the caller's A.
  bool input_borrowed = false;
  /// qrf_ah: how many panels ended early on the breakdown test.
  std::int64_t panels_shrunk = 0;
  /// CholeskyQR methods: ||W^T W - I||_F for the input W of the last CholeskyQR step, the
  /// certificate of the result's orthogonality (accepted when <= 0.25); -1 otherwise.
  double orthogonality_certificate = -1;
  /// geqrf's form by the blocked Householder QR on wide n (TsqrMethod::householder): how many
  /// of its outer panels were factored by CholeskyQR2 (or shifted CholeskyQR3) with the
  /// Householder vectors reconstructed, rather than by Householder panels. The first panel
  /// that CholeskyQR rejects, and every panel after it, take the Householder panels;
  /// fallback_reason then says why.
  std::int64_t cholesky_panels = 0;
  /// CholeskyQR2: true when its first Gram matrix was computed in reduced precision (TF32
  /// inputs, FP32 sums; wide n on CUDA, where that Gram matrix is compute-bound) as a
  /// preconditioner, the second step in full precision. The result is held to the same
  /// certificate; an input that fails it is redone in full precision before any fallback.
  bool mixed_precision = false;
  /// CholeskyQR2: true when its first step was block-Jacobi preconditioned: W = A D^{-1} with
  /// D the Cholesky factors of the first Gram matrix's 128-column diagonal blocks, taken
  /// where the Gram matrix predicts the blocks nearly orthogonal to each other (wide, very
  /// tall, well-mixed inputs), at about a fifth of the first product's work. The result is
  /// certified by the Gershgorin row sum of W^T W - I (<= 0.5: kappa(W)^2 <= 3); one that
  /// fails is redone without it.
  bool block_jacobi = false;
};

/// QR of an m x n matrix (m >= n) in geqrf's form: on exit R is on and above the diagonal of
/// `a`, the Householder vectors below it, tau (>= n entries) their scalars; Q = H_1 ... H_n.
template <class T>
TsqrInfo tsqr_geqrf(const Context& ctx, MatrixView<T> a, VectorView<T> tau,
                    const TsqrOptions& options = {});

/// QR of an m x n matrix (m >= n) with Q explicit: on exit `a` holds Q (m x n, orthonormal
/// columns) and `r` (n x n) holds R, upper triangular, zeros below the diagonal.
template <class T>
TsqrInfo tsqr_explicit(const Context& ctx, MatrixView<T> a, MatrixView<T> r,
                       const TsqrOptions& options = {});

/// A tall-skinny factorization object: R, and Q kept implicitly in whatever form the method
/// produces (Householder vectors, a TSQR tree, or A with R's inverse applied lazily). The data
/// live in the context's memory.
template <class T>
class TallSkinnyQR {
 public:
  /// Factors a copy of `a` (m x n, m >= n, the context's memory space).
  TallSkinnyQR(Context ctx, MatrixView<const T> a, const TsqrOptions& options = {});
  ~TallSkinnyQR();
  TallSkinnyQR(TallSkinnyQR&&) noexcept;
  TallSkinnyQR& operator=(TallSkinnyQR&&) noexcept;

  std::int64_t rows() const noexcept;
  std::int64_t cols() const noexcept;
  const Context& context() const noexcept;
  const TsqrInfo& info() const noexcept;

  /// R (n x n, upper triangular, zeros below); context memory.
  Matrix<T> matrix_r() const;
  /// The thin Q (m x n); context memory.
  Matrix<T> matrix_q() const;
  /// Q^T C (n x k) for C m x k, with Q the thin Q; context memory.
  Matrix<T> apply_qt(MatrixView<const T> c) const;
  /// Q Y (m x k) for Y n x k, with Q the thin Q; context memory.
  Matrix<T> apply_q(MatrixView<const T> y) const;
  /// Least-squares solution X (n x k) of min ||A X - B|| for B m x k (context memory).
  Matrix<T> solve(MatrixView<const T> b) const;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace gpuqr
