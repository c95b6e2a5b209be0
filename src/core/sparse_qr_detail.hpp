// Internal to the sparse QR sources (src/core/sparse_qr_*.cpp): what the factorization and
// the solve/apply code must agree on.
#pragma once

#include <atomic>
#include <cstdint>

#include "gpuqr/sparse_analysis.hpp"

namespace gpuqr::detail {

/// Front rows from this one on are neither R rows nor contribution-block rows: rows R does
/// not reach (a root front passes nothing up). `live` and `cb_rows` are the front's actual
/// counts (SparseQR<T>::Front).
inline std::int64_t first_residual_row(std::int64_t live, std::int64_t cb_rows,
                                       const FrontInfo& f) {
  return f.parent >= 0 ? live + cb_rows : live;
}

/// Tests: run the stage-arena driver (src/core/sparse_qr_device.hpp) on a CPU context too, so
/// that its bookkeeping is checked without a GPU. Off by default (the CPU path is the twin).
inline std::atomic<bool>& sparse_arena_on_cpu() {
  static std::atomic<bool> on{false};
  return on;
}

}  // namespace gpuqr::detail
