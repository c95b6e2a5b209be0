// The TSQR leaves of a build without the CUDA backend: each throws NotCompiled.
#include "gpuqr/error.hpp"
#include "src/core/tsqr_kernels.hpp"

namespace gpuqr::kernels::cuda {
namespace {
[[noreturn]] void not_compiled(const char* what) {
  GPUQR_THROW(NotCompiled, std::string(what) +
                               ": this gpuqr was built without the CUDA backend "
                               "(configure with nvcc present and GPUQR_ENABLE_CUDA=ON)");
}
}  // namespace

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
