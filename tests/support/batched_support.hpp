// Batches for the batched QR tests: random host matrices, their copies in a context's memory
// (one allocation per matrix, or one strided allocation with poisoned padding), and the
// per-matrix checks (backward error and orthogonality through the batched orgqr, Q^T A = R).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "gpuqr/accuracy.hpp"
#include "gpuqr/batched.hpp"
#include "tests/support/backends.hpp"
#include "tests/support/generators.hpp"
#include "tests/support/ratios.hpp"

namespace gpuqr::testing {

struct BShape {
  std::int64_t m, n;
};

template <class T>
struct HostBatch {
  std::vector<BShape> shapes;
  std::vector<Matrix<T>> mats;
};

/// Random matrices of the given shapes; kinds > 1 cycles through that many MatrixKinds
/// (random, graded, ill-conditioned, rank-deficient).
template <class T>
HostBatch<T> make_batch(const std::vector<BShape>& shapes, std::uint64_t seed, int kinds) {
  const MatrixKind all[] = {MatrixKind::random, MatrixKind::graded, MatrixKind::ill_conditioned,
                            MatrixKind::rank_deficient};
  HostBatch<T> b;
  b.shapes = shapes;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const MatrixKind kind = kinds > 1 ? all[i % std::min<std::size_t>(kinds, 4)] : all[0];
    b.mats.push_back(make_matrix<T>(kind, shapes[i].m, shapes[i].n, seed + 17 * i));
  }
  return b;
}

/// The shapes of `groups` ((shape, count) pairs) interleaved round-robin, one of each group in
/// turn while it lasts: a listed batch whose shapes change from matrix to matrix (the CUDA
/// routes bucket them on the way in).
inline std::vector<BShape> interleaved_shapes(
    const std::vector<std::pair<BShape, std::int64_t>>& groups) {
  std::vector<BShape> shapes;
  std::vector<std::int64_t> left;
  for (const auto& g : groups) left.push_back(g.second);
  for (bool more = true; more;) {
    more = false;
    for (std::size_t g = 0; g < groups.size(); ++g)
      if (left[g] > 0) {
        shapes.push_back(groups[g].first);
        more = --left[g] > 0 || more;
      }
  }
  return shapes;
}

/// A batch in a context's memory: a matrix and a tau vector (min(m, n) entries) each.
template <class T>
struct CtxBatch {
  std::vector<Matrix<T>> mats, taus;
  std::vector<std::int64_t> m, n, ld;
  std::vector<T*> a_ptrs, tau_ptrs;
  std::int64_t count() const { return static_cast<std::int64_t>(mats.size()); }
  std::vector<const T*> const_a_ptrs() const { return {a_ptrs.begin(), a_ptrs.end()}; }
  std::vector<const T*> const_tau_ptrs() const { return {tau_ptrs.begin(), tau_ptrs.end()}; }
  void add(Matrix<T> a, Matrix<T> tau) {
    m.push_back(a.rows());
    n.push_back(a.cols());
    ld.push_back(a.ld());
    a_ptrs.push_back(a.data());
    tau_ptrs.push_back(tau.data());
    mats.push_back(std::move(a));
    taus.push_back(std::move(tau));
  }
};

template <class T>
CtxBatch<T> to_ctx_batch(const Context& ctx, const HostBatch<T>& host) {
  CtxBatch<T> b;
  const MemorySpace space = ctx.is_cuda() ? MemorySpace::device : MemorySpace::host;
  for (const Matrix<T>& a : host.mats) {
    const std::int64_t k = std::max<std::int64_t>(std::min(a.rows(), a.cols()), 1);
    b.add(to_ctx<T>(ctx, a.view()), Matrix<T>(k, 1, space, ctx.device()));
  }
  return b;
}

/// One strided allocation of equal-size matrices: ld = m + pad_ld, stride = ld n + pad_stride,
/// every entry outside the matrices poisoned with 1e30; tau strided by min(m, n) + 2.
template <class T>
struct StridedBatch {
  Matrix<T> data, tau;
  std::int64_t ld = 1, stride = 0, tau_stride = 0;
};

