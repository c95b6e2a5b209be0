// Session 21 probe: what an m x n device allocation costs per call (cudaMalloc + cudaFree
// against a stream-ordered pool that keeps its memory), for TallSkinnyQR's storage.
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstdint>

int main() {
  const std::size_t sizes[] = {std::size_t(1) << 30, std::size_t(8) << 30};
  cudaStream_t s;
  cudaStreamCreate(&s);
  cudaMemPool_t pool;
  cudaDeviceGetDefaultMemPool(&pool, 0);
  std::uint64_t keep = UINT64_MAX;
  cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
  for (std::size_t bytes : sizes) {
    for (int rep = 0; rep < 3; ++rep) {
      void* p = nullptr;
      auto t0 = std::chrono::steady_clock::now();
      cudaMalloc(&p, bytes);
      auto t1 = std::chrono::steady_clock::now();
      cudaMemsetAsync(p, 1, 4096, s);
      cudaStreamSynchronize(s);
      auto t2 = std::chrono::steady_clock::now();
      cudaFree(p);
      auto t3 = std::chrono::steady_clock::now();
      void* q = nullptr;
      cudaMallocAsync(&q, bytes, s);
      cudaMemsetAsync(q, 1, 4096, s);
      cudaFreeAsync(q, s);
      cudaStreamSynchronize(s);
      auto t4 = std::chrono::steady_clock::now();
      auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
      std::printf("%5.1f GiB rep %d: cudaMalloc %.3f ms, cudaFree %.3f ms, pool alloc+free %.3f ms (%s)\n",
                  double(bytes) / (1 << 30), rep, ms(t0, t1), ms(t2, t3), ms(t3, t4),
                  cudaGetErrorString(cudaGetLastError()));
    }
  }
  return 0;
}
