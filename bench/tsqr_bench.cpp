// gpuqr_tsqr_bench: the tall-skinny QR methods (gpuqr/tsqr.hpp) against cuSOLVER on one GPU,
// side by side in one run, with the memory floor measured in the same run.
//
// For each precision, m and n (shapes that do not fit the free device memory are skipped),
// on the same random input (uniform in (-1, 1), never 0):
//   form r         TallSkinnyQR (R, Q kept implicitly)     vs cuSOLVER geqrf
//   form explicit  tsqr_explicit (thin Q and R)            vs cuSOLVER geqrf + orgqr
//   form geqrf     tsqr_geqrf (geqrf's Householder form)   vs cuSOLVER geqrf
// per method. Printed: our ms, cuSOLVER's ms, speedup = cuSOLVER / ours, floor = ours / (the
// time to read and write A once at the copy bandwidth measured with cudaMemcpy D2D), the
// method actually used, and ||Q^T Q - I||_F for the explicit form. JSON lines with --json.
// Both sides are timed the same way: wall clock around the call and a stream synchronize
// (launch overhead and our status reads included), median of --repeat after one warm-up;
// the input is restored by a device copy before each repetition, outside the timing.
//
// Without CUDA in the build, or without a visible GPU, it says so and exits 0.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "gpuqr/context.hpp"
#include "gpuqr/tsqr.hpp"

#ifdef GPUQR_TSQR_BENCH_WITH_CUDA
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#endif

namespace {

struct Options {
  std::vector<std::int64_t> m = {1 << 18, 1 << 20, 1 << 22};
  std::vector<std::int64_t> n = {16, 32, 64, 128, 256, 512, 1024};
  std::vector<std::string> methods = {"householder", "cholesky_qr2", "shifted_cholesky_qr3",
                                      "tsqr", "qrf_ah", "automatic"};
  std::vector<std::string> forms = {"r", "rb", "explicit", "geqrf"};
  std::vector<char> precisions = {'d', 's'};
  int repeat = 3;
  std::string json;
  bool baseline = true;  // --baseline none: ours only (for profilers)
  /// --variants: each form and method is run once per item, an environment setting
  /// NAME=VALUE applied for that run (knobs read at every call; A/B in one run), or
  /// "default" (nothing set).
  std::vector<std::string> variants = {"default"};
  /// --copies: how many m x n matrices a shape is assumed to need at once (skipped when they
  /// would not fit in 92% of the free memory); lower it on a large-memory device to try a
  /// shape anyway (an allocation that then fails is reported as that form's error).
  double copies = 4.3;
};

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) if (!item.empty()) out.push_back(item);
  return out;
}

int usage(const char* why) {
  std::fprintf(stderr,
               "gpuqr_tsqr_bench: %s\nusage: gpuqr_tsqr_bench [--m LIST] [--n LIST] "
               "[--methods LIST] [--forms r,rb,explicit,geqrf] [--precision d,s] [--repeat N] "
               "[--json FILE] [--baseline cusolver|none] [--variants default,NAME=VALUE,...] "
               "[--copies X]\n",
               why);
  return 2;
}

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return false;
    const std::string v = argv[++i];
    if (arg == "--m" || arg == "--n") {
      std::vector<std::int64_t> list;
      for (const auto& s : split(v)) list.push_back(std::stoll(s));
      (arg == "--m" ? o.m : o.n) = list;
    } else if (arg == "--methods") {
      o.methods = split(v);
      for (const auto& s : o.methods) gpuqr::parse_tsqr_method(s);  // throws on a bad name
    } else if (arg == "--forms") {
      o.forms = split(v);
    } else if (arg == "--precision") {
      o.precisions.clear();
      for (const auto& s : split(v)) o.precisions.push_back(s[0]);
    } else if (arg == "--copies") {
      o.copies = std::stod(v);
      if (!(o.copies >= 1.0)) return false;
    } else if (arg == "--repeat") {
      o.repeat = std::max(1, std::stoi(v));
    } else if (arg == "--json") {
      o.json = v;
    } else if (arg == "--variants") {
      o.variants = split(v);
      for (const auto& item : o.variants)
        if (item != "default" && item.find('=') == std::string::npos) return false;
    } else if (arg == "--baseline") {
      if (v != "cusolver" && v != "none") return false;
      o.baseline = v == "cusolver";
    } else {
      return false;
    }
  }
  return true;
}

