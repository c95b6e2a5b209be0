// Keys of the dense calls' graphs (see dense_replay.hpp). A key holds every value that decides
// what a call enqueues: the operation, precision, sizes and leading dimensions, the block
// sizes (GPUQR_NB_OUTER / GPUQR_NB_INNER are read at every call), whether look-ahead runs
// (GPUQR_LOOKAHEAD, likewise) and the kernels' test overrides; and the operands' addresses.
// The CUDA backend adds the streams and workspace addresses. Nothing else that a call reads
// on the host changes between calls: the other knobs are read once per process.
#include "src/core/dense_replay.hpp"

#include <algorithm>

#include "src/core/blocked_kernels.hpp"
#include "src/core/blocked_qr.hpp"
#include "src/core/dense_drivers.hpp"
#include "src/core/graph_cache.hpp"

namespace gpuqr::detail {
namespace {

enum class Call : std::int64_t { geqrf = 1, orgqr = 2, ormqr = 3 };

bool graphs_on(const Context& ctx) { return ctx.is_cuda() && ctx.impl().graphs; }

GraphKey call_key(const Context& ctx, Call call, int elem_bytes, BlockSizes bs) {
  GraphKey key;
  key.add_shape(static_cast<std::int64_t>(call));
  key.add_shape(elem_bytes);
  key.add_shape(bs.outer);
  key.add_shape(bs.inner);
  key.add_shape(lookahead_on(ctx) ? 1 : 0);
  key.add_shape(kernels::cuda::knob_signature());
  return key;
}

template <class T>
void add_matrix(GraphKey& key, MatrixView<T> m) {
  key.add_shape(m.rows());
  key.add_shape(m.cols());
  key.add_shape(m.ld());
  key.add_address(m.data());
}

template <class T>
void add_vector(GraphKey& key, VectorView<T> v) {
  key.add_shape(v.size());
  key.add_address(v.data());
}

/// The graph path when it applies, else (or when it gives up) `direct`.
template <class F>
void replay_or_run(const Context& ctx, GraphKey key, bool uses_aux, F&& direct) {
  if (cuda_graph_run(ctx.impl(), std::move(key), uses_aux, direct)) return;
  direct();
}

}  // namespace

template <class T>
void replay_geqrf(const Context& ctx, MatrixView<T> a, VectorView<T> tau) {
  auto direct = [&] { run_geqrf<T>(ctx, a, tau); };
  if (!graphs_on(ctx) || a.empty()) return direct();
  const BlockSizes bs = choose_block_sizes(ctx, a.rows(), a.cols(), sizeof(T));
  GraphKey key = call_key(ctx, Call::geqrf, sizeof(T), bs);
  add_matrix(key, a);
  add_vector(key, tau);
  replay_or_run(ctx, std::move(key), lookahead_on(ctx), direct);
}

template <class T>
void replay_orgqr(const Context& ctx, std::int64_t k, MatrixView<T> a, VectorView<const T> tau) {
  auto direct = [&] { run_orgqr<T>(ctx, k, a, tau); };
  if (!graphs_on(ctx) || a.empty()) return direct();
  const BlockSizes bs = choose_block_sizes(ctx, a.rows(), k, sizeof(T));
  GraphKey key = call_key(ctx, Call::orgqr, sizeof(T), bs);
  key.add_shape(k);
  add_matrix(key, a);
  add_vector(key, tau);
  replay_or_run(ctx, std::move(key), lookahead_on(ctx) && k > 0, direct);
}

template <class T>
void replay_ormqr(const Context& ctx, Side side, Op op, MatrixView<const T> a,
                  VectorView<const T> tau, MatrixView<T> c) {
  auto direct = [&] { run_ormqr<T>(ctx, side, op, a, tau, c); };
  if (!graphs_on(ctx) || a.empty() || c.empty()) return direct();
  const BlockSizes bs = choose_block_sizes(ctx, a.rows(), a.cols(), sizeof(T));
  GraphKey key = call_key(ctx, Call::ormqr, sizeof(T), bs);
  key.add_shape(side == Side::left ? 0 : 1);
  key.add_shape(op == Op::trans ? 1 : 0);
  add_matrix(key, a);
  add_vector(key, tau);
  add_matrix(key, c);
  replay_or_run(ctx, std::move(key), false, direct);
}

#define GPUQR_INSTANTIATE_DENSE_REPLAY(T)                                                     \
  template void replay_geqrf<T>(const Context&, MatrixView<T>, VectorView<T>);                \
  template void replay_orgqr<T>(const Context&, std::int64_t, MatrixView<T>,                  \
                                VectorView<const T>);                                         \
  template void replay_ormqr<T>(const Context&, Side, Op, MatrixView<const T>,                \
                                VectorView<const T>, MatrixView<T>);

GPUQR_INSTANTIATE_DENSE_REPLAY(float)
GPUQR_INSTANTIATE_DENSE_REPLAY(double)

}  // namespace gpuqr::detail
