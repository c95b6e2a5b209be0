// The host pieces of the GPU sparse QR (issue 9): stages under a memory cap
// (src/core/sparse_stages.hpp), the scheduler's launches (src/core/sparse_schedule.hpp) and
// the flat assembly maps (src/core/sparse_assembly.hpp), on the shared corpus and on
// generated grid problems. SparseQR running through them: test_sparse_staging.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "gpuqr/error.hpp"
#include "gpuqr/sparse_analysis.hpp"
#include "src/core/sparse_assembly.hpp"
#include "src/core/sparse_schedule.hpp"
#include "src/core/sparse_stages.hpp"
#include "tests/support/sparse_corpus.hpp"
#include "tests/support/sparse_qr_checks.hpp"

namespace {

using namespace gpuqr::testing::sparse;
using gpuqr::SparseAnalysis;
using gpuqr::detail::SparseAssemblyMaps;
using gpuqr::detail::SparseSchedule;
using gpuqr::detail::SparseStagePlan;
using gpuqr::detail::SparseTask;
using gpuqr::detail::SparseTaskKind;
using gpuqr::detail::StageSizes;

struct Problem {
  std::string name;
  CscMatrix<double> a;
  SparseAnalysis an;
  SparseAssemblyMaps maps;
};

Problem make_problem(std::string name, CscMatrix<double> a) {
  Problem p{std::move(name), std::move(a), {}, {}};
  p.an = gpuqr::analyze_sparse_qr(p.a, any_ordering().analysis);
  const gpuqr::detail::CscPattern pat{p.a.rows, p.a.cols, p.a.col_ptr.data(), p.a.row_indices.data()};
  p.maps = gpuqr::detail::build_sparse_assembly_maps(p.an, pat);
  return p;
}

/// The corpus (each matrix with at least one front) and two grids.
std::vector<Problem> problems() {
  std::vector<Problem> out;
  for (auto& [name, a] : gpuqr::testing::sparse_corpus())
    if (a.cols > 0) out.push_back(make_problem(name, a));
  out.push_back(make_problem("grid12", grid_gradient<double>(12)));
  out.push_back(make_problem("grid30", grid_gradient<double>(30)));
  return out;
}

I largest_need(const Problem& p, const StageSizes& sizes) {
  I need = 0;
  for (I f = 0; f < static_cast<I>(p.an.fronts.size()); ++f)
    need = std::max(need, gpuqr::detail::front_min_stage_bytes(p.an, p.maps, f, sizes));
  return need;
}

I total_bytes(const Problem& p, const StageSizes& sizes) {
  I bytes = 0;
  for (I f = 0; f < static_cast<I>(p.an.fronts.size()); ++f)
    bytes += gpuqr::detail::front_stage_bytes(p.an, p.maps, f, sizes);
  return bytes;
}

/// Caps from the smallest feasible one to a third of the whole tree, and none.
std::vector<I> caps_of(const Problem& p, const StageSizes& sizes) {
  const I need = largest_need(p, sizes), total = total_bytes(p, sizes);
  return {0, need, need + need / 2, std::max(need, total / 3)};
}

/// Stage plan invariants: contiguous postorder ranges covering every front once, the peak
/// recomputed independently and within the cap, the carried blocks, and greedy maximality.
void check_stages(const Problem& p, const SparseStagePlan& plan, I cap, const StageSizes& sizes) {
  const I nf = static_cast<I>(p.an.fronts.size());
  ASSERT_FALSE(plan.stages.empty());
  if (cap == 0) EXPECT_EQ(plan.stages.size(), 1u);
  I next = 0;
  for (std::size_t s = 0; s < plan.stages.size(); ++s) {
    const auto& st = plan.stages[s];
    EXPECT_EQ(st.begin, next);
    EXPECT_LT(st.begin, st.end);
    next = st.end;
    I bytes = 0, carried = 0;
    for (I f = st.begin; f < st.end; ++f) {
      EXPECT_EQ(plan.stage_of[f], static_cast<I>(s));
      bytes += gpuqr::detail::front_stage_bytes(p.an, p.maps, f, sizes);
      for (const I c : p.an.fronts[f].children) {
        if (c >= st.begin) continue;
        carried += gpuqr::detail::cb_bytes(p.an, c, sizes);
        EXPECT_TRUE(std::count(st.carried_in.begin(), st.carried_in.end(), c) == 1)
            << "child " << c << " of front " << f << " not carried into stage " << s;
      }
      const I parent = p.an.fronts[f].parent;
      const bool out = parent >= st.end;
      EXPECT_EQ(std::count(st.carried_out.begin(), st.carried_out.end(), f), out ? 1 : 0);
    }
    EXPECT_EQ(st.carried_in_bytes, carried);
    EXPECT_EQ(st.peak_bytes, bytes + carried);
    I stage_rows = 0;
    for (I f = st.begin; f < st.end; ++f) stage_rows += p.an.fronts[f].rows;
    if (stage_rows > 0) EXPECT_GT(st.peak_bytes, 0);
    if (cap > 0) {
      EXPECT_LE(st.peak_bytes, cap) << "stage " << s;
      if (s + 1 < plan.stages.size()) {  // greedy: the next front did not fit
        const I f = st.end;
        I add = gpuqr::detail::front_stage_bytes(p.an, p.maps, f, sizes);
        for (const I c : p.an.fronts[f].children)
          if (c < st.begin) add += gpuqr::detail::cb_bytes(p.an, c, sizes);
        EXPECT_GT(st.peak_bytes + add, cap) << "stage " << s << " could have taken front " << f;
      }
    }
  }
  EXPECT_EQ(next, nf);
}

TEST(SparseStages, CoverEveryFrontOnceWithinTheCap) {
  int multi = 0;
  for (const Problem& p : problems()) {
    SCOPED_TRACE(p.name);
    for (const StageSizes sizes : {StageSizes{8, 0}, StageSizes{4, 3}}) {
      for (const I cap : caps_of(p, sizes)) {
        const SparseStagePlan plan = gpuqr::detail::plan_sparse_stages(p.an, p.maps, cap, sizes);
        check_stages(p, plan, cap, sizes);
        multi += plan.stages.size() > 1 ? 1 : 0;
      }
    }
  }
  EXPECT_GT(multi, 20) << "too few plans with several stages to test anything";
}

TEST(SparseStages, GridNeedsManyStagesUnderTheSmallestCap) {
  const Problem p = make_problem("grid30", grid_gradient<double>(30));
  const StageSizes sizes{8, 0};
  const I need = largest_need(p, sizes);
  const SparseStagePlan plan = gpuqr::detail::plan_sparse_stages(p.an, p.maps, need, sizes);
  EXPECT_GE(plan.stages.size(), 4u);
  I carried = 0;
  for (const auto& st : plan.stages) carried += st.carried_in_bytes;
  EXPECT_GT(carried, 0);
}

TEST(SparseStages, CapTooSmallNamesTheFrontAndItsBytes) {
  for (const Problem& p : problems()) {
    SCOPED_TRACE(p.name);
    const StageSizes sizes{8, 1};
    I worst = 0, need = 0;
    for (I f = 0; f < static_cast<I>(p.an.fronts.size()); ++f) {
      const I b = gpuqr::detail::front_min_stage_bytes(p.an, p.maps, f, sizes);
      if (b > need) need = b, worst = f;
    }
    if (p.a.nnz() == 0) continue;  // nothing to hold: no cap is too small
    ASSERT_GT(need, 0);
    try {
      gpuqr::detail::plan_sparse_stages(p.an, p.maps, need - 1, sizes);
      ADD_FAILURE() << "a cap one byte below the largest front's need was accepted";
    } catch (const gpuqr::InvalidArgument& e) {
      const std::string what = e.what();
      // The first front over the cap is named; the largest one is over it for sure.
      EXPECT_NE(what.find("front "), std::string::npos) << what;
      EXPECT_NE(what.find(std::to_string(need - 1)), std::string::npos) << what;
      I first = -1;
      for (I f = 0; f < static_cast<I>(p.an.fronts.size()) && first < 0; ++f)
        if (gpuqr::detail::front_min_stage_bytes(p.an, p.maps, f, sizes) > need - 1) first = f;
      EXPECT_LE(first, worst);
      EXPECT_NE(what.find("front " + std::to_string(first) + " "), std::string::npos) << what;
      EXPECT_NE(what.find(std::to_string(gpuqr::detail::front_min_stage_bytes(p.an, p.maps, first, sizes)) +
                          " bytes"),
                std::string::npos)
          << what;
    }
    EXPECT_THROW(gpuqr::detail::plan_sparse_stages(p.an, p.maps, -1, sizes), gpuqr::InvalidArgument);
  }
}

// ---- schedule ------------------------------------------------------------------------------

/// Schedule invariants for one plan.
void check_schedule(const Problem& p, const SparseStagePlan& plan, const SparseSchedule& s,
                    I panel_columns, int* mixed_levels) {
  const I nf = static_cast<I>(p.an.fronts.size());
  ASSERT_EQ(s.stage_launch_ptr.size(), plan.stages.size() + 1);
  std::vector<I> s_count(nf, 0), pack_count(nf, 0), pack_launch(nf, -1), last_assembly(nf, -1);
  std::vector<std::vector<I>> factor_launches(nf);
  for (I l = 0; l < s.launches(); ++l) {
    ASSERT_LT(s.launch_ptr[l], s.launch_ptr[l + 1]) << "empty launch " << l;
    std::set<I> assembled, factored, depths;
    for (I t = s.launch_ptr[l]; t < s.launch_ptr[l + 1]; ++t) {
      const SparseTask& task = s.tasks[t];
      ASSERT_GE(task.front, 0);
      ASSERT_LT(task.front, nf);
      switch (task.kind) {
        case SparseTaskKind::s_assembly:
          ++s_count[task.front];
          assembled.insert(task.front);
          last_assembly[task.front] = std::max(last_assembly[task.front], l);
          break;
        case SparseTaskKind::pack_assembly:
          ASSERT_EQ(p.an.fronts[task.child].parent, task.front);
          ++pack_count[task.child];
          pack_launch[task.child] = l;
          assembled.insert(task.front);
          last_assembly[task.front] = std::max(last_assembly[task.front], l);
          EXPECT_EQ(factored.count(task.child), 0u) << "pack of a child factored in its launch";
          break;
        case SparseTaskKind::factorize_front:
        case SparseTaskKind::factorize_panel:
          factor_launches[task.front].push_back(l);
          factored.insert(task.front);
          depths.insert(s.depth[task.front]);
          if (task.panel + 1 == task.panels) EXPECT_EQ(s.factor_end[task.front], l);
          break;
      }
    }
    for (const I f : factored) EXPECT_EQ(assembled.count(f), 0u) << "front " << f << " launch " << l;
    if (depths.size() > 1) ++*mixed_levels;
  }
  for (I f = 0; f < nf; ++f) {
    const auto& fr = p.an.fronts[f];
    const I st = plan.stage_of[f];
    const I first_launch = s.stage_launch_ptr[st];
    // Each front factorized once: its panels in consecutive launches, within its stage.
    const I kf = std::min(fr.rows, static_cast<I>(fr.cols.size()));
    const I panels = panel_columns > 0 && kf > panel_columns ? (kf + panel_columns - 1) / panel_columns : 1;
    ASSERT_EQ(static_cast<I>(factor_launches[f].size()), panels) << "front " << f;
    for (I q = 0; q < panels; ++q) EXPECT_EQ(factor_launches[f][q], s.factor_begin[f] + q);
    EXPECT_EQ(s.factor_end[f], s.factor_begin[f] + panels - 1);
    EXPECT_GE(s.factor_begin[f], first_launch);
    EXPECT_LT(s.factor_end[f], s.stage_launch_ptr[st + 1]);
    // S-Assembly once, in the stage's first launch, for fronts with A rows.
    const bool has_rows = p.maps.s_ptr[f + 1] > p.maps.s_ptr[f];
    EXPECT_EQ(s_count[f], has_rows ? 1 : 0);
    // Children done (and packed) before their parent factors; packed exactly once, in the
    // launch after they finish, or in the parent's stage's first launch when carried in.
    for (const I c : fr.children) {
      EXPECT_EQ(pack_count[c], 1) << "child " << c;
      EXPECT_LT(s.factor_end[c], pack_launch[c]);
      EXPECT_LT(pack_launch[c], s.factor_begin[f]);
      if (plan.stage_of[c] == st)
        EXPECT_EQ(pack_launch[c], s.factor_end[c] + 1);
      else
        EXPECT_EQ(pack_launch[c], first_launch);
    }
    if (fr.parent < 0) EXPECT_EQ(pack_count[f], 0);
    // As soon as possible: the launch after its last assembly task (or the stage's first).
    EXPECT_EQ(s.factor_begin[f], last_assembly[f] < 0 ? first_launch : last_assembly[f] + 1);
  }
  // Launches per stage: at most the longest path of (panels + 1) launches per front.
  for (std::size_t st = 0; st < plan.stages.size(); ++st) {
    const auto& stage = plan.stages[st];
    std::vector<I> path(nf, 0);
    I longest = 0;
    for (I f = stage.begin; f < stage.end; ++f) {
      const auto& fr = p.an.fronts[f];
      const I kf = std::min(fr.rows, static_cast<I>(fr.cols.size()));
      const I panels = panel_columns > 0 && kf > panel_columns ? (kf + panel_columns - 1) / panel_columns : 1;
      I below = 0;
      for (const I c : fr.children)
        if (c >= stage.begin) below = std::max(below, path[c]);
      path[f] = below + panels + 1;
      longest = std::max(longest, path[f]);
    }
    EXPECT_LE(s.stage_launch_ptr[st + 1] - s.stage_launch_ptr[st], longest) << "stage " << st;
  }
  // States: all waiting before the first launch, all done after the last; monotone.
  std::vector<gpuqr::detail::FrontState> prev = s.states_after(-1);
  for (const auto st : prev) EXPECT_EQ(st, gpuqr::detail::FrontState::waiting);
  for (I l = 0; l < s.launches(); ++l) {
    const auto now = s.states_after(l);
    for (I f = 0; f < nf; ++f) EXPECT_GE(static_cast<int>(now[f]), static_cast<int>(prev[f]));
    prev = now;
  }
  for (const auto st : prev) EXPECT_EQ(st, gpuqr::detail::FrontState::done);
}

/// Height of the front tree (a leaf has height 1).
I tree_height(const SparseAnalysis& an) {
  std::vector<I> h(an.fronts.size(), 1);
  I out = 0;
  for (std::size_t f = 0; f < an.fronts.size(); ++f) {
    for (const I c : an.fronts[f].children) h[f] = std::max(h[f], h[c] + 1);
    out = std::max(out, h[f]);
  }
  return out;
}

TEST(SparseSchedule, InvariantsOnCorpusAndGrids) {
  int mixed = 0, plans = 0;
  for (const Problem& p : problems()) {
    SCOPED_TRACE(p.name);
    const StageSizes sizes{8, 0};
    for (const I cap : caps_of(p, sizes)) {
      const SparseStagePlan plan = gpuqr::detail::plan_sparse_stages(p.an, p.maps, cap, sizes);
      for (const I panel_columns : {I{0}, I{4}}) {
        SCOPED_TRACE("cap " + std::to_string(cap) + " panels " + std::to_string(panel_columns));
        const SparseSchedule s = gpuqr::detail::plan_sparse_schedule(p.an, p.maps, plan, {panel_columns});
        check_schedule(p, plan, s, panel_columns, &mixed);
        ++plans;
        if (cap == 0 && panel_columns == 0)  // two launches per tree level
          EXPECT_LE(s.launches(), 2 * tree_height(p.an)) << "height " << tree_height(p.an);
      }
    }
  }
  EXPECT_GT(mixed, plans / 4) << "tasks of different tree levels rarely share a launch";
}

TEST(SparseSchedule, LevelsShareLaunchesOnAGrid) {
  // Columns in nested-dissection order: without SuiteSparse (natural ordering) the tree is
  // still bushy; with it, COLAMD orders them again.
  const Problem p = make_problem("grid30", grid_gradient<double>(30, true));
  const SparseStagePlan plan = gpuqr::detail::plan_sparse_stages(p.an, p.maps, 0, {8, 0});
  const SparseSchedule s = gpuqr::detail::plan_sparse_schedule(p.an, p.maps, plan);
  // Far fewer launches than fronts: fronts at many depths factor together.
  const I nf = static_cast<I>(p.an.fronts.size());
  EXPECT_LT(4 * s.launches(), nf) << s.launches() << " launches for " << nf << " fronts";
  I launches_with_mixed_depths = 0;
  for (I l = 0; l < s.launches(); ++l) {
    std::set<I> depths;
    for (I t = s.launch_ptr[l]; t < s.launch_ptr[l + 1]; ++t)
      if (s.tasks[t].kind != SparseTaskKind::s_assembly) depths.insert(s.depth[s.tasks[t].front]);
    launches_with_mixed_depths += depths.size() > 1 ? 1 : 0;
  }
  EXPECT_GT(2 * launches_with_mixed_depths, s.launches() - 2);
  EXPECT_THROW(gpuqr::detail::plan_sparse_schedule(p.an, p.maps, plan, {-1}), gpuqr::InvalidArgument);
}

// ---- assembly maps -------------------------------------------------------------------------

/// Front f built the old way (stacked rows [A rows, children's CB rows], stable-sorted by
/// leftmost column; A's values scattered by a dense column lookup) with each child's CB
/// entry (r, t) set to `cb_value(child, r, t)`; and the same front through the maps.
double cb_value(I child, I r, I t) { return 1000.0 * (child + 1) + 10.0 * r + t + 0.5; }

TEST(SparseAssemblyMaps, ReproduceTheFrontsBuiltTheOldWay) {
  for (const Problem& p : problems()) {
    SCOPED_TRACE(p.name);
    const auto& an = p.an;
    const auto& m = p.maps;
    const I nf = static_cast<I>(an.fronts.size());
    // Exact sizes.
    I tuples = 0, prow = 0, pcol = 0, stacked = 0;
    for (const auto& fr : an.fronts) {
      for (const I i : fr.a_rows)
        for (I j = 0; j < p.a.cols; ++j)
          tuples += std::binary_search(p.a.row_indices.begin() + p.a.col_ptr[j],
                                       p.a.row_indices.begin() + p.a.col_ptr[j + 1], i);
      if (fr.parent >= 0) prow += fr.cb_rows, pcol += fr.cb_cols;
      stacked += fr.rows;
    }
    EXPECT_EQ(static_cast<I>(m.s_value.size()), tuples);
    EXPECT_EQ(static_cast<I>(m.pack_row.size()), prow);
    EXPECT_EQ(static_cast<I>(m.pack_col.size()), pcol);
    EXPECT_EQ(static_cast<I>(m.row_source.size()), stacked);
    EXPECT_EQ(m.s_value.capacity(), m.s_value.size());
    EXPECT_GT(m.total_bytes(), 8 * tuples);
    std::vector<I> pos(an.cols, -1), counts;
    for (I f = 0; f < nf; ++f) {
      const auto& fr = an.fronts[f];
      const I rows = fr.rows, ncols = static_cast<I>(fr.cols.size());
      // The old way.
      std::vector<I> key;
      for (const I i : fr.a_rows) key.push_back(an.row_leftmost[i] - fr.first_pivot);
      for (std::size_t c = 0; c < fr.children.size(); ++c)
        for (I r = 0; r < an.fronts[fr.children[c]].cb_rows; ++r) key.push_back(fr.child_col_map[c][r]);
      std::vector<I> src(rows), at(rows);
      std::iota(src.begin(), src.end(), I{0});
      std::stable_sort(src.begin(), src.end(), [&key](I x, I y) { return key[x] < key[y]; });
      for (I r = 0; r < rows; ++r) at[src[r]] = r;
      Matrix<double> want(rows, ncols), got(rows, ncols);
      std::vector<int> hits(static_cast<std::size_t>(rows * ncols), 0);
      std::fill(want.data(), want.data() + want.ld() * ncols, 0.0);
      std::fill(got.data(), got.data() + got.ld() * ncols, 0.0);
      for (I t = 0; t < ncols; ++t) pos[fr.cols[t]] = t;
      const auto& q = an.column_permutation;
      for (std::size_t s = 0; s < fr.a_rows.size(); ++s)
        for (I k = 0; k < an.cols; ++k)
          for (I pp = p.a.col_ptr[q[k]]; pp < p.a.col_ptr[q[k] + 1]; ++pp)
            if (p.a.row_indices[pp] == fr.a_rows[s]) want(at[s], pos[k]) = p.a.values[pp];
      I st = static_cast<I>(fr.a_rows.size());
      for (std::size_t c = 0; c < fr.children.size(); ++c) {
        const I ci = fr.children[c];
        for (I r = 0; r < an.fronts[ci].cb_rows; ++r)
          for (I t = r; t < an.fronts[ci].cb_cols; ++t) want(at[st + r], fr.child_col_map[c][t]) = cb_value(ci, r, t);
        st += an.fronts[ci].cb_rows;
      }
      for (I t = 0; t < ncols; ++t) pos[fr.cols[t]] = -1;
      // Through the maps: S-Assembly tuples, then each child's Rimap/Rjmap.
      for (I t = m.s_ptr[f]; t < m.s_ptr[f + 1]; ++t) {
        ASSERT_LT(m.s_row[t], rows);
        ASSERT_LT(m.s_col[t], ncols);
        got(m.s_row[t], m.s_col[t]) = p.a.values[m.s_value[t]];
        ++hits[m.s_row[t] + rows * m.s_col[t]];
      }
      for (const I ci : fr.children) {
        EXPECT_EQ(m.pack_row_ptr[ci + 1] - m.pack_row_ptr[ci], an.fronts[ci].cb_rows);
        const I* rj = m.pack_col.data() + m.pack_col_ptr[ci];
        for (I t = 1; t < an.fronts[ci].cb_cols; ++t) EXPECT_LT(rj[t - 1], rj[t]);
        for (I r = 0; r < an.fronts[ci].cb_rows; ++r) {
          const I row = m.pack_row[m.pack_row_ptr[ci] + r];
          ASSERT_LT(row, rows);
          for (I t = r; t < an.fronts[ci].cb_cols; ++t) {
            got(row, rj[t]) = cb_value(ci, r, t);
            ++hits[row + rows * rj[t]];
          }
        }
      }
      for (I j = 0; j < ncols; ++j)
        for (I i = 0; i < rows; ++i) {
          ASSERT_EQ(got(i, j), want(i, j)) << "front " << f << " (" << i << ", " << j << ")";
          ASSERT_LE(hits[i + rows * j], 1) << "two tasks write front " << f << " (" << i << ", " << j << ")";
        }
      // The placement function reproduces the maps' placement with the analysis' counts.
      counts.clear();
      for (const I c : fr.children) counts.push_back(an.fronts[c].cb_rows);
      std::vector<I> src2, key2;
      gpuqr::detail::place_front_rows(an, m, f, counts, src2, key2);
      EXPECT_TRUE(std::equal(src2.begin(), src2.end(), m.row_source.begin() + m.stack_ptr[f]));
      EXPECT_TRUE(std::equal(src.begin(), src.end(), m.row_source.begin() + m.stack_ptr[f]));
    }
  }
}

TEST(SparseAssemblyMaps, ReusableForTheSamePattern) {
  const Problem p = make_problem("grid12", grid_gradient<double>(12));
  CscMatrix<double> b = p.a;
  for (std::size_t i = 0; i < b.values.size(); ++i) b.values[i] = 0.5 + static_cast<double>(i % 7);
  const gpuqr::detail::CscPattern pat{b.rows, b.cols, b.col_ptr.data(), b.row_indices.data()};
  const SparseAssemblyMaps mb = gpuqr::detail::build_sparse_assembly_maps(p.an, pat);
  EXPECT_EQ(mb.s_value, p.maps.s_value);
  EXPECT_EQ(mb.s_row, p.maps.s_row);
  EXPECT_EQ(mb.pack_row, p.maps.pack_row);
  // A pattern of another shape is refused.
  CscMatrix<double> wide = grid_gradient<double>(5);
  const gpuqr::detail::CscPattern wp{wide.rows, wide.cols, wide.col_ptr.data(), wide.row_indices.data()};
  EXPECT_THROW(gpuqr::detail::build_sparse_assembly_maps(p.an, wp), gpuqr::InvalidArgument);
}

}  // namespace
