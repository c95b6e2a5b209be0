// One inner panel of the blocked QR's outer panel by QRF-AH, with its update of the outer
// panel's next columns, in one cluster launch (the "AH step"). The AH panel (panel_qr_ah.cu)
// takes three launches for the panel (Gram pass, b x b kernel, scaling) and the driver three
// cuBLAS GEMMs (larfb) and a laset after it: about eight dependent launches per 32 columns,
// which is what bounds geqrf at n = 1024 (docs/fused_outer_panel_notes.md). Here one cluster
// of up to kCluster blocks, each holding a slice of the rows, does:
//   1. its slice's partial Gram matrix B_c = P_B^T P_B (rows >= 32) into shared memory;
//      cluster barrier;
//   2. block 0: B = the partials summed in rank order through distributed shared memory,
//      then the b x b kernel's work (ah::top_finish: Algorithm 2, V^T V, T, R, V_T, tau, D);
//      cluster barrier; every block reads the status (declined: all return, nothing written);
//   3. V_B = P_B D on each slice (in place and into the explicit V);
//   4. each slice's partial W_c = V_c^T C_c (C: the outer panel's next `rest` <= 96 columns);
//      cluster barrier; W = the partials in rank order, Y = T^T W in every block;
//      C_c -= V_c Y; cluster barrier (the partials are read before any block exits).
// Where Algorithm 2 declines, the host has already enqueued the Householder kernel (skip =
// status) and this kernel again in update-only mode (it returns unless status is 0), so the
// host never waits. The result is the AH panel's followed by larfb's, up to rounding.
//
// Measured (GPUQR_AH_STEP_TRACE, cycles of one step on 1024 rows and 96 more columns, FP64):
// session 20 (H100) ~290k, ~146 us, where the AH panel's launches and larfb take ~68 us.
// Session 29 (H100, run 3) after the rewrite of steps 3-4 (a block's V slice kept in shared
// memory, its C slice in registers from one load to its update, W by 4 x 3 register tiles,
// W's sum scattered over the cluster and Y gathered, h <= 1024): 145k (FP32 119k): Gram
// partials 7.5k, cluster barrier 3.3k, B's sum 2.6k, block 0's b x b work 54.5k (47.7k as its
// own kernel in the same run), scaling 10.8k, W's partial 17.9k, its sum and Y 12.4k, Y's
// gather and C's update 26.3k, the last barrier 7.6k. geqrf 1024 FP64 2.28 ms with it
// against 2.02-2.55 without (FP32 2.09 against 1.84-1.88). So it stays off by default: its
// FP64 loops on 8 SMs run at ~22 FMAs a cycle per SM, a third of the FP64 pipe.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <string>

#include "src/core/blocked_kernels.hpp"
#include "src/core/qrf_ah_kernels.hpp"
#include "src/cuda/ah_top.cuh"
#include "src/cuda/check.hpp"
#include "src/cuda/cluster_launch.hpp"
#include "src/cuda/panel_qr.hpp"
#include "src/cuda/panel_qr_ah_step.hpp"

