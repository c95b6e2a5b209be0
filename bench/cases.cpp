// One tester case (see cases.hpp). gpuqr's side keeps its data in the context's memory
// (device memory for CUDA): the pristine input is copied there once, and each repetition
// restores the working copy from it before the clock starts.
#include "bench/cases.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <type_traits>

#include "bench/checks.hpp"
#include "bench/flops.hpp"
#include "bench/timing.hpp"
#include "gpuqr/dense.hpp"
#include "tests/support/generators.hpp"

namespace gpuqr::bench {

double operation_flops(Operation op, std::int64_t m, std::int64_t n, std::int64_t nrhs) {
  const double dm = static_cast<double>(m), dn = static_cast<double>(n);
  const double dk = static_cast<double>(std::min(m, n)), dr = static_cast<double>(nrhs);
  switch (op) {
    case Operation::geqrf: return flops_geqrf(dm, dn);
    case Operation::orgqr: return flops_orgqr(dm, dk, dk);
    case Operation::ormqr: return flops_ormqr_left(dm, dr, dk);
    case Operation::gels: return flops_gels(dm, dn, dr);
  }
  return 0.0;
}

namespace {

/// gpuqr's outputs, copied back to the host after the last repetition.
template <class T>
struct OursRun {
  std::vector<double> times_ms;
  Matrix<T> out;
  Matrix<T> tau;
};

/// Whether gpuqr's matrices stay on the host (--host-data); set by run_case for the case.
bool g_host_data = false;

/// Where gpuqr's matrices live: the context's memory, or the host with --host-data.
MemorySpace space_of(const Context& ctx) {
  return ctx.is_cuda() && !g_host_data ? MemorySpace::device : MemorySpace::host;
}

/// A copy of host `src` in the context's memory.
template <class T>
Matrix<T> to_context(const Context& ctx, MatrixView<const T> src) {
  return Matrix<T>::copy_of(src, space_of(ctx), ctx.device());
}

/// Uninitialized rows x cols storage in the context's memory.
template <class T>
Matrix<T> context_matrix(const Context& ctx, std::int64_t rows, std::int64_t cols) {
  return Matrix<T>(rows, cols, space_of(ctx), ctx.device());
}

/// dst := src, same shape, any memory spaces (synchronous).
template <class T>
void restore(const Matrix<T>& src, Matrix<T>& dst) {
  detail::copy_2d(dst.data(), dst.ld(), dst.space(), src.data(), src.ld(), src.space(),
                  src.rows(), src.cols(), sizeof(T));
}

/// A vector view of the k x 1 matrix `tau`.
template <class T>
VectorView<T> as_vector(Matrix<T>& tau) {
  return VectorView<T>(tau.data(), tau.rows(), tau.space(), tau.device());
}
template <class T>
VectorView<const T> as_vector(const Matrix<T>& tau) {
  return VectorView<const T>(tau.data(), tau.rows(), tau.space(), tau.device());
}

template <class T>
OursRun<T> ours_geqrf(const Context& ctx, const Matrix<T>& a, const TimingPlan& plan) {
  const Matrix<T> pristine = to_context<T>(ctx, a.view());
  Matrix<T> work = context_matrix<T>(ctx, a.rows(), a.cols());
  Matrix<T> tau = context_matrix<T>(ctx, std::min(a.rows(), a.cols()), 1);
  OursRun<T> run;
  run.times_ms = time_repetitions(
      plan, [&] { restore(pristine, work); },
      [&] { geqrf<T>(ctx, work.view(), as_vector(tau)); }, [&] { ctx.synchronize(); });
  run.out = work.to_host();
  run.tau = tau.to_host();
  return run;
}

template <class T>
OursRun<T> ours_orgqr(const Context& ctx, MatrixView<const T> reflectors,
                      const Matrix<T>& tau_host, const TimingPlan& plan) {
  const Matrix<T> pristine = to_context<T>(ctx, reflectors);
  const Matrix<T> tau = to_context<T>(ctx, tau_host.view());
  Matrix<T> work = context_matrix<T>(ctx, reflectors.rows(), reflectors.cols());
  OursRun<T> run;
  run.times_ms = time_repetitions(
      plan, [&] { restore(pristine, work); },
      [&] { orgqr<T>(ctx, reflectors.cols(), work.view(), as_vector(tau)); },
      [&] { ctx.synchronize(); });
  run.out = work.to_host();
  return run;
}

template <class T>
OursRun<T> ours_ormqr(const Context& ctx, MatrixView<const T> reflectors,
                      const Matrix<T>& tau_host, const Matrix<T>& c, const TimingPlan& plan) {
  const Matrix<T> a = to_context<T>(ctx, reflectors);
  const Matrix<T> tau = to_context<T>(ctx, tau_host.view());
  const Matrix<T> pristine = to_context<T>(ctx, c.view());
  Matrix<T> work = context_matrix<T>(ctx, c.rows(), c.cols());
  OursRun<T> run;
  run.times_ms = time_repetitions(
      plan, [&] { restore(pristine, work); },
      [&] { ormqr<T>(ctx, Side::left, Op::trans, a.view(), as_vector(tau), work.view()); },
      [&] { ctx.synchronize(); });
  run.out = work.to_host();
  return run;
}

template <class T>
OursRun<T> ours_gels(const Context& ctx, const Matrix<T>& a, const Matrix<T>& b,
                     const TimingPlan& plan) {
  const Matrix<T> pristine_a = to_context<T>(ctx, a.view());
  const Matrix<T> pristine_b = to_context<T>(ctx, b.view());
  Matrix<T> work_a = context_matrix<T>(ctx, a.rows(), a.cols());
  Matrix<T> work_b = context_matrix<T>(ctx, b.rows(), b.cols());
  OursRun<T> run;
  std::int64_t singular_at = -1;
  run.times_ms = time_repetitions(
      plan,
      [&] {
        restore(pristine_a, work_a);
        restore(pristine_b, work_b);
      },
      [&] { singular_at = gels<T>(ctx, work_a.view(), work_b.view()).singular_at; },
      [&] { ctx.synchronize(); });
  if (singular_at >= 0) {
    throw std::runtime_error("gels reported R(" + std::to_string(singular_at) + ", " +
                             std::to_string(singular_at) + ") == 0 for a random input");
  }
  run.out = work_b.to_host();
  return run;
}

/// The inputs of one case, on the host: A, and where needed LAPACK's factorization of A
/// (orgqr, ormqr) and a right-hand side block B / C (gels, ormqr).
template <class T>
struct Inputs {
  Matrix<T> a;
  Matrix<T> factors;
  Matrix<T> tau;
  Matrix<T> b;
  MatrixView<const T> reflectors() const {
    return factors.view().block(0, 0, factors.rows(), std::min(factors.rows(), factors.cols()));
  }
};

template <class T>
Inputs<T> make_inputs(Operation op, Dim dim, const CaseConfig& config) {
  const std::uint64_t seed = config.seed * 1000003ull + static_cast<std::uint64_t>(dim.m) * 7919ull +
                             static_cast<std::uint64_t>(dim.n);
  Inputs<T> in;
  in.a = testing::random_matrix<T>(dim.m, dim.n, seed);
  if (op == Operation::orgqr || op == Operation::ormqr) {
    auto [factors, tau] = reference_geqrf<T>(in.a.view());
    in.factors = std::move(factors);
    in.tau = std::move(tau);
  }
  if (op == Operation::gels || op == Operation::ormqr) {
    in.b = testing::random_matrix<T>(dim.m, config.nrhs, seed + 17);
  }
  return in;
}

/// Accuracy of one side's outputs.
template <class T>
Accuracy check_outputs(Operation op, const Inputs<T>& in, const Matrix<T>& out,
                       const Matrix<T>& tau) {
  switch (op) {
    case Operation::geqrf: return check_geqrf<T>(in.a.view(), out.view(), tau.view());
    case Operation::orgqr: return check_orgqr<T>(in.a.view(), in.factors.view(), out.view());
    case Operation::ormqr:
      return check_ormqr<T>(in.reflectors(), in.tau.view(), in.b.view(), out.view());
    case Operation::gels: return check_gels<T>(in.a.view(), in.b.view(), out.view());
  }
  return {};
}

template <class T>
OursRun<T> run_ours(Operation op, const Inputs<T>& in, const CaseConfig& config) {
  switch (op) {
    case Operation::geqrf: return ours_geqrf<T>(config.ctx, in.a, config.plan);
    case Operation::orgqr: return ours_orgqr<T>(config.ctx, in.reflectors(), in.tau, config.plan);
    case Operation::ormqr:
      return ours_ormqr<T>(config.ctx, in.reflectors(), in.tau, in.b, config.plan);
    case Operation::gels: return ours_gels<T>(config.ctx, in.a, in.b, config.plan);
  }
  return {};
}

template <class T>
BaselineRun<T> run_baseline(Operation op, const Inputs<T>& in, const CaseConfig& config) {
  Baseline& base = *config.baseline;
  switch (op) {
    case Operation::geqrf: return base.run_geqrf(in.a.view(), config.plan);
    case Operation::orgqr: return base.run_orgqr(in.reflectors(), in.tau.view(), config.plan);
    case Operation::ormqr:
      return base.run_ormqr(in.reflectors(), in.tau.view(), in.b.view(), config.plan);
    case Operation::gels: return base.run_gels(in.a.view(), in.b.view(), config.plan);
  }
  return {};
}

/// `config` for gpuqr's side with graphs `on` (CUDA): with graphs, a warmup of at least 2,
/// so that the timed calls are replays (the first call sizes the workspaces and runs
/// directly, the second is captured).
CaseConfig with_graphs(const CaseConfig& config, bool on) {
  CaseConfig mine = config;
  mine.ctx.set_cuda_graphs(on);
  if (on && !config.host_data) mine.plan.warmup = std::max(mine.plan.warmup, 2);
  return mine;
}

/// GFLOP/s of `flops` done in `ms` milliseconds.
double gflops(double flops, double ms) { return ms > 0.0 ? flops / (ms * 1e6) : kMissing; }

}  // namespace

template <class T>
Row run_case(Operation op, Dim dim, const CaseConfig& config) {
  Row row;
  row.op = to_string(op);
  row.m = dim.m;
  row.n = dim.n;
  row.nrhs = (op == Operation::gels || op == Operation::ormqr) ? config.nrhs : 0;
  row.precision = std::is_same_v<T, double> ? "d" : "s";
  row.backend = gpuqr::to_string(config.ctx.backend());
  row.device = config.device;
  if (config.baseline != nullptr) row.baseline = config.baseline->name();
  if (op == Operation::gels && dim.m < dim.n) {
    row.status = "skip";
    return row;
  }
  const double flops = operation_flops(op, dim.m, dim.n, row.nrhs);
  const char* label = row.op.c_str();
  Inputs<T> in = make_inputs<T>(op, dim, config);

  // gpuqr (with --graph both: graphs off, then on)
  OursRun<T> ours;
  OursRun<T> ours_graph;
  const bool cuda = config.ctx.is_cuda();
  const bool both = cuda && config.graph_both;
  try {
    g_host_data = config.host_data;
    config.ctx.reset_staging_stats();
    const bool graphs = cuda && !both && config.ctx.cuda_graphs() && !config.host_data;
    if (cuda) row.graph = graphs ? "on" : "off";
    ours = run_ours<T>(op, in, with_graphs(config, graphs));
    row.time_ms = median(ours.times_ms);
    if (both && !config.host_data) {
      ours_graph = run_ours<T>(op, in, with_graphs(config, true));
      row.graph_time_ms = median(ours_graph.times_ms);
    }
    if (config.host_data && config.ctx.is_cuda()) {
      const int calls = config.plan.warmup + config.plan.repeat;
      row.transfer_ms = 1e3 * config.ctx.staging_stats().seconds / calls;
    }
    row.gflops = gflops(flops, row.time_ms);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: gpuqr %s %lldx%lld (%s): %s\n", label,
                 static_cast<long long>(dim.m), static_cast<long long>(dim.n),
                 row.precision.c_str(), e.what());
    row.status = "error";
  }

