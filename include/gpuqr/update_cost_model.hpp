// gpuqr/update_cost_model.hpp: predicts, before running it, whether a QR update of an
// UpdatableQR beats refactoring (issue 6; Andrew & Dingle's conclusion asks for this).
//
// The model counts what an update enqueues (the same loops as src/core/qr_update_*.cpp: panel
// factorizations, block-reflector GEMMs, copies, launches) and prices each piece with rates
// measured on the device through the library's own leaves (GEMM by shape class, memory
// bandwidth, launch latency, panel cost per column, our geqrf's efficiency). Calibration runs
// once per device and process (well under a second on a GPU) and is cached in memory and on
// disk: $XDG_CACHE_HOME/gpuqr (or ~/.cache/gpuqr)/update_rates-<device>-<version>.txt.
// GPUQR_NO_RATE_CACHE=1 disables the disk cache (the in-memory cache stays).
#pragma once

#include <cstdint>
#include <string>

#include "gpuqr/context.hpp"

namespace gpuqr {

/// Which Q an UpdatableQR keeps (see the table in gpuqr/update.hpp).
enum class UpdateQ { none, thin, full };

/// The updates the model prices. m x n is the size before the update; p the rows or columns
/// added or removed (the rank r for rank_k); k the position.
enum class UpdateOp { add_rows, remove_rows, add_columns, remove_columns, rank_k };

/// Name of an UpdateOp ("add_columns", ...).
const char* to_string(UpdateOp op);

/// Rates of one precision on one device (SI units; all positive and finite after calibrate).
struct UpdateRates {
  double gemm_large = 0;      ///< flop/s of a GEMM whose three dimensions are all large
  double gemm_thin = 0;       ///< flop/s of a GEMM with one dimension 64 (block reflectors)
  double bandwidth = 0;       ///< bytes/s of a device-to-device matrix copy (read + write)
  double launch_seconds = 0;  ///< seconds per enqueued operation (tiny kernel, back to back)
  double panel_column_seconds = 0;      ///< panel_qr: fixed seconds per column
  double panel_row_column_seconds = 0;  ///< panel_qr: seconds per column and row
  double geqrf_efficiency = 0;  ///< measured / modelled time of our geqrf (a correction factor)
};

/// Predicted times of one update and of its alternatives (seconds).
struct UpdatePrediction {
  double update_seconds = 0;    ///< the update as UpdatableQR runs it
  double refactor_seconds = 0;  ///< geqrf + ormqr + trsm of the updated matrix (the TUS baseline)
  double rebuild_seconds = 0;   ///< rebuilding the object: A~ = Q R, geqrf, Q formed, d = Q^T b~
  std::int64_t launches = 0;    ///< device operations the update enqueues (0 on the CPU)
};

/// Device rates and the flop/launch model built on them. Copyable, immutable after
/// construction; predict() is host arithmetic only (no device work, no synchronization).
class UpdateCostModel {
 public:
  /// The model of ctx's device: from the in-memory cache, else the disk cache, else measured
  /// now (a few short runs of the library's leaves on ctx's stream; synchronizes) and stored
  /// in both caches. Keyed by backend, device name and library version.
  static UpdateCostModel calibrate(const Context& ctx);
  /// Measures now, bypassing and not touching both caches.
  static UpdateCostModel measure(const Context& ctx);
  /// A model from given rates (tests, what-if studies). `cuda` selects the block widths and
  /// launch accounting of the CUDA drivers.
  UpdateCostModel(std::string device, bool cuda, UpdateRates fp32, UpdateRates fp64);

  /// Predicted times of `op` on an m x n object (p, k as UpdateOp says) in FP64 (`fp64`) or
  /// FP32, keeping `q_mode`'s Q, with `nrhs` right-hand sides.
  UpdatePrediction predict(UpdateOp op, std::int64_t m, std::int64_t n, std::int64_t p,
                           std::int64_t k, bool fp64 = true, UpdateQ q_mode = UpdateQ::full,
                           std::int64_t nrhs = 1) const;

  /// The rates of one precision.
  const UpdateRates& rates(bool fp64) const noexcept { return fp64 ? fp64_ : fp32_; }
  /// The cache key: backend, device name and library version.
  const std::string& device() const noexcept { return device_; }
  bool cuda() const noexcept { return cuda_; }

  /// The disk cache file of a key (empty when neither XDG_CACHE_HOME nor HOME is set).
  static std::string cache_file(const std::string& device);
  /// Writes / reads the model to / from `path` (text, one rate per line). load returns false
  /// (and leaves `out` alone) when the file is missing, for another key, or malformed.
  void save(const std::string& path) const;
  static bool load(const std::string& path, const std::string& device, UpdateCostModel& out);
  /// Forgets the in-memory cache (tests).
  static void clear_memory_cache();
  /// The cache key of ctx.
  static std::string key_of(const Context& ctx);

 private:
  std::string device_;
  bool cuda_ = false;
  UpdateRates fp32_, fp64_;
};

}  // namespace gpuqr
