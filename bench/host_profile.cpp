// gpuqr_host_profile: where the host's time goes in repeated dense calls on a CUDA context
// (measurements only). Runs geqrf of an n x n random device matrix (restored from a copy
// before each call, outside the timed part) `calls` times; per call it records the host time
// until the call returns (the launches enqueued) and until Context::synchronize() returns.
// Meanwhile SIGPROF (every 50 us of the process's CPU time) samples the interrupted thread's
// stack; afterwards it prints the functions most often on the sampled stacks (inclusive), the
// innermost frames (exclusive) and the innermost gpuqr frames, as shares of the samples taken
// inside the calls.
//
//   gpuqr_host_profile [n=1024] [calls=200] [d|s] [graphs=0]
//
// graphs: 0 off, 1 on from a key's first call (set_cuda_graphs(true)), 2 the context's default
// (on from a key's second call unless GPUQR_GRAPH says otherwise). The three warmup calls'
// times (to return, to finish) are printed too: with graphs they show the capture's cost.
#include <cxxabi.h>
#include <execinfo.h>
#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gpuqr/context.hpp"
#include "gpuqr/dense.hpp"
#include "gpuqr/matrix.hpp"
#include "tests/support/generators.hpp"

namespace {

constexpr int kDepth = 48;
constexpr int kMaxSamples = 200000;
struct Sample {
  int depth;
  void* frames[kDepth];
};
Sample* g_samples = nullptr;
std::atomic<int> g_count{0};
std::atomic<bool> g_inside{false};

void on_prof(int) {
  if (!g_inside.load(std::memory_order_relaxed)) return;
  const int i = g_count.fetch_add(1, std::memory_order_relaxed);
  if (i >= kMaxSamples) return;
  g_samples[i].depth = backtrace(g_samples[i].frames, kDepth);
}

/// The demangled function name of a backtrace_symbols entry ("lib(mangled+0x12) [0x...]").
std::string function_of(const char* symbol) {
  const char* open = std::strchr(symbol, '(');
  const char* plus = open != nullptr ? std::strchr(open, '+') : nullptr;
  if (open == nullptr || plus == nullptr || plus == open + 1) {
    const char* slash = std::strrchr(symbol, '/');
    std::string lib = slash != nullptr ? slash + 1 : symbol;
    return "[" + lib.substr(0, lib.find('(')) + "]";
  }
  const std::string mangled(open + 1, plus);
  int status = 0;
  char* name = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  std::string out = status == 0 && name != nullptr ? name : mangled;
  std::free(name);
  // Shorten: drop argument lists and template arguments beyond 100 characters.
  if (out.size() > 110) out = out.substr(0, 110) + "...";
  return out;
}

void print_top(const char* title, const std::map<std::string, int>& counts, int total, int k) {
  std::vector<std::pair<int, std::string>> v;
  for (const auto& [name, c] : counts) v.emplace_back(c, name);
  std::sort(v.rbegin(), v.rend());
  std::printf("\n%s (%% of %d samples)\n", title, total);
  for (int i = 0; i < static_cast<int>(v.size()) && i < k; ++i)
    std::printf("%6.1f%%  %s\n", 100.0 * v[i].first / total, v[i].second.c_str());
}

template <class T>
int run(std::int64_t n, int calls, int graphs) {
  gpuqr::Context ctx = gpuqr::Context::cuda(0);
  if (graphs != 2) ctx.set_cuda_graphs(graphs == 1);
  const gpuqr::Matrix<T> host = gpuqr::testing::random_matrix<T>(n, n, 42);
  const gpuqr::Matrix<T> src = host.clone(gpuqr::MemorySpace::device);
  gpuqr::Matrix<T> a = host.clone(gpuqr::MemorySpace::device);
  gpuqr::Matrix<T> tau(n, 1, gpuqr::MemorySpace::device, 0);
  std::vector<double> enqueue_ms, total_ms, warmup_ms;
  for (int c = -3; c < calls; ++c) {  // 3 warmup calls
    gpuqr::detail::copy_2d(a.data(), a.ld(), gpuqr::MemorySpace::device, src.data(), src.ld(),
                           gpuqr::MemorySpace::device, n, n, sizeof(T));
    ctx.synchronize();
    g_inside.store(c >= 0);
    const auto t0 = std::chrono::steady_clock::now();
    gpuqr::geqrf<T>(ctx, a.view(),
                    gpuqr::VectorView<T>(tau.data(), n, gpuqr::MemorySpace::device, 0));
    const auto t1 = std::chrono::steady_clock::now();
    ctx.synchronize();
    const auto t2 = std::chrono::steady_clock::now();
    g_inside.store(false);
    if (c < 0) {
      warmup_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      warmup_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t0).count());
    } else {
      enqueue_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      total_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t0).count());
    }
  }
  std::sort(enqueue_ms.begin(), enqueue_ms.end());
  std::sort(total_ms.begin(), total_ms.end());
  const int samples = std::min(g_count.load(), kMaxSamples);
  std::printf(
      "geqrf %lld x %lld %s graphs %d: %d calls, median host time to return %.3f ms, "
      "to finish %.3f ms (min %.3f / %.3f); %d samples\n",
      static_cast<long long>(n), static_cast<long long>(n), sizeof(T) == 8 ? "d" : "s", graphs,
      calls, enqueue_ms[enqueue_ms.size() / 2], total_ms[total_ms.size() / 2], enqueue_ms.front(),
      total_ms.front(), samples);
  const gpuqr::Context::GraphStats gs = ctx.graph_stats();
  std::printf(
      "warmup calls 1-3, ms to return / to finish: %.3f / %.3f, %.3f / %.3f, %.3f / %.3f; "
      "graph stats: first calls %lld, captures %lld, launches %lld, fallbacks %lld\n",
      warmup_ms[0], warmup_ms[1], warmup_ms[2], warmup_ms[3], warmup_ms[4], warmup_ms[5],
      static_cast<long long>(gs.first_calls), static_cast<long long>(gs.captures),
      static_cast<long long>(gs.launches), static_cast<long long>(gs.fallbacks));
  std::map<std::string, int> inclusive, innermost, inner_gpuqr, inner_caller;
  // Every distinct frame named once: exported symbols by backtrace_symbols, this program's
  // local ones (anonymous namespaces) by addr2line on their offsets, in one batch.
  std::map<void*, std::string> names;
  {
    std::vector<void*> frames;
    for (int i = 0; i < samples; ++i)
      for (int d = 2; d < g_samples[i].depth; ++d) frames.push_back(g_samples[i].frames[d]);
    std::sort(frames.begin(), frames.end());
    frames.erase(std::unique(frames.begin(), frames.end()), frames.end());
    char** syms = backtrace_symbols(frames.data(), static_cast<int>(frames.size()));
    std::vector<std::pair<void*, std::string>> local;  // frame, offset in this program
    for (std::size_t k = 0; k < frames.size(); ++k) {
      const char* sym = syms != nullptr ? syms[k] : "?";
      const char* open = std::strchr(sym, '(');
      if (open != nullptr && open[1] == '+' && std::strstr(sym, "gpuqr_host_profile") != nullptr) {
        const char* close = std::strchr(open, ')');
        local.emplace_back(frames[k], std::string(open + 2, close != nullptr ? close : open + 2));
      }
      names[frames[k]] = function_of(sym);
    }
    std::free(syms);
    for (std::size_t k0 = 0; k0 < local.size(); k0 += 200) {
      std::string cmd = "addr2line -f -C -e /proc/" + std::to_string(getpid()) + "/exe";
      const std::size_t k1 = std::min(local.size(), k0 + 200);
      for (std::size_t k = k0; k < k1; ++k) cmd += " " + local[k].second;
      FILE* pipe = popen(cmd.c_str(), "r");
      if (pipe == nullptr) break;
      char line[4096];
      for (std::size_t k = k0; k < k1; ++k) {
        if (std::fgets(line, sizeof line, pipe) == nullptr) break;
        std::string f(line);
        while (!f.empty() && (f.back() == '\n' || f.back() == '\r')) f.pop_back();
        if (f.size() > 110) f = f.substr(0, 110) + "...";
        if (!f.empty() && f != "??") names[local[k].first] = f;
        if (std::fgets(line, sizeof line, pipe) == nullptr) break;  // file:line
      }
      pclose(pipe);
    }
  }
  auto name = [&](void* frame) -> const std::string& { return names[frame]; };
  for (int i = 0; i < samples; ++i) {
    const Sample& s = g_samples[i];
    std::vector<std::string> seen;
    bool got_gpuqr = false;
    // frames[0] is the handler, [1] the signal trampoline.
    for (int d = 2; d < s.depth; ++d) {
      const std::string& f = name(s.frames[d]);
      if (d == 2) innermost[f]++;
      if (!got_gpuqr && f.rfind("gpuqr::", 0) == 0 && f.find("testing") == std::string::npos) {
        inner_gpuqr[f]++;
        // with the library function it called (the frame inside it)
        inner_caller[f + "  ->  " + name(s.frames[std::max(2, d - 1)])]++;
        got_gpuqr = true;
      }
      if (std::find(seen.begin(), seen.end(), f) == seen.end()) {
        seen.push_back(f);
        inclusive[f]++;
      }
    }
  }
  print_top("inclusive (on the stack)", inclusive, samples, 60);
  print_top("innermost frame", innermost, samples, 30);
  print_top("innermost gpuqr frame", inner_gpuqr, samples, 40);
  print_top("innermost gpuqr frame -> the frame it called", inner_caller, samples, 40);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 1024;
  const int calls = argc > 2 ? std::atoi(argv[2]) : 200;
  const bool single = argc > 3 && argv[3][0] == 's';
  const int graphs = argc > 4 ? std::atoi(argv[4]) : 0;
  g_samples = new Sample[kMaxSamples];
  void* warm[4];
  backtrace(warm, 4);  // loads libgcc's unwinder before the handler needs it
  struct sigaction sa {};
  sa.sa_handler = on_prof;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGPROF, &sa, nullptr);
  itimerval timer{};
  timer.it_interval.tv_usec = 50;
  timer.it_value.tv_usec = 50;
  setitimer(ITIMER_PROF, &timer, nullptr);
  return single ? run<float>(n, calls, graphs) : run<double>(n, calls, graphs);
}
