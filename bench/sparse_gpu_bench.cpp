// gpuqr_sparse_gpu_bench: gpuqr's sparse multifrontal QR on the GPU against the same on the
// CPU and against SuiteSparseQR, in one run, on the same matrix (bench/README.md).
//
// Per problem and mode, three sides, all with COLAMD and the default rank-detection
// tolerance (SuiteSparseQR's 20 (m + n) eps max_j ||A(:, j)||):
//   gpu   SparseQR<double> with SparseQROptions::context = Context::cuda() (skipped, with a
//         note, when gpuqr::cuda_devices() is empty); threads = 0, so that a CPU fallback
//         runs on every core;
//   cpu   SparseQR<double> on Context::cpu() with threads = 0 (every hardware thread);
//   spqr  SuiteSparseQR on the CPU with SPQR_nthreads = 0 (its default, which only matters
//         in a TBB build of SPQR) and OpenBLAS's default thread count (OPENBLAS_NUM_THREADS
//         when set, else every core); the header says which, whether TBB is loaded, and
//         which BLAS and LAPACK libraries are (a reference libblas.so.3 would make it slow).
// Modes (--mode kept|qless|both, default both):
//   kept   Householder vectors kept: SparseQR(A, options); SuiteSparseQR_factorize.
//   qless  R only, one right-hand side b carried through the fronts: SparseQR(A, b, options)
//          with keep_householder = false; SuiteSparseQR(COLAMD, tol, econ = 0, A, b, &C, &R,
//          &E), the Q-less [C, R, E] = qr(A, b).
// Time: the whole constructor / factorization call (analysis, ordering, numeric factorization
// and, on the GPU, the host <-> device transfers), best of --repeat N (default 2) after
// --warmup N (default 1) untimed runs. Each side frees its previous result before the next
// run (outside the timing), so one factorization is held at a time; the CHOLMOD copies of A
// and b are made outside the timing.
//
// Columns (JSON keys where they differ; --json FILE writes one line per problem and mode):
//   problem, mode, m, n, nnz(A) (nnz_a)
//   flops      SparseAnalysis::flops of gpuqr's analysis (COLAMD); every GF (GFLOP/s) uses it
//              (spqr_flops: SuiteSparseQR's own count)
//   intens     intensity = flops / front bytes, front bytes = sum over fronts of
//              rows x cols x 8 (each front touched once: twice SparseAnalysis::intensity,
//              which counts a read and a write) (intensity, front_bytes)
//   gpu_s gpu_GF cpu_s spqr_s   seconds (best) and GFLOP/s (gpu_s, gpu_gflops, cpu_s, ...)
//   x_gpu x_cpu  spqr_s / gpu_s and spqr_s / cpu_s: > 1 when gpuqr is faster
//              (speedup_gpu_spqr, speedup_cpu_spqr)
//   nnzR rank  ours (from the GPU run when it ran, else the CPU run; JSON has both) and
//              SuiteSparseQR's (nnzR_spqr, rk_spqr): in kept mode SuiteSparseQR's nnz(R) is its
//              analysis' bound (printed "<=N", spqr_nnz_r_is_bound), in qless mode the entries
//              of the R it returns
//   ran_on     factor_stats().ran_on of the GPU run, with "*" when it fell back to the CPU
//              (the reason is printed below the row; JSON ran_on, fallback, batched_fronts,
//              dense_fronts, stages, peak_stage_bytes)
//   res        ||A x - b|| / ||b|| of our solution (the GPU's, else the CPU's: accuracy_of)
//              for b = A * ones + 1e-4 ||A * ones|| / sqrt(m) * u, u uniform in (-1, 1); x from
//              solve(b) (kept) or solve_carried() (qless)
//   rdiff      (||A x - b|| - ||A x_spqr - b||) / ||A x_spqr - b|| (residual_rel_diff), x_spqr
//              from SuiteSparseQR_qmult + SuiteSparseQR_solve (kept) or from C, R and E
//              (qless); both are basic solutions. Not computed when m < n. For a square
//              nonsingular A both residuals are rounding errors and rdiff means little.
// Below a GPU row: factor_stats()' parts (JSON gpu_*_s) and stored_bytes() of the result
// (gpu_stored_bytes: R, C and, in kept mode, the reflectors).
// The summary gives, per mode, the median x_gpu (and x_cpu) over the problems with intensity
// > 100 and over those with flops > 1e12.
//
//   gpuqr_sparse_gpu_bench [--mode kept|qless|both] [--repeat N] [--warmup N]
//                          [--gen LIST|default] [--matrices FILES_OR_DIRS]
//                          [--sides gpu,cpu,spqr] [--json FILE] [--analyze-only]
// --gen: grid3d:NX, grid2d:N (sparse_problems.hpp); default: the set of sparse_problems.cpp.
// --matrices: Matrix Market files or directories (their *.mtx), comma separated; complex and
// empty matrices are skipped with a note.
// --sides: which sides run (default all three), e.g. to fit a large problem in a time limit.
// --analyze-only: build each problem and print its analysis only (flops, front bytes, the
// largest front, the analysis' sequential working memory): to size problems before a run.
#include <link.h>  // dl_iterate_phdr: is TBB loaded?

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench/report.hpp"
#include "bench/sparse_problems.hpp"
#include "bench/sparse_sides.hpp"
#include "bench/spqr_support.hpp"
#include "gpuqr/context.hpp"
#include "gpuqr/error.hpp"
#include "gpuqr/io.hpp"
#include "gpuqr/sparse_qr.hpp"

