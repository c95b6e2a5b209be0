// gpuqr_wy_bench: QR with the full Q formed (Kerr, Campbell & Richards' W/Y form, geqrf_wy)
// against cuSOLVER geqrf + orgqr in the same run, on square n x n random matrices (entries
// uniform in (-1, 1); for a square matrix orgqr's Q is the full Q), and against our own
// geqrf + orgqr. Times: medians of --repeat runs after a warm-up, the input restored outside
// the timing; ours by the host clock around the call and a synchronize, cuSOLVER's by CUDA
// events around its calls (see bench/baseline.hpp). ratio = cuSOLVER / geqrf_wy. The checks
// are the backward error ||A - Q R|| / (||A|| n eps) and ||I - Q^T Q|| / (n eps) of
// geqrf_wy's Q and R.
//
//   gpuqr_wy_bench [--n 1024,2048,4096] [--precision double|single|both] [--repeat 3]
#include <algorithm>
#include <cstdio>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/baseline.hpp"
#include "bench/timing.hpp"
#include "gpuqr/accuracy.hpp"
#include "gpuqr/dense.hpp"
#include "tests/support/generators.hpp"

namespace {

using namespace gpuqr;
using gpuqr::bench::median;
using gpuqr::bench::TimingPlan;

struct Options {
  std::vector<std::int64_t> n{1024, 2048, 4096};
  bool dbl = true, sgl = true;
  int repeat = 3;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--n") {
      o.n.clear();
      std::stringstream ss(next());
      for (std::string item; std::getline(ss, item, ',');) o.n.push_back(std::stoll(item));
    } else if (arg == "--precision") {
      const std::string p = next();
      o.dbl = p == "double" || p == "both";
      o.sgl = p == "single" || p == "float" || p == "both";
      if (!o.dbl && !o.sgl) throw std::runtime_error("--precision: double, single or both");
    } else if (arg == "--repeat") {
      o.repeat = std::max(1, std::stoi(next()));
    } else {
      throw std::runtime_error("unknown argument " + arg +
                               " (usage: gpuqr_wy_bench [--n LIST] [--precision P] [--repeat R])");
    }
  }
  return o;
}

template <class T>
void run(const Context& ctx, gpuqr::bench::Baseline* base, std::int64_t n, int repeat) {
  const TimingPlan plan{1, repeat};
  const Matrix<T> a = gpuqr::testing::random_matrix<T>(n, n, 42);
  Matrix<T> a0 = Matrix<T>::copy_of(a.view(), MemorySpace::device, ctx.device());
  Matrix<T> f(n, n, MemorySpace::device, ctx.device());
  Matrix<T> q(n, n, MemorySpace::device, ctx.device());
  Matrix<T> tau(n, 1, MemorySpace::device, ctx.device());
  VectorView<T> tv(tau.data(), n, tau.space(), tau.device());
  auto restore = [&] {
    detail::copy_2d(f.data(), f.ld(), f.space(), a0.data(), a0.ld(), a0.space(), n, n, sizeof(T));
  };
  auto sync = [&] { ctx.synchronize(); };
  const double wy = median(gpuqr::bench::time_repetitions(
      plan, restore, [&] { geqrf_wy<T>(ctx, f.view(), tv, q.view()); }, sync));
  // Checks of the last run's Q and R.
  const Matrix<T> fh = Matrix<T>::copy_of(f.view(), MemorySpace::host, 0);
  const Matrix<T> qh = Matrix<T>::copy_of(q.view(), MemorySpace::host, 0);
  Matrix<T> r(n, n);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) r(i, j) = i <= j ? fh(i, j) : T(0);
  const double err = accuracy::qr_backward_error<T>(a.view(), qh.view(), r.view());
  const double orth = accuracy::orthogonality<T>(qh.view());
  // Ours, geqrf then orgqr (Q in place of the reflectors).
  const double split = median(gpuqr::bench::time_repetitions(
      plan, restore,
      [&] {
        geqrf<T>(ctx, f.view(), tv);
        orgqr<T>(ctx, n, f.view(), VectorView<const T>(tv));
      },
      sync));
  double base_ms = 0;
  if (base != nullptr) {
    const auto g = base->run_geqrf(a.view(), plan);
    const auto o = base->run_orgqr(g.out.view(), g.tau.view(), plan);
    base_ms = median(g.times_ms) + median(o.times_ms);
  }
  std::printf("%-4s %6lld  %10.3f  %10.3f  %10.3f  %7.2fx  %7.2fx  %8.3f  %8.3f\n",
              sizeof(T) == 8 ? "fp64" : "fp32", static_cast<long long>(n), wy, split, base_ms,
              base_ms > 0 ? base_ms / wy : 0.0, split / wy, err, orth);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    const Context ctx = Context::best();
    if (!ctx.is_cuda()) {
      std::printf("gpuqr_wy_bench: no CUDA device here; nothing to time\n");
      return 0;
    }
    std::unique_ptr<gpuqr::bench::Baseline> base;
    if (gpuqr::bench::cusolver_baseline_compiled())
      base = gpuqr::bench::make_cusolver_baseline(ctx.device());
    std::printf(
        "# %s\n# geqrf_wy (full Q, W/Y form) against cuSOLVER geqrf + orgqr (square: full Q)"
        " and our geqrf + orgqr, median of %d; ratio = cuSOLVER / geqrf_wy\n",
        ctx.describe().c_str(), o.repeat);
    std::printf(
        "prec      n  wy_ms       ours_geqrf+orgqr  cusolver  ratio    split/wy  err       orth\n");
    for (const std::int64_t n : o.n) {
      if (o.dbl) run<double>(ctx, base.get(), n, o.repeat);
      if (o.sgl) run<float>(ctx, base.get(), n, o.repeat);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuqr_wy_bench: %s\n", e.what());
    return 1;
  }
}
