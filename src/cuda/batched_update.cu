// The trailing update of the blocked batched QR (batched_blocked.cu) for a listed batch whose
// matrices differ in shape: W = Y^T C, then C := C - V W, as ONE launch over every matrix of
// the step, whatever the number of distinct shapes.
//
// Why not cuBLAS: a variable-size batch (sizes drawn from 8..512) has a distinct (rows, nc,
// ld) per matrix at almost every step, so cublas<t>gemmGroupedBatched gets hundreds of groups
// of one problem each, and C's leading dimension differs per matrix, so no bucketing by shape
// can gather them into a few gemmBatched calls. Here a thread block takes one block of 64
// columns of one matrix: the step's blocks are numbered matrix by matrix, and a block finds
// its matrix by
// a binary search in a prefix table (tiles before matrix i) built on the host once per call
// and uploaded with the rest of the plan. The block derives everything else (C, V, Y, W, the
// sizes) from the matrix's descriptor, its workspace offset and the step, exactly as the
// panel kernel and the host-built pointer arrays do, so the table holds one int per matrix.
//
// Measured (H100, session 9, the var batch of square sizes 8..512 at 0.5 GiB): FP32 11.5 ms
// here against 14.9 with cuBLAS's grouped GEMM; FP64 10.5 against 10.0 (the SIMT FP64 rate
// with one 192-register block per SM), so FP64 keeps cuBLAS by default (batched_blocked.cu).
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <string>

#include "src/cuda/batched_internal.hpp"
#include "src/cuda/check.hpp"

