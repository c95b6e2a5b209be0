// The batched QR leaves of a build without the CUDA backend: each throws NotCompiled.
#include "src/core/batched_kernels.hpp"
#include "src/stubs/not_compiled.hpp"

namespace gpuqr::kernels::cuda {
using detail::not_compiled;

template <class T>
void batched_geqrf(detail::ContextImpl&, const MatrixBatch<T>&) {
  not_compiled("cuda batched_geqrf");
}
template <class T>
void batched_orgqr(detail::ContextImpl&, const MatrixBatch<T>&) {
  not_compiled("cuda batched_orgqr");
}
template <class T>
void batched_ormqr(detail::ContextImpl&, Op, const MatrixBatch<T>&, const MatrixBatch<T>&) {
  not_compiled("cuda batched_ormqr");
}
template <class T>
void batched_gels(detail::ContextImpl&, const MatrixBatch<T>&, const MatrixBatch<T>&) {
  not_compiled("cuda batched_gels");
}

template <class T>
void batched_lstsq(detail::ContextImpl&, const MatrixBatch<T>&, const MatrixBatch<T>&) {
  not_compiled("cuda batched_lstsq");
}

void set_batched_route(BatchedRoute, int) {}  // no CUDA routes to steer
void set_batched_update(BatchedUpdate) {}
void set_batched_tall(TallRoute) {}
void set_batched_small_tall(int) {}
void set_batched_rows_fast(int) {}
void set_batched_rows_prefetch(int) {}
std::int64_t batched_tall_launches() { return 0; }

GPUQR_INSTANTIATE_BATCHED_KERNELS(float)
GPUQR_INSTANTIATE_BATCHED_KERNELS(double)

}  // namespace gpuqr::kernels::cuda
