// Shared-memory kernels of the batched QR: one thread block per matrix of a (variable-size)
// batch, the matrix read from global memory once and written once.
//
// geqrf: unblocked Householder QR as LAPACK's geqr2 in shared memory (the idea of the TSQR
// leaf kernel in tsqr_kernels.cu, here with per-matrix sizes, pointers and tau): per column a
// block-wide norm, the reflector on thread 0, then each warp updates its own trailing columns.
// apply: V (m x k) stays in shared memory while C goes through it in chunks of columns, a warp
// per column (columns are independent: no block barrier between reflectors).
// upper_solve: back substitution of R X = B, one barrier per row.
#include <cuda_runtime.h>

#include <algorithm>
#include <limits>
#include <string>

#include "src/cuda/batched_internal.hpp"
#include "src/cuda/check.hpp"

namespace gpuqr::kernels::cuda::batched {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

template <class T>
__device__ T warp_sum(T v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

/// The block-wide sum (or max) of v, the same value (same order) on every thread.
template <class T, bool kMax>
__device__ T block_reduce(T v, T* red) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    const T o = __shfl_xor_sync(0xffffffffu, v, offset);
    v = kMax ? fmax(v, o) : v + o;
  }
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  T total = red[0];
  for (int w = 1; w < kWarps; ++w) total = kMax ? fmax(total, red[w]) : total + red[w];
  __syncthreads();  // red is reused by the next call
  return total;
}

/// ||s(j+1:m, j)||_2, overflow/underflow safe (LAPACK's nrm2 idea).
template <class T>
__device__ T tail_norm(const T* col, int j, int m, T* red) {
  T ssq = 0;
  for (int i = j + 1 + threadIdx.x; i < m; i += blockDim.x) ssq += col[i] * col[i];
  ssq = block_reduce<T, false>(ssq, red);
  const T small = std::numeric_limits<T>::min() / std::numeric_limits<T>::epsilon();
  if (ssq >= small && ssq <= std::numeric_limits<T>::max()) return sqrt(ssq);
  T amax = 0;
  for (int i = j + 1 + threadIdx.x; i < m; i += blockDim.x) amax = fmax(amax, fabs(col[i]));
  amax = block_reduce<T, true>(amax, red);
  if (amax == T(0)) return T(0);
  T scaled = 0;
  for (int i = j + 1 + threadIdx.x; i < m; i += blockDim.x) {
    const T x = col[i] / amax;
    scaled += x * x;
  }
  return amax * sqrt(block_reduce<T, false>(scaled, red));
}

