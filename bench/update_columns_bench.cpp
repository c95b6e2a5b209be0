// gpuqr_update_columns_bench: column updates of UpdatableQR (issue 6) against refactoring the
// updated matrix with cuSOLVER (geqrf + ormqr + trsm: the paper's "TUS"), in one run, at
// Andrew & Dingle's column configurations, FP32 and FP64, with the cost model's predictions
// beside the measurements. One line per case: our update + solve (ms), the model's update
// prediction, the refactor (ms) and the model's refactor prediction, the speedup, the device
// operations our update enqueued, whether the model chose the faster of the two (within 10%),
// and a cross-check of the residual norm against the refactor's. A summary line gives the
// share of right choices. Exits 1 when a cross-check fails, 0 otherwise (also, with a
// message, when no GPU is visible). Options: see usage().
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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
using gpuqr::UpdatableQR;
using gpuqr::UpdateQ;

struct Case {
  bool add;
  std::int64_t m, n, p, k;
};

struct Options {
  std::string only;   // "", "add", "remove", "add-end" (adding at k >= n - 20)
  int precision = 0;  // 0 both, 32, 64
  int repeat = 3;
  bool quick = false;
  bool cpu = false;
  UpdateQ remove_q = UpdateQ::none;
};

void usage() {
  std::puts(
      "gpuqr_update_columns_bench [--only add|remove|add-end] [--precision 32|64] [--repeat N]\n"
      "                           [--quick] [--remove-q none|thin|full] [--cpu]\n"
      "  --quick     a few cases per family (a smoke run)\n"
      "  --remove-q  the Q the remove-columns object keeps (default none: R and d only);\n"
      "              adding columns always keeps the full Q (it needs it)\n"
      "  --cpu       small cases on the CPU backend (no baseline), also without a GPU");
}

