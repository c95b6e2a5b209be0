// The CPU baseline: LAPACK (LAPACKE over OpenBLAS) called directly on host copies of the
// input, with the optimal workspace queried and allocated before timing.
#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "bench/baseline.hpp"
#include "bench/host_lapack.hpp"
#include "bench/timing.hpp"

namespace gpuqr::bench {

double median(std::vector<double> times) {
  if (times.empty()) return 0.0;
  std::sort(times.begin(), times.end());
  const std::size_t mid = times.size() / 2;
  return times.size() % 2 == 1 ? times[mid] : 0.5 * (times[mid - 1] + times[mid]);
}

namespace {

using lapack::as_int;
using lapack::check_info;

/// Copies host `src` into host `dst` (same shape).
template <class T>
void copy_host(MatrixView<const T> src, Matrix<T>& dst) {
  for (std::int64_t j = 0; j < src.cols(); ++j) {
    std::memcpy(dst.data() + j * dst.ld(), src.data() + j * src.ld(),
                static_cast<std::size_t>(src.rows()) * sizeof(T));
  }
}

/// A host copy of a host view.
template <class T>
Matrix<T> host_copy(MatrixView<const T> src) {
  Matrix<T> out(src.rows(), src.cols());
  copy_host(src, out);
  return out;
}

void no_sync() {}

template <class T>
BaselineRun<T> lapack_geqrf(MatrixView<const T> a, const TimingPlan& plan) {
  const lapack_int m = as_int(a.rows()), n = as_int(a.cols());
  BaselineRun<T> run;
  run.out = Matrix<T>(m, n);
  run.tau = Matrix<T>(std::min(m, n), 1);
  T query = 0;
  check_info(lapack::geqrf(m, n, run.out.data(), as_int(run.out.ld()), run.tau.data(), &query, -1),
             "geqrf (query)");
  std::vector<T> work = lapack::workspace_from_query(query);
  run.times_ms = time_repetitions(
      plan, [&] { copy_host(a, run.out); },
      [&] {
        check_info(lapack::geqrf(m, n, run.out.data(), as_int(run.out.ld()), run.tau.data(),
                                 work.data(), as_int(work.size())),
                   "geqrf");
      },
      no_sync);
  return run;
}

template <class T>
BaselineRun<T> lapack_orgqr(MatrixView<const T> refl, MatrixView<const T> tau,
                            const TimingPlan& plan) {
  const lapack_int m = as_int(refl.rows()), k = as_int(refl.cols());
  BaselineRun<T> run;
  run.out = Matrix<T>(m, k);
  const Matrix<T> tau_copy = host_copy(tau);
  T query = 0;
  check_info(lapack::orgqr(m, k, k, run.out.data(), as_int(run.out.ld()), tau_copy.data(), &query,
                           -1),
             "orgqr (query)");
  std::vector<T> work = lapack::workspace_from_query(query);
  run.times_ms = time_repetitions(
      plan, [&] { copy_host(refl, run.out); },
      [&] {
        check_info(lapack::orgqr(m, k, k, run.out.data(), as_int(run.out.ld()), tau_copy.data(),
                                 work.data(), as_int(work.size())),
                   "orgqr");
      },
      no_sync);
  return run;
}

template <class T>
BaselineRun<T> lapack_ormqr(MatrixView<const T> refl, MatrixView<const T> tau,
                            MatrixView<const T> c, const TimingPlan& plan) {
  const lapack_int m = as_int(c.rows()), nrhs = as_int(c.cols()), k = as_int(refl.cols());
  BaselineRun<T> run;
  run.out = Matrix<T>(m, nrhs);
  const Matrix<T> a = host_copy(refl);
  const Matrix<T> tau_copy = host_copy(tau);
  T query = 0;
  check_info(lapack::ormqr('L', 'T', m, nrhs, k, a.data(), as_int(a.ld()), tau_copy.data(),
                           run.out.data(), as_int(run.out.ld()), &query, -1),
             "ormqr (query)");
  std::vector<T> work = lapack::workspace_from_query(query);
  run.times_ms = time_repetitions(
      plan, [&] { copy_host(c, run.out); },
      [&] {
        check_info(lapack::ormqr('L', 'T', m, nrhs, k, a.data(), as_int(a.ld()), tau_copy.data(),
                                 run.out.data(), as_int(run.out.ld()), work.data(),
                                 as_int(work.size())),
                   "ormqr");
      },
      no_sync);
  return run;
}

template <class T>
BaselineRun<T> lapack_gels(MatrixView<const T> a, MatrixView<const T> b,
                           const TimingPlan& plan) {
  const lapack_int m = as_int(a.rows()), n = as_int(a.cols()), nrhs = as_int(b.cols());
  if (m < n) throw std::runtime_error("gels baseline: m < n is not timed");
  BaselineRun<T> run;
  Matrix<T> work_a(m, n);
  run.out = Matrix<T>(m, nrhs);
  T query = 0;
  check_info(lapack::gels(m, n, nrhs, work_a.data(), as_int(work_a.ld()), run.out.data(),
                          as_int(run.out.ld()), &query, -1),
             "gels (query)");
  std::vector<T> work = lapack::workspace_from_query(query);
  run.times_ms = time_repetitions(
      plan,
      [&] {
        copy_host(a, work_a);
        copy_host(b, run.out);
      },
      [&] {
        // info > 0 (an exactly zero diagonal of R) cannot happen for the random inputs.
        check_info(lapack::gels(m, n, nrhs, work_a.data(), as_int(work_a.ld()), run.out.data(),
                                as_int(run.out.ld()), work.data(), as_int(work.size())),
                   "gels");
      },
      no_sync);
  return run;
}

/// LAPACK on the CPU.
class LapackBaseline final : public Baseline {
 public:
  std::string name() const override { return "lapack"; }
  std::string describe() const override {
    const char* config = openblas_get_config();
    return std::string("LAPACKE over OpenBLAS (") + (config ? config : "?") + ", " +
           std::to_string(openblas_get_num_threads()) + " threads)";
  }

