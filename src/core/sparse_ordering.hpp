// Internal: fill-reducing column orderings for the sparse QR analysis.
#pragma once

#include <cstdint>
#include <vector>

namespace gpuqr::detail {

/// The pattern of an m x n CSC matrix (col_ptr has n+1 entries, rows sorted and unique).
struct CscPattern {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  const std::int64_t* col_ptr = nullptr;
  const std::int64_t* row_indices = nullptr;
};

/// COLAMD of A (colamd_l, default knobs): q[k] is the original column placed k-th.
/// Throws NotCompiled without SuiteSparse.
std::vector<std::int64_t> colamd_ordering(const CscPattern& a);

/// AMD of the pattern of A^T A (amd_l_order, default controls). Throws NotCompiled without
/// SuiteSparse.
std::vector<std::int64_t> amd_ata_ordering(const CscPattern& a);

/// Whether the two orderings above are compiled in.
bool have_suitesparse_orderings() noexcept;

}  // namespace gpuqr::detail
