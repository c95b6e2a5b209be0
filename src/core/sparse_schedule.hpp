// The sparse QR scheduler's plan (Yeralan, Davis et al., section 3.3), backend-agnostic: plain
// task descriptors in flat arrays, no kernels. Each front moves through
//   waiting (for its children) -> assembling -> factoring -> done,
// and each "launch" (one kernel launch of the task kernel on a GPU; one pass over the list on
// the CPU) holds independent tasks of many fronts at different tree levels: S-Assembly of A's
// rows into a front, Pack-Assembly of a finished child's contribution block into its parent,
// and Factorize (a whole front, or one panel of a large front: then the front occupies
// several consecutive launches while smaller fronts start and finish beside it).
//
// Rules, per stage (SparseStagePlan): every front of the stage is S-assembled in the stage's
// first launch, together with the Pack-Assembly of the carried-in contribution blocks; a
// child that finishes in launch L is packed into its parent (same stage) in launch L + 1; a
// front is factorized from the first launch after all of its assembly tasks. Tasks within a
// launch never depend on each other, and launch L + 1's list depends only on which fronts
// finish in launch L, which is known when launch L is issued: the CPU builds it while L runs.
#pragma once

#include <cstdint>
#include <vector>

#include "gpuqr/sparse_analysis.hpp"
#include "src/core/sparse_assembly.hpp"
#include "src/core/sparse_stages.hpp"

namespace gpuqr::detail {

/// What a task does.
enum class SparseTaskKind : std::uint8_t {
  s_assembly,       ///< scatter front's A rows (SparseAssemblyMaps::s_* of `front`)
  pack_assembly,    ///< scatter `child`'s contribution block into `front` (its parent)
  factorize_front,  ///< dense staircase QR of the whole `front`
  factorize_panel,  ///< panel `panel` of `panels` of `front` (columns [col_begin, col_end))
};

/// States of a front in the scheduler.
enum class FrontState : std::uint8_t { waiting, assembling, factoring, done };

/// One task of a launch.
struct SparseTask {
  SparseTaskKind kind = SparseTaskKind::s_assembly;
  std::int64_t front = 0;
  std::int64_t child = -1;      ///< pack_assembly: the front whose CB is packed
  std::int64_t panel = 0;       ///< factorize_panel: which panel (0-based)
  std::int64_t panels = 1;      ///< factorize_*: how many panels the front has
  std::int64_t col_begin = 0;   ///< factorize_*: front columns of this task
  std::int64_t col_end = 0;
};

/// Options of the scheduler.
struct SparseScheduleOptions {
  /// Factorize fronts with more than this many factorized columns (min(rows, cols)) panel by
  /// panel, one panel per launch; 0: every front in one task.
  std::int64_t panel_columns = 0;
};

/// The whole plan: launches in execution order, stage after stage.
struct SparseSchedule {
  /// launches + 1 offsets into tasks.
  std::vector<std::int64_t> launch_ptr;
  std::vector<SparseTask> tasks;
  /// stages + 1 offsets into the launches.
  std::vector<std::int64_t> stage_launch_ptr;
  /// Per front: the launch of its first assembly task (-1 when it has none), of its first
  /// factorize task, and of its last one (it is done at the end of that launch).
  std::vector<std::int64_t> assembly_launch, factor_begin, factor_end;
  /// Per front: its depth in the front tree (roots 0).
  std::vector<std::int64_t> depth;

  std::int64_t launches() const noexcept {
    return static_cast<std::int64_t>(launch_ptr.size()) - 1;
  }
  /// Each front's state after launch `launch` has run (-1: before the first launch).
  std::vector<FrontState> states_after(std::int64_t launch) const;
};

/// Builds the schedule of `stages` (which cover `an`'s fronts). Throws InvalidArgument for
/// a negative panel_columns, Error when the stages do not cover the fronts in postorder.
SparseSchedule plan_sparse_schedule(const SparseAnalysis& an, const SparseAssemblyMaps& maps,
                                    const SparseStagePlan& stages,
                                    const SparseScheduleOptions& options = {});

}  // namespace gpuqr::detail