namespace gpuqr::bench {
namespace {

struct Options {
  std::vector<Mode> modes{Mode::kept, Mode::qless};
  int repeat = 2;
  int warmup = 1;
  std::vector<GridSpec> gen;
  std::vector<std::string> matrices;  ///< Matrix Market files (directories expanded)
  bool run_gpu = true;
  bool run_cpu = true;
  bool run_spqr = true;
  std::string json;
  bool analyze_only = false;
};

const char* const kUsage =
    "usage: gpuqr_sparse_gpu_bench [--mode kept|qless|both] [--repeat N] [--warmup N]\n"
    "         [--gen LIST|default] [--matrices FILES_OR_DIRS] [--sides gpu,cpu,spqr]\n"
    "         [--json FILE] [--analyze-only]\n"
    "  --gen: grid3d:NX and grid2d:N, comma separated; default = %s\n";

/// The options that take a value.
bool takes_value(const std::string& arg) {
  for (const char* name :
       {"--mode", "--repeat", "--warmup", "--gen", "--matrices", "--sides", "--json"}) {
    if (arg == name) return true;
  }
  return false;
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--analyze-only") {
      o.analyze_only = true;
      continue;
    }
    GPUQR_CHECK_ARG(takes_value(arg), "unknown option " + arg);
    GPUQR_CHECK_ARG(i + 1 < argc, arg + " needs a value");
    const std::string value = argv[++i];
    if (arg == "--mode") {
      GPUQR_CHECK_ARG(value == "kept" || value == "qless" || value == "both",
                      "--mode takes kept, qless or both");
      if (value == "kept") o.modes = {Mode::kept};
      if (value == "qless") o.modes = {Mode::qless};
    } else if (arg == "--repeat") {
      o.repeat = std::atoi(value.c_str());
      GPUQR_CHECK_ARG(o.repeat >= 1, "--repeat takes a count >= 1");
    } else if (arg == "--warmup") {
      o.warmup = std::atoi(value.c_str());
      GPUQR_CHECK_ARG(o.warmup >= 0, "--warmup takes a count >= 0");
    } else if (arg == "--gen") {
      for (const std::string& item : split_list(value)) {
        if (item != "default") {
          o.gen.push_back(parse_grid_spec(item));
          continue;
        }
        for (const std::string& d : split_list(kDefaultSparseGen)) {
          o.gen.push_back(parse_grid_spec(d));
        }
      }
    } else if (arg == "--matrices") {
      for (const std::string& path : matrix_market_paths(split_list(value))) {
        o.matrices.push_back(path);
      }
    } else if (arg == "--sides") {
      const auto sides = split_list(value);
      for (const std::string& s : sides) {
        GPUQR_CHECK_ARG(s == "gpu" || s == "cpu" || s == "spqr", "--sides: unknown side " + s);
      }
      const auto has = [&](const char* s) {
        return std::find(sides.begin(), sides.end(), s) != sides.end();
      };
      o.run_gpu = has("gpu");
      o.run_cpu = has("cpu");
      o.run_spqr = has("spqr");
    } else {
      o.json = value;
    }
  }
  GPUQR_CHECK_ARG(!o.gen.empty() || !o.matrices.empty(), "give --gen and/or --matrices");
  return o;
}

