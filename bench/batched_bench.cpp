// gpuqr_batched_bench: gpuqr's batched geqrf against cublas<t>geqrfBatched and, for n >= 256,
// cusolverDn<t>geqrf looped over 8 streams, side by side in one run: n = 16 .. 512, square and
// 4:1 tall, about --gib GiB of matrices per batch, FP64 and FP32; then a variable-size batch
// (square, n drawn uniformly from 8..512) against cuSOLVER over streams, and against
// equal-size batches of the same total flops (issue 8's target: within 1.5x of their time):
// at the 256 x 256 and 512 x 512 rates (--gib batches, strided), and as the sum over size
// classes (the var batch's sizes rounded to 16, 24, 32, .. 512, ~1.5x apart) of each class's
// flops timed as an equal-size batch of its representative size.
// One line per case: median ms, GFLOP/s (LAWN 41 geqrf counts), GB/s (the batch read and
// written once), and baseline time / ours. A few matrices of every batch are checked on the
// host (backward error, orthogonality < 30; exit status 1 otherwise).
// Without a GPU (or in a CPU-only build) it says so and exits 0.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <cstdio>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpuqr/accuracy.hpp"
#include "gpuqr/batched.hpp"
#include "gpuqr/context.hpp"

#if defined(GPUQR_BENCH_WITH_CUSOLVER)
#include "bench/batched_baseline.hpp"
#endif

namespace gpuqr::bench {
namespace {

struct Options {
  std::vector<std::int64_t> ns = {16, 32, 64, 128, 256, 512};
  bool square = true, tall = true, fp64 = true, fp32 = true, baseline = true, variable = true;
  bool listed = false;  // equal-size batches through geqrf_batched (pointer arrays)
  double gib = 1.0;
  int repeat = 5;
};

std::vector<std::int64_t> parse_list(const std::string& text) {
  std::vector<std::int64_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(std::stoll(item));
  return out;
}

void usage() {
  std::printf(
      "usage: gpuqr_batched_bench [--n LIST] [--shape square|tall|both]\n"
      "                           [--precision double|single|both] [--gib G] [--repeat N]\n"
      "                           [--no-baseline] [--no-variable] [--only-variable]\n"
      "                           [--listed]\n"
      "  LIST: comma separated n (default 16,32,64,128,256,512); G: GiB per batch (1)\n"
      "  --listed: equal-size batches as pointer arrays (geqrf_batched), not strided\n"
      "  Routing knobs (read once per process): GPUQR_BATCHED_ROUTE=old|blocked,\n"
      "  GPUQR_BATCHED_NB=8|16|32, GPUQR_BATCHED_VGEMM=0|1|2 (trailing update: cuBLAS |\n"
      "  fused kernel for mixed shapes | fused always; unset: 1 in FP32, 0 in FP64),\n"
      "  GPUQR_BATCHED_TALL=0|1|2 (the tall kernel), GPUQR_BATCHED_SMALL_TALL=0|1|3 and\n"
      "  GPUQR_BATCHED_ROWS_FAST=0|1 (the small classes with 32 < m <= 64)\n");
}

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--n") o.ns = parse_list(next());
    else if (arg == "--shape") {
      const std::string s = next();
      o.square = s == "square" || s == "both";
      o.tall = s == "tall" || s == "both";
    } else if (arg == "--precision") {
      const std::string p = next();
      o.fp64 = p == "double" || p == "both";
      o.fp32 = p == "single" || p == "float" || p == "both";
    } else if (arg == "--gib") o.gib = std::stod(next());
    else if (arg == "--repeat") o.repeat = std::max(1, std::stoi(next()));
    else if (arg == "--no-baseline") o.baseline = false;
    else if (arg == "--no-variable") o.variable = false;
    else if (arg == "--only-variable") o.ns.clear();
    else if (arg == "--listed") o.listed = true;
    else if (arg == "--help" || arg == "-h") {
      usage();
      return false;
    } else {
      throw std::runtime_error("unknown option " + arg);
    }
  }
  return true;
}