  // the baseline, on the same input
  BaselineRun<T> base;
  bool have_base = false;
  if (config.baseline != nullptr) {
    try {
      base = run_baseline<T>(op, in, config);
      row.baseline_time_ms = median(base.times_ms);
      row.baseline_gflops = gflops(flops, row.baseline_time_ms);
      if (!std::isnan(row.time_ms)) row.speedup = row.baseline_time_ms / row.time_ms;
      if (!std::isnan(row.graph_time_ms)) {
        row.graph_speedup = row.baseline_time_ms / row.graph_time_ms;
      }
      have_base = true;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "warning: baseline %s %s %lldx%lld (%s): %s\n",
                   config.baseline->name().c_str(), label, static_cast<long long>(dim.m),
                   static_cast<long long>(dim.n), row.precision.c_str(), e.what());
    }
  }
  if (row.status == "error") return row;
  if (!config.check) {
    row.status = "nocheck";
    return row;
  }

  try {
    const Accuracy acc = check_outputs<T>(op, in, ours.out, ours.tau);
    row.error = acc.error;
    row.orth = acc.orth;
    if (!std::isnan(row.graph_time_ms)) {
      // The graph run's outputs pass the same bounds, or the case fails (reported apart).
      const Accuracy gacc = check_outputs<T>(op, in, ours_graph.out, ours_graph.tau);
      const bool has_orth = op == Operation::geqrf || op == Operation::orgqr;
      if (!(gacc.error < config.tolerance) || (has_orth && !(gacc.orth < config.tolerance))) {
        std::fprintf(stderr, "error: %s %lldx%lld (%s) with graphs: error %g, orth %g\n", label,
                     static_cast<long long>(dim.m), static_cast<long long>(dim.n),
                     row.precision.c_str(), gacc.error, gacc.orth);
        row.error = std::max(row.error, gacc.error);
        row.orth = has_orth ? std::max(row.orth, gacc.orth) : row.orth;
      }
    }
    if (have_base) {
      const Accuracy bacc = check_outputs<T>(op, in, base.out, base.tau);
      row.baseline_error = bacc.error;
      row.baseline_orth = bacc.orth;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: check of %s %lldx%lld (%s): %s\n", label,
                 static_cast<long long>(dim.m), static_cast<long long>(dim.n),
                 row.precision.c_str(), e.what());
    row.status = "error";
    return row;
  }
  const bool has_orth = op == Operation::geqrf || op == Operation::orgqr;
  // NaN compares false, so a NaN ratio fails.
  const bool ok = row.error < config.tolerance && (!has_orth || row.orth < config.tolerance);
  row.status = ok ? "pass" : "FAIL";
  return row;
}

template Row run_case<float>(Operation, Dim, const CaseConfig&);
template Row run_case<double>(Operation, Dim, const CaseConfig&);

}  // namespace gpuqr::bench
