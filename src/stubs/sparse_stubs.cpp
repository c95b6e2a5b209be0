// The sparse multifrontal QR's device leaves in a build without the CUDA backend: NotCompiled.
#include "src/core/sparse_device_kernels.hpp"
#include "src/stubs/not_compiled.hpp"

namespace gpuqr::kernels::cuda {
using detail::not_compiled;

template <class T>
void sparse_s_assembly(detail::ContextImpl&, T*, const T*, const std::int64_t*,
                       const std::int64_t*, const std::int64_t*, const T*, std::int64_t,
                       std::int64_t, const std::int64_t*, const std::int64_t*,
                       const std::vector<detail::SAssemblyDesc>&) {
  not_compiled("cuda sparse_s_assembly");
}
template <class T>
void sparse_pack_assembly(detail::ContextImpl&, T*, const std::int64_t*, const std::int64_t*,
                          std::int64_t, const std::vector<detail::PackDesc>&) {
  not_compiled("cuda sparse_pack_assembly");
}
template <class T>
void sparse_count_small_diagonals(detail::ContextImpl&, const T*, double,
                                  const std::vector<detail::DiagDesc>&, std::int64_t*) {
  not_compiled("cuda sparse_count_small_diagonals");
}

template <class T>
void sparse_pack_r_rows(detail::ContextImpl&, const T*, const std::vector<detail::RPackDesc>&,
                        T*) {
  not_compiled("cuda sparse_pack_r_rows");
}
template <class T>
void sparse_copy_to_host(detail::ContextImpl&, T*, const T*, std::int64_t) {
  not_compiled("cuda sparse_copy_to_host");
}
template <class T>
void sparse_copy_block_to_host(detail::ContextImpl&, T*, std::int64_t, const T*, std::int64_t,
                               std::int64_t, std::int64_t) {
  not_compiled("cuda sparse_copy_block_to_host");
}
void* sparse_host_alloc(detail::ContextImpl&, std::size_t) {
  not_compiled("cuda sparse_host_alloc");
}
void sparse_host_free(detail::ContextImpl&, void*) noexcept {}

GPUQR_INSTANTIATE_SPARSE_KERNELS(float)
GPUQR_INSTANTIATE_SPARSE_KERNELS(double)

}  // namespace gpuqr::kernels::cuda
