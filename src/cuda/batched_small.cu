// The register kernel of the batched QR: small matrices (n <= 32, m <= 64), a matrix per
// group of W*S lanes (W = 8/16/32 columns, each column on S = 1 or 2 lanes), 32 / (W*S)
// matrices per warp, in one pass over memory.
//
// Persistent warps: about as many warps as stay resident loop over the batch, each with two
// shared-memory buffers. While a warp factors matrix t (columns in registers), matrix t+1 is
// already on its way into the other buffer (cp.async), so memory and arithmetic overlap; the
// buffer matrix t came from takes its reflectors and then its way back to global memory.
//
// Buffer layout: a matrix's slot holds W columns of R rows as 16-byte granules, XOR-swizzled
// within each 128 bytes (elem_at), so that lanes reading the same rows of their own columns,
// and lanes reading consecutive rows of one column, hit distinct banks; copies in and out are
// whole granules when the matrix's columns are 16-byte aligned, else single elements.
//
// Per column j (a compile-time step: register indices and the rows >= j are constants):
//  1. the pivot lane(s) store column j's rows >= j into the slot;
//  2. LAPACK's larfg across the group: each lane reads its rows, the sum of squares is a
//     shuffle reduction, every lane computes beta, tau and the scale redundantly (the sums
//     are bit-identical on all lanes) and writes its entries of v back over x. Columns whose
//     sum of squares lies outside [tiny / eps, huge] take a scaled norm instead (LAPACK's
//     safe scaling; warp-uniform, rare, out of line); x == 0 gives tau = 0. On the common
//     path the square root and the divisions are a reciprocal square root and a reciprocal
//     refined by Newton steps, inline and without slow paths (larfg_scalars);
//  3. every lane owning a column to the right applies H_j = I - tau v v^T to it: the dot
//     product in four independent partial sums (plus one shuffle when S = 2), then the update.
// Only __syncwarp between the phases: the lanes of a group never wait on other warps.
// Registers: a lane's column (R / S entries), v reread from shared memory for the update
// when keeping it would double that (SmallCfg::kReload), descriptors reread where used.
// At the end each lane writes its column's rows <= c (R) into the slot over the stale part,
// and the slot is stored coalesced; tau goes out from the registers of the pivot lanes.
//
// The classes with 32 < m <= 64 put a column on two lanes: each lane a contiguous half of its
// rows (SmallCfg's H, 16-byte loads of v), or (GPUQR_BATCHED_SMALL_TALL=0) every other row.
// For 8 < n <= 16 the default is instead the rows kernel (batched_rows_small.cu): a lane
// holds two rows of every column, v stays in registers, and the dot products are summed over
// the warp through a table in shared memory (see tall_layout for the knob and measurements).
//
// The previous kernel (a warp per matrix, one matrix per warp and launch, the pivot lane
// running larfg alone; GPUQR_BATCHED_SMALL=0) was removed in session 11; session 8's
// measurements against it are in docs/PERF.md.
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>

#include "src/core/batched_kernels.hpp"
#include "src/cuda/batched_internal.hpp"
#include "src/cuda/batched_warp.cuh"
#include "src/cuda/check.hpp"
#include "src/cuda/larfg_scalars.cuh"