/// The paper's column configurations (issue 6), m rows by n columns.
std::vector<Case> paper_cases(const Options& o) {
  std::vector<Case> cases;
  auto positions = [](std::int64_t last) {
    return std::vector<std::int64_t>{0, last / 4, last / 2, 3 * last / 4, last};
  };
  if (o.only != "remove") {
    for (std::int64_t m : {4000, 8000, 12000})
      for (std::int64_t k : positions(3000)) cases.push_back({true, m, 3000, 200, k});
    for (std::int64_t m : {8000, 12000, 16000})
      for (std::int64_t k : positions(6000)) cases.push_back({true, m, 6000, 200, k});
    for (std::int64_t m : {5000, 8000})
      for (std::int64_t p : {100, 500, 1000, 1500}) cases.push_back({true, m, 3000, p, 2980});
  }
  if (o.only != "add") {
    for (std::int64_t m : {6000, 8000, 10000, 12000}) cases.push_back({false, m, 3000, 500, 0});
    for (std::int64_t p : {100, 200, 500})
      for (std::int64_t k : positions(3000 - p)) cases.push_back({false, 6000, 3000, p, k});
  }
  if (o.only == "add-end") {  // the "k near n": the new columns go at k >= n - 20
    std::vector<Case> end;
    for (const Case& c : cases)
      if (c.add && c.k >= c.n - 20) end.push_back(c);
    return end;
  }
  if (o.quick) {
    std::vector<Case> few;
    for (std::size_t i = 0; i < cases.size(); i += 7) few.push_back(cases[i]);
    return few;
  }
  return cases;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// A with the case's columns inserted (u) or removed, on the host (the refactor's input).
template <class T>
Matrix<T> updated_matrix(const Case& c, const Matrix<T>& a, const Matrix<T>& u) {
  const std::int64_t n2 = c.add ? c.n + c.p : c.n - c.p;
  Matrix<T> out(c.m, n2);
  for (std::int64_t j = 0; j < n2; ++j) {
    for (std::int64_t i = 0; i < c.m; ++i) {
      if (c.add) {
        out(i, j) = j < c.k ? a(i, j) : (j < c.k + c.p ? u(i, j - c.k) : a(i, j - c.p));
      } else {
        out(i, j) = a(i, j < c.k ? j : j + c.p);
      }
    }
  }
  return out;
}

struct Timed {
  double ms = 0, residual = 0;
  std::int64_t launches = 0;
};

/// Our update + solve on ctx; the object is rebuilt (untimed) before each repetition and U is
/// in the context's memory (untimed), as the refactor's inputs are.
template <class T>
Timed time_update(const Context& ctx, const Case& c, const Matrix<T>& a, const Matrix<T>& b,
                  const Matrix<T>& u_host, UpdateQ q, int repeat) {
  std::vector<double> times;
  Timed out;
  const gpuqr::MemorySpace space = ctx.is_cuda() ? gpuqr::MemorySpace::device
                                                 : gpuqr::MemorySpace::host;
  const Matrix<T> u = c.add ? Matrix<T>::copy_of(u_host.view(), space, ctx.device()) : Matrix<T>();
  for (int r = 0; r < repeat + 1; ++r) {
    UpdatableQR<T> qr(ctx, a.view(), b.view(), q);
    ctx.synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    const gpuqr::UpdateInfo info = c.add ? qr.add_columns(c.k, u.view()) : qr.remove_columns(c.k, c.p);
    gpuqr::LstsqInfo lst;
    const Matrix<T> x = qr.solve(&lst);  // synchronizes: the residual norm comes back
    const auto t1 = std::chrono::steady_clock::now();
    if (r > 0) times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    out.launches = info.device_launches;
    out.residual = lst.residual_norms.empty() ? 0.0 : lst.residual_norms[0];
  }
  out.ms = median(times);
  return out;
}

struct Tally {
  int cases = 0, right = 0, failures = 0;
};

/// The model chose right when it picked the measured faster one, or one within 10% of it.
[[maybe_unused]] bool choice_right(double pred_update, double pred_refactor, double update, double refactor) {
  const bool pick_update = pred_update <= pred_refactor;
  const double picked = pick_update ? update : refactor;
  return picked <= 1.1 * std::min(update, refactor);
}

template <class T>
void run_case(const Options& o, const Context& ctx, const gpuqr::UpdateCostModel& model,
              const Case& c, const char* prec, [[maybe_unused]] Tally& tally) {
  const std::uint64_t seed = static_cast<std::uint64_t>(c.m * 31 + c.n * 7 + c.p + c.k);
  const Matrix<T> a = gpuqr::testing::random_matrix<T>(c.m, c.n, seed);
  const Matrix<T> b = gpuqr::testing::random_matrix<T>(c.m, 1, seed + 1);
  const Matrix<T> u = c.add ? gpuqr::testing::random_matrix<T>(c.m, c.p, seed + 2) : Matrix<T>();
  const UpdateQ q = c.add ? UpdateQ::full : o.remove_q;
  const bool fp64 = sizeof(T) == 8;
  const gpuqr::UpdatePrediction pred =
      model.predict(c.add ? gpuqr::UpdateOp::add_columns : gpuqr::UpdateOp::remove_columns, c.m,
                    c.n, c.p, c.k, fp64, q, 1);
  std::printf("%-6s %-4s %6lld %6lld %5lld %5lld  ", c.add ? "add" : "remove", prec,
              static_cast<long long>(c.m), static_cast<long long>(c.n),
              static_cast<long long>(c.p), static_cast<long long>(c.k));
  std::fflush(stdout);
  const Timed ours = time_update<T>(ctx, c, a, b, u, q, o.repeat);
  const double pred_ms = pred.update_seconds * 1e3, pred_ref_ms = pred.refactor_seconds * 1e3;
#ifdef GPUQR_BENCH_WITH_CUSOLVER
  if (ctx.is_cuda()) {
    const Matrix<T> a2 = updated_matrix(c, a, u);
    double res_ref = 0;
    const double ref = gpuqr::bench::time_refactor_cusolver<T>(a2.data(), b.data(), a2.rows(),
                                                               a2.cols(), o.repeat, &res_ref);
    const double tol = fp64 ? 1e-7 : 1e-2;
    const bool ok = std::abs(ours.residual - res_ref) <= tol * std::max(res_ref, 1e-30);
    const bool right = choice_right(pred_ms, pred_ref_ms, ours.ms, ref);
    tally.failures += ok ? 0 : 1;
    tally.cases += 1;
    tally.right += right ? 1 : 0;
    std::printf("%9.3f %9.3f %9.3f %9.3f %7.2fx %8lld  %-5s %s\n", ours.ms, pred_ms, ref,
                pred_ref_ms, ref / ours.ms, static_cast<long long>(ours.launches),
                right ? "right" : "WRONG", ok ? "ok" : "RESIDUAL MISMATCH");
    return;
  }
#endif
  std::printf("%9.3f %9.3f %9s %9.3f %8s %8lld  %-5s (no baseline)\n", ours.ms, pred_ms, "-",
              pred_ref_ms, "-", static_cast<long long>(ours.launches), "-");
}

void header() {
  std::printf("%-6s %-4s %6s %6s %5s %5s  %9s %9s %9s %9s %8s %8s  %-5s %s\n", "op", "prec", "m",
              "n", "p", "k", "ours_ms", "pred_ms", "tus_ms", "pred_tus", "speedup", "launches",
              "model", "check");
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
    else if (arg == "--cpu") o.cpu = true;
    else if (arg == "--remove-q") {
      const std::string q = value();
      o.remove_q = q == "full" ? UpdateQ::full : (q == "thin" ? UpdateQ::thin : UpdateQ::none);
    } else {
      usage();
      return arg == "--help" || arg == "-h" ? 0 : 2;
    }
  }
  try {
    Tally tally;
    const bool gpu = !gpuqr::cuda_devices().empty();
    if (!gpu) {
      std::printf("gpuqr_update_columns_bench: no GPU visible (%s); %s\n",
                  gpuqr::cuda_unavailable_reason().c_str(),
                  o.cpu ? "running the CPU cases only" : "nothing to do (try --cpu)");
    } else {
      const Context ctx = Context::cuda(0);
      const auto t0 = std::chrono::steady_clock::now();
      const gpuqr::UpdateCostModel model = gpuqr::UpdateCostModel::calibrate(ctx);
      const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
      std::printf("device %s; cost model '%s' ready in %.3f s (cached: %s)\n",
                  ctx.describe().c_str(), model.device().c_str(), dt.count(),
                  gpuqr::UpdateCostModel::cache_file(model.device()).c_str());
      header();
      for (const Case& c : paper_cases(o)) {
        if (o.precision != 64) run_case<float>(o, ctx, model, c, "fp32", tally);
        if (o.precision != 32) run_case<double>(o, ctx, model, c, "fp64", tally);
      }
      if (tally.cases > 0) {
        std::printf("cost model chose right (faster within 10%%) on %d of %d cases (%.0f%%)\n",
                    tally.right, tally.cases, 100.0 * tally.right / tally.cases);
      }
    }
    if (o.cpu) {
      const Context cpu = Context::cpu();
      const gpuqr::UpdateCostModel model = gpuqr::UpdateCostModel::calibrate(cpu);
      header();
      for (const Case& c : {Case{true, 1200, 400, 40, 200}, Case{true, 1200, 400, 40, 390},
                            Case{false, 1200, 400, 40, 0}, Case{false, 1200, 400, 40, 300}}) {
        if ((o.only == "add" && !c.add) || (o.only == "remove" && c.add)) continue;
        if (o.precision != 64) run_case<float>(o, cpu, model, c, "fp32", tally);
        if (o.precision != 32) run_case<double>(o, cpu, model, c, "fp64", tally);
      }
    }
    return tally.failures == 0 ? 0 : 1;
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "gpuqr_update_columns_bench: error: %s\n", ex.what());
    return 1;
  }
}
