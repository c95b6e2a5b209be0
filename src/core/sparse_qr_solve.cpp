// Sparse multifrontal QR on the CPU: applying Q (apply_qt, apply_q) with the kept per-front
// Householder reflectors, the least-squares solve (with kept reflectors or from the carried
// C = Q^T B), and the minimum-norm solve through the QR of A^T.
#include <algorithm>
#include <cmath>
#include <string>

#include "gpuqr/dense.hpp"
#include "gpuqr/error.hpp"
#include "gpuqr/sparse_qr.hpp"
#include "src/core/sparse_qr_detail.hpp"

namespace gpuqr {

template <class T>
void SparseQR<T>::check_rhs(MatrixView<const T> b, std::int64_t rows, const char* who) const {
  using I = std::int64_t;
  GPUQR_CHECK_ARG(b.on_host(), std::string(who) + ": B must be in host memory");
  GPUQR_CHECK_ARG(b.rows() == rows, std::string(who) + ": B has " + std::to_string(b.rows()) +
                                        " rows, expected " + std::to_string(rows));
  for (I j = 0; j < b.cols(); ++j)
    for (I i = 0; i < b.rows(); ++i)
      GPUQR_CHECK_ARG(std::isfinite(b(i, j)), std::string(who) + ": B has a NaN or Inf value");
}

template <class T>
std::vector<std::int64_t> SparseQR<T>::qt_pivot_rows() const {
  using I = std::int64_t;
  std::vector<I> at(static_cast<std::size_t>(cols()), -1);
  const I nf = static_cast<I>(fronts_.size());
  for (I fi = 0; fi < nf; ++fi) {
    const FrontInfo& f = analysis_.fronts[fi];
    for (I i = 0; i < f.npiv; ++i)
      if (fronts_[fi].pivot_row[i] >= 0) at[f.first_pivot + i] = 1;
  }
  I t = 0;
  for (I& v : at)
    if (v >= 0) v = t++;
  return at;
}

template <class T>
std::int64_t SparseQR<T>::r_row_count() const {
  std::int64_t count = 0;
  for (const Front& fr : fronts_)
    for (const std::int64_t pr : fr.pivot_row) count += pr >= 0 ? 1 : 0;
  return count;
}

namespace {

/// w := op(Q) w for one front's kept reflectors stored by blocks (SparseQR's Front:
/// reflectors, block_at, block_rows, tau; blocks of `nb`); w has the front's rows, on the host.
template <class T, class Values>
void apply_front_reflectors(const Context& ctx, Op op, const std::vector<T>& tau,
                            const Values& reflectors, const std::vector<std::int64_t>& block_at,
                            const std::vector<std::int64_t>& block_rows, std::int64_t nb,
                            MatrixView<T> w) {
  using I = std::int64_t;
  const I k = static_cast<I>(tau.size()), blocks = static_cast<I>(block_rows.size());
  if (k == 0 || w.cols() == 0) return;
  // Q = H_0 H_1 ... H_{k-1}: Q^T applies the blocks first to last, Q last to first; each
  // block on the rows it reaches.
  for (I i = 0; i < blocks; ++i) {
    const I b = op == Op::trans ? i : blocks - 1 - i;
    const I r0 = b * nb, kb = std::min(nb, k - r0), h = block_rows[b];
    const MatrixView<const T> v(reflectors.data() + block_at[b], h, kb, std::max<I>(1, h));
    ormqr<T>(ctx, Side::left, op, v, VectorView<const T>(tau.data() + r0, kb),
             w.block(r0, 0, h, w.cols()));
  }
}

}  // namespace

template <class T>
Matrix<T> SparseQR<T>::apply_qt(MatrixView<const T> b) const {
  using I = std::int64_t;
  require_householder("SparseQR::apply_qt");
  check_rhs(b, rows(), "SparseQR::apply_qt");
  const I m = rows(), nrhs = b.cols();
  const std::vector<I> lead = qt_pivot_rows();
  I tail = r_row_count();  // the next row of the result below R's rows
  Matrix<T> out(m, nrhs);
  Context ctx = Context::cpu();
  ctx.set_check_finite(false);
  const I nf = static_cast<I>(fronts_.size());
  std::vector<Matrix<T>> cb(nf);  // contribution-block rows waiting for their parent
  for (I fi = 0; fi < nf; ++fi) {
    const FrontInfo& f = analysis_.fronts[fi];
    const Front& fr = fronts_[fi];
    const I na = static_cast<I>(f.a_rows.size());
    // Stacked right-hand-side rows [B(a_rows), child CBs...], then the front's row order.
    const I frows = fr.rows;
    Matrix<T> w(frows, nrhs);
    std::vector<const T*> src(frows);
    std::vector<I> src_ld(frows);
    for (I s = 0; s < na; ++s) {
      src[s] = b.data() + f.a_rows[s];
      src_ld[s] = b.ld();
    }
    I stacked = na;
    for (const I ci : f.children) {
      for (I r = 0; r < cb[ci].rows(); ++r) {
        src[stacked + r] = cb[ci].data() + r;
        src_ld[stacked + r] = cb[ci].ld();
      }
      stacked += cb[ci].rows();
    }
    if (stacked != frows) GPUQR_THROW(Error, "SparseQR::apply_qt: front row count mismatch");
    for (I r = 0; r < frows; ++r) {
      const I s = fr.row_source[r];
      for (I j = 0; j < nrhs; ++j) w(r, j) = src[s][j * src_ld[s]];
    }
    for (const I ci : f.children) cb[ci] = Matrix<T>();
    apply_front_reflectors(ctx, Op::trans, fr.tau, fr.reflectors, fr.block_at, fr.block_rows,
                           kReflectorBlock, w.view());
    // R's rows, the contribution block for the parent, and the rows R does not reach.
    for (I i = 0; i < f.npiv; ++i) {
      const I pr = fr.pivot_row[i];
      if (pr < 0) continue;
      const I at = lead[f.first_pivot + i];
      for (I j = 0; j < nrhs; ++j) out(at, j) = w(pr, j);
    }
    if (f.parent >= 0) {
      cb[fi] = Matrix<T>(fr.cb_rows, nrhs);
      for (I j = 0; j < nrhs; ++j)
        for (I r = 0; r < fr.cb_rows; ++r) cb[fi](r, j) = w(fr.live + r, j);
    }
    for (I r = detail::first_residual_row(fr.live, fr.cb_rows, f); r < frows; ++r, ++tail)
      for (I j = 0; j < nrhs; ++j) out(tail, j) = w(r, j);
  }
  // Rows of A in no front (empty rows) are left as they are.
  for (I i = 0; i < m; ++i) {
    if (analysis_.row_leftmost[i] >= 0) continue;
    for (I j = 0; j < nrhs; ++j) out(tail, j) = b(i, j);
    ++tail;
  }
  if (tail != m) GPUQR_THROW(Error, "SparseQR::apply_qt: the fronts' rows do not cover A's rows");
  return out;
}

template <class T>
Matrix<T> SparseQR<T>::apply_q(MatrixView<const T> c) const {
  using I = std::int64_t;
  require_householder("SparseQR::apply_q");
  check_rhs(c, rows(), "SparseQR::apply_q");
  const I m = rows(), nrhs = c.cols();
  const std::vector<I> lead = qt_pivot_rows();
  const I nf = static_cast<I>(fronts_.size());
  // Where each front's unreached rows start in C (as apply_qt lays them out).
  std::vector<I> tail_at(static_cast<std::size_t>(nf));
  I tail = r_row_count();
  for (I fi = 0; fi < nf; ++fi) {
    tail_at[fi] = tail;
    tail += fronts_[fi].rows - detail::first_residual_row(fronts_[fi].live, fronts_[fi].cb_rows, analysis_.fronts[fi]);
  }
  Matrix<T> out(m, nrhs);
  for (I i = 0; i < m; ++i) {
    if (analysis_.row_leftmost[i] >= 0) continue;
    for (I j = 0; j < nrhs; ++j) out(i, j) = c(tail, j);
    ++tail;
  }
  if (tail != m) GPUQR_THROW(Error, "SparseQR::apply_q: the fronts' rows do not cover A's rows");

  Context ctx = Context::cpu();
  ctx.set_check_finite(false);
  std::vector<Matrix<T>> cb(nf);  // a front's contribution-block rows, given back by its parent
  for (I fi = nf - 1; fi >= 0; --fi) {
    const FrontInfo& f = analysis_.fronts[fi];
    const Front& fr = fronts_[fi];
    const I na = static_cast<I>(f.a_rows.size());
    const I frows = fr.rows;
    Matrix<T> w(frows, nrhs);
    std::fill(w.data(), w.data() + w.ld() * nrhs, T(0));
    for (I i = 0; i < f.npiv; ++i) {
      const I pr = fr.pivot_row[i];
      if (pr < 0) continue;
      const I at = lead[f.first_pivot + i];
      for (I j = 0; j < nrhs; ++j) w(pr, j) = c(at, j);
    }
    if (f.parent >= 0) {
      for (I j = 0; j < nrhs; ++j)
        for (I r = 0; r < fr.cb_rows; ++r) w(fr.live + r, j) = cb[fi](r, j);
      cb[fi] = Matrix<T>();
    }
    const I r0 = detail::first_residual_row(fr.live, fr.cb_rows, f);
    for (I r = r0; r < frows; ++r)
      for (I j = 0; j < nrhs; ++j) w(r, j) = c(tail_at[fi] + r - r0, j);
    apply_front_reflectors(ctx, Op::no_trans, fr.tau, fr.reflectors, fr.block_at, fr.block_rows,
                           kReflectorBlock, w.view());
    // Scatter back to the stacked rows [A rows, child CBs...].
    std::vector<T*> dst(frows);
    std::vector<I> dst_ld(frows);
    for (I s = 0; s < na; ++s) {
      dst[s] = out.data() + f.a_rows[s];
      dst_ld[s] = out.ld();
    }
    I stacked = na;
    for (const I ci : f.children) {
      const I crows = fronts_[ci].cb_rows;
      cb[ci] = Matrix<T>(crows, nrhs);
      for (I r = 0; r < crows; ++r) {
        dst[stacked + r] = cb[ci].data() + r;
        dst_ld[stacked + r] = cb[ci].ld();
      }
      stacked += crows;
    }
    if (stacked != frows) GPUQR_THROW(Error, "SparseQR::apply_q: front row count mismatch");
    for (I r = 0; r < frows; ++r) {
      const I s = fr.row_source[r];
      for (I j = 0; j < nrhs; ++j) dst[s][j * dst_ld[s]] = w(r, j);
    }
  }
  return out;
}

template <class T>
void SparseQR<T>::require_householder(const char* who) const {
  if (!keep_householder_) {
    GPUQR_THROW(InvalidArgument,
                std::string(who) + ": the Householder vectors were not kept (Q-less "
                "factorization, SparseQROptions::keep_householder = false), so Q cannot be "
                "applied to a new matrix; factor with keep_householder = true, or pass B to the "
                "constructor and use qtb() / solve_carried()");
  }
}

template <class T>
void SparseQR<T>::check_solvable(const char* who) const {
  using I = std::int64_t;
  const I m = rows(), n = cols();
  GPUQR_CHECK_ARG(m >= n, std::string(who) + " needs m >= n (A is " + std::to_string(m) +
                              " x " + std::to_string(n) + "; see min_norm_solve for m < n)");
  if (tol_ < 0 && !zero_pivots_.empty()) {
    const I k = zero_pivots_.front();
    GPUQR_THROW(InvalidArgument,
                std::string(who) + ": R is singular: zero pivot at permuted column " +
                    std::to_string(k) + " (original column " +
                    std::to_string(analysis_.column_permutation[k]) + ")");
  }
}

template <class T>
Matrix<T> SparseQR<T>::solve(MatrixView<const T> b, std::vector<double>* residual_norms) const {
  using I = std::int64_t;
  const I m = rows();
  require_householder("SparseQR::solve");
  GPUQR_CHECK_ARG(b.on_host(), "SparseQR::solve: B must be in host memory");
  GPUQR_CHECK_ARG(b.rows() == m, "SparseQR::solve: B has " + std::to_string(b.rows()) +
                                     " rows, A has " + std::to_string(m));
  check_solvable("SparseQR::solve");
  for (I j = 0; j < b.cols(); ++j)
    for (I i = 0; i < m; ++i)
      GPUQR_CHECK_ARG(std::isfinite(b(i, j)), "SparseQR::solve: B has a NaN or Inf value");
  return solve_from_qtb(apply_qt(b), residual_norms);
}

template <class T>
Matrix<T> SparseQR<T>::solve_carried(std::vector<double>* residual_norms) const {
  check_solvable("SparseQR::solve_carried");
  return solve_from_qtb(qtb_, residual_norms);
}

template <class T>
Matrix<T> SparseQR<T>::solve_from_qtb(const Matrix<T>& qtb,
                                      std::vector<double>* residual_norms) const {
  using I = std::int64_t;
  const I m = rows(), n = cols(), nrhs = qtb.cols();
  const std::vector<I> lead = qt_pivot_rows();
  const I nr = r_row_count();
  // (Q^T B)(0:n) in permuted order, zero on the dead (or missing) pivots.
  Matrix<T> c(n, nrhs);
  for (I j = 0; j < nrhs; ++j)
    for (I k = 0; k < n; ++k) c(k, j) = lead[k] >= 0 ? qtb(lead[k], j) : T(0);

  // Back substitution R Z = C (row-oriented: each R row holds its diagonal first), then
  // X(q[k], :) = Z(k, :). A dead (zero) pivot gives Z(k, :) = 0: the basic solution.
  for (I j = 0; j < nrhs; ++j) {
    for (I k = n - 1; k >= 0; --k) {
      if (r_values_[r_row_ptr_[k]] == T(0)) {
        c(k, j) = T(0);
        continue;
      }
      T s = c(k, j);
      for (I p = r_row_ptr_[k] + 1; p < r_row_ptr_[k + 1]; ++p) s -= r_values_[p] * c(r_cols_[p], j);
      c(k, j) = s / r_values_[r_row_ptr_[k]];
    }
  }
  Matrix<T> x(n, nrhs);
  const std::vector<I>& q = analysis_.column_permutation;
  for (I j = 0; j < nrhs; ++j)
    for (I k = 0; k < n; ++k) x(q[k], j) = c(k, j);
  if (residual_norms != nullptr) {
    // The rows of Q^T B that R does not reach.
    residual_norms->assign(static_cast<std::size_t>(nrhs), 0.0);
    for (I j = 0; j < nrhs; ++j) {
      double s2 = 0;
      for (I i = nr; i < m; ++i) s2 += static_cast<double>(qtb(i, j)) * qtb(i, j);
      (*residual_norms)[j] = std::sqrt(s2);
    }
  }
  return x;
}

template <class T>
Matrix<T> SparseQR<T>::solve_transposed_min_norm(MatrixView<const T> b) const {
  using I = std::int64_t;
  const I big = rows(), n = cols(), nrhs = b.cols();
  require_householder("SparseQR::solve_transposed_min_norm");
  check_rhs(b, n, "SparseQR::solve_transposed_min_norm");
  GPUQR_CHECK_ARG(big >= n, "SparseQR::solve_transposed_min_norm needs the factorization of a "
                            "tall M (it is " + std::to_string(big) + " x " + std::to_string(n) +
                                ")");
  GPUQR_CHECK_ARG(rank() == n && r_row_count() == n,
                  "SparseQR::solve_transposed_min_norm: M^T is not of full row rank: rank " +
                      std::to_string(rank()) + " < " + std::to_string(n));
  // R^T Y = Q^T B: forward substitution with R's rows (row k of R is column k of R^T).
  const std::vector<I>& q = analysis_.column_permutation;
  Matrix<T> c(big, nrhs);
  std::fill(c.data(), c.data() + c.ld() * nrhs, T(0));
  std::vector<T> d(static_cast<std::size_t>(n));
  for (I j = 0; j < nrhs; ++j) {
    for (I k = 0; k < n; ++k) d[k] = b(q[k], j);
    for (I k = 0; k < n; ++k) {
      const T y = d[k] / r_values_[r_row_ptr_[k]];
      c(k, j) = y;  // every pivot has a row: R's row k is row k of apply_qt's order
      for (I p = r_row_ptr_[k] + 1; p < r_row_ptr_[k + 1]; ++p) d[r_cols_[p]] -= r_values_[p] * y;
    }
  }
  return apply_q(c.view());
}

template <class T>
Matrix<T> SparseQR<T>::min_norm_solve(const CscMatrix<T>& a, MatrixView<const T> b,
                                      const SparseQROptions& options) {
  using I = std::int64_t;
  a.validate();
  GPUQR_CHECK_ARG(b.rows() == a.rows, "SparseQR::min_norm_solve: B has " +
                                          std::to_string(b.rows()) + " rows, A has " +
                                          std::to_string(a.rows));
  GPUQR_CHECK_ARG(a.rows <= a.cols, "SparseQR::min_norm_solve needs m <= n (A is " +
                                        std::to_string(a.rows) + " x " + std::to_string(a.cols) +
                                        "; use solve for m > n)");
  // A^T in CSC: A's rows as columns.
  CscMatrix<T> at;
  at.rows = a.cols;
  at.cols = a.rows;
  at.col_ptr.assign(static_cast<std::size_t>(a.rows + 1), 0);
  for (I p = 0; p < a.nnz(); ++p) ++at.col_ptr[a.row_indices[p] + 1];
  for (I i = 0; i < a.rows; ++i) at.col_ptr[i + 1] += at.col_ptr[i];
  at.row_indices.resize(static_cast<std::size_t>(a.nnz()));
  at.values.resize(static_cast<std::size_t>(a.nnz()));
  std::vector<I> fill(at.col_ptr.begin(), at.col_ptr.end() - 1);
  for (I j = 0; j < a.cols; ++j)  // ascending j: each column of A^T comes sorted
    for (I p = a.col_ptr[j]; p < a.col_ptr[j + 1]; ++p) {
      const I to = fill[a.row_indices[p]]++;
      at.row_indices[to] = j;
      at.values[to] = a.values[p];
    }
  const SparseQR<T> qr(at, options);
  GPUQR_CHECK_ARG(qr.rank() == a.rows && qr.r_row_count() == a.rows,
                  "SparseQR::min_norm_solve: A is not of full row rank: rank " +
                      std::to_string(qr.rank()) + " < m = " + std::to_string(a.rows));
  return qr.solve_transposed_min_norm(b);
}


// The class is instantiated in sparse_qr_factor.cpp; the members defined here are
// instantiated here, one by one.
#define GPUQR_SPARSE_QR_SOLVE_MEMBERS(T)                                                        \
  template void SparseQR<T>::check_rhs(MatrixView<const T>, std::int64_t, const char*) const; \
  template std::vector<std::int64_t> SparseQR<T>::qt_pivot_rows() const;                      \
  template std::int64_t SparseQR<T>::r_row_count() const;                                     \
  template Matrix<T> SparseQR<T>::apply_qt(MatrixView<const T>) const;                        \
  template Matrix<T> SparseQR<T>::apply_q(MatrixView<const T>) const;                         \
  template Matrix<T> SparseQR<T>::solve(MatrixView<const T>, std::vector<double>*) const;     \
  template Matrix<T> SparseQR<T>::solve_carried(std::vector<double>*) const;                  \
  template Matrix<T> SparseQR<T>::solve_from_qtb(const Matrix<T>&, std::vector<double>*)      \
      const;                                                                                  \
  template void SparseQR<T>::require_householder(const char*) const;                          \
  template void SparseQR<T>::check_solvable(const char*) const;                               \
  template Matrix<T> SparseQR<T>::solve_transposed_min_norm(MatrixView<const T>) const;       \
  template Matrix<T> SparseQR<T>::min_norm_solve(const CscMatrix<T>&, MatrixView<const T>,    \
                                                 const SparseQROptions&);
GPUQR_SPARSE_QR_SOLVE_MEMBERS(float)
GPUQR_SPARSE_QR_SOLVE_MEMBERS(double)
#undef GPUQR_SPARSE_QR_SOLVE_MEMBERS

}  // namespace gpuqr
