// The register kernel of the batched QR: small matrices (n <= 32, m <= 64) factored a warp
// each (or W = 8/16 lanes each, 4/2 matrices per warp for n <= 8/16), in one pass over memory.
//
// Lane c of a matrix's lanes owns column c in R registers (R = 8/16/32/64 >= m; rows >= m are
// zeros and stay zero). The matrix is read coalesced into a per-warp shared staging area, then
// each lane picks up its column; at the end the way back is the same. Per column j the pivot
// lane forms the reflector (LAPACK's larfg: same sign and scaling conventions, so the factors
// match the CPU twin up to rounding), publishes v and tau in shared memory, and every lane to
// its right applies it to its own column: no block barrier, only __syncwarp.
// Register arrays are indexed with compile-time indices only (unrolled loops; the run-time
// row j is matched by comparison), so nothing spills to local memory.
#include <cuda_runtime.h>

#include <limits>
#include <string>

#include "src/cuda/batched_internal.hpp"
#include "src/cuda/check.hpp"

namespace gpuqr::kernels::cuda::batched {
namespace {

constexpr int kWarps = 4;  // warps (of independent matrices) per thread block

template <int W, int R>
struct SmallShape {
  static constexpr int kPerWarp = 32 / W;
  static constexpr int kLds = R + 1;  // odd: lanes reading their columns hit distinct banks
  /// Per warp: 32 staged columns, then per matrix R entries of v and W of tau.
  static constexpr int kWarpElems = 32 * kLds + kPerWarp * (R + W);
};

/// ||x||_2 of this lane's rows i > j, overflow/underflow safe as LAPACK's nrm2.
template <class T, int R>
__device__ T tail_norm(const T (&a)[R], int j) {
  T ssq = 0;
#pragma unroll
  for (int i = 0; i < R; ++i) ssq += i > j ? a[i] * a[i] : T(0);
  const T small = std::numeric_limits<T>::min() / std::numeric_limits<T>::epsilon();
  if (ssq >= small && ssq <= std::numeric_limits<T>::max()) return sqrt(ssq);
  T amax = 0;
#pragma unroll
  for (int i = 0; i < R; ++i) amax = i > j ? fmax(amax, fabs(a[i])) : amax;
  if (amax == T(0)) return T(0);
  T scaled = 0;
#pragma unroll
  for (int i = 0; i < R; ++i) {
    const T x = i > j ? a[i] / amax : T(0);
    scaled += x * x;
  }
  return amax * sqrt(scaled);
}

template <class T, int W, int R>
__global__ void __launch_bounds__(kWarps * 32)
    small_geqrf_kernel(DeviceBatch<T> batch) {
  using S = SmallShape<W, R>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int sub = lane / W, col = lane % W;
  T* stage = reinterpret_cast<T*>(smem_raw) + warp * S::kWarpElems;
  T* s_v = stage + 32 * S::kLds + sub * (R + W);
  T* s_tau = s_v + R;
  const std::int64_t first = (std::int64_t(blockIdx.x) * kWarps + warp) * S::kPerWarp;

  // Coalesced load: the warp's lanes walk each of its matrices' m * n entries in turn.
#pragma unroll
  for (int t = 0; t < S::kPerWarp; ++t) {
    if (first + t >= batch.count) break;
    const Desc<T> d = batch.at(first + t);
    const int total = d.m * d.n;
    for (int e = lane; e < total; e += 32) {
      const int i = e % d.m, c = e / d.m;
      stage[(t * W + c) * S::kLds + i] = d.a[i + c * d.ld];
    }
  }
  __syncwarp();
  const std::int64_t q = first + sub;
  const bool valid = q < batch.count;
  Desc<T> d{};
  if (valid) d = batch.at(q);
  const int m = valid ? d.m : 0, n = valid ? d.n : 0, k = min(m, n);
  const bool mine = col < n;
  T a[R];
#pragma unroll
  for (int i = 0; i < R; ++i) a[i] = (mine && i < m) ? stage[lane * S::kLds + i] : T(0);
  const int kmax = __reduce_max_sync(0xffffffffu, k);

  for (int j = 0; j < kmax; ++j) {
    if (col == j && j < k) {
      // LAPACK's larfg: beta = -sign(alpha) ||(alpha, x)||, tau = (beta - alpha) / beta,
      // v = x / (alpha - beta); tau = 0 (H = I) when x is zero.
      const T xnorm = tail_norm<T, R>(a, j);
      T alpha = 0;
#pragma unroll
      for (int i = 0; i < R; ++i) alpha = i == j ? a[i] : alpha;
      T tau = 0;
      if (xnorm != T(0)) {
        const T beta = -copysign(hypot(alpha, xnorm), alpha);
        tau = (beta - alpha) / beta;
        const T scale = T(1) / (alpha - beta);
#pragma unroll
        for (int i = 0; i < R; ++i) a[i] = i == j ? beta : (i > j ? a[i] * scale : a[i]);
      }
#pragma unroll
      for (int i = 0; i < R; ++i) s_v[i] = i < j ? T(0) : (i == j ? T(1) : a[i]);
      s_tau[j] = tau;
    }
    __syncwarp();  // v and tau of column j are visible to the lanes that apply them
    if (mine && col > j && j < k) {
      const T tj = s_tau[j];
      if (tj != T(0)) {
        T dot = 0;
#pragma unroll
        for (int i = 0; i < R; ++i) dot += s_v[i] * a[i];
        const T w = tj * dot;
#pragma unroll
        for (int i = 0; i < R; ++i) a[i] -= w * s_v[i];
      }
    }
    __syncwarp();  // every lane has read v before the next pivot lane overwrites it
  }

  if (mine) {
#pragma unroll
    for (int i = 0; i < R; ++i) stage[lane * S::kLds + i] = a[i];
  }
  if (col < k) d.tau[col] = s_tau[col];
  __syncwarp();
#pragma unroll
  for (int t = 0; t < S::kPerWarp; ++t) {
    if (first + t >= batch.count) break;
    const Desc<T> dt = batch.at(first + t);
    const int total = dt.m * dt.n;
    for (int e = lane; e < total; e += 32) {
      const int i = e % dt.m, c = e / dt.m;
      dt.a[i + c * dt.ld] = stage[(t * W + c) * S::kLds + i];
    }
  }
}

template <class T, int W, int R>
void launch_one(const DeviceBatch<T>& b, cudaStream_t stream) {
  using S = SmallShape<W, R>;
  const std::int64_t per_block = kWarps * S::kPerWarp;
  const std::int64_t blocks = (b.count + per_block - 1) / per_block;
  if (blocks > std::numeric_limits<int>::max()) {
    GPUQR_THROW(InvalidArgument, "batched geqrf: " + std::to_string(b.count) +
                                     " matrices exceed one launch");
  }
  const int bytes = static_cast<int>(kWarps * S::kWarpElems * sizeof(T));
  auto kernel = small_geqrf_kernel<T, W, R>;
  if (bytes > 48 * 1024) {
    GPUQR_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  }
  kernel<<<static_cast<unsigned>(blocks), kWarps * 32, bytes, stream>>>(b);
  GPUQR_CUDA_CHECK_LAUNCH(stream);
}

template <class T, int W>
void launch_rows(const DeviceBatch<T>& b, int r_index, cudaStream_t stream) {
  switch (r_index) {
    case 0: launch_one<T, W, 8>(b, stream); break;
    case 1: launch_one<T, W, 16>(b, stream); break;
    case 2: launch_one<T, W, 32>(b, stream); break;
    default: launch_one<T, W, 64>(b, stream); break;
  }
}

}  // namespace

int small_class(std::int64_t m, std::int64_t n) {
  if (n > 32 || m > 64) return -1;
  const int w = n <= 8 ? 0 : (n <= 16 ? 1 : 2);
  const int r = m <= 8 ? 0 : (m <= 16 ? 1 : (m <= 32 ? 2 : 3));
  return w * 4 + r;
}

template <class T>
void launch_small_geqrf(const DeviceBatch<T>& b, int cls, cudaStream_t stream) {
  if (b.count == 0) return;
  switch (cls / 4) {
    case 0: launch_rows<T, 8>(b, cls % 4, stream); break;
    case 1: launch_rows<T, 16>(b, cls % 4, stream); break;
    default: launch_rows<T, 32>(b, cls % 4, stream); break;
  }
}

template void launch_small_geqrf<float>(const DeviceBatch<float>&, int, cudaStream_t);
template void launch_small_geqrf<double>(const DeviceBatch<double>&, int, cudaStream_t);

}  // namespace gpuqr::kernels::cuda::batched