namespace gpuqr::kernels::cuda::batched {
namespace {

constexpr int kThreads = 256;

/// The index i with tiles[i] <= t < tiles[i + 1] (tiles: count + 1 ascending entries, tiles[0]
/// = 0); matrices with no tiles (equal neighbours) are skipped, as the last such i is taken.
__device__ int owner_of(const int* tiles, int count, int t) {
  int lo = 0, hi = count - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (tiles[mid] <= t) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/// One matrix's view of step j (as the panel kernel and the host plan see it).
template <class T>
struct StepView {
  int rows, nc, jb;
  T *c, *v, *y, *w;
  std::int64_t ld;
};

template <class T>
__device__ StepView<T> view_at(const UpdateArgs<T>& p, int i) {
  const Desc<T> d = p.list[i];
  const int k = min(d.m, d.n), j = p.j;
  StepView<T> s;
  s.jb = min(p.nb, k - j);
  s.rows = d.m - j;
  s.nc = d.n - j - s.jb;
  s.ld = d.ld;
  s.c = d.a + j + std::int64_t(j + s.jb) * d.ld;
  s.v = p.ws + p.offsets[i];
  s.y = s.v + std::int64_t(d.m) * p.nb;
  s.w = s.y + std::int64_t(d.m) * p.nb;
  return s;
}

// ---- The fused update ----------------------------------------------------------------------
//
// A thread block per 64-column block of one matrix's C (the W tiles' numbering, tiles_w):
//   phase 1: W_blk = Y^T C_blk (jb x 64, jb <= 32) over all rows, in registers: 32-row chunks
//            of Y and C in shared memory, the 256 threads as 4 k-groups of 64 (each takes 8 of
//            the chunk's rows: split-K inside the block), a thread 8 x 4 entries of W reading
//            16-byte vectors along k; the 4 partial W summed in a fixed order into shared memory;
//   phase 2: C_blk -= V W_blk, chunks of kRows2 rows of V in shared memory, a thread kRm x 4
//            entries of C (16-byte vector reads of V along the rows, of W along the columns).
// One launch per step instead of two, W never goes through memory, and the block reads its
// columns of C twice (the second time mostly from L2). Exact per-entry arithmetic (FP32 stays
// FP32, FP64 FP64). (A first version, W = Y^T C and C -= V W as two launches of plain tiled
// SIMT kernels, measured slower than both this and cuBLAS's grouped GEMM: H100, session 9,
// var batch 0.5 GiB, FP64 12.7 ms, FP32 14.5, against 10.5 / 11.5 here; it was deleted.)

template <class T>
struct Vec;
template <>
struct Vec<float> {
  using type = float4;
};
template <>
struct Vec<double> {
  using type = double2;
};

__device__ __forceinline__ float comp(const float4& v, int e) {
  return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w;
}
__device__ __forceinline__ double comp(const double2& v, int e) { return e == 0 ? v.x : v.y; }

template <class T>
struct Fused {
  using V = typename Vec<T>::type;
  static constexpr int kVw = 16 / static_cast<int>(sizeof(T));  // elements per 16-byte vector
  static constexpr int kJb = kUpdateWRows;                       // W rows (jb <= 32)
  static constexpr int kCols = kUpdateWCols;                     // C columns per block
  static constexpr int kBk = 32;                                 // rows per phase-1 chunk
  // Padding by one vector: a warp's 16-byte reads at 8 consecutive columns (or 4 rows of Y)
  // then fall on distinct banks ((kBk + kVw) * sizeof(T) / 4 = 4 mod 32 words).
  static constexpr int kLdK = kBk + kVw;
  static constexpr int kRm = sizeof(T) == 4 ? 8 : 4;  // phase-2 rows per thread
  static constexpr int kRows2 = 16 * kRm;             // phase-2 chunk rows
  static constexpr int kLdV = kRows2 + kVw;
  static constexpr int kLdW = kCols + kVw;
  static constexpr int kPhase1 = (kJb + kCols) * kLdK;
  static constexpr int kPhase2 = kJb * kLdV;
  static constexpr int kElems = (kPhase1 > kPhase2 ? kPhase1 : kPhase2) + kJb * kLdW;
  static constexpr int kPre1 = (kJb + kCols) * kBk / kThreads;  // 12: 4 of Y, 8 of C
  static constexpr int kPerPass2 = kThreads / kRows2;           // V columns per load pass
  static constexpr int kPre2 = kJb / kPerPass2;
  // FP32: the next chunk's loads are issued before the current chunk's products (registers
  // for them fit 2 blocks per SM); FP64: not (they would spill at 128 registers).
  static constexpr bool kPrefetch = sizeof(T) == 4;
  // Blocks per SM asked of ptxas: FP32 2 (128 registers, no spills); FP64 1 (~190 registers:
  // at 128 it spills ~150 bytes in the inner loops).
  static constexpr int kMinBlocks = sizeof(T) == 4 ? 2 : 1;
  static_assert(kThreads == 256 && kBk == 32 && kJb == 32 && kCols == 64, "the maps below");
  static_assert(kElems * sizeof(T) <= 48 * 1024, "static shared memory");
};

template <class T>
__global__ void __launch_bounds__(kThreads, Fused<T>::kMinBlocks) update_fused_kernel(UpdateArgs<T> p) {
  using F = Fused<T>;
  using V = typename F::V;
  constexpr int kVw = F::kVw;
  __shared__ __align__(16) T smem[F::kElems];
  T* const s_y = smem;                         // phase 1: Y chunk, [W row][k]
  T* const s_c = smem + F::kJb * F::kLdK;      // phase 1: C chunk, [column][k]
  T* const s_v = smem;                         // phase 2: V chunk, [V column][row]
  T* const s_w = smem + (F::kPhase1 > F::kPhase2 ? F::kPhase1 : F::kPhase2);  // [W row][col]

  const int t = static_cast<int>(blockIdx.x);
  const int mi = owner_of(p.tiles_w, p.count, t);
  const StepView<T> s = view_at(p, mi);
  const int col0 = (t - p.tiles_w[mi]) * F::kCols;
  const int ncols = min(F::kCols, s.nc - col0);
  T* const cb = s.c + std::int64_t(col0) * s.ld;
  const int tid = static_cast<int>(threadIdx.x);

  // Phase 1. Loads: thread (lk, lc) brings row lk of the chunk at W rows / columns lc + 8 u.
  const int lk = tid % 32, lc = tid / 32;
  T pre[F::kPre1];
  auto load1 = [&](int k0) {
    const int r = k0 + lk;
    const bool in = r < s.rows;
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const int c = lc + 8 * u;
      pre[u] = in && c < s.jb ? s.y[r + std::int64_t(c) * s.rows] : T(0);
    }
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      const int c = lc + 8 * u;
      pre[4 + u] = in && c < ncols ? cb[r + std::int64_t(c) * s.ld] : T(0);
    }
  };
  const int g = tid / 64, lt = tid % 64, rr = lt % 4, cc = lt / 4;
  T acc[8][4];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int q = 0; q < 4; ++q) acc[i][q] = T(0);
  if (F::kPrefetch) load1(0);
  for (int k0 = 0; k0 < s.rows; k0 += F::kBk) {
    if (!F::kPrefetch) load1(k0);
#pragma unroll
    for (int u = 0; u < 4; ++u) s_y[(lc + 8 * u) * F::kLdK + lk] = pre[u];
#pragma unroll
    for (int u = 0; u < 8; ++u) s_c[(lc + 8 * u) * F::kLdK + lk] = pre[4 + u];
    __syncthreads();  // the chunk is in shared memory before anyone multiplies it
    if (F::kPrefetch && k0 + F::kBk < s.rows) load1(k0 + F::kBk);  // in flight meanwhile
#pragma unroll
    for (int k1 = 0; k1 < F::kBk / 4; k1 += kVw) {  // this k-group's quarter of the chunk
      const int kk = g * (F::kBk / 4) + k1;
      V cv[4];
#pragma unroll
      for (int q = 0; q < 4; ++q)
        cv[q] = *reinterpret_cast<const V*>(s_c + (cc + 16 * q) * F::kLdK + kk);
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const V yv = *reinterpret_cast<const V*>(s_y + (rr + 4 * i) * F::kLdK + kk);
#pragma unroll
        for (int e = 0; e < kVw; ++e)
#pragma unroll
          for (int q = 0; q < 4; ++q) acc[i][q] += comp(yv, e) * comp(cv[q], e);
      }
    }
    __syncthreads();  // everyone is done with the chunk before the next one overwrites it
  }
  // The k-groups' partial W summed in order 0, 1, 2, 3 (deterministic).
  for (int gg = 0; gg < 4; ++gg) {
    if (g == gg) {
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          T& w = s_w[(rr + 4 * i) * F::kLdW + cc + 16 * q];
          w = gg == 0 ? acc[i][q] : w + acc[i][q];
        }
    }
    __syncthreads();  // the next group adds to a complete partial sum; phase 2 reads all of W
  }

  // Phase 2. Loads: thread (lr, lv) brings row lr of the chunk at V columns lv + kPerPass2 u.
  const int lr = tid % F::kRows2, lv = tid / F::kRows2;
  T pre2[F::kPre2];
  auto load2 = [&](int r0) {
    const int r = r0 + lr;
    const bool in = r < s.rows;
#pragma unroll
    for (int u = 0; u < F::kPre2; ++u) {
      const int c = lv + F::kPerPass2 * u;
      pre2[u] = in && c < s.jb ? s.v[r + std::int64_t(c) * s.rows] : T(0);
    }
  };
  // Thread (rg, cg): rows kVw rg + 16 kVw h + e (h < kRm / kVw, e < kVw), columns 4 cg + q.
  const int rg = tid % 16, cg = tid / 16;
  constexpr int kH = F::kRm / kVw;
  load2(0);
  for (int r0 = 0; r0 < s.rows; r0 += F::kRows2) {
#pragma unroll
    for (int u = 0; u < F::kPre2; ++u) s_v[(lv + F::kPerPass2 * u) * F::kLdV + lr] = pre2[u];
    __syncthreads();  // the V chunk is in shared memory
    if (r0 + F::kRows2 < s.rows) load2(r0 + F::kRows2);
    // C's entries accumulate V W's products one k at a time (the reference BLAS's order).
    T cr[F::kRm][4];
#pragma unroll
    for (int a = 0; a < F::kRm; ++a) {
      const int r = r0 + kVw * rg + 16 * kVw * (a / kVw) + a % kVw;
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int c = 4 * cg + q;
        cr[a][q] = r < s.rows && c < ncols ? cb[r + std::int64_t(c) * s.ld] : T(0);
      }
    }
