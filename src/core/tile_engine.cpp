// Host side of the tile engine (see tile_engine.hpp): the dry run and the task packing.
#include "src/core/tile_engine.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "gpuqr/error.hpp"

namespace gpuqr::detail {

TilePlan plan_tile_engine(const std::vector<TileScheduler>& schedulers) {
  TilePlan plan;
  std::vector<TileScheduler> dry = schedulers;  // copies: planning advances them
  plan.launches = run_tile_launches(dry, [&](std::vector<TileTask>& tasks) {
    plan.max_tasks = std::max<std::int64_t>(plan.max_tasks, static_cast<std::int64_t>(tasks.size()));
    plan.total_tasks += static_cast<std::int64_t>(tasks.size());
    for (const TileTask& t : tasks)
      plan.max_bundle = std::max({plan.max_bundle, static_cast<std::int32_t>(t.rows.size()),
                                  static_cast<std::int32_t>(t.next_rows.size())});
  });
  for (const TileScheduler& s : dry) {
    plan.slot_base.push_back(plan.slots);
    plan.slots += s.bundles_made();
  }
  return plan;
}

namespace {

void copy_rows(const std::vector<std::int32_t>& rows, std::int32_t* out, std::int32_t& count,
               std::size_t task) {
  GPUQR_CHECK_ARG(!rows.empty() && rows.size() <= static_cast<std::size_t>(kMaxTileBundle),
                  "tile engine: task " + std::to_string(task) + " has a bundle of " +
                      std::to_string(rows.size()) + " row tiles (1.." +
                      std::to_string(kMaxTileBundle) + " on the device)");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    // The kernel maps panel row p to row tile rows[p / kTile]: only the last may be partial.
    GPUQR_CHECK_ARG(i == 0 || rows[i] > rows[i - 1],
                    "tile engine: task " + std::to_string(task) + "'s row tiles not ascending");
    out[i] = rows[i];
  }
  count = static_cast<std::int32_t>(rows.size());
}

std::int32_t slot_of(const std::vector<std::int64_t>& slot_base, std::int32_t matrix,
                     std::int32_t bundle, std::size_t task) {
  GPUQR_CHECK_ARG(matrix >= 0 && static_cast<std::size_t>(matrix) < slot_base.size() && bundle >= 0,
                  "tile engine: task " + std::to_string(task) + " names matrix " +
                      std::to_string(matrix) + " / bundle " + std::to_string(bundle) +
                      " outside the plan");
  const std::int64_t slot = slot_base[static_cast<std::size_t>(matrix)] + bundle;
  GPUQR_CHECK_ARG(slot <= std::numeric_limits<std::int32_t>::max(),
                  "tile engine: more than 2^31 bundles in one run");
  return static_cast<std::int32_t>(slot);
}

}  // namespace

void pack_tile_tasks(const std::vector<TileTask>& tasks, const std::vector<std::int64_t>& slot_base,
                     std::vector<TileTaskDesc>& out) {
  out.reserve(out.size() + tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const TileTask& t = tasks[i];
    TileTaskDesc d;
    d.kind = static_cast<std::int32_t>(t.kind);
    d.matrix = t.matrix;
    d.slot = slot_of(slot_base, t.matrix, t.bundle, i);
    d.col = t.col;
    copy_rows(t.rows, d.rows, d.nrows, i);
    if (t.kind == TileTaskKind::factorize) {
      d.c0 = t.col;
      d.c1 = t.col + 1;
    } else {
      GPUQR_CHECK_ARG(t.c0 > t.col && t.c1 >= t.c0,
                      "tile engine: task " + std::to_string(i) + " applies to column tiles [" +
                          std::to_string(t.c0) + ", " + std::to_string(t.c1) + ")");
      d.c0 = t.c0;
      d.c1 = t.c1;
    }
    if (t.kind == TileTaskKind::apply_factorize) {
      d.next_slot = slot_of(slot_base, t.matrix, t.next_bundle, i);
      copy_rows(t.next_rows, d.next_rows, d.next_nrows, i);
    }
    out.push_back(d);
  }
}

}  // namespace gpuqr::detail
