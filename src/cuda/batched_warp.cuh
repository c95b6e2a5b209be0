// Device helpers shared by the batched QR's register kernels that hold a matrix per warp
// (batched_small.cu, batched_rows_small.cu): 16-byte granule loads and stores, warp
// reductions over groups of lanes, the batch's descriptors. CUDA-only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "src/cuda/batched_internal.hpp"

namespace gpuqr::kernels::cuda::batched::warp {

inline constexpr unsigned kFull = 0xffffffffu;

__device__ __forceinline__ void load_granule(const double* p, double (&v)[2]) {
  const double2 x = *reinterpret_cast<const double2*>(p);
  v[0] = x.x;
  v[1] = x.y;
}
__device__ __forceinline__ void load_granule(const float* p, float (&v)[4]) {
  const float4 x = *reinterpret_cast<const float4*>(p);
  v[0] = x.x;
  v[1] = x.y;
  v[2] = x.z;
  v[3] = x.w;
}
__device__ __forceinline__ void store_granule(double* p, const double (&v)[2]) {
  *reinterpret_cast<double2*>(p) = make_double2(v[0], v[1]);
}
__device__ __forceinline__ void store_granule(float* p, const float (&v)[4]) {
  *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
}
template <int G, class T>
__device__ __forceinline__ T group_sum(T v) {
#pragma unroll
  for (int o = G / 2; o > 0; o /= 2) v += __shfl_xor_sync(kFull, v, o);
  return v;
}
template <int G, class T>
__device__ __forceinline__ T group_max(T v) {
#pragma unroll
  for (int o = G / 2; o > 0; o /= 2) v = fmax(v, __shfl_xor_sync(kFull, v, o));
  return v;
}

/// v, which the compiler must assume changed: keeps it from reusing values derived from v
/// earlier (and holding them in registers meanwhile).
__device__ __forceinline__ int opaque(int v) {
  asm volatile("" : "+r"(v));
  return v;
}

__device__ __forceinline__ std::int64_t opaque(std::int64_t v) {
  asm volatile("" : "+l"(v));
  return v;
}

/// Matrix q of the batch, or an empty one (m = n = 0) past its end.
template <class T>
__device__ __forceinline__ Desc<T> desc_at(const DeviceBatch<T>& b, std::int64_t q) {
  if (q < b.count) return b.at(q);
  return Desc<T>{};
}

/// Pulls descriptor q of a listed batch into L2 (a matrix before it is read).
template <class T>
__device__ __forceinline__ void prefetch_desc(const DeviceBatch<T>& b, std::int64_t q) {
  if (b.list != nullptr && q < b.count) asm volatile("prefetch.global.L2 [%0];" ::"l"(b.list + q));
}

}  // namespace gpuqr::kernels::cuda::batched::warp
