// One launch of a kernel as a single thread-block cluster of `blocks` blocks (Hopper), shared by
// the cluster kernels' hosts (panel_qr.cu, panel_qr_ah_step.cu). src/cuda/ only.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "src/cuda/check.hpp"

namespace gpuqr::kernels::cuda {

/// Launches `kernel` on `stream` as one cluster of `blocks` blocks of `threads` threads with
/// `smem` bytes of dynamic shared memory; `params` as cudaLaunchKernelExC takes them. With
/// `dependent`, also programmatic stream serialization (pdl.cuh: the kernel must begin with
/// pdl::enter()). Throws CudaError when the launch fails.
inline void launch_one_cluster(const void* kernel, int blocks, int threads, std::size_t smem,
                               cudaStream_t stream, void** params, bool dependent = false) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(blocks));
  cfg.blockDim = dim3(static_cast<unsigned>(threads));
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[2]{};
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = static_cast<unsigned>(blocks);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  attr[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[1].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = dependent ? 2 : 1;
  GPUQR_CUDA_CHECK(cudaLaunchKernelExC(&cfg, kernel, params));
  GPUQR_CUDA_CHECK_LAUNCH(stream);
}

}  // namespace gpuqr::kernels::cuda
