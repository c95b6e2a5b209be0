// The sparse multifrontal QR's leaf operations on a stage's arena (issue 9): S-Assembly,
// Pack-Assembly and the rank-detection check of factored fronts, each on a list of plain
// descriptors (one launch of the scheduler). The driver (src/core/sparse_qr_device.hpp) is
// backend-agnostic; these leaves exist per backend: CUDA kernels (src/cuda/sparse_kernels.cu)
// and their CPU twins (src/cpu/sparse_kernels.cpp), which a device test compares.
//
// Every front lives in one arena (a stage's working memory, device memory on CUDA), column-
// major with leading dimension `ld` at an element offset; the maps are the flat arrays of
// SparseAssemblyMaps (src/core/sparse_assembly.hpp), in the context's memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "src/core/context_impl.hpp"

#ifndef GPUQR_HOST_DEVICE
#if defined(__CUDACC__)
#define GPUQR_HOST_DEVICE __host__ __device__
#else
#define GPUQR_HOST_DEVICE
#endif
#endif

namespace gpuqr::detail {

/// S-Assembly of (a slice of) one front's rows of A, and of its rows of the carried right-hand
/// sides B:
///   arena[front + s_row[t] + s_col[t] * ld] = a_values[s_value[t]]            t in [t0, t1)
///   arena[front + b_dst[q] + (ncols + j) * ld] = b[b_src[q] + j * ldb]        q in [b0, b1), j < k
/// No two descriptors of one call write the same entry.
struct SAssemblyDesc {
  std::int64_t front = 0;       ///< element offset of the front in the arena
  std::int64_t ld = 1;          ///< the front's leading dimension (its rows)
  std::int64_t t0 = 0, t1 = 0;  ///< tuples (SparseAssemblyMaps::s_row/s_col/s_value)
  std::int64_t ncols = 0;       ///< the front's columns (the carried columns follow them)
  std::int64_t b0 = 0, b1 = 0;  ///< entries of b_dst / b_src
};

/// Pack-Assembly of one child's contribution block into its parent through Rimap (pack_row)
/// and Rjmap (pack_col). The block's row r, column t is src(r, t) = arena[src + (r0 + r) +
/// (c0 + t) * sld] (the child's front buffer: r0 = its live rows, c0 = its npiv; or a compact
/// carried-in block: r0 = c0 = 0); only its upper trapezoid is read:
///   arena[dst + rimap[r] + rjmap[t] * dld] = src(r, t)               r < cb_rows, r <= t < cb_cols
///   arena[dst + rimap[r] + (dncols + j) * dld] = src(r, cb_cols + j)  r < cb_rows, j < k
/// with rimap = pack_row + row_map, rjmap = pack_col + col_map. The parent's other entries are
/// not touched; no two descriptors of one call write the same entry.
struct PackDesc {
  std::int64_t src = 0, sld = 1, r0 = 0, c0 = 0;
  std::int64_t cb_rows = 0, cb_cols = 0;
  std::int64_t dst = 0, dld = 1, dncols = 0;
  std::int64_t row_map = 0;  ///< offset of the child's Rimap in pack_row
  std::int64_t col_map = 0;  ///< offset of the child's Rjmap in pack_col
};

/// One factored front for the rank check: its diagonal entries arena[front + j + j * ld],
/// j < count.
struct DiagDesc {
  std::int64_t front = 0, ld = 1, count = 0;
};

/// R's rows of one factored front, packed row after row for the copy to the host (Q-less
/// mode): row i < rows, columns t in [i, ncols) of the front (arena[src + i + t * ld]) go to
///   packed[dst + r_pack_offset(i, ncols) + (t - i)]
/// so only the upper trapezoid crosses the bus, and the host reads each row contiguously.
struct RPackDesc {
  std::int64_t src = 0, ld = 1, rows = 0, ncols = 0, dst = 0;
};

/// Where packed row i of a front with `ncols` columns starts: the rows before it hold
/// ncols, ncols - 1, ..., ncols - i + 1 entries.
GPUQR_HOST_DEVICE inline std::int64_t r_pack_offset(std::int64_t i, std::int64_t ncols) {
  return i * ncols - i * (i - 1) / 2;
}

}  // namespace gpuqr::detail