namespace gpuqr::kernels::cuda {
namespace {
std::atomic<int> small_tall_override{-1};
}  // namespace

void set_batched_small_tall(int layout) { small_tall_override.store(layout); }

namespace batched {
namespace {

using namespace warp;

/// A class's kernel shape: W columns, R rows (a multiple of the granule), S lanes a column;
/// H (S = 2 only): a lane holds one contiguous half of its column's rows (s * R / 2 ..),
/// else rows s, s + S, ... (interleaved).
template <class T, int W, int R, int S, bool H = false>
struct SmallCfg {
  static constexpr int kR = R, kS = S;
  static constexpr bool kHalves = H;
  static constexpr int kRL = R / S;                // rows a lane holds in registers
  static constexpr int kGroup = W * S;             // lanes per matrix
  static constexpr int kSlots = 32 / kGroup;       // matrices per warp
  static constexpr int kGe = 16 / int(sizeof(T));  // elements per 16-byte granule
  static constexpr int kGcol = R / kGe;            // granules per column
  static constexpr int kKeyDiv = kGcol > 8 ? kGcol : 8;
  static constexpr int kSlotElems = W * R;
  static constexpr int kBufElems = kSlots * kSlotElems;  // one buffer of one warp
  static constexpr int kWarpBytes = 2 * kBufElems * int(sizeof(T));
  // Blocks of at most 16 KiB: the per-block shared memory reserve costs little, and blocks
  // of one warp for the largest shapes pack the SM best.
  static constexpr int kWarps = kWarpBytes >= 16384 ? 1 : (kWarpBytes >= 8192 ? 2 : 4);
  static constexpr int kThreads = 32 * kWarps;
  // Resident warps per SM the register budget aims at (__launch_bounds__): 16, fewer for
  // the shapes whose columns alone take 128 registers or more.
  static constexpr int kColumnBytes = kRL * int(sizeof(T));
  // (Built for 24 warps, 16 x 16 FP64 spills a little at 80 registers and measured slower:
  // 0.80 ms against 0.75, H100, session 8 run 9.)
  static constexpr int kTargetWarps = kColumnBytes >= 512 ? 8 : (kColumnBytes >= 256 ? 12 : 16);
  static constexpr int kMinBlocks = kTargetWarps / kWarps;
  static constexpr int kXRows = (R + kGroup - 1) / kGroup;  // larfg rows per lane
  static constexpr int kSteps = W < R ? W : R;               // k = min(m, n) <= min(W, R)
  // Whether the update reads v from shared memory again instead of keeping the dot
  // product's copy alive (which would double the registers of the larger shapes).
  static constexpr bool kReload = kColumnBytes >= 256;
  static_assert(kGroup <= 32 && 32 % kGroup == 0 && W % 8 == 0 && R % kGe == 0 && R % S == 0);
  // Halves: the second half's entries sit kRL elements after the first's (the swizzle key,
  // the column's, and the XOR stay below the half's granule bit), and the diagonal of every
  // step lies in the first half.
  static_assert(!H || (S == 2 && kGcol >= 8 && kRL / kGe >= 8 && kSteps <= kRL));
};

/// Offset of entry (i, c) in a slot: granule l = c * kGcol + i / kGe, swizzled within its
/// 8-granule (128-byte) line by the column (kGcol >= 8) or by the line (kGcol < 8).
template <class C>
__device__ __forceinline__ int elem_at(int c, int i) {
  const unsigned l = unsigned(c) * C::kGcol + unsigned(i) / C::kGe;
  return int((l ^ ((l / C::kKeyDiv) & 7u)) * C::kGe + unsigned(i) % C::kGe);
}

// Loads the compiler may not merge with an earlier load of the same address (the update's
// second read of v, see SmallCfg::kReload).
__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void reload_granule(const double* p, double (&v)[2]) {
  asm volatile("ld.volatile.shared.v2.f64 {%0, %1}, [%2];"
               : "=d"(v[0]), "=d"(v[1])
               : "r"(smem_addr(p)));
}
__device__ __forceinline__ void reload_granule(const float* p, float (&v)[4]) {
  asm volatile("ld.volatile.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v[0]), "=f"(v[1]), "=f"(v[2]), "=f"(v[3])
               : "r"(smem_addr(p)));
}
__device__ __forceinline__ double reload(const double* p) {
  double v;
  asm volatile("ld.volatile.shared.f64 %0, [%1];" : "=d"(v) : "r"(smem_addr(p)));
  return v;
}
__device__ __forceinline__ float reload(const float* p) {
  float v;
  asm volatile("ld.volatile.shared.f32 %0, [%1];" : "=f"(v) : "r"(smem_addr(p)));
  return v;
}
__device__ __forceinline__ void copy_granule(double* dst, const double* src) {
  *reinterpret_cast<double2*>(dst) = *reinterpret_cast<const double2*>(src);
}
__device__ __forceinline__ void copy_granule(float* dst, const float* src) {
  *reinterpret_cast<float4*>(dst) = *reinterpret_cast<const float4*>(src);
}

/// Whether the columns of d start on 16-byte boundaries (whole-granule copies).
template <class C, class T>
__device__ __forceinline__ bool granules_ok(const Desc<T>& d) {
  return reinterpret_cast<std::uintptr_t>(d.a) % 16 == 0 && d.ld % C::kGe == 0;
}

/// Column of flat index e over columns of `per` units: e / per through a float reciprocal,
/// exact here (e < 2^12, per <= 64: (e + 0.5) / per stays 0.5 / per away from an integer).
__device__ __forceinline__ int column_of(int e, float inv_per) {
  return __float2int_rz((float(e) + 0.5f) * inv_per);
}

/// Starts the copy of d into its slot (cp.async, committed by the caller). Granule copies
/// zero-fill the rows past m in a column's last granule; nothing reads the rest.
template <class C, class T>
__device__ __forceinline__ void fetch(const Desc<T>& d, T* slot, int gl) {
  if (granules_ok<C>(d)) {
    const int per = (d.m + C::kGe - 1) / C::kGe, total = per * d.n;
    const float inv = __frcp_rn(float(per));
#pragma unroll 1
    for (int e = gl; e < total; e += C::kGroup) {
      const int c = column_of(e, inv), g = e - c * per;
      const int rows = min(C::kGe, d.m - g * C::kGe);
      __pipeline_memcpy_async(slot + elem_at<C>(c, g * C::kGe), d.a + c * d.ld + g * C::kGe, 16,
                              (C::kGe - rows) * sizeof(T));
    }
  } else {
    const int total = d.m * d.n;
    const float inv = __frcp_rn(float(d.m));
#pragma unroll 1
    for (int e = gl; e < total; e += C::kGroup) {
      const int c = column_of(e, inv), i = e - c * d.m;
      __pipeline_memcpy_async(slot + elem_at<C>(c, i), d.a + c * d.ld + i, sizeof(T));
    }
  }
}

/// Stores the slot back into d (rows < m only), coalesced.
template <class C, class T>
__device__ __forceinline__ void store(const Desc<T>& d, const T* slot, int gl) {
  if (granules_ok<C>(d)) {
    const int per = (d.m + C::kGe - 1) / C::kGe, total = per * d.n;
    const float inv = __frcp_rn(float(per));
#pragma unroll 1
    for (int e = gl; e < total; e += C::kGroup) {
      const int c = column_of(e, inv), g = e - c * per;
      const int rows = min(C::kGe, d.m - g * C::kGe);
      const T* src = slot + elem_at<C>(c, g * C::kGe);
      T* dst = d.a + c * d.ld + g * C::kGe;
      if (rows == C::kGe) {
        copy_granule(dst, src);
      } else {
#pragma unroll
        for (int h = 0; h < C::kGe - 1; ++h)
          if (h < rows) dst[h] = src[h];
      }
    }
  } else {
    const int total = d.m * d.n;
    const float inv = __frcp_rn(float(d.m));
#pragma unroll 1
    for (int e = gl; e < total; e += C::kGroup) {
      const int c = column_of(e, inv), i = e - c * d.m;
      d.a[c * d.ld + i] = slot[elem_at<C>(c, i)];
    }
  }
}

/// This lane's rows (r * S + s) of column `col` from the slot; zeros past m and n.
template <class C, class T>
__device__ __forceinline__ void load_column(const T* slot, int m, int n, int col, int s,
                                            T (&a)[C::kRL]) {
  const bool mine = col < n;
  if constexpr (C::kHalves) {
    const T* half = slot + s * C::kRL;
#pragma unroll
    for (int g = 0; g < C::kRL / C::kGe; ++g) {
      T v[C::kGe];
      load_granule(half + elem_at<C>(col, g * C::kGe), v);
#pragma unroll
      for (int h = 0; h < C::kGe; ++h) {
        const int r = g * C::kGe + h;
        a[r] = mine && s * C::kRL + r < m ? v[h] : T(0);
      }
    }
  } else if constexpr (C::kS == 1) {
#pragma unroll
    for (int g = 0; g < C::kGcol; ++g) {
      T v[C::kGe];
      load_granule(slot + elem_at<C>(col, g * C::kGe), v);
#pragma unroll
      for (int h = 0; h < C::kGe; ++h) {
        const int i = g * C::kGe + h;
        a[i] = mine && i < m ? v[h] : T(0);
      }
    }
  } else {
#pragma unroll
    for (int r = 0; r < C::kRL; ++r) {
      const T v = slot[elem_at<C>(col, r * C::kS) + s];
      a[r] = mine && r * C::kS + s < m ? v : T(0);
    }
  }
}

/// What one step knows of its matrix and lane.
struct Lane {
  int m, n, k, kmax, col, s, gl;
};

/// A lane's rows of a column in larfg (by value, for the out-of-line path).
template <class T, int N>
struct Rows {
  T v[N];
};

template <class T, int N>
struct Reflector {
  bool reflect;
  T beta, tau;
  Rows<T, N> v;
};

/// larfg for columns whose squares under- or overflow (or x == 0): ||x|| scaled by max |x_i|
/// over the group of G lanes, beta from hypot, v = x / (alpha - beta) by division (1 / (alpha
/// - beta) may overflow when beta is tiny). Out of line: rare, and it keeps each unrolled step
/// short. All lanes of the warp call it.
template <int G, class T, int N>
__device__ __noinline__ Reflector<T, N> larfg_scaled(T alpha, Rows<T, N> x) {
  T amax = 0;
#pragma unroll
  for (int t = 0; t < N; ++t) amax = fmax(amax, fabs(x.v[t]));
  amax = group_max<G>(amax);
  T scaled = 0;
  if (amax > T(0)) {
#pragma unroll
    for (int t = 0; t < N; ++t) {
      const T y = x.v[t] / amax;
      scaled += y * y;
    }
  }
  const T xnorm = amax * sqrt(group_sum<G>(scaled));
  Reflector<T, N> h{xnorm != T(0), alpha, T(0), x};
  if (h.reflect) {
    h.beta = -copysign(hypot(alpha, xnorm), alpha);
    h.tau = (h.beta - alpha) / h.beta;
    const T denom = alpha - h.beta;
#pragma unroll
    for (int t = 0; t < N; ++t) h.v.v[t] = x.v[t] / denom;
  }
  return h;
}

/// Entry of v_J in this lane's register row r (row r * S + s): 0 above J, 1 at J, else the
/// slot's. Only called for r >= J / S.
template <class C, int J, bool kAgain, class T>
__device__ __forceinline__ T v_entry(const T* slot, int r, int s) {
  const T* p = slot + elem_at<C>(J, r * C::kS) + s;
  const T v = kAgain ? reload(p) : *p;
  if (r > J / C::kS) return v;
  const int i = r * C::kS + s;
  return i < J ? T(0) : (i == J ? T(1) : v);
}

/// H_J applied to this lane's column: dot = v^T a in four independent partial sums, then
/// a -= tau dot v. Lanes not applying still join the pair shuffle (S = 2).
template <class C, int J, class T>
__device__ __forceinline__ void apply_reflector(const T* slot, bool apply, T tau, int s,
                                                T (&a)[C::kRL]) {
  if constexpr (C::kHalves) {
    // v_J is whole in the slot (zeros above J, 1 at J: see reflect_step), so every row of
    // both halves takes the same unmasked code: 16-byte loads at offsets fixed per step from
    // this half's base.
    const T* half = slot + s * C::kRL;
    T dot = 0;
    if (apply) {
      T part[4] = {T(0), T(0), T(0), T(0)};
#pragma unroll
      for (int g = 0; g < C::kRL / C::kGe; ++g) {
        T v[C::kGe];
        load_granule(half + elem_at<C>(J, g * C::kGe), v);
#pragma unroll
        for (int h = 0; h < C::kGe; ++h) part[h & 3] += v[h] * a[g * C::kGe + h];
      }
      dot = (part[0] + part[1]) + (part[2] + part[3]);
    }
    dot += __shfl_xor_sync(kFull, dot, 1);
    if (apply) {
      const T w = tau * dot;
#pragma unroll
      for (int g = 0; g < C::kRL / C::kGe; ++g) {
        T v[C::kGe];
        reload_granule(half + elem_at<C>(J, g * C::kGe), v);
#pragma unroll
        for (int h = 0; h < C::kGe; ++h) a[g * C::kGe + h] -= w * v[h];
      }
    }
    return;
  }
  constexpr int kFirst = J / C::kS;
  T dot = 0;
  if (apply) {
    T part[4] = {T(0), T(0), T(0), T(0)};
    if constexpr (C::kS == 1) {
#pragma unroll
      for (int g = J / C::kGe; g < C::kGcol; ++g) {
        T v[C::kGe];
        load_granule(slot + elem_at<C>(J, g * C::kGe), v);
#pragma unroll
        for (int h = 0; h < C::kGe; ++h) {
          const int i = g * C::kGe + h;
          if (i > J) part[i & 3] += v[h] * a[i];
          if (i == J) part[i & 3] += a[i];
        }
      }
    } else {
#pragma unroll
      for (int r = kFirst; r < C::kRL; ++r) part[r & 3] += v_entry<C, J, false>(slot, r, s) * a[r];
    }
    dot = (part[0] + part[1]) + (part[2] + part[3]);
  }
  if constexpr (C::kS == 2) dot += __shfl_xor_sync(kFull, dot, 1);
  if (apply) {
    const T w = tau * dot;
    if constexpr (C::kS == 1) {
#pragma unroll
      for (int g = J / C::kGe; g < C::kGcol; ++g) {
        T v[C::kGe];
        if constexpr (C::kReload) {
          reload_granule(slot + elem_at<C>(J, g * C::kGe), v);
        } else {
          load_granule(slot + elem_at<C>(J, g * C::kGe), v);
        }
#pragma unroll
        for (int h = 0; h < C::kGe; ++h) {
          const int i = g * C::kGe + h;
          if (i > J) a[i] -= w * v[h];
          if (i == J) a[i] -= w;
        }
      }
    } else {
#pragma unroll
      for (int r = kFirst; r < C::kRL; ++r) a[r] -= w * v_entry<C, J, C::kReload>(slot, r, s);
    }
  }
}

/// Step J of the factorization (see the file comment).
template <class C, int J, class T>
__device__ __forceinline__ void reflect_step(T* slot, const Lane& q, T (&a)[C::kRL], T& my_tau) {
  if (J >= q.kmax) return;  // warp-uniform
  // Lane-dependent offsets are recomputed each step (opaque), not hoisted and held for all.
  const int gl = opaque(q.gl), col = opaque(q.col);
  const bool active = J < q.k, pivot = active && col == J;
  // 1. Column J's rows >= J into the slot (rows past m are zeros in the registers).
  if (pivot) {
    if constexpr (C::kHalves) {
      T* half = slot + q.s * C::kRL;
#pragma unroll
      for (int g = 0; g < C::kRL / C::kGe; ++g) {
        T v[C::kGe];
#pragma unroll
        for (int h = 0; h < C::kGe; ++h) v[h] = a[g * C::kGe + h];
        store_granule(half + elem_at<C>(J, g * C::kGe), v);
      }
    } else if constexpr (C::kS == 1) {
#pragma unroll
      for (int g = J / C::kGe; g < C::kGcol; ++g) {
        T v[C::kGe];
#pragma unroll
        for (int h = 0; h < C::kGe; ++h) v[h] = a[g * C::kGe + h];
        store_granule(slot + elem_at<C>(J, g * C::kGe), v);
      }
    } else {
#pragma unroll
      for (int r = J / C::kS; r < C::kRL; ++r) slot[elem_at<C>(J, r * C::kS) + q.s] = a[r];
    }
  }
  __syncwarp();  // column J is visible to the group

  // 2. larfg: lane gl holds rows gl, gl + group, ... of x (rows > J). With one lane per
  // column, the pivot lane sums the squares from its registers (four independent sums) and
  // one shuffle hands the sum to the group, instead of a log2(group)-level reduction after
  // the reload.
  Rows<T, C::kXRows> x;
  T ss = 0;
#pragma unroll
  for (int t = 0; t < C::kXRows; ++t) {
    const int i = gl + t * C::kGroup;
    x.v[t] = 0;
    if (i > J && i < C::kR) x.v[t] = slot[elem_at<C>(J, i)];
    if constexpr (C::kS != 1) ss += x.v[t] * x.v[t];
  }
  const T alpha = slot[elem_at<C>(J, J)];
  if constexpr (C::kS == 1) {
    T part[4] = {T(0), T(0), T(0), T(0)};
#pragma unroll
    for (int i = J + 1; i < C::kRL; ++i) part[i & 3] += a[i] * a[i];
    const int lane = static_cast<int>(threadIdx.x & 31);
    ss = __shfl_sync(kFull, (part[0] + part[1]) + (part[2] + part[3]), lane - gl + J);
  } else {
    ss = group_sum<C::kGroup>(ss);
  }
  const bool empty = J + 1 >= q.m;  // no rows below the diagonal: H = I
  const T total = alpha * alpha + ss;
  const bool fast = larfg_in_range(ss, total);
  // LAPACK's larfg: beta = -sign(alpha) ||(alpha, x)||, tau = (beta - alpha) / beta,
  // v = x / (alpha - beta); tau = 0 (H = I, x kept) when x is zero.
  bool reflect = false;
  T tau = 0, beta = alpha;
  if (active && !empty && fast) {
    const Scalars<T> h = larfg_scalars(alpha, total);
    beta = h.beta;
    tau = h.tau;
#pragma unroll
    for (int t = 0; t < C::kXRows; ++t) x.v[t] *= h.scale;
    reflect = true;
  }
  if (__any_sync(kFull, active && !empty && !fast)) {  // rare: warp-uniform, out of line
    const Reflector<T, C::kXRows> h = larfg_scaled<C::kGroup>(alpha, x);
    if (active && !empty && !fast) {
      reflect = h.reflect;
      beta = h.beta;
      tau = h.tau;
      x = h.v;
    }
  }
  if constexpr (C::kHalves) __syncwarp();  // every lane has read alpha before row J takes 1
  if (reflect) {
#pragma unroll
    for (int t = 0; t < C::kXRows; ++t) {
      const int i = gl + t * C::kGroup;
      if constexpr (C::kHalves) {
        // The whole of v_J, zeros above J and 1 at J included (the update reads it unmasked;
        // R's rows of this column go over the zeros at the end, from the registers).
        if (i < C::kR) slot[elem_at<C>(J, i)] = i > J ? x.v[t] : (i == J ? T(1) : T(0));
      } else {
        if (i > J && i < C::kR) slot[elem_at<C>(J, i)] = x.v[t];
      }
    }
  }
  if (pivot) {
    my_tau = tau;
    if constexpr (C::kHalves) {
      if (q.s == 0) a[J] = beta;
    } else {
      if (C::kS == 1 || q.s == J % C::kS) a[J / C::kS] = beta;
    }
  }
  __syncwarp();  // v_J is visible to the group

  // 3. H_J on the columns to the right.
  apply_reflector<C, J>(slot, reflect && col > J && col < q.n, tau, q.s, a);
}

template <class C, class T, int... Js>
__device__ __forceinline__ void reflect_all(std::integer_sequence<int, Js...>, T* slot,
                                            const Lane& q, T (&a)[C::kRL], T& my_tau) {
  (reflect_step<C, Js>(slot, q, a, my_tau), ...);
}

template <class T, int W, int R, int S, bool H>
__global__ void __launch_bounds__(SmallCfg<T, W, R, S, H>::kThreads,
                                  SmallCfg<T, W, R, S, H>::kMinBlocks)
    small_geqrf_kernel(DeviceBatch<T> batch) {
  using C = SmallCfg<T, W, R, S, H>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int slot_id = lane / C::kGroup, gl = lane % C::kGroup;
  const int col = gl / S, s = gl % S;
  T* const slots = reinterpret_cast<T*>(smem_raw) + warp * 2 * C::kBufElems +
                   slot_id * C::kSlotElems;
  const std::int64_t step = std::int64_t(gridDim.x) * C::kWarps * C::kSlots;
  std::int64_t base = (std::int64_t(blockIdx.x) * C::kWarps + warp) * C::kSlots;
  if (base >= batch.count) return;  // warp-uniform; no block barriers below

  // Descriptors are read where they are used, not carried across the factorization (their
  // registers would crowd out the columns); a listed batch's are prefetched into L2 a matrix
  // ahead.
  fetch<C>(desc_at(batch, base + slot_id), slots, gl);
  __pipeline_commit();
  for (int t = 0; base < batch.count; base += step, t ^= 1) {
    T* const slot = slots + t * C::kBufElems;
    T* const other = slots + (t ^ 1) * C::kBufElems;
    const Desc<T> next = desc_at(batch, base + step + slot_id);
    prefetch_desc(batch, base + 2 * step + slot_id);
    __pipeline_wait_prior(0);
    __syncwarp();  // every lane's copies of this matrix have landed
    // `other` was last read by the store of the previous matrix, before the barrier above.
    fetch<C>(next, other, gl);
    __pipeline_commit();

    Lane q{0, 0, 0, 0, col, s, gl};
    {
      const Desc<T> cur = desc_at(batch, base + slot_id);
      q.m = cur.m;
      q.n = cur.n;
      q.k = min(q.m, q.n);
      q.kmax = __reduce_max_sync(kFull, q.k);
    }
    T a[C::kRL];
    load_column<C>(slot, q.m, q.n, col, s, a);
    T my_tau = 0;
    reflect_all<C>(std::make_integer_sequence<int, C::kSteps>{}, slot, q, a, my_tau);

    const Desc<T> cur = desc_at(batch, opaque(base) + slot_id);
    // R (rows <= col) over the stale part of the column; v is there already. The column's
    // offsets are recomputed (opaque) rather than kept alive from load_column.
    if (col < q.n) {
      const int c = opaque(col);
      if constexpr (C::kHalves) {
        if (s == 0) {  // R's rows (<= c < kRL) are all in the first half
#pragma unroll
          for (int r = 0; r < C::kSteps; ++r)
            if (r <= c) slot[elem_at<C>(c, r)] = a[r];
        }
      } else {
#pragma unroll
        for (int r = 0; r < C::kRL; ++r)
          if (r * S + s <= c) slot[elem_at<C>(c, r * S) + s] = a[r];
      }
      if (s == 0 && col < q.k) cur.tau[col] = my_tau;
    }
    __syncwarp();  // the whole slot is written
    store<C>(cur, slot, gl);
  }
}

template <class T, int W, int R, int S, bool H = false>
void launch_one(const DeviceBatch<T>& b, cudaStream_t stream) {
  using C = SmallCfg<T, W, R, S, H>;
  auto kernel = small_geqrf_kernel<T, W, R, S, H>;
  const int bytes = C::kWarps * C::kWarpBytes;
  int device = 0, sms = 0, per_sm = 0;
  GPUQR_CUDA_CHECK(cudaGetDevice(&device));
  GPUQR_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  GPUQR_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                        cudaSharedmemCarveoutMaxShared));
  GPUQR_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, C::kThreads, bytes));
  // Persistent: no more blocks than stay resident; each warp loops over its matrices.
  const std::int64_t per_block = C::kWarps * C::kSlots;
  const std::int64_t needed = (b.count + per_block - 1) / per_block;
  const std::int64_t resident = std::int64_t(std::max(sms, 1)) * std::max(per_sm, 1);
  const std::int64_t blocks = std::min(needed, resident);
  if (blocks > std::numeric_limits<int>::max()) {
    GPUQR_THROW(InvalidArgument, "batched geqrf: " + std::to_string(b.count) +
                                     " matrices exceed one launch");
  }
  kernel<<<static_cast<unsigned>(blocks), C::kThreads, bytes, stream>>>(b);
  GPUQR_CUDA_CHECK_LAUNCH(stream);
}

