// One result row per case: the aligned table on stdout and the JSON-lines file.
#pragma once

#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>

namespace gpuqr::bench {

/// Missing values (no baseline, no check, a failed run) are NaN: "-" in the table, null in JSON.
inline constexpr double kMissing = std::numeric_limits<double>::quiet_NaN();

/// The outcome of one case.
struct Row {
  std::string op;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t nrhs = 0;            // gels and ormqr; 0 (shown "-") for geqrf and orgqr
  std::string precision;            // "d" or "s"
  std::string backend;              // "cpu" or "cuda"
  std::string device;               // Context::describe() of the backend
  double time_ms = kMissing;        // gpuqr, median of the repetitions
  double gflops = kMissing;         // LAWN 41 count / time
  std::string baseline;             // "lapack", "cusolver" or "" (none)
  double baseline_time_ms = kMissing;
  double baseline_gflops = kMissing;
  double speedup = kMissing;        // baseline time / gpuqr time (> 1: gpuqr is faster)
  double error = kMissing;          // backward error ratio (see README)
  double orth = kMissing;           // orthogonality ratio (geqrf, orgqr)
  double baseline_error = kMissing;
  double baseline_orth = kMissing;
  double transfer_ms = kMissing;    // --host-data on CUDA: staging copies per call (in time_ms)
  std::string graph = "-";          // CUDA graph replay in time_ms: "off", "on" ("-" on the CPU)
  double graph_time_ms = kMissing;  // --graph both: gpuqr with graphs on, median
  double graph_speedup = kMissing;  // baseline time / graph_time_ms
  std::string status;               // "pass", "FAIL", "error", "nocheck" or "skip"
};

/// Prints the column header (and an underline) to `out`.
void print_header(std::FILE* out);

/// Prints `row` as one line aligned under the header.
void print_row(std::FILE* out, const Row& row);

/// `row` as one JSON object on one line (no trailing newline); NaN values become null.
std::string to_json(const Row& row);

/// `value` with printf `spec`, or "-" when it is missing (NaN).
std::string fmt(double value, const char* spec);

/// `text` as a JSON string literal, quotes included.
std::string json_string(const std::string& text);

/// `value` as a JSON number (9 significant digits), or null for NaN/Inf.
std::string json_number(double value);

}  // namespace gpuqr::bench
