// The CPU twin of the tile engine's tasks (tile_scheduler.hpp): each task on column-major host
// matrices through the CPU leaves (LAPACK's geqrf, larft, larfb). A bundle's tiles are
// gathered into one dense panel, factored or updated, and scattered back; the reflectors
// (V, T) of every bundle are kept, so the factorization can be undone (Q R) and checked. The
// GPU task kernel will be compared with this task by task.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "gpuqr/context.hpp"
#include "gpuqr/matrix.hpp"
#include "src/core/blocked_kernels.hpp"
#include "src/core/dense_kernels.hpp"
#include "src/core/tile_scheduler.hpp"

namespace gpuqr::detail {

template <class T>
class TileEngineTwin {
 public:
  /// The batch's matrices (host, column-major), indexed by TileTask::matrix.
  explicit TileEngineTwin(std::vector<MatrixView<T>> matrices)
      : ctx_(Context::cpu()), mats_(std::move(matrices)) {
    ctx_.set_check_finite(false);
  }

  /// Runs one launch's tasks (they are independent: any order gives the same result).
  void run(const std::vector<TileTask>& tasks) {
    for (const TileTask& t : tasks) {
      if (t.kind == TileTaskKind::factorize) {
        factorize(t.matrix, t.bundle, t.col, t.rows);
      } else {
        apply(t.matrix, t.bundle, t.c0, t.c1, t.rows, Op::trans);
        if (t.kind == TileTaskKind::apply_factorize)
          factorize(t.matrix, t.next_bundle, t.c0, t.next_rows);
      }
    }
  }

  /// Undoes every factorization, last first: the matrices become Q R, which a correct
  /// schedule makes equal to the input up to rounding.
  void multiply_by_q() {
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      const Reflector& f = reflectors_.at(*it);
      const auto ct = static_cast<std::int32_t>((mats_[it->first].cols() + kTile - 1) / kTile);
      apply(it->first, it->second, f.col, ct, f.rows, Op::no_trans);
    }
  }

 private:
  struct Reflector {
    std::int32_t col = 0;
    std::vector<std::int32_t> rows;
    Matrix<T> v, t;
  };
  using Key = std::pair<std::int32_t, std::int32_t>;  // (matrix, bundle)

  std::int64_t tile_rows(std::int32_t mat, std::int32_t r) const {
    return std::min<std::int64_t>(kTile, mats_[mat].rows() - std::int64_t{r} * kTile);
  }
  /// Column range [first, last) of column tiles [c0, c1).
  std::pair<std::int64_t, std::int64_t> columns(std::int32_t mat, std::int32_t c0,
                                                std::int32_t c1) const {
    const std::int64_t n = mats_[mat].cols();
    return {std::min<std::int64_t>(n, std::int64_t{c0} * kTile),
            std::min<std::int64_t>(n, std::int64_t{c1} * kTile)};
  }
  /// The bundle's row tiles, columns [first, last), stacked into one dense block (or back).
  Matrix<T> gather(std::int32_t mat, const std::vector<std::int32_t>& rows, std::int64_t first,
                   std::int64_t last) const {
    std::int64_t h = 0;
    for (const std::int32_t r : rows) h += tile_rows(mat, r);
    Matrix<T> out(h, last - first);
    std::int64_t at = 0;
    for (const std::int32_t r : rows) {
      const std::int64_t tr = tile_rows(mat, r);
      for (std::int64_t j = first; j < last; ++j)
        for (std::int64_t i = 0; i < tr; ++i)
          out(at + i, j - first) = mats_[mat](std::int64_t{r} * kTile + i, j);
      at += tr;
    }
    return out;
  }
  void scatter(std::int32_t mat, const std::vector<std::int32_t>& rows, std::int64_t first,
               const Matrix<T>& block) {
    std::int64_t at = 0;
    for (const std::int32_t r : rows) {
      const std::int64_t tr = tile_rows(mat, r);
      for (std::int64_t j = 0; j < block.cols(); ++j)
        for (std::int64_t i = 0; i < tr; ++i)
          mats_[mat](std::int64_t{r} * kTile + i, first + j) = block(at + i, j);
      at += tr;
    }
  }

  /// QR of the bundle's column tile `col`: R into the top row tile, zeros below; V, T kept.
  void factorize(std::int32_t mat, std::int32_t bundle, std::int32_t col,
                 const std::vector<std::int32_t>& rows) {
    const auto [first, last] = columns(mat, col, col + 1);
    Matrix<T> p = gather(mat, rows, first, last);
    const std::int64_t h = p.rows(), w = p.cols(), k = std::min(h, w);
    Reflector f{col, rows, Matrix<T>(h, k), Matrix<T>(k, k)};
    if (k > 0) {
      Matrix<T> tau(k, 1), gram(k, k);
      const VectorView<T> tv(tau.data(), k, MemorySpace::host, 0);
      kernels::cpu::geqrf<T>(ctx_.impl(), p.view(), tv);
      kernels::cpu::form_v<T>(ctx_.impl(), MatrixView<const T>(p.view().block(0, 0, h, k)),
                              f.v.view());
      kernels::cpu::larft<T>(ctx_.impl(), MatrixView<const T>(f.v.view()), VectorView<const T>(tv),
                             f.t.view(), gram.view());
      for (std::int64_t j = 0; j < w; ++j)
        for (std::int64_t i = j + 1; i < h; ++i) p(i, j) = T(0);
    }
    scatter(mat, rows, first, p);
    const Key key{mat, bundle};
    reflectors_[key] = std::move(f);
    order_.push_back(key);
  }

  /// op(Q_bundle) applied to the bundle's rows, column tiles [c0, c1).
  void apply(std::int32_t mat, std::int32_t bundle, std::int32_t c0, std::int32_t c1,
             const std::vector<std::int32_t>& rows, Op op) {
    const Reflector& f = reflectors_.at(Key{mat, bundle});
    const auto [first, last] = columns(mat, c0, c1);
    if (last <= first || f.v.cols() == 0) return;
    Matrix<T> c = gather(mat, rows, first, last);
    Matrix<T> work(f.v.cols(), c.cols());
    kernels::cpu::larfb<T>(ctx_.impl(), Side::left, op, MatrixView<const T>(f.v.view()),
                           MatrixView<const T>(f.t.view()), c.view(), work.view());
    scatter(mat, rows, first, c);
  }

  Context ctx_;
  std::vector<MatrixView<T>> mats_;
  std::map<Key, Reflector> reflectors_;
  std::vector<Key> order_;  ///< factorizations in launch order
};

}  // namespace gpuqr::detail
