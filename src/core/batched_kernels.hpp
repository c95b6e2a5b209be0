// Leaves of the batched QR (src/core/batched.cpp), declared once and implemented per backend:
// kernels::cpu (LAPACK per matrix, threads over the batch: the reference twins) and
// kernels::cuda (src/cuda/batched_*.cu). The drivers have checked every matrix before a leaf
// runs, so leaves may assume valid sizes, leading dimensions and pointers.
#pragma once

#include <cstdint>
#include <vector>

#include "gpuqr/dense.hpp"
#include "src/core/context_impl.hpp"

namespace gpuqr::kernels {

/// One matrix of a batch: m x n at `a` (leading dimension ld), k Householder reflectors whose
/// scalars are at `tau` (k entries). geqrf: k = min(m, n); orgqr/ormqr: the caller's k.
template <class T>
struct BatchEntry {
  T* a = nullptr;
  std::int64_t m = 0, n = 0, ld = 1;
  T* tau = nullptr;
  std::int64_t k = 0;
};

/// A batch as the host describes it: strided (every matrix m x n, matrix i at
/// base + i * stride, its tau at tau + i * tau_stride) or listed (entries, one per matrix).
template <class T>
struct MatrixBatch {
  std::int64_t count = 0;
  bool strided = false;
  BatchEntry<T> shape;  // strided: a = base, tau = first tau, m, n, ld, k of every matrix
  std::int64_t stride = 0, tau_stride = 0;
  std::vector<BatchEntry<T>> list;  // listed

  /// Matrix i's entry (either form).
  BatchEntry<T> at(std::int64_t i) const {
    if (!strided) return list[static_cast<std::size_t>(i)];
    BatchEntry<T> e = shape;
    e.a = shape.a + i * stride;
    e.tau = shape.tau == nullptr ? nullptr : shape.tau + i * tau_stride;
    return e;
  }
};

}  // namespace gpuqr::kernels

#define GPUQR_DECLARE_BATCHED_KERNELS                                                        \
  /* Householder QR of every matrix (k = min(m, n) reflectors), as LAPACK's geqrf. */        \
  template <class T>                                                                         \
  void batched_geqrf(detail::ContextImpl& ctx, const MatrixBatch<T>& a);                     \
  /* Q's first n columns over every matrix (m >= n >= k), as LAPACK's orgqr. */              \
  template <class T>                                                                         \
  void batched_orgqr(detail::ContextImpl& ctx, const MatrixBatch<T>& a);                     \
  /* C_i := op(Q_i) C_i from the left; v's entry i: m rows, k reflectors (n unused) and tau; \
     c's entry i: m x n. */                                                                  \
  template <class T>                                                                         \
  void batched_ormqr(detail::ContextImpl& ctx, Op op, const MatrixBatch<T>& v,               \
                     const MatrixBatch<T>& c);                                               \
  /* Least squares for every pair (A_i m x n, m >= n; B_i m x nrhs in b's entry i): geqrf,   \
     Q^T B, R X = (Q^T B)'s first n rows; tau comes from the backend's workspace. */         \
  template <class T>                                                                         \
  void batched_gels(detail::ContextImpl& ctx, const MatrixBatch<T>& a, const MatrixBatch<T>& b); \
  /* As batched_gels, but a's contents afterwards are unspecified and b's rows n..m need only \
     have the residual norms as column norms (CUDA: the tile engine on [A | B] where it pays). */ \
  template <class T>                                                                         \
  void batched_lstsq(detail::ContextImpl& ctx, const MatrixBatch<T>& a, const MatrixBatch<T>& b);

#define GPUQR_INSTANTIATE_BATCHED_KERNELS(T)                                                 \
  template void batched_geqrf<T>(detail::ContextImpl&, const MatrixBatch<T>&);               \
  template void batched_orgqr<T>(detail::ContextImpl&, const MatrixBatch<T>&);               \
  template void batched_ormqr<T>(detail::ContextImpl&, Op, const MatrixBatch<T>&,            \
                                 const MatrixBatch<T>&);                                     \
  template void batched_gels<T>(detail::ContextImpl&, const MatrixBatch<T>&,                 \
                                const MatrixBatch<T>&);                                      \
  template void batched_lstsq<T>(detail::ContextImpl&, const MatrixBatch<T>&,                \
                                 const MatrixBatch<T>&);

