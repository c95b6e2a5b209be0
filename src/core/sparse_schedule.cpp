// The sparse QR scheduler's plan: launches of S-Assembly, Pack-Assembly and Factorize tasks.
#include "src/core/sparse_schedule.hpp"

#include <algorithm>
#include <string>

#include "gpuqr/error.hpp"

namespace gpuqr::detail {

using I = std::int64_t;

namespace {

/// Factorize tasks of front f, in launch order.
std::vector<SparseTask> factor_tasks(const FrontInfo& fr, I f, I panel_columns) {
  const I k = std::min(fr.rows, static_cast<I>(fr.cols.size()));
  const I panels = panel_columns > 0 && k > panel_columns ? (k + panel_columns - 1) / panel_columns : 1;
  std::vector<SparseTask> out;
  for (I p = 0; p < panels; ++p) {
    SparseTask t;
    t.kind = panels == 1 ? SparseTaskKind::factorize_front : SparseTaskKind::factorize_panel;
    t.front = f;
    t.panel = p;
    t.panels = panels;
    t.col_begin = panels == 1 ? 0 : p * panel_columns;
    t.col_end = panels == 1 ? static_cast<I>(fr.cols.size()) : std::min(k, (p + 1) * panel_columns);
    out.push_back(t);
  }
  return out;
}

/// Appends the launches of one stage to `s`.
void schedule_stage(const SparseAnalysis& an, const SparseAssemblyMaps& maps,
                    const SparseStage& stage, I panel_columns, SparseSchedule& s) {
  const I b = stage.begin, e = stage.end;
  auto in_stage = [b, e](I f) { return f >= b && f < e; };
  std::vector<I> children_left(e - b, 0), next_panel(e - b, 0);
  std::vector<std::vector<SparseTask>> panels(e - b);
  for (I f = b; f < e; ++f) {
    for (const I c : an.fronts[f].children) children_left[f - b] += in_stage(c) ? 1 : 0;
    panels[f - b] = factor_tasks(an.fronts[f], f, panel_columns);
  }
  // The first launch: every front's S-Assembly and the carried-in blocks' Pack-Assembly.
  std::vector<SparseTask> first;
  for (I f = b; f < e; ++f) {
    if (maps.s_ptr[f + 1] > maps.s_ptr[f]) {
      SparseTask t;
      t.kind = SparseTaskKind::s_assembly;
      t.front = f;
      first.push_back(t);
    }
  }
  for (const I c : stage.carried_in) {
    SparseTask t;
    t.kind = SparseTaskKind::pack_assembly;
    t.front = an.fronts[c].parent;
    t.child = c;
    first.push_back(t);
  }
  const I launch0 = s.launches();
  for (const SparseTask& t : first)
    if (s.assembly_launch[t.front] < 0) s.assembly_launch[t.front] = launch0;

  std::vector<I> start_now, start_next, running, finished;
  for (I f = b; f < e; ++f)
    if (children_left[f - b] == 0) (s.assembly_launch[f] == launch0 ? start_next : start_now).push_back(f);
  I remaining = e - b;
  bool initial = true;
  while (remaining > 0) {
    const I launch = s.launches();
    std::vector<SparseTask> tasks;
    if (initial) tasks.swap(first);
    initial = false;
    std::vector<I> newly_ready;
    for (const I c : finished) {  // finished in the previous launch: pack into the parent
      const I p = an.fronts[c].parent;
      if (p < 0 || !in_stage(p)) continue;  // a root, or carried out at the stage's end
      SparseTask t;
      t.kind = SparseTaskKind::pack_assembly;
      t.front = p;
      t.child = c;
      tasks.push_back(t);
      if (s.assembly_launch[p] < 0) s.assembly_launch[p] = launch;
      if (--children_left[p - b] == 0) newly_ready.push_back(p);
    }
    finished.clear();
    // Fronts in progress take their next panel; ready ones start (children before parents
    // in the task list, as postorder).
    std::vector<I> still_running;
    for (const I f : start_now) {
      s.factor_begin[f] = launch;
      running.push_back(f);
    }
    std::sort(running.begin(), running.end());
    for (const I f : running) {
      tasks.push_back(panels[f - b][next_panel[f - b]++]);
      if (next_panel[f - b] == static_cast<I>(panels[f - b].size())) {
        s.factor_end[f] = launch;
        finished.push_back(f);
        --remaining;
      } else {
        still_running.push_back(f);
      }
    }
    running.swap(still_running);
    // Ready for the next launch: the fronts assembled in the stage's first launch (only then
    // is start_next filled) and those whose last child was packed in this one.
    start_now.swap(start_next);
    start_next.clear();
    start_now.insert(start_now.end(), newly_ready.begin(), newly_ready.end());
    if (tasks.empty())
      GPUQR_THROW(Error, "sparse schedule: no task is ready (the front tree is not a postorder)");
    s.tasks.insert(s.tasks.end(), tasks.begin(), tasks.end());
    s.launch_ptr.push_back(static_cast<I>(s.tasks.size()));
  }
}

}  // namespace

SparseSchedule plan_sparse_schedule(const SparseAnalysis& an, const SparseAssemblyMaps& maps,
                                    const SparseStagePlan& stages,
                                    const SparseScheduleOptions& options) {
  GPUQR_CHECK_ARG(options.panel_columns >= 0,
                  "sparse schedule: panel_columns must be >= 0, got " +
                      std::to_string(options.panel_columns));
  const I nf = static_cast<I>(an.fronts.size());
  I covered = 0;
  for (const SparseStage& st : stages.stages) {
    if (st.begin != covered || st.end <= st.begin || st.end > nf)
      GPUQR_THROW(Error, "sparse schedule: the stages do not cover the fronts in postorder");
    covered = st.end;
  }
  if (covered != nf) GPUQR_THROW(Error, "sparse schedule: the stages do not cover every front");
  SparseSchedule s;
  s.launch_ptr.assign(1, 0);
  s.stage_launch_ptr.assign(1, 0);
  s.assembly_launch.assign(nf, -1);
  s.factor_begin.assign(nf, -1);
  s.factor_end.assign(nf, -1);
  s.depth.assign(nf, 0);
  for (I f = nf - 1; f >= 0; --f)
    if (an.fronts[f].parent >= 0) s.depth[f] = s.depth[an.fronts[f].parent] + 1;
  for (const SparseStage& st : stages.stages) {
    schedule_stage(an, maps, st, options.panel_columns, s);
    s.stage_launch_ptr.push_back(s.launches());
  }
  return s;
}

std::vector<FrontState> SparseSchedule::states_after(I launch) const {
  std::vector<FrontState> out(factor_end.size(), FrontState::waiting);
  for (std::size_t f = 0; f < out.size(); ++f) {
    if (factor_end[f] <= launch)
      out[f] = FrontState::done;
    else if (factor_begin[f] <= launch)
      out[f] = FrontState::factoring;
    else if (assembly_launch[f] >= 0 && assembly_launch[f] <= launch)
      out[f] = FrontState::assembling;
  }
  return out;
}

}  // namespace gpuqr::detail