template <class T>
__global__ void __launch_bounds__(kThreads) block_geqrf_kernel(DeviceBatch<T> batch) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __shared__ T red[kWarps];
  __shared__ T s_scale;
  const Desc<T> d = batch.at(blockIdx.x);
  const int m = d.m, n = d.n, lds = max(m, 1), k = min(m, n);
  if (m == 0 || n == 0) return;
  T* s = reinterpret_cast<T*>(smem_raw);
  T* s_tau = s + lds * n;
  for (int e = threadIdx.x; e < m * n; e += blockDim.x) {
    const int i = e % m, c = e / m;
    s[i + c * lds] = d.a[i + c * d.ld];
  }
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int j = 0; j < k; ++j) {
    T* vj = s + j * lds;
    const T xnorm = tail_norm(vj, j, m, red);
    if (threadIdx.x == 0) {
      // LAPACK's larfg (see batched_small.cu).
      const T alpha = vj[j];
      T t = 0, scale = 0;
      if (xnorm != T(0)) {
        const T beta = -copysign(hypot(alpha, xnorm), alpha);
        t = (beta - alpha) / beta;
        scale = T(1) / (alpha - beta);
        vj[j] = beta;
      }
      s_tau[j] = t;
      s_scale = scale;
    }
    __syncthreads();
    const T tj = s_tau[j];
    if (tj == T(0)) continue;  // uniform: every thread read the same value
    const T scale = s_scale;
    for (int i = j + 1 + threadIdx.x; i < m; i += blockDim.x) vj[i] *= scale;
    __syncthreads();
    for (int c = j + 1 + warp; c < n; c += kWarps) {
      T* ac = s + c * lds;
      T dot = 0;
      for (int i = j + 1 + lane; i < m; i += 32) dot += vj[i] * ac[i];
      const T pivot = ac[j];
      const T w = tj * (warp_sum(dot) + pivot);
      __syncwarp();  // every lane has read the pivot entry before lane 0 changes it
      if (lane == 0) ac[j] = pivot - w;
      for (int i = j + 1 + lane; i < m; i += 32) ac[i] -= w * vj[i];
    }
    __syncthreads();
  }
  for (int j = threadIdx.x; j < k; j += blockDim.x) d.tau[j] = s_tau[j];
  for (int e = threadIdx.x; e < m * n; e += blockDim.x) {
    const int i = e % m, c = e / m;
    d.a[i + c * d.ld] = s[i + c * lds];
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    block_apply_kernel(DeviceBatch<T> vb, DeviceBatch<T> cb, bool trans, bool identity,
                       std::int64_t elems) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const Desc<T> v = vb.at(blockIdx.x), c = cb.at(blockIdx.x);
  const int m = v.m, k = v.k, nc = c.n, lds = max(m, 1);
  if (m == 0 || nc == 0) return;
  T* s_v = reinterpret_cast<T*>(smem_raw);
  T* s_tau = s_v + lds * k;
  T* s_c = s_tau + k;
  const std::int64_t fit = (elems - std::int64_t(lds) * k - k) / lds;
  const int kc = static_cast<int>(fit < nc ? fit : std::int64_t(nc));
  for (int e = threadIdx.x; e < m * k; e += blockDim.x) {
    const int i = e % m, j = e / m;
    s_v[i + j * lds] = v.a[i + j * v.ld];
  }
  for (int j = threadIdx.x; j < k; j += blockDim.x) s_tau[j] = v.tau[j];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int c0 = 0; c0 < nc; c0 += kc) {
    const int kk = min(kc, nc - c0);
    __syncthreads();  // V is loaded (first chunk); the last chunk's store has read s_c
    for (int e = threadIdx.x; e < m * kk; e += blockDim.x) {
      const int i = e % m, j = e / m;
      s_c[i + j * lds] = identity ? T(i == c0 + j ? 1 : 0) : c.a[i + (c0 + j) * c.ld];
    }
    __syncthreads();
    for (int cc = warp; cc < kk; cc += kWarps) {
      T* col = s_c + cc * lds;
      for (int step = 0; step < k; ++step) {
        const int j = trans ? step : k - 1 - step;
        const T tj = s_tau[j];
        if (tj == T(0)) continue;
        const T* vj = s_v + j * lds;
        T dot = 0;
        for (int i = j + 1 + lane; i < m; i += 32) dot += vj[i] * col[i];
        const T pivot = col[j];
        const T w = tj * (warp_sum(dot) + pivot);
        __syncwarp();  // the pivot entry is read by every lane before lane 0 changes it
        if (lane == 0) col[j] = pivot - w;
        for (int i = j + 1 + lane; i < m; i += 32) col[i] -= w * vj[i];
        __syncwarp();  // lane 0's pivot write is seen by the next reflector's reads
      }
    }
    __syncthreads();
    for (int e = threadIdx.x; e < m * kk; e += blockDim.x) {
      const int i = e % m, j = e / m;
      c.a[i + (c0 + j) * c.ld] = s_c[i + j * lds];
    }
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    upper_solve_kernel(DeviceBatch<T> ab, DeviceBatch<T> bb) {
  __shared__ T s_x;
  const Desc<T> a = ab.at(blockIdx.x), b = bb.at(blockIdx.x);
  const int n = a.n, nrhs = b.n;
  for (int r = 0; r < nrhs; ++r) {
    T* x = b.a + std::int64_t(r) * b.ld;
    for (int i = n - 1; i >= 0; --i) {
      if (threadIdx.x == 0) {
        s_x = x[i] / a.a[i + std::int64_t(i) * a.ld];
        x[i] = s_x;
      }
      __syncthreads();
      const T xi = s_x;
      const T* ai = a.a + std::int64_t(i) * a.ld;
      for (int t = threadIdx.x; t < i; t += blockDim.x) x[t] -= xi * ai[t];
      __syncthreads();  // x[0..i-1] are final for row i-1; s_x is rewritten next
    }
  }
}

/// grid (pair, column group): each block copies every gridDim.y-th column of its pair.
template <class T>
__global__ void __launch_bounds__(kThreads) copy_kernel(DeviceBatch<T> sb, DeviceBatch<T> db) {
  const Desc<T> s = sb.at(blockIdx.x), d = db.at(blockIdx.x);
  for (int c = blockIdx.y; c < d.n; c += gridDim.y) {
    const T* from = s.a + std::int64_t(c) * s.ld;
    T* to = d.a + std::int64_t(c) * d.ld;
    for (int r = threadIdx.x; r < d.m; r += blockDim.x) to[r] = from[r];
  }
}

unsigned grid_of(std::int64_t count) {
  if (count > std::numeric_limits<int>::max()) {
    GPUQR_THROW(InvalidArgument, "batched QR: " + std::to_string(count) +
                                     " matrices exceed one launch");
  }
  return static_cast<unsigned>(count);
}

template <class K>
void allow_smem(K kernel, std::int64_t bytes) {
  if (bytes > 48 * 1024) {
    GPUQR_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(bytes)));
  }
}

}  // namespace

