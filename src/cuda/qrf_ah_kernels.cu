// CUDA QRF-AH panel leaf (src/core/qrf_ah_kernels.hpp): Algorithm 2 on the b x b top block and
// Gram matrix, everything in shared memory (b <= kAhMaxBlock = 32); the algorithm itself is
// ah::factor_block (qrf_ah_panel.cuh), shared with the blocked QR's AH panel.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "src/core/qrf_ah_kernels.hpp"
#include "src/cuda/check.hpp"
#include "src/cuda/qrf_ah_panel.cuh"

namespace gpuqr::kernels::cuda {
namespace {

using cuda_detail::DeviceGuard;

constexpr int kB = static_cast<int>(detail::kAhMaxBlock);
constexpr int kThreads = ah::kThreads;  // factor_block's block size

template <class T>
__global__ void ah_panel_kernel(T* top, std::int64_t ldt, T* gram, std::int64_t ldg, T* dm,
                                std::int64_t ldd, T* tau, double* status, int b,
                                double threshold) {
  __shared__ T x[kB][kB + 1], g[kB][kB + 1], d[kB][kB + 1];  // [col][row], padded
  const int tid = threadIdx.x;
  for (int idx = tid; idx < kB * kB; idx += blockDim.x) {  // zero padding past b
    const int i = idx % kB, j = idx / kB;
    const bool in = i < b && j < b;
    x[j][i] = in ? top[i + j * ldt] : T(0);
    g[j][i] = in ? gram[i + j * ldg] : T(0);
    d[j][i] = i == j ? T(1) : T(0);
  }
  __syncthreads();
  const int kb = ah::factor_block<T, kB>(x, g, d, tau, b, threshold, detail::kAhMaxAmplification);
  for (int idx = tid; idx < b * b; idx += blockDim.x) {
    const int i = idx % b, j = idx / b;
    if (j < kb) top[i + j * ldt] = x[j][i];
    dm[i + j * ldd] = j < kb ? d[j][i] : T(0);
  }
  if (tid == 0) status[0] = double(kb);
}

}  // namespace

template <class T>
void ah_panel(detail::ContextImpl& ctx, MatrixView<T> top, MatrixView<T> gram, MatrixView<T> d,
              VectorView<T> tau, VectorView<double> status) {
  const std::int64_t b = top.cols();
  GPUQR_CHECK_ARG(b >= 1 && b <= detail::kAhMaxBlock && top.rows() == b,
                  "ah_panel: the top block is " + std::to_string(top.rows()) + " x " +
                      std::to_string(b) + ", must be b x b with 1 <= b <= 32");
  DeviceGuard guard(ctx.device);
  const double threshold = std::max(detail::kAhRemainingFraction,
                                    std::sqrt(double(std::numeric_limits<T>::epsilon())));
  ah_panel_kernel<T><<<1, kThreads, 0, ctx.stream>>>(
      top.data(), top.ld(), gram.data(), gram.ld(), d.data(), d.ld(), tau.data(), status.data(),
      static_cast<int>(b), threshold);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

GPUQR_INSTANTIATE_QRF_AH_KERNELS(float)
GPUQR_INSTANTIATE_QRF_AH_KERNELS(double)

}  // namespace gpuqr::kernels::cuda