namespace gpuqr::kernels::cuda {
namespace {

namespace cg = cooperative_groups;
using ah::kB;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kCluster = 8;           // portable cluster size (GPUQR_AH_STEP_CLUSTER: 2 or 4)
constexpr int kMaxRest = 96;          // the outer panel's columns after the inner one (jb <= 128)
constexpr int kRestQ = kMaxRest / kWarps;  // C columns per thread: warp + 8 q
// A block's rows: its V slice stays in shared memory, its C slice in registers (kChunks
// 32-row chunks of kRestQ columns a thread), so h <= kCluster * kMaxRowsPerBlock = 1024.
constexpr int kMaxRowsPerBlock = 128;
constexpr int kChunks = kMaxRowsPerBlock / 32;
constexpr int kPad = kMaxRest + 1;
// Y columns a block forms with two or more blocks (one block forms Y in place).
constexpr int kYCols = kMaxRest / 2;
template <class T>
struct StepArgs {
  T* a;  // the panel's top-left entry: P = a(0:h, 0:32), C = a(0:h, 32:32 + rest)
  std::int64_t lda;
  std::int64_t h;
  int rest;
  T* tau;
  T* v;  // the explicit V (h x 32)
  std::int64_t ldv;
  T* t;  // T (32 x 32)
  std::int64_t ldt;
  T* d;         // workspace: D (kB x kB)
  int* status;  // workspace: 1 when the AH step factored the panel, 0 when it declined
  double threshold;
  int warp_factor;
  int rows;         // rows per block (a multiple of 32)
  int update_only;  // 1: only step 4, and only when *status == 0
  int trace;        // 1: record the phase clocks (GPUQR_AH_STEP_TRACE)
};

/// Dynamic shared memory, kept small so that the blocks find room beside the trailing update's
/// GEMM (the panels run on the second lane while it runs): the Gram partial (sg, [col][row]),
/// D then T (sd, [row][col]), the block's V slice (sv, [row][col], kMaxRowsPerBlock rows), then
/// one region used first by block 0's b x b work (x, g, d, bg, wb and tau) and later by W's
/// partial (sw, read by the other blocks), a 32-row chunk of C then W's summed columns then the
/// whole Y (sc / sy, the same room), and the Y columns this block forms (sys, read by the
/// others). sw, sy and sys are [row i][column j].
constexpr std::size_t kSq = std::size_t(kB) * (kB + 1);
constexpr std::size_t kUnion =
    std::max(5 * kSq + kB, 2 * std::size_t(kB) * kPad + std::size_t(kB) * (kYCols + 1));
template <class T>
constexpr std::size_t step_smem_bytes() {
  return sizeof(T) * (2 * kSq + std::size_t(kMaxRowsPerBlock) * (kB + 1) + kUnion);
}

// Measurements only (GPUQR_AH_STEP_TRACE=1): thread 0 of block 0 records clock64() at the
// phase boundaries of each launch; the host prints them after a synchronize.
constexpr int kStepTracePoints = 12;
__device__ long long g_step_clocks[kStepTracePoints];

/// Block 0's b x b work, compiled apart (not inlined) so that its register allocation is its
/// own: inlined into the step kernel it spilled (4 KB of stack in FP64).
/// Everything by value: a struct by reference would live in local memory, and every store
/// through a pointer would make the compiler reload its fields.
template <class T>
__device__ __noinline__ void step_top(T (*x)[kB + 1], T (*g)[kB + 1], T (*d)[kB + 1],
                                      T (*bg)[kB + 1], T (*wb)[kB + 1], T* s_tau, int* s_ok, T* a,
                                      std::int64_t lda, T* tau, T* v, std::int64_t ldv, T* t,
                                      std::int64_t ldt, T* dm, int* status, double threshold,
                                      int warp_factor) {
  ah::top_finish<T, kThreads>(x, g, d, bg, wb, s_tau, s_ok, a, lda, kB, tau, v, ldv, t, ldt, dm,
                              status, threshold, warp_factor, nullptr);
}

/// V_B = P_B D for rows lo..r1 (at most kThreads / 2 of them), two lanes a row: lane q of the
/// pair forms outputs q, q + 2, ... (D upper triangular, in sd as [row][col]; output j sums
/// its j + 1 terms in order, as ah_scale_kernel does), and both store after both have loaded
/// the row (same warp, __syncwarp): in place, into the explicit V and into sv (row i - r0).
/// Compiled apart, as step_top.
template <class T>
__device__ __noinline__ void step_scale(T* __restrict__ a, std::int64_t lda, T* __restrict__ v,
                                        std::int64_t ldv, std::int64_t r0, std::int64_t lo,
                                        std::int64_t r1, const T (*sd)[kB + 1], T (*sv)[kB + 1]) {
  const int q = static_cast<int>(threadIdx.x % 2);
  const std::int64_t i = lo + threadIdx.x / 2;
  const bool row = i < r1;  // no early return: the pair meets at the __syncwarp below
  T x[kB];
#pragma unroll
  for (int k = 0; k < kB; ++k) x[k] = row ? a[i + k * lda] : T(0);
  T out[kB / 2];
#pragma unroll
  for (int o = 0; o < kB / 2; ++o) {
    const int j = q + 2 * o;
    T s = 0;
#pragma unroll
    for (int k = 0; k < kB; ++k)
      if (k <= j) s = fma(x[k], sd[k][j], s);
    out[o] = s;
  }
  __syncwarp();  // both lanes of the row have read it
  if (!row) return;
#pragma unroll
  for (int o = 0; o < kB / 2; ++o) {
    const int j = q + 2 * o;
    a[i + j * lda] = out[o];
    v[i + j * ldv] = out[o];
    sv[i - r0][j] = out[o];
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) ah_step_kernel(StepArgs<T> p) {
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  const int nblocks = static_cast<int>(cluster.num_blocks());
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* sm = reinterpret_cast<T*>(smem_raw);
  auto take32 = [&]() {
    auto r = reinterpret_cast<T(*)[kB + 1]>(sm);
    sm += kB * (kB + 1);
    return r;
  };
  T(*sg)[kB + 1] = take32();
  T(*sd)[kB + 1] = take32();
  T(*sv)[kB + 1] = reinterpret_cast<T(*)[kB + 1]>(sm);
  sm += kMaxRowsPerBlock * (kB + 1);
  T* region = sm;
  T(*sw)[kPad] = reinterpret_cast<T(*)[kPad]>(region);
  T(*sy)[kPad] = reinterpret_cast<T(*)[kPad]>(region + kB * kPad);  // also C's chunk (sc)
  T(*sys)[kYCols + 1] = reinterpret_cast<T(*)[kYCols + 1]>(region + 2 * kB * kPad);
  // block 0's b x b work, before sw, sy and sys are used
  T(*x)[kB + 1] = take32();
  T(*g)[kB + 1] = take32();
  T(*d)[kB + 1] = take32();
  T(*bg)[kB + 1] = take32();
  T(*wb)[kB + 1] = take32();
  T* s_tau = sm;
  __shared__ int s_ok;
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid % 32, warp = tid / 32;
  auto mark = [&](int point) {
    if (p.trace != 0 && rank == 0 && tid == 0) g_step_clocks[point] = clock64();
  };
  mark(0);
  T* const pa = p.a;
  T* const pv = p.v;
  const std::int64_t lda = p.lda, ldv = p.ldv;
  const std::int64_t r0 = static_cast<std::int64_t>(rank) * p.rows;
  const std::int64_t r1 = min(p.h, r0 + p.rows);
  const std::int64_t lo = max(r0, static_cast<std::int64_t>(kB));  // this slice below the top
  const int nrows = static_cast<int>(r1 - r0);                     // 1 .. kMaxRowsPerBlock
  const int nchunks = (nrows + 31) / 32;
  if (p.update_only != 0) {
    if (*p.status != 0) return;  // uniform: the AH step factored and updated
    // The Householder kernel's V (explicit: zeros above its diagonal, ones on it).
    for (int idx = tid; idx < nrows * kB; idx += kThreads) {
      const int rr = idx % nrows, cc = idx / nrows;
      sv[rr][cc] = pv[r0 + rr + cc * ldv];
    }
  } else {
    T acc[4];
    ah::gram_rows<T>(pa, lda, lo, r1, kB, sv, acc);
    {
      const int gi = tid % 32, gj = tid / 32;
#pragma unroll
      for (int q = 0; q < 4; ++q) sg[gj + 8 * q][gi] = acc[q];
    }
    mark(1);
    cluster.sync();  // every block's partial is complete
    mark(2);
    if (rank == 0) {
      // The partials in rank order, each thread's loads all in flight together.
      constexpr int kE = kB * kB / kThreads;
      T part[kE][kCluster];
#pragma unroll
      for (int e = 0; e < kE; ++e) {
        const int idx = tid + kThreads * e, i = idx % kB, j = idx / kB;
#pragma unroll
        for (int r = 0; r < kCluster; ++r)
          part[e][r] = r < nblocks ? cluster.map_shared_rank(&sg[j][i], r)[0] : T(0);
      }
#pragma unroll
      for (int e = 0; e < kE; ++e) {
        const int idx = tid + kThreads * e, i = idx % kB, j = idx / kB;
        T s = 0;
#pragma unroll
        for (int r = 0; r < kCluster; ++r) s += part[e][r];
        bg[j][i] = s;
        x[j][i] = pa[i + j * lda];
        d[j][i] = i == j ? T(1) : T(0);
      }
      if (tid == 0) s_ok = 1;
      __syncthreads();
      mark(3);
      step_top<T>(x, g, d, bg, wb, s_tau, &s_ok, pa, lda, p.tau, pv, ldv, p.t, p.ldt, p.d, p.status,
                  p.threshold, p.warp_factor);
      mark(4);
    }
    cluster.sync();  // the partials are read; block 0's outputs are visible to the cluster
    mark(5);
    if (*p.status != 1) return;  // uniform: the Householder kernel factors the panel
    for (int idx = tid; idx < kB * kB; idx += kThreads) {
      const int i = idx % kB, j = idx / kB;
      sd[i][j] = p.d[i + j * kB];
    }
    // Block 0: the top block's rows of the explicit V, as step_top wrote them.
    for (int idx = tid; idx < static_cast<int>(lo - r0) * kB; idx += kThreads) {
      const int rr = idx % kB, cc = idx / kB;
      sv[rr][cc] = pv[r0 + rr + cc * ldv];
    }
    __syncthreads();
    step_scale<T>(pa, lda, pv, ldv, r0, lo, r1, sd, sv);
    mark(6);
  }
  if (p.rest == 0) return;  // (no block reads another's shared memory after this point)
  // Rows of the last chunk past the slice: zero (they meet zeros of C, but must not be NaN).
  for (int idx = tid; idx < (nchunks * 32 - nrows) * kB; idx += kThreads) {
    const int rr = nrows + idx / kB, cc = idx % kB;
    sv[rr][cc] = T(0);
  }
  const int rest = p.rest;
  T* const c = pa + kB * lda;
  // This thread's C entries: rows r0 + 32 k + lane, columns warp + 8 q, all loads in flight
  // together; kept in registers for the update below.
  T creg[kChunks][kRestQ];
#pragma unroll
  for (int k = 0; k < kChunks; ++k)
#pragma unroll
    for (int q = 0; q < kRestQ; ++q) {
      const int rr = 32 * k + lane, cc = warp + kWarps * q;
      creg[k][q] = k < nchunks && rr < nrows && cc < rest ? c[r0 + rr + cc * lda] : T(0);
    }
  // W_c = V(r0:r1)^T C(r0:r1), a chunk of C at a time through shared memory: thread (ig, jg)
  // forms W(ig + 8 u, jg + 32 m), u < 4, m < 3 (every access pattern one wavefront).
  const int ig = lane % 8, jg = lane / 8 + 4 * warp;
  T wacc[4][3];
#pragma unroll
  for (int u = 0; u < 4; ++u)
#pragma unroll
    for (int m = 0; m < 3; ++m) wacc[u][m] = T(0);
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    if (k >= nchunks) break;  // uniform
    __syncthreads();          // sc is free (and, at k = 0, sv's rows and block 0's b x b work done)
#pragma unroll
    for (int q = 0; q < kRestQ; ++q) sy[lane][warp + kWarps * q] = creg[k][q];
    __syncthreads();
#pragma unroll 4
    for (int r = 0; r < 32; ++r) {
      T vu[4], cm[3];
#pragma unroll
      for (int u = 0; u < 4; ++u) vu[u] = sv[32 * k + r][ig + 8 * u];
#pragma unroll
      for (int m = 0; m < 3; ++m) cm[m] = sy[r][jg + 32 * m];
#pragma unroll
      for (int u = 0; u < 4; ++u)
#pragma unroll
        for (int m = 0; m < 3; ++m) wacc[u][m] = fma(vu[u], cm[m], wacc[u][m]);
    }
  }
#pragma unroll
  for (int u = 0; u < 4; ++u)
#pragma unroll
    for (int m = 0; m < 3; ++m) sw[ig + 8 * u][jg + 32 * m] = wacc[u][m];
  for (int idx = tid; idx < kB * kB; idx += kThreads) {
    const int i = idx % kB, j = idx / kB;
    sd[i][j] = p.t[i + j * p.ldt];  // T (written by block 0 or the Householder kernel)
  }
  mark(7);
  cluster.sync();  // every block's partial W is complete
  mark(8);
  constexpr int kG = kB * kMaxRest / kThreads;  // 12: Y entries a thread gathers
  if (nblocks == 1) {
    // Y = T^T W from this block's W, every entry into registers before any is stored.
    T yv[kG];
#pragma unroll
    for (int e = 0; e < kG; ++e) {
      const int idx = tid + kThreads * e, i = idx % kB, j = idx / kB;
      T s = 0;
      if (j < rest)
        for (int l = 0; l <= i; ++l) s = fma(sd[l][i], sw[l][j], s);  // T(l, i) W(l, j)
      yv[e] = s;
    }
#pragma unroll
    for (int e = 0; e < kG; ++e) {
      const int idx = tid + kThreads * e, i = idx % kB, j = idx / kB;
      sy[i][j] = yv[e];
    }
    mark(9);
  } else {
    // Block `rank` sums W's columns j0 .. j0 + ny over the partials in rank order (the same
    // bits whichever block sums them), into sy; then Y = T^T W for them into sys.
    const int ypb = (rest + nblocks - 1) / nblocks;  // <= kYCols
    const int j0 = min(rest, rank * ypb), ny = min(rest, j0 + ypb) - j0;
    for (int idx = tid; idx < kB * ny; idx += kThreads) {
      const int i = idx % kB, jj = idx / kB;
      T part[kCluster];
#pragma unroll
      for (int r = 0; r < kCluster; ++r)
        part[r] = r < nblocks ? cluster.map_shared_rank(&sw[i][j0 + jj], r)[0] : T(0);
      T s = 0;
#pragma unroll
      for (int r = 0; r < kCluster; ++r) s += part[r];
      sy[i][jj] = s;
    }
    __syncthreads();
    for (int idx = tid; idx < kB * ny; idx += kThreads) {
      const int i = idx % kB, jj = idx / kB;
      T s = 0;
      for (int l = 0; l <= i; ++l) s = fma(sd[l][i], sy[l][jj], s);  // T(l, i) W(l, j)
      sys[i][jj] = s;
    }
    mark(9);
    cluster.sync();  // every block's Y columns are formed
    // The whole Y from the blocks' columns, every load in flight before the stores.
    T yv[kG];
#pragma unroll
    for (int e = 0; e < kG; ++e) {
      const int idx = tid + kThreads * e, i = idx % kB, j = idx / kB;
      yv[e] = j < rest ? cluster.map_shared_rank(&sys[i][j % ypb], j / ypb)[0] : T(0);
    }
#pragma unroll
    for (int e = 0; e < kG; ++e) {
      const int idx = tid + kThreads * e, i = idx % kB, j = idx / kB;
      sy[i][j] = yv[e];
    }
  }
  __syncthreads();
  // C(r0:r1) -= V(r0:r1) Y on the registers: row 32 k + lane, columns warp + 8 q.
#pragma unroll 2
  for (int i = 0; i < kB; ++i) {
    T yq[kRestQ];
#pragma unroll
    for (int q = 0; q < kRestQ; ++q) yq[q] = sy[i][warp + kWarps * q];
#pragma unroll
    for (int k = 0; k < kChunks; ++k) {
      if (k < nchunks) {
        const T vi = sv[32 * k + lane][i];
#pragma unroll
        for (int q = 0; q < kRestQ; ++q) creg[k][q] = fma(-vi, yq[q], creg[k][q]);
      }
    }
  }
#pragma unroll
  for (int k = 0; k < kChunks; ++k)
#pragma unroll
    for (int q = 0; q < kRestQ; ++q) {
      const int rr = 32 * k + lane, cc = warp + kWarps * q;
      if (k < nchunks && rr < nrows && cc < rest) c[r0 + rr + cc * lda] = creg[k][q];
    }
  mark(10);
  cluster.sync();  // no block exits while another may still read its Y columns
  mark(11);
}
template <class T>
bool step_prepared(int device) {
  static std::mutex mutex;
  static int state[64] = {};  // 0 unknown, 1 ready, -1 unavailable
  std::lock_guard<std::mutex> lock(mutex);
  if (device < 0 || device >= 64) return false;
  if (state[device] == 0) {
    const cudaError_t e =
        cudaFuncSetAttribute(ah_step_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(step_smem_bytes<T>()));
    state[device] = e == cudaSuccess ? 1 : -1;
    if (e != cudaSuccess) (void)cudaGetLastError();
  }
  return state[device] == 1;
}

std::atomic<int> step_override{-1};

template <class T>
void launch_step(detail::ContextImpl& ctx, const StepArgs<T>& args, int blocks) {
  StepArgs<T> a = args;
  void* params[] = {&a};
  launch_one_cluster(reinterpret_cast<const void*>(ah_step_kernel<T>), blocks, kThreads,
                     step_smem_bytes<T>(), ctx.stream, params);
}

}  // namespace

void panel_qr_ah_step_mode(int mode) { step_override.store(mode); }
int panel_qr_ah_step_override() { return step_override.load(); }

bool panel_qr_ah_step_wanted(int device, int elem_bytes, std::int64_t h, std::int64_t b,
                             std::int64_t rest) {
  const int mode = step_override.load();
  if (mode == 0) return false;
  // Off by default: measured slower than the AH panel and larfb (session 29, H100: geqrf 1024
  // FP64 2.28 ms against 2.02-2.55, FP32 2.09 against 1.84-1.88; session 20: 3.55 ms before
  // the update phases' rewrite; docs/PERF.md). GPUQR_AH_STEP=1 turns it on.
  static const bool env_on = [] {
    const char* text = std::getenv("GPUQR_AH_STEP");
    return text != nullptr && std::string(text) == "1";
  }();
  if (mode < 0 && !env_on) return false;
  const std::int64_t min_rows = panel_qr_ah_min_rows(elem_bytes);
  if (min_rows <= 0 || h < std::max<std::int64_t>(min_rows, 2 * kB)) return false;
  if (b != kB || rest < 0 || rest > kMaxRest) return false;
  if (h > static_cast<std::int64_t>(kCluster) * kMaxRowsPerBlock) return false;
  return panel_qr_fused_fits(device, elem_bytes, h, kB);
}

std::int64_t panel_qr_ah_step_workspace_elems() { return kB * kB + 32; }

template <class T>
bool panel_qr_ah_step(detail::ContextImpl& ctx, MatrixView<T> panel, VectorView<T> tau,
                      MatrixView<T> v, MatrixView<T> t, T* step_ws, T* panel_ws) {
  const std::int64_t h = panel.rows();
  const std::int64_t rest = panel.cols() - kB;
  if (t.empty() || !panel_qr_ah_step_wanted(ctx.device, static_cast<int>(sizeof(T)), h,
                                            std::min<std::int64_t>(panel.cols(), kB), rest)) {
    return false;
  }
  if (!step_prepared<T>(ctx.device)) return false;
  // As many blocks (at most kCluster, or GPUQR_AH_STEP_CLUSTER) as give each about 128
  // rows, whole 32-row tiles, at most kMaxRowsPerBlock.
  static const int max_blocks = [] {
    const char* text = std::getenv("GPUQR_AH_STEP_CLUSTER");
    const int v = text != nullptr ? std::atoi(text) : 0;
    return v >= 1 && v <= kCluster ? v : kCluster;
  }();
  int blocks =
      static_cast<int>(std::min<std::int64_t>(max_blocks, std::max<std::int64_t>(1, h / 128)));
  while (static_cast<std::int64_t>(blocks) * kMaxRowsPerBlock < h && blocks < kCluster) ++blocks;
  std::int64_t rows = (h + blocks - 1) / blocks;
  rows = (rows + 31) / 32 * 32;
  blocks = static_cast<int>((h + rows - 1) / rows);
  const double threshold =
      std::max(detail::kAhRemainingFraction, std::sqrt(double(std::numeric_limits<T>::epsilon())));
  int* status = reinterpret_cast<int*>(step_ws + kB * kB);
  StepArgs<T> args{panel.data(),
                   panel.ld(),
                   h,
                   static_cast<int>(rest),
                   tau.data(),
                   v.data(),
                   v.ld(),
                   t.data(),
                   t.ld(),
                   step_ws,
                   status,
                   threshold,
                   panel_qr_ah_warp_factor(),
                   static_cast<int>(rows),
                   0,
                   0};
  static const bool trace = [] {
    const char* text = std::getenv("GPUQR_AH_STEP_TRACE");
    return text != nullptr && std::string(text) == "1";
  }();
  args.trace = trace && !ctx.capturing ? 1 : 0;
  launch_step<T>(ctx, args, blocks);
  if (args.trace != 0) {
    // Measurements only: the launch's phase clocks (cycles from its start) on stderr.
    long long clocks[kStepTracePoints] = {};
    GPUQR_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    GPUQR_CUDA_CHECK(cudaMemcpyFromSymbol(clocks, g_step_clocks, sizeof clocks));
    std::fprintf(stderr, "ah_step h %lld rest %lld blocks %d:", static_cast<long long>(h),
                 static_cast<long long>(rest), blocks);
    for (int i = 1; i < kStepTracePoints; ++i) std::fprintf(stderr, " %lld", clocks[i] - clocks[0]);
    std::fprintf(stderr, "\n");
  }
  // Where it declined: the Householder kernel on the panel, then the update alone.
  MatrixView<T> p32(panel.data(), h, kB, panel.ld(), panel.space(), panel.device());
  if (!panel_qr_fused<T>(ctx, p32, tau, v, t, panel_ws, status)) {
    // Cannot happen (panel_qr_ah_step_wanted checked that it fits); the step's result stands
    // only where it factored, so this would be a silent gap: fail loudly instead.
    GPUQR_THROW(Error, "panel_qr_ah_step: the fallback panel kernel did not launch");
  }
  if (rest > 0) {
    args.update_only = 1;
    launch_step<T>(ctx, args, blocks);
  }
  return true;
}

template bool panel_qr_ah_step<float>(detail::ContextImpl&, MatrixView<float>, VectorView<float>,
                                      MatrixView<float>, MatrixView<float>, float*, float*);
template bool panel_qr_ah_step<double>(detail::ContextImpl&, MatrixView<double>, VectorView<double>,
                                       MatrixView<double>, MatrixView<double>, double*, double*);

}  // namespace gpuqr::kernels::cuda