namespace gpuqr::kernels::cpu {
GPUQR_DECLARE_BATCHED_KERNELS
}  // namespace gpuqr::kernels::cpu

namespace gpuqr::kernels::cuda {
GPUQR_DECLARE_BATCHED_KERNELS

/// Routing of the CUDA batched geqrf (src/cuda/batched_kernels.cu): `automatic` follows
/// GPUQR_BATCHED_ROUTE, else the size rules; `old` never takes the blocked route; `blocked`
/// takes it wherever a panel fits shared memory (the register kernel keeps n <= 32, m <= 64).
enum class BatchedRoute { automatic, old, blocked };

/// Test hook: overrides the routing (and the blocked route's panel width nb: 8, 16 or 32;
/// 0: GPUQR_BATCHED_NB or 32) for later calls in this process. Not for concurrent use with
/// running batched calls. A build without CUDA ignores it.
void set_batched_route(BatchedRoute route, int nb = 0);

/// How the blocked route applies a panel step's trailing update to a listed batch:
/// `automatic` follows GPUQR_BATCHED_VGEMM (0: as `cublas`, 1: as `mixed`, 2: as `own`; unset:
/// `mixed` in FP32, `cublas` in FP64, as measured); `cublas`: cuBLAS (gemmGroupedBatched for
/// several shapes); `mixed`: our fused update kernel (src/cuda/batched_update.cu) wherever a
/// step has several shapes, cuBLAS gemmBatched where it has one; `own`: the fused kernel at
/// every step.
enum class BatchedUpdate { automatic, cublas, mixed, own };

/// Test hooks, as set_batched_route: override the above for later calls in this process.
void set_batched_update(BatchedUpdate update);

/// Routing of the CUDA batched geqrf's cooperative register kernel for small tall matrices
/// (src/cuda/batched_tall_small.cu): `automatic` follows GPUQR_BATCHED_TALL (0 off, 1 on,
/// else (unset, 2) outside_small); `off`: the routes before it; `on`: n <= 32 with
/// 32 < m <= 256, and n <= 64 with m <= 128; `outside_small`: those the small register kernel
/// does not take.
enum class TallRoute { automatic, off, on, outside_small };

/// Test hook: overrides the tall route's knob for later calls in this process. Not for
/// concurrent use with running batched calls. A build without CUDA ignores it.
void set_batched_tall(TallRoute route);

/// Test hook: the small register kernel's classes with 32 < m <= 64: 0 a column on two lanes
/// taking every other row, 1 taking contiguous halves; for 8 < n <= 16, 2 or 3 (the default)
/// the rows kernel (batched_rows_small.cu: a lane holds two rows of every column); -1 follows
/// GPUQR_BATCHED_SMALL_TALL. A build without CUDA ignores it.
void set_batched_small_tall(int layout);

/// Test hook: 0 gives the FP64 direct rows kernel its general form only, 1 the branch-free
/// form first (the default, as FP32 always has); -1 follows GPUQR_BATCHED_ROWS_FAST. A build
/// without CUDA ignores it.
void set_batched_rows_fast(int fast);

/// Test hook: 1 has the rows kernel prefetch each warp's next matrix into L2 (session 10's
/// default, measured slower), 0 not (the default); -1 follows GPUQR_BATCHED_ROWS_PREFETCH. A
/// build without CUDA ignores it.
void set_batched_rows_prefetch(int prefetch);

/// Test hook: launches of the tall-small kernel so far in this process (tests check that the
/// route they force is the one that ran). A build without CUDA returns 0.
std::int64_t batched_tall_launches();
}  // namespace gpuqr::kernels::cuda
