// Sparse multifrontal QR on the CPU: numeric factorization on top of the symbolic analysis,
// and the least-squares solve with the kept per-front Householder reflectors.
#include "gpuqr/sparse_qr.hpp"

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "gpuqr/dense.hpp"
#include "gpuqr/error.hpp"

namespace gpuqr {
namespace detail {
namespace {

using I = std::int64_t;

/// The rows of A*Q: for each original row, (permuted column, value) pairs, ascending columns.
template <class T>
struct RowsOfAQ {
  std::vector<I> ptr;
  std::vector<I> cols;
  std::vector<T> values;
};

template <class T>
RowsOfAQ<T> rows_of_aq(const CscMatrix<T>& a, const std::vector<I>& q) {
  RowsOfAQ<T> out;
  const I m = a.rows, n = a.cols, nnz = a.nnz();
  out.ptr.assign(m + 1, 0);
  out.cols.resize(nnz);
  out.values.resize(nnz);
  for (I p = 0; p < nnz; ++p) ++out.ptr[a.row_indices[p] + 1];
  for (I i = 0; i < m; ++i) out.ptr[i + 1] += out.ptr[i];
  std::vector<I> fill(out.ptr.begin(), out.ptr.end() - 1);
  for (I k = 0; k < n; ++k) {
    for (I p = a.col_ptr[q[k]]; p < a.col_ptr[q[k] + 1]; ++p) {
      const I at = fill[a.row_indices[p]]++;
      out.cols[at] = k;
      out.values[at] = a.values[p];
    }
  }
  return out;
}

/// R's structural row patterns, produced in column order: row j = {j} + the columns of the
/// rows of A with leftmost column j + the patterns of j's etree children less the child
/// (the same recurrence as the analysis). A child's pattern is freed once used.
template <class T>
class RowStructure {
 public:
  RowStructure(const SparseAnalysis& an, const RowsOfAQ<T>& aq)
      : an_(an), aq_(aq), pattern_(an.cols), mark_(an.cols, -1), head_(an.cols, -1),
        next_(an.cols, -1) {
    for (I j = an.cols - 1; j >= 0; --j) {
      const I p = an.etree[j];
      if (p != -1) {
        next_[j] = head_[p];
        head_[p] = j;
      }
    }
  }
  /// Computes row j's pattern; `rows` are the rows of A whose leftmost column is j. Marks the
  /// pattern's columns so that in_row(x, j) answers membership until the next call.
  void compute(I j, const std::vector<I>& rows) {
    std::vector<I> pj{j};
    mark_[j] = j;
    for (const I i : rows)
      for (I p = aq_.ptr[i]; p < aq_.ptr[i + 1]; ++p) add(pj, aq_.cols[p], j);
    for (I c = head_[j]; c != -1; c = next_[c]) {
      for (const I x : pattern_[c])
        if (x != c) add(pj, x, j);
      std::vector<I>().swap(pattern_[c]);
    }
    if (an_.etree[j] != -1) pattern_[j] = std::move(pj);
  }
  bool in_row(I x, I j) const { return mark_[x] == j; }

