// The tile engine's device leaves in a build without the CUDA backend: NotCompiled.
#include "src/core/tile_engine.hpp"
#include "src/stubs/not_compiled.hpp"

namespace gpuqr::kernels::cuda {
using detail::not_compiled;

template <class T>
std::int64_t tile_qr(detail::ContextImpl&, const std::vector<detail::TileMatrix<T>>&,
                     std::vector<detail::TileScheduler>&, detail::TileFactors<T>&,
                     const detail::TileLaunchHook&) {
  not_compiled("cuda tile_qr");
}
template <class T>
void tile_multiply_by_q(detail::ContextImpl&, const std::vector<detail::TileMatrix<T>>&,
                        const detail::TileFactors<T>&, int) {
  not_compiled("cuda tile_multiply_by_q");
}

GPUQR_INSTANTIATE_TILE_ENGINE_KERNELS(float)
GPUQR_INSTANTIATE_TILE_ENGINE_KERNELS(double)

}  // namespace gpuqr::kernels::cuda
