// SparseQR through the scheduler's stages and launches (issue 9's CPU twin): a memory cap that
// forces several stages leaves the result unchanged (the same rank, nnz(R), R bit for bit,
// solutions and Q^T B), on the shared corpus and on generated grid problems, float and double;
// the working memory stays within the cap; a cap too small is a clear error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gpuqr/error.hpp"
#include "gpuqr/sparse_qr.hpp"
#include "src/core/sparse_assembly.hpp"
#include "src/core/sparse_stages.hpp"
#include "tests/support/sparse_corpus.hpp"
#include "tests/support/sparse_qr_checks.hpp"

namespace {

using namespace gpuqr::testing::sparse;


/// The smallest cap the stage planner accepts for this factorization (k carried columns).
template <class T>
I smallest_cap(const CscMatrix<T>& a, const SparseQR<T>& qr, I k) {
  const gpuqr::detail::CscPattern pat{a.rows, a.cols, a.col_ptr.data(), a.row_indices.data()};
  const auto maps = gpuqr::detail::build_sparse_assembly_maps(qr.analysis(), pat);
  I need = 0;
  for (I f = 0; f < static_cast<I>(qr.analysis().fronts.size()); ++f)
    need = std::max(need, gpuqr::detail::front_min_stage_bytes(
                              qr.analysis(), maps, f, {static_cast<I>(sizeof(T)), k}));
  return need;
}

template <class T>
bool same_bits(const T* x, const T* y, std::size_t n) {
  return n == 0 || std::memcmp(x, y, n * sizeof(T)) == 0;
}

template <class T>
bool same_bits(const Matrix<T>& x, const Matrix<T>& y) {
  if (x.rows() != y.rows() || x.cols() != y.cols()) return false;
  for (I j = 0; j < x.cols(); ++j)
    if (!same_bits(x.data() + j * x.ld(), y.data() + j * y.ld(), static_cast<std::size_t>(x.rows())))
      return false;
  return true;
}

/// The same rank, nnz(R), zero pivots and R (structure, and values bit for bit).
template <class T>
void expect_same_r(const SparseQR<T>& ref, const SparseQR<T>& other) {
  EXPECT_EQ(other.rank(), ref.rank());
  EXPECT_EQ(other.nnz_r(), ref.nnz_r());
  EXPECT_EQ(other.zero_pivots(), ref.zero_pivots());
  const CscMatrix<T> r0 = ref.r(), r1 = other.r();
  EXPECT_EQ(r1.col_ptr, r0.col_ptr);
  EXPECT_EQ(r1.row_indices, r0.row_indices);
  EXPECT_TRUE(r1.values.size() == r0.values.size() &&
              same_bits(r1.values.data(), r0.values.data(), r0.values.size()))
      << "R differs";
}

/// Factors `a` with no cap and with `cap`; everything the caller sees must be the same.
/// Returns the staged factorization's stage count.
template <class T>
I compare_staged(const CscMatrix<T>& a, SparseQROptions opt, I cap, bool check_accuracy) {
  opt.memory_cap_bytes = 0;
  const SparseQR<T> ref(a, opt);
  opt.memory_cap_bytes = cap;
  const SparseQR<T> st(a, opt);
  SCOPED_TRACE("cap " + std::to_string(cap) + " stages " + std::to_string(st.factor_stats().stages));
  EXPECT_EQ(ref.factor_stats().stages, 1);
  expect_same_r(ref, st);
  // The working memory a device would hold stays within the cap whenever the fronts have
  // the analysis' sizes (no dead column below them).
  const bool sized = ref.tolerance() < 0 || ref.zero_pivots().empty();
  if (sized) EXPECT_LE(st.factor_stats().peak_stage_bytes, cap);
  EXPECT_LE(st.factor_stats().peak_stage_bytes, ref.factor_stats().peak_stage_bytes);
  EXPECT_GE(st.factor_stats().launches, ref.factor_stats().launches);
  EXPECT_GE(st.factor_stats().tasks, static_cast<I>(st.analysis().fronts.size()));
  // With one root (a connected front tree), a stage boundary has a block crossing it.
  I roots = 0;
  for (const auto& f : st.analysis().fronts) roots += f.parent < 0 ? 1 : 0;
  if (st.factor_stats().stages > 1 && roots == 1) EXPECT_GT(st.factor_stats().carried_bytes, 0);
  EXPECT_EQ(ref.factor_stats().carried_bytes, 0);
  // Solutions, from the kept reflectors.
  if (a.rows >= a.cols && (ref.tolerance() >= 0 || ref.zero_pivots().empty())) {
    const Matrix<T> b = random_dense<T>(a.rows, 2, 7);
    const Matrix<T> x0 = ref.solve(b.view()), x1 = st.solve(b.view());
    EXPECT_TRUE(same_bits(x0, x1)) << "solutions differ";
    if (check_accuracy && ref.rank() == a.cols) {
      std::vector<double> xs(a.cols), bs(a.rows);
      for (I i = 0; i < a.cols; ++i) xs[i] = x1(i, 0);
      for (I i = 0; i < a.rows; ++i) bs[i] = b(i, 0);
      EXPECT_LT(sparse_optimality_ratio(a, xs, bs), 30.0);
      double xn = 0;
      for (const double v : xs) xn = std::max(xn, std::abs(v));
      EXPECT_GT(xn, 0.0);
    }
  }
  return st.factor_stats().stages;
}

template <class T>
void corpus_staged() {
  int staged = 0;
  for (const auto& [name, a0] : gpuqr::testing::sparse_corpus()) {
    if (a0.cols == 0 || a0.nnz() == 0) continue;
    SCOPED_TRACE(name);
    const CscMatrix<T> a = a0.template cast<T>();
    for (const double tol : {-2.0, -1.0}) {
      SparseQROptions opt = any_ordering();
      opt.tolerance = tol;
      const SparseQR<T> probe(a, opt);
      const I need = smallest_cap(a, probe, 0);
      for (const I cap : {need, 2 * need}) staged += compare_staged(a, opt, cap, false) > 1 ? 1 : 0;
    }
  }
  EXPECT_GT(staged, 20) << "too few corpus runs had several stages";
}

TEST(SparseQRStaging, CorpusDoubleSameResult) { corpus_staged<double>(); }
TEST(SparseQRStaging, CorpusFloatSameResult) { corpus_staged<float>(); }

template <class T>
void grid_staged() {
  const CscMatrix<T> a = grid_gradient<T>(24);
  for (const double tol : {-2.0, -1.0}) {
    SparseQROptions opt = any_ordering();
    opt.tolerance = tol;
    const SparseQR<T> probe(a, opt);
    const I need = smallest_cap(a, probe, 0);
    EXPECT_GE(compare_staged(a, opt, need, true), 4);
    EXPECT_GE(compare_staged(a, opt, 3 * need, true), 2);
    // The staged R is a QR factor of A: backward error against (AQ)^T (AQ).
    opt.memory_cap_bytes = need;
    EXPECT_LT(rtr_ratio(a, SparseQR<T>(a, opt)), 30.0);
  }
}

TEST(SparseQRStaging, GridDoubleSameResult) { grid_staged<double>(); }
TEST(SparseQRStaging, GridFloatSameResult) { grid_staged<float>(); }

// Carried right-hand sides and Q-less mode: C = Q^T B and its solutions do not change.
template <class T>
void carried_staged() {
  const CscMatrix<T> a = grid_gradient<T>(16);
  const Matrix<T> b = random_dense<T>(a.rows, 3, 11);
  for (const bool keep : {true, false}) {
    SparseQROptions opt = any_ordering();
    opt.keep_householder = keep;
    const SparseQR<T> ref(a, b.view(), opt);
    opt.memory_cap_bytes = smallest_cap(a, ref, 3);
    const SparseQR<T> st(a, b.view(), opt);
    EXPECT_GE(st.factor_stats().stages, 3);
    EXPECT_LE(st.factor_stats().peak_stage_bytes, opt.memory_cap_bytes);
    EXPECT_TRUE(same_bits(ref.qtb(), st.qtb())) << "Q^T B differs";
    const Matrix<T> x0 = ref.solve_carried(), x1 = st.solve_carried();
    EXPECT_TRUE(same_bits(x0, x1));
    std::vector<double> xs(a.cols), bs(a.rows);
    for (I i = 0; i < a.cols; ++i) xs[i] = x1(i, 2);
    for (I i = 0; i < a.rows; ++i) bs[i] = b(i, 2);
    EXPECT_LT(sparse_optimality_ratio(a, xs, bs), 30.0);
    // The cap counts the carried columns: without them it is too small.
    opt.memory_cap_bytes = smallest_cap(a, ref, 0) - 1;
    EXPECT_THROW(SparseQR<T>(a, b.view(), opt), gpuqr::InvalidArgument);
  }
}

TEST(SparseQRStaging, CarriedRhsAndQlessDouble) { carried_staged<double>(); }
TEST(SparseQRStaging, CarriedRhsAndQlessFloat) { carried_staged<float>(); }

TEST(SparseQRStaging, CapTooSmallIsAClearError) {
  const CscMatrix<double> a = grid_gradient<double>(10);
  SparseQROptions opt = any_ordering();
  const SparseQR<double> probe(a, opt);
  const I need = smallest_cap(a, probe, 0);
  opt.memory_cap_bytes = need - 1;
  try {
    SparseQR<double> qr(a, opt);
    ADD_FAILURE() << "accepted a cap below the largest front's need";
  } catch (const gpuqr::InvalidArgument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("front "), std::string::npos) << what;
    EXPECT_NE(what.find("needs: "), std::string::npos) << what;
    EXPECT_NE(what.find(std::to_string(need - 1) + " bytes"), std::string::npos) << what;
  }
  opt.memory_cap_bytes = -5;
  EXPECT_THROW(SparseQR<double>(a, opt), gpuqr::InvalidArgument);
  opt.memory_cap_bytes = need;  // exactly the need is enough
  EXPECT_NO_THROW(SparseQR<double>(a, opt));
}