 private:
  void add(std::vector<I>& pj, I x, I j) {
    if (mark_[x] != j) {
      mark_[x] = j;
      pj.push_back(x);
    }
  }
  const SparseAnalysis& an_;
  const RowsOfAQ<T>& aq_;
  std::vector<std::vector<I>> pattern_;
  std::vector<I> mark_, head_, next_;
};

// BLAS/LAPACK for the unblocked rank-detecting pivot columns.
inline double nrm2(I n, const float* x) { return cblas_snrm2(static_cast<int>(n), x, 1); }
inline double nrm2(I n, const double* x) { return cblas_dnrm2(static_cast<int>(n), x, 1); }
inline void larfg(I n, float* alpha, float* x, float* tau) {
  LAPACKE_slarfg(static_cast<lapack_int>(n), alpha, x, 1, tau);
}
inline void larfg(I n, double* alpha, double* x, double* tau) {
  LAPACKE_dlarfg(static_cast<lapack_int>(n), alpha, x, 1, tau);
}
/// C := (I - tau v v^T) C for C m x n (ld ldc), v of length m with v[0] == 1 stored.
inline void apply_reflector(I m, I n, const float* v, float tau, float* c, I ldc, float* work) {
  cblas_sgemv(CblasColMajor, CblasTrans, static_cast<int>(m), static_cast<int>(n), 1.0f, c,
              static_cast<int>(ldc), v, 1, 0.0f, work, 1);
  cblas_sger(CblasColMajor, static_cast<int>(m), static_cast<int>(n), -tau, v, 1, work, 1, c,
             static_cast<int>(ldc));
}
inline void apply_reflector(I m, I n, const double* v, double tau, double* c, I ldc,
                            double* work) {
  cblas_dgemv(CblasColMajor, CblasTrans, static_cast<int>(m), static_cast<int>(n), 1.0, c,
              static_cast<int>(ldc), v, 1, 0.0, work, 1);
  cblas_dger(CblasColMajor, static_cast<int>(m), static_cast<int>(n), -tau, v, 1, work, 1, c,
             static_cast<int>(ldc));
}

}  // namespace
}  // namespace detail

template <class T>
SparseQR<T>::SparseQR(const CscMatrix<T>& a, const SparseQROptions& options) {
  using I = std::int64_t;
  a.validate();
  for (I p = 0; p < a.nnz(); ++p) {
    GPUQR_CHECK_ARG(std::isfinite(a.values[p]),
                    "SparseQR: A has a NaN or Inf value at entry " + std::to_string(p));
  }
  analysis_ = analyze_sparse_qr(a, options.analysis);
  const I n = a.cols;
  // SuiteSparseQR's tolerance: 20 (m + n) eps max_j ||A(:, j)||_2 by default (-2).
  if (options.tolerance == -2) {
    double maxnorm = 0;
    for (I j = 0; j < n; ++j) {
      double s2 = 0;
      for (I p = a.col_ptr[j]; p < a.col_ptr[j + 1]; ++p)
        s2 += static_cast<double>(a.values[p]) * static_cast<double>(a.values[p]);
      maxnorm = std::max(maxnorm, std::sqrt(s2));
    }
    tol_ = 20.0 * static_cast<double>(a.rows + n) *
           static_cast<double>(std::numeric_limits<T>::epsilon()) * maxnorm;
  } else {
    tol_ = options.tolerance < 0 ? -1.0 : options.tolerance;
  }
  const bool detect = tol_ >= 0;
  const std::vector<I>& q = analysis_.column_permutation;
  const detail::RowsOfAQ<T> aq = detail::rows_of_aq(a, q);
  detail::RowStructure<T> structure(analysis_, aq);
  std::vector<std::vector<I>> rows_at_pivot;  // per pivot of the current front: its A rows

  Context ctx = Context::cpu();
  ctx.set_check_finite(false);  // A was checked above; fronts only hold its transforms
  const I nf = static_cast<I>(analysis_.fronts.size());
  fronts_.resize(nf);
  std::vector<Matrix<T>> cb(nf);  // contribution blocks waiting for their parent
  std::vector<I> pos(n, -1);      // permuted column -> position in the current front
  std::vector<T> work;
  r_row_ptr_.assign(1, 0);
  r_row_ptr_.reserve(n + 1);

  for (I fi = 0; fi < nf; ++fi) {
    const FrontInfo& f = analysis_.fronts[fi];
    Front& out = fronts_[fi];
    const I ncols = static_cast<I>(f.cols.size());
    const I na = static_cast<I>(f.a_rows.size());
    for (I t = 0; t < ncols; ++t) pos[f.cols[t]] = t;

    // The front's rows: its A rows and its children's actual contribution blocks (with dead
    // columns below, these hold more rows than the analysis counted).
    I rows = na;
    for (const I ci : f.children) rows += cb[ci].rows();
    if (!detect && rows != f.rows)
      GPUQR_THROW(Error, "SparseQR: front row count disagrees with the analysis");
    out.rows = rows;

    // Staircase order: each stacked row ([a_rows, child CB rows...]) keyed by its leftmost
    // front column; a stable sort keeps ties in stacking order.
    std::vector<I> key;
    key.reserve(rows);
    for (const I i : f.a_rows) key.push_back(pos[analysis_.row_leftmost[i]]);
    for (std::size_t c = 0; c < f.children.size(); ++c) {
      const I crows = cb[f.children[c]].rows();
      for (I r = 0; r < crows; ++r) key.push_back(f.child_col_map[c][r]);
    }
    out.row_source.resize(rows);
    std::iota(out.row_source.begin(), out.row_source.end(), I{0});
    std::stable_sort(out.row_source.begin(), out.row_source.end(),
                     [&key](I x, I y) { return key[x] < key[y]; });
    std::vector<I> row_at(rows);  // stacked row -> front row
    for (I r = 0; r < rows; ++r) row_at[out.row_source[r]] = r;

    // Assemble the zeroed front.
    out.qr = Matrix<T>(rows, ncols);
    std::fill(out.qr.data(), out.qr.data() + out.qr.ld() * ncols, T(0));
    for (I s = 0; s < na; ++s) {
      const I i = f.a_rows[s], r = row_at[s];
      for (I p = aq.ptr[i]; p < aq.ptr[i + 1]; ++p) {
        const I where = pos[aq.cols[p]];
        if (where < 0) GPUQR_THROW(Error, "SparseQR: a row of A leaves its front's columns");
        out.qr(r, where) = aq.values[p];
      }
    }
    I stacked = na;
    for (std::size_t c = 0; c < f.children.size(); ++c) {
      const I ci = f.children[c];
      const Matrix<T>& block = cb[ci];
      const std::vector<I>& map = f.child_col_map[c];
      for (I r = 0; r < block.rows(); ++r) {
        const I fr = row_at[stacked + r];
        for (I t = r; t < block.cols(); ++t) out.qr(fr, map[t]) = block(r, t);
      }
      stacked += block.rows();
      cb[ci] = Matrix<T>();  // assembled: free it
    }
    for (I t = 0; t < ncols; ++t) pos[f.cols[t]] = -1;

    // Staircase QR of the front. With the rows in key order, column j is nonzero only in the
    // first stair[j] rows (those whose leftmost column is <= j), and a reflector of column j
    // touches no row below stair[j]. So a block of columns [c0, c1) whose first reflector
    // sits in row r0 is factored, and applied to the columns right of it, on rows
    // [r0, stair[c1 - 1]) alone: the zeros below the staircase are never computed on (they
    // stay exact zeros in V, so applying the whole front's reflectors later, as solve does,
    // gives the same result).
    std::vector<I> stair(static_cast<std::size_t>(ncols));
    for (I j = 0, r = 0; j < ncols; ++j) {
      while (r < rows && key[out.row_source[r]] <= j) ++r;
      stair[j] = r;
    }
    out.tau.assign(static_cast<std::size_t>(std::min(rows, ncols)), T(0));
    out.pivot_row.assign(static_cast<std::size_t>(f.npiv), -1);
    // Blocked geqrf + ormqr of the columns [c_begin, c_end), the first one's reflector in row
    // r_begin (each next column one row lower).
    // 64 columns per block, measured on Groebner and Franz6 (2 cores): 32 is 2x slower than the
    // unblocked front (LAPACK's per-call costs), 64 the fastest, 128-256 within 10% of it.
    auto blocked = [&](I c_begin, I c_end, I r_begin) {
      constexpr I block = 64;
      for (I c0 = c_begin; c0 < c_end; c0 += block) {
        const I c1 = std::min(c0 + block, c_end);
        const I r0 = r_begin + (c0 - c_begin);
        const I height = std::max(stair[c1 - 1], r0) - r0;
        if (height == 0) continue;  // no row reaches these columns: H = I, tau stays 0
        const I kb = std::min(height, c1 - c0);
        VectorView<T> tau_block(out.tau.data() + r0, kb);
        geqrf<T>(ctx, out.qr.view().block(r0, c0, height, c1 - c0), tau_block);
        if (c1 < ncols) {
          ormqr<T>(ctx, Side::left, Op::trans,
                   MatrixView<const T>(out.qr.view().block(r0, c0, height, kb)),
                   VectorView<const T>(tau_block), out.qr.view().block(r0, c1, height, ncols - c1));
        }
      }
    };
    I live = 0;
    if (!detect) {
      blocked(0, std::min(rows, ncols), 0);
      live = std::min(rows, f.npiv);
      for (I i = 0; i < live; ++i) out.pivot_row[i] = i;
    } else {
      // Pivot columns one by one within panels of 64 (Heath's method, as SuiteSparseQR):
      // column j's norm over rows [live, stair[j]) decides; a dead column is zeroed there and
      // the next pivot takes the same row. A live column's reflector (larfg) is applied at
      // once to the rest of its panel (BLAS-2); the panel's live reflectors, copied together
      // into V (reflector t's head in row t, as geqrf leaves them), are then applied to the
      // columns right of the panel by ormqr (blocked), on rows [first row, stair) alone.
      constexpr I panel = 64;
      work.resize(static_cast<std::size_t>(panel));
      const I ld = out.qr.ld();
      std::vector<I> live_cols;
      for (I c0 = 0; c0 < f.npiv; c0 += panel) {
        const I c1 = std::min(c0 + panel, f.npiv);
        const I r0 = live;
        live_cols.clear();
        for (I j = c0; j < c1; ++j) {
          const I len = stair[j] - live;
          if (len <= 0) continue;  // no row left: dead (norm 0)
          T* col = out.qr.data() + live + j * ld;
          if (detail::nrm2(len, col) <= tol_) {
            std::fill(col, col + len, T(0));
            continue;
          }
          T beta = col[0], tau = T(0);
          detail::larfg(len, &beta, col + 1, &tau);
          if (tau != T(0) && j + 1 < c1) {
            col[0] = T(1);
            detail::apply_reflector(len, c1 - j - 1, col, tau, col + ld, ld, work.data());
          }
          col[0] = beta;
          out.tau[live] = tau;
          out.pivot_row[j] = live++;
          live_cols.push_back(j);
        }
        const I nl = live - r0;
        if (nl == 0 || c1 >= ncols) continue;
        const I h = stair[c1 - 1] - r0;  // >= nl: every live reflector has a row below its head
        Matrix<T> v(h, nl);
        for (I t = 0; t < nl; ++t)
          std::copy(out.qr.data() + r0 + live_cols[t] * ld,
                    out.qr.data() + r0 + live_cols[t] * ld + h, v.data() + t * v.ld());
        ormqr<T>(ctx, Side::left, Op::trans, MatrixView<const T>(v.view()),
                 VectorView<const T>(out.tau.data() + r0, nl),
                 out.qr.view().block(r0, c1, h, ncols - c1));
      }
      // The contribution-block columns: blocked, from row `live` on.
      const I kcb = std::min(rows - live, f.cb_cols);
      if (kcb > 0) blocked(f.npiv, f.npiv + kcb, live);
    }
    out.live = live;
    out.cb_rows = std::max<I>(0, std::min(rows - live, f.cb_cols));
    if (!detect && out.cb_rows != f.cb_rows)
      GPUQR_THROW(Error, "SparseQR: contribution block size disagrees with the analysis");

    // Pivot rows of R (exact zeros dropped, diagonal kept); missing or dead ones are zero
    // rows. While every pivot so far is nonzero, R's rows are those of the Cholesky factor of
    // (AQ)^T(AQ) up to signs, whose structure (RowStructure) bounds them: entries outside it
    // are rounding noise of the dense front QR (relaxed fronts hold structural zeros) and are
    // dropped. After a zero or dead pivot no such bound holds and every nonzero is kept.
    rows_at_pivot.assign(static_cast<std::size_t>(f.npiv), {});
    for (const I i : f.a_rows) rows_at_pivot[analysis_.row_leftmost[i] - f.first_pivot].push_back(i);
    for (I i = 0; i < f.npiv; ++i) {
      const I row = f.first_pivot + i;
      const I pr = out.pivot_row[i];
      const T diag = pr >= 0 ? out.qr(pr, i) : T(0);
      r_cols_.push_back(row);
      r_values_.push_back(diag);
      if (diag == T(0)) zero_pivots_.push_back(row);
      structure.compute(row, rows_at_pivot[i]);
      const bool bounded = zero_pivots_.empty();
      if (pr >= 0) {
        for (I t = i + 1; t < ncols; ++t) {
          const T v = out.qr(pr, t);
          if (v != T(0) && (!bounded || structure.in_row(f.cols[t], row))) {
            r_cols_.push_back(f.cols[t]);
            r_values_.push_back(v);
          }
        }
      }
      r_row_ptr_.push_back(static_cast<I>(r_cols_.size()));
    }

    // Contribution block: front rows live .. live + cb_rows - 1, columns npiv.., upper
    // trapezoidal (the reflectors below its diagonal are not copied).
    if (f.parent >= 0) {
      Matrix<T> block(out.cb_rows, f.cb_cols);
      for (I t = 0; t < f.cb_cols; ++t)
        for (I r = 0; r < out.cb_rows; ++r)
          block(r, t) = r <= t ? out.qr(live + r, f.npiv + t) : T(0);
      cb[fi] = std::move(block);
    }

    // Reflectors for solve: with dead columns, move reflector t's column (live pivots, then
    // the CB columns) to column t, as geqrf would have left them.
    const I nrefl = detect ? live + std::min(rows - live, f.cb_cols) : std::min(rows, ncols);
    if (detect && live < f.npiv) {
      I t = 0;
      const I ld = out.qr.ld();
      auto move_col = [&](I from) {
        if (from != t) std::copy(out.qr.data() + from * ld, out.qr.data() + from * ld + rows,
                                 out.qr.data() + t * ld);
        ++t;
      };
      for (I i = 0; i < f.npiv; ++i)
        if (out.pivot_row[i] >= 0) move_col(i);
      for (I c = f.npiv; t < nrefl; ++c) move_col(c);
    }
    out.tau.resize(static_cast<std::size_t>(nrefl));
  }
  if (static_cast<I>(r_row_ptr_.size()) != n + 1)
    GPUQR_THROW(Error, "SparseQR: the fronts' pivots do not cover every column");
}

template <class T>
std::vector<std::int64_t> SparseQR<T>::dead_columns() const {
  std::vector<std::int64_t> out;
  out.reserve(zero_pivots_.size());
  for (const std::int64_t k : zero_pivots_) out.push_back(analysis_.column_permutation[k]);
  std::sort(out.begin(), out.end());
  return out;
}

template <class T>
CscMatrix<T> SparseQR<T>::r() const {
  using I = std::int64_t;
  const I n = cols();
  CscMatrix<T> out;
  out.rows = n;
  out.cols = n;
  out.col_ptr.assign(n + 1, 0);
  for (const I j : r_cols_) ++out.col_ptr[j + 1];
  for (I j = 0; j < n; ++j) out.col_ptr[j + 1] += out.col_ptr[j];
  out.row_indices.resize(r_cols_.size());
  out.values.resize(r_values_.size());
  std::vector<I> fill(out.col_ptr.begin(), out.col_ptr.end() - 1);
  for (I k = 0; k < n; ++k) {  // rows in ascending order: each column's rows come sorted
    for (I p = r_row_ptr_[k]; p < r_row_ptr_[k + 1]; ++p) {
      const I at = fill[r_cols_[p]]++;
      out.row_indices[at] = k;
      out.values[at] = r_values_[p];
    }
  }
  return out;
}

template <class T>
double SparseQR<T>::rcond_estimate() const {
  using I = std::int64_t;
  const I n = cols();
  if (n == 0) return 1.0;
  double lo = INFINITY, hi = 0;
  for (I k = 0; k < n; ++k) {
    const double d = std::abs(static_cast<double>(r_values_[r_row_ptr_[k]]));
    lo = std::min(lo, d);
    hi = std::max(hi, d);
  }
  return hi > 0 ? lo / hi : 0.0;
}

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

namespace detail {
namespace {
/// Front rows from this one on are neither R rows nor contribution-block rows: rows R does
/// not reach (a root front passes nothing up).
template <class Front>
std::int64_t first_residual_row(const Front& fr, const FrontInfo& f) {
  return f.parent >= 0 ? fr.live + fr.cb_rows : fr.live;
}
}  // namespace
}  // namespace detail

template <class T>
Matrix<T> SparseQR<T>::apply_qt(MatrixView<const T> b) const {
  using I = std::int64_t;
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
    const I k = static_cast<I>(fr.tau.size());
    if (k > 0 && nrhs > 0) {
      ormqr<T>(ctx, Side::left, Op::trans, fr.qr.view().block(0, 0, frows, k),
               VectorView<const T>(fr.tau.data(), k), w.view());
    }
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
    for (I r = detail::first_residual_row(fr, f); r < frows; ++r, ++tail)
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
  check_rhs(c, rows(), "SparseQR::apply_q");
  const I m = rows(), nrhs = c.cols();
  const std::vector<I> lead = qt_pivot_rows();
  const I nf = static_cast<I>(fronts_.size());
  // Where each front's unreached rows start in C (as apply_qt lays them out).
  std::vector<I> tail_at(static_cast<std::size_t>(nf));
  I tail = r_row_count();
  for (I fi = 0; fi < nf; ++fi) {
    tail_at[fi] = tail;
    tail += fronts_[fi].rows - detail::first_residual_row(fronts_[fi], analysis_.fronts[fi]);
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
    const I r0 = detail::first_residual_row(fr, f);
    for (I r = r0; r < frows; ++r)
      for (I j = 0; j < nrhs; ++j) w(r, j) = c(tail_at[fi] + r - r0, j);
    const I k = static_cast<I>(fr.tau.size());
    if (k > 0 && nrhs > 0) {
      ormqr<T>(ctx, Side::left, Op::no_trans, fr.qr.view().block(0, 0, frows, k),
               VectorView<const T>(fr.tau.data(), k), w.view());
    }
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
Matrix<T> SparseQR<T>::solve(MatrixView<const T> b, std::vector<double>* residual_norms) const {
  using I = std::int64_t;
  const I m = rows(), n = cols(), nrhs = b.cols();
  GPUQR_CHECK_ARG(b.on_host(), "SparseQR::solve: B must be in host memory");
  GPUQR_CHECK_ARG(b.rows() == m, "SparseQR::solve: B has " + std::to_string(b.rows()) +
                                     " rows, A has " + std::to_string(m));
  GPUQR_CHECK_ARG(m >= n, "SparseQR::solve needs m >= n (A is " + std::to_string(m) + " x " +
                              std::to_string(n) + "; see min_norm_solve for m < n)");
  if (tol_ < 0 && !zero_pivots_.empty()) {
    const I k = zero_pivots_.front();
    GPUQR_THROW(InvalidArgument,
                "SparseQR::solve: R is singular: zero pivot at permuted column " +
                    std::to_string(k) + " (original column " +
                    std::to_string(analysis_.column_permutation[k]) + ")");
  }
  for (I j = 0; j < nrhs; ++j)
    for (I i = 0; i < m; ++i)
      GPUQR_CHECK_ARG(std::isfinite(b(i, j)), "SparseQR::solve: B has a NaN or Inf value");

  const Matrix<T> qtb = apply_qt(b);
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

template class SparseQR<float>;
template class SparseQR<double>;

}  // namespace gpuqr