/// The kernel of the classes with 32 < m <= 64 (GPUQR_BATCHED_SMALL_TALL, read once; tests
/// steer it with set_batched_small_tall): 0 the columns kernel with every other row on a
/// lane, 1 with a contiguous half of the rows on a lane; for n > 8 (else as 1) 3 (default;
/// 2, once a version staged through shared memory, now the same) the rows kernel
/// (batched_rows_small.cu). Measured (H100, session 10 runs 1-2, 64 x 16, 1 GiB, ms for 0 /
/// 1 / staged / 3): FP64 1.708 / 1.760 / 1.263 / 1.091, FP32 2.324 / 1.951 / 1.514 / 1.240.
int tall_layout() {
  const int forced = small_tall_override.load();
  if (forced >= 0) return forced;
  static const int knob = [] {
    const char* text = std::getenv("GPUQR_BATCHED_SMALL_TALL");
    if (text != nullptr && text[0] >= '0' && text[0] <= '3' && text[1] == '\0')
      return text[0] - '0';
    return 3;
  }();
  return knob;
}

/// The class's kernel. Two lanes per column only where m > 32 (one lane's 32 rows would not
/// fit): for 16 x 16 FP64 two lanes per column measured 1.32 ms against one's 0.75 ms (H100,
/// session 8, 0.5 GiB batches), FP32 1.73 against 0.92.
template <class T>
void launch_current(const DeviceBatch<T>& b, int cls, cudaStream_t stream) {
  switch (cls) {
    case 0: launch_one<T, 8, 8, 1>(b, stream); break;
    case 1: launch_one<T, 8, 16, 1>(b, stream); break;
    case 2: launch_one<T, 8, 32, 1>(b, stream); break;
    case 3:
      if (tall_layout() >= 1)
        launch_one<T, 8, 64, 2, true>(b, stream);
      else
        launch_one<T, 8, 64, 2>(b, stream);
      break;
    case 4: launch_one<T, 16, 8, 1>(b, stream); break;
    case 5: launch_one<T, 16, 16, 1>(b, stream); break;
    case 6: launch_one<T, 16, 32, 1>(b, stream); break;
    case 7:
      if (tall_layout() >= 2)
        launch_rows_small_geqrf(b, stream);
      else if (tall_layout() == 1)
        launch_one<T, 16, 64, 2, true>(b, stream);
      else
        launch_one<T, 16, 64, 2>(b, stream);
      break;
    case 8: launch_one<T, 32, 8, 1>(b, stream); break;
    case 9: launch_one<T, 32, 16, 1>(b, stream); break;
    case 10: launch_one<T, 32, 32, 1>(b, stream); break;
    default: launch_one<T, 32, 64, 1>(b, stream); break;
  }
}

}  // namespace

int small_class(std::int64_t m, std::int64_t n) {
  if (n > 32 || m > 64) return -1;
  const int w = n <= 8 ? 0 : (n <= 16 ? 1 : 2);
  const int r = m <= 8 ? 0 : (m <= 16 ? 1 : (m <= 32 ? 2 : 3));
  return w * 4 + r;
}

template <class T>
void launch_small_geqrf(const DeviceBatch<T>& b, int cls, cudaStream_t stream) {
  if (b.count == 0) return;
  if (b.list == nullptr && (b.shape.m == 0 || b.shape.n == 0)) return;
  launch_current(b, cls, stream);
}

template void launch_small_geqrf<float>(const DeviceBatch<float>&, int, cudaStream_t);
template void launch_small_geqrf<double>(const DeviceBatch<double>&, int, cudaStream_t);

}  // namespace batched
}  // namespace gpuqr::kernels::cuda
