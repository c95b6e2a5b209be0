// The bucket scheduler (see tile_scheduler.hpp).
#include "src/core/tile_scheduler.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "gpuqr/error.hpp"

namespace gpuqr::detail {

TileScheduler::TileScheduler(std::int32_t matrix, std::int32_t row_tiles, std::int32_t col_tiles,
                             std::vector<std::int32_t> leftmost, TileSchedulerOptions options)
    : matrix_(matrix), col_tiles_(col_tiles), options_(options), leftmost_(std::move(leftmost)) {
  GPUQR_CHECK_ARG(
      row_tiles >= 0 && col_tiles >= 0 && static_cast<std::int32_t>(leftmost_.size()) == row_tiles,
      "TileScheduler: " + std::to_string(leftmost_.size()) + " leftmost column tiles for " +
          std::to_string(row_tiles) + " row tiles");
  GPUQR_CHECK_ARG(options_.bundle >= 1 && options_.apply_cols >= 1,
                  "TileScheduler: bundle and apply_cols must be at least 1");
  for (std::int32_t r = 0; r < row_tiles; ++r)
    GPUQR_CHECK_ARG(leftmost_[r] >= 0 && leftmost_[r] <= col_tiles,
                    "TileScheduler: row tile " + std::to_string(r) + "'s leftmost column tile " +
                        std::to_string(leftmost_[r]) + " is outside 0.." +
                        std::to_string(col_tiles));
  triangular_.assign(leftmost_.size(), 0);
  in_bundle_.assign(leftmost_.size(), -1);
}

TileScheduler TileScheduler::dense(std::int32_t matrix, std::int64_t m, std::int64_t n,
                                   TileSchedulerOptions options) {
  GPUQR_CHECK_ARG(m >= 0 && n >= 0, "TileScheduler::dense: negative dimensions");
  const auto rt = static_cast<std::int32_t>((m + kTile - 1) / kTile);
  const auto ct = static_cast<std::int32_t>((n + kTile - 1) / kTile);
  return TileScheduler(matrix, rt, ct, std::vector<std::int32_t>(rt, ct > 0 ? 0 : ct), options);
}

std::int32_t TileScheduler::new_bundle(std::int32_t col, std::vector<std::int32_t> rows,
                                       State state) {
  const auto id = static_cast<std::int32_t>(bundles_.size());
  for (const std::int32_t r : rows) in_bundle_[r] = id;
  bundles_.push_back(Bundle{col, std::move(rows), state});
  active_.push_back(id);
  return id;
}

bool TileScheduler::plan(std::vector<TileTask>& tasks) {
  const std::size_t before = tasks.size();
  // 1. Bundles factorized in the last launch apply their reflector to the column tiles on the
  //    right; the chunk with the next column tile may carry on with the next bucket's Factorize.
  //    Idle row tiles of each bucket, for bundle growth (ascending).
  std::vector<std::vector<std::int32_t>> idle(static_cast<std::size_t>(col_tiles_));
  auto collect_idle = [&] {
    for (auto& list : idle) list.clear();
    for (std::int32_t r = 0; r < row_tiles(); ++r)
      if (in_bundle_[r] < 0 && leftmost_[r] < col_tiles_) idle[leftmost_[r]].push_back(r);
  };
  collect_idle();
  const std::vector<std::int32_t> active = active_;
  for (const std::int32_t id : active) {
    if (bundles_[id].state != State::factorized) continue;
    // Copies: new_bundle() below grows bundles_.
    const std::int32_t col = bundles_[id].col;
    const std::vector<std::int32_t> rows = bundles_[id].rows;
    for (std::int32_t c0 = col + 1; c0 < col_tiles_; c0 += options_.apply_cols) {
      TileTask t;
      t.matrix = matrix_;
      t.bundle = id;
      t.col = col;
      t.c0 = c0;
      t.c1 = std::min(col_tiles_, c0 + options_.apply_cols);
      t.rows = rows;
      t.kind = TileTaskKind::apply;
      if (c0 == col + 1 && options_.pipeline && rows.size() >= 2) {
        std::vector<std::int32_t> next(rows.begin() + 1, rows.end());
        for (const std::int32_t r : next) {
          leftmost_[r] = c0;
          triangular_[r] = 0;
        }
        std::vector<std::int32_t>& delta = idle[c0];
        while (!delta.empty() && static_cast<int>(next.size()) < options_.bundle) {
          next.push_back(delta.back());  // new_bundle() below takes it out of the idle set
          delta.pop_back();
        }
        std::sort(next.begin(), next.end());
        t.kind = TileTaskKind::apply_factorize;
        t.next_rows = next;
        t.next_bundle = new_bundle(c0, std::move(next), State::factorizing);
      }
      tasks.push_back(std::move(t));
    }
    bundles_[id].state = State::applying;
  }
  // 2. Idle row tiles (in no bundle) form new bundles in their bucket, unless a bucket holds
  //    just one and it is already triangular.
  collect_idle();
  for (std::int32_t j = 0; j < col_tiles_; ++j) {
    const std::vector<std::int32_t>& tiles = idle[j];
    const auto k = static_cast<std::int32_t>(tiles.size());
    if (k == 0 || (k == 1 && triangular_[tiles[0]])) continue;
    // ceil(k / bundle) bundles of near-equal size, rows ascending (the top row tile, which
    // keeps R's triangle, is the lowest: a full tile unless the bundle is the last tile only).
    const std::int32_t groups = (k + options_.bundle - 1) / options_.bundle;
    for (std::int32_t g = 0, at = 0; g < groups; ++g) {
      const std::int32_t size = k / groups + (g < k % groups ? 1 : 0);
      std::vector<std::int32_t> rows(tiles.begin() + at, tiles.begin() + at + size);
      at += size;
      TileTask t;
      t.kind = TileTaskKind::factorize;
      t.matrix = matrix_;
      t.col = j;
      t.rows = rows;
      t.bundle = new_bundle(j, std::move(rows), State::factorizing);
      tasks.push_back(std::move(t));
    }
  }
  return tasks.size() > before;
}

void TileScheduler::advance() {
  std::vector<std::int32_t> still;
  for (const std::int32_t id : active_) {
    Bundle& b = bundles_[id];
    if (b.state == State::factorizing) {
      // The top row tile's tile b.col is triangular now, the others' zero.
      triangular_[b.rows[0]] = 1;
      if (b.col + 1 < col_tiles_) {
        b.state = State::factorized;
      } else {  // nothing on the right to apply to: done with this bundle
        for (std::size_t i = 1; i < b.rows.size(); ++i) {
          leftmost_[b.rows[i]] = col_tiles_;
          triangular_[b.rows[i]] = 0;
        }
        b.state = State::finished;
      }
    } else if (b.state == State::applying) {
      for (std::size_t i = 1; i < b.rows.size(); ++i) {
        const std::int32_t r = b.rows[i];
        if (in_bundle_[r] != id) continue;  // pipelined into the next bucket's bundle
        leftmost_[r] = b.col + 1;
        triangular_[r] = 0;
      }
      b.state = State::finished;
    }
    if (b.state == State::finished) {
      for (const std::int32_t r : b.rows)
        if (in_bundle_[r] == id) in_bundle_[r] = -1;
    } else {
      still.push_back(id);
    }
  }
  active_ = std::move(still);
}

bool TileScheduler::done() const {
  if (!active_.empty()) return false;
  std::vector<std::int32_t> count(static_cast<std::size_t>(col_tiles_), 0);
  for (std::int32_t r = 0; r < row_tiles(); ++r) {
    if (leftmost_[r] >= col_tiles_) continue;
    if (!triangular_[r] || ++count[leftmost_[r]] > 1) return false;
  }
  return true;
}

std::vector<std::int32_t> TileScheduler::r_row_tiles() const {
  GPUQR_CHECK_ARG(done(), "TileScheduler::r_row_tiles: the factorization is not done");
  std::vector<std::int32_t> out(static_cast<std::size_t>(col_tiles_), -1);
  for (std::int32_t r = 0; r < row_tiles(); ++r)
    if (leftmost_[r] < col_tiles_) out[leftmost_[r]] = r;
  return out;
}

}  // namespace gpuqr::detail
