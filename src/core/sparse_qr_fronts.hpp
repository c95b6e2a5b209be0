// Internal to src/core/sparse_qr_factor.cpp: the dense staircase QR of one assembled front
// on the CPU (the Factorize task of the sparse scheduler's CPU twin), with Heath's rank
// detection.
#pragma once

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "gpuqr/context.hpp"
#include "gpuqr/dense.hpp"
#include "gpuqr/matrix.hpp"

namespace gpuqr::detail {

// BLAS/LAPACK for the unblocked rank-detecting pivot columns.
inline double nrm2(std::int64_t n, const float* x) { return cblas_snrm2(static_cast<int>(n), x, 1); }
inline double nrm2(std::int64_t n, const double* x) { return cblas_dnrm2(static_cast<int>(n), x, 1); }
inline void larfg(std::int64_t n, float* alpha, float* x, float* tau) {
  LAPACKE_slarfg(static_cast<lapack_int>(n), alpha, x, 1, tau);
}
inline void larfg(std::int64_t n, double* alpha, double* x, double* tau) {
  LAPACKE_dlarfg(static_cast<lapack_int>(n), alpha, x, 1, tau);
}
/// C := (I - tau v v^T) C for C m x n (ld ldc), v of length m with v[0] == 1 stored.
inline void apply_reflector(std::int64_t m, std::int64_t n, const float* v, float tau, float* c,
                            std::int64_t ldc, float* work) {
  cblas_sgemv(CblasColMajor, CblasTrans, static_cast<int>(m), static_cast<int>(n), 1.0f, c,
              static_cast<int>(ldc), v, 1, 0.0f, work, 1);
  cblas_sger(CblasColMajor, static_cast<int>(m), static_cast<int>(n), -tau, v, 1, work, 1, c,
             static_cast<int>(ldc));
}
inline void apply_reflector(std::int64_t m, std::int64_t n, const double* v, double tau, double* c,
                            std::int64_t ldc, double* work) {
  cblas_dgemv(CblasColMajor, CblasTrans, static_cast<int>(m), static_cast<int>(n), 1.0, c,
              static_cast<int>(ldc), v, 1, 0.0, work, 1);
  cblas_dger(CblasColMajor, static_cast<int>(m), static_cast<int>(n), -tau, v, 1, work, 1, c,
             static_cast<int>(ldc));
}

/// Staircase QR of an assembled front `qr` (rows x width: ncols front columns, then carried
/// right-hand sides) whose column j is nonzero only in rows [0, stair[j]) (j < ncols).
/// `npiv` pivot columns, `cb_cols` = ncols - npiv. tol >= 0: Heath's rank detection on the
/// pivot columns (a column whose norm over the rows still available is <= tol is dead:
/// zeroed there, no reflector); otherwise the 64-column blocked path. Fills tau (one per
/// reflector row, min(rows, ncols) entries) and pivot_row (per pivot: its front row, -1 when
/// missing or dead); returns the number of live pivots (the front rows holding R's rows).
///
/// A block of columns [c0, c1) whose first reflector sits in row r0 is factored, and applied
/// to the columns right of it, on rows [r0, stair[c1 - 1]) alone: the zeros below the
/// staircase are never computed on (they stay exact zeros in V, so applying the whole front's
/// reflectors later, as solve does, gives the same result).
template <class T>
std::int64_t staircase_qr(const Context& ctx, Matrix<T>& qr, const std::vector<std::int64_t>& stair,
                          std::int64_t npiv, std::int64_t cb_cols, double tol,
                          std::vector<T>& tau, std::vector<std::int64_t>& pivot_row,
                          std::vector<T>& work) {
  using I = std::int64_t;
  const I rows = qr.rows(), width = qr.cols(), ncols = npiv + cb_cols;
  tau.assign(static_cast<std::size_t>(std::min(rows, ncols)), T(0));
  pivot_row.assign(static_cast<std::size_t>(npiv), -1);
  // Blocked geqrf + ormqr of the columns [c_begin, c_end), the first one's reflector in row
  // r_begin (each next column one row lower).
  // 64 columns per block, measured on Groebner and Franz6 (2 cores): 32 is 2x slower than the
  // unblocked front (LAPACK's per-call costs), 64 the fastest, 128-256 within 10% of it.
  auto blocked = [&](I c_begin, I c_end, I r_begin) {
    constexpr I block = 64;
    for (I c0 = c_begin; c0 < c_end; c0 += block) {
      const I c1 = std::min(c0 + block, c_end);
      const I r0 = r_begin + (c0 - c_begin);
      const I height = std::max(stair[c1 - 1], r0) - r0;
      if (height == 0) continue;  // no row reaches these columns: H = I, tau stays 0
      const I kb = std::min(height, c1 - c0);
      VectorView<T> tau_block(tau.data() + r0, kb);
      geqrf<T>(ctx, qr.view().block(r0, c0, height, c1 - c0), tau_block);
      if (c1 < width) {
        ormqr<T>(ctx, Side::left, Op::trans,
                 MatrixView<const T>(qr.view().block(r0, c0, height, kb)),
                 VectorView<const T>(tau_block), qr.view().block(r0, c1, height, width - c1));
      }
    }
  };
  if (tol < 0) {
    blocked(0, std::min(rows, ncols), 0);
    const I live = std::min(rows, npiv);
    for (I i = 0; i < live; ++i) pivot_row[i] = i;
    return live;
  }
  // Pivot columns one by one within panels of 64 (Heath's method, as SuiteSparseQR): column
  // j's norm over rows [live, stair[j]) decides; a dead column is zeroed there and the next
  // pivot takes the same row. A live column's reflector (larfg) is applied at once to the
  // rest of its panel (BLAS-2); the panel's live reflectors, copied together into V
  // (reflector t's head in row t, as geqrf leaves them), are then applied to the columns
  // right of the panel by ormqr (blocked), on rows [first row, stair) alone.
  constexpr I panel = 64;
  work.resize(static_cast<std::size_t>(panel));
  const I ld = qr.ld();
  I live = 0;
  std::vector<I> live_cols;
  for (I c0 = 0; c0 < npiv; c0 += panel) {
    const I c1 = std::min(c0 + panel, npiv);
    const I r0 = live;
    live_cols.clear();
    for (I j = c0; j < c1; ++j) {
      const I len = stair[j] - live;
      if (len <= 0) continue;  // no row left: dead (norm 0)
      T* col = qr.data() + live + j * ld;
      if (nrm2(len, col) <= tol) {
        std::fill(col, col + len, T(0));
        continue;
      }
      T beta = col[0], t = T(0);
      larfg(len, &beta, col + 1, &t);
      if (t != T(0) && j + 1 < c1) {
        col[0] = T(1);
        apply_reflector(len, c1 - j - 1, col, t, col + ld, ld, work.data());
      }
      col[0] = beta;
      tau[live] = t;
      pivot_row[j] = live++;
      live_cols.push_back(j);
    }
    const I nl = live - r0;
    if (nl == 0 || c1 >= width) continue;
    const I h = stair[c1 - 1] - r0;  // >= nl: every live reflector has a row below its head
    Matrix<T> v(h, nl);
    for (I t = 0; t < nl; ++t)
      std::copy(qr.data() + r0 + live_cols[t] * ld, qr.data() + r0 + live_cols[t] * ld + h,
                v.data() + t * v.ld());
    ormqr<T>(ctx, Side::left, Op::trans, MatrixView<const T>(v.view()),
             VectorView<const T>(tau.data() + r0, nl), qr.view().block(r0, c1, h, width - c1));
  }
  // The contribution-block columns: blocked, from row `live` on.
  const I kcb = std::min(rows - live, cb_cols);
  if (kcb > 0) blocked(npiv, npiv + kcb, live);
  return live;
}

}  // namespace gpuqr::detail
