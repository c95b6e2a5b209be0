// CUDA leaves of the sparse multifrontal QR (src/core/sparse_device_kernels.hpp): S-Assembly,
// Pack-Assembly and the count of small diagonal entries, each one launch over a call's list
// of descriptors, enqueued on the context's stream; nothing here waits for the device.
//
// Work is flattened over the descriptors (src/core/sparse_kernel_split.hpp): S-Assembly and
// the diagonal check give each block kItemsPerBlock consecutive entries, Pack-Assembly gives
// each warp one tile of 32 rows x 16 columns of a contribution block, whatever descriptor
// they belong to; so one front of 10^6 tuples spreads over the whole GPU and thousands of
// 3-tuple fronts share blocks. A block first loads the starts of the few descriptors it meets
// into shared memory (its window) and finds each item's descriptor there.
//
// Per call the host uploads one plan (the descriptors that have work, their starts, each
// block's first descriptor) into the leaf workspace (ContextImpl::kLeafWorkspace), through
// pinned staging (see Staging below). That slot is safe to reuse across calls: the upload is
// a copy on the context's stream, so it lands after every kernel enqueued before it (ours, or
// a dense leaf's that used the same slot) is done, and nothing that runs after it on the
// stream touches the slot before our kernel has read the plan. Work on the context's other
// lane (cuda_aux_lane) has workspaces of its own. So callers must not keep their own data
// (the arena, `count`) in the leaf workspace across these calls.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "src/core/sparse_device_kernels.hpp"
#include "src/core/sparse_kernel_split.hpp"
#include "src/cuda/check.hpp"
#include "src/cuda/pinned_pool.hpp"

namespace gpuqr::kernels::cuda {
namespace {

using cuda_detail::DeviceGuard;
using detail::DiagDesc;
using detail::PackDesc;
using detail::RPackDesc;
using detail::SAssemblyDesc;
namespace split = detail::sparse_split;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
/// S-Assembly and diagonals: entries per thread; a few independent scatters in flight each.
constexpr int kItemsPerThread = 4;
constexpr std::int64_t kItemsPerBlock = std::int64_t{kThreads} * kItemsPerThread;
/// Pack-Assembly: a warp tile per warp.
constexpr std::int64_t kTilesPerBlock = kWarps;
constexpr int kTileCols = static_cast<int>(split::kPackTileCols);
static_assert(split::kPackTileRows == 32, "a Pack-Assembly tile row is a lane");

// ---- a diagnostic ---------------------------------------------------------------------------

/// GPUQR_SPARSE_TRACE=1: each assembly leaf prints its host time by part and then waits for
/// its kernel (so the line holds the device time too). A diagnostic: it serializes the stream.
class LeafTrace {
 public:
  explicit LeafTrace(const char* leaf) : leaf_(leaf), t_(now()) {}
  void lap(int i) {
    const auto t = now();
    ms_[i] = 1e3 * std::chrono::duration<double>(t - t_).count();
    t_ = t;
  }
  void report(cudaStream_t stream, std::size_t descs, std::int64_t items, unsigned blocks) {
    if (!on()) return;
    GPUQR_CUDA_CHECK(cudaStreamSynchronize(stream));
    lap(3);
    std::fprintf(stderr,
                 "sparse trace: %s descs %zu items %lld blocks %u | split %.2f upload %.2f "
                 "launch %.2f device %.2f ms\n",
                 leaf_, descs, static_cast<long long>(items), blocks, ms_[0], ms_[1], ms_[2],
                 ms_[3]);
  }
  static bool on() {
    static const bool trace = [] {
      const char* v = std::getenv("GPUQR_SPARSE_TRACE");
      return v != nullptr && std::atoi(v) != 0;
    }();
    return trace;
  }

 private:
  static std::chrono::steady_clock::time_point now() { return std::chrono::steady_clock::now(); }
  const char* leaf_;
  std::chrono::steady_clock::time_point t_;
  double ms_[4] = {0, 0, 0, 0};
};

// ---- the plan and its upload ----------------------------------------------------------------

/// What a kernel reads of the plan (device memory).
template <class Desc>
struct Plan {
  const Desc* tasks;          // the descriptors with work, in the call's order
  const std::int64_t* start;  // tasks + 1 item offsets
  const std::int64_t* first;  // blocks + 1: each block's first task
  std::int64_t items;
};

/// Pinned host buffers the plans are copied from, per device, used in turn. From pageable
/// memory the runtime may wait for the stream before copying (it stages such memory itself),
/// and these leaves must not wait; from pinned memory the copy is truly asynchronous, so a
/// buffer is refilled only once its previous copy is over (an event per buffer). The host
/// thus waits only when it runs kSlots uploads ahead of the device, and buffers grow to the
/// largest plan (a growth frees the old buffer, which may wait for the device: warm-up only).
class Staging {
 public:
  struct Part {
    const void* data;
    std::size_t bytes;
  };