#define GPUQR_DECLARE_SPARSE_KERNELS                                                           \
  /* S-Assembly (SAssemblyDesc). b, b_dst, b_src may be null when k == 0. */                   \
  template <class T>                                                                           \
  void sparse_s_assembly(detail::ContextImpl& ctx, T* arena, const T* a_values,                \
                         const std::int64_t* s_row, const std::int64_t* s_col,                 \
                         const std::int64_t* s_value, const T* b, std::int64_t ldb,            \
                         std::int64_t k, const std::int64_t* b_dst, const std::int64_t* b_src, \
                         const std::vector<detail::SAssemblyDesc>& tasks);                     \
  /* Pack-Assembly (PackDesc), k carried columns. */                                           \
  template <class T>                                                                           \
  void sparse_pack_assembly(detail::ContextImpl& ctx, T* arena, const std::int64_t* pack_row,  \
                            const std::int64_t* pack_col, std::int64_t k,                      \
                            const std::vector<detail::PackDesc>& tasks);                       \
  /* Adds to *count (context memory: device on CUDA) the number of diagonal entries of the     \
     fronts (DiagDesc) with |d| <= tol or d not finite. */                                     \
  template <class T>                                                                           \
  void sparse_count_small_diagonals(detail::ContextImpl& ctx, const T* arena, double tol,      \
                                    const std::vector<detail::DiagDesc>& tasks,                \
                                    std::int64_t* count);                                      \
  /* R's rows of factored fronts into `packed` (context memory), RPackDesc. */                 \
  template <class T>                                                                           \
  void sparse_pack_r_rows(detail::ContextImpl& ctx, const T* arena,                            \
                          const std::vector<detail::RPackDesc>& tasks, T* packed);             \
  /* Copies n values of context memory to host memory, in the context's stream order: on       \
     CUDA an asynchronous copy (host from sparse_host_alloc: page-locked, so the copy does     \
     not wait), complete after the context's next synchronize. */                              \
  template <class T>                                                                           \
  void sparse_copy_to_host(detail::ContextImpl& ctx, T* host, const T* src, std::int64_t n);   \
  /* The same for a rows x cols block (column-major, leading dimensions ldh and lds). */       \
  template <class T>                                                                           \
  void sparse_copy_block_to_host(detail::ContextImpl& ctx, T* host, std::int64_t ldh,          \
                                 const T* src, std::int64_t lds, std::int64_t rows,            \
                                 std::int64_t cols);                                           \
  /* Host memory for sparse_copy_to_host (page-locked on CUDA), and its release. */            \
  void* sparse_host_alloc(detail::ContextImpl& ctx, std::size_t bytes);                        \
  void sparse_host_free(detail::ContextImpl& ctx, void* p) noexcept;

#define GPUQR_INSTANTIATE_SPARSE_KERNELS(T)                                                    \
  template void sparse_s_assembly<T>(                                                          \
      detail::ContextImpl&, T*, const T*, const std::int64_t*, const std::int64_t*,            \
      const std::int64_t*, const T*, std::int64_t, std::int64_t, const std::int64_t*,          \
      const std::int64_t*, const std::vector<detail::SAssemblyDesc>&);                         \
  template void sparse_pack_assembly<T>(detail::ContextImpl&, T*, const std::int64_t*,         \
                                        const std::int64_t*, std::int64_t,                     \
                                        const std::vector<detail::PackDesc>&);                 \
  template void sparse_count_small_diagonals<T>(detail::ContextImpl&, const T*, double,        \
                                                const std::vector<detail::DiagDesc>&,          \
                                                std::int64_t*);                                \
  template void sparse_pack_r_rows<T>(detail::ContextImpl&, const T*,                          \
                                      const std::vector<detail::RPackDesc>&, T*);              \
  template void sparse_copy_to_host<T>(detail::ContextImpl&, T*, const T*, std::int64_t);      \
  template void sparse_copy_block_to_host<T>(detail::ContextImpl&, T*, std::int64_t, const T*, \
                                             std::int64_t, std::int64_t, std::int64_t);

namespace gpuqr::kernels::cpu {
GPUQR_DECLARE_SPARSE_KERNELS
}  // namespace gpuqr::kernels::cpu

namespace gpuqr::kernels::cuda {
GPUQR_DECLARE_SPARSE_KERNELS
}  // namespace gpuqr::kernels::cuda
