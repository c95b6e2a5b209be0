// gpuqr_tsqr_tree_bench: times the TSQR tree (src/core/tsqr_tree.hpp) on a GPU against
// cuSOLVER geqrf and geqrf+orgqr in the same run, for tall-skinny shapes, FP64 and FP32.
//
//   factor   TsqrTree construction: R with Q implicit (includes the tree's own allocations)
//   form_q   the thin Q from a built tree;  apply_qt: Q_full^T b for one vector
//   geqrf, geqrf+orgqr: cuSOLVER's (bench/baseline_cusolver.cu), only the library calls timed
//   floor    a device-to-device copy of A (reading and writing A once), measured here
// Prints one line per case with the median times in ms and the ratios; checks the backward
// error and orthogonality of small cases on the host (exit status 1 when one fails).
// Without a GPU (or a CPU-only build) it says so and exits 0.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "bench/baseline.hpp"
#include "gpuqr/accuracy.hpp"
#include "gpuqr/context.hpp"
#include "src/core/tsqr_tree.hpp"
#include "tests/support/generators.hpp"

namespace gpuqr::bench {
namespace {

struct Options {
  std::vector<std::int64_t> ms = {1 << 18, 1 << 20, 1 << 22};
  std::vector<std::int64_t> ns = {16, 32, 64, 128, 256, 512, 1024};
  bool fp64 = true, fp32 = true, baseline = true;
  int repeat = 5;
  double max_gb = 24.0;  // skip cases whose A (times 4 copies) needs more device memory
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
      "usage: gpuqr_tsqr_tree_bench [--m LIST] [--n LIST] [--precision double|single|both]\n"
      "                             [--repeat N] [--max-gb G] [--no-baseline]\n"
      "  LIST: comma separated (default m 262144,1048576,4194304; n 16,...,1024)\n"
      "  env GPUQR_TSQR_LEAF_ROWS overrides the leaf height (tuning)\n");
}

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--m") o.ms = parse_list(next());
    else if (arg == "--n") o.ns = parse_list(next());
    else if (arg == "--precision") {
      const std::string p = next();
      o.fp64 = p == "double" || p == "both";
      o.fp32 = p == "single" || p == "float" || p == "both";
      if (!o.fp64 && !o.fp32) throw std::runtime_error("--precision: double, single or both");
    } else if (arg == "--repeat") o.repeat = std::max(1, std::stoi(next()));
    else if (arg == "--max-gb") o.max_gb = std::stod(next());
    else if (arg == "--no-baseline") o.baseline = false;
    else if (arg == "--help" || arg == "-h") {
      usage();
      return false;
    } else {
      throw std::runtime_error("unknown option " + arg);
    }
  }
  return true;
}

