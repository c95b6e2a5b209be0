// CPU backend of the CholeskyQR and Householder-reconstruction leaves
// (src/core/cholqr_kernels.hpp): CBLAS GEMM, LAPACK potrf/trtri and orhr_col. The reference
// twins of src/cuda/cholqr_kernels.cu and src/cuda/orhr_col.cu.
#include "src/core/cholqr_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "src/cpu/lapack_wrappers.hpp"

// LAPACK >= 3.9's orhr_col: OpenBLAS exports it, but the LAPACKE header installed here predates
// it, so the Fortran entry points are declared directly (all arguments by reference).
extern "C" {
void sorhr_col_(const lapack_int* m, const lapack_int* n, const lapack_int* nb, float* a,
                const lapack_int* lda, float* t, const lapack_int* ldt, float* d,
                lapack_int* info);
void dorhr_col_(const lapack_int* m, const lapack_int* n, const lapack_int* nb, double* a,
                const lapack_int* lda, double* t, const lapack_int* ldt, double* d,
                lapack_int* info);
}

namespace gpuqr::kernels::cpu {

using lapack::check_info;
using lapack::gemm;
using lapack::to_int;

namespace {

/// Rows per chunk of W = A X in gram_of_product (a few hundred KiB: cache-resident).
constexpr std::int64_t kChunkRows = 1024;
void trsm_right(lapack_int m, lapack_int n, const float* r, lapack_int ldr, float* b,
                lapack_int ldb) {
  cblas_strsm(CblasColMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, m, n, 1.0f, r,
              ldr, b, ldb);
}
void trsm_right(lapack_int m, lapack_int n, const double* r, lapack_int ldr, double* b,
                lapack_int ldb) {
  cblas_dtrsm(CblasColMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, m, n, 1.0, r,
              ldr, b, ldb);
}
void trmm_right_upper(lapack_int m, lapack_int n, const float* x, lapack_int ldx, float* b,
                      lapack_int ldb) {
  cblas_strmm(CblasColMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, m, n, 1.0f, x,
              ldx, b, ldb);
}
void trmm_right_upper(lapack_int m, lapack_int n, const double* x, lapack_int ldx, double* b,
                      lapack_int ldb) {
  cblas_dtrmm(CblasColMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, m, n, 1.0, x,
              ldx, b, ldb);
}
lapack_int potrf(lapack_int n, float* a, lapack_int lda) {
  return LAPACKE_spotrf_work(LAPACK_COL_MAJOR, 'U', n, a, lda);
}
lapack_int potrf(lapack_int n, double* a, lapack_int lda) {
  return LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'U', n, a, lda);
}
lapack_int trtri(lapack_int n, float* a, lapack_int lda) {
  return LAPACKE_strtri_work(LAPACK_COL_MAJOR, 'U', 'N', n, a, lda);
}
lapack_int trtri(lapack_int n, double* a, lapack_int lda) {
  return LAPACKE_dtrtri_work(LAPACK_COL_MAJOR, 'U', 'N', n, a, lda);
}
void orhr_col_call(lapack_int m, lapack_int n, float* a, lapack_int lda, float* t,
                   lapack_int ldt, float* d, lapack_int* info) {
  sorhr_col_(&m, &n, &n, a, &lda, t, &ldt, d, info);
}
void orhr_col_call(lapack_int m, lapack_int n, double* a, lapack_int lda, double* t,
                   lapack_int ldt, double* d, lapack_int* info) {
  dorhr_col_(&m, &n, &n, a, &lda, t, &ldt, d, info);
}

/// orhr_col of the m x n orthonormal Q held in v, in place (n >= 1), as one block of width
/// n: T is the n x n upper triangular factor of the whole product, its lower triangle zeroed.
template <class T>
void orhr_col_in_place(std::int64_t m, std::int64_t n, MatrixView<T> v, MatrixView<T> t,
                       VectorView<T> d) {
  lapack_int info = 0;
  orhr_col_call(to_int(m, "m"), to_int(n, "n"), v.data(), to_int(v.ld(), "ldv"), t.data(),
                to_int(t.ld(), "ldt"), d.data(), &info);
  check_info(info, "orhr_col");
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = j + 1; i < n; ++i) t(i, j) = T(0);
}

}  // namespace

