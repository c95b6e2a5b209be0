// One tester case: time gpuqr and the baseline on the same input, check both, fill a Row.
#pragma once

#include <cstdint>

#include "bench/baseline.hpp"
#include "bench/options.hpp"
#include "bench/report.hpp"
#include "gpuqr/context.hpp"

namespace gpuqr::bench {

/// What every case of one backend shares.
struct CaseConfig {
  Context ctx = Context::cpu();     // where gpuqr computes
  std::string device;               // ctx.describe(), computed once
  Baseline* baseline = nullptr;     // null: no baseline figures
  TimingPlan plan;
  bool check = true;
  double tolerance = 30.0;
  std::uint64_t seed = 42;
  std::int64_t nrhs = 1;
  bool host_data = false;           // gpuqr's matrices on the host (staged on CUDA)
  bool graph_both = false;          // time gpuqr with graphs off, then on (--graph both)
};

/// Runs `op` on an m x n input in precision T ('d': double, 's': float). Exceptions of
/// gpuqr give status "error" (the message goes to stderr); a failing baseline leaves its
/// columns empty with a warning on stderr. gels with m < n is "skip" (gpuqr's gels needs
/// m >= n).
template <class T>
Row run_case(Operation op, Dim dim, const CaseConfig& config);

/// The LAWN 41 count of `op` (see flops.hpp): orgqr forms the thin Q (k = min(m, n)),
/// ormqr applies Q^T from min(m, n) reflectors to m x nrhs, gels adds ormqr and trsm.
double operation_flops(Operation op, std::int64_t m, std::int64_t n, std::int64_t nrhs);

}  // namespace gpuqr::bench
