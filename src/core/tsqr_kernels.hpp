// Leaf operations of the TSQR reduction tree (src/core/tsqr_tree.cpp), declared once and
// implemented per backend: kernels::cpu (LAPACK's geqr2/ormqr per block: the reference twins)
// and kernels::cuda (src/cuda/tsqr_kernels.cu: one thread block per matrix block, the block in
// shared memory; cuSOLVER per block where a block does not fit).
//
// Every leaf works on a batch of small column-major blocks described by Pieces: block q is
// the stack of `group` consecutive pieces (fewer for the last block), each piece a run of rows
// with n (or k) columns somewhere in memory. One row block of A is a block of one piece; a
// TSQR tree node is a block of `group` pieces (its children's n x n R factors, or the
// matching n-row pieces of C).
#pragma once

#include <cstdint>

#include "gpuqr/dense.hpp"
#include "src/core/context_impl.hpp"

#if defined(__CUDACC__)
#define GPUQR_HOST_DEVICE __host__ __device__
#else
#define GPUQR_HOST_DEVICE
#endif

namespace gpuqr::kernels {

/// A batch of blocks, each the vertical stack of up to `group` pieces. Two forms:
///  * strided (ptrs == nullptr): piece c (0 <= c < count) starts at base + c * stride, has
///    `rows` rows (the last piece: `last_rows`) and leading dimension `ld`;
///  * explicit (ptrs != nullptr, group must be 1): piece c at ptrs[c] with rows_of[c] rows and
///    leading dimension lds[c]; the three arrays live in the backend's memory, and `max_rows`
///    must bound rows_of[] (the host cannot read device arrays without waiting).
/// Pieces of a block follow each other in its row order; all pieces of one batch are in the
/// backend's memory space. Plain data: passed by value to CUDA kernels.
template <class T>
struct Pieces {
  T* base = nullptr;
  std::int64_t ld = 1;
  std::int64_t count = 0;
  std::int64_t group = 1;
  std::int64_t stride = 0;
  std::int64_t rows = 0;
  std::int64_t last_rows = 0;
  T* const* ptrs = nullptr;
  const std::int64_t* rows_of = nullptr;
  const std::int64_t* lds = nullptr;
  std::int64_t max_rows = 0;

  /// The number of blocks.
  GPUQR_HOST_DEVICE std::int64_t blocks() const { return (count + group - 1) / group; }
  /// The number of pieces in block q.
  GPUQR_HOST_DEVICE std::int64_t pieces_in(std::int64_t q) const {
    const std::int64_t left = count - q * group;
    return left < group ? left : group;
  }
  /// Piece c's first entry, rows and leading dimension.
  GPUQR_HOST_DEVICE T* piece_ptr(std::int64_t c) const {
    return ptrs != nullptr ? ptrs[c] : base + c * stride;
  }
  GPUQR_HOST_DEVICE std::int64_t piece_rows(std::int64_t c) const {
    return ptrs != nullptr ? rows_of[c] : (c == count - 1 ? last_rows : rows);
  }
  GPUQR_HOST_DEVICE std::int64_t piece_ld(std::int64_t c) const {
    return ptrs != nullptr ? lds[c] : ld;
  }
  /// Rows of block q (device side or strided form; the explicit form reads rows_of).
  GPUQR_HOST_DEVICE std::int64_t block_rows(std::int64_t q) const {
    const std::int64_t k = pieces_in(q);
    return (k - 1) * (ptrs != nullptr ? 0 : rows) + piece_rows(q * group + k - 1);
  }
  /// An upper bound on every block's rows, computed on the host without reading memory.
  std::int64_t max_block_rows() const {
    if (ptrs != nullptr) return max_rows;
    if (count == 0) return 0;
    const std::int64_t full = blocks() > 1 ? group * rows : 0;
    const std::int64_t last = block_rows(blocks() - 1);
    return full > last ? full : last;
  }
  /// The same pieces with another element type (const view of mutable pieces).
  template <class U>
  GPUQR_HOST_DEVICE Pieces<U> as() const {
    Pieces<U> p;
    p.base = base;
    p.ld = ld;
    p.count = count;
    p.group = group;
    p.stride = stride;
    p.rows = rows;
    p.last_rows = last_rows;
    p.ptrs = reinterpret_cast<U* const*>(ptrs);
    p.rows_of = rows_of;
    p.lds = lds;
    p.max_rows = max_rows;
    return p;
  }
};

}  // namespace gpuqr::kernels

#define GPUQR_DECLARE_TSQR_KERNELS                                                            \
  /* The most rows a block may have for the batched kernels to hold it (n columns, `extra`    \
     more columns of C alongside for the apply) in fast memory; blocks above it still work    \
     (a slower per-block path). CPU: no limit (returns a large number). */                    \
  std::int64_t tsqr_block_rows_limit(detail::ContextImpl& ctx, int elem_bytes, std::int64_t n, \
                                     std::int64_t extra);                                     \
  /* Householder QR of every block of `src` (n columns), written to the matching block of     \
     `dst` (group 1, same block count; dst may be src for group-1 src, in place): R on and     \
     above the diagonal, the reflectors below (unit diagonal implied), their scalars in        \
     column q of `tau` (n x blocks; entries past min(rows, n) set to 0), as LAPACK's geqr2.   \
     With `stacked`, each piece of src is an n x n upper triangle (only it is read; zeros are \
     taken below) and the structure of the stack is exploited. Asynchronous on CUDA. */       \
  template <class T>                                                                          \
  void tsqr_batched_geqrf(detail::ContextImpl& ctx, Pieces<const T> src, Pieces<T> dst,       \
                          std::int64_t n, MatrixView<T> tau, bool stacked);                   \
  /* C_q := op(Q_q) C_q for every block q, Q_q = H_1 ... H_min(rows,n) from block q of `v`    \
     (as tsqr_batched_geqrf left it in dst) and column q of `tau`; C_q is block q of `c`      \
     (k columns, the same rows as V's block). `stacked`: V came from a stacked factorization \
     (its known zeros are skipped). `top_only`: C's block is read as its first n rows with    \
     zeros below (then written whole): forming Q without clearing C first. */                 \
  template <class T>                                                                          \
  void tsqr_batched_apply(detail::ContextImpl& ctx, Op op, Pieces<const T> v, std::int64_t n, \
                          MatrixView<const T> tau, Pieces<T> c, std::int64_t k, bool stacked,  \
                          bool top_only);                                                     \
  /* The first `n` rows of every block of `c` (k columns) := 0, except block 0's := the       \
     identity's first rows (the start of forming Q). */                                       \
  template <class T>                                                                          \
  void tsqr_set_tops(detail::ContextImpl& ctx, Pieces<T> c, std::int64_t n, std::int64_t k);

#define GPUQR_INSTANTIATE_TSQR_KERNELS(T)                                                     \
  template void tsqr_batched_geqrf<T>(detail::ContextImpl&, Pieces<const T>, Pieces<T>,       \
                                      std::int64_t, MatrixView<T>, bool);                     \
  template void tsqr_batched_apply<T>(detail::ContextImpl&, Op, Pieces<const T>, std::int64_t, \
                                      MatrixView<const T>, Pieces<T>, std::int64_t, bool, bool); \
  template void tsqr_set_tops<T>(detail::ContextImpl&, Pieces<T>, std::int64_t, std::int64_t);

namespace gpuqr::kernels::cpu {
GPUQR_DECLARE_TSQR_KERNELS
}  // namespace gpuqr::kernels::cpu

namespace gpuqr::kernels::cuda {
GPUQR_DECLARE_TSQR_KERNELS
}  // namespace gpuqr::kernels::cuda