/// What the analysis says of a problem (gpuqr's, COLAMD, default amalgamation).
struct Shape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t nnz = 0;
  double flops = 0;
  double front_bytes = 0;    ///< sum over fronts of rows x cols x 8
  double largest_front = 0;  ///< bytes of the largest front
  double working_bytes = 0;  ///< SparseAnalysis::memory_bytes (sequential working memory)
  double intensity = 0;      ///< flops / front_bytes
  std::int64_t nnz_r = 0;    ///< structural nnz(R) of the analysis
  double seconds = 0;        ///< the analysis alone
};

Shape analyze(const CscMatrix<double>& a) {
  Shape s;
  s.m = a.rows;
  s.n = a.cols;
  s.nnz = a.nnz();
  const auto t0 = std::chrono::steady_clock::now();
  const SparseAnalysis analysis = analyze_sparse_qr(a);
  s.seconds = seconds_since(t0);
  s.flops = analysis.flops;
  s.nnz_r = analysis.nnz_r;
  s.working_bytes = analysis.memory_bytes;
  for (const FrontInfo& f : analysis.fronts) {
    const double bytes = 8.0 * static_cast<double>(f.rows) * static_cast<double>(f.cols.size());
    s.front_bytes += bytes;
    s.largest_front = std::max(s.largest_front, bytes);
  }
  s.intensity = s.front_bytes > 0 ? s.flops / s.front_bytes : 0.0;
  return s;
}

/// Runs one side, turning an exception into SideResult::error (reported on stderr).
template <class Run>
SideResult guarded(const std::string& what, Run&& run) {
  try {
    return run();
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "%s: error: %s\n", what.c_str(), ex.what());
    SideResult out;
    out.error = ex.what();
    return out;
  }
}

// ---- report -------------------------------------------------------------------------------

struct ProblemRow {
  std::string problem;
  std::string source;  ///< the --gen spec or the file path
  Mode mode = Mode::kept;
  Shape shape;
  double b_norm = 0;  ///< ||b||_2
  SideResult gpu, cpu, spqr;

  const SideResult& ours() const { return gpu.ran ? gpu : cpu; }
  double speedup(const SideResult& side) const {
    return side.ran && spqr.ran ? spqr.seconds / side.seconds : kMissing;
  }
  double gflops(const SideResult& side) const {
    return side.ran ? shape.flops / side.seconds / 1e9 : kMissing;
  }
  double rdiff() const {
    const double r = ours().residual;
    return spqr.residual > 0 ? (r - spqr.residual) / spqr.residual : kMissing;
  }
  std::string ran_on() const {
    if (!gpu.ran) return "-";
    return gpu.stats.fallback.empty() ? gpu.stats.ran_on : gpu.stats.ran_on + "*";
  }
};

constexpr const char* kRowFormat =
    "%-22s %-5s %9s %9s %10s %9s %7s %9s %8s %9s %9s %6s %6s %11s %11s %8s %8s %-6s %8s %9s\n";

std::string count(std::int64_t value, bool bound = false) {
  return value < 0 ? "-" : (bound ? "<=" : "") + std::to_string(value);
}

void print_problem_header() {
  std::printf(kRowFormat, "problem", "mode", "m", "n", "nnz(A)", "flops", "intens", "gpu_s",
              "gpu_GF", "cpu_s", "spqr_s", "x_gpu", "x_cpu", "nnzR", "nnzR_spqr", "rank", "rk_spqr",
              "ran_on", "res", "rdiff");
}

