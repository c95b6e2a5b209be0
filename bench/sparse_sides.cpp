// The sides of gpuqr_sparse_gpu_bench: gpuqr's SparseQR and SuiteSparseQR, timed and checked.
#include "bench/sparse_sides.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "bench/spqr_support.hpp"

namespace gpuqr::bench {
namespace {

double norm2(const std::vector<double>& v) {
  double s = 0;
  for (const double x : v) s += x * x;
  return std::sqrt(s);
}

/// ||b - A x||_2 for x in A's column order (n entries).
double residual_norm(const CscMatrix<double>& a, const double* x, MatrixView<const double> b) {
  std::vector<double> r(static_cast<std::size_t>(a.rows));
  for (std::int64_t i = 0; i < a.rows; ++i) r[static_cast<std::size_t>(i)] = b(i, 0);
  for (std::int64_t j = 0; j < a.cols; ++j) {
    for (std::int64_t k = a.col_ptr[j]; k < a.col_ptr[j + 1]; ++k) {
      r[static_cast<std::size_t>(a.row_indices[k])] -= a.values[k] * x[j];
    }
  }
  return norm2(r);
}

/// Runs `release(); [timer] call(); [timer]` plan.warmup times untimed and plan.repeat times
/// timed; returns the best time in seconds. `release` frees the previous result outside the
/// timed region, so that two factorizations are never held at once.
template <class Release, class Call>
double best_of(const Plan& plan, Release&& release, Call&& call) {
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < plan.warmup + plan.repeat; ++r) {
    release();
    const auto t0 = std::chrono::steady_clock::now();
    call();
    const double t = seconds_since(t0);
    if (r >= plan.warmup) best = std::min(best, t);
  }
  return best;
}

/// The basic solution x (A's column order) of R E^T x = c from SuiteSparseQR's Q-less output:
/// R (e x n, upper trapezoidal or "squeezed"), c = C's first column, E (NULL: identity). Row i
/// of R pivots on its first column p_i; x(E[p_i]) comes from row i and the other entries are 0.
std::vector<double> spqr_basic_solution(const cholmod_sparse* r, const cholmod_dense* c,
                                        const SuiteSparse_long* e) {
  const auto n = static_cast<std::int64_t>(r->ncol);
  const auto rows = static_cast<std::int64_t>(r->nrow);
  const auto* rp = static_cast<const SuiteSparse_long*>(r->p);
  const auto* ri = static_cast<const SuiteSparse_long*>(r->i);
  const auto* rx = static_cast<const double*>(r->x);
  std::vector<std::int64_t> pivot_row(static_cast<std::size_t>(n), -1);
  std::vector<bool> row_seen(static_cast<std::size_t>(rows), false);
  for (std::int64_t j = 0; j < n; ++j) {
    for (auto k = rp[j]; k < rp[j + 1]; ++k) {
      if (!row_seen[static_cast<std::size_t>(ri[k])] && rx[k] != 0.0) {
        row_seen[static_cast<std::size_t>(ri[k])] = true;
        pivot_row[static_cast<std::size_t>(j)] = ri[k];
      }
    }
  }
  std::vector<double> rhs(static_cast<const double*>(c->x),
                          static_cast<const double*>(c->x) + rows);
  std::vector<double> z(static_cast<std::size_t>(n), 0.0);
  for (std::int64_t j = n - 1; j >= 0; --j) {
    const std::int64_t i = pivot_row[static_cast<std::size_t>(j)];
    if (i < 0) continue;
    double diagonal = 0;
    for (auto k = rp[j]; k < rp[j + 1]; ++k) {
      if (ri[k] == i) diagonal = rx[k];
    }
    const double zj = rhs[static_cast<std::size_t>(i)] / diagonal;
    z[static_cast<std::size_t>(j)] = zj;
    for (auto k = rp[j]; k < rp[j + 1]; ++k) {
      if (ri[k] != i) rhs[static_cast<std::size_t>(ri[k])] -= rx[k] * zj;
    }
  }
  std::vector<double> x(static_cast<std::size_t>(n), 0.0);
  for (std::int64_t j = 0; j < n; ++j) {
    x[static_cast<std::size_t>(e ? e[j] : j)] = z[static_cast<std::size_t>(j)];
  }
  return x;
}

SideResult run_spqr_kept(const CscMatrix<double>& a, const Matrix<double>& b, cholmod_sparse* ca,
                         cholmod_common* cc, const Plan& plan) {
  SideResult out;
  SuiteSparseQR_factorization<double>* f = nullptr;
  out.seconds = best_of(
      plan, [&] { SuiteSparseQR_free(&f, cc); },
      [&] { f = SuiteSparseQR_factorize<double>(SPQR_ORDERING_COLAMD, SPQR_DEFAULT_TOL, ca, cc); });
  if (f == nullptr) {
    out.error = "SuiteSparseQR_factorize failed (status " + std::to_string(cc->status) + ")";
    return out;
  }
  out.ran = true;
  out.nnz_r = cc->SPQR_istat[0];
  out.nnz_r_is_bound = true;
  out.rank = f->rank;
  out.spqr_flops = cc->SPQR_flopcount;
  if (a.rows >= a.cols) {
    cholmod_dense* cb = to_cholmod(b.view(), cc);
    cholmod_dense* y = SuiteSparseQR_qmult<double>(SPQR_QTX, f, cb, cc);
    cholmod_dense* x = y ? SuiteSparseQR_solve<double>(SPQR_RETX_EQUALS_B, f, y, cc) : nullptr;
    if (x != nullptr) out.residual = residual_norm(a, static_cast<const double*>(x->x), b.view());
    cholmod_l_free_dense(&x, cc);
    cholmod_l_free_dense(&y, cc);
    cholmod_l_free_dense(&cb, cc);
  }
  SuiteSparseQR_free(&f, cc);
  return out;
}

SideResult run_spqr_qless(const CscMatrix<double>& a, const Matrix<double>& b, cholmod_sparse* ca,
                          cholmod_common* cc, const Plan& plan) {
  SideResult out;
  cholmod_dense* cb = to_cholmod(b.view(), cc);
  cholmod_dense* c = nullptr;
  cholmod_sparse* r = nullptr;
  SuiteSparse_long* e = nullptr;
  SuiteSparse_long rank = -1;
  const auto release = [&] {
    cholmod_l_free_dense(&c, cc);
    cholmod_l_free_sparse(&r, cc);
    if (e != nullptr) {
      cholmod_l_free(static_cast<std::size_t>(a.cols), sizeof(SuiteSparse_long), e, cc);
    }
    e = nullptr;
  };
  out.seconds = best_of(plan, release, [&] {
    rank = SuiteSparseQR<double>(SPQR_ORDERING_COLAMD, SPQR_DEFAULT_TOL, 0, ca, cb, &c, &r, &e, cc);
  });
  if (rank < 0 || r == nullptr || c == nullptr) {
    out.error = "SuiteSparseQR (Q-less) failed (status " + std::to_string(cc->status) + ")";
  } else {
    out.ran = true;
    out.rank = rank;
    out.nnz_r = static_cast<std::int64_t>(cholmod_l_nnz(r, cc));
    out.spqr_flops = cc->SPQR_flopcount;
    if (a.rows >= a.cols) {
      const std::vector<double> x = spqr_basic_solution(r, c, e);
      out.residual = residual_norm(a, x.data(), b.view());
    }
  }
  release();
  cholmod_l_free_dense(&cb, cc);
  return out;
}

}  // namespace

