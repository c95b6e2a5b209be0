// The tile engine's device side (issues 8 and 9): the bucket schedulers (tile_scheduler.hpp)
// plan each launch on the host, the tasks are packed into plain descriptors (TileTaskDesc) and
// one kernel launch runs every task of a launch, a thread block per task (src/cuda/
// tile_engine.cu). Packing and the dry run that sizes every buffer up front are host code,
// tested in CI; the CUDA leaves are declared here once, with stubs in CPU-only builds.
//
// Reflector storage: one slot per bundle ever made (the schedulers' bundle ids, offset per
// matrix by slot_base), so that Q can be applied after the factorization. A slot holds V
// (hmax x kTile, leading dimension hmax, unit diagonal and zeros above written out) and then
// T (kTile x kTile, upper triangular, as LAPACK's larft), hmax = kTile * the largest bundle.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "gpuqr/matrix.hpp"
#include "src/core/context_impl.hpp"
#include "src/core/tile_scheduler.hpp"

namespace gpuqr::detail {

/// Row tiles per bundle the device kernel takes at most (fixed arrays in TileTaskDesc; the
/// kernel's shared memory grows with the largest bundle of a run: 8 x 32 rows of FP64 for V
/// and C is ~150 KB).
inline constexpr int kMaxTileBundle = 8;

/// One task as the kernel reads it (plain data, 112 bytes). Slots are absolute (the bundle's
/// id plus its matrix's slot_base). rows/next_rows: ascending row tile indices (so a partial
/// last row tile of the matrix can only be a bundle's last).
struct TileTaskDesc {
  std::int32_t kind = 0;  ///< TileTaskKind
  std::int32_t matrix = 0;
  std::int32_t slot = -1;
  std::int32_t next_slot = -1;  ///< apply_factorize: the next bundle's slot
  std::int32_t col = 0;         ///< the column tile the bundle `slot` was factorized at
  std::int32_t c0 = 0, c1 = 0;  ///< apply: column tiles [c0, c1); apply_factorize: c0 = col + 1
  std::int32_t nrows = 0, next_nrows = 0;
  std::int32_t rows[kMaxTileBundle] = {};
  std::int32_t next_rows[kMaxTileBundle] = {};
  std::int32_t pad[3] = {};  // a 16-byte multiple
};
static_assert(sizeof(TileTaskDesc) == 112, "TileTaskDesc is uploaded as raw bytes");

/// One matrix of an engine run (column-major in device memory).
template <class T>
struct TileMatrix {
  T* a = nullptr;
  std::int64_t ld = 1;
  std::int32_t m = 0, n = 0;
};

/// What a dry run of the schedulers (on copies: they are left untouched) says about the run:
/// slots per matrix, the largest launch and bundle, for sizing every buffer once.
struct TilePlan {
  std::vector<std::int64_t> slot_base;  ///< per matrix: its first slot
  std::int64_t slots = 0;
  std::int64_t launches = 0;
  std::int64_t max_tasks = 0;   ///< tasks of the largest launch
  std::int64_t total_tasks = 0;
  std::int32_t max_bundle = 1;  ///< row tiles of the largest bundle (at least 1)
};
TilePlan plan_tile_engine(const std::vector<TileScheduler>& schedulers);

/// Appends the descriptors of `tasks` to `out`; throws InvalidArgument for a bundle of more
/// than kMaxTileBundle row tiles, rows not ascending, or a slot beyond 32-bit indices.
void pack_tile_tasks(const std::vector<TileTask>& tasks, const std::vector<std::int64_t>& slot_base,
                     std::vector<TileTaskDesc>& out);

/// The reflectors of an engine run: the slots (device memory) and, per launch, the bundles
/// factorized in it (kind factorize: matrix, slot, col, rows), which is all that applying Q
/// later needs.
template <class T>
struct TileFactors {
  Matrix<T> slots;           ///< slot_elems x slots, device
  std::int64_t slot_elems = 0;
  std::int32_t hmax = kTile;  ///< V's rows per slot (kTile x the largest bundle)
  std::vector<std::vector<TileTaskDesc>> factorized;  ///< per launch
};

/// Called after each launch is enqueued (before the next is planned): the launch's index and
/// tasks. Tests synchronize there and compare with the CPU twin.
using TileLaunchHook = std::function<void(std::int64_t, const std::vector<TileTask>&)>;

}  // namespace gpuqr::detail

#define GPUQR_DECLARE_TILE_ENGINE_KERNELS                                                    \
  /* Runs the schedulers to the end on the device: one task kernel launch per launch, for  \
     every matrix (mats[i] belongs to the scheduler with matrix id i; schedulers advance).  \
     factors receives the reflectors. Asynchronous on the context's stream, apart from the  \
     pinned staging's reuse (the host waits for a copy two launches back) and the hook. */ \
  template <class T>                                                                         \
  std::int64_t tile_qr(detail::ContextImpl& ctx, const std::vector<detail::TileMatrix<T>>& mats, \
                       std::vector<detail::TileScheduler>& schedulers,                       \
                       detail::TileFactors<T>& factors, const detail::TileLaunchHook& hook);  \
  /* Undoes tile_qr: every matrix becomes Q R (its factorizations applied back, last        \
     first), so Q R = A can be checked on the device's own output. Asynchronous. */          \
  template <class T>                                                                         \
  void tile_multiply_by_q(detail::ContextImpl& ctx,                                          \
                          const std::vector<detail::TileMatrix<T>>& mats,                    \
                          const detail::TileFactors<T>& factors, int apply_cols);

#define GPUQR_INSTANTIATE_TILE_ENGINE_KERNELS(T)                                             \
  template std::int64_t tile_qr<T>(detail::ContextImpl&, const std::vector<detail::TileMatrix<T>>&, \
                                   std::vector<detail::TileScheduler>&, detail::TileFactors<T>&, \
                                   const detail::TileLaunchHook&);                           \
  template void tile_multiply_by_q<T>(detail::ContextImpl&,                                  \
                                      const std::vector<detail::TileMatrix<T>>&,             \
                                      const detail::TileFactors<T>&, int);

namespace gpuqr::kernels::cuda {
GPUQR_DECLARE_TILE_ENGINE_KERNELS
}  // namespace gpuqr::kernels::cuda
