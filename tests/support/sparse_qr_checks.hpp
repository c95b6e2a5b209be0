// Shared by the sparse QR tests (test_sparse_qr*.cpp): orderings, generated matrices, dense
// LAPACK references and the accuracy checks (R's backward error, the solution against dgels,
// the basic solution of a rank-deficient problem against dgelsd).
#pragma once

#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gpuqr/accuracy.hpp"
#include "gpuqr/matrix.hpp"
#include "gpuqr/sparse.hpp"
#include "gpuqr/sparse_analysis.hpp"
#include "gpuqr/sparse_qr.hpp"
#include "tests/support/generators.hpp"
#include "tests/support/ratios.hpp"

namespace gpuqr::testing::sparse {

using gpuqr::ColumnOrdering;
using gpuqr::CscMatrix;
using gpuqr::Matrix;
using gpuqr::SparseQR;
using gpuqr::SparseQROptions;
using I = std::int64_t;

inline std::vector<ColumnOrdering> orderings() {
  std::vector<ColumnOrdering> out{ColumnOrdering::natural};
  if (gpuqr::sparse_orderings_available()) out.push_back(ColumnOrdering::colamd);
  return out;
}

inline SparseQROptions with_ordering(ColumnOrdering ord) {
  SparseQROptions opt;
  opt.analysis.ordering = ord;
  return opt;
}

/// The library's default ordering (COLAMD) where this build has it, else natural: for tests
/// that do not care about the ordering and must also pass in a build without SuiteSparse.
inline SparseQROptions any_ordering() {
  return with_ordering(gpuqr::sparse_orderings_available() ? ColumnOrdering::colamd
                                                           : ColumnOrdering::natural);
}

inline std::string name_of(ColumnOrdering ord) {
  return ord == ColumnOrdering::natural ? "natural" : ord == ColumnOrdering::colamd ? "colamd" : "other";
}

template <class T>
CscMatrix<T> transpose(const CscMatrix<T>& a) {
  std::vector<I> i, j;
  std::vector<T> v;
  for (I c = 0; c < a.cols; ++c)
    for (I p = a.col_ptr[c]; p < a.col_ptr[c + 1]; ++p) {
      i.push_back(c);
      j.push_back(a.row_indices[p]);
      v.push_back(a.values[p]);
    }
  return CscMatrix<T>::from_triplets(a.cols, a.rows, i, j, v);
}



/// Dense copy of A with its columns permuted: column k is A's column q[k].
template <class T>
Matrix<double> dense_permuted(const CscMatrix<T>& a, const std::vector<I>& q) {
  Matrix<double> d(a.rows, a.cols);
  std::fill(d.data(), d.data() + d.ld() * a.cols, 0.0);
  for (I k = 0; k < a.cols; ++k)
    for (I p = a.col_ptr[q[k]]; p < a.col_ptr[q[k] + 1]; ++p) d(a.row_indices[p], k) = a.values[p];
  return d;
}

inline double frob(const Matrix<double>& a) {
  double s = 0;
  for (I j = 0; j < a.cols(); ++j)
    for (I i = 0; i < a.rows(); ++i) s += a(i, j) * a(i, j);
  return std::sqrt(s);
}

/// ||(AQ)^T (AQ) - R^T R||_F / (||A||_F^2 n eps): R's backward error. Also checks that R is
/// upper triangular, n x n, and has its diagonal stored.
template <class T>
double rtr_ratio(const CscMatrix<T>& a, const SparseQR<T>& qr) {
  const I n = a.cols;
  const CscMatrix<T> r = qr.r();
  EXPECT_EQ(r.rows, n);
  EXPECT_EQ(r.cols, n);
  r.validate();
  Matrix<double> rd(n, n);
  std::fill(rd.data(), rd.data() + rd.ld() * n, 0.0);
  for (I j = 0; j < n; ++j) {
    EXPECT_GT(r.col_ptr[j + 1], r.col_ptr[j]) << "column " << j << " of R has no diagonal";
    if (r.col_ptr[j + 1] > r.col_ptr[j]) EXPECT_EQ(r.row_indices[r.col_ptr[j + 1] - 1], j);
    for (I p = r.col_ptr[j]; p < r.col_ptr[j + 1]; ++p) {
      EXPECT_LE(r.row_indices[p], j) << "R not upper triangular";
      rd(r.row_indices[p], j) = r.values[p];
    }
  }
  const Matrix<double> aq = dense_permuted(a, qr.column_permutation());
  double diff = 0;
  for (I j = 0; j < n; ++j)
    for (I i = 0; i < n; ++i) {
      double g = 0, h = 0;
      for (I t = 0; t < a.rows; ++t) g += aq(t, i) * aq(t, j);
      for (I t = 0; t <= std::min(i, j); ++t) h += rd(t, i) * rd(t, j);
      diff += (g - h) * (g - h);
    }
  const double na = frob(aq);
  if (na == 0) return std::sqrt(diff);
  return std::sqrt(diff) / (na * na * static_cast<double>(std::max<I>(n, 1)) *
                            gpuqr::accuracy::eps<T>());
}

/// Dense least squares by LAPACKE_dgels (m >= n): x (n x nrhs).
inline Matrix<double> dense_lstsq(const Matrix<double>& a, const Matrix<double>& b) {
  const I m = a.rows(), n = a.cols(), nrhs = b.cols();
  Matrix<double> ac = a.clone(), bc = b.clone();
  const int info = LAPACKE_dgels(LAPACK_COL_MAJOR, 'N', m, n, nrhs, ac.data(), ac.ld(),
                                 bc.data(), bc.ld());
  EXPECT_EQ(info, 0);
  Matrix<double> x(n, nrhs);
  for (I j = 0; j < nrhs; ++j)
    for (I i = 0; i < n; ++i) x(i, j) = bc(i, j);
  return x;
}

/// 2-norm condition number by LAPACKE_dgesdd (inf when singular).
inline double cond2(const Matrix<double>& a) {
  const I m = a.rows(), n = a.cols(), k = std::min(m, n);
  if (k == 0) return 1;
  Matrix<double> ac = a.clone();
  std::vector<double> s(k);
  const int info = LAPACKE_dgesdd(LAPACK_COL_MAJOR, 'N', m, n, ac.data(), ac.ld(), s.data(),
                                  nullptr, 1, nullptr, 1);
  EXPECT_EQ(info, 0);
  return s[k - 1] > 0 ? s[0] / s[k - 1] : INFINITY;
}

template <class T>
Matrix<T> random_dense(I m, I n, std::uint64_t seed) {
  return gpuqr::testing::random_matrix<T>(m, n, seed);
}

template <class T>
Matrix<double> to_double(const Matrix<T>& a) {
  Matrix<double> d(a.rows(), a.cols());
  for (I j = 0; j < a.cols(); ++j)
    for (I i = 0; i < a.rows(); ++i) d(i, j) = a(i, j);
  return d;
}

/// y = A x (double accumulation), one column.
template <class T>
std::vector<double> spmv(const CscMatrix<T>& a, const std::vector<double>& x) {
  std::vector<double> y(a.rows, 0.0);
  for (I j = 0; j < a.cols; ++j)
    for (I p = a.col_ptr[j]; p < a.col_ptr[j + 1]; ++p) y[a.row_indices[p]] += a.values[p] * x[j];
  return y;
}

/// LAPACK's xQRT17 ratio ||A^T (b - A x)||_1 / (||A||_1 ||b||_1 max(m, n) eps), one column,
/// computed sparsely in double.
template <class T>
double sparse_optimality_ratio(const CscMatrix<T>& a, const std::vector<double>& x,
                               const std::vector<double>& b) {
  std::vector<double> r = spmv(a, x);
  for (I i = 0; i < a.rows; ++i) r[i] = b[i] - r[i];
  double atr = 0, anorm = 0, bnorm = 0;
  for (I j = 0; j < a.cols; ++j) {
    double s = 0, c = 0;
    for (I p = a.col_ptr[j]; p < a.col_ptr[j + 1]; ++p) {
      s += a.values[p] * r[a.row_indices[p]];
      c += std::abs(static_cast<double>(a.values[p]));
    }
    atr += std::abs(s);
    anorm = std::max(anorm, c);
  }
  for (const double v : b) bnorm += std::abs(v);
  if (anorm == 0 || bnorm == 0) return atr;
  return atr / (anorm * bnorm * static_cast<double>(std::max(a.rows, a.cols)) *
                gpuqr::accuracy::eps<T>());
}

/// Solves with SparseQR and checks against dgels on the dense copy: relative error within
/// 100 eps (cond + cond^2 ||r|| / (||A|| ||x||)) when cond <= 1e10, the optimality ratio below
/// 30 and the returned residual norms. Returns the error ratio (0 when skipped).
template <class T>
double check_solve_against_dense(const CscMatrix<T>& a, const SparseQR<T>& qr, I nrhs,
                                 std::uint64_t seed) {
  const Matrix<T> b = random_dense<T>(a.rows, nrhs, seed);
  std::vector<double> res;
  const Matrix<T> x = qr.solve(b.view(), &res);
  EXPECT_EQ(x.rows(), a.cols);
  EXPECT_EQ(x.cols(), nrhs);
  EXPECT_EQ(static_cast<I>(res.size()), nrhs);
  const Matrix<T> ad = a.to_dense();
  const double opt = gpuqr::accuracy::lstsq_optimality_ratio<T>(ad.view(), x.view(), b.view());
  EXPECT_LT(gpuqr::testing::track("sparse_lstsq_optimality", opt), 30.0);
  for (I j = 0; j < nrhs && j < static_cast<I>(res.size()); ++j) {
    const double want = gpuqr::accuracy::residual_norm<T>(ad.view(), x.view().col(j), b.view().col(j));
    // Both are ||b - A x|| up to rounding: eps (||b|| + ||A|| ||x||).
    EXPECT_NEAR(res[j], want,
                1e2 * gpuqr::accuracy::eps<T>() *
                    (frob(to_double(b)) + frob(to_double(ad)) * frob(to_double(x))))
        << "residual norm of column " << j;
  }
  const Matrix<double> add = to_double(ad), bd = to_double(b);
  const double cond = cond2(add);
  if (!(cond <= 1e10)) return 0;
  const Matrix<double> xr = dense_lstsq(add, bd);
  double worst = 0;
  for (I j = 0; j < nrhs; ++j) {
    double dx = 0, nx = 0;
    for (I i = 0; i < a.cols; ++i) {
      dx += (x(i, j) - xr(i, j)) * (x(i, j) - xr(i, j));
      nx += xr(i, j) * xr(i, j);
    }
    const double rr = gpuqr::accuracy::residual_norm<double>(add.view(), xr.view().col(j), bd.view().col(j));
    const double anorm2 = frob(add);  // >= ||A||_2: the bound below is slightly loose
    const double sens = cond + cond * cond * rr / std::max(anorm2 * std::sqrt(nx), 1e-300);
    const double ratio = std::sqrt(dx) / std::max(std::sqrt(nx), 1e-300) /
                         (gpuqr::accuracy::eps<T>() * sens);
    worst = std::max(worst, ratio);
  }
  EXPECT_LT(gpuqr::testing::track("sparse_vs_dgels", worst), 100.0);
  return worst;
}

/// A random sparse m x n matrix: about `per_col` entries per column, plus A(j, j) so that it
/// has full structural rank; values uniform in (-1, 1).
template <class T>
CscMatrix<T> random_sparse(I m, I n, I per_col, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<I> row(0, m - 1);
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  std::vector<I> ii, jj;
  std::vector<T> vv;
  for (I j = 0; j < n; ++j) {
    ii.push_back(j);
    jj.push_back(j);
    vv.push_back(static_cast<T>(1.0 + val(gen)));
    for (I t = 0; t < per_col; ++t) {
      ii.push_back(row(gen));
      jj.push_back(j);
      vv.push_back(static_cast<T>(val(gen)));
    }
  }
  return CscMatrix<T>::from_triplets(m, n, ii, jj, vv);
}

/// Dense minimum-residual least squares by LAPACKE_dgelsd with rcond: ||b - A x|| per column
/// and the effective rank.
inline std::vector<double> dense_min_residual(const Matrix<double>& a, const Matrix<double>& b,
                                       double rcond, I* rank) {
  const I m = a.rows(), n = a.cols(), nrhs = b.cols();
  Matrix<double> ac = a.clone(), bc(std::max(m, n), nrhs);
  for (I j = 0; j < nrhs; ++j)
    for (I i = 0; i < m; ++i) bc(i, j) = b(i, j);
  std::vector<double> s(std::min(m, n));
  lapack_int r = 0;
  const int info = LAPACKE_dgelsd(LAPACK_COL_MAJOR, m, n, nrhs, ac.data(), ac.ld(), bc.data(),
                                  bc.ld(), s.data(), rcond, &r);
  EXPECT_EQ(info, 0);
  *rank = r;
  std::vector<double> out;
  for (I j = 0; j < nrhs; ++j) {
    Matrix<double> xj(n, 1);
    for (I i = 0; i < n; ++i) xj(i, 0) = bc(i, j);
    out.push_back(gpuqr::accuracy::residual_norm<double>(a.view(), xj.view().col(0), b.view().col(j)));
  }
  return out;
}

/// The basic solution of a rank-deficient problem: ||A^T r||_2 / ((m + n) eps ||A||_F ||r||_2)
/// (the dropped columns have norm <= tol = 20 (m + n) eps max ||A(:, j)||), and ||r|| against
/// dgelsd's minimum residual with rcond = tol / ||A||_2 (unique up to the dropped part).
/// Returns the optimality ratio.
inline double check_basic_solution(const CscMatrix<double>& a, const SparseQR<double>& qr, I* dense_rank,
                            double* res_diff) {
  const I m = a.rows, n = a.cols;
  const Matrix<double> b = random_dense<double>(m, 1, 17 + n);
  std::vector<double> res;
  const Matrix<double> x = qr.solve(b.view(), &res);
  for (const I k : qr.dead_columns()) EXPECT_EQ(x(k, 0), 0.0) << "dead column " << k;
  std::vector<double> xv(n), bv(m);
  for (I i = 0; i < n; ++i) xv[i] = x(i, 0);
  for (I i = 0; i < m; ++i) bv[i] = b(i, 0);
  std::vector<double> r = spmv(a, xv);
  double rn = 0, atr = 0, xn = 0;
  for (I i = 0; i < m; ++i) r[i] = bv[i] - r[i], rn += r[i] * r[i];
  for (I j = 0; j < n; ++j) {
    double s = 0;
    for (I p = a.col_ptr[j]; p < a.col_ptr[j + 1]; ++p) s += a.values[p] * r[a.row_indices[p]];
    atr += s * s;
    xn += xv[j] * xv[j];
  }
  rn = std::sqrt(rn), atr = std::sqrt(atr), xn = std::sqrt(xn);
  const Matrix<double> ad = a.to_dense();
  const double an = frob(ad), eps = gpuqr::accuracy::eps<double>();
  const double opt = atr / (static_cast<double>(m + n) * eps * an * rn);
  EXPECT_LT(opt, 100.0) << "basic solution not optimal";
  EXPECT_NEAR(res[0], rn, 1e2 * static_cast<double>(m + n) * eps * (frob(b) + an * xn));
  // ||A||_2 from the largest singular value.
  Matrix<double> ac = ad.clone();
  std::vector<double> sv(std::min(m, n));
  LAPACKE_dgesdd(LAPACK_COL_MAJOR, 'N', m, n, ac.data(), ac.ld(), sv.data(), nullptr, 1, nullptr, 1);
  const double a2 = sv.empty() ? 0 : sv[0];
  const std::vector<double> want = dense_min_residual(ad, b, a2 > 0 ? qr.tolerance() / a2 : -1, dense_rank);
  *res_diff = std::abs(rn - want[0]) / (frob(b) + an * xn);
  // The dropped part E has ||E|| <= tol sqrt(#dead): the residuals agree to ||E|| ||x||.
  EXPECT_LE(std::abs(rn - want[0]),
            1e2 * static_cast<double>(m + n) * eps * (frob(b) + an * xn) +
                qr.tolerance() * std::sqrt(static_cast<double>(n - qr.rank()) + 1) * xn)
      << "residual " << rn << " vs dgelsd's " << want[0];
  return opt;
}

/// Nested-dissection numbering of a g x g grid's nodes (node x + y g -> its column): each
/// rectangle numbers its halves first, then the middle line that separates them, so the
/// natural ordering of the numbered columns already has a bushy elimination tree.
inline std::vector<I> grid_nested_dissection(I g) {
  std::vector<I> number(static_cast<std::size_t>(g * g), -1);
  I next = 0;
  auto visit = [&](auto&& self, I x0, I x1, I y0, I y1) -> void {
    if (x1 <= x0 || y1 <= y0) return;
    if ((x1 - x0) * (y1 - y0) <= 4) {
      for (I y = y0; y < y1; ++y)
        for (I x = x0; x < x1; ++x) number[static_cast<std::size_t>(x + y * g)] = next++;
      return;
    }
    if (x1 - x0 >= y1 - y0) {
      const I mid = (x0 + x1) / 2;
      self(self, x0, mid, y0, y1);
      self(self, mid + 1, x1, y0, y1);
      for (I y = y0; y < y1; ++y) number[static_cast<std::size_t>(mid + y * g)] = next++;
    } else {
      const I mid = (y0 + y1) / 2;
      self(self, x0, x1, y0, mid);
      self(self, x0, x1, mid + 1, y1);
      for (I x = x0; x < x1; ++x) number[static_cast<std::size_t>(x + mid * g)] = next++;
    }
  };
  visit(visit, 0, g, 0, g);
  return number;
}

/// The gradient of a g x g grid (horizontal and vertical differences) plus one row per
/// boundary node (a Dirichlet condition), so it has full column rank: about 2 g^2 x g^2.
/// `nested_dissection`: columns numbered by grid_nested_dissection (else row by row).
template <class T>
CscMatrix<T> grid_gradient(I g, bool nested_dissection = false) {
  std::vector<I> ii, jj;
  std::vector<T> vv;
  I row = 0;
  const std::vector<I> nd = nested_dissection ? grid_nested_dissection(g) : std::vector<I>();
  auto node = [g, &nd](I x, I y) {
    return nd.empty() ? x + y * g : nd[static_cast<std::size_t>(x + y * g)];
  };
  auto diff = [&](I p, I q) {
    ii.insert(ii.end(), {row, row});
    jj.insert(jj.end(), {p, q});
    vv.insert(vv.end(), {T(-1), T(1)});
    ++row;
  };
  for (I y = 0; y < g; ++y)
    for (I x = 0; x < g; ++x) {
      if (x + 1 < g) diff(node(x, y), node(x + 1, y));
      if (y + 1 < g) diff(node(x, y), node(x, y + 1));
      if (x == 0 || y == 0 || x == g - 1 || y == g - 1) {
        ii.push_back(row++);
        jj.push_back(node(x, y));
        vv.push_back(T(1));
      }
    }
  return CscMatrix<T>::from_triplets(row, g * g, ii, jj, vv);
}

/// The entries of a sparse matrix as (row, column, value) triplets, for building variants.
template <class T>
struct Triplets {
  std::vector<I> rows, cols;
  std::vector<T> values;
};

/// The triplets of b with rows 3, 10, ... emptied and column 5 folded into column 4: a matrix
/// with empty rows, a dependent column and an empty one (the caller may add more before
/// CscMatrix::from_triplets).
template <class T>
Triplets<T> with_empty_rows_and_dependent_column(const CscMatrix<T>& b) {
  Triplets<T> t;
  for (I j = 0; j < b.cols; ++j)
    for (I p = b.col_ptr[j]; p < b.col_ptr[j + 1]; ++p)
      if (b.row_indices[p] % 7 != 3) {  // rows 3, 10, ... (beyond the diagonal ones) emptied
        t.rows.push_back(b.row_indices[p]);
        t.cols.push_back(j == 5 ? 4 : j);  // column 5 := column 4 (dependent), column 5 empty
        t.values.push_back(b.values[p]);
      }
  return t;
}

}  // namespace gpuqr::testing::sparse
