// The hand-off between the warps of a chained-tile kernel (update_rows_chained.cu,
// trsm_few_rhs.cu): a producer writes its results, then release_fence() and an atomic store
// of its flag; a consumer polls the flag with relaxed loads (no L1 invalidation per poll, as
// an acquire load would do), then reads it once with acquire semantics, after which the
// producer's results are visible (read them with __ldcg: L2, never a stale L1 line).
#pragma once

namespace gpuqr::kernels::cuda {

__device__ __forceinline__ int load_relaxed(const int* p) {
  int v;
  asm volatile("ld.relaxed.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ int load_acquire(const int* p) {
  int v;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

/// Strong (relaxed, GPU scope) loads and stores of a value that is its own flag: the kernels
/// that hand values on through a fill value no result can take (update_rows_chained.cu's one
/// chunk, trsm_few_rhs.cu) poll these until the fill is gone. Never a stale L1 line.
__device__ __forceinline__ double load_strong(const double* p) {
  double v;
  asm volatile("ld.relaxed.gpu.f64 %0, [%1];" : "=d"(v) : "l"(p));
  return v;
}
__device__ __forceinline__ float load_strong(const float* p) {
  float v;
  asm volatile("ld.relaxed.gpu.f32 %0, [%1];" : "=f"(v) : "l"(p));
  return v;
}
__device__ __forceinline__ void store_strong(double* p, double v) {
  asm volatile("st.relaxed.gpu.f64 [%0], %1;" ::"l"(p), "d"(v));
}
__device__ __forceinline__ void store_strong(float* p, float v) {
  asm volatile("st.relaxed.gpu.f32 [%0], %1;" ::"l"(p), "f"(v));
}

/// Orders the calling thread's writes before its (and, after a __syncwarp, its warp's) next
/// flag store, as seen by a consumer's acquire load: fence.acq_rel (MEMBAR.ALL.GPU), not the
/// sequentially consistent __threadfence() (MEMBAR.SC.GPU), which a release does not need.
__device__ __forceinline__ void release_fence() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

/// Waits until *flag >= target; the writes its producer made before setting it are visible
/// after.
/// (Pausing between polls, __nanosleep 100 or 400 ns, measured the same: session 13, run 5.)
__device__ __forceinline__ void wait_at_least(const int* flag, int target) {
  while (load_relaxed(flag) < target) {
  }
  (void)load_acquire(flag);
}

/// Waits until *flag != 0; the writes its producer made before setting it are visible after.
__device__ __forceinline__ void wait_published(const int* flag) {
  while (load_relaxed(flag) == 0) {
  }
  (void)load_acquire(flag);
}

}  // namespace gpuqr::kernels::cuda
