// CPU backend of the batched leaves (src/core/batched_kernels.hpp): LAPACK per matrix, the
// batch split over std::threads (one contiguous range each). These are the reference twins
// the CUDA leaves are tested against.
#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "src/core/batched_kernels.hpp"
#include "src/cpu/lapack_wrappers.hpp"

namespace gpuqr::kernels::cpu {
namespace {

/// Runs body(i) for i in [0, count) on up to hardware_concurrency threads; the first exception
/// thrown by any of them is rethrown here after all have finished.
template <class Body>
void parallel_for(std::int64_t count, std::int64_t work_per_item, Body&& body) {
  const std::int64_t hw = std::max<unsigned>(1, std::thread::hardware_concurrency());
  // Not worth a thread below ~1 MFLOP-ish of work each.
  const std::int64_t by_work = std::max<std::int64_t>(1, count * work_per_item / (1 << 20));
  const std::int64_t threads = std::min({hw, count, by_work});
  if (threads <= 1) {
    for (std::int64_t i = 0; i < count; ++i) body(i);
    return;
  }
  std::exception_ptr error;
  std::mutex lock;
  std::vector<std::thread> pool;
  for (std::int64_t t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      const std::int64_t lo = count * t / threads, hi = count * (t + 1) / threads;
      try {
        for (std::int64_t i = lo; i < hi; ++i) body(i);
      } catch (...) {
        std::lock_guard<std::mutex> guard(lock);
        if (!error) error = std::current_exception();
      }
    });
  }
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

template <class T>
std::int64_t typical_work(const MatrixBatch<T>& b) {
  if (b.count == 0) return 0;
  const BatchEntry<T> e = b.at(0);
  return std::max<std::int64_t>(1, e.m * e.n * std::max<std::int64_t>(e.n, 1));
}

using lapack::to_int;

template <class T>
void geqrf_one(const BatchEntry<T>& e) {
  if (e.m == 0 || e.n == 0) return;
  lapack::check_info(lapack::geqrf(to_int(e.m, "m"), to_int(e.n, "n"), e.a, to_int(e.ld, "lda"),
                                   e.tau),
                     "geqrf");
}

template <class T>
void ormqr_one(Op op, const BatchEntry<T>& v, const BatchEntry<T>& c) {
  if (c.m == 0 || c.n == 0 || v.k == 0) return;
  lapack::check_info(lapack::ormqr('L', op == Op::trans ? 'T' : 'N', to_int(c.m, "m"),
                                   to_int(c.n, "nc"), to_int(v.k, "k"), v.a,
                                   to_int(v.ld, "lda"), v.tau, c.a, to_int(c.ld, "ldc")),
                     "ormqr");
}

}  // namespace

template <class T>
void batched_geqrf(detail::ContextImpl&, const MatrixBatch<T>& a) {
  parallel_for(a.count, typical_work(a), [&](std::int64_t i) { geqrf_one(a.at(i)); });
}

template <class T>
void batched_orgqr(detail::ContextImpl&, const MatrixBatch<T>& a) {
  parallel_for(a.count, typical_work(a), [&](std::int64_t i) {
    const BatchEntry<T> e = a.at(i);
    if (e.m == 0 || e.n == 0) return;
    lapack::check_info(lapack::orgqr(to_int(e.m, "m"), to_int(e.n, "n"), to_int(e.k, "k"), e.a,
                                     to_int(e.ld, "lda"), e.tau),
                       "orgqr");
  });
}

template <class T>
void batched_ormqr(detail::ContextImpl&, Op op, const MatrixBatch<T>& v,
                   const MatrixBatch<T>& c) {
  parallel_for(v.count, typical_work(v),
               [&](std::int64_t i) { ormqr_one(op, v.at(i), c.at(i)); });
}

template <class T>
void batched_gels(detail::ContextImpl&, const MatrixBatch<T>& a, const MatrixBatch<T>& b) {
  parallel_for(a.count, typical_work(a), [&](std::int64_t i) {
    BatchEntry<T> e = a.at(i);
    const BatchEntry<T> rhs = b.at(i);
    std::vector<T> tau(static_cast<std::size_t>(std::max<std::int64_t>(e.n, 1)));
    e.tau = tau.data();
    e.k = e.n;
    geqrf_one(e);
    ormqr_one(Op::trans, e, rhs);
    if (e.n == 0 || rhs.n == 0) return;
    lapack::trsm(CblasUpper, CblasNoTrans, CblasNonUnit, to_int(e.n, "n"), to_int(rhs.n, "nrhs"),
                 e.a, to_int(e.ld, "lda"), rhs.a, to_int(rhs.ld, "ldb"));
  });
}

template <class T>
void batched_lstsq(detail::ContextImpl& ctx, const MatrixBatch<T>& a, const MatrixBatch<T>& b) {
  batched_gels(ctx, a, b);  // A's factors are one allowed "unspecified" content
}

GPUQR_INSTANTIATE_BATCHED_KERNELS(float)
GPUQR_INSTANTIATE_BATCHED_KERNELS(double)

}  // namespace gpuqr::kernels::cpu
