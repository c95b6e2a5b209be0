// The one-block Cholesky factor and inverse of a small Gram matrix (src/cuda/cholesky_small.hpp).
//
// G (n x n, n <= 128) is padded to np = 32 ceil(n / 32) with the identity (the padding stays
// decoupled: its rows of R are the identity's) and held in shared memory, column-major with
// ld = np + 1. Only G's upper triangle is read, as potrf with CUBLAS_FILL_MODE_UPPER does.
// Per 32-column panel p (c0 = 32 p), right-looking, as LAPACK's blocked potrf:
//   1. warp 0 factors the diagonal block in registers (lane j holds column c0 + j), the
//      pivot broadcast by a shuffle, the rank-1 updates by shuffles of row k of R;
//   2. R's row panel solves R_pp^T Y = G(panel rows, columns right of the panel) by forward
//      substitution, a column per thread in registers (so it is backward stable, as potrf's
//      TRSM), R_pp read from shared memory by broadcast;
//   3. the block updates the trailing upper triangle: G -= R_p^T R_p (a SYRK of 32 rows).
// R is then written out; each diagonal block is inverted by one warp (column-oriented back
// substitution, lane j column j), and R^{-1}'s off-diagonal blocks are formed block column by block column
// as LAPACK's trtri does: X(0:c, c:c+32) = -X(0:c, 0:c) R(0:c, c:c+32) X_cc, in place.
//
// Every status entry has the meaning of the cuSOLVER route's (src/cuda/cholqr_kernels.cu),
// which the CPU twin shares; a breakdown is reported at the first pivot that is not > 0 (or
// NaN), with potrf's 1-based column.
#include "src/cuda/cholesky_small.hpp"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "src/core/cholqr_kernels.hpp"
#include "src/cuda/check.hpp"

namespace gpuqr::kernels::cuda {
namespace {

using cuda_detail::DeviceGuard;

constexpr int kNb = 32;          // panel width = warp size
constexpr int kThreads = 256;  // 8 warps: the register blocks take ~230 registers a thread (no spills)
constexpr int kWarps = kThreads / 32;
constexpr unsigned kFull = 0xffffffffu;
// Block column step of the inverse: outputs per thread (96 x 32 at most, over 512 threads).
constexpr int kInvPerThread = (kSmallCholeskyMaxCols - kNb) * kNb / kThreads;

// Measurements only: with GPUQR_SMALL_CHOLESKY_TRACE=1 the host sets g_chol_trace, thread 0
// stamps clock64() at each phase's end into g_chol_clocks, and the launch prints the phases'
// cycles to stderr (after a sync: never in normal runs).
constexpr int kClockSlots = 24;
__device__ int g_chol_trace = 0;
__device__ long long g_chol_clocks[kClockSlots];
__device__ __forceinline__ void stamp(bool on, int slot) {
  if (on && threadIdx.x == 0 && slot < kClockSlots) g_chol_clocks[slot] = clock64();
}

/// Block-wide sum / max / min of doubles, returned to every thread.
template <class Op>
__device__ double block_all(double v, Op op, double* scratch) {
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(kFull, v, o));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();  // an earlier call may still read `scratch`
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = scratch[0];
  for (int w = 1; w < kWarps; ++w) v = op(v, scratch[w]);
  return v;
}
struct SumOp {
  __device__ double operator()(double a, double b) const { return a + b; }
};
struct MaxOp {
  __device__ double operator()(double a, double b) const { return a > b ? a : b; }
};
struct MinOp {
  __device__ double operator()(double a, double b) const { return a < b ? a : b; }
};

/// (i, j), i <= j, of the e-th entry of an upper triangle stored column by column.
__device__ __forceinline__ void upper_index(int e, int& i, int& j) {
  j = static_cast<int>((sqrtf(8.0f * float(e) + 1.0f) - 1.0f) * 0.5f);
  // Float rounding may land one off for large e: fix by the exact bounds.
  while (j * (j + 1) / 2 > e) --j;
  while ((j + 1) * (j + 2) / 2 <= e) ++j;
  i = e - j * (j + 1) / 2;
}

template <class T>
__global__ void __launch_bounds__(kThreads, 1)
    small_cholesky_kernel(T* __restrict__ g, std::int64_t ldg, T* __restrict__ rinv,
                          std::int64_t ldi, int n, double shift_factor, double* status) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __shared__ double scratch[kWarps];
  __shared__ int breakdown;
  __shared__ T rdiag[kSmallCholeskyMaxCols];  // 1 / R(i, i)
  const int panels = (n + kNb - 1) / kNb, np = panels * kNb, ld = np + 1;
  T* s = reinterpret_cast<T*>(smem_raw);  // np x np, ld
  T* xd = s + np * ld;                     // the diagonal blocks' inverses, 32 x 32 (ld 33) each
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const bool trace = g_chol_trace != 0;
  stamp(trace, 0);

