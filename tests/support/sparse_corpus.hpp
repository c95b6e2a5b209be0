// Shared by the sparse tests: the shipped real matrices, and structural rank.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gpuqr/sparse.hpp"

namespace gpuqr::testing {

/// The real matrices of data/matrices, by file name (complex files, which the reader rejects
/// as Unsupported, are skipped), in name order.
std::vector<std::pair<std::string, CscMatrix<double>>> sparse_corpus();

/// Structural rank: a maximum bipartite matching of rows and columns (augmenting paths).
std::int64_t structural_rank(const CscMatrix<double>& a);

}  // namespace gpuqr::testing
