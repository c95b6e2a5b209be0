// gpuqr/matrix.hpp: column-major matrix views and owning matrices, on the host or a device.
//
// A view is (data, rows, cols, leading dimension, memory space) and owns nothing. A Matrix owns
// its storage (RAII, move-only; copy explicitly with clone()). Element access through
// operator() is for host memory only.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "gpuqr/error.hpp"

namespace gpuqr {

enum class MemorySpace { host, device };

/// "host" or "device".
const char* to_string(MemorySpace space);

/// A column-major rows x cols matrix at `data` with leading dimension ld >= max(1, rows).
template <class T>
class MatrixView {
 public:
  using value_type = std::remove_const_t<T>;

  MatrixView() = default;
  MatrixView(T* data, std::int64_t rows, std::int64_t cols, std::int64_t ld,
             MemorySpace space = MemorySpace::host, int device = -1)
      : data_(data), rows_(rows), cols_(cols), ld_(ld), space_(space), device_(device) {
    GPUQR_CHECK_ARG(rows >= 0 && cols >= 0, "matrix dimensions must be non-negative");
    GPUQR_CHECK_ARG(ld >= (rows > 1 ? rows : 1), "leading dimension must be >= max(1, rows)");
    GPUQR_CHECK_ARG(data != nullptr || rows == 0 || cols == 0, "null data for a non-empty matrix");
  }

  /// A const view of the same memory (for views of non-const T).
  template <class U = T, std::enable_if_t<!std::is_const_v<U>, int> = 0>
  operator MatrixView<const value_type>() const {
    return MatrixView<const value_type>(data_, rows_, cols_, ld_, space_, device_);
  }

  T* data() const noexcept { return data_; }
  std::int64_t rows() const noexcept { return rows_; }
  std::int64_t cols() const noexcept { return cols_; }
  std::int64_t ld() const noexcept { return ld_; }
  MemorySpace space() const noexcept { return space_; }
  /// The CUDA device of device memory; -1 for host memory.
  int device() const noexcept { return device_; }
  bool empty() const noexcept { return rows_ == 0 || cols_ == 0; }
  bool on_host() const noexcept { return space_ == MemorySpace::host; }

  /// Element (i, j); host memory only, unchecked.
  T& operator()(std::int64_t i, std::int64_t j) const noexcept { return data_[i + j * ld_]; }

  /// The r x c block starting at (i, j); throws InvalidArgument when it leaves the matrix.
  MatrixView block(std::int64_t i, std::int64_t j, std::int64_t r, std::int64_t c) const {
    GPUQR_CHECK_ARG(i >= 0 && j >= 0 && r >= 0 && c >= 0 && i + r <= rows_ && j + c <= cols_,
                    "block out of range");
    T* p = (r > 0 && c > 0) ? data_ + i + j * ld_ : data_;
    return MatrixView(p, r, c, ld_, space_, device_);
  }
  /// Column j as a rows x 1 view.
  MatrixView col(std::int64_t j) const { return block(0, j, rows_, 1); }

 private:
  T* data_ = nullptr;
  std::int64_t rows_ = 0;
  std::int64_t cols_ = 0;
  std::int64_t ld_ = 1;
  MemorySpace space_ = MemorySpace::host;
  int device_ = -1;
};

/// A vector of `size` elements, contiguous, on the host or a device (tau of geqrf).
template <class T>
class VectorView {
 public:
  using value_type = std::remove_const_t<T>;
  VectorView() = default;
  VectorView(T* data, std::int64_t size, MemorySpace space = MemorySpace::host, int device = -1)
      : data_(data), size_(size), space_(space), device_(device) {
    GPUQR_CHECK_ARG(size >= 0, "vector size must be non-negative");
    GPUQR_CHECK_ARG(data != nullptr || size == 0, "null data for a non-empty vector");
  }
  template <class U = T, std::enable_if_t<!std::is_const_v<U>, int> = 0>
  operator VectorView<const value_type>() const {
    return VectorView<const value_type>(data_, size_, space_, device_);
  }
  T* data() const noexcept { return data_; }
  std::int64_t size() const noexcept { return size_; }
  MemorySpace space() const noexcept { return space_; }
  int device() const noexcept { return device_; }
  T& operator[](std::int64_t i) const noexcept { return data_[i]; }

