// The blocked Householder reductions shared by the column updates (qr_update_columns.cpp):
// a panel step (factor an h x jb panel, apply its block reflector to the matrix's other
// columns, to d and to Q), the band reduction of remove_columns (Andrew & Dingle 3.1: R
// with p subdiagonals, panels of jb + p rows) and the bottom-up windowed reduction of add_columns
// and the rank-k update (their future work: Householder in place of Givens). Backend-agnostic:
// every step is a leaf of blocked_kernels.hpp / dense_kernels.hpp, enqueued in order; the
// scratch is carved once, before the loops, which neither allocate nor synchronize.
#pragma once

#include <algorithm>
#include <cstdint>

#include "src/core/blocked_kernels.hpp"
#include "src/core/dense_kernels.hpp"
#include "src/core/dispatch.hpp"
#include "src/core/qr_update_internal.hpp"

namespace gpuqr::detail {

/// Runs the panel steps of one column update. Rows of the matrix being reduced map to Q's
/// columns and d's rows by an offset given per call (Q H from the right, H^T d).
template <class T>
class BandReducer {
 public:
  /// Sizes the scratch: panels of at most nb columns and hmax rows, other columns of at most
  /// rest_cols, Q with mq rows (0: no Q), nrhs right-hand sides.
  struct Sizes {
    std::int64_t nb = 1, hmax = 1, rest_cols = 0, mq = 0, nrhs = 0;
  };
  static std::size_t bytes(const Sizes& s, std::size_t es) {
    auto b = [&](std::int64_t count) { return UpdateScratch::piece_bytes(count, es); };
    return 2 * b(s.hmax * s.nb) + b(s.nb) + 2 * b(s.nb * s.nb) + b(32 * s.nb) +
           b(s.nb * std::max<std::int64_t>({s.rest_cols, s.nrhs, 1})) +
           b(std::max<std::int64_t>(s.mq, 1) * s.nb);
  }

  BandReducer(const Context& ctx, UpdateScratch& scratch, const Sizes& s, MatrixView<T> q,
              MatrixView<T> d)
      : ctx_(ctx), sizes_(s), q_(q), d_(d) {
    s_buf_ = scratch.matrix<T>(s.hmax, s.nb);
    v_buf_ = scratch.matrix<T>(s.hmax, s.nb);
    tau_ = scratch.vector<T>(s.nb);
    t_buf_ = scratch.matrix<T>(s.nb, s.nb);
    gram_ = scratch.matrix<T>(s.nb, s.nb);
    wi_ = scratch.matrix<T>(32, s.nb);
    w_ = scratch.matrix<T>(s.nb, std::max<std::int64_t>({s.rest_cols, s.nrhs, 1}));
    wq_ = scratch.matrix<T>(std::max<std::int64_t>(s.mq, 1), s.nb);
  }

  /// Householder QR of `panel` (h x jb, h >= jb, jb <= nb, h <= hmax) in place: R on and
  /// above its diagonal, zeros below. Its block reflector H is applied as H^T to rest1 and
  /// rest2 (h rows each; either may be empty) and to d's rows off..off+h, and as Q H to Q's
  /// columns off..off+h.
  void step(MatrixView<T> panel, MatrixView<T> rest1, MatrixView<T> rest2, std::int64_t off) {
    const std::int64_t h = panel.rows(), jb = panel.cols();
    GPUQR_CHECK_ARG(jb >= 1 && h >= jb && jb <= sizes_.nb && h <= sizes_.hmax,
                    "column update: internal panel sizing error");
    MatrixView<T> s = s_buf_.block(0, 0, h, jb);
    MatrixView<T> v = v_buf_.block(0, 0, h, jb);
    MatrixView<T> t = t_buf_.block(0, 0, jb, jb);
    GPUQR_DISPATCH(ctx_, copy, MatrixView<const T>(panel), s);
    const std::int64_t inner = std::min<std::int64_t>(
        {32, jb, GPUQR_DISPATCH(ctx_, max_panel_width, static_cast<int>(sizeof(T)), h)});
    launches_ += 1;
    for (std::int64_t i = 0; i < jb; i += inner) {
      const std::int64_t ib = std::min(inner, jb - i);
      if (i > 0) {  // V's rows above the inner panel are zero (panel_qr writes rows i..h)
        GPUQR_DISPATCH(ctx_, laset, T(0), T(0), v.block(0, i, i, ib));
        ++launches_;
      }
      GPUQR_DISPATCH(ctx_, panel_qr, s.block(i, i, h - i, ib), sub(tau_, i, ib),
                     v.block(i, i, h - i, ib), t.block(i, i, ib, ib));
      launches_ += panel_qr_launches();
      if (i + ib < jb) {
        GPUQR_DISPATCH(ctx_, larfb, Side::left, Op::trans,
                       MatrixView<const T>(v.block(i, i, h - i, ib)),
                       MatrixView<const T>(t.block(i, i, ib, ib)),
                       s.block(i, i + ib, h - i, jb - i - ib), wi_.block(0, 0, ib, jb - i - ib));
        launches_ += larfb_launches();
      }
    }
    GPUQR_DISPATCH(ctx_, larft_known_diagonal, MatrixView<const T>(v),
                   VectorView<const T>(sub(tau_, 0, jb)), t, gram_.block(0, 0, jb, jb), inner);
    GPUQR_DISPATCH(ctx_, copy_upper, MatrixView<const T>(s), panel);
    launches_ += larft_known_diagonal_launches(jb) + 1;
    const MatrixView<const T> vc = v, tc = t;
    for (MatrixView<T> rest : {rest1, rest2}) {
      if (rest.empty()) continue;
      GPUQR_DISPATCH(ctx_, larfb, Side::left, Op::trans, vc, tc, rest,
                     w_.block(0, 0, jb, rest.cols()));
      launches_ += larfb_launches();
    }
    if (!d_.empty() && d_.cols() > 0) {
      GPUQR_DISPATCH(ctx_, larfb, Side::left, Op::trans, vc, tc, d_.block(off, 0, h, d_.cols()),
                     w_.block(0, 0, jb, d_.cols()));
      launches_ += larfb_launches();
    }
    if (!q_.empty()) {
      GPUQR_DISPATCH(ctx_, larfb, Side::right, Op::no_trans, vc, tc,
                     q_.block(0, off, q_.rows(), h), wq_.block(0, 0, q_.rows(), jb));
      launches_ += larfb_launches();
    }
    ++blocks_;
  }