std::int64_t smem_budget(int device) {
  int optin = 0;
  GPUQR_CUDA_CHECK(
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return std::max<std::int64_t>(optin - 1024, 0);
}

template <class T>
void launch_block_geqrf(const DeviceBatch<T>& b, std::int64_t max_elems, int,
                        cudaStream_t stream) {
  if (b.count == 0) return;
  const std::int64_t bytes = max_elems * static_cast<std::int64_t>(sizeof(T));
  allow_smem(block_geqrf_kernel<T>, bytes);
  block_geqrf_kernel<T><<<grid_of(b.count), kThreads, bytes, stream>>>(b);
  GPUQR_CUDA_CHECK_LAUNCH(stream);
}

template <class T>
void launch_block_apply(const DeviceBatch<T>& v, const DeviceBatch<T>& c, bool trans,
                        bool identity, std::int64_t max_elems, int, cudaStream_t stream) {
  if (v.count == 0) return;
  const std::int64_t bytes = max_elems * static_cast<std::int64_t>(sizeof(T));
  allow_smem(block_apply_kernel<T>, bytes);
  block_apply_kernel<T><<<grid_of(v.count), kThreads, bytes, stream>>>(v, c, trans, identity,
                                                                        max_elems);
  GPUQR_CUDA_CHECK_LAUNCH(stream);
}

template <class T>
void launch_upper_solve(const DeviceBatch<T>& a, const DeviceBatch<T>& b, cudaStream_t stream) {
  if (a.count == 0) return;
  upper_solve_kernel<T><<<grid_of(a.count), kThreads, 0, stream>>>(a, b);
  GPUQR_CUDA_CHECK_LAUNCH(stream);
}

template <class T>
void launch_copy(const DeviceBatch<T>& src, const DeviceBatch<T>& dst, cudaStream_t stream) {
  if (dst.count == 0) return;
  // 16 column groups: a 512-column pair is 16 blocks of 32 columns; small batches still
  // spread over the SMs.
  copy_kernel<T><<<dim3(grid_of(dst.count), 16), kThreads, 0, stream>>>(src, dst);
  GPUQR_CUDA_CHECK_LAUNCH(stream);
}

#define GPUQR_INSTANTIATE_BATCHED_BLOCK(T)                                                   \
  template void launch_block_geqrf<T>(const DeviceBatch<T>&, std::int64_t, int, cudaStream_t); \
  template void launch_block_apply<T>(const DeviceBatch<T>&, const DeviceBatch<T>&, bool, bool, \
                                      std::int64_t, int, cudaStream_t);                      \
  template void launch_upper_solve<T>(const DeviceBatch<T>&, const DeviceBatch<T>&,          \
                                      cudaStream_t);                                         \
  template void launch_copy<T>(const DeviceBatch<T>&, const DeviceBatch<T>&, cudaStream_t);

GPUQR_INSTANTIATE_BATCHED_BLOCK(float)
GPUQR_INSTANTIATE_BATCHED_BLOCK(double)

}  // namespace gpuqr::kernels::cuda::batched