  /// Copies the parts, back to back, to `dst` (device memory) on `stream`.
  void upload(void* dst, const std::vector<Part>& parts, cudaStream_t stream) {
    std::size_t bytes = 0;
    for (const Part& p : parts) bytes += p.bytes;
    std::lock_guard<std::mutex> guard(lock_);
    Slot& s = slots_[next_];
    next_ = (next_ + 1) % kSlots;
    if (s.done == nullptr) GPUQR_CUDA_CHECK(cudaEventCreateWithFlags(&s.done, cudaEventDisableTiming));
    // The copy out of this buffer, kSlots uploads ago, must be over before it is refilled.
    GPUQR_CUDA_CHECK(cudaEventSynchronize(s.done));
    if (s.bytes < bytes) grow(s, bytes);
    std::size_t at = 0;
    for (const Part& p : parts) {
      if (p.bytes > 0) std::memcpy(s.host + at, p.data, p.bytes);
      at += p.bytes;
    }
    GPUQR_CUDA_CHECK(cudaMemcpyAsync(dst, s.host, bytes, cudaMemcpyHostToDevice, stream));
    GPUQR_CUDA_CHECK(cudaEventRecord(s.done, stream));
  }

 private:
  static constexpr int kSlots = 8;
  struct Slot {
    unsigned char* host = nullptr;
    std::size_t bytes = 0;
    cudaEvent_t done = nullptr;
  };

  static void grow(Slot& s, std::size_t bytes) {
    if (s.host != nullptr) GPUQR_CUDA_CHECK(cudaFreeHost(s.host));
    s.host = nullptr;
    s.bytes = 0;
    // Whole 64 KiB: plans that grow a little per call do not reallocate every time.
    constexpr std::size_t kGranule = std::size_t(1) << 16;
    const std::size_t rounded = (bytes + kGranule - 1) / kGranule * kGranule;
    void* p = nullptr;
    GPUQR_CUDA_CHECK(cudaMallocHost(&p, rounded));
    s.host = static_cast<unsigned char*>(p);
    s.bytes = rounded;
  }

