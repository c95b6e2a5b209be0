// Leaf operations of QR updating (src/core/qr_update*.cpp), declared once and implemented per
// backend: kernels::cpu (LAPACK's tpmqrt and plain loops: the reference twins) and
// kernels::cuda (src/cuda/update_*.cu: cuBLAS GEMMs and our own kernels). Arguments are
// checked by the drivers. Index vectors are int64 in the backend's memory space.
#pragma once

#include <cstdint>

#include "gpuqr/dense.hpp"
#include "src/core/context_impl.hpp"

namespace gpuqr::kernels {
/// add_rows_chained reduces U by chunks of at most this many rows, one after the other (its
/// CUDA kernel keeps a column's entries of one chunk in registers).
inline constexpr std::int64_t kAddRowsChunk = 16;
/// Rows of add_rows_chained's chunks for p rows (the last may have fewer): p itself up to 8
/// (one chunk), 8 up to 16 (two chunks: on CUDA the second runs one tile behind the first, and
/// a tile's chain of column steps is shorter with 8 rows than with 16), 16 above.
inline constexpr std::int64_t add_rows_chunk_rows(std::int64_t p) {
  return p <= 8 ? (p > 0 ? p : 1) : (p <= kAddRowsChunk ? 8 : kAddRowsChunk);
}
/// Chunks of add_rows_chained for p rows.
inline constexpr std::int64_t add_rows_chunks(std::int64_t p) {
  return (p + add_rows_chunk_rows(p) - 1) / add_rows_chunk_rows(p);
}
/// Entries of add_rows_chained's tau for n columns and p rows: each chunk's n scalars, then as
/// many of scratch (the CUDA kernel's couplings of pairs of reflectors), then, for one chunk,
/// p n more (the CUDA kernel publishes V there).
inline constexpr std::int64_t add_rows_chained_scalars(std::int64_t n, std::int64_t p) {
  return 2 * add_rows_chunks(p) * n + (add_rows_chunks(p) == 1 ? p * n : 0);
}
/// One chunk of at most this many rows hands V and tau on through a fill value on CUDA (no
/// flags; more rows: flags, measured faster at 16, the same at 4: session 14, run 4).
inline constexpr std::int64_t kAddRowsFillRows = 4;
/// Device operations add_rows_chained enqueues on CUDA for p rows: the flags' memset, the
/// fill (one chunk of at most kAddRowsFillRows rows) and the kernel.
inline constexpr std::int64_t add_rows_chained_launches(std::int64_t p) {
  return add_rows_chunks(p) == 1 && p <= kAddRowsFillRows ? 3 : 2;
}
/// Ints of add_rows_chained's flags for n columns of R, k right-hand sides and p rows.
inline constexpr std::int64_t add_rows_chained_flags(std::int64_t n, std::int64_t k,
                                                     std::int64_t p) {
  return 1 + add_rows_chunks(p) * ((n + 31) / 32 + (n + k + 31) / 32);
}
}  // namespace gpuqr::kernels

