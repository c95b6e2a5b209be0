// Internal pieces of the update cost model (src/core/update_cost_model.cpp: the flop/launch
// model and the caches; src/core/update_cost_calibrate.cpp: the micro-benchmarks).
#pragma once

#include <cstdint>

#include "gpuqr/update_cost_model.hpp"

namespace gpuqr::detail {

/// Prices leaf operations with one precision's rates, accumulating seconds and launches. The
/// loops that call it mirror the drivers (qr_update_reduce.hpp, qr_update_*.cpp, blocked_qr).
class CostPricer {
 public:
  CostPricer(const UpdateRates& rates, bool cuda, std::int64_t elem_bytes)
      : r_(rates), cuda_(cuda), es_(elem_bytes) {}

  /// GEMM C (mm x nn) += A (mm x kk) B (kk x nn), at the rate of its smallest dimension and
  /// never faster than its memory traffic.
  void gemm(std::int64_t mm, std::int64_t nn, std::int64_t kk);
  /// A copy / fill / small elementwise pass over rows x cols (read + write).
  void copy(std::int64_t rows, std::int64_t cols);
  /// panel_qr of h x b (b <= 32): b columns at the calibrated per-column cost.
  void panel(std::int64_t h, std::int64_t b);
  /// larfb: a block reflector of k columns and h rows applied to nc columns (left) or to a
  /// matrix of nc rows (right): GEMM, TRMM, GEMM.
  void larfb(std::int64_t h, std::int64_t k, std::int64_t nc);
  /// A host round trip (abs_diagonal, column_norms, an upload): launch + synchronization.
  void sync() { seconds_ += 4 * r_.launch_seconds; launches_ += 1; }
  /// One BandReducer step: panel h x jb, rest_cols other columns, d (nrhs), Q (mq rows).
  void step(std::int64_t h, std::int64_t jb, std::int64_t rest_cols, std::int64_t nrhs,
            std::int64_t mq);
  /// BandReducer::reduce_band of rows x cols with bw subdiagonals, nb-column panels.
  void reduce_band(std::int64_t rows, std::int64_t cols, std::int64_t bw, std::int64_t nb,
                   std::int64_t nrhs, std::int64_t mq);
  /// BandReducer::reduce_from_bottom of rows x (p + rest) by windows of s + p rows.
  void reduce_from_bottom(std::int64_t rows, std::int64_t p, std::int64_t rest, std::int64_t s,
                          std::int64_t nb, std::int64_t nrhs, std::int64_t mq);
  /// Our blocked geqrf of rows x cols (times the calibrated efficiency when `corrected`).
  void geqrf(std::int64_t rows, std::int64_t cols, bool corrected = true);
  /// ormqr with k reflectors of length h applied to nc columns (or nc rows from the right).
  void ormqr(std::int64_t h, std::int64_t k, std::int64_t nc);
  /// trsm with an n x n triangle on nrhs columns.
  void trsm(std::int64_t n, std::int64_t nrhs);

  double seconds() const noexcept { return seconds_; }
  std::int64_t launches() const noexcept { return launches_; }
  void add_seconds(double s) { seconds_ += s; }

 private:
  double gemm_rate(std::int64_t min_dim) const;
  const UpdateRates& r_;
  bool cuda_;
  std::int64_t es_;
  double seconds_ = 0;
  std::int64_t launches_ = 0;
};

/// The blocked-geqrf model without the efficiency correction (calibration divides by it).
double modelled_geqrf_seconds(const UpdateRates& rates, bool cuda, std::int64_t elem_bytes,
                              std::int64_t rows, std::int64_t cols);

}  // namespace gpuqr::detail
