// gpuqr/sparse.hpp: a compressed-sparse-column matrix on the host.
#pragma once

#include <cstdint>
#include <vector>

#include "gpuqr/matrix.hpp"

namespace gpuqr {

/// CSC storage: column j's entries are row_indices/values[col_ptr[j] .. col_ptr[j+1]),
/// rows sorted ascending within a column, no duplicates (they are summed on construction).
template <class T>
struct CscMatrix {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<std::int64_t> col_ptr{0};  // cols + 1 entries
  std::vector<std::int64_t> row_indices;
  std::vector<T> values;

  std::int64_t nnz() const noexcept { return static_cast<std::int64_t>(values.size()); }

  /// Builds from coordinate triplets (0-based), summing duplicates; throws InvalidArgument
  /// for an index out of range or arrays of different lengths.
  static CscMatrix from_triplets(std::int64_t rows, std::int64_t cols,
                                 const std::vector<std::int64_t>& i,
                                 const std::vector<std::int64_t>& j, const std::vector<T>& v);

  /// Throws InvalidArgument unless the structure is valid (sizes, monotone col_ptr, sorted
  /// in-range unique rows).
  void validate() const;

  /// The dense rows x cols host matrix.
  Matrix<T> to_dense() const;

  /// The same matrix in another precision.
  template <class U>
  CscMatrix<U> cast() const {
    CscMatrix<U> out;
    out.rows = rows;
    out.cols = cols;
    out.col_ptr = col_ptr;
    out.row_indices = row_indices;
    out.values.assign(values.begin(), values.end());
    return out;
  }
};

}  // namespace gpuqr