#define GPUQR_DECLARE_UPDATE_KERNELS                                                          \
  /* Adds p rows without blocking, by chunks of add_rows_chunk_rows(p) rows in order       \
     (chunk c: rows c add_rows_chunk_rows(p) ..): per chunk the n reflectors H_i = I - tau_i [e_i; v_i] [e_i; v_i]^T \
     (v_i: the chunk's entries) that zero the chunk's rows of U (p x n) against R's diagonal \
     (n x n upper) are applied in order to R's row i, to the chunk's rows of U and to the    \
     right-hand sides [d; e] (d n x k, e p x k). On return R and d hold the updated values,  \
     U holds each chunk's V (column i = v_i), tau (add_rows_chained_scalars(n, p)) the      \
     scalars, chunk c's at c n (the rest is scratch), and e the new rows of d. flags:        \
     add_rows_chained_flags(n, k, p) ints of scratch in the backend's memory (the CUDA       \
     kernel's hand-off between warps). */                                                    \
  template <class T>                                                                          \
  void add_rows_chained(detail::ContextImpl& ctx, MatrixView<T> r, MatrixView<T> u,          \
                        MatrixView<T> d, MatrixView<T> e, VectorView<T> tau,                 \
                        VectorView<int> flags);                                           \
  /* Applies H = I - [I; V] T [I; V]^T (V p x k, T k x k upper: the reflectors of a tpqrt    \
     panel, tpmqrt's shape with l = 0): left, op(H) [A; B] with A k x nc, B p x nc, W k x nc \
     scratch; right, [A B] op(H) with A mr x k, B mr x p, W mr x k scratch. */               \
  template <class T>                                                                          \
  void tpmqrt(detail::ContextImpl& ctx, Side side, Op op, MatrixView<const T> v,             \
              MatrixView<const T> t, MatrixView<T> a, MatrixView<T> b, MatrixView<T> w);     \
  /* dst(i, c) = src(rows[i], col0 + c) (transpose false, dst p x nc) or                    \
     dst(c, i) = src(rows[i], col0 + c) (transpose true, dst nc x p). */                     \
  template <class T>                                                                          \
  void gather_rows(detail::ContextImpl& ctx, MatrixView<const T> src,                        \
                   VectorView<const std::int64_t> rows, std::int64_t col0, bool transpose,   \
                   MatrixView<T> dst);                                                       \
  /* a(to[i], :) = a(from[i], :) (rows true) or a(:, to[i]) = a(:, from[i]); the from and   \
     to sets are disjoint. */                                                                 \
  template <class T>                                                                          \
  void move_lines(detail::ContextImpl& ctx, MatrixView<T> a, VectorView<const std::int64_t> from, \
                  VectorView<const std::int64_t> to, bool rows);                             \
  /* dst = src^T (dst cols x rows). */                                                        \
  template <class T>                                                                          \
  void transpose(detail::ContextImpl& ctx, MatrixView<const T> src, MatrixView<T> dst);      \
  /* The Givens rotations that delete rows: z (p x (n + p)) holds, per removed row r, its    \
     part of Q's first n columns and (columns n..n+p-1) its lower triangular part of the     \
     compressed tail. For r = 0..p-1 and j = n-1..0, rotation (j, r) zeroes z(r, j) against \
     the pivot z(r, n + r); c(j, r), s(j, r) (n x p each) receive it. z is overwritten. A    \
     rotation maps (x, y) to (c x - s y, s x + c y) with x at position j, y at pivot r. */   \
  template <class T>                                                                          \
  void deletion_rotations(detail::ContextImpl& ctx, MatrixView<T> z, MatrixView<T> c,        \
                          MatrixView<T> s);                                                   \
  /* Applies the rotations of deletion_rotations to every line of x (lines: x's rows when     \
     lines_are_rows, else its columns; positions 0..n-1 along the other index) with the p    \
     pivots of each line in acc (same layout, positions 0..p-1), or zeros when acc is empty. \
     Per line the order is j = n-1..0 and, per j, r = 0..p-1 (the order of the deletion).    \
     triangular: line i only has positions j <= i (R^T, whose zeros stay zero). */           \
  template <class T>                                                                          \
  void apply_deletion_rotations(detail::ContextImpl& ctx, MatrixView<const T> c,             \
                                MatrixView<const T> s, MatrixView<T> x, MatrixView<T> acc,    \
                                bool lines_are_rows, bool triangular);                      \
  /* The orthogonal matrices of apply_deletion_rotations by blocks of positions: block b     \
     covers positions [j0, j1), j1 = n - b nb, j0 = max(0, j1 - nb), w = j1 - j0 (c, s:     \
     n x p, as deletion_rotations gives them), for b = 0 .. ceil(n / nb) - 1. G_b, in        \
     g.block(0, b (nb + p), w + p, w + p) (g: nb + p rows, at least ceil(n / nb) (nb + p)   \
     columns), is the identity of order w + p with the block's rotations (all p pivots)     \
     applied to its rows as apply_deletion_rotations applies them (lines as rows, positions  \
     0..w-1 then pivots 0..p-1): [x(:, j0:j1), acc] G_b is what they do to any lines. */     \
  template <class T>                                                                          \
  void accumulate_deletion_rotations(detail::ContextImpl& ctx, MatrixView<const T> c,       \
                                     MatrixView<const T> s, std::int64_t nb,                \
                                     MatrixView<T> g);                                       \
  /* C += alpha op_a(A) op_b(B) (GEMM with beta = 1; C m x n, op_a(A) m x kk, op_b(B)        \
     kk x n; kk = 0 leaves C as it is); C must not overlap A or B. Used by the column       \
     updates (the rank-k term X V^T) and by the cost model's GEMM calibration. */           \
  template <class T>                                                                          \
  void multiply_add(detail::ContextImpl& ctx, Op op_a, Op op_b, T alpha,                     \
                    MatrixView<const T> a, MatrixView<const T> b, MatrixView<T> c);

#define GPUQR_INSTANTIATE_UPDATE_KERNELS(T)                                                   \
  template void add_rows_chained<T>(detail::ContextImpl&, MatrixView<T>, MatrixView<T>,      \
                                    MatrixView<T>, MatrixView<T>, VectorView<T>,             \
                                    VectorView<int>);                                         \
  template void tpmqrt<T>(detail::ContextImpl&, Side, Op, MatrixView<const T>,               \
                          MatrixView<const T>, MatrixView<T>, MatrixView<T>, MatrixView<T>); \
  template void gather_rows<T>(detail::ContextImpl&, MatrixView<const T>,                    \
                               VectorView<const std::int64_t>, std::int64_t, bool,           \
                               MatrixView<T>);                                                \
  template void move_lines<T>(detail::ContextImpl&, MatrixView<T>,                           \
                              VectorView<const std::int64_t>, VectorView<const std::int64_t>, \
                              bool);                                                          \
  template void transpose<T>(detail::ContextImpl&, MatrixView<const T>, MatrixView<T>);      \
  template void deletion_rotations<T>(detail::ContextImpl&, MatrixView<T>, MatrixView<T>,    \
                                      MatrixView<T>);                                         \
  template void apply_deletion_rotations<T>(detail::ContextImpl&, MatrixView<const T>,       \
                                            MatrixView<const T>, MatrixView<T>,              \
                                            MatrixView<T>, bool, bool);                     \
  template void accumulate_deletion_rotations<T>(detail::ContextImpl&, MatrixView<const T>,  \
                                                 MatrixView<const T>, std::int64_t,          \
                                                 MatrixView<T>);                              \
  template void multiply_add<T>(detail::ContextImpl&, Op, Op, T, MatrixView<const T>,        \
                                MatrixView<const T>, MatrixView<T>);

namespace gpuqr::kernels::cpu {
GPUQR_DECLARE_UPDATE_KERNELS
}  // namespace gpuqr::kernels::cpu

namespace gpuqr::kernels::cuda {
GPUQR_DECLARE_UPDATE_KERNELS
}  // namespace gpuqr::kernels::cuda
