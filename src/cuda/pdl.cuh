// Programmatic dependent launch (Hopper; CUDA programming guide, "Programmatic Dependent
// Launch and Synchronization") for the kernels on the blocked QR's chain of small dependent
// launches (the AH panel's Gram pass, b x b kernel and scaling, the Householder panel kernels,
// larfb_small): a kernel launched by pdl::launch may be put on the GPU while the kernel before
// it on the stream is still running, once every block of that one has passed pdl::enter, and
// its own blocks then wait in pdl::enter until the one before has finished and its writes are
// visible. What this hides is the launch latency between two dependent kernels (a few
// microseconds each, about 160 of them in geqrf at n = 1024).
//
// The rule that keeps it correct: a kernel launched by pdl::launch calls pdl::enter() first,
// in every thread, before it reads or writes anything the kernels before it touch, and on
// every path (an early return too), so that it cannot finish before its predecessor. The
// ordering is then transitive along the stream. A kernel with pdl::enter launched the plain
// way runs as before (griddepcontrol.wait returns at once). GPUQR_PDL=0 turns the attribute
// off for A/B runs. src/cuda/ only.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <utility>

#include "src/cuda/check.hpp"

namespace gpuqr::kernels::cuda::pdl {

/// Waits until the grid before this one on the stream has finished (its writes visible), then
/// lets the grid after this one be launched. First thing in a kernel launched by pdl::launch.
__device__ __forceinline__ void enter() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/// The two halves of enter(), for a kernel that may start before its predecessor finishes
/// (ah_t_kernel in panel_qr_ah.cu: it reads only what an earlier kernel wrote, which had
/// finished before its predecessor's blocks passed enter()): trigger() first, wait() on
/// every path before the kernel ends, so that it still cannot finish before its predecessor.
__device__ __forceinline__ void trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// Whether launches on `device` carry the attribute: compute capability 9.0 or later and
/// GPUQR_PDL not 0, both read once (per process, per device).
inline bool enabled(int device) {
  static const bool env_on = [] {
    const char* text = std::getenv("GPUQR_PDL");
    return text == nullptr || std::atoi(text) != 0;
  }();
  constexpr int kDevices = 64;
  static std::atomic<int> major[kDevices] = {};  // 0: not read yet
  if (!env_on || device < 0) return false;
  if (device >= kDevices) return false;
  int m = major[device].load(std::memory_order_relaxed);
  if (m == 0) {
    if (cudaDeviceGetAttribute(&m, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess)
      return false;
    major[device].store(m, std::memory_order_relaxed);
  }
  return m >= 9;
}

/// kernel<<<grid, block, smem, stream>>>(args...) with programmatic stream serialization
/// when enabled(device); `kernel` must begin with pdl::enter(). Throws CudaError when the
/// launch fails.
template <class... Params, class... Args>
void launch(int device, void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem,
            cudaStream_t stream, Args&&... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = enabled(device) ? 1 : 0;
  GPUQR_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...));
  GPUQR_CUDA_CHECK_LAUNCH(stream);
}

}  // namespace gpuqr::kernels::cuda::pdl