inline constexpr double kPoison = 1e30;

/// Entries of a strided batch's host copies (`got`, `got_tau`: dev.data and dev.tau brought
/// back) outside its m x n matrices or past each tau's min(m, n) entries that no longer hold
/// kPoison: what a kernel wrote where it must not.
template <class T>
std::int64_t touched_padding(const Matrix<T>& got, const Matrix<T>& got_tau, std::int64_t ld,
                             std::int64_t stride, std::int64_t tau_stride, std::int64_t m,
                             std::int64_t n) {
  std::int64_t touched = 0;
  const std::int64_t k = std::min(m, n);
  for (std::int64_t e = 0; e < got.rows(); ++e) {
    const std::int64_t in = e % stride, i = in % ld, j = in / ld;
    if ((i >= m || j >= n) && got(e, 0) != static_cast<T>(kPoison)) ++touched;
  }
  for (std::int64_t e = 0; e < got_tau.rows(); ++e)
    if (e % tau_stride >= k && got_tau(e, 0) != static_cast<T>(kPoison)) ++touched;
  return touched;
}

template <class T>
StridedBatch<T> to_strided(const Context& ctx, const HostBatch<T>& host, std::int64_t pad_ld,
                           std::int64_t pad_stride) {
  const std::int64_t m = host.shapes[0].m, n = host.shapes[0].n, count = host.mats.size();
  StridedBatch<T> s;
  s.ld = m + pad_ld;
  s.stride = s.ld * n + pad_stride;
  s.tau_stride = std::min(m, n) + 2;
  Matrix<T> h(s.stride * count, 1), t(s.tau_stride * count, 1);
  for (std::int64_t e = 0; e < h.rows(); ++e) h(e, 0) = static_cast<T>(kPoison);
  for (std::int64_t e = 0; e < t.rows(); ++e) t(e, 0) = static_cast<T>(kPoison);
  for (std::int64_t q = 0; q < count; ++q)
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i) h(q * s.stride + i + j * s.ld, 0) = host.mats[q](i, j);
  s.data = to_ctx<T>(ctx, h.view());
  s.tau = to_ctx<T>(ctx, t.view());
  return s;
}

/// The strided results as a CtxBatch (copies), after checking that no padding was written.
template <class T>
CtxBatch<T> from_strided(const Context& ctx, const StridedBatch<T>& s, const HostBatch<T>& host) {
  const std::int64_t m = host.shapes[0].m, n = host.shapes[0].n, k = std::min(m, n);
  Matrix<T> h = to_host(ctx, s.data), t = to_host(ctx, s.tau);
  std::int64_t touched = 0;
  for (std::int64_t e = 0; e < h.rows(); ++e) {
    const std::int64_t in = e % s.stride, i = in % s.ld, j = in / s.ld;
    const bool inside = j < n && i < m && e / s.stride < static_cast<std::int64_t>(host.mats.size());
    if (!inside && h(e, 0) != static_cast<T>(kPoison)) ++touched;
  }
  for (std::int64_t e = 0; e < t.rows(); ++e)
    if (e % s.tau_stride >= k && t(e, 0) != static_cast<T>(kPoison)) ++touched;
  EXPECT_EQ(touched, 0) << "entries outside the matrices (or past tau) were written";
  CtxBatch<T> b;
  for (std::size_t q = 0; q < host.mats.size(); ++q) {
    const std::int64_t off = static_cast<std::int64_t>(q);
    MatrixView<const T> a(h.data() + off * s.stride, m, n, s.ld);
    MatrixView<const T> tau(t.data() + off * s.tau_stride, std::max<std::int64_t>(k, 1), 1,
                            std::max<std::int64_t>(k, 1));
    b.add(to_ctx<T>(ctx, a), to_ctx<T>(ctx, tau));
  }
  return b;
}

