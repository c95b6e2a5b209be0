// Register-resident TSQR leaves (included by src/cuda/tsqr_kernels.cu only).
//
// One thread block per matrix block of at most R = G * RPT rows and NC (>= n) columns. Thread
// t owns column col = t % NC and rows g*RPT .. g*RPT+RPT-1 of it (g = t / NC), in registers
// (a register array indexed by unrolled loop counters only). Householder QR as LAPACK's geqr2,
// two block barriers per column:
//   * the owners of column j have put it in shared memory (s_x), and for every column c the
//     owner of row j has put a(j, c) there (s_row);
//   * every thread forms d_c = sum_{r > j} x_r a(r, c) over its rows (c = j gives ||x||^2),
//     reduced over the threads of its column into `part`;      -- barrier --
//   * every thread computes the same beta, tau, scale = 1 / (alpha - beta) from those sums,
//     then w_c = tau (a(j, c) + scale d_c) and a(r, c) -= w_c scale x_r (r > j), -w_c (r = j).
// The dots use x unscaled (v = scale x): when ||x||^2 is outside a safe range (tiny or huge
// entries), every thread takes the same slow path: LAPACK's scaled norm read from s_x, and
// the dots again with v itself (one more barrier).
// The apply kernel keeps the block's V in shared memory and a chunk of NC columns of C in
// registers: one barrier per reflector (its partial sums alternate between two buffers).
#pragma once

#include <limits>

#include "src/core/tsqr_kernels.hpp"

