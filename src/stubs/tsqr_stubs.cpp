// The TSQR leaves of a build without the CUDA backend: each throws NotCompiled.
#include "src/core/tsqr_kernels.hpp"
#include "src/stubs/not_compiled.hpp"

namespace gpuqr::kernels::cuda {
using detail::not_compiled;

std::int64_t tsqr_block_rows_limit(detail::ContextImpl&, int, std::int64_t, std::int64_t) {
  not_compiled("cuda tsqr_block_rows_limit");
}
template <class T>
void tsqr_batched_geqrf(detail::ContextImpl&, Pieces<const T>, Pieces<T>, std::int64_t,
                        MatrixView<T>, bool) {
  not_compiled("cuda tsqr_batched_geqrf");
}
template <class T>
void tsqr_batched_apply(detail::ContextImpl&, Op, Pieces<const T>, std::int64_t,
                        MatrixView<const T>, Pieces<T>, std::int64_t, bool, bool) {
  not_compiled("cuda tsqr_batched_apply");
}
template <class T>
void tsqr_set_tops(detail::ContextImpl&, Pieces<T>, std::int64_t, std::int64_t) {
  not_compiled("cuda tsqr_set_tops");
}

GPUQR_INSTANTIATE_TSQR_KERNELS(float)
GPUQR_INSTANTIATE_TSQR_KERNELS(double)

}  // namespace gpuqr::kernels::cuda
