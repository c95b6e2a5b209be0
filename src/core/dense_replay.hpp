// The graph path of the dense calls (Context::cuda_graphs): each call's key, then the CUDA
// backend's graph cache (src/cuda/graph_replay.cu) or, when graphs are off, the CPU, the
// call is empty or a capture fails, the direct driver (dense_drivers.hpp). Arguments are
// already checked, and in the context's memory (host matrices are staged before and never
// take this path).
#pragma once

#include <cstdint>

#include "gpuqr/context.hpp"
#include "gpuqr/dense.hpp"

namespace gpuqr::detail {

/// run_geqrf, replayed from a CUDA graph when the context's graphs are on.
template <class T>
void replay_geqrf(const Context& ctx, MatrixView<T> a, VectorView<T> tau);

/// run_orgqr, likewise.
template <class T>
void replay_orgqr(const Context& ctx, std::int64_t k, MatrixView<T> a, VectorView<const T> tau);

/// run_ormqr, likewise.
template <class T>
void replay_ormqr(const Context& ctx, Side side, Op op, MatrixView<const T> a,
                  VectorView<const T> tau, MatrixView<T> c);

}  // namespace gpuqr::detail