void print_problem_row(const ProblemRow& r) {
  const double relative_residual = r.ours().residual / r.b_norm;
  std::printf(kRowFormat, r.problem.c_str(), to_string(r.mode), count(r.shape.m).c_str(),
              count(r.shape.n).c_str(), count(r.shape.nnz).c_str(),
              fmt(r.shape.flops, "%.3g").c_str(), fmt(r.shape.intensity, "%.1f").c_str(),
              fmt(r.gpu.seconds, "%.3f").c_str(), fmt(r.gflops(r.gpu), "%.1f").c_str(),
              fmt(r.cpu.seconds, "%.3f").c_str(), fmt(r.spqr.seconds, "%.3f").c_str(),
              fmt(r.speedup(r.gpu), "%.2f").c_str(), fmt(r.speedup(r.cpu), "%.2f").c_str(),
              count(r.ours().nnz_r).c_str(), count(r.spqr.nnz_r, r.spqr.nnz_r_is_bound).c_str(),
              count(r.ours().rank).c_str(), count(r.spqr.rank).c_str(), r.ran_on().c_str(),
              fmt(relative_residual, "%.2e").c_str(), fmt(r.rdiff(), "%+.1e").c_str());
  if (!r.gpu.stats.fallback.empty()) std::printf("  fallback: %s\n", r.gpu.stats.fallback.c_str());
  if (r.gpu.ran) {  // where the GPU run's time went (SparseFactorStats, last timed run)
    const SparseFactorStats& g = r.gpu.stats;
    std::printf("  gpu parts: analysis %.3f plan %.3f numeric %.3f (wait %.3f copy %.3f rows "
                "%.3f) finish %.3f s; %lld stages, %lld launches, fronts %lld batched / %lld "
                "dense (%lld whole)\n",
                g.analysis_seconds, g.plan_seconds, g.numeric_seconds, g.wait_seconds,
                g.copy_seconds, g.rows_seconds, g.finish_seconds,
                static_cast<long long>(g.stages), static_cast<long long>(g.launches),
                static_cast<long long>(g.batched_fronts), static_cast<long long>(g.dense_fronts),
                static_cast<long long>(g.whole_fronts));
    std::printf("  gpu enqueue: assembly %.3f small QR %.3f dense QR %.3f pack %.3f s; R copied "
                "packed %.1f MB; page-locked slots %.3f s, release %.3f s; stored %.1f MB\n",
                g.assembly_seconds, g.small_qr_seconds, g.dense_qr_seconds, g.pack_seconds,
                static_cast<double>(g.packed_bytes) / 1e6, g.host_alloc_seconds,
                g.release_seconds, static_cast<double>(r.gpu.stored_bytes) / 1e6);
  }
  std::fflush(stdout);
}

/// What every JSON line repeats about the run.
struct RunInfo {
  std::string device;        ///< Context::describe() of the GPU, "" when skipped
  unsigned cpu_threads = 0;  ///< hardware threads (ours: threads = 0)
  Plan plan;
};

std::string side_json(const char* name, const ProblemRow& r, const SideResult& s) {
  const std::string p = std::string(",\"") + name + "_";
  std::string j;
  j += p + "s\":" + json_number(s.seconds);
  j += p + "gflops\":" + json_number(r.gflops(s));
  j += p + "nnz_r\":" + (s.nnz_r < 0 ? "null" : std::to_string(s.nnz_r));
  j += p + "rank\":" + (s.rank < 0 ? "null" : std::to_string(s.rank));
  j += p + "residual\":" + json_number(s.residual);
  j += p + "error\":" + (s.error.empty() ? "null" : json_string(s.error));
  return j;
}

