// CscMatrix<T>: construction from triplets, structural validation, dense expansion.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "gpuqr/error.hpp"
#include "gpuqr/sparse.hpp"

namespace gpuqr {

namespace {

std::string range_text(std::int64_t n) {
  return n > 0 ? "0.." + std::to_string(n - 1) : "(none: the dimension is 0)";
}

}  // namespace

template <class T>
CscMatrix<T> CscMatrix<T>::from_triplets(std::int64_t rows, std::int64_t cols,
                                         const std::vector<std::int64_t>& i,
                                         const std::vector<std::int64_t>& j,
                                         const std::vector<T>& v) {
  if (rows < 0 || cols < 0) {
    GPUQR_THROW(InvalidArgument, "CscMatrix::from_triplets: dimensions must be non-negative (rows " +
                                     std::to_string(rows) + ", cols " + std::to_string(cols) + ")");
  }
  if (i.size() != j.size() || i.size() != v.size()) {
    GPUQR_THROW(InvalidArgument,
                "CscMatrix::from_triplets: row, column and value arrays have different lengths (" +
                    std::to_string(i.size()) + ", " + std::to_string(j.size()) + ", " +
                    std::to_string(v.size()) + ")");
  }
  const std::size_t n = v.size();
  for (std::size_t k = 0; k < n; ++k) {
    if (i[k] < 0 || i[k] >= rows) {
      GPUQR_THROW(InvalidArgument, "CscMatrix::from_triplets: triplet " + std::to_string(k) +
                                       ": row index " + std::to_string(i[k]) + " out of range " +
                                       range_text(rows));
    }
    if (j[k] < 0 || j[k] >= cols) {
      GPUQR_THROW(InvalidArgument, "CscMatrix::from_triplets: triplet " + std::to_string(k) +
                                       ": column index " + std::to_string(j[k]) +
                                       " out of range " + range_text(cols));
    }
  }

  // Two stable counting sorts (by row, then by column) leave the rows ascending within each
  // column and duplicates adjacent in their input order; both passes are O(nnz + rows + cols).
  std::vector<std::int64_t> row_start(static_cast<std::size_t>(rows) + 1, 0);
  for (std::size_t k = 0; k < n; ++k) ++row_start[static_cast<std::size_t>(i[k]) + 1];
  for (std::int64_t r = 0; r < rows; ++r) row_start[r + 1] += row_start[r];
  std::vector<std::size_t> by_row(n);
  for (std::size_t k = 0; k < n; ++k) by_row[static_cast<std::size_t>(row_start[i[k]]++)] = k;

  CscMatrix out;
  out.rows = rows;
  out.cols = cols;
  out.col_ptr.assign(static_cast<std::size_t>(cols) + 1, 0);
  for (std::size_t k = 0; k < n; ++k) ++out.col_ptr[static_cast<std::size_t>(j[k]) + 1];
  for (std::int64_t c = 0; c < cols; ++c) out.col_ptr[c + 1] += out.col_ptr[c];
  std::vector<std::int64_t> next(out.col_ptr.begin(), out.col_ptr.end() - 1);
  std::vector<std::int64_t> sorted_rows(n);
  std::vector<T> sorted_values(n);
  for (std::size_t k : by_row) {
    const auto pos = static_cast<std::size_t>(next[static_cast<std::size_t>(j[k])]++);
    sorted_rows[pos] = i[k];
    sorted_values[pos] = v[k];
  }

  // Sum duplicates in place, column by column.
  std::int64_t write = 0;
  for (std::int64_t c = 0; c < cols; ++c) {
    const std::int64_t begin = out.col_ptr[c];
    const std::int64_t end = out.col_ptr[c + 1];
    out.col_ptr[c] = write;
    for (std::int64_t p = begin; p < end; ++p) {
      if (write > out.col_ptr[c] && sorted_rows[write - 1] == sorted_rows[p]) {
        sorted_values[write - 1] += sorted_values[p];
      } else {
        sorted_rows[write] = sorted_rows[p];
        sorted_values[write] = sorted_values[p];
        ++write;
      }
    }
  }
  out.col_ptr[cols] = write;
  sorted_rows.resize(static_cast<std::size_t>(write));
  sorted_values.resize(static_cast<std::size_t>(write));
  out.row_indices = std::move(sorted_rows);
  out.values = std::move(sorted_values);
  return out;
}

template <class T>
void CscMatrix<T>::validate() const {
  const std::string what = "CscMatrix::validate: ";
  if (rows < 0 || cols < 0) {
    GPUQR_THROW(InvalidArgument, what + "negative dimensions (rows " + std::to_string(rows) +
                                     ", cols " + std::to_string(cols) + ")");
  }
  if (col_ptr.size() != static_cast<std::size_t>(cols) + 1) {
    GPUQR_THROW(InvalidArgument, what + "col_ptr has " + std::to_string(col_ptr.size()) +
                                     " entries, expected cols + 1 = " + std::to_string(cols + 1));
  }
  if (col_ptr[0] != 0) {
    GPUQR_THROW(InvalidArgument, what + "col_ptr[0] is " + std::to_string(col_ptr[0]) +
                                     ", expected 0");
  }
  if (row_indices.size() != values.size()) {
    GPUQR_THROW(InvalidArgument, what + "row_indices has " + std::to_string(row_indices.size()) +
                                     " entries but values has " + std::to_string(values.size()));
  }
  if (col_ptr[static_cast<std::size_t>(cols)] != static_cast<std::int64_t>(values.size())) {
    GPUQR_THROW(InvalidArgument, what + "col_ptr[cols] is " +
                                     std::to_string(col_ptr[static_cast<std::size_t>(cols)]) +
                                     " but there are " + std::to_string(values.size()) +
                                     " entries");
  }
  for (std::int64_t c = 0; c < cols; ++c) {
    if (col_ptr[c + 1] < col_ptr[c]) {
      GPUQR_THROW(InvalidArgument, what + "col_ptr decreases at column " + std::to_string(c) +
                                       " (" + std::to_string(col_ptr[c]) + " > " +
                                       std::to_string(col_ptr[c + 1]) + ")");
    }
    for (std::int64_t p = col_ptr[c]; p < col_ptr[c + 1]; ++p) {
      const std::int64_t r = row_indices[static_cast<std::size_t>(p)];
      if (r < 0 || r >= rows) {
        GPUQR_THROW(InvalidArgument, what + "column " + std::to_string(c) + ": row index " +
                                         std::to_string(r) + " out of range " + range_text(rows));
      }
      if (p > col_ptr[c] && r <= row_indices[static_cast<std::size_t>(p - 1)]) {
        GPUQR_THROW(InvalidArgument, what + "column " + std::to_string(c) +
                                         ": row indices not strictly increasing (" +
                                         std::to_string(row_indices[static_cast<std::size_t>(p - 1)]) +
                                         " then " + std::to_string(r) + ")");
      }
    }
  }
}

template <class T>
Matrix<T> CscMatrix<T>::to_dense() const {
  validate();
  Matrix<T> a(rows, cols);
  std::fill(a.data(), a.data() + a.ld() * cols, T(0));
  for (std::int64_t c = 0; c < cols; ++c) {
    for (std::int64_t p = col_ptr[c]; p < col_ptr[c + 1]; ++p) {
      a(row_indices[static_cast<std::size_t>(p)], c) = values[static_cast<std::size_t>(p)];
    }
  }
  return a;
}

template struct CscMatrix<float>;
template struct CscMatrix<double>;

}  // namespace gpuqr
