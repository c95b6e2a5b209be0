// Staging of the sparse multifrontal QR under a memory cap.
#include "src/core/sparse_stages.hpp"

#include <string>

#include "gpuqr/error.hpp"

namespace gpuqr::detail {

using I = std::int64_t;

I front_stage_bytes(const SparseAnalysis& an, const SparseAssemblyMaps& maps, I f,
                    const StageSizes& sizes) {
  const FrontInfo& fr = an.fronts[f];
  const I width = static_cast<I>(fr.cols.size()) + sizes.carried_cols;
  return fr.rows * width * sizes.value_bytes + maps.front_bytes(an, f);
}

I cb_bytes(const SparseAnalysis& an, I f, const StageSizes& sizes) {
  const FrontInfo& fr = an.fronts[f];
  if (fr.parent < 0) return 0;
  return fr.cb_rows * (fr.cb_cols + sizes.carried_cols) * sizes.value_bytes;
}

I front_min_stage_bytes(const SparseAnalysis& an, const SparseAssemblyMaps& maps, I f,
                        const StageSizes& sizes) {
  I bytes = front_stage_bytes(an, maps, f, sizes);
  for (const I c : an.fronts[f].children) bytes += cb_bytes(an, c, sizes);
  return bytes;
}

SparseStagePlan plan_sparse_stages(const SparseAnalysis& an, const SparseAssemblyMaps& maps,
                                   I cap_bytes, const StageSizes& sizes) {
  GPUQR_CHECK_ARG(cap_bytes >= 0, "sparse staging: memory cap must be >= 0 (0: no cap), got " +
                                      std::to_string(cap_bytes));
  GPUQR_CHECK_ARG(maps.fronts() == static_cast<I>(an.fronts.size()),
                  "sparse staging: the assembly maps are not those of this analysis");
  const I nf = static_cast<I>(an.fronts.size());
  SparseStagePlan plan;
  plan.cap_bytes = cap_bytes;
  plan.stage_of.assign(nf, -1);
  if (cap_bytes > 0) {
    for (I f = 0; f < nf; ++f) {
      const I need = front_min_stage_bytes(an, maps, f, sizes);
      GPUQR_CHECK_ARG(need <= cap_bytes,
                      "sparse staging: memory cap of " + std::to_string(cap_bytes) +
                          " bytes is below what front " + std::to_string(f) + " (" +
                          std::to_string(an.fronts[f].rows) + " x " +
                          std::to_string(an.fronts[f].cols.size()) + ") needs: " +
                          std::to_string(need) + " bytes");
    }
  }
  // What adding front f to the open stage costs: its storage and its children's CBs from
  // earlier stages (a child in the same stage is already counted with its whole front).
  auto added = [&](I f, I stage_begin) {
    I bytes = front_stage_bytes(an, maps, f, sizes);
    for (const I c : an.fronts[f].children)
      if (c < stage_begin) bytes += cb_bytes(an, c, sizes);
    return bytes;
  };
  SparseStage open;
  for (I f = 0; f < nf; ++f) {
    if (cap_bytes > 0 && f > open.begin && open.peak_bytes + added(f, open.begin) > cap_bytes) {
      open.end = f;
      plan.stages.push_back(open);
      open = SparseStage{};
      open.begin = f;
    }
    open.peak_bytes += added(f, open.begin);
  }
  if (nf > 0) {
    open.end = nf;
    plan.stages.push_back(open);
  }
  // Carried blocks, from the final boundaries.
  for (I s = 0; s < static_cast<I>(plan.stages.size()); ++s)
    for (I f = plan.stages[s].begin; f < plan.stages[s].end; ++f) plan.stage_of[f] = s;
  for (I f = 0; f < nf; ++f) {
    const I p = an.fronts[f].parent;
    if (p < 0 || plan.stage_of[p] == plan.stage_of[f]) continue;
    plan.stages[plan.stage_of[f]].carried_out.push_back(f);
    SparseStage& in = plan.stages[plan.stage_of[p]];
    in.carried_in.push_back(f);
    in.carried_in_bytes += cb_bytes(an, f, sizes);
  }
  return plan;
}

}  // namespace gpuqr::detail