/// Backward error and orthogonality of every factored matrix of `f` (the factors of `host`),
/// Q formed by one orgqr_vbatched call over the whole batch.
template <class T>
void check_factors(const Context& ctx, const HostBatch<T>& host, const CtxBatch<T>& f,
                   double bound) {
  CtxBatch<T> q;
  std::vector<std::int64_t> k;
  for (std::size_t i = 0; i < host.mats.size(); ++i) {
    const std::int64_t m = host.shapes[i].m, kk = std::min(m, host.shapes[i].n);
    k.push_back(kk);
    Matrix<T> qi = Matrix<T>::copy_of(f.mats[i].view().block(0, 0, m, kk), f.mats[i].space(),
                                      f.mats[i].device());
    q.add(std::move(qi), Matrix<T>(1, 1, f.mats[i].space(), f.mats[i].device()));
  }
  orgqr_vbatched<T>(ctx, q.m.data(), q.n.data(), k.data(), q.a_ptrs.data(), q.ld.data(),
                    f.const_tau_ptrs().data(), q.count());
  for (std::size_t i = 0; i < host.mats.size(); ++i) {
    const std::int64_t m = host.shapes[i].m, n = host.shapes[i].n, kk = k[i];
    if (kk == 0) continue;
    SCOPED_TRACE("matrix " + std::to_string(i) + " (" + std::to_string(m) + "x" +
                 std::to_string(n) + ")");
    Matrix<T> qr = to_host(ctx, f.mats[i]), qh = to_host(ctx, q.mats[i]);
    Matrix<T> r(kk, n);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t r_i = 0; r_i < kk; ++r_i) r(r_i, j) = r_i <= j ? qr(r_i, j) : T(0);
    EXPECT_LT(track("backward error",
                    accuracy::qr_backward_error<T>(host.mats[i].view(), qh.view(), r.view())),
              bound);
    EXPECT_LT(track("orthogonality", accuracy::orthogonality<T>(qh.view())), bound);
  }
}

/// ||C - X||_1 / (||A||_1 max(m, n) eps), X = [R; 0] (want_r) or A.
template <class T>
double scaled_difference(const Matrix<T>& c, const Matrix<T>& a, const Matrix<T>* factors) {
  const std::int64_t m = a.rows(), n = a.cols();
  double worst = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    double col = 0;
    for (std::int64_t i = 0; i < m; ++i) {
      const double want = factors ? (i <= j ? double((*factors)(i, j)) : 0.0) : double(a(i, j));
      col += std::fabs(double(c(i, j)) - want);
    }
    worst = std::max(worst, col);
  }
  const double scale = accuracy::norm1<T>(a.view()) * double(std::max(m, n)) * accuracy::eps<T>();
  return scale > 0 ? worst / scale : worst;
}

/// C (= Q^T A) against R from the factors `f`, for every matrix.
template <class T>
void check_qta_is_r(const Context& ctx, const HostBatch<T>& host, const CtxBatch<T>& f,
                    const CtxBatch<T>& c, double bound) {
  for (std::size_t i = 0; i < host.mats.size(); ++i) {
    SCOPED_TRACE("matrix " + std::to_string(i));
    const Matrix<T> fh = to_host(ctx, f.mats[i]), ch = to_host(ctx, c.mats[i]);
    EXPECT_LT(track("Q^T A - R", scaled_difference<T>(ch, host.mats[i], &fh)), bound);
  }
}

/// C against A, for every matrix.
template <class T>
void check_round_trip(const Context& ctx, const HostBatch<T>& host, const CtxBatch<T>& c,
                      double bound) {
  for (std::size_t i = 0; i < host.mats.size(); ++i) {
    SCOPED_TRACE("matrix " + std::to_string(i));
    const Matrix<T> ch = to_host(ctx, c.mats[i]);
    EXPECT_LT(track("Q Q^T A - A", scaled_difference<T>(ch, host.mats[i], nullptr)), bound);
  }
}

}  // namespace gpuqr::testing