Matrix<double> make_rhs(const CscMatrix<double>& a) {
  Matrix<double> b(a.rows, 1);
  for (std::int64_t i = 0; i < a.rows; ++i) b(i, 0) = 0.0;
  for (std::int64_t j = 0; j < a.cols; ++j) {
    for (std::int64_t k = a.col_ptr[j]; k < a.col_ptr[j + 1]; ++k) {
      b(a.row_indices[k], 0) += a.values[k];
    }
  }
  double norm = 0;
  for (std::int64_t i = 0; i < a.rows; ++i) norm += b(i, 0) * b(i, 0);
  const double scale = a.rows > 0 ? 1e-4 * std::sqrt(norm / static_cast<double>(a.rows)) : 0.0;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (std::int64_t i = 0; i < a.rows; ++i) b(i, 0) += scale * u(rng);
  return b;
}

SideResult run_ours(const CscMatrix<double>& a, const Matrix<double>& b, Mode mode,
                    const SparseQROptions& options, const Plan& plan) {
  SideResult out;
  std::optional<SparseQR<double>> qr;
  SparseQROptions o = options;
  o.keep_householder = mode == Mode::kept;
  out.seconds = best_of(
      plan, [&] { qr.reset(); },
      [&] {
        if (mode == Mode::kept) {
          qr.emplace(a, o);
        } else {
          qr.emplace(a, b.view(), o);
        }
        // SparseQR returns with its results on the host; this only makes sure that nothing
        // it enqueued is still running when the clock stops.
        o.context.synchronize();
      });
  out.ran = true;
  out.nnz_r = qr->nnz_r();
  out.rank = qr->rank();
  out.stats = qr->factor_stats();
  out.stored_bytes = qr->stored_bytes();
  if (a.rows < a.cols) return out;
  try {  // a failed solve leaves the timing standing
    const Matrix<double> x = mode == Mode::kept ? qr->solve(b.view()) : qr->solve_carried();
    out.residual = residual_norm(a, x.data(), b.view());
  } catch (const std::exception& ex) {
    out.error = std::string("solve: ") + ex.what();
    std::fprintf(stderr, "gpuqr_sparse_gpu_bench: %s\n", out.error.c_str());
  }
  return out;
}

SideResult run_spqr(const CscMatrix<double>& a, const Matrix<double>& b, Mode mode,
                    cholmod_common* cc, const Plan& plan) {
  cholmod_sparse* ca = to_cholmod(a, cc);
  SideResult out =
      mode == Mode::kept ? run_spqr_kept(a, b, ca, cc, plan) : run_spqr_qless(a, b, ca, cc, plan);
  cholmod_l_free_sparse(&ca, cc);
  return out;
}

}  // namespace gpuqr::bench
