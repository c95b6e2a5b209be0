// CPU backend of the QR-updating leaves (src/core/update_kernels.hpp): LAPACK's tpmqrt for the
// block reflectors of added rows, plain loops for the Givens sweeps of removed rows. These are
// the reference twins of src/cuda/update_householder.cu and src/cuda/update_givens.cu.
#include "src/core/update_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "src/cpu/lapack_wrappers.hpp"

namespace gpuqr::kernels::cpu {

using lapack::check_info;
using lapack::to_int;

namespace {

lapack_int tpmqrt_call(char side, char trans, lapack_int m, lapack_int n, lapack_int k,
                       const float* v, lapack_int ldv, const float* t, lapack_int ldt, float* a,
                       lapack_int lda, float* b, lapack_int ldb, float* work) {
  return LAPACKE_stpmqrt_work(LAPACK_COL_MAJOR, side, trans, m, n, k, 0, k, v, ldv, t, ldt, a,
                              lda, b, ldb, work);
}
lapack_int tpmqrt_call(char side, char trans, lapack_int m, lapack_int n, lapack_int k,
                       const double* v, lapack_int ldv, const double* t, lapack_int ldt,
                       double* a, lapack_int lda, double* b, lapack_int ldb, double* work) {
  return LAPACKE_dtpmqrt_work(LAPACK_COL_MAJOR, side, trans, m, n, k, 0, k, v, ldv, t, ldt, a,
                              lda, b, ldb, work);
}

/// Element (line, pos) of a matrix whose lines are its rows or its columns.
template <class T>
T& at(MatrixView<T> x, bool lines_are_rows, std::int64_t line, std::int64_t pos) {
  return lines_are_rows ? x(line, pos) : x(pos, line);
}

template <class T>
void rotate(T c, T s, T& x, T& y) {
  const T xx = x, yy = y;
  x = c * xx - s * yy;
  y = s * xx + c * yy;
}

}  // namespace

template <class T>
void tpmqrt(detail::ContextImpl&, Side side, Op op, MatrixView<const T> v, MatrixView<const T> t,
            MatrixView<T> a, MatrixView<T> b, MatrixView<T> w) {
  const std::int64_t k = v.cols();
  if (k == 0 || b.empty() || v.rows() == 0) return;
  // LAPACK: side L, B is m x n with V m x k; side R, B is m x n with V n x k.
  const std::int64_t work_size = side == Side::left ? k * b.cols() : b.rows() * k;
  std::vector<T> work(static_cast<std::size_t>(std::max<std::int64_t>(work_size, 1)));
  (void)w;
  check_info(tpmqrt_call(side == Side::left ? 'L' : 'R', op == Op::trans ? 'T' : 'N',
                         to_int(b.rows(), "m"), to_int(b.cols(), "n"), to_int(k, "k"), v.data(),
                         to_int(v.ld(), "ldv"), t.data(), to_int(t.ld(), "ldt"), a.data(),
                         to_int(a.ld(), "lda"), b.data(), to_int(b.ld(), "ldb"), work.data()),
             "tpmqrt");
}

namespace {

/// One chunk of add_rows_chained: the reflectors of (R(i, i); U(:, i)), i = 0..n-1, applied as
/// they are formed.
template <class T>
void add_rows_chunk(MatrixView<T> r, MatrixView<T> u, MatrixView<T> d, MatrixView<T> e, T* tau) {
  const std::int64_t n = r.cols(), p = u.rows(), k = d.cols();
  auto top = [&](std::int64_t i, std::int64_t c) -> T& { return c < n ? r(i, c) : d(i, c - n); };
  auto bottom = [&](std::int64_t q, std::int64_t c) -> T& {
    return c < n ? u(q, c) : e(q, c - n);
  };
  for (std::int64_t i = 0; i < n; ++i) {
    // larfg on (R(i, i); U(:, i)) with the scaled norm.
    T amax = 0;
    for (std::int64_t q = 0; q < p; ++q) amax = std::max(amax, std::abs(u(q, i)));
    T t = 0, scale = 0, beta = r(i, i);
    if (amax > 0) {
      T ss = 0;
      for (std::int64_t q = 0; q < p; ++q) ss += (u(q, i) / amax) * (u(q, i) / amax);
      const T alpha = r(i, i);
      const T norm = std::hypot(alpha, amax * std::sqrt(ss));
      beta = alpha >= 0 ? -norm : norm;
      t = (beta - alpha) / beta;
      scale = T(1) / (alpha - beta);
    }
    for (std::int64_t q = 0; q < p; ++q) u(q, i) *= scale;
    r(i, i) = beta;
    tau[i] = t;
    for (std::int64_t c = i + 1; c < n + k; ++c) {
      T w = top(i, c);
      for (std::int64_t q = 0; q < p; ++q) w += u(q, i) * bottom(q, c);
      w *= t;
      top(i, c) -= w;
      for (std::int64_t q = 0; q < p; ++q) bottom(q, c) -= u(q, i) * w;
    }
  }
}

}  // namespace

template <class T>
void add_rows_chained(detail::ContextImpl&, MatrixView<T> r, MatrixView<T> u, MatrixView<T> d,
                      MatrixView<T> e, VectorView<T> tau, VectorView<int>) {
  const std::int64_t n = r.cols(), p = u.rows(), k = d.cols();
  const std::int64_t chunk = add_rows_chunk_rows(p);
  for (std::int64_t c = 0; c * chunk < p; ++c) {
    const std::int64_t row0 = c * chunk, rows = std::min(chunk, p - row0);
    add_rows_chunk<T>(r, u.block(row0, 0, rows, n), d, k > 0 ? e.block(row0, 0, rows, k) : e,
                      tau.data() + c * n);
  }
}

template <class T>
void gather_rows(detail::ContextImpl&, MatrixView<const T> src, VectorView<const std::int64_t> rows,
                 std::int64_t col0, bool transpose, MatrixView<T> dst) {
  const std::int64_t nc = transpose ? dst.rows() : dst.cols();
  for (std::int64_t c = 0; c < nc; ++c)
    for (std::int64_t i = 0; i < rows.size(); ++i) {
      const T value = src(rows[i], col0 + c);
      if (transpose) dst(c, i) = value; else dst(i, c) = value;
    }
}

template <class T>
void move_lines(detail::ContextImpl&, MatrixView<T> a, VectorView<const std::int64_t> from,
                VectorView<const std::int64_t> to, bool rows) {
  for (std::int64_t i = 0; i < from.size(); ++i) {
    if (rows) {
      for (std::int64_t c = 0; c < a.cols(); ++c) a(to[i], c) = a(from[i], c);
    } else {
      for (std::int64_t r = 0; r < a.rows(); ++r) a(r, to[i]) = a(r, from[i]);
    }
  }
}

template <class T>
void transpose(detail::ContextImpl&, MatrixView<const T> src, MatrixView<T> dst) {
  for (std::int64_t j = 0; j < src.cols(); ++j)
    for (std::int64_t i = 0; i < src.rows(); ++i) dst(j, i) = src(i, j);
}

template <class T>
void deletion_rotations(detail::ContextImpl&, MatrixView<T> z, MatrixView<T> c,
                        MatrixView<T> s) {
  const std::int64_t p = z.rows(), n = z.cols() - p;
  for (std::int64_t r = 0; r < p; ++r) {
    for (std::int64_t j = n - 1; j >= 0; --j) {
      const T x = z(r, j), y = z(r, n + r);
      const T rho = std::hypot(x, y);
      const T cj = rho == T(0) ? T(1) : y / rho;
      const T sj = rho == T(0) ? T(0) : x / rho;
      c(j, r) = cj;
      s(j, r) = sj;
      z(r, j) = T(0);
      z(r, n + r) = rho;
      for (std::int64_t q = r + 1; q < p; ++q) rotate(cj, sj, z(q, j), z(q, n + r));
    }
  }
}

template <class T>
void apply_deletion_rotations(detail::ContextImpl&, MatrixView<const T> c, MatrixView<const T> s,
                              MatrixView<T> x, MatrixView<T> acc, bool lines_are_rows,
                              bool triangular) {
  const std::int64_t n = c.rows(), p = c.cols();
  const std::int64_t lines = lines_are_rows ? x.rows() : x.cols();
  std::vector<T> pivots(static_cast<std::size_t>(p));
  for (std::int64_t line = 0; line < lines; ++line) {
    for (std::int64_t r = 0; r < p; ++r)
      pivots[r] = acc.empty() ? T(0) : at(acc, lines_are_rows, line, r);
    const std::int64_t top = triangular ? std::min(line, n - 1) : n - 1;
    for (std::int64_t j = top; j >= 0; --j) {
      T& xj = at(x, lines_are_rows, line, j);
      for (std::int64_t r = 0; r < p; ++r) rotate(c(j, r), s(j, r), xj, pivots[r]);
    }
    if (!acc.empty())
      for (std::int64_t r = 0; r < p; ++r) at(acc, lines_are_rows, line, r) = pivots[r];
  }
}

template <class T>
void accumulate_deletion_rotations(detail::ContextImpl& ctx, MatrixView<const T> c,
                                   MatrixView<const T> s, std::int64_t nb, MatrixView<T> g) {
  const std::int64_t n = c.rows(), p = c.cols();
  for (std::int64_t b = 0; b * nb < n; ++b) {
    const std::int64_t j1 = n - b * nb, j0 = std::max<std::int64_t>(0, j1 - nb), w = j1 - j0;
    MatrixView<T> gb = g.block(0, b * (nb + p), w + p, w + p);
    for (std::int64_t k = 0; k < w + p; ++k)
      for (std::int64_t i = 0; i < w + p; ++i) gb(i, k) = T(i == k ? 1 : 0);
    apply_deletion_rotations<T>(ctx, c.block(j0, 0, w, p), s.block(j0, 0, w, p),
                                gb.block(0, 0, w + p, w), gb.block(0, w, w + p, p), true, false);
  }
}

template <class T>
void multiply_add(detail::ContextImpl&, Op op_a, Op op_b, T alpha, MatrixView<const T> a,
                  MatrixView<const T> b, MatrixView<T> c) {
  const std::int64_t kk = op_a == Op::trans ? a.rows() : a.cols();
  if (c.empty() || kk == 0) return;
  lapack::gemm(op_a == Op::trans ? CblasTrans : CblasNoTrans,
               op_b == Op::trans ? CblasTrans : CblasNoTrans, to_int(c.rows(), "m"),
               to_int(c.cols(), "n"), to_int(kk, "k"), a.data(),
               to_int(std::max<std::int64_t>(a.ld(), 1), "lda"), b.data(),
               to_int(std::max<std::int64_t>(b.ld(), 1), "ldb"), c.data(), to_int(c.ld(), "ldc"),
               T(1), alpha);
}

GPUQR_INSTANTIATE_UPDATE_KERNELS(float)
GPUQR_INSTANTIATE_UPDATE_KERNELS(double)

}  // namespace gpuqr::kernels::cpu
