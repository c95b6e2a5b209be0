// gpuqr_tester: times gpuqr's dense QR against LAPACK (CPU) or cuSOLVER (GPU) on the same
// inputs, checks the accuracy of both, prints one aligned line per case and exits with the
// number of failed cases (capped at 255). See bench/README.md.
#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "bench/baseline.hpp"
#include "bench/cases.hpp"
#include "bench/options.hpp"
#include "bench/report.hpp"
#include "gpuqr/context.hpp"
#include "gpuqr/error.hpp"

namespace gpuqr::bench {
namespace {

/// A backend to run: its context, its baseline and its sizes.
struct Target {
  CaseConfig config;
  std::unique_ptr<Baseline> baseline;
  std::vector<Dim> dims;
};

/// Creates the baseline `name` ("auto" picks by backend) for `ctx`. An explicitly asked-for
/// baseline that cannot be made is an error; an automatic one falls back to none; "none" is none.
std::unique_ptr<Baseline> make_baseline(const std::string& name, const Context& ctx) {
  if (name == "none") return nullptr;  // ours alone (profiling runs)
  const std::string pick = name != "auto" ? name : (ctx.is_cuda() ? "cusolver" : "lapack");
  try {
    if (pick == "lapack") return make_lapack_baseline();
    return make_cusolver_baseline(ctx.is_cuda() ? ctx.device() : 0);
  } catch (const std::exception& e) {
    if (name != "auto") throw;
    std::fprintf(stderr, "warning: no %s baseline: %s\n", pick.c_str(), e.what());
    return nullptr;
  }
}

/// The targets of the command line; throws UsageError for an unusable backend.
std::vector<Target> make_targets(const Options& opt) {
  std::vector<Target> targets;
  for (const Backend backend : opt.backends) {
    if (backend == Backend::cuda && cuda_devices().empty()) {
      const std::string reason = cuda_unavailable_reason();
      if (opt.backend_all) {
        std::printf("backend  cuda: skipped (%s)\n", reason.c_str());
        continue;
      }
      throw UsageError("--backend cuda: " + reason);
    }
    Target t;
    t.config.ctx = backend == Backend::cuda ? Context::cuda(0) : Context::cpu();
    t.config.ctx.set_check_finite(opt.check_finite);
    t.config.device = t.config.ctx.describe();
    t.baseline = make_baseline(opt.baseline, t.config.ctx);
    t.config.baseline = t.baseline.get();
    t.config.plan = TimingPlan{opt.warmup, opt.repeat};
    t.config.check = opt.check;
    t.config.tolerance = opt.tolerance;
    t.config.seed = opt.seed;
    t.config.nrhs = opt.nrhs;
    t.config.host_data = opt.host_data;
    if (opt.graph == "on" || opt.graph == "off") t.config.ctx.set_cuda_graphs(opt.graph == "on");
    t.config.graph_both = opt.graph == "both";
    t.dims = opt.dims.empty() ? default_dims(backend) : opt.dims;
    std::printf("backend  %s: %s\n", to_string(backend), t.config.device.c_str());
    std::printf("baseline %s: %s\n", t.baseline ? t.baseline->name().c_str() : "none",
                t.baseline ? t.baseline->describe().c_str() : "-");
    if (backend == Backend::cuda) {
      const char* env = std::getenv("GPUQR_GRAPH");
      std::printf("graphs   %s (--graph %s, GPUQR_GRAPH=%s)%s\n",
                  t.config.graph_both ? "off and on (graph_ms)"
                                      : (t.config.ctx.cuda_graphs() ? "on" : "off"),
                  opt.graph.c_str(), env != nullptr ? env : "unset",
                  opt.host_data ? "; host data never replays graphs" : "");
    }
    targets.push_back(std::move(t));
  }
  return targets;
}

int run(const Options& opt) {
  std::printf("gpuqr_tester: repeat %d (median), warmup %d, seed %llu, pass below %g%s\n",
              opt.repeat, opt.warmup, static_cast<unsigned long long>(opt.seed), opt.tolerance,
              opt.check_finite ? "" : ", finite check off");
  std::vector<Target> targets = make_targets(opt);

  std::ofstream json;
  if (!opt.json_path.empty()) {
    json.open(opt.json_path, std::ios::out | std::ios::trunc);
    if (!json) throw UsageError("--json: cannot write '" + opt.json_path + "'");
  }

  int passed = 0, failed = 0, skipped = 0, unchecked = 0;
  std::printf("\n");
  print_header(stdout);
  for (const Target& t : targets) {
    for (const char precision : opt.precisions) {
      for (const Operation op : opt.ops) {
        for (const Dim& dim : t.dims) {
          const Row row = precision == 'd' ? run_case<double>(op, dim, t.config)
                                           : run_case<float>(op, dim, t.config);
          print_row(stdout, row);
          if (json.is_open()) json << to_json(row) << '\n' << std::flush;
          if (row.status == "pass") {
            ++passed;
          } else if (row.status == "skip") {
            ++skipped;
          } else if (row.status == "nocheck") {
            ++unchecked;
          } else {
            ++failed;
          }
        }
      }
    }
  }
  std::printf("\n");
  if (skipped > 0) std::printf("%d skipped (gels needs m >= n)\n", skipped);
  if (unchecked > 0) std::printf("%d not checked (--no-check)\n", unchecked);
  std::printf("%d passed, %d failed\n", passed, failed);
  return std::min(failed, 255);
}

}  // namespace
}  // namespace gpuqr::bench

int main(int argc, char** argv) {
  using namespace gpuqr::bench;
  Options opt;
  try {
    opt = parse_options(argc, argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "gpuqr_tester: %s\n\n%s", e.what(), usage_text().c_str());
    return 2;
  }
  if (opt.help) {
    std::printf("%s", usage_text().c_str());
    return 0;
  }
  try {
    return run(opt);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "gpuqr_tester: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuqr_tester: %s\n", e.what());
    return 2;
  }
}
