// CPU backend of the TSQR leaves (src/core/tsqr_kernels.hpp): each block is gathered into a
// contiguous buffer, factored by LAPACK's geqr2 or transformed by ormqr, and scattered back.
// The reference twins of src/cuda/tsqr_kernels.cu (same algorithm as geqr2: the same reflectors
// up to rounding). Stacked triangles are gathered with their zeros, which geqr2 keeps exact.
#include "src/core/tsqr_kernels.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "src/cpu/lapack_wrappers.hpp"

namespace gpuqr::kernels::cpu {

using lapack::check_info;
using lapack::geqr2;
using lapack::to_int;

namespace {


/// Block q of `p` (cols columns) into buf (ld = its rows): with `triangles`, each piece's
/// upper triangle and zeros below; with `top`, only the first `top` rows, zeros below.
template <class T, class P>
void gather(const P& p, std::int64_t q, std::int64_t cols, bool triangles, std::int64_t top,
            std::vector<T>& buf, std::int64_t ldb) {
  std::fill(buf.begin(), buf.end(), T(0));
  std::int64_t offset = 0;
  for (std::int64_t k = 0; k < p.pieces_in(q); ++k) {
    const std::int64_t c = q * p.group + k;
    const auto* src = p.piece_ptr(c);
    const std::int64_t rows = p.piece_rows(c), ld = p.piece_ld(c);
    for (std::int64_t j = 0; j < cols; ++j) {
      std::int64_t end = triangles ? std::min(j + 1, rows) : rows;
      if (top >= 0) end = std::min(end, std::max<std::int64_t>(top - offset, 0));
      for (std::int64_t i = 0; i < end; ++i) buf[offset + i + j * ldb] = src[i + j * ld];
    }
    offset += rows;
  }
}

/// buf (ld = block rows) into block q of `p` (cols columns).
template <class T>
void scatter(const Pieces<T>& p, std::int64_t q, std::int64_t cols, const std::vector<T>& buf,
             std::int64_t ldb) {
  std::int64_t offset = 0;
  for (std::int64_t k = 0; k < p.pieces_in(q); ++k) {
    const std::int64_t c = q * p.group + k;
    T* dst = p.piece_ptr(c);
    const std::int64_t rows = p.piece_rows(c), ld = p.piece_ld(c);
    for (std::int64_t j = 0; j < cols; ++j)
      for (std::int64_t i = 0; i < rows; ++i) dst[i + j * ld] = buf[offset + i + j * ldb];
    offset += rows;
  }
}

}  // namespace

std::int64_t tsqr_block_rows_limit(detail::ContextImpl&, int, std::int64_t, std::int64_t) {
  return std::numeric_limits<std::int32_t>::max();
}

template <class T>
void tsqr_batched_geqrf(detail::ContextImpl&, Pieces<const T> src, Pieces<T> dst,
                        std::int64_t n, MatrixView<T> tau, bool stacked) {
  std::vector<T> buf, work(static_cast<std::size_t>(std::max<std::int64_t>(n, 1)));
  for (std::int64_t q = 0; q < src.blocks(); ++q) {
    const std::int64_t rows = src.block_rows(q);
    const std::int64_t ldb = std::max<std::int64_t>(rows, 1);
    buf.assign(static_cast<std::size_t>(ldb * n), T(0));
    gather<T>(src, q, n, stacked, -1, buf, ldb);
    T* t = tau.data() + q * tau.ld();
    std::fill(t, t + n, T(0));
    if (rows > 0 && n > 0) {
      check_info(geqr2(to_int(rows, "m"), to_int(n, "n"), buf.data(), to_int(ldb, "lda"), t,
                       work.data()),
                 "geqr2");
    }
    scatter<T>(dst, q, n, buf, ldb);
  }
}

template <class T>
void tsqr_batched_apply(detail::ContextImpl&, Op op, Pieces<const T> v, std::int64_t n,
                        MatrixView<const T> tau, Pieces<T> c, std::int64_t k, bool,
                        bool top_only) {
  std::vector<T> vbuf, cbuf;
  for (std::int64_t q = 0; q < v.blocks(); ++q) {
    const std::int64_t rows = v.block_rows(q);
    const std::int64_t ldb = std::max<std::int64_t>(rows, 1);
    const std::int64_t kk = std::min(rows, n);
    vbuf.assign(static_cast<std::size_t>(ldb * n), T(0));
    cbuf.assign(static_cast<std::size_t>(ldb * k), T(0));
    gather<T>(v, q, n, false, -1, vbuf, ldb);
    gather<T>(c.template as<const T>(), q, k, false, top_only ? n : -1, cbuf, ldb);
    if (kk > 0 && k > 0) {
      check_info(lapack::ormqr('L', op == Op::trans ? 'T' : 'N', to_int(rows, "m"),
                               to_int(k, "n"), to_int(kk, "k"), vbuf.data(), to_int(ldb, "lda"),
                               tau.data() + q * tau.ld(), cbuf.data(), to_int(ldb, "ldc")),
                 "ormqr");
    }
    scatter<T>(c, q, k, cbuf, ldb);
  }
}

template <class T>
void tsqr_set_tops(detail::ContextImpl&, Pieces<T> c, std::int64_t n, std::int64_t k) {
  for (std::int64_t q = 0; q < c.blocks(); ++q) {
    T* p = c.piece_ptr(q * c.group);
    const std::int64_t rows = std::min(n, c.piece_rows(q * c.group)), ld = c.piece_ld(q * c.group);
    for (std::int64_t j = 0; j < k; ++j)
      for (std::int64_t i = 0; i < rows; ++i) p[i + j * ld] = (q == 0 && i == j) ? T(1) : T(0);
  }
}

GPUQR_INSTANTIATE_TSQR_KERNELS(float)
GPUQR_INSTANTIATE_TSQR_KERNELS(double)

}  // namespace gpuqr::kernels::cpu