std::string problem_json(const ProblemRow& r, const RunInfo& info) {
  std::string j = "{\"problem\":" + json_string(r.problem);
  j += ",\"source\":" + json_string(r.source);
  j += ",\"mode\":" + json_string(to_string(r.mode));
  j += ",\"m\":" + std::to_string(r.shape.m) + ",\"n\":" + std::to_string(r.shape.n);
  j += ",\"nnz_a\":" + std::to_string(r.shape.nnz);
  j += ",\"flops\":" + json_number(r.shape.flops);
  j += ",\"front_bytes\":" + json_number(r.shape.front_bytes);
  j += ",\"largest_front_bytes\":" + json_number(r.shape.largest_front);
  j += ",\"intensity\":" + json_number(r.shape.intensity);
  j += ",\"analysis_nnz_r\":" + std::to_string(r.shape.nnz_r);
  j += side_json("gpu", r, r.gpu) + side_json("cpu", r, r.cpu) + side_json("spqr", r, r.spqr);
  j += ",\"spqr_nnz_r_is_bound\":" + std::string(r.spqr.nnz_r_is_bound ? "true" : "false");
  j += ",\"spqr_flops\":" + json_number(r.spqr.spqr_flops);
  j += ",\"speedup_gpu_spqr\":" + json_number(r.speedup(r.gpu));
  j += ",\"speedup_cpu_spqr\":" + json_number(r.speedup(r.cpu));
  // factor_stats() of the GPU run (null when it did not run)
  const SparseFactorStats& st = r.gpu.stats;
  const auto gpu_count = [&](std::int64_t v) {
    return r.gpu.ran ? std::to_string(v) : std::string("null");
  };
  j += ",\"ran_on\":" + (r.gpu.ran ? json_string(st.ran_on) : std::string("null"));
  j += ",\"fallback\":" + (r.gpu.ran ? json_string(st.fallback) : std::string("null"));
  if (r.gpu.ran) {
    j += ",\"gpu_analysis_s\":" + json_number(st.analysis_seconds) +
         ",\"gpu_plan_s\":" + json_number(st.plan_seconds) +
         ",\"gpu_numeric_s\":" + json_number(st.numeric_seconds) +
         ",\"gpu_wait_s\":" + json_number(st.wait_seconds) +
         ",\"gpu_copy_s\":" + json_number(st.copy_seconds) +
         ",\"gpu_rows_s\":" + json_number(st.rows_seconds) +
         ",\"gpu_finish_s\":" + json_number(st.finish_seconds) +
         ",\"gpu_assembly_s\":" + json_number(st.assembly_seconds) +
         ",\"gpu_small_qr_s\":" + json_number(st.small_qr_seconds) +
         ",\"gpu_dense_qr_s\":" + json_number(st.dense_qr_seconds) +
         ",\"gpu_pack_s\":" + json_number(st.pack_seconds) +
         ",\"gpu_packed_bytes\":" + std::to_string(st.packed_bytes) +
         ",\"gpu_host_alloc_s\":" + json_number(st.host_alloc_seconds) +
         ",\"gpu_release_s\":" + json_number(st.release_seconds) +
         ",\"gpu_stored_bytes\":" + std::to_string(r.gpu.stored_bytes);
  }
  j += ",\"batched_fronts\":" + gpu_count(st.batched_fronts);
  j += ",\"dense_fronts\":" + gpu_count(st.dense_fronts);
  j += ",\"stages\":" + gpu_count(st.stages);
  j += ",\"peak_stage_bytes\":" + gpu_count(st.peak_stage_bytes);
  j += ",\"device\":" + (info.device.empty() ? std::string("null") : json_string(info.device));
  j += ",\"cpu_threads\":" + std::to_string(info.cpu_threads);
  j += ",\"warmup\":" + std::to_string(info.plan.warmup);
  j += ",\"repeat\":" + std::to_string(info.plan.repeat);
  j += ",\"b_norm\":" + json_number(r.b_norm);
  j += ",\"accuracy_of\":" + json_string(r.gpu.ran ? "gpu" : "cpu");
  j += ",\"residual_rel_diff\":" + json_number(r.rdiff());
  return j + "}";
}