  // ---- G into shared memory (identity padding), its status, the shift ----
  // kLoads loads in flight per thread (G is in L2, just written: latency, not bandwidth).
  constexpr int kLoads = 16;
  double off = 0.0, tr = 0.0;
  for (int e0 = tid; e0 < np * np; e0 += kLoads * kThreads) {
    T v[kLoads];
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      const int e = e0 + u * kThreads, i = e % np, j = e / np;
      v[u] = i == j ? T(1) : T(0);
      if (e < np * np && i < n && j < n) v[u] = g[i + std::int64_t(j) * ldg];
    }
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      const int e = e0 + u * kThreads, i = e % np, j = e / np;
      if (e >= np * np) break;
      if (i < n && j < n) {
        const double d = double(v[u]) - (i == j ? 1.0 : 0.0);
        off += d * d;
        if (i == j) tr += double(v[u]);
      }
      s[i + j * ld] = v[u];
    }
  }
  off = block_all(off, SumOp(), scratch);
  tr = block_all(tr, SumOp(), scratch);
  // No shift asked, none added (a NaN trace must not turn "none" into NaN).
  const double shift = shift_factor != 0.0 ? shift_factor * tr : 0.0;
  if (tid == 0) breakdown = 0;
  if (shift != 0.0)
    for (int i = tid; i < n; i += kThreads) s[i + i * ld] = T(double(s[i + i * ld]) + shift);
  __syncthreads();
  stamp(trace, 1);

  // ---- the factorization, panel by panel ----
  for (int p = 0; p < panels; ++p) {
    const int c0 = p * kNb, c1 = c0 + kNb, rest = np - c1;
    if (warp == 0) {  // 1. the diagonal block: lane j holds column c0 + j (rows <= j used)
      T d[kNb];
#pragma unroll
      for (int k = 0; k < kNb; ++k) d[k] = s[(c0 + k) + (c0 + lane) * ld];
#pragma unroll
      for (int k = 0; k < kNb; ++k) {
        const T piv = __shfl_sync(kFull, d[k], k);
        if (lane == 0 && !(piv > T(0)) && breakdown == 0 && c0 + k < n) breakdown = c0 + k + 1;
        // 1 / sqrt first (one op on the chain of pivots; potrf too scales by the reciprocal),
        // R(k, k) from it. NaN past a breakdown, as potrf's leftovers.
        const T inv = rsqrt(piv);
        const T rkk = piv * inv;
        if (lane > k) d[k] *= inv;
        if (lane == k) {
          d[k] = rkk;
          rdiag[c0 + k] = inv;
        }
#pragma unroll
        for (int i = k + 1; i < kNb; ++i) {
          const T rki = __shfl_sync(kFull, d[k], i);  // R(c0 + k, c0 + i)
          if (lane >= i) d[i] -= rki * d[k];
        }
      }
#pragma unroll
      for (int k = 0; k < kNb; ++k)
        if (k <= lane) s[(c0 + k) + (c0 + lane) * ld] = d[k];
    }
    __syncthreads();
    stamp(trace, 2 + 3 * p);
    if (rest == 0) break;
    // 2. R's row panel: R_pp^T Y = G(c0:c1, c1:np), a column per thread in registers; R_pp's
    //    rows are read from shared memory (the same address in every lane).
    for (int j = c1 + tid; j < np; j += kThreads) {
      T y[kNb];
#pragma unroll
      for (int k = 0; k < kNb; ++k) y[k] = s[(c0 + k) + j * ld];
#pragma unroll
      for (int k = 0; k < kNb; ++k) {
        y[k] *= rdiag[c0 + k];
#pragma unroll
        for (int l = k + 1; l < kNb; ++l) y[l] -= s[(c0 + k) + (c0 + l) * ld] * y[k];
      }
#pragma unroll
      for (int k = 0; k < kNb; ++k) s[(c0 + k) + j * ld] = y[k];
    }
    __syncthreads();
    stamp(trace, 3 + 3 * p);
    // 3. the trailing upper triangle: G(i, j) -= sum_k R(c0 + k, i) R(c0 + k, j), c1 <= i <= j
    for (int e = tid; e < rest * (rest + 1) / 2; e += kThreads) {
      int i, j;
      upper_index(e, i, j);
      i += c1;
      j += c1;
      T acc0 = T(0), acc1 = T(0);
#pragma unroll
      for (int k = 0; k < kNb; k += 2) {
        acc0 += s[(c0 + k) + i * ld] * s[(c0 + k) + j * ld];
        acc1 += s[(c0 + k + 1) + i * ld] * s[(c0 + k + 1) + j * ld];
      }
      s[i + j * ld] -= acc0 + acc1;
    }
    __syncthreads();
    stamp(trace, 4 + 3 * p);
  }

  // ---- R out (zeros below the diagonal), min / max |R(i, i)| ----
  double lo = INFINITY, hi = 0.0;
  for (int e = tid; e < n * n; e += kThreads) {
    const int i = e % n, j = e / n;
    g[i + std::int64_t(j) * ldg] = i <= j ? s[i + j * ld] : T(0);
    if (i == j) {
      const double d = fabs(double(s[i + i * ld]));
      lo = d < lo ? d : lo;
      hi = d > hi ? d : hi;
    }
  }
  lo = block_all(lo, MinOp(), scratch);
  hi = block_all(hi, MaxOp(), scratch);  // its barriers order breakdown's last write too
  const int bk = breakdown;
  stamp(trace, 14);
  if (bk != 0) {
    if (tid == 0) {
      for (int k = 0; k < detail::kStatusSize; ++k) status[k] = 0.0;
      status[detail::kStatusBreakdown] = double(bk);
      status[detail::kStatusOffset] = sqrt(off);
      status[detail::kStatusTrace] = tr;
      status[detail::kStatusShift] = shift;
    }
    return;
  }

  // ---- the diagonal blocks' inverses, one warp each (lane j: column j, back substitution) ----
  if (warp < panels) {
    const int c0 = warp * kNb;
    T x[kNb];  // R_pp x = e_lane, column-oriented: x_i, then x_i's column out of the rows above
#pragma unroll
    for (int l = 0; l < kNb; ++l) x[l] = l == lane ? T(1) : T(0);
#pragma unroll
    for (int i = kNb - 1; i >= 0; --i) {
      x[i] *= rdiag[c0 + i];
#pragma unroll
      for (int l = 0; l < i; ++l) x[l] -= s[(c0 + l) + (c0 + i) * ld] * x[i];
    }
#pragma unroll
    for (int i = 0; i < kNb; ++i) xd[warp * kNb * 33 + i + lane * 33] = i <= lane ? x[i] : T(0);
  }
  __syncthreads();
  stamp(trace, 15);
  // The diagonal blocks of s become X's (R's are out already).
  for (int e = tid; e < panels * kNb * kNb; e += kThreads) {
    const int b = e / (kNb * kNb), i = e % kNb, j = (e / kNb) % kNb;
    s[(b * kNb + i) + (b * kNb + j) * ld] = xd[b * kNb * 33 + i + j * 33];
  }
  __syncthreads();
  // ---- off-diagonal blocks, block column by block column ----
  for (int b = 1; b < panels; ++b) {
    const int c = b * kNb, outputs = c * kNb;  // rows 0..c-1, columns c..c+31
    T t[kInvPerThread];
#pragma unroll
    for (int q = 0; q < kInvPerThread; ++q) {
      const int e = tid + q * kThreads;
      t[q] = T(0);
      if (e < outputs) {
        const int r = e % c, col = c + e / c;
        T a0 = T(0), a1 = T(0);
        int k = r;
        for (; k + 1 < c; k += 2) {  // X(r, k) R(k, col), X upper: k >= r
          a0 += s[r + k * ld] * s[k + col * ld];
          a1 += s[r + (k + 1) * ld] * s[(k + 1) + col * ld];
        }
        if (k < c) a0 += s[r + k * ld] * s[k + col * ld];
        t[q] = a0 + a1;
      }
    }
    __syncthreads();  // every read of R(0:c, c:c+32) is done
#pragma unroll
    for (int q = 0; q < kInvPerThread; ++q) {
      const int e = tid + q * kThreads;
      if (e < outputs) s[(e % c) + (c + e / c) * ld] = t[q];
    }
    __syncthreads();
    const T* xb = xd + b * kNb * 33;
#pragma unroll
    for (int q = 0; q < kInvPerThread; ++q) {
      const int e = tid + q * kThreads;
      if (e < outputs) {
        const int r = e % c, col = e / c;  // col within the block
        T a0 = T(0), a1 = T(0);
        int l = 0;
        for (; l + 1 <= col; l += 2) {  // X_bb upper: l <= col
          a0 += s[r + (c + l) * ld] * xb[l + col * 33];
          a1 += s[r + (c + l + 1) * ld] * xb[(l + 1) + col * 33];
        }
        if (l <= col) a0 += s[r + (c + l) * ld] * xb[l + col * 33];
        t[q] = -(a0 + a1);
      }
    }
    __syncthreads();
#pragma unroll
    for (int q = 0; q < kInvPerThread; ++q) {
      const int e = tid + q * kThreads;
      if (e < outputs) s[(e % c) + (c + e / c) * ld] = t[q];
    }
    __syncthreads();
  }

  stamp(trace, 16);
  // ---- R^{-1} out (zeros below the diagonal), its norm and finiteness, the status ----
  double inv = 0.0, bad = 0.0;
  for (int e = tid; e < n * n; e += kThreads) {
    const int i = e % n, j = e / n;
    T v = T(0);
    if (i <= j) {
      v = s[i + j * ld];
      const double dv = double(v);
      if (!isfinite(dv)) bad = 1.0;
      inv += dv * dv;
    }
    rinv[i + std::int64_t(j) * ldi] = v;
  }
  inv = block_all(inv, SumOp(), scratch);
  bad = block_all(bad, MaxOp(), scratch);
  if (tid == 0) {
    for (int k = 0; k < detail::kStatusSize; ++k) status[k] = 0.0;
    status[detail::kStatusBreakdown] = bad != 0.0 || !isfinite(inv) ? double(n + 1) : 0.0;
    status[detail::kStatusOffset] = sqrt(off);
    status[detail::kStatusTrace] = tr;
    status[detail::kStatusShift] = shift;
    status[detail::kStatusInverseNorm] = sqrt(inv);
    status[detail::kStatusMinDiag] = lo;
    status[detail::kStatusMaxDiag] = hi;
  }
  stamp(trace, 17);
}

}  // namespace