/// Median milliseconds of `repeat` runs of call() (one warm-up), each after prepare(), with
/// the context synchronized around the timed call only.
template <class Prepare, class Call>
double time_ms(const Context& ctx, int repeat, Prepare&& prepare, Call&& call) {
  std::vector<double> times;
  for (int r = 0; r <= repeat; ++r) {
    prepare();
    ctx.synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    call();
    ctx.synchronize();
    const auto t1 = std::chrono::steady_clock::now();
    if (r > 0) times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return median(times);
}

template <class T>
void copy_device(const Matrix<T>& from, Matrix<T>& to) {
  detail::copy_2d(to.data(), to.ld(), MemorySpace::device, from.data(), from.ld(),
                  MemorySpace::device, from.rows(), from.cols(), sizeof(T));
}

/// One case; returns false when its accuracy check fails.
template <class T>
bool run_case(const Context& ctx, Baseline* base, std::int64_t m, std::int64_t n, int repeat) {
  const char* prec = sizeof(T) == 8 ? "FP64" : "FP32";
  const Matrix<T> host = testing::random_matrix<T>(m, n, 42 + n);
  const Matrix<T> pristine = Matrix<T>::copy_of(host.view(), MemorySpace::device, ctx.device());
  Matrix<T> a(m, n, MemorySpace::device, ctx.device());
  Matrix<T> q(m, n, MemorySpace::device, ctx.device());
  Matrix<T> b(m, 1, MemorySpace::device, ctx.device());
  const double floor_ms = time_ms(ctx, repeat, [] {}, [&] { copy_device(pristine, q); });
  const double factor_ms =
      time_ms(ctx, repeat, [&] { copy_device(pristine, a); },
              [&] { detail::TsqrTree<T> tree(ctx, a.view()); });
  copy_device(pristine, a);
  detail::TsqrTree<T> tree(ctx, a.view());
  const double formq_ms = time_ms(ctx, repeat, [] {}, [&] { tree.form_q(q.view()); });
  auto restore_b = [&] {
    detail::copy_2d(b.data(), b.ld(), MemorySpace::device, pristine.data(), pristine.ld(),
                    MemorySpace::device, m, 1, sizeof(T));
  };
  const double apply_ms = time_ms(ctx, repeat, restore_b,
                                  [&] { tree.apply_qt(b.view().block(0, 0, m, 1)); });
  // Accuracy of small cases on the host (the checks are O(m n^2) in double).
  std::string check = "-";
  bool ok = true;
  if (m * n * n <= (std::int64_t(1) << 33)) {
    Matrix<T> r(n, n, MemorySpace::device, ctx.device());
    tree.r(r.view());
    tree.form_q(q.view());
    ctx.synchronize();
    const Matrix<T> qh = q.to_host(), rh = r.to_host();
    const double be = accuracy::qr_backward_error<T>(host.view(), qh.view(), rh.view());
    const double orth = accuracy::orthogonality<T>(qh.view());
    ok = be < 30 && orth < 30;
    char text[64];
    std::snprintf(text, sizeof text, "%s be %.2g orth %.2g", ok ? "ok" : "FAIL", be, orth);
    check = text;
  }
  double geqrf_ms = -1, orgqr_ms = -1;
  if (base != nullptr) {
    const TimingPlan plan{1, repeat};
    BaselineRun<T> g = base->run_geqrf(host.view(), plan);
    geqrf_ms = median(g.times_ms);
    BaselineRun<T> o = base->run_orgqr(g.out.view(), g.tau.view(), plan);
    orgqr_ms = median(o.times_ms);
  }
  std::printf("%s %8lld %5lld | factor %9.3f  form_q %9.3f  apply_qt %8.3f | ", prec,
              static_cast<long long>(m), static_cast<long long>(n), factor_ms, formq_ms,
              apply_ms);
  if (base != nullptr) {
    std::printf("geqrf %9.3f  +orgqr %9.3f | R x%6.2f  Q x%6.2f | ", geqrf_ms,
                geqrf_ms + orgqr_ms, geqrf_ms / factor_ms,
                (geqrf_ms + orgqr_ms) / (factor_ms + formq_ms));
  }
  std::printf("floor %7.3f (factor/floor %5.1f) leaves %lld levels %lld | %s\n", floor_ms,
              factor_ms / floor_ms, static_cast<long long>(tree.leaves()),
              static_cast<long long>(tree.levels()), check.c_str());
  std::fflush(stdout);
  return ok;
}

}  // namespace
}  // namespace gpuqr::bench

int main(int argc, char** argv) {
  using namespace gpuqr;
  using namespace gpuqr::bench;
  Options o;
  try {
    if (!parse(argc, argv, o)) return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuqr_tsqr_tree_bench: %s\n", e.what());
    usage();
    return 2;
  }
  if (cuda_devices().empty()) {
    std::printf("gpuqr_tsqr_tree_bench: no GPU here (%s); nothing to time\n",
                cuda_unavailable_reason().c_str());
    return 0;
  }
  try {
    Context ctx = Context::cuda(0);
    ctx.set_check_finite(false);  // time the factorization, not the NaN scan
    std::unique_ptr<Baseline> base;
    if (o.baseline) base = make_cusolver_baseline(0);
    std::printf("gpuqr_tsqr_tree_bench: %s; baseline %s; median of %d; times in ms\n",
                ctx.describe().c_str(), base ? base->describe().c_str() : "none", o.repeat);
    int failures = 0;
    for (int p = 0; p < 2; ++p) {
      if ((p == 0 && !o.fp64) || (p == 1 && !o.fp32)) continue;
      for (std::int64_t m : o.ms)
        for (std::int64_t n : o.ns) {
          const double gb = double(m) * double(n) * (p == 0 ? 8 : 4) * 4 / 1e9;
          if (n > m || gb > o.max_gb) {
            std::printf("%s %8lld %5lld | skipped (needs ~%.1f GB > --max-gb %.1f)\n",
                        p == 0 ? "FP64" : "FP32", static_cast<long long>(m),
                        static_cast<long long>(n), gb, o.max_gb);
            continue;
          }
          const bool ok = p == 0 ? run_case<double>(ctx, base.get(), m, n, o.repeat)
                                 : run_case<float>(ctx, base.get(), m, n, o.repeat);
          failures += ok ? 0 : 1;
        }
    }
    return failures == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuqr_tsqr_tree_bench: %s\n", e.what());
    return 1;
  }
}