 private:
  T* data_ = nullptr;
  std::int64_t size_ = 0;
  MemorySpace space_ = MemorySpace::host;
  int device_ = -1;
};

namespace detail {
/// Allocates `bytes` in `space` (device: on CUDA device `device`). Throws OutOfMemory
/// (with the byte count) or NotCompiled. Zero bytes gives nullptr.
void* allocate(std::size_t bytes, MemorySpace space, int device);
/// Frees what allocate() returned; never throws.
void deallocate(void* p, MemorySpace space, int device) noexcept;
/// Copies a rows x cols column-major block of `elem` bytes per entry between any two spaces,
/// synchronously (the caller's stream work must be complete or on the null stream).
void copy_2d(void* dst, std::int64_t ldd, MemorySpace dst_space, const void* src,
             std::int64_t lds, MemorySpace src_space, std::int64_t rows, std::int64_t cols,
             std::size_t elem);
}  // namespace detail

/// An owning column-major matrix with ld = max(1, rows). Move-only.
template <class T>
class Matrix {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "gpuqr matrices hold float or double");

 public:
  Matrix() = default;
  /// Uninitialized rows x cols storage in `space` (device: CUDA device `device`).
  Matrix(std::int64_t rows, std::int64_t cols, MemorySpace space = MemorySpace::host,
         int device = -1)
      : rows_(rows), cols_(cols), ld_(rows > 1 ? rows : 1), space_(space),
        device_(space == MemorySpace::host ? -1 : (device < 0 ? 0 : device)) {
    GPUQR_CHECK_ARG(rows >= 0 && cols >= 0, "matrix dimensions must be non-negative");
    data_ = static_cast<T*>(detail::allocate(bytes(), space_, device_));
  }
  ~Matrix() { detail::deallocate(data_, space_, device_); }
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;
  Matrix(Matrix&& o) noexcept { swap(o); }
  Matrix& operator=(Matrix&& o) noexcept {
    Matrix tmp(std::move(o));
    swap(tmp);
    return *this;
  }

  /// A copy of `src` (any space) placed in `space`.
  static Matrix copy_of(MatrixView<const T> src, MemorySpace space = MemorySpace::host,
                        int device = -1) {
    Matrix m(src.rows(), src.cols(), space, device < 0 ? src.device() : device);
    detail::copy_2d(m.data_, m.ld_, m.space_, src.data(), src.ld(), src.space(), src.rows(),
                    src.cols(), sizeof(T));
    return m;
  }
  /// A copy of this matrix in `space`.
  Matrix clone(MemorySpace space) const { return copy_of(view(), space, device_); }
  Matrix clone() const { return clone(space_); }
  /// A host copy (this matrix when already on the host is copied too).
  Matrix to_host() const { return clone(MemorySpace::host); }

  MatrixView<T> view() { return MatrixView<T>(data_, rows_, cols_, ld_, space_, device_); }
  MatrixView<const T> view() const {
    return MatrixView<const T>(data_, rows_, cols_, ld_, space_, device_);
  }
  operator MatrixView<T>() { return view(); }
  operator MatrixView<const T>() const { return view(); }

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::int64_t rows() const noexcept { return rows_; }
  std::int64_t cols() const noexcept { return cols_; }
  std::int64_t ld() const noexcept { return ld_; }
  MemorySpace space() const noexcept { return space_; }
  int device() const noexcept { return device_; }
  bool empty() const noexcept { return rows_ == 0 || cols_ == 0; }
  T& operator()(std::int64_t i, std::int64_t j) noexcept { return data_[i + j * ld_]; }
  const T& operator()(std::int64_t i, std::int64_t j) const noexcept {
    return data_[i + j * ld_];
  }

 private:
  std::size_t bytes() const {
    return static_cast<std::size_t>(ld_) * static_cast<std::size_t>(cols_) * sizeof(T);
  }
  void swap(Matrix& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(rows_, o.rows_);
    std::swap(cols_, o.cols_);
    std::swap(ld_, o.ld_);
    std::swap(space_, o.space_);
    std::swap(device_, o.device_);
  }
  T* data_ = nullptr;
  std::int64_t rows_ = 0;
  std::int64_t cols_ = 0;
  std::int64_t ld_ = 1;
  MemorySpace space_ = MemorySpace::host;
  int device_ = -1;
};

}  // namespace gpuqr
