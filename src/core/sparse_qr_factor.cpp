// Sparse multifrontal QR on the CPU: the numeric factorization on top of the symbolic
// analysis (rank detection, Householder vectors kept or B carried along, Q-less), and R.
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
#include "src/core/sparse_qr_detail.hpp"

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
  factor(a, nullptr, options);
}

template <class T>
SparseQR<T>::SparseQR(const CscMatrix<T>& a, MatrixView<const T> b,
                      const SparseQROptions& options) {
  factor(a, &b, options);
}

template <class T>
void SparseQR<T>::factor(const CscMatrix<T>& a, const MatrixView<const T>* b,
                         const SparseQROptions& options) {
  using I = std::int64_t;
  a.validate();
  if (b != nullptr) check_rhs(*b, a.rows, "SparseQR");
  keep_householder_ = options.keep_householder;
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
  // Carried right-hand sides: B's k columns ride along as front columns ncols.. of every
  // front (dense: every front row has them). c_r row k gets the transformed B of R's row k,
  // c_tail the rows R does not reach, in apply_qt's order; qtb_ is assembled from both.
  const I k = b != nullptr ? b->cols() : 0;
  Matrix<T> c_r(n, k), c_tail(a.rows, k);
  I tail = 0;

  for (I fi = 0; fi < nf; ++fi) {
    const FrontInfo& f = analysis_.fronts[fi];
    Front& out = fronts_[fi];
    const I ncols = static_cast<I>(f.cols.size());
    const I width = ncols + k;  // A's columns, then B's
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
    out.qr = Matrix<T>(rows, width);
    std::fill(out.qr.data(), out.qr.data() + out.qr.ld() * width, T(0));
    for (I s = 0; s < na; ++s) {
      const I i = f.a_rows[s], r = row_at[s];
      for (I p = aq.ptr[i]; p < aq.ptr[i + 1]; ++p) {
        const I where = pos[aq.cols[p]];
        if (where < 0) GPUQR_THROW(Error, "SparseQR: a row of A leaves its front's columns");
        out.qr(r, where) = aq.values[p];
      }
      for (I j = 0; j < k; ++j) out.qr(r, ncols + j) = (*b)(i, j);
    }
    I stacked = na;
    for (std::size_t c = 0; c < f.children.size(); ++c) {
      const I ci = f.children[c];
      const Matrix<T>& block = cb[ci];
      const std::vector<I>& map = f.child_col_map[c];
      const I ccols = analysis_.fronts[ci].cb_cols;  // then the child's k carried columns
      for (I r = 0; r < block.rows(); ++r) {
        const I fr = row_at[stacked + r];
        for (I t = r; t < ccols; ++t) out.qr(fr, map[t]) = block(r, t);
        for (I j = 0; j < k; ++j) out.qr(fr, ncols + j) = block(r, ccols + j);
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
        if (c1 < width) {
          ormqr<T>(ctx, Side::left, Op::trans,
                   MatrixView<const T>(out.qr.view().block(r0, c0, height, kb)),
                   VectorView<const T>(tau_block), out.qr.view().block(r0, c1, height, width - c1));
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
        if (nl == 0 || c1 >= width) continue;
        const I h = stair[c1 - 1] - r0;  // >= nl: every live reflector has a row below its head
        Matrix<T> v(h, nl);
        for (I t = 0; t < nl; ++t)
          std::copy(out.qr.data() + r0 + live_cols[t] * ld,
                    out.qr.data() + r0 + live_cols[t] * ld + h, v.data() + t * v.ld());
        ormqr<T>(ctx, Side::left, Op::trans, MatrixView<const T>(v.view()),
                 VectorView<const T>(out.tau.data() + r0, nl),
                 out.qr.view().block(r0, c1, h, width - c1));
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
    // trapezoidal (the reflectors below its diagonal are not copied), then the carried
    // columns of those rows (full).
    if (f.parent >= 0) {
      Matrix<T> block(out.cb_rows, f.cb_cols + k);
      for (I t = 0; t < f.cb_cols; ++t)
        for (I r = 0; r < out.cb_rows; ++r)
          block(r, t) = r <= t ? out.qr(live + r, f.npiv + t) : T(0);
      for (I j = 0; j < k; ++j)
        for (I r = 0; r < out.cb_rows; ++r) block(r, f.cb_cols + j) = out.qr(live + r, ncols + j);
      cb[fi] = std::move(block);
    }
    // The carried columns of R's rows and of the rows R does not reach (apply_qt's layout).
    if (k > 0) {
      for (I i = 0; i < f.npiv; ++i) {
        const I pr = out.pivot_row[i];
        if (pr >= 0)
          for (I j = 0; j < k; ++j) c_r(f.first_pivot + i, j) = out.qr(pr, ncols + j);
      }
      for (I r = detail::first_residual_row(live, out.cb_rows, f); r < rows; ++r, ++tail)
        for (I j = 0; j < k; ++j) c_tail(tail, j) = out.qr(r, ncols + j);
    }
    if (!keep_householder_) {  // Q-less: the reflectors are not needed any more
      out.qr = Matrix<T>();
      std::vector<T>().swap(out.tau);
      std::vector<I>().swap(out.row_source);
      continue;
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
    if (k > 0) {  // keep the reflectors' columns only, not the carried ones
      Matrix<T> v(rows, nrefl);
      for (I t = 0; t < nrefl; ++t)
        std::copy(out.qr.data() + t * out.qr.ld(), out.qr.data() + t * out.qr.ld() + rows,
                  v.data() + t * v.ld());
      out.qr = std::move(v);
    }
  }
  if (static_cast<I>(r_row_ptr_.size()) != n + 1)
    GPUQR_THROW(Error, "SparseQR: the fronts' pivots do not cover every column");
  assemble_qtb(b, c_r, c_tail, tail);
}

template <class T>
void SparseQR<T>::assemble_qtb(const MatrixView<const T>* b, const Matrix<T>& c_r,
                               const Matrix<T>& c_tail, std::int64_t tail) {
  using I = std::int64_t;
  const I m = rows(), n = cols(), k = c_r.cols();
  qtb_ = Matrix<T>(m, k);
  if (k == 0) return;
  const std::vector<I> lead = qt_pivot_rows();
  for (I j = 0; j < k; ++j) {
    for (I c = 0; c < n; ++c)
      if (lead[c] >= 0) qtb_(lead[c], j) = c_r(c, j);
    const I nr = r_row_count();
    for (I r = 0; r < tail; ++r) qtb_(nr + r, j) = c_tail(r, j);
    I at = nr + tail;  // then A's empty rows (in no front), unchanged
    for (I i = 0; i < m; ++i)
      if (analysis_.row_leftmost[i] < 0) qtb_(at++, j) = (*b)(i, j);
    if (at != m) GPUQR_THROW(Error, "SparseQR: the carried rows do not cover A's rows");
  }
}

template <class T>
std::int64_t SparseQR<T>::stored_bytes() const noexcept {
  std::size_t bytes = r_values_.size() * sizeof(T) +
                      (r_cols_.size() + r_row_ptr_.size()) * sizeof(std::int64_t) +
                      static_cast<std::size_t>(qtb_.rows() * qtb_.cols()) * sizeof(T);
  for (const Front& fr : fronts_) {
    bytes += static_cast<std::size_t>(fr.qr.ld() * fr.qr.cols()) * sizeof(T) +
             fr.tau.size() * sizeof(T) +
             (fr.row_source.size() + fr.pivot_row.size()) * sizeof(std::int64_t);
  }
  return static_cast<std::int64_t>(bytes);
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

template class SparseQR<float>;
template class SparseQR<double>;

}  // namespace gpuqr
