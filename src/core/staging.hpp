// Host arguments of a call on a CUDA context: the LAPACK-level functions accept host matrices
// there too (as cuSOLVER users with data on the host expect). Each host argument is copied
// into a device matrix for the call (allocated per call: this is the convenience path; keep
// data on the device to avoid it) and, when it is an output, copied back after the call
// succeeded, so a failed call leaves the caller's host data untouched. The copies' time and
// bytes are added to the context's staging statistics (Context::staging_stats), so that time
// can be reported apart from the computation.
#pragma once

#include <algorithm>
#include <chrono>
#include <optional>
#include <type_traits>

#include "gpuqr/context.hpp"
#include "gpuqr/matrix.hpp"
#include "src/core/context_impl.hpp"

namespace gpuqr::detail {

/// True when `ctx` is a CUDA context and the view is in host memory.
template <class V>
bool host_on_cuda(const Context& ctx, const V& v) {
  return ctx.is_cuda() && v.space() == MemorySpace::host;
}

/// Adds one copy's bytes and the seconds since `start` to the context's staging statistics.
inline void count_staging(const Context& ctx, std::int64_t bytes,
                          std::chrono::steady_clock::time_point start) {
  ContextImpl& impl = ctx.impl();
  impl.staging_bytes += bytes;
  impl.staging_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// A matrix argument as the call sees it: the caller's view, or a device copy of a host view
/// on a CUDA context (copied in at construction unless `copy_in` is false).
template <class T>
class StagedMatrix {
 public:
  using Value = std::remove_const_t<T>;

  StagedMatrix(const Context& ctx, MatrixView<T> user, bool copy_in = true)
      : ctx_(ctx), user_(user) {
    if (!host_on_cuda(ctx, user)) return;
    const auto start = std::chrono::steady_clock::now();
    copy_.emplace(user.rows(), user.cols(), MemorySpace::device, ctx.device());
    if (copy_in) {
      detail::copy_2d(copy_->data(), copy_->ld(), MemorySpace::device, user.data(), user.ld(),
                      MemorySpace::host, user.rows(), user.cols(), sizeof(Value));
      count_staging(ctx, bytes(), start);
    }
  }

  MatrixView<T> view() const { return copy_ ? MatrixView<T>(copy_->view()) : user_; }

  /// Copies the device copy back into the caller's host view (outputs only; waits for the
  /// context's work, as any host read of a result must).
  void copy_back() const {
    if constexpr (!std::is_const_v<T>) {
      if (!copy_) return;
      const auto start = std::chrono::steady_clock::now();
      ctx_.synchronize();
      detail::copy_2d(user_.data(), user_.ld(), MemorySpace::host, copy_->data(), copy_->ld(),
                      MemorySpace::device, user_.rows(), user_.cols(), sizeof(Value));
      count_staging(ctx_, bytes(), start);
    }
  }

 private:
  std::int64_t bytes() const {
    return user_.rows() * user_.cols() * static_cast<std::int64_t>(sizeof(Value));
  }
  const Context& ctx_;
  MatrixView<T> user_;
  mutable std::optional<Matrix<Value>> copy_;
};

/// As StagedMatrix, for a vector (tau).
template <class T>
class StagedVector {
 public:
  StagedVector(const Context& ctx, VectorView<T> user, bool copy_in = true)
      : matrix_(ctx, MatrixView<T>(user.data(), user.size(), 1, std::max<std::int64_t>(user.size(), 1),
                                   user.space(), user.device()),
                copy_in) {}
  VectorView<T> view() const {
    const MatrixView<T> m = matrix_.view();
    return VectorView<T>(m.data(), m.rows(), m.space(), m.device());
  }
  void copy_back() const { matrix_.copy_back(); }

 private:
  StagedMatrix<T> matrix_;
};

}  // namespace gpuqr::detail
