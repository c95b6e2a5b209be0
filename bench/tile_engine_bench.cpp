// gpuqr_tile_engine_bench: the tile engine (src/cuda/tile_engine.cu, R and the engine's own
// reflectors, not LAPACK's form) against cublas<t>geqrfBatched on the same batches: n x n and
// 4n x n matrices, about --gib GiB per batch, FP64 and FP32. Host planning (the schedulers'
// dry run and every launch's plan) is inside the timing: it is part of the engine's cost.
// After timing, Q is applied back on the device and ||A - QR|| / (||A|| m eps) of the first
// matrix is printed as "check".
//
//   gpuqr_tile_engine_bench [--n 64,128,256,512] [--gib 0.5] [--repeat 3] [--bundle 4]
//                           [--apply-cols 2] [--no-pipeline] [--lstsq] [--nrhs 1]
//
// --lstsq: batched least squares instead (gpuqr::lstsq_vbatched, n x n and 4n x n, nrhs
// right-hand sides): the engine route (GPUQR_BATCHED_ENGINE=1), the existing route (=0) and
// cublas<t>gelsBatched, each from fresh copies of A and B; ratios = their ms / the engine's;
// "opt" is LAPACK's least-squares optimality ratio of matrix 0's solution (< 30 is good).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <cstdlib>

#include "gpuqr/accuracy.hpp"
#include "gpuqr/batched.hpp"
#include "gpuqr/context.hpp"
#include "gpuqr/matrix.hpp"
#include "src/core/tile_engine.hpp"
#if defined(GPUQR_BENCH_WITH_CUSOLVER)
#include "bench/batched_baseline.hpp"
#endif

namespace gpuqr::bench {
namespace {

struct Options {
  std::vector<std::int64_t> ns{64, 128, 256, 512};
  double gib = 0.5;
  int repeat = 3;
  detail::TileSchedulerOptions tile;
  bool lstsq = false;
  std::int64_t nrhs = 1;
};

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--n") {
      o.ns.clear();
      std::string text = next();
      for (std::size_t at = 0; at <= text.size();) {
        const std::size_t end = std::min(text.find(',', at), text.size());
        o.ns.push_back(std::stoll(text.substr(at, end - at)));
        at = end + 1;
      }
    } else if (arg == "--gib") o.gib = std::stod(next());
    else if (arg == "--repeat") o.repeat = std::max(1, std::stoi(next()));
    else if (arg == "--bundle") o.tile.bundle = std::stoi(next());
    else if (arg == "--apply-cols") o.tile.apply_cols = std::stoi(next());
    else if (arg == "--no-pipeline") o.tile.pipeline = false;
    else if (arg == "--lstsq") o.lstsq = true;
    else if (arg == "--nrhs") o.nrhs = std::max<std::int64_t>(1, std::stoll(next()));
    else {
      std::printf("usage: gpuqr_tile_engine_bench [--n LIST] [--gib G] [--repeat N] [--bundle B]"
                  " [--apply-cols C] [--no-pipeline] [--lstsq] [--nrhs K]\n");
      return false;
    }
  }
  return true;
}

#if defined(GPUQR_BENCH_WITH_CUSOLVER)
double geqrf_flops(double m, double n) {  // LAWN 41, m >= n
  return 2 * m * n * n - 2 * n * n * n / 3 + m * n + n * n + 14 * n / 3;
}

