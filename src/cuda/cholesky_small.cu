// The one-block Cholesky factor and inverse of a small Gram matrix (src/cuda/cholesky_small.hpp).
//
// G (n x n, n <= 128) is padded to np = 32 ceil(n / 32) with the identity (the padding stays
// decoupled: its rows of R are the identity's) and held in shared memory, column-major with
// ld = np + 1. Only G's upper triangle is read, as potrf with CUBLAS_FILL_MODE_UPPER does.
// Per 32-column panel p (c0 = 32 p), right-looking, as LAPACK's blocked potrf:
//   1. warp 0 factors the diagonal block in registers (lane j holds column c0 + j), the
//      pivot broadcast by a shuffle, row k of R through shared memory;
//   2. R's row panel solves R_pp^T Y = G(panel rows, columns right of the panel) by forward
//      substitution (backward stable, as potrf's TRSM): a column per thread in registers;
//   3. the block updates the trailing upper triangle: G -= R_p^T R_p (a SYRK of 32 rows),
//      a warp per 4 columns.
// R is then written out; each diagonal block is inverted by one warp (column-oriented back
// substitution, lane j column j), and R^{-1}'s off-diagonal blocks are formed block column by
// block column as LAPACK's trtri does: X(0:c, c:c+32) = -X(0:c, 0:c) R(0:c, c:c+32) X_cc.
// Full unrolls (register arrays) only for the three 32 x 32 triangular pieces; a first
// version unrolled everywhere (245 KB of SASS) spent 357k cycles at n = 128, most of them
// in its longest straight-line code.
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
#include "src/cuda/reduce_ops.cuh"

namespace gpuqr::kernels::cuda {
namespace {

using cuda_detail::DeviceGuard;

constexpr int kNb = 32;  // panel width = warp size
// 12 warps: 168 registers a thread, enough for the diagonal block's column in them.
constexpr int kThreads = 384;
constexpr int kWarps = kThreads / 32;
constexpr unsigned kFull = 0xffffffffu;

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

template <class T>
__global__ void __launch_bounds__(kThreads, 1)
    small_cholesky_kernel(T* __restrict__ g, std::int64_t ldg, T* __restrict__ rinv,
                          std::int64_t ldi, int n, double shift_factor, double* status) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __shared__ double scratch[kWarps];
  __shared__ int breakdown;
  __shared__ T rdiag[kSmallCholeskyMaxCols];  // 1 / R(i, i)
  __shared__ T rowbuf[2][kNb];                // row k of the diagonal block's R (k & 1)
  const int panels = (n + kNb - 1) / kNb, np = panels * kNb, ld = np + 1;
  T* s = reinterpret_cast<T*>(smem_raw);  // np x np, ld
  T* xd = s + np * ld;                    // the diagonal blocks' inverses, 32 x 32 (ld 33) each
  T* tmp = xd + panels * kNb * 33;        // (np - 32) x 32: the inverse's block products
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const bool trace = g_chol_trace != 0;
  stamp(trace, 0);
  auto S = [&](int i, int j) -> T& { return s[i + j * ld]; };

