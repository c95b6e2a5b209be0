// gpuqr/dense.hpp: dense Householder QR, LAPACK-shaped.
//
// All matrices are column-major views with a leading dimension. On a CPU context every view
// must be in host memory. On a CUDA context views are in device memory (on the context's
// device) and the calls are asynchronous on the context's stream, except where a result comes
// back to the host (trtrs and gels return info structs, which synchronize). The functions
// below also accept host views on a CUDA context: those are copied to the device for the call
// and back when it returns (synchronous, a device allocation per call; the copy time and bytes
// are counted in Context::staging_stats so they can be reported apart).
// Inputs are checked before anything is written: on an exception the outputs are untouched.
// float and double are instantiated.
#pragma once

#include <cstdint>
#include <vector>

#include "gpuqr/context.hpp"
#include "gpuqr/matrix.hpp"

namespace gpuqr {

enum class Side { left, right };
enum class Op { no_trans, trans };
enum class Uplo { upper, lower };
enum class Diag { non_unit, unit };
/// thin: Q is m x min(m, n); full: Q is m x m.
enum class QMode { thin, full };

/// QR factorization A = Q R of an m x n matrix (any m, n), as LAPACK's geqrf.
/// On exit R is on and above the diagonal of `a`, the Householder vectors below it (unit
/// diagonal implied), and tau (size >= min(m, n)) holds their scalars: Q = H_1 H_2 ... H_k.
template <class T>
void geqrf(const Context& ctx, MatrixView<T> a, VectorView<T> tau);

/// QR factorization with the full Q formed as it goes, as Kerr, Campbell & Richards (2009) do
/// it on the GPU: per block of `block` columns (0: geqrf's block size), the block's reflectors
/// in W/Y form, H_1 ... H_r = I + W Y^T (Y the explicit reflectors, W = -Y T), the trailing
/// columns updated as A + Y (W^T A), and Q accumulated as Q (I + W Y^T) from Q = I.
/// On exit `a` and `tau` hold geqrf's factors (the same as geqrf's, up to rounding) and `q`
/// (m x m, not overlapping `a`) holds Q. It costs the full Q's GEMMs (about 4 m^2 n flops
/// more than geqrf): take geqrf and orgqr when the thin Q or no Q is wanted.
template <class T>
void geqrf_wy(const Context& ctx, MatrixView<T> a, VectorView<T> tau, MatrixView<T> q,
              std::int64_t block = 0);

/// Forms the m x n matrix Q with orthonormal columns from k reflectors, as LAPACK's orgqr:
/// `a` (m x n, m >= n >= k) holds the vectors in its first k columns on entry (as geqrf left
/// them) and Q's first n columns on exit. n = min(m, n0) gives the thin Q of an m x n0
/// factorization, n = m the full Q (copy the reflectors into an m x m array first).
template <class T>
void orgqr(const Context& ctx, std::int64_t k, MatrixView<T> a, VectorView<const T> tau);

/// C := op(Q) C (side left, C m x nc) or C op(Q) (side right, C nc x m), as LAPACK's ormqr.
/// Q = H_1 ... H_k with the reflectors in the first k columns of `a` (m x k, m rows matching
/// C's rows for left, C's columns for right); tau has k entries.
template <class T>
void ormqr(const Context& ctx, Side side, Op op, MatrixView<const T> a, VectorView<const T> tau,
           MatrixView<T> c);

/// Result of a triangular solve: `singular_at` is the first index i with A(i, i) == 0
/// (then B is left unchanged, as LAPACK's trtrs), or -1.
struct TriangularInfo {
  std::int64_t singular_at = -1;
  bool singular() const noexcept { return singular_at >= 0; }
};

/// Solves op(A) X = B for X (overwriting B, n x nrhs), A n x n triangular, as LAPACK's trtrs.
/// Synchronizes (the singularity check reads A's diagonal).
template <class T>
TriangularInfo trtrs(const Context& ctx, Uplo uplo, Op op, Diag diag, MatrixView<const T> a,
                     MatrixView<T> b);

/// Outcome of a least-squares solve.
struct LstsqInfo {
  /// ||b_j - A x_j||_2 for each right-hand side j (from the trailing m - n entries of Q^T b).
  std::vector<double> residual_norms;
  /// min |R(i,i)| / max |R(i,i)|: a cheap lower-quality estimate of 1/cond(A); 0 when R is
  /// exactly singular. Values near machine epsilon mean x is dominated by rounding.
  double rcond_estimate = 0.0;
  /// First i with R(i, i) == 0 (then x is not computed and b holds Q^T b), or -1.
  std::int64_t singular_at = -1;
  bool singular() const noexcept { return singular_at >= 0; }
};

/// Least squares min ||A x - b|| for m >= n with full column rank, as LAPACK's gels('N').
/// On exit `a` (m x n) holds geqrf's factors, and `b` (m x nrhs) holds x in its first n rows
/// and Q^T b's residual part below. Synchronizes (residual norms come back to the host).
template <class T>
LstsqInfo gels(const Context& ctx, MatrixView<T> a, MatrixView<T> b);

/// A QR factorization object: factor once, then solve, get R, get or apply Q.
/// The factors live in the context's memory (device memory for CUDA).
/// Names follow Eigen's HouseholderQR: compute, solve, matrix_qr, h_coeffs, householder_q.
template <class T>
class HouseholderQR {
 public:
  explicit HouseholderQR(Context ctx = Context::cpu()) : ctx_(std::move(ctx)) {}
  /// Factors a copy of `a` (any memory space).
  HouseholderQR(Context ctx, MatrixView<const T> a) : ctx_(std::move(ctx)) { compute(a); }

  /// Factors a copy of `a` (m x n, any shape, any memory space); replaces any earlier factors.
  HouseholderQR& compute(MatrixView<const T> a);

  bool is_computed() const noexcept { return computed_; }
  std::int64_t rows() const noexcept { return qr_.rows(); }
  std::int64_t cols() const noexcept { return qr_.cols(); }
  const Context& context() const noexcept { return ctx_; }

  /// geqrf's compact storage: R on and above the diagonal, reflectors below.
  const Matrix<T>& matrix_qr() const;
  /// The reflectors' scalars tau (min(m, n) x 1).
  const Matrix<T>& h_coeffs() const;
  /// R, min(m, n) x n, upper trapezoidal, zeros below the diagonal; context memory.
  Matrix<T> matrix_r() const;
  /// Q formed explicitly: m x min(m, n) (thin) or m x m (full); context memory.
  Matrix<T> householder_q(QMode mode = QMode::thin) const;
  /// C := op(Q) C or C op(Q), in place; C in the context's memory space.
  void apply_q(Side side, Op op, MatrixView<T> c) const;

  /// Least-squares solution X (n x nrhs) of min ||A X - B|| for B m x nrhs (any memory space;
  /// X is returned in B's space). Needs m >= n. `info` (optional) receives residual norms,
  /// the rcond estimate and singular_at. When R is exactly singular there is no unique
  /// solution: with `info` given, X is filled with NaN and info->singular_at says where;
  /// without it, InvalidArgument is thrown naming the column.
  Matrix<T> solve(MatrixView<const T> b, LstsqInfo* info = nullptr) const;

  /// min |R(i,i)| / max |R(i,i)| (see LstsqInfo).
  double rcond_estimate() const;

 private:
  void require_computed(const char* what) const;
  Context ctx_;
  Matrix<T> qr_;
  Matrix<T> tau_;
  bool computed_ = false;
};

}  // namespace gpuqr