template <class T>
void gram(detail::ContextImpl&, MatrixView<const T> a, MatrixView<T> g) {
  const lapack_int m = to_int(a.rows(), "m"), n = to_int(a.cols(), "n");
  if (n == 0) return;
  gemm(CblasTrans, CblasNoTrans, n, n, m, a.data(), to_int(a.ld(), "lda"), a.data(),
       to_int(a.ld(), "lda"), g.data(), to_int(g.ld(), "ldg"));
}

namespace {
/// x rounded to TF32 (10 explicit mantissa bits), to nearest with ties away from zero, as
/// the CUDA twin's cvt.rna.tf32 (NaN and Inf kept).
float tf32_rna(float x) {
  if (!std::isfinite(x)) return x;
  std::uint32_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  bits = (bits + 0x1000u) & 0xffffe000u;
  std::memcpy(&x, &bits, sizeof bits);
  return x;
}
}  // namespace

template <class T>
bool gram_low(detail::ContextImpl&, MatrixView<const T> a, MatrixView<T> g) {
  const std::int64_t m = a.rows(), n = a.cols();
  if (n == 0) return true;
  std::vector<float> w(static_cast<std::size_t>(m * n)), gf(static_cast<std::size_t>(n * n), 0.f);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) w[i + j * m] = tf32_rna(static_cast<float>(a(i, j)));
  if (m > 0) {
    const lapack_int ni = to_int(n, "n");
    cblas_ssyrk(CblasColMajor, CblasUpper, CblasTrans, ni, to_int(m, "m"), 1.0f, w.data(),
                to_int(m, "lda"), 0.0f, gf.data(), ni);
  }
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i <= j; ++i) g(i, j) = g(j, i) = static_cast<T>(gf[i + j * n]);
  return true;
}

template <class T>
bool gram_low_wanted(detail::ContextImpl&, std::int64_t, std::int64_t) {
  return false;  // the conversion costs the CPU more than SSYRK saves over DSYRK-free GEMM
}

template <class T>
void gram_of_product(detail::ContextImpl&, MatrixView<const T> a, MatrixView<const T> x,
                     MatrixView<T> g) {
  const std::int64_t m = a.rows(), n = a.cols();
  if (n == 0) return;
  const lapack_int ni = to_int(n, "n"), ldg = to_int(g.ld(), "ldg");
  if (m == 0) {
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i) g(i, j) = T(0);
    return;
  }
  const std::int64_t rows = std::min(m, kChunkRows);
  std::vector<T> w(static_cast<std::size_t>(rows * n));
  for (std::int64_t s = 0; s < m; s += rows) {
    const lapack_int h = to_int(std::min(rows, m - s), "chunk");
    gemm(CblasNoTrans, CblasNoTrans, h, ni, ni, a.data() + s, to_int(a.ld(), "lda"), x.data(),
         to_int(x.ld(), "ldx"), w.data(), h);
    gemm(CblasTrans, CblasNoTrans, ni, ni, h, w.data(), h, w.data(), h, g.data(), ldg,
         s == 0 ? T(0) : T(1));
  }
}

template <class T>
void gram_of_upper_product(detail::ContextImpl& ctx, MatrixView<const T> a, MatrixView<const T> x,
                           MatrixView<T> g) {
  gram_of_product<T>(ctx, a, x, g);  // X's zeros are multiplied like any entry here
}