  // ---- G into shared memory (identity padding), its status, the shift ----
  // 16 loads in flight per thread (G is in L2, just written: latency, not bandwidth).
  constexpr int kCols = 4;
  double off = 0.0, tr = 0.0;
  for (int j0 = warp * kCols; j0 < np; j0 += kWarps * kCols) {
    T v[kCols][4];
#pragma unroll
    for (int c = 0; c < kCols; ++c)
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int i = lane + 32 * r, j = j0 + c;
        v[c][r] = i == j ? T(1) : T(0);
        if (i < n && j < n) v[c][r] = g[i + std::int64_t(j) * ldg];
      }
#pragma unroll
    for (int c = 0; c < kCols; ++c)
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int i = lane + 32 * r, j = j0 + c;
        if (i >= np || j >= np) continue;
        if (i < n && j < n) {
          const double d = double(v[c][r]) - (i == j ? 1.0 : 0.0);
          off += d * d;
          if (i == j) tr += double(v[c][r]);
        }
        S(i, j) = v[c][r];
      }
  }
  off = block_all(off, SumOp(), scratch);
  tr = block_all(tr, SumOp(), scratch);
  // No shift asked, none added (a NaN trace must not turn "none" into NaN).
  const double shift = shift_factor != 0.0 ? shift_factor * tr : 0.0;
  if (tid == 0) breakdown = 0;
  if (shift != 0.0)
    for (int i = tid; i < n; i += kThreads) S(i, i) = T(double(S(i, i)) + shift);
  __syncthreads();
  stamp(trace, 1);

  // ---- the factorization, panel by panel ----
  int bk = 0;  // warp 0: the first breakdown's 1-based column, 0 while none
  for (int p = 0; p < panels; ++p) {
    const int c0 = p * kNb, c1 = c0 + kNb, rest = np - c1;
    if (warp == 0) {
      // 1. The diagonal block by warp 0, lane j holding column c0 + j in registers; per
      //    column k the pivot by a shuffle, row k of R through shared memory (double
      //    buffered: one warp barrier a column).
      T d[kNb];
#pragma unroll
      for (int k = 0; k < kNb; ++k) d[k] = S(c0 + k, c0 + lane);
      // The pivot chain: lane k + 1 computes the next pivot from its own registers (its
      // R(k, k + 1) is row k's entry it just scaled), so that the next shuffle waits for no
      // shared-memory round trip; the regular update below gives d[k + 1] the same value.
      T next = d[0];
#pragma unroll
      for (int k = 0; k < kNb; ++k) {
        const T piv = __shfl_sync(kFull, next, k);
        // piv is the same in every lane, and so is bk: no lane reads shared `breakdown` here.
        if (!(piv > T(0)) && bk == 0 && c0 + k < n) bk = c0 + k + 1;
        // 1 / sqrt first (potrf too scales the row by the reciprocal), R(k, k) from it; NaN
        // past a breakdown, as potrf's leftovers.
        const T inv = rsqrt(piv);
        d[k] = lane == k ? piv * inv : d[k] * inv;  // R(k, lane) for lane >= k
        if (k + 1 < kNb) next = d[k + 1] - d[k] * d[k];
        rowbuf[k & 1][lane] = d[k];
        if (lane == 0) rdiag[c0 + k] = inv;
        __syncwarp();
#pragma unroll
        for (int i = k + 1; i < kNb; ++i) {
          if (lane >= i) d[i] -= rowbuf[k & 1][i] * d[k];
          // At most 8 of row k's loads in flight (measured: 7.7k cycles a panel against 9.0k
          // with every load hoisted, session 16 runs 5 and 6).
          if ((i & 7) == 7) asm volatile("" ::: "memory");
        }
      }
#pragma unroll
      for (int k = 0; k < kNb; ++k)
        if (k <= lane) S(c0 + k, c0 + lane) = d[k];
      if (lane == 0) breakdown = bk;  // the barrier below publishes it
    }
    __syncthreads();
    stamp(trace, 2 + 3 * p);
    if (rest == 0) break;
    // 2. R's row panel: R_pp^T Y = G(c0:c1, c1:np) by forward substitution (backward stable,
    //    as potrf's TRSM): a column per thread in registers, R_pp's rows read by broadcast.
    for (int j = c1 + tid; j < np; j += kThreads) {
      T y[kNb];
#pragma unroll
      for (int k = 0; k < kNb; ++k) y[k] = S(c0 + k, j);
#pragma unroll
      for (int k = 0; k < kNb; ++k) {
        y[k] *= rdiag[c0 + k];
#pragma unroll
        for (int l = k + 1; l < kNb; ++l) {
          y[l] -= S(c0 + k, c0 + l) * y[k];
          if ((l & 7) == 7) asm volatile("" ::: "memory");  // as above (5.0k against 5.6k)
        }
      }
#pragma unroll
      for (int k = 0; k < kNb; ++k) S(c0 + k, j) = y[k];
    }
    __syncthreads();
    stamp(trace, 3 + 3 * p);
    // 3. The trailing upper triangle: G(i, j) -= sum_k R(c0 + k, i) R(c0 + k, j), c1 <= i <= j;
    //    a warp per group of 4 columns, lane = row, R(k, i) read once for the 4.
    for (int jg = warp; jg < rest / 4; jg += kWarps) {
      const int j0 = c1 + 4 * jg;
      for (int i = c1 + lane; i <= j0 + 3; i += 32) {
        T a0 = T(0), a1 = T(0), a2 = T(0), a3 = T(0);
#pragma unroll 8
        for (int k = c0; k < c1; ++k) {
          const T pi = S(k, i);
          a0 += pi * S(k, j0);
          a1 += pi * S(k, j0 + 1);
          a2 += pi * S(k, j0 + 2);
          a3 += pi * S(k, j0 + 3);
        }
        if (i <= j0) S(i, j0) -= a0;
        if (i <= j0 + 1) S(i, j0 + 1) -= a1;
        if (i <= j0 + 2) S(i, j0 + 2) -= a2;
        S(i, j0 + 3) -= a3;
      }
    }
    __syncthreads();
    stamp(trace, 4 + 3 * p);
  }

  // ---- R out (zeros below the diagonal) and min / max |R(i, i)| by the warps past `panels`,
  //      while warp b < panels inverts diagonal block b (lane j its column j, column-oriented
  //      back substitution: x_i, then x_i's multiple of R's column i out of the rows above) ----
  bk = breakdown;  // final: the loop ended on a barrier
  double lo = INFINITY, hi = 0.0;
  if (warp >= panels) {
    for (int j = warp - panels; j < n; j += kWarps - panels)
      for (int i = lane; i < n; i += 32) {
        g[i + std::int64_t(j) * ldg] = i <= j ? S(i, j) : T(0);
        if (i == j) {
          const double d = fabs(double(S(i, i)));
          lo = d < lo ? d : lo;
          hi = d > hi ? d : hi;
        }
      }
  } else if (bk == 0) {
    const int c0 = warp * kNb;
    T x[kNb];
#pragma unroll
    for (int l = 0; l < kNb; ++l) x[l] = l == lane ? T(1) : T(0);
#pragma unroll
    for (int i = kNb - 1; i >= 0; --i) {
      x[i] *= rdiag[c0 + i];
#pragma unroll
      for (int l = 0; l < i; ++l) x[l] -= S(c0 + l, c0 + i) * x[i];  // broadcast reads
    }
    T* xc = xd + warp * kNb * 33 + lane * 33;
#pragma unroll
    for (int l = 0; l < kNb; ++l) xc[l] = x[l];
  }
  lo = block_all(lo, MinOp(), scratch);
  hi = block_all(hi, MaxOp(), scratch);  // its barriers end both jobs
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
  stamp(trace, 15);
  // The diagonal blocks of s become X's (R's are out already).
  for (int e = tid; e < panels * kNb * kNb; e += kThreads) {
    const int b = e >> 10, i = e & 31, j = (e >> 5) & 31;
    S(b * kNb + i, b * kNb + j) = xd[b * kNb * 33 + i + j * 33];
  }
  __syncthreads();
  // ---- off-diagonal blocks, block column by block column (LAPACK's trtri):
  //      T = X(0:c, 0:c) R(0:c, c:c+32), then X(0:c, c:c+32) = -T X_bb ----
  for (int b = 1; b < panels; ++b) {
    const int c = b * kNb, items = 8 * b;  // 8 groups of 4 columns x b row blocks of 32
    for (int it = warp; it < items; it += kWarps) {
      const int q0 = 4 * (it & 7), r = (it >> 3) * kNb + lane;
      T a0 = T(0), a1 = T(0), a2 = T(0), a3 = T(0);
#pragma unroll 8
      for (int k = (it >> 3) * kNb; k < c; ++k) {
        const T xv = k >= r ? S(r, k) : T(0);  // X upper: the block's rows past r are zero
        a0 += xv * S(k, c + q0);
        a1 += xv * S(k, c + q0 + 1);
        a2 += xv * S(k, c + q0 + 2);
        a3 += xv * S(k, c + q0 + 3);
      }
      tmp[r + (q0 + 0) * c] = a0;
      tmp[r + (q0 + 1) * c] = a1;
      tmp[r + (q0 + 2) * c] = a2;
      tmp[r + (q0 + 3) * c] = a3;
    }
    __syncthreads();
    const T* xb = xd + b * kNb * 33;
    for (int it = warp; it < items; it += kWarps) {
      const int q0 = 4 * (it & 7), r = (it >> 3) * kNb + lane;
      T a0 = T(0), a1 = T(0), a2 = T(0), a3 = T(0);
#pragma unroll 4
      for (int l = 0; l < q0 + 4; ++l) {  // X_bb upper: zeros below its diagonal
        const T t = tmp[r + l * c];
        a0 += t * xb[l + (q0 + 0) * 33];
        a1 += t * xb[l + (q0 + 1) * 33];
        a2 += t * xb[l + (q0 + 2) * 33];
        a3 += t * xb[l + (q0 + 3) * 33];
      }
      S(r, c + q0) = -a0;
      S(r, c + q0 + 1) = -a1;
      S(r, c + q0 + 2) = -a2;
      S(r, c + q0 + 3) = -a3;
    }
    __syncthreads();
  }
  stamp(trace, 16);

  // ---- R^{-1} out (zeros below the diagonal), its norm and finiteness, the status ----
  double inv = 0.0, bad = 0.0;
  for (int j = warp; j < n; j += kWarps)
    for (int i = lane; i < n; i += 32) {
      T v = T(0);
      if (i <= j) {
        v = S(i, j);
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
  GPUQR_CHECK_ARG(
      n >= 1 && n <= kSmallCholeskyMaxCols && g.cols() == n && rinv.rows() == n && rinv.cols() == n,
      "small_cholesky_inverse: G is " + std::to_string(n) + " x " + std::to_string(g.cols()) +
          ", R^{-1} " + std::to_string(rinv.rows()) + " x " + std::to_string(rinv.cols()) +
          "; needs square, 1 <= n <= 128");
  DeviceGuard guard(ctx.device);
  const int panels = static_cast<int>((n + kNb - 1) / kNb), np = panels * kNb;
  const std::size_t smem =
      (std::size_t(np) * (np + 1) + std::size_t(panels) * kNb * 33 + std::size_t(np - kNb) * kNb) *
      sizeof(T);
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
    std::fprintf(stderr, " | R out + diag inv %lld, blocks %lld, out %lld; total %lld\n",
                 c[14] - prev, c[16] - c[15], c[17] - c[16], c[17] - c[0]);
  }
}

template void small_cholesky_inverse<float>(detail::ContextImpl&, MatrixView<float>,
                                            MatrixView<float>, double, VectorView<double>);
template void small_cholesky_inverse<double>(detail::ContextImpl&, MatrixView<double>,
                                             MatrixView<double>, double, VectorView<double>);

}  // namespace gpuqr::kernels::cuda
