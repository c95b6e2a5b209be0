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
// off for A/B runs. GPUQR_PDL_EARLY=1 lets the next grid launch before the wait rather than
// after it (so kernels further down the chain can be resident too; A/B runs). Everything here
// has internal linkage: each translation unit has its own copy of the flag that enter() reads
// (a __constant__ without relocatable device code), set by its own launch(). src/cuda/ only.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <utility>

#include "src/cuda/check.hpp"

namespace gpuqr::kernels::cuda::pdl {
namespace {

/// 1: enter() lets the next grid launch before it waits (GPUQR_PDL_EARLY=1), 0: after.
__constant__ int c_early = 0;

/// Waits until the grid before this one on the stream has finished (its writes visible), and
/// lets the grid after this one be launched (after the wait, or before it with c_early). First
/// thing in a kernel launched by pdl::launch.
__device__ __forceinline__ void enter() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (c_early != 0) {
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    asm volatile("griddepcontrol.wait;" ::: "memory");
  } else {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  }
#endif
}

constexpr int kDevices = 64;

/// Whether launches on `device` carry the attribute: compute capability 9.0 or later and
/// GPUQR_PDL not 0, both read once (per process, per device). The first call for a device
/// with GPUQR_PDL_EARLY=1 also sets this translation unit's c_early there (a synchronous copy:
/// never reached with the variable unset, as in a graph capture with the default).
inline bool enabled(int device) {
  static const bool env_on = [] {
    const char* text = std::getenv("GPUQR_PDL");
    return text == nullptr || std::atoi(text) != 0;
  }();
  static const int env_early = [] {
    const char* text = std::getenv("GPUQR_PDL_EARLY");
    return text != nullptr ? (std::atoi(text) != 0 ? 1 : 0) : -1;
  }();
  static std::atomic<int> major[kDevices] = {};  // 0: not read yet
  if (!env_on || device < 0 || device >= kDevices) return false;
  int m = major[device].load(std::memory_order_relaxed);
  if (m == 0) {
    if (cudaDeviceGetAttribute(&m, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess)
      return false;
    if (env_early >= 0 && m >= 9) GPUQR_CUDA_CHECK(cudaMemcpyToSymbol(c_early, &env_early, sizeof(int)));
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

}  // namespace
}  // namespace gpuqr::kernels::cuda::pdl