[[maybe_unused]] double geqrf_flops(double m, double n) {  // LAWN 41, m >= n
  return 2 * m * n * n - 2 * n * n * n / 3 + m * n + n * n + 14 * n / 3;
}

/// Median ms of `repeat` runs (after one warm-up), restore() before each, outside the timing.
template <class Restore, class Call, class Sync>
double time_ms(int repeat, Restore&& restore, Call&& call, Sync&& sync) {
  std::vector<double> t;
  for (int r = 0; r <= repeat; ++r) {
    restore();
    sync();
    const auto start = std::chrono::steady_clock::now();
    call();
    sync();
    const auto stop = std::chrono::steady_clock::now();
    if (r > 0) t.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

#if defined(GPUQR_BENCH_WITH_CUSOLVER)
/// A batch in one device allocation: matrix i at a + offset[i], its tau at tau + tau_off[i].
template <class T>
struct Batch {
  std::vector<std::int64_t> m, n, ld, offset, tau_off;
  T* a = nullptr;
  T* a0 = nullptr;  // the input, restored before each run
  T* tau = nullptr;
  std::size_t elems = 0, tau_elems = 0;
  std::vector<T*> ptrs() const {
    std::vector<T*> p;
    for (auto o : offset) p.push_back(a + o);
    return p;
  }
  std::vector<T*> taus() const {
    std::vector<T*> p;
    for (auto o : tau_off) p.push_back(tau + o);
    return p;
  }
  void restore() const { device_copy(a, a0, elems * sizeof(T)); }
};

template <class T>
Batch<T> make_batch(const std::vector<std::pair<std::int64_t, std::int64_t>>& shapes,
                    std::uint64_t seed) {
  Batch<T> b;
  for (const auto& [m, n] : shapes) {
    b.m.push_back(m);
    b.n.push_back(n);
    b.ld.push_back(m);
    b.offset.push_back(static_cast<std::int64_t>(b.elems));
    b.tau_off.push_back(static_cast<std::int64_t>(b.tau_elems));
    b.elems += static_cast<std::size_t>(m * n);
    b.tau_elems += static_cast<std::size_t>(std::min(m, n));
  }
  b.a = static_cast<T*>(device_alloc(b.elems * sizeof(T)));
  b.a0 = static_cast<T*>(device_alloc(b.elems * sizeof(T)));
  b.tau = static_cast<T*>(device_alloc(std::max<std::size_t>(b.tau_elems, 1) * sizeof(T)));
  device_fill_random(b.a0, b.elems, seed);
  return b;
}

template <class T>
void free_batch(Batch<T>& b) {
  device_free(b.a);
  device_free(b.a0);
  device_free(b.tau);
}

/// Backward error and orthogonality of matrix i of the factored batch, on the host.
template <class T>
double check_one(const Batch<T>& b, std::size_t i) {
  const std::int64_t m = b.m[i], n = b.n[i], k = std::min(m, n);
  device_synchronize();
  const Matrix<T> a = Matrix<T>::copy_of(
      MatrixView<const T>(b.a0 + b.offset[i], m, n, m, MemorySpace::device, 0));
  const Matrix<T> f = Matrix<T>::copy_of(
      MatrixView<const T>(b.a + b.offset[i], m, n, m, MemorySpace::device, 0));
  const Matrix<T> tau = Matrix<T>::copy_of(
      MatrixView<const T>(b.tau + b.tau_off[i], k, 1, k, MemorySpace::device, 0));
  Matrix<T> q = Matrix<T>::copy_of(f.view().block(0, 0, m, k));
  Matrix<T> r(k, n);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t r_i = 0; r_i < k; ++r_i) r(r_i, j) = r_i <= j ? f(r_i, j) : T(0);
  const std::int64_t qm = m, qn = k, qk = k, qld = q.ld();
  T* qp = q.data();
  const T* tp = tau.data();
  orgqr_vbatched<T>(Context::cpu(), &qm, &qn, &qk, &qp, &qld, &tp, 1);
  return std::max(accuracy::qr_backward_error<T>(a.view(), q.view(), r.view()),
                  accuracy::orthogonality<T>(q.view()));
}

struct Line {
  std::string what;
  double ours_ms = 0, base_ms = 0, flops = 0, bytes = 0, check = 0;
  std::string base_name;
};

void print(const Line& l) {
  std::printf("%-26s %10.3f %9.1f %8.1f", l.what.c_str(), l.ours_ms, l.flops / l.ours_ms / 1e6,
              l.bytes / l.ours_ms / 1e6);
  if (l.base_ms > 0) {
    std::printf(" | %-9s %10.3f %9.1f %7.2fx", l.base_name.c_str(), l.base_ms,
                l.flops / l.base_ms / 1e6, l.base_ms / l.ours_ms);
  } else {
    std::printf(" | %-9s %10s %9s %8s", "-", "-", "-", "-");
  }
  std::printf("  check %.2g\n", l.check);
}

/// Median ms of our strided geqrf on `count` random n x n matrices.
template <class T>
double equal_size_ms(const Options& o, const Context& ctx, std::int64_t n, std::int64_t count) {
  Batch<T> b = make_batch<T>(
      std::vector<std::pair<std::int64_t, std::int64_t>>(static_cast<std::size_t>(count), {n, n}),
      4321 + n);
  const double ms = time_ms(
      o.repeat, [&] { b.restore(); },
      [&] { geqrf_strided_batched<T>(ctx, n, n, b.a, n, n * n, b.tau, n, count); },
      [&] { ctx.synchronize(); });
  free_batch(b);
  return ms;
}

/// The comparison for a variable batch of `shapes` factored in `var_ms`: its time over
/// that of equal-size batches of the same flops, at the 256^2 and 512^2 rates (`rates`:
/// GFLOP/s of the --gib batches measured above, timed here if missing), and over the sum of
/// its size classes' times as equal-size batches.
template <class T>
void print_equal_flops(const Options& o, const Context& ctx, const char* prec,
                       const std::vector<std::pair<std::int64_t, std::int64_t>>& shapes,
                       double var_ms, std::map<std::int64_t, double>& rates) {
  double flops = 0;
  for (const auto& [m, n] : shapes) flops += geqrf_flops(double(m), double(n));
  for (const std::int64_t n : {256, 512}) {
    if (rates.count(n) == 0) {
      const double per = double(n * n) * sizeof(T);
      const std::int64_t count = std::max<std::int64_t>(1, std::int64_t(o.gib * (1 << 30) / per));
      rates[n] = geqrf_flops(double(n), double(n)) * count / equal_size_ms<T>(o, ctx, n, count) / 1e6;
    }
    const double same_ms = flops / rates[n] / 1e6;
    std::printf("%s var vs %lld^2: same flops at %.1f GFLOP/s take %.3f ms; var %.3f ms = %.2fx"
                " (target <= 1.5x)\n",
                prec, static_cast<long long>(n), rates[n], same_ms, var_ms, var_ms / same_ms);
  }
  // Size classes: representatives ~1.5x apart; each matrix joins the nearest (log scale).
  const std::vector<std::int64_t> reps = {16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512};
  std::vector<double> class_flops(reps.size(), 0);
  for (const auto& [m, n] : shapes) {
    std::size_t best = 0;
    for (std::size_t c = 1; c < reps.size(); ++c)
      if (std::fabs(std::log(double(n) / double(reps[c]))) <
          std::fabs(std::log(double(n) / double(reps[best]))))
        best = c;
    class_flops[best] += geqrf_flops(double(m), double(n));
  }
  double sum_ms = 0;
  std::string parts;
  for (std::size_t c = 0; c < reps.size(); ++c) {
    if (class_flops[c] == 0) continue;
    const double one = geqrf_flops(double(reps[c]), double(reps[c]));
    const auto count = std::max<std::int64_t>(1, std::llround(class_flops[c] / one));
    const double ms = equal_size_ms<T>(o, ctx, reps[c], count) * class_flops[c] / (one * count);
    sum_ms += ms;
    char buf[64];
    std::snprintf(buf, sizeof(buf), " %lld:%.3f", static_cast<long long>(reps[c]), ms);
    parts += buf;
  }
  std::printf("%s var vs its size classes as equal-size batches: sum %.3f ms; var %.3f ms ="
              " %.2fx  (class n:ms%s)\n",
              prec, sum_ms, var_ms, var_ms / sum_ms, parts.c_str());
}

template <class T>
int run_precision(const Options& o, const Context& ctx, BatchedBaseline* base) {
  const char* prec = sizeof(T) == 8 ? "fp64" : "fp32";
  int failures = 0;
  std::map<std::int64_t, double> square_rates;  // n -> GFLOP/s of the square strided batches
  auto finish = [&](Line& l, Batch<T>& b) {
    for (std::size_t i : {std::size_t(0), b.m.size() / 2, b.m.size() - 1})
      l.check = std::max(l.check, check_one(b, i));
    if (!(l.check < 30)) ++failures;
    print(l);
  };
  for (const std::int64_t n : o.ns) {
    for (const int ratio : {1, 4}) {
      if ((ratio == 1 && !o.square) || (ratio == 4 && !o.tall)) continue;
      const std::int64_t m = ratio * n;
      const double per = double(m * n) * sizeof(T);
      const std::int64_t count = std::max<std::int64_t>(1, std::int64_t(o.gib * (1 << 30) / per));
      Batch<T> b = make_batch<T>(
          std::vector<std::pair<std::int64_t, std::int64_t>>(count, {m, n}), 1234 + n * ratio);
      Line l;
      l.what = std::string(prec) + " " + std::to_string(m) + "x" + std::to_string(n) + " x" +
               std::to_string(count);
      l.flops = geqrf_flops(double(m), double(n)) * count;
      l.bytes = 2.0 * per * count;
      double cublas_ms = 0;  // cublas<t>geqrfBatched at n = 512 (1 run: it is slow)
      const auto a_ptrs = b.ptrs(), tau_ptrs = b.taus();
      auto ours = [&] {
        if (o.listed) geqrf_batched<T>(ctx, m, n, a_ptrs.data(), m, tau_ptrs.data(), count);
        else geqrf_strided_batched<T>(ctx, m, n, b.a, m, m * n, b.tau, n, count);
      };
      if (o.listed) l.what += " ptr";
      l.ours_ms = time_ms(o.repeat, [&] { b.restore(); }, ours, [&] { ctx.synchronize(); });
      if (base != nullptr) {
        const bool streams = n >= 256;
        l.base_name = streams ? "cusolverS" : "cublasB";
        if (!streams) base->prepare_cublas<T>(b.ptrs(), b.taus());
        const auto ptrs = b.ptrs(), taus = b.taus();
        l.base_ms = time_ms(o.repeat, [&] { b.restore(); },
                            [&] {
                              if (streams) base->run_cusolver<T>(b.m, b.n, ptrs, b.ld, taus);
                              else base->run_cublas<T>(m, n, m, count);
                            },
                            [&] { base->synchronize(); });
        if (n == 512 && ratio == 1) {  // cuBLAS batched too at the 10x size
          base->prepare_cublas<T>(b.ptrs(), b.taus());
          cublas_ms = time_ms(1, [&] { b.restore(); },
                              [&] { base->run_cublas<T>(m, n, m, count); },
                              [&] { base->synchronize(); });
        }
      }
      // The check reads our factors: run ours last.
      b.restore();
      ours();
      ctx.synchronize();
      finish(l, b);
      if (ratio == 1 && !o.listed) square_rates[n] = l.flops / l.ours_ms / 1e6;
      if (cublas_ms > 0) {
        Line c = l;
        c.base_name = "cublasB";
        c.base_ms = cublas_ms;
        print(c);
      }
      free_batch(b);
    }
  }
  if (o.variable) {
    std::mt19937_64 rng(77);
    std::uniform_int_distribution<std::int64_t> pick(8, 512);
    std::vector<std::pair<std::int64_t, std::int64_t>> shapes;
    double bytes = 0;
    while (bytes < o.gib * (1 << 30)) {
      const std::int64_t n = pick(rng);
      shapes.push_back({n, n});
      bytes += double(n * n) * sizeof(T);
    }
    Batch<T> b = make_batch<T>(shapes, 999);
    Line l;
    l.what = std::string(prec) + " var 8..512 x" + std::to_string(shapes.size());
    for (const auto& [m, n] : shapes) l.flops += geqrf_flops(double(m), double(n));
    l.bytes = 2 * bytes;
    const auto ptrs = b.ptrs(), taus = b.taus();
    l.ours_ms = time_ms(o.repeat, [&] { b.restore(); },
                        [&] {
                          geqrf_vbatched<T>(ctx, b.m.data(), b.n.data(), ptrs.data(), b.ld.data(),
                                            taus.data(), std::int64_t(shapes.size()));
                        },
                        [&] { ctx.synchronize(); });
    if (base != nullptr) {
      l.base_name = "cusolverS";
      l.base_ms = time_ms(o.repeat, [&] { b.restore(); },
                          [&] { base->run_cusolver<T>(b.m, b.n, ptrs, b.ld, taus); },
                          [&] { base->synchronize(); });
    }
    b.restore();
    geqrf_vbatched<T>(ctx, b.m.data(), b.n.data(), ptrs.data(), b.ld.data(), taus.data(),
                      std::int64_t(shapes.size()));
    ctx.synchronize();
    finish(l, b);
    free_batch(b);
    print_equal_flops<T>(o, ctx, prec, shapes, l.ours_ms, square_rates);
  }
  return failures;
}
#endif  // GPUQR_BENCH_WITH_CUSOLVER

}  // namespace
}  // namespace gpuqr::bench