  std::mutex lock_;
  Slot slots_[kSlots];
  int next_ = 0;
};

/// The staging of `device` (made on first use, kept for the life of the process: never
/// destroyed, so no teardown-order issues with the CUDA runtime).
Staging& staging_for(int device) {
  static std::mutex lock;
  static auto* all = new std::map<int, Staging*>();
  std::lock_guard<std::mutex> guard(lock);
  Staging*& s = (*all)[device];
  if (s == nullptr) s = new Staging();
  return *s;
}

/// Uploads the plan of `tasks` split as `s` into the leaf workspace, on the context's stream.
template <class Desc>
Plan<Desc> upload_plan(detail::ContextImpl& ctx, const std::vector<Desc>& tasks,
                       const split::WorkSplit& s) {
  static_assert(sizeof(Desc) % sizeof(std::int64_t) == 0, "the starts follow the descriptors");
  std::vector<Desc> kept;
  kept.reserve(s.kept.size());
  for (const std::int64_t i : s.kept) kept.push_back(tasks[static_cast<std::size_t>(i)]);
  const std::vector<Staging::Part> parts = {
      {kept.data(), kept.size() * sizeof(Desc)},
      {s.start.data(), s.start.size() * sizeof(std::int64_t)},
      {s.first.data(), s.first.size() * sizeof(std::int64_t)}};
  std::size_t bytes = 0;
  for (const Staging::Part& p : parts) bytes += p.bytes;
  auto* base = static_cast<unsigned char*>(
      detail::cuda_workspace(ctx, bytes, detail::ContextImpl::kLeafWorkspace));
  staging_for(ctx.device).upload(base, parts, ctx.stream);
  const auto* start = reinterpret_cast<const std::int64_t*>(base + parts[0].bytes);
  return Plan<Desc>{reinterpret_cast<const Desc*>(base), start, start + s.start.size(),
                    s.items()};
}

/// The grid of a split: a block per `per_block` items (the split's blocks).
unsigned grid_of(const split::WorkSplit& s, const char* leaf) {
  if (s.blocks() > INT_MAX) {
    GPUQR_THROW(InvalidArgument, std::string(leaf) + ": " + std::to_string(s.items()) +
                                     " items of work are more than one launch's grid holds");
  }
  return static_cast<unsigned>(s.blocks());
}

// ---- device side ----------------------------------------------------------------------------

/// Loads the starts of the tasks this block meets (first[b] .. first[b + 1], at most
/// per_block + 1 of them: every kept task has an item) into `window`; returns their count and
/// the first's index in `lo`.
template <class Desc>
__device__ int load_window(const Plan<Desc>& plan, std::int64_t* window, std::int64_t& lo) {
  lo = plan.first[blockIdx.x];
  const int n = static_cast<int>(plan.first[blockIdx.x + 1] - lo) + 1;
  for (int i = threadIdx.x; i < n; i += kThreads) window[i] = plan.start[lo + i];
  __syncthreads();
  return n;
}

/// The window position of item x's task (no search when the block meets one task).
__device__ __forceinline__ int window_owner(const std::int64_t* window, int n, std::int64_t x) {
  return n == 1 ? 0 : static_cast<int>(split::owner(window, 0, n - 1, x));
}

template <class T>
struct SArgs {
  T* arena;
  const T* a_values;
  const std::int64_t* s_row;
  const std::int64_t* s_col;
  const std::int64_t* s_value;
  const T* b;
  std::int64_t ldb, k;
  const std::int64_t* b_dst;
  const std::int64_t* b_src;
};

/// Item u of one S-Assembly task: its tuples first (consecutive threads read s_row, s_col,
/// s_value contiguously), then the carried right-hand sides column by column (consecutive
/// threads walk down b_dst and b_src).
template <class T>
__device__ __forceinline__ void s_assemble_item(const SArgs<T>& a, const SAssemblyDesc& d,
                                                std::int64_t u) {
  const std::int64_t tuples = d.t1 - d.t0;
  if (u < tuples) {
    const std::int64_t t = d.t0 + u;
    a.arena[d.front + a.s_row[t] + a.s_col[t] * d.ld] = a.a_values[a.s_value[t]];
    return;
  }
  const std::int64_t rows = d.b1 - d.b0, v = u - tuples;
  const std::int64_t q = d.b0 + v % rows, j = v / rows;
  a.arena[d.front + a.b_dst[q] + (d.ncols + j) * d.ld] = a.b[a.b_src[q] + j * a.ldb];
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    s_assembly_kernel(SArgs<T> args, Plan<SAssemblyDesc> plan) {
  __shared__ std::int64_t window[kItemsPerBlock + 1];
  std::int64_t lo = 0;
  const int n = load_window(plan, window, lo);
  const std::int64_t x0 = std::int64_t{blockIdx.x} * kItemsPerBlock;
#pragma unroll
  for (int it = 0; it < kItemsPerThread; ++it) {
    const std::int64_t x = x0 + it * kThreads + threadIdx.x;
    if (x < plan.items) {
      const int w = window_owner(window, n, x);
      s_assemble_item(args, plan.tasks[lo + w], x - window[w]);
    }
  }
}

template <class T>
struct PackArgs {
  T* arena;
  const std::int64_t* pack_row;
  const std::int64_t* pack_col;
  std::int64_t k;
};

/// One warp tile: rows 32 i + lane, virtual columns 16 c + j (split::pack_moves). A lane's
/// Rimap entry is loaded once for all 16 columns (a register is the best staging there is);
/// lane j < 16 looks up column j's destination and shuffles it to the others. All 16 loads
/// are issued before the stores, so each lane has 16 reads in flight.
template <class T>
__device__ void pack_tile(const PackArgs<T>& a, const PackDesc& d, std::int64_t i,
                          std::int64_t c, int lane) {
  const std::int64_t r = i * split::kPackTileRows + lane;
  const std::int64_t v0 = c * kTileCols;
  std::int64_t my_col = 0;
  if (lane < kTileCols) {
    const std::int64_t v = v0 + lane;
    if (v < d.cb_cols) {
      my_col = a.pack_col[d.col_map + v];
    } else if (v < d.cb_cols + a.k) {
      my_col = d.dncols + (v - d.cb_cols);
    }
  }
  unsigned moves = 0;
#pragma unroll
  for (int j = 0; j < kTileCols; ++j)
    if (split::pack_moves(d, a.k, r, v0 + j)) moves |= 1u << j;
  const std::int64_t row = moves != 0 ? a.pack_row[d.row_map + r] : 0;
  const std::int64_t src = d.src + d.r0 + r + (d.c0 + v0) * d.sld;
  T value[kTileCols];
#pragma unroll
  for (int j = 0; j < kTileCols; ++j)
    value[j] = (moves >> j & 1u) != 0 ? a.arena[src + j * d.sld] : T(0);
#pragma unroll
  for (int j = 0; j < kTileCols; ++j) {
    const std::int64_t col = __shfl_sync(0xffffffffu, my_col, j);
    if ((moves >> j & 1u) != 0) a.arena[d.dst + row + col * d.dld] = value[j];
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    pack_assembly_kernel(PackArgs<T> args, Plan<PackDesc> plan) {
  __shared__ std::int64_t window[kTilesPerBlock + 1];
  std::int64_t lo = 0;
  const int n = load_window(plan, window, lo);
  const std::int64_t g = std::int64_t{blockIdx.x} * kTilesPerBlock + threadIdx.x / 32;
  if (g >= plan.items) return;  // the whole warp: the tile loop's shuffles need every lane
  const int w = window_owner(window, n, g);
  const PackDesc d = plan.tasks[lo + w];
  std::int64_t i = 0, c = 0;
  split::pack_tiling(d, args.k).locate(g - window[w], i, c);
  pack_tile(args, d, i, c, static_cast<int>(threadIdx.x % 32));
}

/// |d| <= tol or d not finite (so NaN, which fails every comparison, counts as small).
template <class T>
__device__ __forceinline__ bool small_diagonal(T d, double tol) {
  return fabs(double(d)) <= tol || !isfinite(d);
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    small_diagonals_kernel(const T* arena, double tol, Plan<DiagDesc> plan,
                           unsigned long long* count) {
  __shared__ std::int64_t window[kItemsPerBlock + 1];
  std::int64_t lo = 0;
  const int n = load_window(plan, window, lo);
  const std::int64_t x0 = std::int64_t{blockIdx.x} * kItemsPerBlock;
  int small = 0;
  // Every thread runs every round: __syncthreads_count is the block's reduction.
#pragma unroll
  for (int it = 0; it < kItemsPerThread; ++it) {
    const std::int64_t x = x0 + it * kThreads + threadIdx.x;
    bool is_small = false;
    if (x < plan.items) {
      const int w = window_owner(window, n, x);
      const DiagDesc& d = plan.tasks[lo + w];
      const std::int64_t j = x - window[w];
      is_small = small_diagonal(arena[d.front + j * (d.ld + 1)], tol);
    }
    small += __syncthreads_count(is_small);
  }
  if (threadIdx.x == 0 && small > 0) atomicAdd(count, static_cast<unsigned long long>(small));
}

/// R's rows of one front by 32 x 32 tiles: row tile i (rows from 32 i) reaches columns from
/// 32 i on, so it has col_tiles - i tiles; the tiles are numbered row tile after row tile.
struct RPackTiling {
  std::int64_t row_tiles = 0, col_tiles = 0;
  __host__ __device__ std::int64_t tiles_before(std::int64_t i) const {
    return i * col_tiles - i * (i - 1) / 2;
  }
  __host__ __device__ std::int64_t tiles() const { return tiles_before(row_tiles); }
  /// Tile l as (row tile i, column tile c), by bisection over the row tiles.
  __device__ void locate(std::int64_t l, std::int64_t& i, std::int64_t& c) const {
    std::int64_t lo = 0, hi = row_tiles - 1;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo + 1) / 2;
      if (tiles_before(mid) <= l) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    i = lo;
    c = i + (l - tiles_before(i));
  }
};

__host__ __device__ inline RPackTiling r_pack_tiling(const RPackDesc& d) {
  constexpr std::int64_t kTile = 32;
  RPackTiling t;
  if (d.rows > 0 && d.ncols > 0) {
    t.row_tiles = (d.rows + kTile - 1) / kTile;
    t.col_tiles = (d.ncols + kTile - 1) / kTile;
  }
  return t;
}

/// One 32 x 32 tile per block, through shared memory: read down the front's columns (lanes
/// along rows, coalesced), written along the packed rows (lanes along columns, coalesced).
template <class T>
__global__ void __launch_bounds__(kThreads)
    pack_r_rows_kernel(const T* __restrict__ arena, T* __restrict__ packed, Plan<RPackDesc> plan) {
  __shared__ std::int64_t window[2];
  __shared__ T tile[32][33];
  std::int64_t lo = 0;
  const int n = load_window(plan, window, lo);
  const std::int64_t g = blockIdx.x;
  const int w = window_owner(window, n, g);
  const RPackDesc d = plan.tasks[lo + w];
  std::int64_t ti = 0, tc = 0;
  r_pack_tiling(d).locate(g - window[w], ti, tc);
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  const std::int64_t r0 = ti * 32, c0 = tc * 32;
#pragma unroll
  for (int q = 0; q < 32 / kWarps; ++q) {
    const int cc = warp + q * kWarps;
    const std::int64_t r = r0 + lane, t = c0 + cc;
    if (r < d.rows && t < d.ncols && t >= r) tile[lane][cc] = arena[d.src + r + t * d.ld];
  }
  __syncthreads();
#pragma unroll
  for (int q = 0; q < 32 / kWarps; ++q) {
    const int rr = warp + q * kWarps;
    const std::int64_t r = r0 + rr, t = c0 + lane;
    if (r < d.rows && t < d.ncols && t >= r)
      packed[d.dst + detail::r_pack_offset(r, d.ncols) + (t - r)] = tile[rr][lane];
  }
}

}  // namespace

template <class T>
void sparse_pack_r_rows(detail::ContextImpl& ctx, const T* arena,
                        const std::vector<detail::RPackDesc>& tasks, T* packed) {
  std::vector<std::int64_t> sizes(tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) sizes[i] = r_pack_tiling(tasks[i]).tiles();
  const split::WorkSplit s = split::split_work(sizes, 1);
  if (s.items() == 0) return;
  const unsigned blocks = grid_of(s, "sparse_pack_r_rows");
  DeviceGuard guard(ctx.device);
  const Plan<RPackDesc> plan = upload_plan(ctx, tasks, s);
  pack_r_rows_kernel<T><<<blocks, kThreads, 0, ctx.stream>>>(arena, packed, plan);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

template <class T>
void sparse_copy_to_host(detail::ContextImpl& ctx, T* host, const T* src, std::int64_t n) {
  if (n <= 0) return;
  DeviceGuard guard(ctx.device);
  // Split at pinned::kChunk boundaries of the host address: a block of the pinned pool is
  // registered piece by piece, and a copy must stay within one registration to be
  // asynchronous (for other host memory the split changes nothing).
  auto* dst = reinterpret_cast<unsigned char*>(host);
  const auto* from = reinterpret_cast<const unsigned char*>(src);
  std::size_t left = static_cast<std::size_t>(n) * sizeof(T);
  while (left > 0) {
    const std::size_t to_boundary =
        pinned::kChunk - reinterpret_cast<std::uintptr_t>(dst) % pinned::kChunk;
    const std::size_t len = std::min(left, to_boundary);
    GPUQR_CUDA_CHECK(cudaMemcpyAsync(dst, from, len, cudaMemcpyDeviceToHost, ctx.stream));
    dst += len;
    from += len;
    left -= len;
  }
}

template <class T>
void sparse_copy_block_to_host(detail::ContextImpl& ctx, T* host, std::int64_t ldh, const T* src,
                               std::int64_t lds, std::int64_t rows, std::int64_t cols) {
  if (rows <= 0 || cols <= 0) return;
  DeviceGuard guard(ctx.device);
  // As sparse_copy_to_host, no copy may cross a pinned::kChunk boundary of the host
  // address: runs of columns that stay within one piece go as one 2-D copy, a column that
  // crosses a boundary by the 1-D copy (which splits it).
  const std::size_t col_bytes = static_cast<std::size_t>(rows) * sizeof(T);
  auto piece = [](const T* p) { return reinterpret_cast<std::uintptr_t>(p) / pinned::kChunk; };
  auto crosses = [&](std::int64_t j) {
    const T* first = host + j * ldh;
    return piece(first) != piece(first + rows - 1);
  };
  std::int64_t j0 = 0;
  while (j0 < cols) {
    if (crosses(j0)) {
      sparse_copy_to_host<T>(ctx, host + j0 * ldh, src + j0 * lds, rows);
      ++j0;
      continue;
    }
    std::int64_t j1 = j0 + 1;
    while (j1 < cols && !crosses(j1) && piece(host + j1 * ldh) == piece(host + j0 * ldh)) ++j1;
    GPUQR_CUDA_CHECK(cudaMemcpy2DAsync(host + j0 * ldh, static_cast<std::size_t>(ldh) * sizeof(T),
                                       src + j0 * lds, static_cast<std::size_t>(lds) * sizeof(T),
                                       col_bytes, static_cast<std::size_t>(j1 - j0),
                                       cudaMemcpyDeviceToHost, ctx.stream));
    j0 = j1;
  }
}

void* sparse_host_alloc(detail::ContextImpl& ctx, std::size_t bytes) {
  if (bytes == 0) return nullptr;
  DeviceGuard guard(ctx.device);
  return pinned::acquire(bytes);
}

void sparse_host_free(detail::ContextImpl&, void* p) noexcept { pinned::release(p); }

template <class T>
void sparse_s_assembly(detail::ContextImpl& ctx, T* arena, const T* a_values,
                       const std::int64_t* s_row, const std::int64_t* s_col,
                       const std::int64_t* s_value, const T* b, std::int64_t ldb, std::int64_t k,
                       const std::int64_t* b_dst, const std::int64_t* b_src,
                       const std::vector<detail::SAssemblyDesc>& tasks) {
  LeafTrace trace("s_assembly");
  std::vector<std::int64_t> sizes(tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const SAssemblyDesc& d = tasks[i];
    sizes[i] = std::max<std::int64_t>(d.t1 - d.t0, 0) +
               (k > 0 ? std::max<std::int64_t>(d.b1 - d.b0, 0) * k : 0);
  }
  const split::WorkSplit s = split::split_work(sizes, kItemsPerBlock);
  if (s.items() == 0) return;
  const unsigned blocks = grid_of(s, "sparse_s_assembly");
  trace.lap(0);
  DeviceGuard guard(ctx.device);
  const Plan<SAssemblyDesc> plan = upload_plan(ctx, tasks, s);
  trace.lap(1);
  const SArgs<T> args{arena, a_values, s_row, s_col, s_value, b, ldb, k, b_dst, b_src};
  s_assembly_kernel<T><<<blocks, kThreads, 0, ctx.stream>>>(args, plan);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  trace.lap(2);
  trace.report(ctx.stream, tasks.size(), s.items(), blocks);
}

template <class T>
void sparse_pack_assembly(detail::ContextImpl& ctx, T* arena, const std::int64_t* pack_row,
                          const std::int64_t* pack_col, std::int64_t k,
                          const std::vector<detail::PackDesc>& tasks) {
  LeafTrace trace("pack_assembly");
  std::vector<std::int64_t> sizes(tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) sizes[i] = split::pack_tiling(tasks[i], k).tiles();
  const split::WorkSplit s = split::split_work(sizes, kTilesPerBlock);
  if (s.items() == 0) return;
  const unsigned blocks = grid_of(s, "sparse_pack_assembly");
  trace.lap(0);
  DeviceGuard guard(ctx.device);
  const Plan<PackDesc> plan = upload_plan(ctx, tasks, s);
  trace.lap(1);
  pack_assembly_kernel<T><<<blocks, kThreads, 0, ctx.stream>>>(
      PackArgs<T>{arena, pack_row, pack_col, k}, plan);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  trace.lap(2);
  trace.report(ctx.stream, tasks.size(), s.items(), blocks);
}

template <class T>
void sparse_count_small_diagonals(detail::ContextImpl& ctx, const T* arena, double tol,
                                  const std::vector<detail::DiagDesc>& tasks,
                                  std::int64_t* count) {
  std::vector<std::int64_t> sizes(tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) sizes[i] = tasks[i].count;
  const split::WorkSplit s = split::split_work(sizes, kItemsPerBlock);
  if (s.items() == 0) return;
  const unsigned blocks = grid_of(s, "sparse_count_small_diagonals");
  DeviceGuard guard(ctx.device);
  const Plan<DiagDesc> plan = upload_plan(ctx, tasks, s);
  // Adding a count in two's complement is the same on the unsigned view of the int64.
  small_diagonals_kernel<T><<<blocks, kThreads, 0, ctx.stream>>>(
      arena, tol, plan, reinterpret_cast<unsigned long long*>(count));
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

GPUQR_INSTANTIATE_SPARSE_KERNELS(float)
GPUQR_INSTANTIATE_SPARSE_KERNELS(double)

}  // namespace gpuqr::kernels::cuda
