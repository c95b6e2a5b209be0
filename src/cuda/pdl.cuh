// Programmatic dependent launch (Hopper) for chains of small kernels on one stream, such as
// the AH panel's Gram pass, b x b kernel, scaling and the Householder kernel after them: a
// kernel launched with pdl_attribute() may be scheduled before the kernel ahead of it in the
// stream has finished (once that one calls pdl_trigger(), or as its blocks exit), and waits in
// pdl_wait() until it has completed and its writes are visible. So each kernel of the chain
// must call pdl_wait() before it reads what the kernel ahead wrote (or writes what that one
// reads); pdl_wait() returns at once in a kernel launched without the attribute. What it saves
// is the launch latency between the kernels. GPUQR_PDL=0 turns it off (measurements).
#pragma once

#include <cuda_runtime.h>

#include <cstdlib>
#include <utility>

namespace gpuqr::kernels::cuda {

/// Waits until the kernel ahead in the stream (when this one was launched with
/// pdl_attribute()) has completed and its memory operations are visible.
__device__ __forceinline__ void pdl_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

/// Lets the next kernel in the stream (launched with pdl_attribute()) be scheduled now; it
/// still waits for this one's completion in its pdl_wait().
__device__ __forceinline__ void pdl_trigger() {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

/// Whether kernels of a chain are launched with the programmatic-serialization attribute.
inline bool pdl_on() {
  static const bool on = [] {
    const char* text = std::getenv("GPUQR_PDL");
    return !(text != nullptr && text[0] == '0');
  }();
  return on;
}

/// The launch attribute that allows this launch to overlap the end of the kernel ahead of it.
inline cudaLaunchAttribute pdl_attribute() {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  return attr;
}

/// kernel<<<grid, block, smem, stream>>>(args...) with pdl_attribute() when `pdl` and
/// pdl_on().
template <class... Params, class... Args>
cudaError_t launch_pdl(bool pdl, void (*kernel)(Params...), dim3 grid, dim3 block,
                       std::size_t smem, cudaStream_t stream, Args&&... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr = pdl_attribute();
  if (pdl && pdl_on()) {
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
  }
  return cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
}

}  // namespace gpuqr::kernels::cuda
