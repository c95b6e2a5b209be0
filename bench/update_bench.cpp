// gpuqr_update_bench: QR updating (UpdatableQR, issue 5) against refactoring the updated matrix
// with cuSOLVER (geqrf + ormqr + trsm: the paper's "TUS"), in one run, at Andrew & Dingle's
// configurations, FP32 and FP64. One line per case: our update + solve (ms), the refactor
// (ms), their ratio, the device operations our update enqueued, a cross-check of the
// residual norm against the refactor's, and our time split into the update and the solve
// (from a second run of each repetition, with a wait between the two).
// Exits 1 when a cross-check fails, 0 otherwise (also, with a message, when no GPU is
// visible). Options: see usage().
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "gpuqr/update.hpp"
#include "tests/support/generators.hpp"
#ifdef GPUQR_BENCH_WITH_CUSOLVER
#include "bench/update_tus.hpp"
#endif

namespace {

using gpuqr::Context;
using gpuqr::Matrix;
using gpuqr::MatrixView;
using gpuqr::UpdatableQR;
using gpuqr::UpdateQ;

struct Case {
  bool add;
  std::int64_t m, n, p;
};

struct Options {
  std::string only;  // "", "add", "remove"
  int precision = 0; // 0 both, 32, 64
  int repeat = 3;
  bool quick = false;
  bool cpu = false;
  std::int64_t pmax = -1;  // --pmax: only cases with p <= pmax
  std::int64_t case_m = 0, case_n = 0, case_p = 0;  // --case m,n,p: that one added-rows case
  UpdateQ add_q = UpdateQ::none;
};

void usage() {
  std::puts(
      "gpuqr_update_bench [--only add|remove] [--precision 32|64] [--repeat N] [--quick]\n"
      "                   [--add-q none|thin|full] [--cpu] [--pmax P] [--case M,N,P]\n"
      "  --quick   one case per family (a smoke run)\n"
      "  --add-q   the Q the add-rows object keeps (default none: R and d only)\n"
      "  --cpu     also our CPU update on small cases (m = 2000, n = 500)\n"
      "  --pmax    only the cases with at most P rows added or removed\n"
      "  --case    only adding P rows to an M x N problem (any shape, e.g. for a profiler)");
}

std::vector<Case> paper_cases(const Options& o) {
  std::vector<Case> cases;
  if (o.case_m > 0) return {Case{true, o.case_m, o.case_n, o.case_p}};
  if (o.only != "remove") {
    for (std::int64_t m = 8000; m <= 14000; m += 2000) cases.push_back({true, m, 3000, 500});
    for (std::int64_t p : {200, 1500})
      for (std::int64_t n = 1000; n <= 7000; n += 2000) cases.push_back({true, 8000, n, p});
    for (std::int64_t p : {1, 4, 16}) cases.push_back({true, 8000, 3000, p});
    cases.push_back({true, 14000, 3000, 16});  // the few-rows kernel's cost against m
  }
  if (o.only != "add") {
    for (std::int64_t p : {20, 100})
      for (std::int64_t n = 6000; n <= 10000; n += 2000) cases.push_back({false, 12000, n, p});
    for (std::int64_t p : {20, 50, 100})
      for (std::int64_t m = 8000; m <= 16000; m += 4000) cases.push_back({false, m, 6000, p});
  }
  if (o.pmax >= 0) {
    std::vector<Case> kept;
    for (const Case& c : cases)
      if (c.p <= o.pmax) kept.push_back(c);
    cases = kept;
  }
  if (o.quick) {
    std::vector<Case> few;
    for (const Case& c : cases)
      if (few.empty() || few.back().add != c.add) few.push_back(c);
    return few;
  }
  return cases;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class T>
Matrix<T> rows_removed(const Matrix<T>& a, std::int64_t k, std::int64_t p) {
  Matrix<T> out(a.rows() - p, a.cols());
  for (std::int64_t j = 0; j < a.cols(); ++j)
    for (std::int64_t i = 0; i < out.rows(); ++i) out(i, j) = a(i < k ? i : i + p, j);
  return out;
}

template <class T>
Matrix<T> rows_inserted(const Matrix<T>& a, std::int64_t k, const Matrix<T>& u) {
  Matrix<T> out(a.rows() + u.rows(), a.cols());
  for (std::int64_t j = 0; j < a.cols(); ++j) {
    for (std::int64_t i = 0; i < k; ++i) out(i, j) = a(i, j);
    for (std::int64_t i = 0; i < u.rows(); ++i) out(k + i, j) = u(i, j);
    for (std::int64_t i = k; i < a.rows(); ++i) out(u.rows() + i, j) = a(i, j);
  }
  return out;
}

struct Timed {
  double ms = 0, add_ms = 0, solve_ms = 0, residual = 0;  // ms: no wait between the two
  std::int64_t launches = 0;
};

/// Our update + solve on `ctx`: the object is rebuilt (untimed) before each repetition. U and
/// e are copied into the context's memory first (untimed), as the refactor's inputs are.
/// Each repetition runs twice: update then solve as a caller would (no wait between them: the
/// time reported), then with a synchronization between them for the split (update, solve).
template <class T>
Timed time_update(const Context& ctx, const Case& c, const Matrix<T>& a, const Matrix<T>& b,
                  const Matrix<T>& u_host, const Matrix<T>& e_host, std::int64_t k, UpdateQ q,
                  int repeat) {
  std::vector<double> times, adds, solves;
  Timed out;
  const bool profile = std::getenv("GPUQR_BENCH_PROFILE") != nullptr;
  const gpuqr::MemorySpace space = ctx.is_cuda() ? gpuqr::MemorySpace::device
                                                 : gpuqr::MemorySpace::host;
  const Matrix<T> u = Matrix<T>::copy_of(u_host.view(), space, ctx.device());
  const Matrix<T> e = Matrix<T>::copy_of(e_host.view(), space, ctx.device());
  for (int r = 0; r < repeat + 1; ++r) {
    for (const bool split : {false, true}) {
      UpdatableQR<T> qr(ctx, a.view(), b.view(), q);
      ctx.synchronize();
#ifdef GPUQR_BENCH_WITH_CUSOLVER
      if (profile && r == repeat && !split) gpuqr::bench::profiler_range(true);
#endif
      const auto t0 = std::chrono::steady_clock::now();
      const gpuqr::UpdateInfo info =
          c.add ? qr.add_rows(k, u.view(), e.view()) : qr.remove_rows(k, c.p);
      if (split) ctx.synchronize();
      const auto tm = std::chrono::steady_clock::now();
      gpuqr::LstsqInfo lst;
      const Matrix<T> x = qr.solve(&lst);  // synchronizes: the residual norm comes back
      const auto t1 = std::chrono::steady_clock::now();
#ifdef GPUQR_BENCH_WITH_CUSOLVER
      if (profile && r == repeat && !split) gpuqr::bench::profiler_range(false);
#endif
      (void)profile;
      if (r > 0 && !split)
        times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      if (r > 0 && split) {
        adds.push_back(std::chrono::duration<double, std::milli>(tm - t0).count());
        solves.push_back(std::chrono::duration<double, std::milli>(t1 - tm).count());
      }
      out.launches = info.device_launches;
      out.residual = lst.residual_norms.empty() ? 0.0 : lst.residual_norms[0];
    }
  }
  out.ms = median(times);
  out.add_ms = median(adds);
  out.solve_ms = median(solves);
  return out;
}

template <class T>
int run_case(const Options& o, const Case& c, bool gpu, const char* prec) {
  const std::uint64_t seed = static_cast<std::uint64_t>(c.m * 31 + c.n * 7 + c.p);
  const Matrix<T> a = gpuqr::testing::random_matrix<T>(c.m, c.n, seed);
  const Matrix<T> b = gpuqr::testing::random_matrix<T>(c.m, 1, seed + 1);
  const std::int64_t k = c.add ? c.m / 2 : (c.m - c.p) / 2;
  Matrix<T> u, e, a2, b2;
  if (c.add) {
    u = gpuqr::testing::random_matrix<T>(c.p, c.n, seed + 2);
    e = gpuqr::testing::random_matrix<T>(c.p, 1, seed + 3);
    a2 = rows_inserted(a, k, u);
    b2 = rows_inserted(b, k, e);
  } else {
    a2 = rows_removed(a, k, c.p);
    b2 = rows_removed(b, k, c.p);
  }
  const UpdateQ q = c.add ? o.add_q : UpdateQ::full;
  std::printf("%-6s %-4s %6lld %6lld %5lld  ", c.add ? "add" : "remove", prec,
              static_cast<long long>(c.m), static_cast<long long>(c.n),
              static_cast<long long>(c.p));
  std::fflush(stdout);
  int failures = 0;
  if (gpu) {
    const Timed ours = time_update<T>(Context::cuda(0), c, a, b, u, e, k, q, o.repeat);
#ifdef GPUQR_BENCH_WITH_CUSOLVER
    double res_ref = 0;
    const double ref = gpuqr::bench::time_refactor_cusolver<T>(a2.data(), b2.data(), a2.rows(),
                                                               a2.cols(), o.repeat, &res_ref);
    const double tol = sizeof(T) == 4 ? 1e-2 : 1e-7;
    const bool ok = std::abs(ours.residual - res_ref) <= tol * std::max(res_ref, 1e-30);
    failures += ok ? 0 : 1;
    std::printf("%10.3f %10.3f %7.2fx %8lld  %-5s %8.3f %8.3f", ours.ms, ref, ref / ours.ms,
                static_cast<long long>(ours.launches), ok ? "ok" : "RESIDUAL MISMATCH", ours.add_ms,
                ours.solve_ms);
#else
    std::printf("%10.3f %10s %8s %8lld  (no cuSOLVER baseline)", ours.ms, "-", "-",
                static_cast<long long>(ours.launches));
#endif
  }
  std::printf("\n");
  return failures;
}

template <class T>
int run_cpu_small(const Options& o, const char* prec) {
  int failures = 0;
  for (const Case& c : {Case{true, 2000, 500, 50}, Case{true, 2000, 500, 4}, Case{false, 2000, 500, 20}}) {
    if ((o.only == "add" && !c.add) || (o.only == "remove" && c.add)) continue;
    const Matrix<T> a = gpuqr::testing::random_matrix<T>(c.m, c.n, 11);
    const Matrix<T> b = gpuqr::testing::random_matrix<T>(c.m, 1, 12);
    const Matrix<T> u = gpuqr::testing::random_matrix<T>(c.p, c.n, 13);
    const Matrix<T> e = gpuqr::testing::random_matrix<T>(c.p, 1, 14);
    const Timed t = time_update<T>(Context::cpu(), c, a, b, u, e, c.m / 2,
                                   c.add ? o.add_q : UpdateQ::full, o.repeat);
    std::printf("cpu %-6s %-4s %6lld %6lld %5lld  %10.3f ms  (residual %.6g)\n",
                c.add ? "add" : "remove", prec, static_cast<long long>(c.m),
                static_cast<long long>(c.n), static_cast<long long>(c.p), t.ms, t.residual);
  }
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) { usage(); std::exit(2); }
      return argv[++i];
    };
    if (arg == "--only") o.only = value();
    else if (arg == "--precision") o.precision = std::atoi(value().c_str());
    else if (arg == "--repeat") o.repeat = std::max(1, std::atoi(value().c_str()));
    else if (arg == "--quick") o.quick = true;
    else if (arg == "--pmax") o.pmax = std::atoll(value().c_str());
    else if (arg == "--cpu") o.cpu = true;
    else if (arg == "--case") {
      long long m = 0, n = 0, p = 0;
      if (std::sscanf(value().c_str(), "%lld,%lld,%lld", &m, &n, &p) != 3 || m < 1 || n < 1 ||
          p < 1) {
        usage();
        return 2;
      }
      o.case_m = m, o.case_n = n, o.case_p = p;
    } else if (arg == "--add-q") {
      const std::string q = value();
      o.add_q = q == "full" ? UpdateQ::full : (q == "thin" ? UpdateQ::thin : UpdateQ::none);
    } else {
      usage();
      return arg == "--help" || arg == "-h" ? 0 : 2;
    }
  }
  try {
    int failures = 0;
    const bool gpu = !gpuqr::cuda_devices().empty();
    if (!gpu) {
      std::printf("gpuqr_update_bench: no GPU visible (%s); %s\n",
                  gpuqr::cuda_unavailable_reason().c_str(),
                  o.cpu ? "running the CPU cases only" : "nothing to do (try --cpu)");
    } else {
      std::printf("%-6s %-4s %6s %6s %5s  %10s %10s %8s %8s  %-5s %8s %8s\n", "op", "prec", "m",
                  "n", "p", "ours_ms", "tus_ms", "speedup", "launches", "check", "update", "solve");
      for (const Case& c : paper_cases(o)) {
        if (o.precision != 64) failures += run_case<float>(o, c, gpu, "fp32");
        if (o.precision != 32) failures += run_case<double>(o, c, gpu, "fp64");
      }
    }
    if (o.cpu) {
      if (o.precision != 64) failures += run_cpu_small<float>(o, "fp32");
      if (o.precision != 32) failures += run_cpu_small<double>(o, "fp64");
    }
    return failures == 0 ? 0 : 1;
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "gpuqr_update_bench: error: %s\n", ex.what());
    return 1;
  }
}
