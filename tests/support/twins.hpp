// Scaffolding of the CUDA-vs-CPU twin tests: device buffers, entrywise comparisons of a CUDA
// leaf's output with its CPU twin's, bitwise comparisons (same_bits).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "gpuqr/matrix.hpp"
#include "tests/support/backends.hpp"

namespace gpuqr::testing {

/// max |x - y| / max |y| over the leading rows x cols (all of y by default; max |x - y| when
/// y is 0); with strictly_lower_only, over the entries below the diagonal alone.
template <class T>
double entry_diff(const Matrix<T>& x, const Matrix<T>& y, std::int64_t rows = -1,
                  std::int64_t cols = -1, bool strictly_lower_only = false) {
  rows = rows < 0 ? y.rows() : rows;
  cols = cols < 0 ? y.cols() : cols;
  double diff = 0.0, size = 0.0;
  for (std::int64_t j = 0; j < cols; ++j)
    for (std::int64_t i = 0; i < rows; ++i) {
      if (strictly_lower_only && i <= j) continue;
      diff = std::max(diff, std::abs(double(x(i, j)) - double(y(i, j))));
      size = std::max(size, std::abs(double(y(i, j))));
    }
  return size > 0 ? diff / size : diff;
}

/// Bitwise equality of two host matrices (NaN equal to NaN).
template <class T>
bool same_bits(const Matrix<T>& x, const Matrix<T>& y) {
  if (x.rows() != y.rows() || x.cols() != y.cols()) return false;
  for (std::int64_t j = 0; j < x.cols(); ++j)
    for (std::int64_t i = 0; i < x.rows(); ++i)
      if (std::memcmp(&x(i, j), &y(i, j), sizeof(T)) != 0) return false;
  return true;
}

/// A host copy of the leading rows x cols block of x.
template <class T>
Matrix<T> lead(const Matrix<T>& x, std::int64_t rows, std::int64_t cols) {
  return Matrix<T>::copy_of(MatrixView<const T>(x.view().block(0, 0, rows, cols)));
}

/// An uninitialized rows x cols matrix in the device memory of `gpu`.
template <class T>
Matrix<T> device_matrix(const Context& gpu, std::int64_t rows, std::int64_t cols) {
  return Matrix<T>(rows, cols, MemorySpace::device, gpu.device());
}

/// A copy of a host matrix in the memory of `gpu`.
template <class T>
Matrix<T> device_copy(const Context& gpu, const Matrix<T>& host) {
  return to_ctx<T>(gpu, host.view());
}

/// Zeros the strictly lower triangle of a square factor (LAPACK's larft leaves it undefined).
template <class T>
void zero_below_diagonal(Matrix<T>& t) {
  for (std::int64_t j = 0; j < t.cols(); ++j)
    for (std::int64_t i = j + 1; i < t.rows(); ++i) t(i, j) = T(0);
}

/// A device copy of a host array (owning): indices, row counts, pointer arrays.
template <class E>
class DeviceArray {
 public:
  DeviceArray(const std::vector<E>& host, int device)
      : size_(static_cast<std::int64_t>(host.size())), device_(device) {
    const std::size_t bytes = host.size() * sizeof(E);
    data_ = static_cast<E*>(detail::allocate(bytes, MemorySpace::device, device));
    detail::copy_2d(data_, size_, MemorySpace::device, host.data(), size_, MemorySpace::host,
                    size_, 1, sizeof(E));
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { detail::deallocate(data_, MemorySpace::device, device_); }
  E* data() const { return data_; }
  VectorView<const E> view() const {
    return VectorView<const E>(data_, size_, MemorySpace::device, device_);
  }

 private:
  E* data_ = nullptr;
  std::int64_t size_ = 0;
  int device_ = 0;
};

}  // namespace gpuqr::testing