  /// Reduces x (rows x cols, rows >= cols, x(i, j) = 0 for i > j + bw) to upper triangular
  /// (zeros below): panels of nb columns and jb + bw rows. x's row 0 is Q's column / d's
  /// row `off`.
  void reduce_band(MatrixView<T> x, std::int64_t bw, std::int64_t off) {
    const std::int64_t rows = x.rows(), cols = x.cols();
    for (std::int64_t j = 0; j < cols; j += sizes_.nb) {
      const std::int64_t jb = std::min(sizes_.nb, cols - j);
      const std::int64_t h = std::min(jb + bw, rows - j);
      step(x.block(j, j, h, jb), x.block(j, j + jb, h, cols - j - jb), MatrixView<T>(),
           off + j);
    }
  }

  /// Reduces m's first p columns (rows x p, rows >= p) to a p x p upper triangle on top,
  /// zeros below, by QR of windows of s + p rows from the bottom up (each window holds the
  /// previous window's triangle in its last p rows and s new rows above it). Each window's
  /// reflectors are applied to m's columns p + a.. (a: the window's first row; the columns
  /// left of it are zero in the window's rows when m's columns p.. are upper triangular at
  /// the start). Afterwards m(i, p + j) = 0 for i > p + j + s - 1: a band of s - 1
  /// subdiagonals in m's own coordinates. m's row 0 is Q's column / d's row `off`.
  void reduce_from_bottom(MatrixView<T> m, std::int64_t p, std::int64_t s, std::int64_t off) {
    const std::int64_t rows = m.rows(), cols = m.cols();
    std::int64_t e = rows, a = std::max<std::int64_t>(0, rows - s - p);
    for (;;) {
      for (std::int64_t c = 0; c < p; c += sizes_.nb) {
        const std::int64_t cb = std::min(sizes_.nb, p - c), h = e - a - c;
        step(m.block(a + c, c, h, cb), m.block(a + c, c + cb, h, p - c - cb),
             m.block(a + c, p + a, h, cols - p - a), off + a + c);
      }
      if (a == 0) break;
      e = a + p;
      a = std::max<std::int64_t>(0, a - s);
    }
  }

  std::int64_t launches() const noexcept { return launches_; }
  std::int64_t blocks() const noexcept { return blocks_; }

 private:
  static VectorView<T> sub(VectorView<T> v, std::int64_t offset, std::int64_t size) {
    return VectorView<T>(v.data() + offset, size, v.space(), v.device());
  }

  const Context& ctx_;
  Sizes sizes_;
  MatrixView<T> q_, d_;
  MatrixView<T> s_buf_, v_buf_, t_buf_, gram_, wi_, w_, wq_;
  VectorView<T> tau_;
  std::int64_t launches_ = 0, blocks_ = 0;
};

}  // namespace gpuqr::detail
