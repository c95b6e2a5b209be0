// CUDA backend of the row-deletion leaves (src/core/update_kernels.hpp): gathers and moves of
// rows and columns, the Givens angles of a deletion (one thread block, a skewed wavefront:
// the rotations of one removed row are a dependent chain, row r runs one step behind row r-1;
// each row's pivots are split into segments of kSegment held in registers by one thread
// each), their application to Q, R and d (one launch per target: each thread owns a line and
// applies every rotation of the deletion to it, keeping RB pivots in registers), and their
// accumulation into the orthogonal matrices of blocks of positions (one launch for many
// blocks). All work is enqueued on the context's stream; nothing here synchronizes or
// allocates.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "src/core/update_kernels.hpp"
#include "src/cuda/check.hpp"

namespace gpuqr::kernels::cuda {
namespace {

using cuda_detail::DeviceGuard;

constexpr int kThreads = 256;
constexpr int kLineThreads = 64;  // apply: small blocks spread the lines over every SM
constexpr int kPivots = 32;       // RB: pivots per pass held in registers
constexpr int kJTile = 32;        // rotations staged in shared memory per tile of positions
constexpr int kSegment = 32;      // deletion angles: pivots of one row held by one thread
constexpr int kSegmentedMaxThreads = 512;  // keeps 128 registers per thread for the pivots
constexpr std::size_t kMaxAngleSharedBytes = 227 * 1024;  // Hopper's opt-in maximum, per launch below

dim3 grid_for(std::int64_t count) {
  const std::int64_t blocks = std::min<std::int64_t>((count + kThreads - 1) / kThreads, 1 << 20);
  return dim3(static_cast<unsigned>(std::max<std::int64_t>(blocks, 1)));
}

template <class T>
__device__ __forceinline__ void rotate(T c, T s, T& x, T& y) {
  const T xx = x, yy = y;
  x = c * xx - s * yy;
  y = s * xx + c * yy;
}

template <class T>
__global__ void gather_rows_kernel(const T* src, std::int64_t lds, const std::int64_t* rows,
                                   std::int64_t p, std::int64_t col0, std::int64_t nc,
                                   bool transpose, T* dst, std::int64_t ldd) {
  const std::int64_t total = p * nc;
  for (std::int64_t idx = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; idx < total;
       idx += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t i = idx % p, c = idx / p;
    const T value = src[rows[i] + (col0 + c) * lds];
    if (transpose) dst[c + i * ldd] = value; else dst[i + c * ldd] = value;
  }
}

template <class T>
__global__ void move_lines_kernel(T* a, std::int64_t lda, std::int64_t extent,
                                  const std::int64_t* from, const std::int64_t* to,
                                  std::int64_t count, bool rows) {
  const std::int64_t total = count * extent;
  for (std::int64_t idx = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; idx < total;
       idx += std::int64_t(gridDim.x) * blockDim.x) {
    if (rows) {  // extent: columns; consecutive threads take consecutive moved rows
      const std::int64_t i = idx % count, c = idx / count;
      a[to[i] + c * lda] = a[from[i] + c * lda];
    } else {     // extent: rows; consecutive threads walk down a column
      const std::int64_t r = idx % extent, i = idx / extent;
      a[r + to[i] * lda] = a[r + from[i] * lda];
    }
  }
}

template <class T>
__global__ void transpose_kernel(const T* src, std::int64_t lds, std::int64_t rows,
                                 std::int64_t cols, T* dst, std::int64_t ldd) {
  __shared__ T tile[32][33];
  for (std::int64_t bj = blockIdx.y * 32; bj < cols; bj += std::int64_t(gridDim.y) * 32)
    for (std::int64_t bi = blockIdx.x * 32; bi < rows; bi += std::int64_t(gridDim.x) * 32) {
      for (int k = threadIdx.y; k < 32; k += blockDim.y) {
        const std::int64_t i = bi + threadIdx.x, j = bj + k;
        if (i < rows && j < cols) tile[k][threadIdx.x] = src[i + j * lds];
      }
      __syncthreads();
      for (int k = threadIdx.y; k < 32; k += blockDim.y) {
        const std::int64_t j = bj + threadIdx.x, i = bi + k;
        if (i < rows && j < cols) dst[j + i * ldd] = tile[threadIdx.x][k];
      }
      __syncthreads();
    }
}

/// The deletion's rotations. Thread r owns removed row r: its pivots for rows 0..r live in
/// shared memory (a packed lower triangle), and it meets position j at step (n-1-j) + r, one
/// step after thread r-1 produced rotation (j, r-1): every rotation it needs was written to
/// the shared-memory ring (and to c and s, the output) before an earlier barrier.
template <class T>
__global__ void deletion_rotations_kernel(const T* z, std::int64_t ldz, std::int64_t n, int p,
                                          T* __restrict__ c, std::int64_t ldc,
                                          T* __restrict__ s, std::int64_t lds) {
  // Thread r owns removed row r; at step t it takes position j = n - 1 - (t - r) (a skewed
  // wavefront). Row r first applies the rotations (j, q), q < r, that rows q computed at steps
  // t - (r - q), then computes its own. Those come from a ring in shared memory (the last p
  // steps of every row), not from global memory: the loads then overlap, and the chain per
  // step is the r rotations' arithmetic only. Ring slot (q, t mod p) is rewritten at step
  // t + p, after every reader (lag <= p - 1) passed step t + p - 1's barrier.
  extern __shared__ unsigned char shared_bytes[];
  T* pivots = reinterpret_cast<T*>(shared_bytes);
  T* ring_c = pivots + (p * (p + 1)) / 2;  // [q * p + slot]
  T* ring_s = ring_c + p * p;
  const int r = threadIdx.x;
  T* mine = pivots + (r * (r + 1)) / 2;
  if (r < p)
    for (int q = 0; q <= r; ++q) mine[q] = z[r + (n + q) * ldz];
  __syncthreads();
  // Ring slots in int arithmetic, advanced by one per step (no 64-bit remainder in the loop):
  // own = step mod p, base = (step - r) mod p; row q's rotation for this position sits in
  // slot (base + q) mod p, taken as base + q below p and base + q - p past it.
  int own = 0, base = (p - r) % p;
  for (std::int64_t step = 0; step < n + p - 1; ++step) {
    const std::int64_t j = n - 1 - (step - r);
    if (r < p && j >= 0 && j < n) {
      T x = z[r + j * ldz];
      const int split = min(r, p - base);
      const T* rc = ring_c + base;
      const T* rs = ring_s + base;
#pragma unroll 4
      for (int q = 0; q < split; ++q) rotate(rc[q * (p + 1)], rs[q * (p + 1)], x, mine[q]);
      rc -= p;
      rs -= p;
#pragma unroll 4
      for (int q = split; q < r; ++q) rotate(rc[q * (p + 1)], rs[q * (p + 1)], x, mine[q]);
      const T y = mine[r];
      const T rho = hypot(x, y);
      const T cr = rho == T(0) ? T(1) : y / rho;
      const T sr = rho == T(0) ? T(0) : x / rho;
      c[j + r * ldc] = cr;
      s[j + r * lds] = sr;
      ring_c[r * p + own] = cr;
      ring_s[r * p + own] = sr;
      mine[r] = rho;
    }
    if (++own == p) own = 0;
    if (++base == p) base = 0;
    __syncthreads();
  }
}

/// Threads of one segment (the rows r >= g * kSegment of segment g), whole warps.
__host__ __device__ inline int segment_threads(int p, int g) {
  return (p - g * kSegment + 31) / 32 * 32;
}

/// The deletion's rotations, with each row's pivots in registers: thread (r, g) holds pivots
/// q = g * kSegment .. of row r (g = 0 .. r / kSegment) and meets position j at step
/// (n - 1 - j) + r + g. It takes x = z(r, j) (g = 0, loaded a step ahead) or x as thread
/// (r, g - 1) left it one step earlier, applies rotations (j, q) of its segment in order, and
/// either hands x on (its segment is full) or, holding pivot r, computes rotation (j, r). The
/// chain per step is at most kSegment rotations (the one-thread-per-row wavefront above runs r
/// per step with its pivots in shared memory, whose loads and stores serialise the chain).
/// Rotation (j, q) is made at step (n - 1 - j) + q + q / kSegment and read by rows r > q of
/// segment q / kSegment at step (n - 1 - j) + r + q / kSegment: 1 .. p - 1 steps later, so a
/// ring of p positions per q (slot j mod p) is rewritten only after every read, with a
/// barrier between. x hand-offs alternate between two buffers by step parity.
template <class T>
__global__ void __launch_bounds__(kSegmentedMaxThreads)
deletion_rotations_segmented_kernel(const T* __restrict__ z, std::int64_t ldz, std::int64_t n,
                                    int p, T* __restrict__ c, std::int64_t ldc,
                                    T* __restrict__ s, std::int64_t lds) {
  extern __shared__ unsigned char shared_bytes[];
  const int segments = (p + kSegment - 1) / kSegment;
  T* ring_c = reinterpret_cast<T*>(shared_bytes);  // [q * p + slot]
  T* ring_s = ring_c + p * p;
  T* hand = ring_s + p * p;                        // [(parity * segments + g) * p + r]
  int g = 0, r = threadIdx.x;
  while (g < segments && r >= segment_threads(p, g)) r -= segment_threads(p, g++);
  r += g * kSegment;
  const bool live = g < segments && r < p;
  const int lo = g * kSegment;
  const bool diagonal = live && r / kSegment == g;  // holds pivot r: makes rotation (., r)
  const int count = diagonal ? r - lo : kSegment;   // rotations applied before that
  T a[kSegment];
#pragma unroll
  for (int k = 0; k < kSegment; ++k)
    a[k] = live && lo + k <= r ? z[r + (n + lo + k) * ldz] : T(0);
  // Position j at this step, and its ring slot j mod p, both moved by one per step.
  std::int64_t j = n - 1 + r + g;
  int slot = static_cast<int>(j % p);
  T x_next = live && g == 0 && j < n ? z[r + j * ldz] : T(0);
  const std::int64_t steps = n + p - 1 + (p - 1) / kSegment;
  for (std::int64_t step = 0; step < steps; ++step) {
    T x = T(0);
    if (live && g == 0) {
      x = x_next;
      // The next step's entry, loaded now so that its latency hides behind this step.
      if (j >= 1 && j - 1 < n) x_next = z[r + (j - 1) * ldz];
    }
    if (live && j >= 0 && j < n) {
      if (g > 0) x = hand[(((step + 1) & 1) * segments + g - 1) * p + r];
      const T* rc = ring_c + lo * p + slot;
      const T* rs = ring_s + lo * p + slot;
      T y = T(0);
#pragma unroll
      for (int k = 0; k < kSegment; ++k) {
        if (k < count) rotate(rc[k * p], rs[k * p], x, a[k]);
        if (k == count) y = a[k];  // the pivot (diagonal threads only: count < kSegment)
      }
      if (diagonal) {
        const T rho = hypot(x, y);
        const T cr = rho == T(0) ? T(1) : y / rho;
        const T sr = rho == T(0) ? T(0) : x / rho;
        c[j + r * ldc] = cr;
        s[j + r * lds] = sr;
        ring_c[r * p + slot] = cr;
        ring_s[r * p + slot] = sr;
#pragma unroll
        for (int k = 0; k < kSegment; ++k)
          if (k == count) a[k] = rho;
      } else {
        hand[((step & 1) * segments + g) * p + r] = x;
      }
    }
    --j;
    if (--slot < 0) slot = p - 1;
    __syncthreads();  // this step's rotations and hand-offs are read at the next steps
  }
}

/// Threads of deletion_rotations_segmented_kernel for p rows.
int segmented_threads(int p) {
  int total = 0;
  for (int g = 0; g * kSegment < p; ++g) total += segment_threads(p, g);
  return total;
}

/// Applies the deletion's rotations to `lines` lines of x: element (line, j) at
/// x[line * x_line + j * x_pos], pivots likewise in acc (null: zeros). Pivots go in passes of
/// kPivots held in registers; per pass the positions run from the top down in tiles whose
/// rotations are staged in shared memory (padding rotations are the identity). `identity`:
/// the lines start as the rows of the identity of order n + p (line i: x's position i when
/// i < n, else pivot i - n), written here; such a line i < n holds zeros beyond position i,
/// which the rotations keep, so it is treated as triangular.
template <class T>
__device__ void apply_rotations_lines(const T* c, std::int64_t ldc, const T* s,
                                      std::int64_t lds, std::int64_t n, int p, T* x,
                                      std::int64_t x_line, std::int64_t x_pos, T* acc,
                                      std::int64_t a_line, std::int64_t a_pos,
                                      std::int64_t lines, bool triangular, bool identity) {
  __shared__ T sc[kJTile][kPivots];
  __shared__ T ss[kJTile][kPivots];
  const std::int64_t first = blockIdx.x * std::int64_t(blockDim.x);
  const std::int64_t line = first + threadIdx.x;
  const bool active = line < lines;
  if (identity && active) {
    for (std::int64_t j = 0; j < n; ++j) x[line * x_line + j * x_pos] = T(line == j ? 1 : 0);
    for (int q = 0; q < p; ++q) acc[line * a_line + q * a_pos] = T(line == n + q ? 1 : 0);
  }
  triangular = triangular || identity;
  const std::int64_t block_top =
      triangular ? std::min<std::int64_t>(n - 1, first + blockDim.x - 1) : n - 1;
  const std::int64_t my_top = triangular ? std::min<std::int64_t>(n - 1, line) : n - 1;
  for (int r0 = 0; r0 < p; r0 += kPivots) {
    const int rb = min(kPivots, p - r0);
    T a[kPivots];
#pragma unroll
    for (int q = 0; q < kPivots; ++q)
      a[q] = (active && acc != nullptr && q < rb) ? acc[line * a_line + (r0 + q) * a_pos] : T(0);
    for (std::int64_t jt = block_top; jt >= 0; jt -= kJTile) {
      const int jn = static_cast<int>(std::min<std::int64_t>(kJTile, jt + 1));
      __syncthreads();  // the previous tile's rotations are no longer read
      for (int idx = threadIdx.x; idx < kJTile * kPivots; idx += blockDim.x) {
        const int jj = idx % kJTile, q = idx / kJTile;
        const bool real = jj < jn && q < rb;
        const std::int64_t j = jt - jj;
        sc[jj][q] = real ? c[j + (r0 + q) * ldc] : T(1);
        ss[jj][q] = real ? s[j + (r0 + q) * lds] : T(0);
      }
      __syncthreads();
      if (!active) continue;
      for (int jj = 0; jj < jn; ++jj) {
        const std::int64_t j = jt - jj;
        if (j > my_top) continue;
        T xj = x[line * x_line + j * x_pos];
#pragma unroll
        for (int q = 0; q < kPivots; ++q) rotate(sc[jj][q], ss[jj][q], xj, a[q]);
        x[line * x_line + j * x_pos] = xj;
      }
    }
    if (active && acc != nullptr) {
#pragma unroll
      for (int q = 0; q < kPivots; ++q)
        if (q < rb) acc[line * a_line + (r0 + q) * a_pos] = a[q];
    }
  }
}

template <class T>
__global__ void __launch_bounds__(kLineThreads)
apply_rotations_kernel(const T* c, std::int64_t ldc, const T* s, std::int64_t lds,
                       std::int64_t n, int p, T* x, std::int64_t x_line, std::int64_t x_pos,
                       T* acc, std::int64_t a_line, std::int64_t a_pos, std::int64_t lines,
                       bool triangular) {
  apply_rotations_lines(c, ldc, s, lds, n, p, x, x_line, x_pos, acc, a_line, a_pos, lines,
                        triangular, false);
}

/// One G per blockIdx.y: block b covers positions [j0, j1), j1 = n - b nb, j0 = max(0, j1 - nb)
/// (w = j1 - j0), and G_b ((w + p) x (w + p), leading dimension nb + p) starts at column
/// b (nb + p) of g. The blocks are independent: every G of the launch is built at once.
template <class T>
__global__ void __launch_bounds__(kLineThreads)
accumulate_rotations_kernel(const T* c, std::int64_t ldc, const T* s, std::int64_t lds,
                            std::int64_t n, int p, std::int64_t nb, T* g, std::int64_t ldg) {
  const std::int64_t j1 = n - blockIdx.y * nb, j0 = j1 - nb > 0 ? j1 - nb : 0, w = j1 - j0;
  T* gb = g + blockIdx.y * (nb + p) * ldg;
  // Lines are G's rows: consecutive threads take consecutive rows (lines_are_rows).
  apply_rotations_lines(c + j0, ldc, s + j0, lds, w, p, gb, 1, ldg, gb + w * ldg, 1, ldg,
                        w + p, false, true);
}

}  // namespace

template <class T>
void gather_rows(detail::ContextImpl& ctx, MatrixView<const T> src,
                 VectorView<const std::int64_t> rows, std::int64_t col0, bool transpose,
                 MatrixView<T> dst) {
  const std::int64_t p = rows.size(), nc = transpose ? dst.rows() : dst.cols();
  if (p == 0 || nc == 0) return;
  DeviceGuard guard(ctx.device);
  gather_rows_kernel<T><<<grid_for(p * nc), kThreads, 0, ctx.stream>>>(
      src.data(), src.ld(), rows.data(), p, col0, nc, transpose, dst.data(), dst.ld());
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

template <class T>
void move_lines(detail::ContextImpl& ctx, MatrixView<T> a, VectorView<const std::int64_t> from,
                VectorView<const std::int64_t> to, bool rows) {
  const std::int64_t count = from.size(), extent = rows ? a.cols() : a.rows();
  if (count == 0 || extent == 0) return;
  DeviceGuard guard(ctx.device);
  move_lines_kernel<T><<<grid_for(count * extent), kThreads, 0, ctx.stream>>>(
      a.data(), a.ld(), extent, from.data(), to.data(), count, rows);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

template <class T>
void transpose(detail::ContextImpl& ctx, MatrixView<const T> src, MatrixView<T> dst) {
  if (src.empty()) return;
  DeviceGuard guard(ctx.device);
  const dim3 grid(static_cast<unsigned>(std::min<std::int64_t>((src.rows() + 31) / 32, 65535)),
                  static_cast<unsigned>(std::min<std::int64_t>((src.cols() + 31) / 32, 65535)));
  transpose_kernel<T><<<grid, dim3(32, 8), 0, ctx.stream>>>(src.data(), src.ld(), src.rows(),
                                                            src.cols(), dst.data(), dst.ld());
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

/// GPUQR_REMOVE_ROTATIONS=0 selects the one-thread-per-row angle kernel (pivots in shared
/// memory) over the segmented one: a measurement knob, read per call, to be removed with that
/// kernel once the two were compared on the device.
static bool per_row_angles_forced() {
  const char* text = std::getenv("GPUQR_REMOVE_ROTATIONS");
  return text != nullptr && std::strcmp(text, "0") == 0;
}

template <class T>
void deletion_rotations(detail::ContextImpl& ctx, MatrixView<T> z, MatrixView<T> c,
                        MatrixView<T> s) {
  const std::int64_t p = z.rows(), n = z.cols() - p;
  if (p == 0 || n == 0) return;
  // Shared memory: segmented, the rings of the last p steps' rotations (c and s) and two
  // hand-off buffers per segment; per row, also the pivots (a packed triangle).
  const std::int64_t segments = (p + kSegment - 1) / kSegment;
  const std::size_t segmented_shared =
      static_cast<std::size_t>(2 * p * p + 2 * segments * p) * sizeof(T);
  const std::size_t per_row_shared =
      static_cast<std::size_t>(p * (p + 1) / 2 + 2 * p * p) * sizeof(T);
  const int segmented_count = p <= 1024 ? segmented_threads(static_cast<int>(p)) : 1 << 30;
  const bool segmented = !per_row_angles_forced() && segmented_count <= kSegmentedMaxThreads &&
                         segmented_shared <= kMaxAngleSharedBytes;
  const std::size_t shared = segmented ? segmented_shared : per_row_shared;
  if (!segmented && (p > 1024 || per_row_shared > kMaxAngleSharedBytes)) {
    GPUQR_THROW(InvalidArgument, "deletion_rotations: " + std::to_string(p) +
                                     " rows in one batch exceed the kernel's shared memory");
  }
  DeviceGuard guard(ctx.device);
  if (segmented) {
    if (shared > 48 * 1024)
      GPUQR_CUDA_CHECK(cudaFuncSetAttribute(deletion_rotations_segmented_kernel<T>,
                                            cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(shared)));
    deletion_rotations_segmented_kernel<T><<<1, segmented_count, shared, ctx.stream>>>(
        z.data(), z.ld(), n, static_cast<int>(p), c.data(), c.ld(), s.data(), s.ld());
  } else {
    const int threads = static_cast<int>((p + 31) / 32 * 32);
    if (shared > 48 * 1024)
      GPUQR_CUDA_CHECK(cudaFuncSetAttribute(deletion_rotations_kernel<T>,
                                            cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(shared)));
    deletion_rotations_kernel<T><<<1, threads, shared, ctx.stream>>>(
        z.data(), z.ld(), n, static_cast<int>(p), c.data(), c.ld(), s.data(), s.ld());
  }
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

template <class T>
void accumulate_deletion_rotations(detail::ContextImpl& ctx, MatrixView<const T> c,
                                   MatrixView<const T> s, std::int64_t nb, MatrixView<T> g) {
  const std::int64_t n = c.rows(), p = c.cols();
  if (n == 0 || p == 0) return;
  const std::int64_t blocks = (n + nb - 1) / nb;
  if (blocks > 65535) GPUQR_THROW(InvalidArgument, "accumulate_deletion_rotations: too many blocks");
  DeviceGuard guard(ctx.device);
  const dim3 grid(static_cast<unsigned>((nb + p + kLineThreads - 1) / kLineThreads),
                  static_cast<unsigned>(blocks));
  accumulate_rotations_kernel<T><<<grid, kLineThreads, 0, ctx.stream>>>(
      c.data(), c.ld(), s.data(), s.ld(), n, static_cast<int>(p), nb, g.data(), g.ld());
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

template <class T>
void apply_deletion_rotations(detail::ContextImpl& ctx, MatrixView<const T> c,
                              MatrixView<const T> s, MatrixView<T> x, MatrixView<T> acc,
                              bool lines_are_rows, bool triangular) {
  const std::int64_t n = c.rows(), p = c.cols();
  const std::int64_t lines = lines_are_rows ? x.rows() : x.cols();
  if (n == 0 || p == 0 || lines == 0) return;
  DeviceGuard guard(ctx.device);
  const std::int64_t x_line = lines_are_rows ? 1 : x.ld(), x_pos = lines_are_rows ? x.ld() : 1;
  const std::int64_t a_line = lines_are_rows ? 1 : acc.ld(), a_pos = lines_are_rows ? acc.ld() : 1;
  const std::int64_t blocks = (lines + kLineThreads - 1) / kLineThreads;
  if (blocks > 0x7fffffff) GPUQR_THROW(InvalidArgument, "apply_deletion_rotations: too many lines");
  apply_rotations_kernel<T><<<static_cast<unsigned>(blocks), kLineThreads, 0, ctx.stream>>>(
      c.data(), c.ld(), s.data(), s.ld(), n, static_cast<int>(p), x.data(), x_line, x_pos,
      acc.empty() ? nullptr : acc.data(), a_line, a_pos, lines, triangular);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

#define GPUQR_INSTANTIATE_GIVENS(T)                                                           \
  template void gather_rows<T>(detail::ContextImpl&, MatrixView<const T>,                    \
                               VectorView<const std::int64_t>, std::int64_t, bool,           \
                               MatrixView<T>);                                                \
  template void move_lines<T>(detail::ContextImpl&, MatrixView<T>,                           \
                              VectorView<const std::int64_t>, VectorView<const std::int64_t>, \
                              bool);                                                          \
  template void transpose<T>(detail::ContextImpl&, MatrixView<const T>, MatrixView<T>);      \
  template void deletion_rotations<T>(detail::ContextImpl&, MatrixView<T>, MatrixView<T>,    \
                                      MatrixView<T>);                                         \
  template void apply_deletion_rotations<T>(detail::ContextImpl&, MatrixView<const T>,       \
                                            MatrixView<const T>, MatrixView<T>,              \
                                            MatrixView<T>, bool, bool);                     \
  template void accumulate_deletion_rotations<T>(detail::ContextImpl&, MatrixView<const T>,  \
                                                 MatrixView<const T>, std::int64_t,          \
                                                 MatrixView<T>);
GPUQR_INSTANTIATE_GIVENS(float)
GPUQR_INSTANTIATE_GIVENS(double)

}  // namespace gpuqr::kernels::cuda