TEST(SparseQRStaging, StatsWithoutCap) {
  // Columns in nested-dissection order, so that the natural ordering (no SuiteSparse) also
  // gives a bushy tree whose levels share launches.
  const CscMatrix<double> a = grid_gradient<double>(20, true);
  const SparseQR<double> qr(a, any_ordering());
  const auto& s = qr.factor_stats();
  const I nf = static_cast<I>(qr.analysis().fronts.size());
  EXPECT_EQ(s.stages, 1);
  EXPECT_GE(s.tasks, 2 * nf - 1);  // a Factorize per front, a Pack per non-root, S-Assemblies
  EXPECT_LE(s.tasks, 3 * nf);
  EXPECT_LT(s.launches, nf);
  EXPECT_GT(s.launches, 1);
  EXPECT_EQ(s.carried_bytes, 0);
  EXPECT_GE(static_cast<double>(s.peak_stage_bytes), qr.analysis().memory_bytes);
}

}  // namespace

namespace {

/// Factors `a` on one thread and on `threads`; rank, R, zero pivots, solutions (kept
/// reflectors) and Q^T B must be bit for bit the same. Returns the launches that had several
/// tasks (where threads can help).
template <class T>
I compare_threads(const CscMatrix<T>& a, SparseQROptions opt, int threads) {
  const Matrix<T> b = random_dense<T>(a.rows, 2, 11);
  opt.threads = 1;
  const SparseQR<T> ref(a, b.view(), opt);
  opt.threads = threads;
  const SparseQR<T> par(a, b.view(), opt);
  SCOPED_TRACE("threads " + std::to_string(threads));
  expect_same_r(ref, par);
  EXPECT_TRUE(same_bits(ref.qtb(), par.qtb())) << "Q^T B differs";
  if (a.rows >= a.cols && (ref.tolerance() >= 0 || ref.zero_pivots().empty())) {
    EXPECT_TRUE(same_bits(ref.solve_carried(), par.solve_carried())) << "carried solutions differ";
    if (opt.keep_householder)
      EXPECT_TRUE(same_bits(ref.solve(b.view()), par.solve(b.view()))) << "solutions differ";
  }
  EXPECT_EQ(par.factor_stats().launches, ref.factor_stats().launches);
  return ref.factor_stats().launches;
}

template <class T>
void threads_same_result() {
  for (const auto& [name, a0] : gpuqr::testing::sparse_corpus()) {
    if (a0.cols == 0 || a0.nnz() == 0) continue;
    SCOPED_TRACE(name);
    const CscMatrix<T> a = a0.template cast<T>();
    for (const double tol : {-2.0, -1.0}) {
      SparseQROptions opt = any_ordering();
      opt.tolerance = tol;
      compare_threads(a, opt, 3);
    }
  }
  // Grids: bushy trees, many fronts per launch; kept and discarded reflectors, a memory cap.
  for (const I g : {I{12}, I{25}}) {
    SCOPED_TRACE("grid " + std::to_string(g));
    const CscMatrix<T> a = grid_gradient<T>(g, true);
    SparseQROptions opt = any_ordering();
    compare_threads(a, opt, 4);
    compare_threads(a, opt, 0);  // all the hardware's threads
    opt.keep_householder = false;
    compare_threads(a, opt, 2);
    opt.keep_householder = true;
    const SparseQR<T> probe(a, opt);
    opt.memory_cap_bytes = 2 * smallest_cap(a, probe, 2);
    compare_threads(a, opt, 3);
  }
}

}  // namespace

TEST(SparseQRThreads, DoubleSameResultBitForBit) { threads_same_result<double>(); }
TEST(SparseQRThreads, FloatSameResultBitForBit) { threads_same_result<float>(); }
TEST(SparseQRThreads, NegativeCountIsAClearError) {
  SparseQROptions opt = any_ordering();
  opt.threads = -1;
  EXPECT_THROW(SparseQR<double>(grid_gradient<double>(6), opt), gpuqr::InvalidArgument);
}
