// The tile engine's task kernel and its host driver (src/core/tile_engine.hpp). One launch
// runs every task of a scheduler launch, for all matrices of the batch: one thread block per
// task, dispatching on the kind. The tasks of a launch touch disjoint tiles (the scheduler
// guarantees it), so blocks never share data; inside an ApplyFactorize block the Apply's
// global writes are made visible to the Factorize's reads by a block barrier.
//
// Factorize: the bundle's column tile (up to kMaxTileBundle x 32 rows, 32 columns) gathered
// into shared memory, Householder QR as LAPACK's geqr2 (larfg's beta = -sign(alpha) ||.||,
// tau = 0 for a zero tail), T by larft's recurrence from the Gram entries V^T V. Per column
// warp 0 forms the reflector (norm, larfg, scaling: no block-wide reduction) and then all
// warps update the trailing columns: two block barriers per column. R and exact zeros go back
// to the matrix, V and T to the bundle's slot.
// Apply: V and T from the slot into shared memory once, then per column tile of [c0, c1):
// C to shared memory, W = V^T C, W = op(T) W, C -= V W written straight back to global memory.
// The CPU twin (src/core/tile_engine_twin.hpp) does the same tasks with LAPACK.
#include <cuda_runtime.h>

#include <algorithm>
#include <cfloat>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "src/core/tile_engine.hpp"
#include "src/cuda/check.hpp"
#include "src/cuda/safe_range.cuh"

