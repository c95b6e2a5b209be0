// Wall-clock timing of repeated runs with steady_clock, the input restored before each.
#pragma once

#include <chrono>
#include <vector>

#include "bench/baseline.hpp"

namespace gpuqr::bench {

/// Runs `plan.warmup + plan.repeat` repetitions of: restore(); sync(); [timer] call(); sync();
/// [timer]. Returns the milliseconds of the timed (non-warmup) repetitions. `sync` must wait
/// until all work issued so far has finished (ctx.synchronize() for a gpuqr context), so that
/// neither the restoring copy nor earlier work lands inside the timed region.
template <class Restore, class Call, class Sync>
std::vector<double> time_repetitions(const TimingPlan& plan, Restore&& restore, Call&& call,
                                     Sync&& sync) {
  std::vector<double> times;
  times.reserve(static_cast<std::size_t>(plan.repeat));
  for (int r = 0; r < plan.warmup + plan.repeat; ++r) {
    sync();
    restore();
    sync();
    const auto start = std::chrono::steady_clock::now();
    call();
    sync();
    const auto stop = std::chrono::steady_clock::now();
    if (r >= plan.warmup) {
      times.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
    }
  }
  return times;
}

}  // namespace gpuqr::bench