namespace gpuqr::kernels::cuda::reg {

constexpr int kRpt = 32;  // rows per thread

/// Locates row r of block q of p: piece c, row i in it; false where the block has no row r.
template <class P>
__device__ bool locate(const P& p, std::int64_t q, int r, std::int64_t& c, std::int64_t& i) {
  if (p.group == 1) {
    c = q;
    i = r;
  } else {
    std::int64_t k = r / p.rows;
    const std::int64_t in = p.pieces_in(q);
    if (k >= in) k = in - 1;
    c = q * p.group + k;
    i = r - k * p.rows;
  }
  return i < p.piece_rows(c);
}

/// Column col (< cols) of block q into a[] (this thread's rows r0..), zeros where the block
/// has no row; `triangles`: only each piece's upper triangle; `top` >= 0: rows < top only.
template <class T, int RPT>
__device__ void load_rows(const Pieces<const T>& p, std::int64_t q, std::int64_t col0, int col,
                          int cols, int r0, bool triangles, int top, T (&a)[RPT]) {
#pragma unroll
  for (int u = 0; u < RPT; ++u) {
    std::int64_t c = 0, i = 0;
    const int r = r0 + u;
    const bool in = col < cols && (top < 0 || r < top) && locate(p, q, r, c, i) &&
                    (!triangles || i <= col);
    a[u] = in ? p.piece_ptr(c)[i + (col0 + col) * p.piece_ld(c)] : T(0);
  }
}

template <class T, int RPT>
__device__ void store_rows(const Pieces<T>& p, std::int64_t q, std::int64_t col0, int col,
                           int cols, int r0, const T (&a)[RPT]) {
  if (col >= cols) return;
#pragma unroll
  for (int u = 0; u < RPT; ++u) {
    std::int64_t c = 0, i = 0;
    if (locate(p, q, r0 + u, c, i)) p.piece_ptr(c)[i + (col0 + col) * p.piece_ld(c)] = a[u];
  }
}

/// Partial sums of one value per thread, reduced over the threads of each column: inside a
/// warp by shuffles (NC < 32: a warp spans several row groups), then one slot per warp
/// (NC < 32) or per row group (NC >= 32) in part[slot * NC + col].
template <int NC, int G>
struct Slots {
  static constexpr int kCount = NC >= 32 ? G : NC * G / 32;
  template <class T>
  __device__ static void put(T v, T* part, int col, int g) {
    if constexpr (NC < 32) {
#pragma unroll
      for (int off = 16; off >= NC; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
      if ((threadIdx.x & 31) < NC) part[(threadIdx.x >> 5) * NC + col] = v;
    } else {
      part[g * NC + col] = v;
    }
  }
  template <class T>
  __device__ static T sum(const T* part, int col) {
    T s = 0;
#pragma unroll
    for (int k = 0; k < kCount; ++k) s += part[k * NC + col];
    return s;
  }
};

/// ||x(j+1 .. R-1)|| as LAPACK's nrm2 (scaled by max|x|), read by every thread from s_x.
template <class T>
__device__ T scaled_norm(const T* x, int j, int rows) {
  T amax = 0;
  for (int r = j + 1; r < rows; ++r) amax = fmax(amax, fabs(x[r]));
  if (amax == T(0)) return T(0);
  T s = 0;
  for (int r = j + 1; r < rows; ++r) {
    const T y = x[r] / amax;
    s += y * y;
  }
  return amax * sqrt(s);
}

template <class T, int NC, int G>
__global__ void __launch_bounds__(NC* G)
    geqrf_kernel(Pieces<const T> src, Pieces<T> dst, int n, T* tau, std::int64_t ldtau,
                 bool stacked) {
  constexpr int RPT = kRpt, R = G * RPT, S = Slots<NC, G>::kCount;
  __shared__ T s_x[2][R];
  __shared__ T s_row[2][NC];
  __shared__ T part[2][S * NC];
  __shared__ T s_tau[NC];
  const std::int64_t q = blockIdx.x;
  const int col = threadIdx.x % NC, g = threadIdx.x / NC, r0 = g * RPT;
  const int rows = static_cast<int>(src.block_rows(q));
  const int kmax = min(rows, n);
  T a[RPT];
  load_rows<T, RPT>(src, q, 0, col, n, r0, stacked, -1, a);
  // Column 0 and row 0 into the exchange buffers.
  auto publish = [&](int j, int buf) {
    if (col == j) {
#pragma unroll
      for (int u = 0; u < RPT; ++u) s_x[buf][r0 + u] = a[u];
    }
    if (j >= r0 && j < r0 + RPT) {
#pragma unroll
      for (int u = 0; u < RPT; ++u)
        if (r0 + u == j) s_row[buf][col] = a[u];
    }
  };
  publish(0, 0);
  const T small = std::numeric_limits<T>::min() / std::numeric_limits<T>::epsilon();
  const T big = std::numeric_limits<T>::max() * std::numeric_limits<T>::epsilon();
  for (int j = 0; j < kmax; ++j) {
    const int buf = j & 1;
    const T* x = s_x[buf];
    __syncthreads();  // column j and row j published
    const bool active = col >= j && col < n;
    T d = 0;
    if (active) {
      T acc[4] = {0, 0, 0, 0};
#pragma unroll
      for (int u = 0; u < RPT; ++u)
        if (r0 + u > j) acc[u & 3] += x[r0 + u] * a[u];
      d = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    }
    Slots<NC, G>::put(d, part[buf], col, g);
    __syncthreads();  // the partial sums are in
    const T alpha = x[j];
    const T ssq = Slots<NC, G>::template sum<T>(part[buf], j);
    const bool safe = ssq >= small && ssq <= big;
    const T xnorm = safe ? sqrt(ssq) : scaled_norm(x, j, R);
    T t = 0, scale = 0, beta = alpha;
    if (xnorm != T(0)) {
      beta = -copysign(hypot(alpha, xnorm), alpha);
      t = (beta - alpha) / beta;
      scale = T(1) / (alpha - beta);
    }
    if (threadIdx.x == 0) s_tau[j] = t;
    if (t != T(0)) {  // uniform: every thread computed the same t
      T w = 0;
      if (safe) {
        w = t * (s_row[buf][col] + scale * Slots<NC, G>::template sum<T>(part[buf], col));
      } else {
        // Dots again with v = scale x itself, into the other buffer (last read before this
        // step's first barrier).
        T acc = 0;
        if (col > j && col < n) {
#pragma unroll
          for (int u = 0; u < RPT; ++u)
            if (r0 + u > j) acc += (scale * x[r0 + u]) * a[u];
        }
        Slots<NC, G>::put(acc, part[buf ^ 1], col, g);
        __syncthreads();
        w = t * (s_row[buf][col] + Slots<NC, G>::template sum<T>(part[buf ^ 1], col));
      }
      if (col > j && col < n) {
        const T ws = safe ? w * scale : w;
#pragma unroll
        for (int u = 0; u < RPT; ++u) {
          const int r = r0 + u;
          if (r > j) a[u] -= ws * (safe ? x[r] : scale * x[r]);
          else if (r == j) a[u] -= w;
        }
      } else if (col == j) {
#pragma unroll
        for (int u = 0; u < RPT; ++u) {
          const int r = r0 + u;
          if (r > j) a[u] *= scale;
          else if (r == j) a[u] = beta;
        }
      }
    }
    if (j + 1 < kmax) publish(j + 1, buf ^ 1);
  }
  __syncthreads();  // s_tau complete
  for (int j = threadIdx.x; j < n; j += blockDim.x) tau[q * ldtau + j] = j < kmax ? s_tau[j] : T(0);
  store_rows<T, RPT>(dst, q, 0, col, n, r0, a);
}

/// C_q := op(Q_q) C_q; V's block (rows x n, ld R) in dynamic shared memory.
template <class T, int NC, int G>
__global__ void __launch_bounds__(NC* G)
    apply_kernel(Pieces<const T> v, int n, const T* tau, std::int64_t ldtau, Pieces<T> c,
                 std::int64_t k, bool trans, bool top_only) {
  constexpr int RPT = kRpt, R = G * RPT, S = Slots<NC, G>::kCount;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* s_v = reinterpret_cast<T*>(smem_raw);
  __shared__ T part[2][S * NC];
  __shared__ T s_tau[NC];
  const std::int64_t q = blockIdx.x;
  const int col = threadIdx.x % NC, g = threadIdx.x / NC, r0 = g * RPT;
  const int rows = static_cast<int>(v.block_rows(q));
  const int kmax = min(rows, n);
  // V whole, coalesced: consecutive threads take consecutive rows.
  for (int e = threadIdx.x; e < R * n; e += blockDim.x) {
    const int r = e % R, j = e / R;
    std::int64_t pc = 0, i = 0;
    s_v[e] = r < rows && locate(v, q, r, pc, i) ? v.piece_ptr(pc)[i + j * v.piece_ld(pc)] : T(0);
  }
  for (int j = threadIdx.x; j < n; j += blockDim.x) s_tau[j] = j < kmax ? tau[q * ldtau + j] : T(0);
  const Pieces<const T> c_in = c.template as<const T>();
  int buf = 0;
  for (std::int64_t c0 = 0; c0 < k; c0 += NC) {
    const int kk = static_cast<int>(k - c0 < NC ? k - c0 : std::int64_t(NC));
    T a[RPT];
    load_rows<T, RPT>(c_in, q, c0, col, kk, r0, false, top_only ? n : -1, a);
    __syncthreads();  // V and tau loaded; the last chunk's sums read
    for (int step = 0; step < kmax; ++step) {
      const int j = trans ? step : kmax - 1 - step;
      const T tj = s_tau[j];
      if (tj == T(0)) continue;  // uniform
      const T* vj = s_v + j * R;
      T acc[4] = {0, 0, 0, 0};
#pragma unroll
      for (int u = 0; u < RPT; ++u) {
        const int r = r0 + u;
        if (r > j) acc[u & 3] += vj[r] * a[u];
        else if (r == j) acc[u & 3] += a[u];
      }
      Slots<NC, G>::put((acc[0] + acc[1]) + (acc[2] + acc[3]), part[buf], col, g);
      __syncthreads();  // sums in; the buffer written next was last read before this barrier
      const T w = tj * Slots<NC, G>::template sum<T>(part[buf], col);
#pragma unroll
      for (int u = 0; u < RPT; ++u) {
        const int r = r0 + u;
        if (r > j) a[u] -= w * vj[r];
        else if (r == j) a[u] -= w;
      }
      buf ^= 1;
    }
    store_rows<T, RPT>(c, q, c0, col, kk, r0, a);
  }
}

}  // namespace gpuqr::kernels::cuda::reg
