// CUDA backend of the batched leaves (src/core/batched_kernels.hpp): routes each matrix to a
// kernel by its size and launches each route once for the whole batch.
//
//   tall   (n <= 32 and 32 < m <= 256,  batched_tall_small.cu, a thread block per matrix, each
//           n <= 64 and m <= 128)       column in registers over several lanes of a warp;
//                                       GPUQR_BATCHED_TALL=0 (off) | 1 (on) | unset,
//                                       2 (default: outside small's class)
//   small  (n <= 32, m <= 64)          batched_small.cu, a warp per matrix, registers
//   blocked (n >= 64, or too large for  batched_blocked.cu: panel kernel + cuBLAS batched
//           block, m x nb panel fits     GEMMs per panel step (geqrf only; orgqr/ormqr keep
//           shared memory)               the routes below); GPUQR_BATCHED_ROUTE=old|blocked
//   block  (m n + n fits shared memory) batched_block.cu, a thread block per matrix
//   dense  (the rest)                   cuSOLVER's geqrf/orgqr/ormqr (our dense leaves) per
//                                       matrix, spread round-robin over 8 streams of our own
//                                       (forked from and joined back to the context's stream);
//                                       measured on an H200 (2026-11-22) about 3x faster per
//                                       matrix than the blocked driver (gpuqr::geqrf) at
//                                       n = 256..512, whose look-ahead pays only for large n
//
// Least squares without A's factors (batched_lstsq, gpuqr::lstsq_vbatched) sends large and
// tall matrices to the tile engine instead (src/cuda/tile_engine.cu: QR of [A | B] in a
// workspace, R X = (Q^T B)'s top; thresholds at engine_pays, GPUQR_BATCHED_ENGINE=0/1 forces).
//
// A strided batch is read by the kernels directly; a listed batch is bucketed by route on the
// host and its descriptors uploaded in one asynchronous copy into the call workspace (so a
// variable-size batch is one launch per route present). Nothing here waits for the device,
// apart from the workspace growth of cuda_workspace.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "gpuqr/dense.hpp"
#include "src/core/dense_kernels.hpp"
#include "src/core/tile_engine.hpp"
#include "src/cuda/batched_internal.hpp"
#include "src/cuda/check.hpp"

namespace gpuqr::kernels::cuda {
namespace {

using batched::DeviceBatch;
using batched::Desc;
using cuda_detail::DeviceGuard;

constexpr int kLanes = 8;
constexpr std::size_t kAlign = 256;

/// The streams of the dense route for one device: contexts of our own (stream, handles,
/// workspaces; NaN check off, since the batch's inputs are the caller's to check), created on
/// first use and kept for the life of the process (never destroyed: no teardown-order issues).
struct Lanes {
  std::vector<Context> ctx;
  cudaEvent_t fork = nullptr;
  std::vector<cudaEvent_t> join;
};

Lanes& lanes_for(int device) {
  static std::mutex lock;
  static auto* pools = new std::map<int, Lanes*>();
  std::lock_guard<std::mutex> guard(lock);
  Lanes*& p = (*pools)[device];
  if (p == nullptr) {
    auto* made = new Lanes;
    for (int l = 0; l < kLanes; ++l) {
      made->ctx.push_back(Context::cuda(device));
      made->ctx.back().set_check_finite(false);
      cudaEvent_t e = nullptr;
      GPUQR_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      made->join.push_back(e);
    }
    GPUQR_CUDA_CHECK(cudaEventCreateWithFlags(&made->fork, cudaEventDisableTiming));
    p = made;
  }
  return *p;
}

/// Runs work(lane, item) for every item, items spread over the lanes; the lanes start after
/// the work already on the context's stream, and later work there waits for all of them.
template <class F>
void on_lanes(detail::ContextImpl& ctx, const std::vector<std::int64_t>& items, F&& work) {
  if (items.empty()) return;
  Lanes& lanes = lanes_for(ctx.device);
  GPUQR_CUDA_CHECK(cudaEventRecord(lanes.fork, ctx.stream));
  for (const Context& lane : lanes.ctx)
    GPUQR_CUDA_CHECK(cudaStreamWaitEvent(lane.stream(), lanes.fork, 0));
  for (std::size_t i = 0; i < items.size(); ++i) work(lanes.ctx[i % kLanes], items[i]);
  for (int l = 0; l < kLanes; ++l) {
    GPUQR_CUDA_CHECK(cudaEventRecord(lanes.join[l], lanes.ctx[l].stream()));
    GPUQR_CUDA_CHECK(cudaStreamWaitEvent(ctx.stream, lanes.join[l], 0));
  }
}

/// Bump allocation from the call workspace, sized once per leaf call.
class Scratch {
 public:
  Scratch(detail::ContextImpl& ctx, std::size_t bytes)
      : base_(static_cast<char*>(detail::cuda_workspace(ctx, bytes + 8 * kAlign,
                                                        detail::ContextImpl::kCallWorkspace))),
        left_(bytes + 8 * kAlign) {}
  template <class U>
  U* take(std::size_t count) {
    const std::size_t bytes = (count * sizeof(U) + kAlign - 1) / kAlign * kAlign;
    if (bytes > left_) GPUQR_THROW(InvalidArgument, "batched QR: scratch undersized (a bug)");
    U* p = reinterpret_cast<U*>(base_ + used_);
    used_ += bytes;
    left_ -= bytes;
    return p;
  }