[[maybe_unused]] double median(std::vector<double> t) {
  if (t.empty()) return 0;
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

#ifdef GPUQR_TSQR_BENCH_WITH_CUDA
namespace {

#define BENCH_CHECK(call, ok)                                                             \
  do {                                                                                    \
    if (!(call ok)) {                                                                     \
      std::fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #call);              \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)
#define CUDA_OK(call) BENCH_CHECK(call, == cudaSuccess)
#define SOLVER_OK(call) BENCH_CHECK(call, == CUSOLVER_STATUS_SUCCESS)
#define BLAS_OK(call) BENCH_CHECK(call, == CUBLAS_STATUS_SUCCESS)

/// Read+write bandwidth of cudaMemcpy D2D on `bytes` (bytes/s), best of 5.
double copy_bandwidth(std::size_t bytes) {
  void *a = nullptr, *b = nullptr;
  CUDA_OK(cudaMalloc(&a, bytes));
  CUDA_OK(cudaMalloc(&b, bytes));
  CUDA_OK(cudaMemset(a, 1, bytes));
  cudaEvent_t e0, e1;
  CUDA_OK(cudaEventCreate(&e0));
  CUDA_OK(cudaEventCreate(&e1));
  float best = 1e30f;
  for (int r = 0; r < 6; ++r) {
    CUDA_OK(cudaEventRecord(e0));
    CUDA_OK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
    CUDA_OK(cudaEventRecord(e1));
    CUDA_OK(cudaEventSynchronize(e1));
    float ms = 0;
    CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
    if (r > 0) best = std::min(best, ms);
  }
  CUDA_OK(cudaEventDestroy(e0));
  CUDA_OK(cudaEventDestroy(e1));
  CUDA_OK(cudaFree(a));
  CUDA_OK(cudaFree(b));
  return 2.0 * double(bytes) / (best * 1e-3);
}

/// cuSOLVER's geqrf/orgqr (k = n, lda = m) and cuBLAS's Gram matrix Q^T Q, for float or double.
template <class T>
struct Solver {
  static constexpr bool kDouble = std::is_same_v<T, double>;
  static cusolverStatus_t geqrf_size(cusolverDnHandle_t h, int m, int n, T* a, int* lw) {
    if constexpr (kDouble) return cusolverDnDgeqrf_bufferSize(h, m, n, a, m, lw);
    else return cusolverDnSgeqrf_bufferSize(h, m, n, a, m, lw);
  }
  static cusolverStatus_t orgqr_size(cusolverDnHandle_t h, int m, int n, T* a, T* t, int* lw) {
    if constexpr (kDouble) return cusolverDnDorgqr_bufferSize(h, m, n, n, a, m, t, lw);
    else return cusolverDnSorgqr_bufferSize(h, m, n, n, a, m, t, lw);
  }
  static cusolverStatus_t geqrf(cusolverDnHandle_t h, int m, int n, T* a, T* t, T* w, int lw,
                                int* info) {
    if constexpr (kDouble) return cusolverDnDgeqrf(h, m, n, a, m, t, w, lw, info);
    else return cusolverDnSgeqrf(h, m, n, a, m, t, w, lw, info);
  }
  static cusolverStatus_t orgqr(cusolverDnHandle_t h, int m, int n, T* a, T* t, T* w, int lw,
                                int* info) {
    if constexpr (kDouble) return cusolverDnDorgqr(h, m, n, n, a, m, t, w, lw, info);
    else return cusolverDnSorgqr(h, m, n, n, a, m, t, w, lw, info);
  }
  static cublasStatus_t gram(cublasHandle_t h, int m, int n, const T* q, T* g) {
    const T one = 1, zero = 0;
    if constexpr (kDouble)
      return cublasDgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, m, &one, q, m, q, m, &zero, g, n);
    else return cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, m, &one, q, m, q, m, &zero, g, n);
  }
};

/// Median wall time (ms) of `call` after one warm-up; `restore` runs before each, untimed.
double time_ms(int repeat, const std::function<void()>& restore,
               const std::function<void()>& call, const std::function<void()>& sync) {
  std::vector<double> t;
  for (int r = 0; r <= repeat; ++r) {
    restore();
    sync();
    const auto start = std::chrono::steady_clock::now();
    call();
    sync();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count();
    if (r > 0) t.push_back(ms);
  }
  return median(t);
}

/// x in %.3e (the orthogonality figures are far below 1e-6 in double).
std::string sci(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3e", x);
  return buf;
}

/// ||Q^T Q - I||_F of a device m x n Q (m = ld), via one GEMM.
template <class T>
double orthogonality(cublasHandle_t h, const T* q, std::int64_t m, std::int64_t n) {
  T* g = nullptr;
  CUDA_OK(cudaMalloc(&g, sizeof(T) * n * n));
  BLAS_OK(Solver<T>::gram(h, int(m), int(n), q, g));
  // The GEMM runs on the handle's (non-blocking) stream, which the legacy-stream copy below
  // does not wait for.
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<T> host(static_cast<std::size_t>(n * n));
  CUDA_OK(cudaMemcpy(host.data(), g, sizeof(T) * n * n, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaFree(g));
  double s = 0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) {
      const double e = double(host[i + j * n]) - (i == j ? 1.0 : 0.0);
      s += e * e;
    }
  return std::sqrt(s);
}

template <class T>
void run_shape(const Options& o, std::int64_t m, std::int64_t n, double bandwidth,
               std::ofstream* json, int& failures) {
  const char prec = sizeof(T) == 8 ? 'd' : 's';
  const std::size_t bytes = sizeof(T) * std::size_t(m) * std::size_t(n);
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_OK(cudaMemGetInfo(&free_bytes, &total_bytes));
  // A pristine + working copy, and at most about two more: CholeskyQR2's m x n work matrix
  // and the explicit Q's (the explicit form), or a TallSkinnyQR's copy of A and a panel's
  // work matrix (R alone by Householder QR); shifted CholeskyQR3's second work matrix is not
  // counted (random inputs never take it). An allocation that fails is reported as an error.
  // 4.3 by default (--copies).
  const double kCopies = o.copies;
  if (kCopies * double(bytes) > 0.92 * double(free_bytes)) {
    std::printf("%c %9lld %5lld  skip (needs ~%.1f GiB, %.1f GiB free)\n", prec, (long long)m,
                (long long)n, kCopies * bytes / 1073741824.0, free_bytes / 1073741824.0);
    return;
  }
  // The input: uniform in (-1, 1), never 0 (xorshift on the host, uploaded once).
  std::vector<T> host(static_cast<std::size_t>(m) * std::size_t(n));
  std::uint64_t s = 0x9E3779B97F4A7C15ull ^ std::uint64_t(m * 131 + n);
  for (auto& x : host) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    const double u = double(s >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0;
    x = static_cast<T>(u == 0.0 ? 0.5 : u);
  }
  gpuqr::Context ctx = gpuqr::Context::cuda(0);
  ctx.set_check_finite(false);  // timing the factorizations, not the input scan
  T *a0 = nullptr, *a = nullptr, *tau = nullptr, *r = nullptr, *work = nullptr;
  int* info = nullptr;
  CUDA_OK(cudaMalloc(&a0, bytes));
  CUDA_OK(cudaMalloc(&a, bytes));
  CUDA_OK(cudaMalloc(&tau, sizeof(T) * n));
  CUDA_OK(cudaMalloc(&r, sizeof(T) * n * n));
  CUDA_OK(cudaMalloc(&info, sizeof(int)));
  CUDA_OK(cudaMemcpy(a0, host.data(), bytes, cudaMemcpyHostToDevice));
  host = {};
  cudaStream_t stream = ctx.stream();
  cusolverDnHandle_t solver = nullptr;
  cublasHandle_t blas = nullptr;
  SOLVER_OK(cusolverDnCreate(&solver));
  SOLVER_OK(cusolverDnSetStream(solver, stream));
  BLAS_OK(cublasCreate(&blas));
  BLAS_OK(cublasSetStream(blas, stream));
  int lw_geqrf = 0, lw_orgqr = 0;
  SOLVER_OK(Solver<T>::geqrf_size(solver, int(m), int(n), a, &lw_geqrf));
  SOLVER_OK(Solver<T>::orgqr_size(solver, int(m), int(n), a, tau, &lw_orgqr));
  CUDA_OK(cudaMalloc(&work, sizeof(T) * std::max({lw_geqrf, lw_orgqr, 1})));
  auto restore = [&] {
    CUDA_OK(cudaMemcpyAsync(a, a0, bytes, cudaMemcpyDeviceToDevice, stream));
  };
  auto sync = [&] { CUDA_OK(cudaStreamSynchronize(stream)); };
  auto geqrf = [&] { SOLVER_OK(Solver<T>::geqrf(solver, int(m), int(n), a, tau, work, lw_geqrf, info)); };
  // Without the baseline (--baseline none) its times are NaN and its orthogonality 1.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double base_geqrf = o.baseline ? time_ms(o.repeat, restore, geqrf, sync) : nan;
  const double base_full =
      o.baseline
          ? time_ms(
                o.repeat, restore,
                [&] {
                  geqrf();
                  SOLVER_OK(Solver<T>::orgqr(solver, int(m), int(n), a, tau, work, lw_orgqr, info));
                },
                sync)
          : nan;
  const double base_orth = o.baseline ? orthogonality<T>(blas, a, m, n) : 1.0;
  const double floor_ms = 2.0 * double(bytes) / bandwidth * 1e3;
  const gpuqr::MatrixView<T> av(a, m, n, m, gpuqr::MemorySpace::device, 0);
  const gpuqr::MatrixView<T> rv(r, n, n, n, gpuqr::MemorySpace::device, 0);
  const gpuqr::VectorView<T> tv(tau, n, gpuqr::MemorySpace::device, 0);
  for (const std::string& form : o.forms) {
    for (const std::string& name : o.methods) {
      for (const std::string& variant : o.variants) {
        // The variant's setting for this run only (restored below).
        std::string knob, old_value;
        bool had_old = false;
        if (variant != "default") {
          knob = variant.substr(0, variant.find('='));
          const char* prev = std::getenv(knob.c_str());
          had_old = prev != nullptr;
          if (had_old) old_value = prev;
          setenv(knob.c_str(), variant.substr(variant.find('=') + 1).c_str(), 1);
        }
        auto restore_knob = [&] {
          if (knob.empty()) return;
          if (had_old) {
            setenv(knob.c_str(), old_value.c_str(), 1);
          } else {
            unsetenv(knob.c_str());
          }
        };
        gpuqr::TsqrOptions opts;
        opts.method = gpuqr::parse_tsqr_method(name);
        gpuqr::TsqrInfo used;
        double ours = 0, orth = -1;
        try {
          if (form == "r" || form == "rb") {
            // rb: TsqrOptions::borrow_input (no copy of A where Q stays A R^{-1}).
            opts.borrow_input = form == "rb";
            ours = time_ms(
                o.repeat, restore,
                [&] {
                  gpuqr::TallSkinnyQR<T> qr(ctx, gpuqr::MatrixView<const T>(av), opts);
                  used = qr.info();
                  ctx.synchronize();  // the object's storage is freed at the end of this scope
                },
                sync);
          } else if (form == "explicit") {
            ours = time_ms(
                o.repeat, restore, [&] { used = gpuqr::tsqr_explicit<T>(ctx, av, rv, opts); },
                sync);
            orth = orthogonality<T>(blas, a, m, n);
          } else if (form == "geqrf") {
            ours = time_ms(
                o.repeat, restore, [&] { used = gpuqr::tsqr_geqrf<T>(ctx, av, tv, opts); }, sync);
          } else {
            std::fprintf(stderr, "unknown form '%s'\n", form.c_str());
            std::exit(2);
          }
        } catch (const std::exception& e) {
          std::printf("%c %9lld %5lld %-8s %-21s error: %s\n", prec, (long long)m, (long long)n,
                      form.c_str(), name.c_str(), e.what());
          ++failures;
          restore_knob();
          continue;
        }
        restore_knob();
        const double base = form == "explicit" ? base_full : base_geqrf;
        const bool bad_orth = orth >= 0 && !(orth <= 100.0 * std::max(base_orth, 1e-300) + 1e-3);
        if (bad_orth) ++failures;
        // The method used, with the outer panels CholeskyQR factored (the blocked Householder
        // QR's route on wide tall shapes) as "+cpN".
        std::string used_name = gpuqr::to_string(used.method);
        if (used.cholesky_panels > 0) used_name += "+cp" + std::to_string(used.cholesky_panels);
        std::printf("%c %9lld %5lld %-8s %-21s %10.3f %10.3f %8.2f %8.2f  %-21s %s%s%s\n", prec,
                    (long long)m, (long long)n, form.c_str(), name.c_str(), ours, base, base / ours,
                    ours / floor_ms, used_name.c_str(),
                    orth >= 0 ? (sci(orth) + " (cusolver " + sci(base_orth) + ")").c_str() : "-",
                    bad_orth ? "  FAIL" : "",
                    variant == "default" ? "" : ("  [" + variant + "]").c_str());
        std::fflush(stdout);
        if (json != nullptr) {
          *json << "{\"precision\":\"" << prec << "\",\"m\":" << m << ",\"n\":" << n
                << ",\"form\":\"" << form << "\",\"method\":\"" << name << "\",\"method_used\":\""
                << gpuqr::to_string(used.method) << "\",\"time_ms\":" << ours
                << ",\"cusolver_ms\":" << base << ",\"cusolver_op\":\""
                << (form == "explicit" ? "geqrf+orgqr" : "geqrf")
                << "\",\"speedup\":" << base / ours << ",\"floor_ms\":" << floor_ms
                << ",\"floor_ratio\":" << ours / floor_ms
                << ",\"orth\":" << (orth >= 0 ? sci(orth) : "null")
                << ",\"cholesky_panels\":" << used.cholesky_panels << ",\"variant\":\"" << variant
                << "\",\"fallback_reason\":\"" << used.fallback_reason << "\"}\n";
        }
      }
    }
  }
  cusolverDnDestroy(solver);
  cublasDestroy(blas);
  for (void* p : {static_cast<void*>(a0), static_cast<void*>(a), static_cast<void*>(tau),
                  static_cast<void*>(r), static_cast<void*>(work), static_cast<void*>(info)})
    CUDA_OK(cudaFree(p));
}

}  // namespace
#endif

int main(int argc, char** argv) {
  Options o;
  try {
    if (!parse(argc, argv, o)) return usage("bad arguments");
  } catch (const std::exception& e) {
    return usage(e.what());
  }
#ifndef GPUQR_TSQR_BENCH_WITH_CUDA
  std::printf("gpuqr_tsqr_bench: this build has no CUDA backend; nothing to measure\n");
  return 0;
#else
  if (gpuqr::cuda_devices().empty()) {
    std::printf("gpuqr_tsqr_bench: no GPU here (%s); nothing to measure\n",
                gpuqr::cuda_unavailable_reason().c_str());
    return 0;
  }
  std::printf("device: %s\n", gpuqr::Context::cuda(0).describe().c_str());
  // The A/B knobs of the CholeskyQR leaves (src/cuda/gram_kernels.hpp, cholqr_kernels.cu,
  // gram_product.cu).
  for (const char* knob :
       {"GPUQR_GRAM_KERNEL", "GPUQR_GRAM_SPLIT", "GPUQR_CHOLQR_SINGLE_PASS", "GPUQR_GRAM_TF32",
        "GPUQR_QPROD", "GPUQR_GRAM_DMMA", "GPUQR_SMALL_CHOLESKY", "GPUQR_CHOLQR_SPECULATE",
        "GPUQR_CUBLAS_MATH", "CUBLAS_EMULATION_STRATEGY", "GPUQR_CHOLQR_PANELS",
        "GPUQR_CHOLQR_PANEL_WIDTH", "GPUQR_R_HOUSEHOLDER", "GPUQR_EXPLICIT_HOUSEHOLDER"}) {
    const char* v = std::getenv(knob);
    std::printf("%s=%s\n", knob, v != nullptr ? v : "(unset)");
  }
  const double bw = copy_bandwidth(std::size_t(1) << 30);
  std::printf("copy bandwidth (cudaMemcpy D2D, read + write): %.0f GB/s\n", bw / 1e9);
  std::printf("%s %9s %5s %-8s %-21s %10s %10s %8s %8s  %-21s %s\n", "p", "m", "n", "form",
              "method", "ours_ms", "cusolv_ms", "speedup", "floor_x", "method_used",
              "orth (explicit)");
  std::ofstream json_file;
  if (!o.json.empty()) json_file.open(o.json);
  int failures = 0;
  for (char p : o.precisions)
    for (std::int64_t m : o.m)
      for (std::int64_t n : o.n) {
        if (n > m) continue;
        if (p == 'd') run_shape<double>(o, m, n, bw, o.json.empty() ? nullptr : &json_file, failures);
        else run_shape<float>(o, m, n, bw, o.json.empty() ? nullptr : &json_file, failures);
      }
  std::printf("%d failed\n", failures);
  return failures > 255 ? 255 : failures;
#endif
}
