// Pieces shared by the QR-updating drivers (qr_update.cpp, qr_update_rows.cpp): the update's
// scratch memory and the launch counts of the reused blocked-QR leaves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "gpuqr/update.hpp"
#include "src/core/dense_kernels.hpp"
#include "src/core/dispatch.hpp"

namespace gpuqr::detail {

/// Column block of the Householder updates: GPUQR_UPDATE_NB, or 128 (CUDA) / 64 (CPU).
inline std::int64_t update_block_width(const Context& ctx) {
  std::int64_t nb = ctx.is_cuda() ? 128 : 64;
  if (const char* text = std::getenv("GPUQR_UPDATE_NB"); text != nullptr && *text != '\0') {
    const long long v = std::atoll(text);
    GPUQR_CHECK_ARG(v > 0, std::string("GPUQR_UPDATE_NB='") + text + "' is not positive");
    nb = v;
  }
  return nb;
}

/// Scratch for one update, carved from one buffer: on CUDA the context's update workspace
/// (ContextImpl::kUpdateWorkspace, grow-only, sized once per update before any work is
/// enqueued into it), on the CPU a host vector owned here. Pieces are 256-byte aligned.
class UpdateScratch {
 public:
  /// Bytes a piece of `count` elements of `elem` bytes takes.
  static std::size_t piece_bytes(std::int64_t count, std::size_t elem) {
    const std::size_t bytes = static_cast<std::size_t>(count > 0 ? count : 1) * elem;
    return (bytes + 255) / 256 * 256;
  }

  UpdateScratch(const Context& ctx, std::size_t bytes) : ctx_(ctx) {
    if (ctx.is_cuda()) {
      base_ = static_cast<char*>(cuda_workspace(ctx.impl(), bytes, ContextImpl::kUpdateWorkspace));
    } else {
      host_.assign(bytes / sizeof(double) + 1, 0.0);
      base_ = reinterpret_cast<char*>(host_.data());
    }
    end_ = base_ + bytes;
  }

  template <class T>
  MatrixView<T> matrix(std::int64_t rows, std::int64_t cols) {
    T* p = reinterpret_cast<T*>(next(piece_bytes(rows * cols, sizeof(T))));
    return MatrixView<T>(p, rows, cols, rows > 1 ? rows : 1, space_of(ctx_), ctx_.device());
  }
  template <class T>
  VectorView<T> vector(std::int64_t size) {
    T* p = reinterpret_cast<T*>(next(piece_bytes(size, sizeof(T))));
    return VectorView<T>(p, size, space_of(ctx_), ctx_.device());
  }
  /// A copy of host indices in the scratch. On CUDA the copy is synchronous on the legacy
  /// stream, so the context's stream is drained first: work queued by an earlier update may
  /// still read this part of the workspace.
  VectorView<const std::int64_t> upload(const std::vector<std::int64_t>& host) {
    VectorView<std::int64_t> v = vector<std::int64_t>(static_cast<std::int64_t>(host.size()));
    if (host.empty()) return v;
    if (ctx_.is_cuda()) ctx_.synchronize();
    copy_2d(v.data(), static_cast<std::int64_t>(host.size()), space_of(ctx_), host.data(),
            static_cast<std::int64_t>(host.size()), MemorySpace::host,
            static_cast<std::int64_t>(host.size()), 1, sizeof(std::int64_t));
    return v;
  }

 private:
  char* next(std::size_t bytes) {
    char* p = cursor_ == nullptr ? base_ : cursor_;
    GPUQR_CHECK_ARG(p + bytes <= end_, "update scratch: internal sizing error");
    cursor_ = p + bytes;
    return p;
  }
  const Context& ctx_;
  std::vector<double> host_;
  char* base_ = nullptr;
  char* cursor_ = nullptr;
  char* end_ = nullptr;
};

/// A copy of `src` (host or context memory) into `dst` (scratch in the context's memory).
template <class T>
void copy_into(const Context& ctx, MatrixView<const T> src, MatrixView<T> dst) {
  if (src.empty()) return;
  if (src.space() == space_of(ctx)) {
    GPUQR_DISPATCH(ctx, copy, src, dst);
  } else {
    ctx.synchronize();  // a synchronous copy into the workspace that queued work may still read
    copy_2d(dst.data(), dst.ld(), dst.space(), src.data(), src.ld(), src.space(), src.rows(),
            src.cols(), sizeof(T));
  }
}

/// Throws InvalidArgument (naming `routine`) when a pivot |R(i, i)| is at most
/// tol_factor ||column i|| (norms[i]): the column `what` i, column first + i of the new A~, is
/// numerically in the span of the columns before it.
inline void check_pivots(const std::vector<double>& pivots, const std::vector<double>& norms,
                         std::int64_t first, double tol_factor, const std::string& routine,
                         const char* what) {
  for (std::size_t i = 0; i < pivots.size() && i < norms.size(); ++i) {
    const double tol = tol_factor * norms[i];
    if (!(pivots[i] > tol)) {
      GPUQR_THROW(InvalidArgument,
                  routine + ": " + what + " " + std::to_string(i) + " (column " +
                      std::to_string(first + static_cast<std::int64_t>(i)) +
                      " of the new A~) is numerically in the span of the columns before it "
                      "(new pivot |R| = " + std::to_string(pivots[i]) + " <= " +
                      std::to_string(tol) + "): A~ would become rank deficient; the "
                      "factorization is unchanged");
    }
  }
}

/// Device operations the reused blocked leaves enqueue (for UpdateInfo::device_launches), on
/// the default path (GPUQR_LARFB_TRMM unset): larfb: three GEMMs; larft_known_diagonal over
/// k columns: a Gram GEMM and one merge kernel per doubling level of 32-column tiles (a copy
/// and two TRMMs per merge for levels wider than 128).
inline std::int64_t larfb_launches() { return 3; }
inline std::int64_t larft_known_diagonal_launches(std::int64_t k) {
  if (k <= 32) return 0;
  std::int64_t launches = 1;
  for (std::int64_t width = 32; width < k; width *= 2) {
    if (width <= 128) {
      ++launches;
      continue;
    }
    if (width == 256) ++launches;  // the copy, once
    for (std::int64_t s = 0; s + width < k; s += 2 * width) launches += 2;
  }
  return launches;
}
inline std::int64_t panel_qr_launches() { return 1; }
/// The blocked geqrf/ormqr of an h x k matrix (k reflectors) by outer blocks of up to 256.
inline std::int64_t blocked_launches(std::int64_t k, bool factor) {
  std::int64_t total = 0;
  for (std::int64_t j = 0; j < k; j += 256) {
    const std::int64_t jb = k - j < 256 ? k - j : 256;
    total += (factor ? ((jb + 31) / 32) * (panel_qr_launches() + larfb_launches() + 1) : 2) +
             larft_known_diagonal_launches(jb) + 1 + larfb_launches();
  }
  return total;
}

}  // namespace gpuqr::detail