template <class T>
void cholesky_inverse(detail::ContextImpl&, MatrixView<T> g, MatrixView<T> rinv,
                      double shift_factor, VectorView<double> status) {
  const std::int64_t n = g.rows();
  double* s = status.data();
  std::fill(s, s + detail::kStatusSize, 0.0);
  if (n == 0) return;
  double offset = 0.0, trace = 0.0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) {
      const double e = double(g(i, j)) - (i == j ? 1.0 : 0.0);
      offset += e * e;
      if (i == j) trace += double(g(i, i));
    }
  // No shift asked, none added (a NaN trace must not turn "none" into NaN).
  const double shift = shift_factor != 0.0 ? shift_factor * trace : 0.0;
  s[detail::kStatusOffset] = std::sqrt(offset);
  s[detail::kStatusTrace] = trace;
  s[detail::kStatusShift] = shift;
  for (std::int64_t i = 0; i < n; ++i) g(i, i) = static_cast<T>(double(g(i, i)) + shift);
  const lapack_int ni = to_int(n, "n");
  const lapack_int info = potrf(ni, g.data(), to_int(g.ld(), "ldg"));
  check_info(info, "potrf");
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = j + 1; i < n; ++i) g(i, j) = T(0);
  if (info > 0) {
    s[detail::kStatusBreakdown] = info;
    return;
  }
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) rinv(i, j) = i <= j ? g(i, j) : T(0);
  const lapack_int tinfo = trtri(ni, rinv.data(), to_int(rinv.ld(), "ldrinv"));
  check_info(tinfo, "trtri");
  double inv_norm = 0.0, lo = std::numeric_limits<double>::infinity(), hi = 0.0;
  bool finite = tinfo == 0;
  for (std::int64_t j = 0; j < n; ++j) {
    lo = std::min(lo, std::abs(double(g(j, j))));
    hi = std::max(hi, std::abs(double(g(j, j))));
    for (std::int64_t i = 0; i <= j; ++i) {
      const double v = rinv(i, j);
      finite = finite && std::isfinite(v);
      inv_norm += v * v;
    }
  }
  s[detail::kStatusInverseNorm] = std::sqrt(inv_norm);
  s[detail::kStatusMinDiag] = lo;
  s[detail::kStatusMaxDiag] = hi;
  if (!finite || !std::isfinite(inv_norm)) s[detail::kStatusBreakdown] = double(n + 1);
}

template <class T>
void gram_status(detail::ContextImpl&, MatrixView<const T> g, VectorView<double> status) {
  double* s = status.data();
  std::fill(s, s + detail::kStatusSize, 0.0);
  const std::int64_t n = g.rows();
  double offset = 0.0, trace = 0.0, row_sum = 0.0;
  for (std::int64_t j = 0; j < n; ++j) {
    double column = 0.0;  // G is symmetric: column j's sum is row j's
    for (std::int64_t i = 0; i < n; ++i) {
      const double e = double(g(i, j)) - (i == j ? 1.0 : 0.0);
      offset += e * e;
      column += std::abs(e);
      if (i == j) trace += double(g(i, i));
    }
    // NaN-propagating max: a NaN entry must not read as a small sum.
    row_sum = (column > row_sum || std::isnan(column)) ? column : row_sum;
  }
  s[detail::kStatusOffset] = std::sqrt(offset);
  s[detail::kStatusTrace] = trace;
  s[detail::kStatusRowSum] = row_sum;
}

template <class T>
void multiply(detail::ContextImpl&, Op op_a, MatrixView<const T> a, MatrixView<const T> b,
              MatrixView<T> c, double alpha) {
  if (c.empty()) return;
  const std::int64_t k = op_a == Op::trans ? a.rows() : a.cols();
  if (k == 0) {
    for (std::int64_t j = 0; j < c.cols(); ++j)
      for (std::int64_t i = 0; i < c.rows(); ++i) c(i, j) = T(0);
    return;
  }
  gemm(op_a == Op::trans ? CblasTrans : CblasNoTrans, CblasNoTrans, to_int(c.rows(), "m"),
       to_int(c.cols(), "n"), to_int(k, "k"), a.data(), to_int(a.ld(), "lda"), b.data(),
       to_int(b.ld(), "ldb"), c.data(), to_int(c.ld(), "ldc"), T(0), static_cast<T>(alpha));
}

