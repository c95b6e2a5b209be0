// CUDA QRF-AH panel leaf (src/core/qrf_ah_kernels.hpp): Algorithm 2 on the b x b top block and
// Gram matrix in one thread block, everything in shared memory (b <= kAhMaxBlock = 32). The
// same arithmetic as the CPU twin (src/cpu/qrf_ah_kernels.cpp), phase by phase:
//   1 thread 0: nu, sigma, tau of column k      2 each j > k: w_j = v^T x_j from the Gram
//   3 each (i, j), j > k: the top block, D's columns and R's row k
//   4 column k (v, D(:, k)) and the Gram downdate  5 thread 0: the norm-update test
// with a barrier between phases (each reads what the previous one wrote).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "src/core/qrf_ah_kernels.hpp"
#include "src/cuda/check.hpp"

namespace gpuqr::kernels::cuda {
namespace {

using cuda_detail::DeviceGuard;

constexpr int kB = static_cast<int>(detail::kAhMaxBlock);
constexpr int kThreads = 256;

template <class T>
__global__ void ah_panel_kernel(T* top, std::int64_t ldt, T* gram, std::int64_t ldg, T* dm,
                                std::int64_t ldd, T* tau, double* status, int b,
                                double threshold) {
  __shared__ T x[kB][kB + 1], g[kB][kB + 1], d[kB][kB + 1];  // [row][col], padded
  __shared__ T norm0[kB], w[kB];
  __shared__ T s_sigma, s_tau, s_alpha;
  __shared__ int s_zero, s_kb, s_stop;
  const int tid = threadIdx.x;
  for (int idx = tid; idx < b * b; idx += blockDim.x) {
    const int i = idx % b, j = idx / b;
    x[i][j] = top[i + j * ldt];
    g[i][j] = gram[i + j * ldg];
    d[i][j] = i == j ? T(1) : T(0);
    if (i == j) norm0[j] = g[j][j];
  }
  if (tid == 0) s_kb = b;
  __syncthreads();
  for (int k = 0; k < b; ++k) {
    if (tid == 0) {  // phase 1
      const T gk = g[k][k];
      const T nu = sqrt(gk > T(0) ? gk : T(0));
      const T xkk = x[k][k];
      const T sg = xkk >= T(0) ? T(1) : T(-1);
      s_zero = nu == T(0);
      s_sigma = s_zero ? T(1) : xkk + sg * nu;
      s_tau = s_zero ? T(0) : T(1) + fabs(xkk) / nu;
      s_alpha = s_zero ? xkk : -sg * nu;  // R(k, k)
      tau[k] = s_tau;
    }
    __syncthreads();
    const T sigma = s_sigma, t = s_tau;
    const bool zero = s_zero != 0;
    for (int j = k + 1 + tid; j < b; j += blockDim.x)  // phase 2
      w[j] = x[k][j] + (g[k][j] - x[k][k] * x[k][j]) / sigma;
    __syncthreads();
    // Phase 3: columns j > k; rows i > k of the top block, rows i <= k of D; R's row k last
    // (i == k), which no other entry of this phase reads.
    for (int idx = tid; idx < b * b; idx += blockDim.x) {
      const int i = idx % b, j = idx / b;
      if (j <= k) continue;
      if (i > k) x[i][j] -= t * (x[i][k] / sigma) * w[j];
      if (i <= k) d[i][j] -= t * w[j] * d[i][k] / sigma;
      if (i == k) x[k][j] -= t * w[j];
    }
    __syncthreads();
    // Phase 4: column k of the top block and of D (read in phase 3, so after the barrier),
    // and the Gram downdate with R's row k (written in phase 3).
    for (int i = tid; i < b; i += blockDim.x) {
      if (i == k) x[k][k] = s_alpha;  // phases 3 and 4 read column k only below row k
      if (i > k) x[i][k] = zero ? T(0) : x[i][k] / sigma;
      if (i <= k) d[i][k] = zero ? T(0) : d[i][k] / sigma;
    }
    for (int idx = tid; idx < b * b; idx += blockDim.x) {
      const int i = idx % b, j = idx / b;
      if (i > k && j > k) g[i][j] -= x[k][i] * x[k][j];
    }
    __syncthreads();
    if (tid == 0) {  // phase 5
      bool stop = false;
      for (int j = k + 1; j < b; ++j)
        stop = stop || (norm0[j] > T(0) &&
                        static_cast<double>(g[j][j]) <= threshold * static_cast<double>(norm0[j]));
      s_stop = stop;
      if (stop) s_kb = k + 1;
    }
    __syncthreads();
    if (s_stop) break;  // uniform: every thread read the same shared flag
  }
  const int kb = s_kb;
  for (int idx = tid; idx < b * b; idx += blockDim.x) {
    const int i = idx % b, j = idx / b;
    if (j < kb) top[i + j * ldt] = x[i][j];
    dm[i + j * ldd] = j < kb ? d[i][j] : T(0);
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
