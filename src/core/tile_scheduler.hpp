// The bucket scheduler of Yeralan, Davis et al. (Algorithm 980, section 3.1): the host side of
// the tile engine that batched QR (issue 8) and the sparse fronts (issue 9) will run on.
//
// A matrix is cut into kTile x kTile tiles. Row tile r (kTile rows) sits in column bucket j
// when its leftmost nonzero column tile is j; the factorization moves row tiles to the right
// until each column bucket j < min(row tiles, column tiles) holds exactly one row tile whose
// tile j is upper triangular (R's block row j) and every other row tile is zero (it left the
// last bucket). Per launch, each matrix's scheduler emits independent tasks:
//   * Factorize: QR of a bundle (up to `bundle` row tiles of one bucket) at its column tile;
//     the top row tile becomes triangular, the others zero there; V and T are kept.
//   * Apply: a factorized bundle's block reflector applied to its rows, column tiles
//     [c0, c1) to the right of its column.
//   * ApplyFactorize (pipelining): the Apply of the chunk holding the next column tile, then,
//     in the same task, the Factorize there of the next bucket's new bundle: the bundle's rows
//     less its top row tile, grown by idle row tiles of that bucket (the paper's "delta") up
//     to the bundle size. A bundle advances one bucket per launch.
// Tasks of one launch touch disjoint (row tile, column tile) sets, so they may run in any
// order or all at once; the next launch sees all their results. The schedule is plain host
// code: the CPU twin (tile_engine_twin.hpp) executes it in CI, a GPU task kernel will too.
#pragma once

#include <cstdint>
#include <vector>

namespace gpuqr::detail {

inline constexpr int kTile = 32;

enum class TileTaskKind : std::uint8_t { factorize, apply, apply_factorize };

/// One task. Rows are row tile indices of matrix `matrix`; `rows[0]` is the bundle's top row
/// tile (it keeps the triangle). Factorize: bundle `bundle` at column tile `col`. Apply: the
/// reflector of bundle `bundle` (factorized at `col`) on column tiles [c0, c1). ApplyFactorize:
/// that, then bundle `next_bundle` (its rows `next_rows`: rows[1..] and the delta, ascending)
/// factorized at column tile c0 (= col + 1).
struct TileTask {
  TileTaskKind kind = TileTaskKind::factorize;
  std::int32_t matrix = 0;
  std::int32_t bundle = -1;
  std::int32_t next_bundle = -1;
  std::int32_t col = 0;
  std::int32_t c0 = 0, c1 = 0;
  std::vector<std::int32_t> rows;
  std::vector<std::int32_t> next_rows;
};

struct TileSchedulerOptions {
  int bundle = 4;        ///< row tiles per bundle at most (shared memory bounds it on a GPU)
  int apply_cols = 2;    ///< column tiles per Apply task at most
  bool pipeline = true;  ///< ApplyFactorize tasks (a bundle advances one bucket per launch)
};

/// The bucket scheduler of one matrix of row_tiles x col_tiles tiles. `leftmost[r]` is row
/// tile r's leftmost nonzero column tile (all 0 for a dense matrix; a staircase for a sparse
/// front; col_tiles for a row tile that is zero).
class TileScheduler {
 public:
  TileScheduler(std::int32_t matrix, std::int32_t row_tiles, std::int32_t col_tiles,
                std::vector<std::int32_t> leftmost, TileSchedulerOptions options = {});
  /// A dense matrix of m x n entries.
  static TileScheduler dense(std::int32_t matrix, std::int64_t m, std::int64_t n,
                             TileSchedulerOptions options = {});

  /// Appends this launch's tasks; false (nothing appended) once the factorization is done.
  bool plan(std::vector<TileTask>& tasks);
  /// Records that the tasks of the last plan() have run.
  void advance();
  bool done() const;

  std::int32_t row_tiles() const { return static_cast<std::int32_t>(leftmost_.size()); }
  std::int32_t col_tiles() const { return col_tiles_; }
  /// When done, per column tile j: the row tile whose tile j is R's triangle (block row j of
  /// R), or -1 where bucket j ended empty (j >= row tiles, or a staircase that skips it).
  std::vector<std::int32_t> r_row_tiles() const;
  std::int32_t bundles_made() const { return static_cast<std::int32_t>(bundles_.size()); }

 private:
  enum class State : std::uint8_t { factorizing, factorized, applying, finished };
  struct Bundle {
    std::int32_t col = 0;
    std::vector<std::int32_t> rows;
    State state = State::factorizing;
  };
  std::int32_t new_bundle(std::int32_t col, std::vector<std::int32_t> rows, State state);

  std::int32_t matrix_;
  std::int32_t col_tiles_;
  TileSchedulerOptions options_;
  std::vector<std::int32_t> leftmost_;   ///< per row tile; col_tiles_ = zero (left the matrix)
  std::vector<char> triangular_;         ///< per row tile: its leftmost tile is triangular
  std::vector<std::int32_t> in_bundle_;  ///< per row tile: its active bundle, or -1
  std::vector<Bundle> bundles_;
  std::vector<std::int32_t> active_;  ///< bundles not finished
};

/// Runs the schedulers of a batch together: one task list per launch holding every matrix's
/// tasks. `run(tasks)` executes a launch (the CPU twin, or a GPU task kernel).
template <class Run>
std::int64_t run_tile_launches(std::vector<TileScheduler>& schedulers, Run&& run) {
  std::int64_t launches = 0;
  std::vector<TileTask> tasks;
  for (;;) {
    tasks.clear();
    for (TileScheduler& s : schedulers) s.plan(tasks);
    if (tasks.empty()) break;
    run(tasks);
    for (TileScheduler& s : schedulers) s.advance();
    ++launches;
  }
  return launches;
}

}  // namespace gpuqr::detail