namespace gpuqr::kernels::cuda {
namespace {

using detail::kTile;
using detail::TileMatrix;
using detail::TileTaskDesc;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kLdt = kTile + 1;  // T and W in shared memory: odd stride, no bank conflicts

template <class T>
__device__ __forceinline__ T warp_sum(T v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
template <class T>
__device__ __forceinline__ T warp_max(T v) {
  for (int o = 16; o > 0; o >>= 1) v = fmax(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

template <class T>
struct KernelArgs {
  const TileTaskDesc* tasks;
  const TileMatrix<T>* mats;
  T* slots;
  std::int64_t slot_elems;
  int hmax;    // V's rows per slot, and the shared-memory panels' rows
  bool trans;  // Apply: Q^T C (the factorization) or Q C (multiply_by_q)
};

/// Rows of the stacked bundle (the last row tile may be partial) and columns of tile `col`.
template <class T>
__device__ __forceinline__ int bundle_height(const TileMatrix<T>& mat, const int* rows, int nrows) {
  return kTile * (nrows - 1) + min(kTile, mat.m - kTile * rows[nrows - 1]);
}
template <class T>
__device__ __forceinline__ int tile_width(const TileMatrix<T>& mat, int col) {
  return max(0, min(kTile, mat.n - kTile * col));
}
/// Global offset of panel row p (row tile rows[p / 32]) in column c.
template <class T>
__device__ __forceinline__ std::int64_t at(const TileMatrix<T>& mat, const int* rows, int p,
                                           int c) {
  return std::int64_t(kTile) * rows[p / kTile] + p % kTile + std::int64_t(c) * mat.ld;
}

/// QR of the bundle `rows` at column tile `col`; V and T into slot `slot`.
template <class T>
__device__ void factorize(const KernelArgs<T>& args, const TileMatrix<T>& mat, const int* rows,
                          int nrows, int slot, int col, T* s_p, T* s_t, T* s_g) {
  __shared__ T s_tau[kTile];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int ld = args.hmax + 1;
  const int h = bundle_height(mat, rows, nrows), w = tile_width(mat, col), k = min(h, w);
  if (k <= 0) return;
  const int c_first = kTile * col;
  for (int e = tid; e < h * w; e += kThreads) {
    const int p = e % h, c = e / h;
    s_p[p + c * ld] = mat.a[at(mat, rows, p, c_first + c)];
  }
  __syncthreads();
  for (int j = 0; j < k; ++j) {
    T* x = s_p + j * ld;
    if (warp == 0) {
      T ssq = 0;
      for (int i = j + 1 + lane; i < h; i += 32) ssq += x[i] * x[i];
      ssq = warp_sum(ssq);
      T xnorm;
      if (ssq >= SafeRange<T>::small && ssq <= SafeRange<T>::big) {
        xnorm = sqrt(ssq);
      } else {  // squares over- or underflow: LAPACK's scaled sum
        T amax = 0;
        for (int i = j + 1 + lane; i < h; i += 32) amax = fmax(amax, fabs(x[i]));
        amax = warp_max(amax);
        T sc = 0;
        if (amax > T(0))
          for (int i = j + 1 + lane; i < h; i += 32) {
            const T q = x[i] / amax;
            sc += q * q;
          }
        xnorm = amax > T(0) ? amax * sqrt(warp_sum(sc)) : T(0);
      }
      const T alpha = x[j];
      T tau = 0, scale = 0, beta = alpha;
      if (xnorm != T(0)) {  // otherwise H = I (tau = 0), as larfg
        beta = -copysign(hypot(alpha, xnorm), alpha);
        tau = (beta - alpha) / beta;
        scale = T(1) / (alpha - beta);
      }
      if (tau != T(0))
        for (int i = j + 1 + lane; i < h; i += 32) x[i] *= scale;
      __syncwarp();  // every lane has read alpha before lane 0 overwrites it
      if (lane == 0) {
        x[j] = beta;
        s_tau[j] = tau;
      }
    }
    __syncthreads();  // v_j and tau_j are ready
    const T tau = s_tau[j];
    if (tau != T(0)) {  // uniform over the block
      for (int c = j + 1 + warp; c < w; c += kWarps) {
        T* ac = s_p + c * ld;
        T dot = 0;
        for (int i = j + 1 + lane; i < h; i += 32) dot += x[i] * ac[i];
        const T pivot = ac[j];
        const T wc = tau * (warp_sum(dot) + pivot);
        __syncwarp();  // every lane read the pivot before lane 0 rewrites it
        if (lane == 0) ac[j] = pivot - wc;
        for (int i = j + 1 + lane; i < h; i += 32) ac[i] -= wc * x[i];
      }
    }
    __syncthreads();  // column j + 1 is current for warp 0
  }
  // G(a, b) = v_a^T v_b (a < b): v_a's unit entry meets v_b's row a... written out: v_b is zero
  // above row b and 1 at b, so v_a^T v_b = V(b, a) + sum_{i > b} V(i, a) V(i, b).
  for (int e = tid; e < kTile * kTile; e += kThreads) {
    const int a = e % kTile, b = e / kTile;
    if (a < b && b < k) {
      T g = s_p[b + a * ld];
      for (int i = b + 1; i < h; ++i) g += s_p[i + a * ld] * s_p[i + b * ld];
      s_g[a + b * kLdt] = g;
    }
  }
  __syncthreads();
  // larft: T(r, i) = -tau_i sum_{c = r}^{i - 1} T(r, c) G(c, i), T(i, i) = tau_i. Thread r
  // needs only its own row of T, so the recurrence runs without barriers.
  if (tid < kTile) {
    const int r = tid;
    for (int i = 0; i < k; ++i) {
      if (r < i) {
        T acc = 0;
        for (int c = r; c < i; ++c) acc += s_t[r + c * kLdt] * s_g[c + i * kLdt];
        s_t[r + i * kLdt] = -s_tau[i] * acc;
      } else if (r == i) {
        s_t[r + r * kLdt] = s_tau[r];
      }
    }
  }
  __syncthreads();
  T* v = args.slots + std::int64_t(slot) * args.slot_elems;
  T* t = v + std::int64_t(args.hmax) * kTile;
  for (int e = tid; e < h * w; e += kThreads) {
    const int p = e % h, c = e / h;
    const T x = s_p[p + c * ld];
    mat.a[at(mat, rows, p, c_first + c)] = p > c ? T(0) : x;
    if (c < k) v[p + std::int64_t(c) * args.hmax] = p > c ? x : T(p == c ? 1 : 0);
  }
  for (int e = tid; e < k * k; e += kThreads) {
    const int r = e % k, c = e / k;
    t[r + c * kTile] = r <= c ? s_t[r + c * kLdt] : T(0);
  }
}

/// op(Q) of bundle `slot` (factorized at column tile `col`, rows `rows`) on column tiles
/// [c0, c1) of those rows; op = ^T for the factorization, Q itself for multiply_by_q.
template <class T>
__device__ void apply(const KernelArgs<T>& args, const TileMatrix<T>& mat, const int* rows,
                      int nrows, int slot, int col, int c0, int c1, T* s_c, T* s_v, T* s_t,
                      T* s_w) {
  const int tid = threadIdx.x;
  const int ld = args.hmax + 1;
  const int h = bundle_height(mat, rows, nrows), k = min(h, tile_width(mat, col));
  if (k <= 0) return;
  const T* v = args.slots + std::int64_t(slot) * args.slot_elems;
  const T* t = v + std::int64_t(args.hmax) * kTile;
  for (int e = tid; e < h * k; e += kThreads) {
    const int p = e % h, c = e / h;
    s_v[p + c * ld] = v[p + std::int64_t(c) * args.hmax];
  }
  for (int e = tid; e < k * k; e += kThreads) {
    const int r = e % k, c = e / k;
    s_t[r + c * kLdt] = t[r + c * kTile];
  }
  for (int ct = c0; ct < c1; ++ct) {
    const int wc = tile_width(mat, ct), c_first = kTile * ct;
    if (wc <= 0) break;
    for (int e = tid; e < h * wc; e += kThreads) {
      const int p = e % h, c = e / h;
      s_c[p + c * ld] = mat.a[at(mat, rows, p, c_first + c)];
    }
    __syncthreads();  // C (and, first time, V and T) loaded
    for (int e = tid; e < k * wc; e += kThreads) {
      const int a = e % k, c = e / k;
      T s = 0;
      for (int i = 0; i < h; ++i) s += s_v[i + a * ld] * s_c[i + c * ld];
      s_w[a + c * kLdt] = s;
    }
    __syncthreads();
    // W := op(T) W (T upper triangular), in registers first: every entry reads a column of W.
    constexpr int kPer = kTile * kTile / kThreads;
    T out[kPer];
#pragma unroll
    for (int q = 0; q < kPer; ++q) {
      const int e = tid + q * kThreads, a = e % kTile, c = e / kTile;
      T s = 0;
      if (a < k && c < wc) {
        if (args.trans)
          for (int b = 0; b <= a; ++b) s += s_t[b + a * kLdt] * s_w[b + c * kLdt];
        else
          for (int b = a; b < k; ++b) s += s_t[a + b * kLdt] * s_w[b + c * kLdt];
      }
      out[q] = s;
    }
    __syncthreads();
#pragma unroll
    for (int q = 0; q < kPer; ++q) {
      const int e = tid + q * kThreads, a = e % kTile, c = e / kTile;
      if (a < k && c < wc) s_w[a + c * kLdt] = out[q];
    }
    __syncthreads();
    for (int e = tid; e < h * wc; e += kThreads) {
      const int p = e % h, c = e / h;
      T s = 0;
      for (int b = 0; b < k; ++b) s += s_v[p + b * ld] * s_w[b + c * kLdt];
      mat.a[at(mat, rows, p, c_first + c)] = s_c[p + c * ld] - s;
    }
    __syncthreads();  // s_c and s_w are rewritten by the next column tile
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) tile_task_kernel(KernelArgs<T> args) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int ld = args.hmax + 1;
  T* s_p = reinterpret_cast<T*>(smem_raw);  // the panel / C: hmax x kTile
  T* s_v = s_p + ld * kTile;                // V (Apply)
  T* s_t = s_v + ld * kTile;                // T
  T* s_w = s_t + kTile * kLdt;              // W (Apply) or G (Factorize)
  const TileTaskDesc& task = args.tasks[blockIdx.x];
  const TileMatrix<T> mat = args.mats[task.matrix];
  if (task.kind == static_cast<int>(detail::TileTaskKind::factorize)) {
    factorize(args, mat, task.rows, task.nrows, task.slot, task.col, s_p, s_t, s_w);
    return;
  }
  apply(args, mat, task.rows, task.nrows, task.slot, task.col, task.c0, task.c1, s_p, s_v, s_t,
        s_w);
  if (task.kind == static_cast<int>(detail::TileTaskKind::apply_factorize)) {
    __syncthreads();  // the Apply's global writes are seen by the Factorize's reads
    factorize(args, mat, task.next_rows, task.next_nrows, task.next_slot, task.c0, s_p, s_t, s_w);
  }
}

template <class T>
std::size_t smem_bytes(int hmax) {
  return (2 * std::size_t(hmax + 1) * kTile + 2 * kTile * kLdt) * sizeof(T);
}

template <class T>
void launch(const KernelArgs<T>& args, std::int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  const std::size_t bytes = smem_bytes<T>(args.hmax);
  // Cheap, and per call: the largest bundle (so the bytes) may change from run to run.
  if (bytes > 48 * 1024)
    GPUQR_CUDA_CHECK(cudaFuncSetAttribute(tile_task_kernel<T>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(bytes)));
  GPUQR_CHECK_ARG(count <= std::int64_t(0x7fffffff), "tile engine: too many tasks in a launch");
  tile_task_kernel<T><<<static_cast<unsigned>(count), kThreads, bytes, stream>>>(args);
  GPUQR_CUDA_CHECK_LAUNCH(stream);
}

/// Pinned host staging and device buffers for task descriptors, two of each: the host packs
/// launch k + 1 into one while the copy out of the other (launch k) may still be in flight.
/// Kept per stream for the life of the process (grow-only, never freed: allocating pinned
/// memory synchronizes the device, and a run should not pay that); calls on one stream from
/// several host threads at once are not supported (as the batched dense route's lanes).
class TaskBuffers {
 public:
  explicit TaskBuffers(cudaStream_t stream) : stream_(stream) {
    for (int b = 0; b < 2; ++b)
      GPUQR_CUDA_CHECK(cudaEventCreateWithFlags(&copied_[b], cudaEventDisableTiming));
  }
  TaskBuffers(const TaskBuffers&) = delete;
  TaskBuffers& operator=(const TaskBuffers&) = delete;

  /// Room for `tasks` descriptors per buffer and `mat_bytes` of matrix descriptors.
  void reserve(std::int64_t tasks, std::size_t mat_bytes) {
    if (tasks > capacity_) {
      // The stream may still read the old buffers.
      GPUQR_CUDA_CHECK(cudaStreamSynchronize(stream_));
      const std::size_t bytes = std::size_t(tasks) * sizeof(TileTaskDesc);
      for (int b = 0; b < 2; ++b) {
        if (host_[b] != nullptr) GPUQR_CUDA_CHECK(cudaFreeHost(host_[b]));
        if (device_[b] != nullptr) GPUQR_CUDA_CHECK(cudaFree(device_[b]));
        host_[b] = nullptr;
        device_[b] = nullptr;
        GPUQR_CUDA_CHECK(cudaMallocHost(&host_[b], bytes));
        GPUQR_CUDA_CHECK(cudaMalloc(&device_[b], bytes));
      }
      capacity_ = tasks;
    }
    if (mat_bytes > mat_bytes_) {
      GPUQR_CUDA_CHECK(cudaStreamSynchronize(stream_));
      if (mats_ != nullptr) GPUQR_CUDA_CHECK(cudaFree(mats_));
      mats_ = nullptr;
      GPUQR_CUDA_CHECK(cudaMalloc(&mats_, mat_bytes));
      mat_bytes_ = mat_bytes;
    }
  }

  /// The matrix descriptors on the device (a pageable source: staged before the call returns).
  template <class T>
  const TileMatrix<T>* upload_mats(const std::vector<TileMatrix<T>>& mats) {
    GPUQR_CUDA_CHECK(cudaMemcpyAsync(mats_, mats.data(), mats.size() * sizeof(TileMatrix<T>),
                                     cudaMemcpyHostToDevice, stream_));
    return static_cast<const TileMatrix<T>*>(mats_);
  }

  /// Stages `descs` in buffer k % 2 and copies them to the device; returns the device copy.
  /// Reusing a device buffer needs no wait: its previous reader, launch k - 2, comes before
  /// this copy on the stream.
  const TileTaskDesc* upload(std::int64_t k, const std::vector<TileTaskDesc>& descs) {
    const int b = static_cast<int>(k & 1);
    GPUQR_CHECK_ARG(static_cast<std::int64_t>(descs.size()) <= capacity_,
                    "tile engine: a launch has more tasks than the dry run said (a bug)");
    // The copy out of this staging buffer two launches back must be over before it is reused.
    GPUQR_CUDA_CHECK(cudaEventSynchronize(copied_[b]));
    std::copy(descs.begin(), descs.end(), host_[b]);
    GPUQR_CUDA_CHECK(cudaMemcpyAsync(device_[b], host_[b], descs.size() * sizeof(TileTaskDesc),
                                     cudaMemcpyHostToDevice, stream_));
    GPUQR_CUDA_CHECK(cudaEventRecord(copied_[b], stream_));
    return device_[b];
  }

 private:
  cudaStream_t stream_;
  std::int64_t capacity_ = 0;
  TileTaskDesc* host_[2] = {};
  TileTaskDesc* device_[2] = {};
  cudaEvent_t copied_[2] = {};
  void* mats_ = nullptr;
  std::size_t mat_bytes_ = 0;
};

TaskBuffers& buffers_for(int device, cudaStream_t stream, std::int64_t tasks,
                         std::size_t mat_bytes) {
  static std::mutex lock;
  static auto* pools = new std::map<std::pair<int, cudaStream_t>, TaskBuffers*>();
  TaskBuffers* p = nullptr;
  {
    std::lock_guard<std::mutex> guard(lock);
    TaskBuffers*& slot = (*pools)[{device, stream}];
    if (slot == nullptr) slot = new TaskBuffers(stream);
    p = slot;
  }
  p->reserve(std::max<std::int64_t>(tasks, 1), std::max<std::size_t>(mat_bytes, 64));
  return *p;
}

template <class T>
void check_mats(const std::vector<TileMatrix<T>>& mats) {
  for (std::size_t i = 0; i < mats.size(); ++i) {
    const TileMatrix<T>& m = mats[i];
    GPUQR_CHECK_ARG(m.m >= 0 && m.n >= 0 && m.ld >= std::max(1, m.m) &&
                        (m.a != nullptr || m.m == 0 || m.n == 0),
                    "tile engine: matrix " + std::to_string(i) + ": " + std::to_string(m.m) + " x " +
                        std::to_string(m.n) + ", ld " + std::to_string(m.ld));
  }
}

}  // namespace

template <class T>
std::int64_t tile_qr(detail::ContextImpl& ctx, const std::vector<TileMatrix<T>>& mats,
                     std::vector<detail::TileScheduler>& schedulers, detail::TileFactors<T>& factors,
                     const detail::TileLaunchHook& hook) {
  check_mats(mats);
  GPUQR_CHECK_ARG(mats.size() == schedulers.size(),
                  "tile engine: " + std::to_string(mats.size()) + " matrices for " +
                      std::to_string(schedulers.size()) + " schedulers");
  for (std::size_t i = 0; i < mats.size(); ++i)
    GPUQR_CHECK_ARG(schedulers[i].row_tiles() == (mats[i].m + kTile - 1) / kTile &&
                        schedulers[i].col_tiles() == (mats[i].n + kTile - 1) / kTile,
                    "tile engine: matrix " + std::to_string(i) + " and its scheduler disagree");
  const detail::TilePlan plan = detail::plan_tile_engine(schedulers);
  GPUQR_CHECK_ARG(plan.max_bundle <= detail::kMaxTileBundle,
                  "tile engine: bundles of " + std::to_string(plan.max_bundle) +
                      " row tiles (the device takes " + std::to_string(detail::kMaxTileBundle) +
                      ")");
  cuda_detail::DeviceGuard guard(ctx.device);
  cudaStream_t stream = ctx.stream;
  factors.hmax = kTile * plan.max_bundle;
  factors.slot_elems = std::int64_t(factors.hmax) * kTile + kTile * kTile;
  // Slots are kept from an earlier run with the same factors object when they are big enough
  // (benchmarks repeat a run; allocation would synchronize).
  const std::int64_t slots = std::max<std::int64_t>(plan.slots, 1);
  if (factors.slots.space() != MemorySpace::device || factors.slots.device() != ctx.device ||
      factors.slots.rows() != factors.slot_elems || factors.slots.cols() < slots)
    factors.slots = Matrix<T>(factors.slot_elems, slots, MemorySpace::device, ctx.device);
  factors.factorized.assign(static_cast<std::size_t>(plan.launches), {});
  TaskBuffers& buffers =
      buffers_for(ctx.device, stream, plan.max_tasks, mats.size() * sizeof(TileMatrix<T>));
  KernelArgs<T> args{nullptr, buffers.upload_mats(mats), factors.slots.data(), factors.slot_elems, factors.hmax,
                     true};
  std::vector<TileTaskDesc> descs;
  std::int64_t k = 0;
  detail::run_tile_launches(schedulers, [&](std::vector<detail::TileTask>& tasks) {
    GPUQR_CHECK_ARG(k < plan.launches, "tile engine: more launches than the dry run (a bug)");
    descs.clear();
    detail::pack_tile_tasks(tasks, plan.slot_base, descs);
    args.tasks = buffers.upload(k, descs);
    launch(args, static_cast<std::int64_t>(descs.size()), stream);
    auto& done = factors.factorized[static_cast<std::size_t>(k)];
    for (const TileTaskDesc& d : descs) {
      TileTaskDesc f = d;
      if (d.kind == static_cast<int>(detail::TileTaskKind::apply_factorize)) {
        f.slot = d.next_slot;
        f.col = d.c0;
        f.nrows = d.next_nrows;
        std::copy(d.next_rows, d.next_rows + detail::kMaxTileBundle, f.rows);
      } else if (d.kind != static_cast<int>(detail::TileTaskKind::factorize)) {
        continue;
      }
      f.kind = static_cast<int>(detail::TileTaskKind::factorize);
      f.next_slot = -1;
      f.next_nrows = 0;
      done.push_back(f);
    }
    if (hook) hook(k, tasks);
    ++k;
  });
  return k;
}

template <class T>
void tile_multiply_by_q(detail::ContextImpl& ctx, const std::vector<TileMatrix<T>>& mats,
                        const detail::TileFactors<T>& factors, int apply_cols) {
  check_mats(mats);
  GPUQR_CHECK_ARG(apply_cols >= 1, "tile engine: apply_cols must be at least 1");
  cuda_detail::DeviceGuard guard(ctx.device);
  cudaStream_t stream = ctx.stream;
  // The factorizations of one launch touch disjoint row tiles: one launch undoes them all.
  std::vector<std::vector<TileTaskDesc>> launches;
  std::int64_t widest = 0;
  for (auto it = factors.factorized.rbegin(); it != factors.factorized.rend(); ++it) {
    std::vector<TileTaskDesc> tasks;
    for (const TileTaskDesc& f : *it) {
      GPUQR_CHECK_ARG(f.matrix >= 0 && static_cast<std::size_t>(f.matrix) < mats.size(),
                      "tile engine: the factors name a matrix outside the batch");
      const int ct = (mats[static_cast<std::size_t>(f.matrix)].n + kTile - 1) / kTile;
      for (int c0 = f.col; c0 < ct; c0 += apply_cols) {
        TileTaskDesc a = f;
        a.kind = static_cast<int>(detail::TileTaskKind::apply);
        a.c0 = c0;
        a.c1 = std::min(ct, c0 + apply_cols);
        tasks.push_back(a);
      }
    }
    widest = std::max<std::int64_t>(widest, static_cast<std::int64_t>(tasks.size()));
    launches.push_back(std::move(tasks));
  }
  TaskBuffers& buffers =
      buffers_for(ctx.device, stream, widest, mats.size() * sizeof(TileMatrix<T>));
  KernelArgs<T> args{nullptr, buffers.upload_mats(mats), const_cast<T*>(factors.slots.data()), factors.slot_elems,
                     factors.hmax, false};
  for (std::size_t k = 0; k < launches.size(); ++k) {
    args.tasks = buffers.upload(static_cast<std::int64_t>(k), launches[k]);
    launch(args, static_cast<std::int64_t>(launches[k].size()), stream);
  }
}

GPUQR_INSTANTIATE_TILE_ENGINE_KERNELS(float)
GPUQR_INSTANTIATE_TILE_ENGINE_KERNELS(double)

}  // namespace gpuqr::kernels::cuda
