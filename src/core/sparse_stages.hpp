// Staging of the sparse multifrontal QR (Yeralan, Davis et al., section 3.4): when the fronts
// and their assembly data do not fit the device memory (or a cap the caller sets), the
// postordered front tree is cut into stages, each a contiguous range of fronts whose working
// memory fits. A stage holds all its fronts at once (the scheduler factorizes many of them
// concurrently), the assembly maps of those fronts, and the contribution blocks of children
// factorized in earlier stages ("carried in": pulled to the host at the end of their stage
// with the R rows, sent back before this stage starts). A front whose parent lies in a later
// stage skips Pack-Assembly; its CB is "carried out".
//
// Sizes come from the analysis (FrontInfo::rows, cb_rows). With rank detection a front below
// dead columns can hold more rows than that; the plan is then an estimate, not a bound.
#pragma once

#include <cstdint>
#include <vector>

#include "gpuqr/sparse_analysis.hpp"
#include "src/core/sparse_assembly.hpp"

namespace gpuqr::detail {

/// What the byte counts of a stage plan assume.
struct StageSizes {
  std::int64_t value_bytes = 8;    ///< sizeof(T)
  std::int64_t carried_cols = 0;   ///< right-hand sides carried as extra front columns
};

/// One stage: fronts [begin, end) of SparseAnalysis::fronts (a postorder range).
struct SparseStage {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  /// Working memory of the stage in bytes: its fronts (rows x (cols + carried) values each;
  /// R's rows live there until copied out, the CB until packed or carried out), their
  /// assembly maps, and the carried-in contribution blocks.
  std::int64_t peak_bytes = 0;
  /// Fronts of earlier stages whose contribution block is packed into a front of this one,
  /// ascending.
  std::vector<std::int64_t> carried_in;
  /// Fronts of this stage whose parent is in a later stage, ascending.
  std::vector<std::int64_t> carried_out;
  /// Bytes of the carried-in contribution blocks (part of peak_bytes).
  std::int64_t carried_in_bytes = 0;
};

/// The stages of a factorization, in execution order; they cover every front exactly once.
struct SparseStagePlan {
  std::vector<SparseStage> stages;
  /// Per front: the stage that factorizes it.
  std::vector<std::int64_t> stage_of;
  /// The cap the plan was made for (0: none, one stage).
  std::int64_t cap_bytes = 0;
};

/// Bytes of front f's own storage in a stage: rows x (cols + carried_cols) values plus its
/// assembly maps (SparseAssemblyMaps::front_bytes).
std::int64_t front_stage_bytes(const SparseAnalysis& an, const SparseAssemblyMaps& maps,
                               std::int64_t f, const StageSizes& sizes);

/// Bytes of front f's contribution block (cb_rows x (cb_cols + carried_cols) values; 0 for a
/// root).
std::int64_t cb_bytes(const SparseAnalysis& an, std::int64_t f, const StageSizes& sizes);

/// The least a stage holding front f needs: its own storage plus all its children's
/// contribution blocks carried in.
std::int64_t front_min_stage_bytes(const SparseAnalysis& an, const SparseAssemblyMaps& maps,
                                   std::int64_t f, const StageSizes& sizes);

/// Cuts the fronts into stages greedily in postorder (a new stage starts when the next front
/// would exceed cap_bytes). cap_bytes = 0: one stage. Throws InvalidArgument when cap_bytes
/// is negative, or positive and below some front's front_min_stage_bytes (the message names
/// the front and the bytes it needs).
SparseStagePlan plan_sparse_stages(const SparseAnalysis& an, const SparseAssemblyMaps& maps,
                                   std::int64_t cap_bytes, const StageSizes& sizes);

}  // namespace gpuqr::detail
