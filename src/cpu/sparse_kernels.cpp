// CPU twins of the sparse multifrontal QR's leaf operations (src/core/sparse_device_kernels.hpp):
// plain loops over the descriptors, written straight from the spec, on host memory. The CUDA
// leaves (src/cuda/sparse_kernels.cu) are tested against these.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

#include "src/core/sparse_device_kernels.hpp"

namespace gpuqr::kernels::cpu {
namespace {

template <class T>
void s_assemble(T* arena, const T* a_values, const std::int64_t* s_row,
                const std::int64_t* s_col, const std::int64_t* s_value,
                const detail::SAssemblyDesc& d) {
  for (std::int64_t t = d.t0; t < d.t1; ++t)
    arena[d.front + s_row[t] + s_col[t] * d.ld] = a_values[s_value[t]];
}

/// The carried right-hand sides of one S-Assembly descriptor (k columns after the front's).
template <class T>
void s_assemble_rhs(T* arena, const T* b, std::int64_t ldb, std::int64_t k,
                    const std::int64_t* b_dst, const std::int64_t* b_src,
                    const detail::SAssemblyDesc& d) {
  for (std::int64_t j = 0; j < k; ++j)
    for (std::int64_t q = d.b0; q < d.b1; ++q)
      arena[d.front + b_dst[q] + (d.ncols + j) * d.ld] = b[b_src[q] + j * ldb];
}

template <class T>
void pack_one(T* arena, const std::int64_t* rimap, const std::int64_t* rjmap, std::int64_t k,
              const detail::PackDesc& d) {
  const auto src = [&](std::int64_t r, std::int64_t t) {
    return arena[d.src + (d.r0 + r) + (d.c0 + t) * d.sld];
  };
  for (std::int64_t t = 0; t < d.cb_cols; ++t) {
    const std::int64_t rows = t + 1 < d.cb_rows ? t + 1 : d.cb_rows;  // r <= t: upper trapezoid
    for (std::int64_t r = 0; r < rows; ++r) arena[d.dst + rimap[r] + rjmap[t] * d.dld] = src(r, t);
  }
  for (std::int64_t j = 0; j < k; ++j)
    for (std::int64_t r = 0; r < d.cb_rows; ++r)
      arena[d.dst + rimap[r] + (d.dncols + j) * d.dld] = src(r, d.cb_cols + j);
}

}  // namespace

template <class T>
void sparse_s_assembly(detail::ContextImpl&, T* arena, const T* a_values,
                       const std::int64_t* s_row, const std::int64_t* s_col,
                       const std::int64_t* s_value, const T* b, std::int64_t ldb, std::int64_t k,
                       const std::int64_t* b_dst, const std::int64_t* b_src,
                       const std::vector<detail::SAssemblyDesc>& tasks) {
  for (const detail::SAssemblyDesc& d : tasks) {
    s_assemble(arena, a_values, s_row, s_col, s_value, d);
    s_assemble_rhs(arena, b, ldb, k, b_dst, b_src, d);
  }
}

template <class T>
void sparse_pack_assembly(detail::ContextImpl&, T* arena, const std::int64_t* pack_row,
                          const std::int64_t* pack_col, std::int64_t k,
                          const std::vector<detail::PackDesc>& tasks) {
  for (const detail::PackDesc& d : tasks)
    pack_one(arena, pack_row + d.row_map, pack_col + d.col_map, k, d);
}

template <class T>
void sparse_count_small_diagonals(detail::ContextImpl&, const T* arena, double tol,
                                  const std::vector<detail::DiagDesc>& tasks,
                                  std::int64_t* count) {
  std::int64_t small = 0;
  for (const detail::DiagDesc& d : tasks)
    for (std::int64_t j = 0; j < d.count; ++j) {
      const T v = arena[d.front + j + j * d.ld];
      // NaN fails |v| <= tol but is not finite: it counts as small, as the spec says.
      if (std::abs(double(v)) <= tol || !std::isfinite(v)) ++small;
    }
  *count += small;
}

template <class T>
void sparse_pack_r_rows(detail::ContextImpl&, const T* arena,
                        const std::vector<detail::RPackDesc>& tasks, T* packed) {
  for (const detail::RPackDesc& d : tasks)
    for (std::int64_t i = 0; i < d.rows; ++i) {
      T* row = packed + d.dst + detail::r_pack_offset(i, d.ncols) - i;  // row[t], t >= i
      for (std::int64_t t = i; t < d.ncols; ++t) row[t] = arena[d.src + i + t * d.ld];
    }
}

template <class T>
void sparse_copy_to_host(detail::ContextImpl&, T* host, const T* src, std::int64_t n) {
  if (n > 0) std::memcpy(host, src, static_cast<std::size_t>(n) * sizeof(T));
}

template <class T>
void sparse_copy_block_to_host(detail::ContextImpl&, T* host, std::int64_t ldh, const T* src,
                               std::int64_t lds, std::int64_t rows, std::int64_t cols) {
  if (rows <= 0) return;
  for (std::int64_t j = 0; j < cols; ++j)
    std::memcpy(host + j * ldh, src + j * lds, static_cast<std::size_t>(rows) * sizeof(T));
}

void* sparse_host_alloc(detail::ContextImpl&, std::size_t bytes) {
  return bytes > 0 ? ::operator new(bytes) : nullptr;
}

void sparse_host_free(detail::ContextImpl&, void* p) noexcept { ::operator delete(p); }

GPUQR_INSTANTIATE_SPARSE_KERNELS(float)
GPUQR_INSTANTIATE_SPARSE_KERNELS(double)

}  // namespace gpuqr::kernels::cpu
