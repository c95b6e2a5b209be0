// CUDA backend of the row-deletion leaves (src/core/update_kernels.hpp): gathers and moves of
// rows and columns, the Givens angles of a deletion (one thread block, a skewed wavefront:
// the rotations of one removed row are a dependent chain, row r runs r steps behind row r-1),
// and their application to Q, R and d (one launch per target: each thread owns a line and
// applies every rotation of the deletion to it, keeping RB pivots in registers). All work is
// enqueued on the context's stream; nothing here synchronizes or allocates.
#include <cuda_runtime.h>

#include <algorithm>

#include "src/core/update_kernels.hpp"
#include "src/cuda/check.hpp"

namespace gpuqr::kernels::cuda {
namespace {

using cuda_detail::DeviceGuard;

constexpr int kThreads = 256;
constexpr int kLineThreads = 64;  // apply: small blocks spread the lines over every SM
constexpr int kPivots = 32;       // RB: pivots per pass held in registers
constexpr int kJTile = 32;        // rotations staged in shared memory per tile of positions
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

/// Applies the deletion's rotations to `lines` lines of x: element (line, j) at
/// x[line * x_line + j * x_pos], pivots likewise in acc (null: zeros). Pivots go in passes of
/// kPivots held in registers; per pass the positions run from the top down in tiles whose
/// rotations are staged in shared memory (padding rotations are the identity).
template <class T>
__global__ void __launch_bounds__(kLineThreads)
apply_rotations_kernel(const T* c, std::int64_t ldc, const T* s, std::int64_t lds,
                       std::int64_t n, int p, T* x, std::int64_t x_line, std::int64_t x_pos,
                       T* acc, std::int64_t a_line, std::int64_t a_pos, std::int64_t lines,
                       bool triangular) {
  __shared__ T sc[kJTile][kPivots];
  __shared__ T ss[kJTile][kPivots];
  const std::int64_t first = blockIdx.x * std::int64_t(blockDim.x);
  const std::int64_t line = first + threadIdx.x;
  const bool active = line < lines;
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

template <class T>
void deletion_rotations(detail::ContextImpl& ctx, MatrixView<T> z, MatrixView<T> c,
                        MatrixView<T> s) {
  const std::int64_t p = z.rows(), n = z.cols() - p;
  if (p == 0 || n == 0) return;
  // The pivots (a triangle) and the ring of the last p steps' rotations (c and s).
  const std::size_t shared =
      static_cast<std::size_t>(p * (p + 1) / 2 + 2 * p * p) * sizeof(T);
  if (p > 1024 || shared > kMaxAngleSharedBytes) {
    GPUQR_THROW(InvalidArgument, "deletion_rotations: " + std::to_string(p) +
                                     " rows in one batch exceed the kernel's shared memory");
  }
  DeviceGuard guard(ctx.device);
  const int threads = static_cast<int>((p + 31) / 32 * 32);
  if (shared > 48 * 1024)
    GPUQR_CUDA_CHECK(cudaFuncSetAttribute(deletion_rotations_kernel<T>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(shared)));
  deletion_rotations_kernel<T><<<1, threads, shared, ctx.stream>>>(
      z.data(), z.ld(), n, static_cast<int>(p), c.data(), c.ld(), s.data(), s.ld());
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
                                            MatrixView<T>, bool, bool);
GPUQR_INSTANTIATE_GIVENS(float)
GPUQR_INSTANTIATE_GIVENS(double)

}  // namespace gpuqr::kernels::cuda
