#include "tests/support/sparse_corpus.hpp"

#include <algorithm>
#include <filesystem>

#include "gpuqr/error.hpp"
#include "gpuqr/io.hpp"

namespace gpuqr::testing {

using I = std::int64_t;

std::vector<std::pair<std::string, CscMatrix<double>>> sparse_corpus() {
  std::vector<std::pair<std::string, CscMatrix<double>>> out;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(std::string(GPUQR_DATA_DIR) + "/matrices"))
    if (e.path().extension() == ".mtx") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& p : files) {
    try {
      auto mm = gpuqr::io::read_matrix_market(p.string());
      if (mm.is_sparse()) out.emplace_back(p.filename().string(), std::move(mm.sparse));
    } catch (const gpuqr::Unsupported&) {
    }
  }
  return out;
}

std::int64_t structural_rank(const CscMatrix<double>& a) {
  std::vector<I> row_match(a.rows, -1);
  I rank = 0;
  for (I j0 = 0; j0 < a.cols; ++j0) {
    // Iterative DFS over columns; from[] remembers how each column was reached.
    std::vector<I> visited_col(a.cols, 0), from(a.cols, -1), via_row(a.cols, -1), stack{j0};
    std::vector<char> row_seen(a.rows, 0);
    visited_col[j0] = 1;
    I found_row = -1, found_col = -1;
    while (!stack.empty() && found_row < 0) {
      const I j = stack.back();
      stack.pop_back();
      for (I p = a.col_ptr[j]; p < a.col_ptr[j + 1] && found_row < 0; ++p) {
        const I i = a.row_indices[p];
        if (row_seen[i]) continue;
        row_seen[i] = 1;
        if (row_match[i] == -1) {
          found_row = i, found_col = j;
        } else if (!visited_col[row_match[i]]) {
          visited_col[row_match[i]] = 1;
          from[row_match[i]] = j;
          via_row[row_match[i]] = i;
          stack.push_back(row_match[i]);
        }
      }
    }
    if (found_row < 0) continue;
    ++rank;
    for (I i = found_row, j = found_col; j != -1;) {  // flip the augmenting path
      row_match[i] = j;
      i = via_row[j];
      j = from[j];
    }
  }
  return rank;
}

}  // namespace gpuqr::testing