template <class F>
double median_ms(int repeat, F&& run) {
  std::vector<double> t;
  for (int r = 0; r <= repeat; ++r) {
    const double ms = run();
    if (r > 0) t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

template <class T>
void run_case(const Options& o, const Context& ctx, BatchedBaseline& base, std::int64_t m,
              std::int64_t n) {
  const std::size_t per = static_cast<std::size_t>(m * n);
  const auto count = static_cast<std::int64_t>(
      std::max<double>(1, o.gib * 1073741824.0 / (double(per) * sizeof(T))));
  const std::size_t elems = per * static_cast<std::size_t>(count);
  T* a = static_cast<T*>(device_alloc(elems * sizeof(T)));
  T* a0 = static_cast<T*>(device_alloc(elems * sizeof(T)));
  T* tau = static_cast<T*>(device_alloc(static_cast<std::size_t>(count * n) * sizeof(T)));
  device_fill_random(a0, elems, 4242 + m + n);
  std::vector<detail::TileMatrix<T>> mats;
  std::vector<T*> ptrs, taus;
  for (std::int64_t i = 0; i < count; ++i) {
    mats.push_back({a + i * static_cast<std::int64_t>(per), m, static_cast<std::int32_t>(m),
                    static_cast<std::int32_t>(n)});
    ptrs.push_back(a + i * static_cast<std::int64_t>(per));
    taus.push_back(tau + i * n);
  }
  detail::TileFactors<T> factors;
  std::int64_t launches = 0;
  auto engine = [&] {
    device_copy(a, a0, elems * sizeof(T));
    device_synchronize();
    const auto start = std::chrono::steady_clock::now();
    std::vector<detail::TileScheduler> s;
    s.reserve(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i)
      s.push_back(detail::TileScheduler::dense(static_cast<std::int32_t>(i), m, n, o.tile));
    launches = kernels::cuda::tile_qr<T>(ctx.impl(), mats, s, factors, {});
    ctx.synchronize();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
  };
  const double ours = median_ms(o.repeat, engine);
  base.prepare_cublas<T>(ptrs, taus);
  const double theirs = median_ms(n >= 512 ? 1 : o.repeat, [&] {
    device_copy(a, a0, elems * sizeof(T));
    device_synchronize();
    const auto start = std::chrono::steady_clock::now();
    base.run_cublas<T>(m, n, m, count);
    base.synchronize();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
  });
  // Check: the engine again, then Q applied back; matrix 0 against its input.
  engine();
  kernels::cuda::tile_multiply_by_q<T>(ctx.impl(), mats, factors, o.tile.apply_cols);
  ctx.synchronize();
  const Matrix<T> in = Matrix<T>::copy_of(MatrixView<const T>(a0, m, n, m, MemorySpace::device, 0));
  const Matrix<T> qr = Matrix<T>::copy_of(MatrixView<const T>(a, m, n, m, MemorySpace::device, 0));
  double diff = 0, norm = 0;
  for (std::int64_t c = 0; c < n; ++c)
    for (std::int64_t r = 0; r < m; ++r) {
      diff += std::pow(double(qr(r, c)) - double(in(r, c)), 2);
      norm += double(in(r, c)) * double(in(r, c));
    }
  const double check = std::sqrt(diff / norm) / (double(m) * accuracy::eps<T>());
  const double flops = geqrf_flops(double(m), double(n)) * double(count);
  char what[64];
  std::snprintf(what, sizeof what, "%s %lldx%lld x%lld", sizeof(T) == 8 ? "fp64" : "fp32",
                static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(count));
  std::printf("%-26s %6lld %10.3f %9.1f | %10.3f %9.1f %7.2fx  check %.2g\n", what,
              static_cast<long long>(launches), ours, flops / ours / 1e6, theirs,
              flops / theirs / 1e6, theirs / ours, check);
  device_free(a);
  device_free(a0);
  device_free(tau);
}

/// Batched least squares: the engine route, the existing route (both lstsq_vbatched, by the
/// GPUQR_BATCHED_ENGINE knob) and cublas<t>gelsBatched on the same batch.
template <class T>
void run_lstsq(const Options& o, const Context& ctx, BatchedBaseline& base, std::int64_t m,
               std::int64_t n) {
  const std::int64_t nrhs = o.nrhs;
  const std::size_t per_a = static_cast<std::size_t>(m * n), per_b = static_cast<std::size_t>(m * nrhs);
  const auto count = static_cast<std::int64_t>(
      std::max<double>(1, o.gib * 1073741824.0 / (double(per_a) * sizeof(T))));
  const std::size_t ea = per_a * static_cast<std::size_t>(count), eb = per_b * static_cast<std::size_t>(count);
  T* a = static_cast<T*>(device_alloc(ea * sizeof(T)));
  T* a0 = static_cast<T*>(device_alloc(ea * sizeof(T)));
  T* b = static_cast<T*>(device_alloc(eb * sizeof(T)));
  T* b0 = static_cast<T*>(device_alloc(eb * sizeof(T)));
  device_fill_random(a0, ea, 777 + m + n);
  device_fill_random(b0, eb, 999 + m + n);
  std::vector<T*> pa, pb;
  for (std::int64_t i = 0; i < count; ++i) {
    pa.push_back(a + i * static_cast<std::int64_t>(per_a));
    pb.push_back(b + i * static_cast<std::int64_t>(per_b));
  }
  const std::vector<std::int64_t> ms(static_cast<std::size_t>(count), m),
      ns(static_cast<std::size_t>(count), n), ks(static_cast<std::size_t>(count), nrhs);
  auto fresh = [&] {
    device_copy(a, a0, ea * sizeof(T));
    device_copy(b, b0, eb * sizeof(T));
    device_synchronize();
  };
  auto optimality = [&] {  // matrix 0's solution against its fresh A and B
    const Matrix<T> a_in = Matrix<T>::copy_of(MatrixView<const T>(a0, m, n, m, MemorySpace::device, 0));
    const Matrix<T> b_in = Matrix<T>::copy_of(MatrixView<const T>(b0, m, nrhs, m, MemorySpace::device, 0));
    const Matrix<T> x = Matrix<T>::copy_of(MatrixView<const T>(b, n, nrhs, m, MemorySpace::device, 0));
    return accuracy::lstsq_optimality_ratio<T>(a_in.view(), x.view(), b_in.view());
  };
  auto route = [&](const char* knob) {
    setenv("GPUQR_BATCHED_ENGINE", knob, 1);
    return [&ctx, &fresh, &ms, &ns, &ks, &pa, &pb, count] {
      fresh();
      const auto start = std::chrono::steady_clock::now();
      lstsq_vbatched<T>(ctx, ms.data(), ns.data(), ks.data(), pa.data(), ms.data(), pb.data(),
                        ms.data(), count);
      ctx.synchronize();
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
          .count();
    };
  };
  const double engine = median_ms(o.repeat, route("1"));
  const double engine_opt = optimality();
  const double existing = median_ms(o.repeat, route("0"));
  const double existing_opt = optimality();
  unsetenv("GPUQR_BATCHED_ENGINE");
  base.prepare_cublas<T>(pa, pb);
  const double cublas = median_ms(n >= 512 ? 1 : o.repeat, [&] {
    fresh();
    const auto start = std::chrono::steady_clock::now();
    base.run_cublas_gels<T>(m, n, nrhs, m, m, count);
    base.synchronize();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
  });
  const double cublas_opt = optimality();
  char what[64];
  std::snprintf(what, sizeof what, "%s %lldx%lld x%lld", sizeof(T) == 8 ? "fp64" : "fp32",
                static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(count));
  std::printf("%-26s %10.3f %10.3f %10.3f | %7.2fx %7.2fx | opt %.2g %.2g %.2g\n", what, engine,
              existing, cublas, existing / engine, cublas / engine, engine_opt, existing_opt,
              cublas_opt);
  device_free(a);
  device_free(a0);
  device_free(b);
  device_free(b0);
}
#endif

}  // namespace
}  // namespace gpuqr::bench