double median(std::vector<double> v) {
  if (v.empty()) return kMissing;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 == 1 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

/// Median speedups (gpu and cpu against SPQR) over the rows of `mode` that `keep` selects.
void print_median(const std::vector<ProblemRow>& rows, Mode mode, const char* label,
                  bool (*keep)(const ProblemRow&)) {
  std::vector<double> gpu, cpu;
  for (const ProblemRow& r : rows) {
    if (r.mode != mode || !keep(r)) continue;
    if (std::isfinite(r.speedup(r.gpu))) gpu.push_back(r.speedup(r.gpu));
    if (std::isfinite(r.speedup(r.cpu))) cpu.push_back(r.speedup(r.cpu));
  }
  std::printf("  %-5s %-18s median x_gpu %6s (%zu problems)   median x_cpu %6s (%zu problems)\n",
              to_string(mode), label, fmt(median(gpu), "%.2f").c_str(), gpu.size(),
              fmt(median(cpu), "%.2f").c_str(), cpu.size());
}

void print_summary(const std::vector<ProblemRow>& rows, const Options& o) {
  std::printf("\nsummary (x = spqr_s / ours_s, > 1: gpuqr faster):\n");
  const auto off_gpu = std::count_if(rows.begin(), rows.end(), [](const ProblemRow& r) {
    return r.gpu.ran && r.gpu.stats.ran_on != "cuda";
  });
  if (off_gpu > 0) {
    std::printf(
        "  note: %lld GPU run(s) did not run on cuda (ran_on, fallback); x_gpu includes them\n",
        static_cast<long long>(off_gpu));
  }
  for (const Mode mode : o.modes) {
    print_median(rows, mode,
                 "intensity > 100:", [](const ProblemRow& r) { return r.shape.intensity > 100; });
    print_median(rows, mode,
                 "flops > 1e12:", [](const ProblemRow& r) { return r.shape.flops > 1e12; });
  }
}

// ---- setup --------------------------------------------------------------------------------

/// The shared libraries loaded in this process whose file name (symbolic links resolved)
/// contains one of `parts`, comma separated; "" when none.
std::string loaded_libraries(std::initializer_list<const char*> parts) {
  struct Query {
    std::initializer_list<const char*> parts;
    std::string found;
  } query{parts, {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto* q = static_cast<Query*>(data);
        if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0') return 0;
        char* resolved = realpath(info->dlpi_name, nullptr);
        const std::string path = resolved != nullptr ? resolved : info->dlpi_name;
        std::free(resolved);
        const std::string file = path.substr(path.find_last_of('/') + 1);
        for (const char* part : q->parts) {
          if (file.find(part) != std::string::npos) {
            q->found += (q->found.empty() ? "" : ", ") + path;
            break;
          }
        }
        return 0;
      },
      &query);
  return query.found;
}

void print_setup(const Options& o, const std::optional<Context>& gpu,
                 const std::string& gpu_skipped) {
  const unsigned cores = std::thread::hardware_concurrency();
  const char* env = std::getenv("OPENBLAS_NUM_THREADS");
  std::printf(
      "gpuqr_sparse_gpu_bench: COLAMD, default rank-detection tolerance; time = whole "
      "call, best of %d after %d warm-up(s)\n",
      o.repeat, o.warmup);
  if (o.run_gpu) {
    if (gpu) {
      std::printf("gpu : %s, threads = 0 (for a CPU fallback)\n", gpu->describe().c_str());
    } else {
      std::printf("gpu : skipped (%s)\n", gpu_skipped.c_str());
    }
  }
  if (o.run_cpu) {
    std::printf("cpu : %s, SparseQROptions::threads = 0 (%u hardware threads)\n",
                Context::cpu().describe().c_str(), cores);
  }
  if (o.run_spqr) {
    std::printf(
        "spqr: SuiteSparseQR %d.%d.%d, SPQR_nthreads = 0 (TBB %s), BLAS threads: "
        "OpenBLAS default (%s)\n",
        SPQR_MAIN_VERSION, SPQR_SUB_VERSION, SPQR_SUBSUB_VERSION,
        loaded_libraries({"libtbb"}).empty() ? "not loaded: SPQR_nthreads has no effect"
                                             : "loaded: its default, every core",
        env ? (std::string("OPENBLAS_NUM_THREADS=") + env).c_str()
            : (std::to_string(cores) + " = every core").c_str());
    std::printf("      BLAS and LAPACK loaded: %s\n",
                loaded_libraries({"libblas", "openblas", "liblapack.", "mkl"}).c_str());
  }
  std::printf(
      "intensity = flops / front bytes, front bytes = sum over fronts of rows x cols x 8;"
      " GF = analysis flops / time\n");
  std::printf(
      "x_gpu = spqr_s / gpu_s, x_cpu = spqr_s / cpu_s; res = ||Ax-b||/||b|| (ours), "
      "rdiff = relative difference of ||Ax-b|| against SPQR's\n\n");
}

/// The problems: generated first, then the Matrix Market files (complex or empty ones are
/// skipped with a note).
template <class Visit>
void for_each_problem(const Options& o, Visit&& visit) {
  for (const GridSpec& spec : o.gen) {
    const auto t0 = std::chrono::steady_clock::now();
    SparseProblem p = generate_sparse_problem(spec);
    const double gen_s = seconds_since(t0);
    visit(p, spec.text, gen_s);
  }
  for (const std::string& path : o.matrices) {
    SparseProblem p;
    try {
      p.a = io::read_matrix_market(path).sparse;
    } catch (const Error& ex) {
      std::printf("%s: skipped (%s)\n", path.c_str(), ex.message().c_str());
      continue;
    }
    if (p.a.rows == 0 || p.a.cols == 0 || p.a.nnz() == 0) {
      std::printf("%s: skipped (empty)\n", path.c_str());
      continue;
    }
    const std::size_t slash = path.find_last_of('/');
    p.name = path.substr(slash == std::string::npos ? 0 : slash + 1);
    if (p.name.size() > 4 && p.name.substr(p.name.size() - 4) == ".mtx") {
      p.name.resize(p.name.size() - 4);
    }
    visit(p, path, 0.0);
  }
}

void analyze_only(const Options& o) {
  std::printf("%-22s %10s %10s %11s %10s %10s %10s %10s %9s %12s %7s %7s\n", "problem", "m", "n",
              "nnz(A)", "flops", "front_GB", "largest_GB", "work_GB", "intensity", "nnz(R)",
              "gen_s", "anal_s");
  for_each_problem(o, [](const SparseProblem& p, const std::string&, double gen_s) {
    const Shape s = analyze(p.a);
    std::printf("%-22s %10lld %10lld %11lld %10.3g %10.3f %10.3f %10.3f %9.1f %12lld %7.2f %7.2f\n",
                p.name.c_str(), static_cast<long long>(s.m), static_cast<long long>(s.n),
                static_cast<long long>(s.nnz), s.flops, s.front_bytes / 1e9, s.largest_front / 1e9,
                s.working_bytes / 1e9, s.intensity, static_cast<long long>(s.nnz_r), gen_s,
                s.seconds);
    std::fflush(stdout);
  });
}

int run(const Options& o) {
  if (o.analyze_only) {
    analyze_only(o);
    return 0;
  }
  std::optional<Context> gpu;
  std::string gpu_skipped = cuda_unavailable_reason();
  if (o.run_gpu && !cuda_devices().empty()) {
    try {
      gpu = Context::cuda();
    } catch (const Error& ex) {
      gpu_skipped = ex.message();
    }
  }
  print_setup(o, gpu, gpu_skipped);
  std::ofstream json;
  if (!o.json.empty()) {
    json.open(o.json);
    GPUQR_CHECK_ARG(json.good(), "--json: cannot open " + o.json);
  }
  cholmod_common cc;
  cholmod_l_start(&cc);
  cc.SPQR_nthreads = 0;
  print_problem_header();
  const Plan plan{o.warmup, o.repeat};
  const RunInfo info{gpu ? gpu->describe() : std::string(), std::thread::hardware_concurrency(),
                     plan};
  std::vector<ProblemRow> rows;
  for_each_problem(o, [&](const SparseProblem& p, const std::string& source, double) {
    const Shape shape = analyze(p.a);
    const Matrix<double> b = make_rhs(p.a);
    double b_norm = 0;
    for (std::int64_t i = 0; i < b.rows(); ++i) b_norm += b(i, 0) * b(i, 0);
    b_norm = std::sqrt(b_norm);
    for (const Mode mode : o.modes) {
      ProblemRow r{p.name, source, mode, shape, b_norm, {}, {}, {}};
      const std::string what = p.name + " " + to_string(mode) + " ";
      SparseQROptions options;
      options.threads = 0;
      if (gpu) {
        options.context = *gpu;
        options.placement = SparsePlacement::device;  // the GPU side measures the GPU
        r.gpu = guarded(what + "gpu", [&] { return run_ours(p.a, b, mode, options, plan); });
      }
      if (o.run_cpu) {
        options.context = Context::cpu();
        r.cpu = guarded(what + "cpu", [&] { return run_ours(p.a, b, mode, options, plan); });
      }
      if (o.run_spqr) {
        r.spqr = guarded(what + "spqr", [&] { return run_spqr(p.a, b, mode, &cc, plan); });
      }
      print_problem_row(r);
      if (json.is_open()) json << problem_json(r, info) << "\n" << std::flush;
      rows.push_back(std::move(r));
    }
  });
  cholmod_l_finish(&cc);
  print_summary(rows, o);
  return 0;
}

}  // namespace
}  // namespace gpuqr::bench

int main(int argc, char** argv) {
  gpuqr::bench::Options options;
  try {
    options = gpuqr::bench::parse_options(argc, argv);
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "gpuqr_sparse_gpu_bench: %s\n", ex.what());
    std::fprintf(stderr, gpuqr::bench::kUsage, gpuqr::bench::kDefaultSparseGen);
    return 2;
  }
  try {
    return gpuqr::bench::run(options);
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "gpuqr_sparse_gpu_bench: error: %s\n", ex.what());
    return 1;
  }
}
