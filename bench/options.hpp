// Command-line options of gpuqr_tester, in the style of the BLAS++/LAPACK++ testers.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpuqr/context.hpp"

namespace gpuqr::bench {

/// The operations the tester times and checks.
enum class Operation { geqrf, orgqr, ormqr, gels };

/// "geqrf", "orgqr", "ormqr" or "gels".
const char* to_string(Operation op);

/// One problem shape: an m x n matrix.
struct Dim {
  std::int64_t m = 0;
  std::int64_t n = 0;
};

/// A bad command line; what() is the message shown above the usage text.
class UsageError : public std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// Everything the command line sets.
struct Options {
  std::vector<Operation> ops;       // default: all four
  std::vector<Dim> dims;            // empty: the backend's default set
  std::vector<char> precisions;     // 'd' and/or 's'; default d
  std::vector<Backend> backends;    // default: cuda when a device is visible, else cpu
  bool backend_all = false;         // --backend all: a missing CUDA device is skipped
  std::string baseline = "auto";    // lapack, cusolver or auto (by backend)
  int repeat = 3;                   // timed repetitions (the median is reported)
  int warmup = 1;                   // untimed repetitions before them
  std::int64_t nrhs = 1;            // right-hand sides of gels and columns of C for ormqr
  std::string json_path;            // --json: one JSON object per case
  bool check = true;                // compute the accuracy ratios
  double tolerance = 30.0;          // ratios below pass (LAPACK's tester threshold)
  std::uint64_t seed = 42;          // base seed of the random inputs
  bool check_finite = true;         // gpuqr's NaN/Inf input scan (Context::set_check_finite)
  bool host_data = false;           // --host-data: gpuqr gets host matrices (staged on CUDA)
  /// --graph: CUDA graph replay of gpuqr's calls (Context::cuda_graphs): "default" (the
  /// context's default: GPUQR_GRAPH=1 turns it on), "off", "on", or "both" (each case timed
  /// with graphs off, then on; time_ms is off, graph_ms on).
  std::string graph = "default";
  bool help = false;
};

/// Parses argv; throws UsageError on an unknown option or a malformed value.
Options parse_options(int argc, char** argv);

/// Parses "1024x1024,2048,1000:4000:1000": N is N x N, MxN is M x N, a:b:s is the square
/// sizes a, a+s, ... <= b. Throws UsageError.
std::vector<Dim> parse_dims(const std::string& text);

/// The sizes run when --dim is not given: a quick set on the CPU, larger ones on a GPU.
std::vector<Dim> default_dims(Backend backend);

/// The --help text.
std::string usage_text();

}  // namespace gpuqr::bench