int main(int argc, char** argv) {
  using namespace gpuqr;
  using namespace gpuqr::bench;
  Options o;
  try {
    if (!parse(argc, argv, o)) return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuqr_tile_engine_bench: %s\n", e.what());
    return 2;
  }
#if !defined(GPUQR_BENCH_WITH_CUSOLVER)
  std::printf("gpuqr_tile_engine_bench: this build has no CUDA backend; nothing to time\n");
  return 0;
#else
  if (cuda_devices().empty()) {
    std::printf("gpuqr_tile_engine_bench: no GPU here (%s); nothing to time\n",
                cuda_unavailable_reason().c_str());
    return 0;
  }
  try {
    const Context ctx = Context::cuda(0);
    BatchedBaseline base(0, 1);
    std::printf("# %s\n# %.2f GiB per batch, median of %d; bundle %d, apply_cols %d, %s;"
                " ratio = cublasB ms / engine ms\n",
                ctx.describe().c_str(), o.gib, o.repeat, o.tile.bundle, o.tile.apply_cols,
                o.tile.pipeline ? "pipelined" : "not pipelined");
    if (o.lstsq) {
      std::printf("# least squares, nrhs %lld: ratios = route ms / engine ms; opt: engine,"
                  " existing, cublas\n", static_cast<long long>(o.nrhs));
      std::printf("%-26s %10s %10s %10s | %8s %8s\n", "case", "engine ms", "exist ms",
                  "cublas ms", "exist/e", "cublas/e");
      for (const bool dbl : {true, false})
        for (const std::int64_t n : o.ns)
          for (const std::int64_t m : {n, 4 * n}) {
            if (dbl) run_lstsq<double>(o, ctx, base, m, n);
            else run_lstsq<float>(o, ctx, base, m, n);
          }
      return 0;
    }
    std::printf("%-26s %6s %10s %9s | %10s %9s %8s\n", "case", "launch", "engine ms", "GFLOP/s",
                "cublasB ms", "GFLOP/s", "ratio");
    for (const bool dbl : {true, false})
      for (const std::int64_t n : o.ns)
        for (const std::int64_t m : {n, 4 * n}) {
          if (dbl) run_case<double>(o, ctx, base, m, n);
          else run_case<float>(o, ctx, base, m, n);
        }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuqr_tile_engine_bench: %s\n", e.what());
    return 1;
  }
#endif
}