bool small_cholesky_wanted(std::int64_t n) {
  static const bool on = [] {
    const char* v = std::getenv("GPUQR_SMALL_CHOLESKY");
    return v == nullptr || std::string(v) != "0";
  }();
  return on && n >= 1 && n <= kSmallCholeskyMaxCols;
}

template <class T>
void small_cholesky_inverse(detail::ContextImpl& ctx, MatrixView<T> g, MatrixView<T> rinv,
                            double shift_factor, VectorView<double> status) {
  const std::int64_t n = g.rows();
  GPUQR_CHECK_ARG(n >= 1 && n <= kSmallCholeskyMaxCols && g.cols() == n && rinv.rows() == n &&
                      rinv.cols() == n,
                  "small_cholesky_inverse: G is " + std::to_string(n) + " x " +
                      std::to_string(g.cols()) + ", R^{-1} " + std::to_string(rinv.rows()) +
                      " x " + std::to_string(rinv.cols()) + "; needs square, 1 <= n <= 128");
  DeviceGuard guard(ctx.device);
  const int panels = static_cast<int>((n + kNb - 1) / kNb), np = panels * kNb;
  const std::size_t smem = (std::size_t(np) * (np + 1) + std::size_t(panels) * kNb * 33) * sizeof(T);
  // Above 48 KiB of dynamic shared memory needs the opt-in (a host-side attribute, no sync).
  GPUQR_CUDA_CHECK(cudaFuncSetAttribute(small_cholesky_kernel<T>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(smem)));
  static const bool trace = [] {
    const char* v = std::getenv("GPUQR_SMALL_CHOLESKY_TRACE");
    return v != nullptr && std::string(v) == "1";
  }();
  if (trace) {
    const int on = 1;
    GPUQR_CUDA_CHECK(cudaMemcpyToSymbolAsync(g_chol_trace, &on, sizeof on, 0,
                                             cudaMemcpyHostToDevice, ctx.stream));
  }
  small_cholesky_kernel<T><<<1, kThreads, smem, ctx.stream>>>(
      g.data(), g.ld(), rinv.data(), rinv.ld(), static_cast<int>(n), shift_factor,
      status.data());
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  if (trace) {  // measurements only: waits for the kernel
    long long c[kClockSlots] = {};
    GPUQR_CUDA_CHECK(cudaMemcpyFromSymbolAsync(c, g_chol_clocks, sizeof c, 0,
                                               cudaMemcpyDeviceToHost, ctx.stream));
    GPUQR_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    std::fprintf(stderr, "small_cholesky n=%lld %s cycles: load %lld", static_cast<long long>(n),
                 sizeof(T) == 8 ? "double" : "float", c[1] - c[0]);
    long long prev = c[1];
    for (int p = 0; p < panels; ++p) {
      const int last = p + 1 == panels ? 1 : 3;  // the last panel stops after its factor
      std::fprintf(stderr, " | p%d", p);
      for (int q = 0; q < last; ++q) {
        std::fprintf(stderr, " %lld", c[2 + 3 * p + q] - prev);
        prev = c[2 + 3 * p + q];
      }
    }
    std::fprintf(stderr, " | R out %lld, diag inv %lld, blocks %lld, out %lld; total %lld\n",
                 c[14] - prev, c[15] - c[14], c[16] - c[15], c[17] - c[16], c[17] - c[0]);
  }
}

template void small_cholesky_inverse<float>(detail::ContextImpl&, MatrixView<float>,
                                            MatrixView<float>, double, VectorView<double>);
template void small_cholesky_inverse<double>(detail::ContextImpl&, MatrixView<double>,
                                             MatrixView<double>, double, VectorView<double>);

}  // namespace gpuqr::kernels::cuda