int main(int argc, char** argv) {
  using namespace gpuqr;
  using namespace gpuqr::bench;
  Options o;
  try {
    if (!parse(argc, argv, o)) return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuqr_batched_bench: %s\n", e.what());
    usage();
    return 2;
  }
#if !defined(GPUQR_BENCH_WITH_CUSOLVER)
  std::printf("gpuqr_batched_bench: this build has no CUDA backend; nothing to time\n");
  return 0;
#else
  if (cuda_devices().empty()) {
    std::printf("gpuqr_batched_bench: no GPU here (%s); nothing to time\n",
                cuda_unavailable_reason().c_str());
    return 0;
  }
  try {
    const Context ctx = Context::cuda(0);
    std::printf("# %s\n# %.2f GiB per batch, median of %d; GB/s = batch read + written once;"
                " ratio = baseline ms / ours\n",
                ctx.describe().c_str(), o.gib, o.repeat);
    std::printf("%-26s %10s %9s %8s | %-9s %10s %9s %8s\n", "case", "ours ms", "GFLOP/s", "GB/s",
                "baseline", "ms", "GFLOP/s", "ratio");
    BatchedBaseline base(0, 8);
    BatchedBaseline* b = o.baseline ? &base : nullptr;
    int failures = 0;
    if (o.fp64) failures += run_precision<double>(o, ctx, b);
    if (o.fp32) failures += run_precision<float>(o, ctx, b);
    if (failures > 0) std::printf("%d case(s) failed the accuracy check\n", failures);
    return failures > 0 ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuqr_batched_bench: %s\n", e.what());
    return 1;
  }
#endif
}