#pragma unroll 2
    for (int kk = 0; kk < s.jb; ++kk) {
      V vv[kH], wv[4 / kVw];
#pragma unroll
      for (int h = 0; h < kH; ++h)
        vv[h] = *reinterpret_cast<const V*>(s_v + kk * F::kLdV + kVw * rg + 16 * kVw * h);
#pragma unroll
      for (int b = 0; b < 4 / kVw; ++b)
        wv[b] = *reinterpret_cast<const V*>(s_w + kk * F::kLdW + 4 * cg + kVw * b);
#pragma unroll
      for (int a = 0; a < F::kRm; ++a)
#pragma unroll
        for (int q = 0; q < 4; ++q)
          cr[a][q] -= comp(vv[a / kVw], a % kVw) * comp(wv[q / kVw], q % kVw);
    }
#pragma unroll
    for (int a = 0; a < F::kRm; ++a) {
      const int r = r0 + kVw * rg + 16 * kVw * (a / kVw) + a % kVw;
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int c = 4 * cg + q;
        if (r < s.rows && c < ncols) cb[r + std::int64_t(c) * s.ld] = cr[a][q];
      }
    }
    __syncthreads();  // everyone is done with the V chunk before the next one overwrites it
  }
}

unsigned grid_of_tiles(std::int64_t tiles) {
  if (tiles > std::numeric_limits<int>::max())
    GPUQR_THROW(InvalidArgument, "batched QR: " + std::to_string(tiles) +
                                     " update tiles exceed one launch");
  return static_cast<unsigned>(tiles);
}

}  // namespace

int update_w_tiles(int rows, int nc, int jb) {
  if (rows <= 0 || nc <= 0 || jb <= 0) return 0;
  return (nc + kUpdateWCols - 1) / kUpdateWCols;
}


template <class T>
void launch_update(const UpdateArgs<T>& p, std::int64_t tiles, cudaStream_t stream) {
  if (p.count == 0 || tiles == 0) return;
  update_fused_kernel<T><<<grid_of_tiles(tiles), kThreads, 0, stream>>>(p);
  GPUQR_CUDA_CHECK_LAUNCH(stream);
}

template void launch_update<float>(const UpdateArgs<float>&, std::int64_t, cudaStream_t);
template void launch_update<double>(const UpdateArgs<double>&, std::int64_t, cudaStream_t);

}  // namespace gpuqr::kernels::cuda::batched
