// The batched QR drivers: check every matrix of the batch (naming the first bad one), build
// the batch description, dispatch to the backend's leaf. Nothing is written before the checks
// have passed.
#include "gpuqr/batched.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "gpuqr/error.hpp"
#include "src/core/batched_kernels.hpp"
#include "src/core/dispatch.hpp"

namespace gpuqr {
namespace {

using kernels::BatchEntry;
using kernels::MatrixBatch;

[[noreturn]] void bad(const char* routine, std::int64_t i, const std::string& what) {
  GPUQR_THROW(InvalidArgument,
              std::string(routine) + ": matrix " + std::to_string(i) + ": " + what);
}

void check_count(const char* routine, std::int64_t batch) {
  if (batch < 0) {
    GPUQR_THROW(InvalidArgument, std::string(routine) + ": batch = " + std::to_string(batch) +
                                     " < 0");
  }
}

/// Throws unless each host array of the description is present (when batch > 0).
void check_arrays(const char* routine, std::int64_t batch,
                  std::initializer_list<std::pair<const char*, const void*>> arrays) {
  if (batch == 0) return;
  for (const auto& [name, p] : arrays) {
    if (p == nullptr) {
      GPUQR_THROW(InvalidArgument, std::string(routine) + ": the array " + name +
                                       " is null with batch = " + std::to_string(batch));
    }
  }
}

void check_dim(const char* routine, std::int64_t i, const char* name, std::int64_t v) {
  if (v < 0) bad(routine, i, std::string(name) + " = " + std::to_string(v) + " < 0");
}

void check_ld(const char* routine, std::int64_t i, const char* name, std::int64_t ld,
              std::int64_t rows) {
  if (ld < std::max<std::int64_t>(1, rows)) {
    bad(routine, i, std::string(name) + " = " + std::to_string(ld) + " < max(1, rows) = " +
                        std::to_string(std::max<std::int64_t>(1, rows)));
  }
}

void check_ptr(const char* routine, std::int64_t i, const char* name, const void* p,
               bool needed) {
  if (needed && p == nullptr) bad(routine, i, std::string(name) + " is null");
}

template <class T>
BatchEntry<T> entry(T* a, std::int64_t m, std::int64_t n, std::int64_t ld, T* tau,
                    std::int64_t k) {
  BatchEntry<T> e;
  e.a = a;
  e.m = m;
  e.n = n;
  e.ld = ld;
  e.tau = tau;
  e.k = k;
  return e;
}

template <class T>
MatrixBatch<T> listed(std::int64_t batch) {
  MatrixBatch<T> b;
  b.count = batch;
  b.list.reserve(static_cast<std::size_t>(batch));
  return b;
}

/// Checks and lists a geqrf batch given per matrix.
template <class T>
MatrixBatch<T> geqrf_list(const char* routine, std::int64_t batch, const std::int64_t* m,
                          const std::int64_t* n, T* const* a, const std::int64_t* lda,
                          T* const* tau) {
  check_count(routine, batch);
  check_arrays(routine, batch, {{"m", m}, {"n", n}, {"a", a}, {"lda", lda}, {"tau", tau}});
  MatrixBatch<T> b = listed<T>(batch);
  for (std::int64_t i = 0; i < batch; ++i) {
    check_dim(routine, i, "m", m[i]);
    check_dim(routine, i, "n", n[i]);
    check_ld(routine, i, "lda", lda[i], m[i]);
    const std::int64_t k = std::min(m[i], n[i]);
    check_ptr(routine, i, "a", a[i], m[i] * n[i] > 0);
    check_ptr(routine, i, "tau", tau[i], k > 0);
    b.list.push_back(entry<T>(a[i], m[i], n[i], lda[i], tau[i], k));
  }
  return b;
}

}  // namespace

template <class T>
void geqrf_strided_batched(const Context& ctx, std::int64_t m, std::int64_t n, T* a,
                           std::int64_t lda, std::int64_t stride_a, T* tau,
                           std::int64_t stride_tau, std::int64_t batch) {
  const char* routine = "geqrf_strided_batched";
  check_count(routine, batch);
  if (batch == 0) return;
  const std::int64_t k = std::min(m, n);
  // The sizes are shared: a bad one is bad for matrix 0 first.
  check_dim(routine, 0, "m", m);
  check_dim(routine, 0, "n", n);
  check_ld(routine, 0, "lda", lda, m);
  check_ptr(routine, 0, "a", a, m * n > 0);
  check_ptr(routine, 0, "tau", tau, k > 0);
  if (batch > 1 && m * n > 0 && stride_a < lda * n) {
    bad(routine, 1, "stride_a = " + std::to_string(stride_a) + " < lda * n = " +
                        std::to_string(lda * n) + " (overlaps matrix 0)");
  }
  if (batch > 1 && k > 0 && stride_tau < k) {
    bad(routine, 1, "stride_tau = " + std::to_string(stride_tau) + " < min(m, n) = " +
                        std::to_string(k) + " (overlaps tau 0)");
  }
  if (m * n == 0) return;
  MatrixBatch<T> b;
  b.count = batch;
  b.strided = true;
  b.shape = entry<T>(a, m, n, lda, tau, k);
  b.stride = stride_a;
  b.tau_stride = stride_tau;
  GPUQR_DISPATCH(ctx, batched_geqrf, b);
}

template <class T>
void geqrf_batched(const Context& ctx, std::int64_t m, std::int64_t n, T* const* a,
                   std::int64_t lda, T* const* tau, std::int64_t batch) {
  const char* routine = "geqrf_batched";
  check_count(routine, batch);
  const std::vector<std::int64_t> ms(static_cast<std::size_t>(batch), m),
      ns(static_cast<std::size_t>(batch), n), lds(static_cast<std::size_t>(batch), lda);
  const MatrixBatch<T> b = geqrf_list(routine, batch, ms.data(), ns.data(), a, lds.data(), tau);
  if (batch == 0 || m * n == 0) return;
  GPUQR_DISPATCH(ctx, batched_geqrf, b);
}

template <class T>
void geqrf_vbatched(const Context& ctx, const std::int64_t* m, const std::int64_t* n,
                    T* const* a, const std::int64_t* lda, T* const* tau, std::int64_t batch) {
  const MatrixBatch<T> b = geqrf_list("geqrf_vbatched", batch, m, n, a, lda, tau);
  if (batch == 0) return;
  GPUQR_DISPATCH(ctx, batched_geqrf, b);
}

template <class T>
void orgqr_vbatched(const Context& ctx, const std::int64_t* m, const std::int64_t* n,
                    const std::int64_t* k, T* const* a, const std::int64_t* lda,
                    const T* const* tau, std::int64_t batch) {
  const char* routine = "orgqr_vbatched";
  check_count(routine, batch);
  check_arrays(routine, batch,
               {{"m", m}, {"n", n}, {"k", k}, {"a", a}, {"lda", lda}, {"tau", tau}});
  MatrixBatch<T> b = listed<T>(batch);
  for (std::int64_t i = 0; i < batch; ++i) {
    check_dim(routine, i, "k", k[i]);
    if (!(m[i] >= n[i] && n[i] >= k[i])) {
      bad(routine, i, "needs m >= n >= k >= 0, got m = " + std::to_string(m[i]) + ", n = " +
                          std::to_string(n[i]) + ", k = " + std::to_string(k[i]));
    }
    check_ld(routine, i, "lda", lda[i], m[i]);
    check_ptr(routine, i, "a", a[i], m[i] * n[i] > 0);
    check_ptr(routine, i, "tau", tau[i], k[i] > 0);
    b.list.push_back(entry<T>(a[i], m[i], n[i], lda[i], const_cast<T*>(tau[i]), k[i]));
  }
  if (batch == 0) return;
  GPUQR_DISPATCH(ctx, batched_orgqr, b);
}

template <class T>
void ormqr_vbatched(const Context& ctx, Op op, const std::int64_t* m, const std::int64_t* nc,
                    const std::int64_t* k, const T* const* a, const std::int64_t* lda,
                    const T* const* tau, T* const* c, const std::int64_t* ldc,
                    std::int64_t batch) {
  const char* routine = "ormqr_vbatched";
  check_count(routine, batch);
  check_arrays(routine, batch,
               {{"m", m}, {"nc", nc}, {"k", k}, {"a", a}, {"lda", lda}, {"tau", tau}, {"c", c},
                {"ldc", ldc}});
  MatrixBatch<T> v = listed<T>(batch), cb = listed<T>(batch);
  for (std::int64_t i = 0; i < batch; ++i) {
    check_dim(routine, i, "m", m[i]);
    check_dim(routine, i, "nc", nc[i]);
    check_dim(routine, i, "k", k[i]);
    if (k[i] > m[i]) {
      bad(routine, i, "k = " + std::to_string(k[i]) + " > m = " + std::to_string(m[i]));
    }
    check_ld(routine, i, "lda", lda[i], m[i]);
    check_ld(routine, i, "ldc", ldc[i], m[i]);
    check_ptr(routine, i, "a", a[i], m[i] * k[i] > 0);
    check_ptr(routine, i, "tau", tau[i], k[i] > 0);
    check_ptr(routine, i, "c", c[i], m[i] * nc[i] > 0);
    v.list.push_back(entry<T>(const_cast<T*>(a[i]), m[i], k[i], lda[i],
                              const_cast<T*>(tau[i]), k[i]));
    cb.list.push_back(entry<T>(c[i], m[i], nc[i], ldc[i], nullptr, 0));
  }
  if (batch == 0) return;
  GPUQR_DISPATCH(ctx, batched_ormqr, op, v, cb);
}

namespace {

/// Checks and lists a least-squares batch (gels_vbatched, lstsq_vbatched): A's entries and B's.
template <class T>
std::pair<MatrixBatch<T>, MatrixBatch<T>> gels_lists(const char* routine, const std::int64_t* m,
                                                     const std::int64_t* n,
                                                     const std::int64_t* nrhs, T* const* a,
                                                     const std::int64_t* lda, T* const* b,
                                                     const std::int64_t* ldb, std::int64_t batch) {
  check_count(routine, batch);
  check_arrays(routine, batch,
               {{"m", m}, {"n", n}, {"nrhs", nrhs}, {"a", a}, {"lda", lda}, {"b", b},
                {"ldb", ldb}});
  MatrixBatch<T> ab = listed<T>(batch), bb = listed<T>(batch);
  for (std::int64_t i = 0; i < batch; ++i) {
    check_dim(routine, i, "n", n[i]);
    check_dim(routine, i, "nrhs", nrhs[i]);
    if (m[i] < n[i]) {
      bad(routine, i, "least squares needs m >= n, got " + detail::shape(m[i], n[i]));
    }
    check_ld(routine, i, "lda", lda[i], m[i]);
    check_ld(routine, i, "ldb", ldb[i], m[i]);
    check_ptr(routine, i, "a", a[i], m[i] * n[i] > 0);
    check_ptr(routine, i, "b", b[i], m[i] * nrhs[i] > 0);
    ab.list.push_back(entry<T>(a[i], m[i], n[i], lda[i], nullptr, n[i]));
    bb.list.push_back(entry<T>(b[i], m[i], nrhs[i], ldb[i], nullptr, 0));
  }
  return {std::move(ab), std::move(bb)};
}

}  // namespace

template <class T>
void gels_vbatched(const Context& ctx, const std::int64_t* m, const std::int64_t* n,
                   const std::int64_t* nrhs, T* const* a, const std::int64_t* lda, T* const* b,
                   const std::int64_t* ldb, std::int64_t batch) {
  const auto [ab, bb] = gels_lists("gels_vbatched", m, n, nrhs, a, lda, b, ldb, batch);
  if (batch == 0) return;
  GPUQR_DISPATCH(ctx, batched_gels, ab, bb);
}

template <class T>
void lstsq_vbatched(const Context& ctx, const std::int64_t* m, const std::int64_t* n,
                    const std::int64_t* nrhs, T* const* a, const std::int64_t* lda, T* const* b,
                    const std::int64_t* ldb, std::int64_t batch) {
  const auto [ab, bb] = gels_lists("lstsq_vbatched", m, n, nrhs, a, lda, b, ldb, batch);
  if (batch == 0) return;
  GPUQR_DISPATCH(ctx, batched_lstsq, ab, bb);
}

#define GPUQR_INSTANTIATE_BATCHED_API(T)                                                     \
  template void geqrf_strided_batched<T>(const Context&, std::int64_t, std::int64_t, T*,     \
                                         std::int64_t, std::int64_t, T*, std::int64_t,       \
                                         std::int64_t);                                      \
  template void geqrf_batched<T>(const Context&, std::int64_t, std::int64_t, T* const*,      \
                                 std::int64_t, T* const*, std::int64_t);                     \
  template void geqrf_vbatched<T>(const Context&, const std::int64_t*, const std::int64_t*,  \
                                  T* const*, const std::int64_t*, T* const*, std::int64_t);  \
  template void orgqr_vbatched<T>(const Context&, const std::int64_t*, const std::int64_t*,  \
                                  const std::int64_t*, T* const*, const std::int64_t*,       \
                                  const T* const*, std::int64_t);                            \
  template void ormqr_vbatched<T>(const Context&, Op, const std::int64_t*,                   \
                                  const std::int64_t*, const std::int64_t*, const T* const*, \
                                  const std::int64_t*, const T* const*, T* const*,           \
                                  const std::int64_t*, std::int64_t);                        \
  template void gels_vbatched<T>(const Context&, const std::int64_t*, const std::int64_t*,   \
                                 const std::int64_t*, T* const*, const std::int64_t*,        \
                                 T* const*, const std::int64_t*, std::int64_t);          \
  template void lstsq_vbatched<T>(const Context&, const std::int64_t*, const std::int64_t*,  \
                                  const std::int64_t*, T* const*, const std::int64_t*,       \
                                  T* const*, const std::int64_t*, std::int64_t);

GPUQR_INSTANTIATE_BATCHED_API(float)
GPUQR_INSTANTIATE_BATCHED_API(double)

}  // namespace gpuqr