template <class T>
void multiply_in_place(detail::ContextImpl&, MatrixView<T> a, MatrixView<const T> x) {
  const std::int64_t m = a.rows(), n = a.cols();
  if (m == 0 || n == 0) return;
  const std::int64_t rows = std::min(m, kChunkRows);
  std::vector<T> w(static_cast<std::size_t>(rows * n));
  const lapack_int ni = to_int(n, "n"), lda = to_int(a.ld(), "lda");
  for (std::int64_t s = 0; s < m; s += rows) {
    const lapack_int h = to_int(std::min(rows, m - s), "chunk");
    gemm(CblasNoTrans, CblasNoTrans, h, ni, ni, a.data() + s, lda, x.data(),
         to_int(x.ld(), "ldx"), w.data(), h);
    for (std::int64_t j = 0; j < n; ++j)
      std::copy(w.data() + j * h, w.data() + (j + 1) * h, a.data() + s + j * a.ld());
  }
}

template <class T>
void tall_times_upper(detail::ContextImpl&, MatrixView<const T> a, MatrixView<const T> x,
                      MatrixView<T> q) {
  const std::int64_t m = a.rows(), n = a.cols();
  if (m == 0 || n == 0) return;
  GPUQR_CHECK_ARG(q.data() != a.data() || q.ld() == a.ld(),
                  "tall_times_upper: Q is A in place with another ld");
  if (q.data() != a.data()) {
    check_info(lapack::lacpy('A', to_int(m, "m"), to_int(n, "n"), a.data(), to_int(a.ld(), "lda"),
                             q.data(), to_int(q.ld(), "ldq")),
               "lacpy");
  }
  trmm_right_upper(to_int(m, "m"), to_int(n, "n"), x.data(), to_int(x.ld(), "ldx"), q.data(),
                   to_int(q.ld(), "ldq"));
}

template <class T>
bool tall_times_upper_wanted(detail::ContextImpl&, std::int64_t, std::int64_t) {
  return false;
}

template <class T>
void trsm_right_upper(detail::ContextImpl&, MatrixView<const T> r, MatrixView<T> b) {
  if (b.empty()) return;
  trsm_right(to_int(b.rows(), "m"), to_int(b.cols(), "n"), r.data(), to_int(r.ld(), "ldr"),
             b.data(), to_int(b.ld(), "ldb"));
}

template <class T>
void orhr_col(detail::ContextImpl&, MatrixView<const T> q, MatrixView<T> v, MatrixView<T> t,
              VectorView<T> d) {
  const std::int64_t m = q.rows(), n = q.cols();
  if (n == 0) return;
  check_info(lapack::lacpy('A', to_int(m, "m"), to_int(n, "n"), q.data(), to_int(q.ld(), "ldq"),
                           v.data(), to_int(v.ld(), "ldv")),
             "lacpy");
  orhr_col_in_place(m, n, v, t, d);
}

template <class T>
void orhr_col_of_product(detail::ContextImpl& ctx, MatrixView<const T> w, MatrixView<const T> x,
                         MatrixView<T> v, MatrixView<T> t, VectorView<T> d, MatrixView<T>) {
  // The reference: Q = W X formed whole in v, then orhr_col in place.
  if (w.data() == v.data()) {
    multiply_in_place<T>(ctx, v, x);
  } else {
    multiply<T>(ctx, Op::no_trans, w, x, v);
  }
  const std::int64_t m = w.rows(), n = w.cols();
  if (n == 0) return;
  orhr_col_in_place(m, n, v, t, d);
}

template <class T>
void finish_geqrf(detail::ContextImpl&, MatrixView<const T> r, VectorView<const T> d,
                  MatrixView<const T> t, MatrixView<T> a, VectorView<T> tau) {
  const std::int64_t n = r.cols();
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t i = 0; i <= j; ++i) a(i, j) = d[i] * r(i, j);
    tau[j] = t(j, j);
  }
}

GPUQR_INSTANTIATE_CHOLQR_KERNELS(float)
GPUQR_INSTANTIATE_CHOLQR_KERNELS(double)
GPUQR_INSTANTIATE_ORHR_COL_KERNEL(float)
GPUQR_INSTANTIATE_ORHR_COL_KERNEL(double)
GPUQR_INSTANTIATE_TALL_TIMES_UPPER(float)
GPUQR_INSTANTIATE_TALL_TIMES_UPPER(double)

}  // namespace gpuqr::kernels::cpu