 private:
  char* base_;
  std::size_t left_;
  std::size_t used_ = 0;
};

template <class T>
std::size_t desc_bytes(std::int64_t count) {
  return static_cast<std::size_t>(count) * sizeof(Desc<T>) + kAlign;
}

template <class T>
Desc<T> desc_of(const BatchEntry<T>& e) {
  return Desc<T>{e.a, e.tau, e.ld, static_cast<int>(e.m), static_cast<int>(e.n),
                 static_cast<int>(e.k), 0};
}

/// Uploads descriptors (asynchronously, on the context's stream) into the scratch.
template <class T>
const Desc<T>* upload(detail::ContextImpl& ctx, Scratch& scratch, const std::vector<Desc<T>>& h) {
  if (h.empty()) return nullptr;
  Desc<T>* d = scratch.take<Desc<T>>(h.size());
  GPUQR_CUDA_CHECK(cudaMemcpyAsync(d, h.data(), h.size() * sizeof(Desc<T>),
                                   cudaMemcpyHostToDevice, ctx.stream));
  return d;
}

template <class T>
MatrixBatch<T> listed_batch(std::int64_t reserve) {
  MatrixBatch<T> b;
  b.count = reserve;
  b.list.reserve(static_cast<std::size_t>(reserve));
  return b;
}

template <class T>
DeviceBatch<T> listed(const Desc<T>* base, std::size_t first, std::size_t count) {
  DeviceBatch<T> b;
  b.list = base + first;
  b.count = static_cast<std::int64_t>(count);
  return b;
}

template <class T>
MatrixView<T> view_of(const BatchEntry<T>& e, std::int64_t cols, int device) {
  return MatrixView<T>(e.a, e.m, cols, e.ld, MemorySpace::device, device);
}
template <class T>
VectorView<T> tau_of(const BatchEntry<T>& e, int device) {
  return VectorView<T>(e.tau, e.k, MemorySpace::device, device);
}

template <class T>
std::int64_t budget_elems(const detail::ContextImpl& ctx) {
  return batched::smem_budget(ctx.device) / static_cast<std::int64_t>(sizeof(T));
}

template <class T>
void geqrf_dense(detail::ContextImpl& ctx, const MatrixBatch<T>& a,
                 const std::vector<std::int64_t>& items) {
  on_lanes(ctx, items, [&](const Context& lane, std::int64_t i) {
    const BatchEntry<T> e = a.at(i);
    kernels::cuda::geqrf<T>(lane.impl(), view_of(e, e.n, ctx.device), tau_of(e, ctx.device));
  });
}

/// The matrices of `a` that take the blocked route (listed form).
template <class T>
std::vector<Desc<T>> blocked_of(const MatrixBatch<T>& a, std::int64_t smem) {
  std::vector<Desc<T>> out;
  for (std::int64_t i = 0; i < a.count; ++i) {
    const BatchEntry<T> e = a.at(i);
    if (batched::tall_class(e.m, e.n) < 0 && batched::small_class(e.m, e.n) < 0 &&
        batched::blocked_nb<T>(e.m, e.n, smem) > 0)
      out.push_back(desc_of(e));
  }
  return out;
}

/// Scratch bytes of geqrf_impl's blocked route for batch a (`as_listed`: as gels_impl passes
/// it, listed whatever its form).
template <class T>
std::size_t blocked_scratch(const detail::ContextImpl& ctx, const MatrixBatch<T>& a,
                            bool as_listed) {
  const std::int64_t smem = batched::smem_budget(ctx.device);
  if (a.strided && !as_listed) {
    const BatchEntry<T>& e = a.shape;
    if (batched::tall_class(e.m, e.n) >= 0 || batched::small_class(e.m, e.n) >= 0) return 0;
    return batched::blocked_bytes_strided(desc_of(e), a.count, smem);
  }
  return batched::blocked_bytes(blocked_of(a, smem), smem);
}

template <class T>
void geqrf_impl(detail::ContextImpl& ctx, const MatrixBatch<T>& a, Scratch& scratch) {
  const std::int64_t budget = budget_elems<T>(ctx);
  const std::int64_t smem = batched::smem_budget(ctx.device);
  if (a.strided) {
    const BatchEntry<T>& e = a.shape;
    DeviceBatch<T> b;
    b.shape = desc_of(e);
    b.stride = a.stride;
    b.tau_stride = a.tau_stride;
    b.count = a.count;
    const int tall = batched::tall_class(e.m, e.n);
    const int cls = batched::small_class(e.m, e.n);
    if (tall >= 0) {
      batched::launch_tall_geqrf(b, tall, ctx.stream);
    } else if (cls >= 0) {
      batched::launch_small_geqrf(b, cls, ctx.stream);
    } else if (batched::blocked_nb<T>(e.m, e.n, smem) > 0) {
      const std::size_t bytes = batched::blocked_bytes_strided(b.shape, a.count, smem);
      batched::blocked_geqrf_strided(ctx, b, scratch.take<unsigned char>(bytes), bytes);
    } else if (e.m * e.n + e.n <= budget) {
      batched::launch_block_geqrf(b, e.m * e.n + e.n, ctx.device, ctx.stream);
    } else {
      std::vector<std::int64_t> all(static_cast<std::size_t>(a.count));
      for (std::int64_t i = 0; i < a.count; ++i) all[static_cast<std::size_t>(i)] = i;
      geqrf_dense(ctx, a, all);
    }
    return;
  }
  // Buckets: the small classes, the tall classes, then the block route; the blocked and dense
  // routes apart.
  constexpr int kTallFirst = batched::kSmallClasses;
  constexpr int kBlockBucket = kTallFirst + batched::kTallClasses;
  std::vector<std::vector<Desc<T>>> buckets(kBlockBucket + 1);
  std::vector<Desc<T>> blocked;
  std::vector<std::int64_t> dense;
  std::int64_t block_elems = 0;
  for (std::int64_t i = 0; i < a.count; ++i) {
    const BatchEntry<T> e = a.at(i);
    if (e.m == 0 || e.n == 0) continue;
    const int tall = batched::tall_class(e.m, e.n);
    const int cls = batched::small_class(e.m, e.n);
    if (tall >= 0) {
      buckets[static_cast<std::size_t>(kTallFirst + tall)].push_back(desc_of(e));
    } else if (cls >= 0) {
      buckets[static_cast<std::size_t>(cls)].push_back(desc_of(e));
    } else if (batched::blocked_nb<T>(e.m, e.n, smem) > 0) {
      blocked.push_back(desc_of(e));
    } else if (e.m * e.n + e.n <= budget) {
      buckets.back().push_back(desc_of(e));
      block_elems = std::max(block_elems, e.m * e.n + e.n);
    } else {
      dense.push_back(i);
    }
  }
  std::vector<Desc<T>> all;
  for (const auto& bucket : buckets) all.insert(all.end(), bucket.begin(), bucket.end());
  const Desc<T>* d = upload(ctx, scratch, all);
  std::size_t first = 0;
  for (std::size_t c = 0; c < buckets.size(); ++c) {
    const std::size_t count = buckets[c].size();
    if (count == 0) continue;
    const DeviceBatch<T> b = listed(d, first, count);
    if (c < kTallFirst) {
      batched::launch_small_geqrf(b, static_cast<int>(c), ctx.stream);
    } else if (c < kBlockBucket) {
      batched::launch_tall_geqrf(b, static_cast<int>(c) - kTallFirst, ctx.stream);
    } else {
      batched::launch_block_geqrf(b, block_elems, ctx.device, ctx.stream);
    }
    first += count;
  }
  if (!blocked.empty()) {
    const std::size_t bytes = batched::blocked_bytes(blocked, smem);
    batched::blocked_geqrf_listed(ctx, blocked, scratch.take<unsigned char>(bytes), bytes);
  }
  geqrf_dense(ctx, a, dense);
}

/// C_i := op(Q_i) C_i (identity: C_i := Q_i's first columns, orgqr; c may be v).
template <class T>
void apply_impl(detail::ContextImpl& ctx, Op op, bool identity, const MatrixBatch<T>& v,
                const MatrixBatch<T>& c, Scratch& scratch) {
  const std::int64_t budget = budget_elems<T>(ctx);
  std::vector<Desc<T>> vs, cs;
  std::vector<std::int64_t> dense;
  std::int64_t elems = 0;
  for (std::int64_t i = 0; i < v.count; ++i) {
    const BatchEntry<T> ve = v.at(i), ce = c.at(i);
    if (ve.m == 0 || ce.n == 0 || (ve.k == 0 && !identity)) continue;
    const std::int64_t need = ve.m * ve.k + ve.k + ve.m;
    if (need <= budget) {
      vs.push_back(desc_of(ve));
      cs.push_back(desc_of(ce));
      elems = std::max(elems, std::min(budget, need + ve.m * std::min<std::int64_t>(ce.n, 31)));
    } else {
      dense.push_back(i);
    }
  }
  const Desc<T>* dv = upload(ctx, scratch, vs);
  const Desc<T>* dc = upload(ctx, scratch, cs);
  batched::launch_block_apply(listed(dv, 0, vs.size()), listed(dc, 0, cs.size()),
                              op == Op::trans, identity, elems, ctx.device, ctx.stream);
  on_lanes(ctx, dense, [&](const Context& lane, std::int64_t i) {
    const BatchEntry<T> ve = v.at(i), ce = c.at(i);
    const VectorView<const T> tau(ve.tau, ve.k, MemorySpace::device, ctx.device);
    if (identity) {
      kernels::cuda::orgqr<T>(lane.impl(), ve.k, view_of(ce, ce.n, ctx.device), tau);
    } else {
      kernels::cuda::ormqr<T>(lane.impl(), Side::left, op, MatrixView<const T>(view_of(ve, ve.k, ctx.device)),
                      tau, view_of(ce, ce.n, ctx.device));
    }
  });
}

}  // namespace

template <class T>
void batched_geqrf(detail::ContextImpl& ctx, const MatrixBatch<T>& a) {
  if (a.count == 0) return;
  DeviceGuard guard(ctx.device);
  Scratch scratch(ctx,
                  (a.strided ? 0 : desc_bytes<T>(a.count)) + blocked_scratch(ctx, a, false));
  geqrf_impl(ctx, a, scratch);
}

template <class T>
void batched_orgqr(detail::ContextImpl& ctx, const MatrixBatch<T>& a) {
  if (a.count == 0) return;
  DeviceGuard guard(ctx.device);
  Scratch scratch(ctx, 2 * desc_bytes<T>(a.count));
  // V: the first k columns of each matrix; C: the whole m x n output, written over it.
  MatrixBatch<T> v = a;
  for (auto& e : v.list) e.n = e.k;
  apply_impl(ctx, Op::no_trans, true, v, a, scratch);
}

template <class T>
void batched_ormqr(detail::ContextImpl& ctx, Op op, const MatrixBatch<T>& v,
                   const MatrixBatch<T>& c) {
  if (v.count == 0) return;
  DeviceGuard guard(ctx.device);
  Scratch scratch(ctx, 2 * desc_bytes<T>(v.count));
  apply_impl(ctx, op, false, v, c, scratch);
}

namespace {

/// Scratch bytes gels_impl takes for batch a.
template <class T>
std::size_t gels_bytes(const detail::ContextImpl& ctx, const MatrixBatch<T>& a) {
  std::int64_t tau_total = 0;
  for (std::int64_t i = 0; i < a.count; ++i) tau_total += a.at(i).n;
  return static_cast<std::size_t>(tau_total) * sizeof(T) + kAlign + 5 * desc_bytes<T>(a.count) +
         blocked_scratch(ctx, a, true);
}

/// geqrf, Q^T B, R X = (Q^T B)'s top (the LAPACK-form route).
template <class T>
void gels_impl(detail::ContextImpl& ctx, const MatrixBatch<T>& a, const MatrixBatch<T>& b,
               Scratch& scratch) {
  if (a.count == 0) return;
  std::int64_t tau_total = 0;
  for (std::int64_t i = 0; i < a.count; ++i) tau_total += a.at(i).n;
  T* tau = scratch.take<T>(static_cast<std::size_t>(std::max<std::int64_t>(tau_total, 1)));
  MatrixBatch<T> f = a;
  f.strided = false;
  f.list.clear();
  std::int64_t offset = 0;
  for (std::int64_t i = 0; i < a.count; ++i) {
    BatchEntry<T> e = a.at(i);
    e.tau = tau + offset;
    e.k = e.n;
    offset += e.n;
    f.list.push_back(e);
  }
  geqrf_impl(ctx, f, scratch);
  apply_impl(ctx, Op::trans, false, f, b, scratch);
  std::vector<Desc<T>> as, bs;
  for (std::int64_t i = 0; i < a.count; ++i) {
    const BatchEntry<T> e = f.at(i), r = b.at(i);
    if (e.n == 0 || r.n == 0) continue;
    as.push_back(desc_of(e));
    bs.push_back(desc_of(r));
  }
  const Desc<T>* da = upload(ctx, scratch, as);
  const Desc<T>* db = upload(ctx, scratch, bs);
  batched::launch_upper_solve(listed(da, 0, as.size()), listed(db, 0, bs.size()), ctx.stream);
}

/// GPUQR_BATCHED_ENGINE: -1 unset or empty (the thresholds decide), 0 off, anything else on.
/// Read on every call, so that tests and benchmarks may flip it between calls.
int engine_knob() {
  const char* v = std::getenv("GPUQR_BATCHED_ENGINE");
  if (v == nullptr || *v == '\0') return -1;
  return v[0] == '0' ? 0 : 1;
}

/// Whether least squares of an m x n matrix goes to the tile engine. Measured on an H100
/// (session 5, `gpuqr_tile_engine_bench --lstsq --gib 0.5`, nrhs 1, ms of the existing
/// routes / the engine): FP64 64x64 0.13x, 256x64 0.15x, 128x128 0.57x, 2048x512 0.60x (the
/// existing routes win), 1024x256 1.00x, 512x512 3.15x, 256x256 4.71x, 512x128 17.2x (the
/// dense route's per-matrix cuSOLVER calls); FP32 alike (0.06-0.72x, 1.04x, 3.10x, 5.13x,
/// 19.0x). So: square-ish matrices from n = 256 (m <= 2n), and tall ones (m >= 4n) with
/// 128 <= n < 256, where the dense route is slowest.
template <class T>
bool engine_pays(std::int64_t m, std::int64_t n) {
  return (n >= 256 && m <= 2 * n) || (n >= 128 && n < 256 && m >= 4 * n);
}

/// The engine's reflector slots, kept per (device, stream) and reused by later calls when big
/// enough (growing them frees the old ones: cudaFree waits for the device).
template <class T>
detail::TileFactors<T>& engine_factors(int device, cudaStream_t stream) {
  static std::mutex lock;
  static auto* pools = new std::map<std::pair<int, cudaStream_t>, detail::TileFactors<T>*>();
  std::lock_guard<std::mutex> guard(lock);
  detail::TileFactors<T>*& p = (*pools)[{device, stream}];
  if (p == nullptr) p = new detail::TileFactors<T>;
  return *p;
}

constexpr std::int64_t kEngineAlign = 32;  // elements: each augmented matrix starts aligned

template <class T>
std::int64_t augmented_elems(const BatchEntry<T>& e, const BatchEntry<T>& r) {
  return (e.m * (e.n + r.n) + kEngineAlign - 1) / kEngineAlign * kEngineAlign;
}

/// The engine route: W_i = [A_i | B_i] (m x (n + nrhs), ld m) in the scratch, the engine's QR
/// of every W_i (R in place, exact zeros below: R's block row j is row tile j for a dense
/// matrix, checked after the run), B_i := W_i's last nrhs columns (R12 = (Q^T B)'s top over
/// R22, whose column norms are the residual norms, over zeros), then R11 X = B_i's top.
template <class T>
void lstsq_engine(detail::ContextImpl& ctx, const MatrixBatch<T>& a, const MatrixBatch<T>& b,
                  const std::vector<std::int64_t>& items, Scratch& scratch) {
  if (items.empty()) return;
  std::int64_t total = 0;
  for (const std::int64_t i : items) total += augmented_elems(a.at(i), b.at(i));
  T* work = scratch.take<T>(static_cast<std::size_t>(total));
  std::vector<Desc<T>> gather_src, gather_dst, scatter_src, scatter_dst, solve_a, solve_b;
  std::vector<detail::TileMatrix<T>> mats;
  std::vector<detail::TileScheduler> schedulers;
  mats.reserve(items.size());
  schedulers.reserve(items.size());
  std::int64_t offset = 0;
  for (const std::int64_t i : items) {
    const BatchEntry<T> e = a.at(i), r = b.at(i);
    T* w = work + offset;
    const std::int64_t cols = e.n + r.n;
    const Desc<T> wa{w, nullptr, e.m, static_cast<int>(e.m), static_cast<int>(e.n), 0, 0};
    const Desc<T> wb{w + e.n * e.m, nullptr, e.m, static_cast<int>(e.m), static_cast<int>(r.n),
                     0, 0};
    gather_src.push_back(desc_of(e));
    gather_dst.push_back(wa);
    gather_src.push_back(desc_of(r));
    gather_dst.push_back(wb);
    scatter_src.push_back(wb);
    scatter_dst.push_back(desc_of(r));
    solve_a.push_back(wa);
    solve_b.push_back(desc_of(r));
    mats.push_back({w, e.m, static_cast<std::int32_t>(e.m), static_cast<std::int32_t>(cols)});
    schedulers.push_back(detail::TileScheduler::dense(
        static_cast<std::int32_t>(schedulers.size()), e.m, cols));
    offset += augmented_elems(e, r);
  }
  const Desc<T>* gs = upload(ctx, scratch, gather_src);
  const Desc<T>* gd = upload(ctx, scratch, gather_dst);
  const Desc<T>* ss = upload(ctx, scratch, scatter_src);
  const Desc<T>* sd = upload(ctx, scratch, scatter_dst);
  const Desc<T>* sa = upload(ctx, scratch, solve_a);
  const Desc<T>* sb = upload(ctx, scratch, solve_b);
  batched::launch_copy(listed(gs, 0, gather_src.size()), listed(gd, 0, gather_dst.size()),
                       ctx.stream);
  kernels::cuda::tile_qr<T>(ctx, mats, schedulers, engine_factors<T>(ctx.device, ctx.stream),
                            {});
  for (std::size_t k = 0; k < schedulers.size(); ++k) {
    const std::vector<std::int32_t> rr = schedulers[k].r_row_tiles();
    const std::int64_t top = std::min<std::int64_t>(mats[k].m, mats[k].n);
    for (std::int32_t j = 0; std::int64_t{j} * detail::kTile < top; ++j)
      GPUQR_CHECK_ARG(rr[static_cast<std::size_t>(j)] == j,
                      "lstsq_vbatched: the tile engine left R's block row " + std::to_string(j) +
                          " in row tile " + std::to_string(rr[static_cast<std::size_t>(j)]) +
                          " (a bug: dense matrices keep R in place)");
  }
  batched::launch_copy(listed(ss, 0, scatter_src.size()), listed(sd, 0, scatter_dst.size()),
                       ctx.stream);
  batched::launch_upper_solve(listed(sa, 0, solve_a.size()), listed(sb, 0, solve_b.size()),
                              ctx.stream);
}

}  // namespace

template <class T>
void batched_gels(detail::ContextImpl& ctx, const MatrixBatch<T>& a, const MatrixBatch<T>& b) {
  if (a.count == 0) return;
  DeviceGuard guard(ctx.device);
  Scratch scratch(ctx, gels_bytes(ctx, a));
  gels_impl(ctx, a, b, scratch);
}

template <class T>
void batched_lstsq(detail::ContextImpl& ctx, const MatrixBatch<T>& a, const MatrixBatch<T>& b) {
  if (a.count == 0) return;
  DeviceGuard guard(ctx.device);
  const int knob = engine_knob();
  constexpr std::int64_t kInt = std::numeric_limits<std::int32_t>::max();
  MatrixBatch<T> ra = listed_batch<T>(a.count), rb = listed_batch<T>(a.count);
  ra.count = rb.count = 0;
  std::vector<std::int64_t> engine;
  std::int64_t total = 0;
  for (std::int64_t i = 0; i < a.count; ++i) {
    const BatchEntry<T> e = a.at(i), r = b.at(i);
    const bool fits = e.m < kInt - detail::kTile && e.n + r.n < kInt - detail::kTile;
    const bool use = e.n >= 1 && r.n >= 1 && fits && knob != 0 &&
                     (knob == 1 || engine_pays<T>(e.m, e.n));
    if (use) {
      engine.push_back(i);
      total += augmented_elems(e, r);
    } else {
      ra.list.push_back(e);
      rb.list.push_back(r);
      ++ra.count;
      ++rb.count;
    }
  }
  const auto ne = static_cast<std::int64_t>(engine.size());
  Scratch scratch(ctx, gels_bytes(ctx, ra) + static_cast<std::size_t>(total) * sizeof(T) + kAlign +
                           2 * desc_bytes<T>(2 * ne) + 4 * desc_bytes<T>(ne));
  // The rest first: the device works on it while the host plans the engine's launches.
  gels_impl(ctx, ra, rb, scratch);
  lstsq_engine(ctx, a, b, engine, scratch);
}

GPUQR_INSTANTIATE_BATCHED_KERNELS(float)
GPUQR_INSTANTIATE_BATCHED_KERNELS(double)

}  // namespace gpuqr::kernels::cuda