  BaselineRun<double> run_geqrf(MatrixView<const double> a, const TimingPlan& p) override {
    return lapack_geqrf(a, p);
  }
  BaselineRun<float> run_geqrf(MatrixView<const float> a, const TimingPlan& p) override {
    return lapack_geqrf(a, p);
  }
  BaselineRun<double> run_orgqr(MatrixView<const double> r, MatrixView<const double> tau,
                                const TimingPlan& p) override {
    return lapack_orgqr(r, tau, p);
  }
  BaselineRun<float> run_orgqr(MatrixView<const float> r, MatrixView<const float> tau,
                               const TimingPlan& p) override {
    return lapack_orgqr(r, tau, p);
  }
  BaselineRun<double> run_ormqr(MatrixView<const double> r, MatrixView<const double> tau,
                                MatrixView<const double> c, const TimingPlan& p) override {
    return lapack_ormqr(r, tau, c, p);
  }
  BaselineRun<float> run_ormqr(MatrixView<const float> r, MatrixView<const float> tau,
                               MatrixView<const float> c, const TimingPlan& p) override {
    return lapack_ormqr(r, tau, c, p);
  }
  BaselineRun<double> run_gels(MatrixView<const double> a, MatrixView<const double> b,
                               const TimingPlan& p) override {
    return lapack_gels(a, b, p);
  }
  BaselineRun<float> run_gels(MatrixView<const float> a, MatrixView<const float> b,
                              const TimingPlan& p) override {
    return lapack_gels(a, b, p);
  }
};

}  // namespace

std::unique_ptr<Baseline> make_lapack_baseline() { return std::make_unique<LapackBaseline>(); }

#ifndef GPUQR_BENCH_WITH_CUSOLVER
bool cusolver_baseline_compiled() { return false; }

std::unique_ptr<Baseline> make_cusolver_baseline(int) {
  throw std::runtime_error("the cuSOLVER baseline needs a CUDA build of gpuqr_tester");
}
#endif

}  // namespace gpuqr::bench
