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
// Measured (session 20, H100, GPUQR_AH_STEP_TRACE): a step on 1024 rows and 96 more columns
// takes ~290k cycles, ~146 us, where the AH panel's launches and larfb take ~68 us: Algorithm 2
// and T 62k (the separate b x b kernel 48k), the scaling 14k, W's partials 46k, their sum and
// Y 62k, C's update 87k; the phases after Algorithm 2 are plain FP64 loops on 8 warps per
// block, bound by the FP64 pipe's latency. So it is off by default (GPUQR_AH_STEP=1 turns it
// on); the next step is W and C's update on the tensor cores (DMMA, as gram_dmma.cuh) and the
// scaling over more threads.
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
constexpr int kCluster = 8;           // portable cluster size (GPUQR_AH_STEP_CLUSTER: 2 or 4)
constexpr int kMaxRest = 96;          // the outer panel's columns after the inner one (jb <= 128)
constexpr int kRestQ = kMaxRest / 8;  // W / Y entries per thread: column tid / 32 + 8 q
constexpr int kMaxRowsPerBlock = 512;
constexpr int kPad = kMaxRest + 1;

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
/// a 32-row tile of V (sv, [row][col]), D or T (sd, [row][col]), then one region used first by
/// block 0's b x b work (x, g, d, bg, wb and tau) and later by W's partial (sw) and W, then Y
/// (sy), both [row i][column j].
constexpr std::size_t kSq = std::size_t(kB) * (kB + 1);
constexpr int kCTile = 16;  // rows of C staged per step of W's partial product
constexpr std::size_t kUnion = std::max(5 * kSq + kB, (2 * std::size_t(kB) + kCTile) * kPad);
template <class T>
constexpr std::size_t step_smem_bytes() {
  return sizeof(T) * (3 * kSq + kUnion);
}

// Measurements only (GPUQR_AH_STEP_TRACE=1): thread 0 of block 0 records clock64() at the
// phase boundaries of each launch; the host prints them after a synchronize.
constexpr int kStepTracePoints = 12;
__device__ long long g_step_clocks[kStepTracePoints];

/// Block 0's b x b work, compiled apart (not inlined) so that its register allocation is its
/// own: inlined into the step kernel it spilled (4 KB of stack in FP64).
template <class T>
__device__ __noinline__ void step_top(T (*x)[kB + 1], T (*g)[kB + 1], T (*d)[kB + 1],
                                      T (*bg)[kB + 1], T (*wb)[kB + 1], T* s_tau, int* s_ok,
                                      const StepArgs<T>& p) {
  ah::top_finish<T, kThreads>(x, g, d, bg, wb, s_tau, s_ok, p.a, p.lda, kB, p.tau, p.v, p.ldv, p.t,
                              p.ldt, p.d, p.status, p.threshold, p.warp_factor, nullptr);
}

/// V_B = P_B D for rows lo..r1, one row per thread, from the last column down (D upper
/// triangular, in sd as [row][col]); compiled apart for the same reason.
template <class T>
__device__ __noinline__ void step_scale(const StepArgs<T>& p, std::int64_t lo, std::int64_t r1,
                                        const T (*sd)[kB + 1]) {
  for (std::int64_t i = lo + threadIdx.x; i < r1; i += kThreads) {
    T row[kB];
#pragma unroll
    for (int k = 0; k < kB; ++k) row[k] = p.a[i + k * p.lda];
#pragma unroll
    for (int j = kB - 1; j >= 0; --j) {
      T s = 0;
#pragma unroll
      for (int k = 0; k <= j; ++k) s = fma(row[k], sd[k][j], s);
      row[j] = s;
    }
#pragma unroll
    for (int j = 0; j < kB; ++j) {
      p.a[i + j * p.lda] = row[j];
      p.v[i + j * p.ldv] = row[j];
    }
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
  auto take_rest = [&](int rows) {
    auto r = reinterpret_cast<T(*)[kPad]>(sm);
    sm += rows * kPad;
    return r;
  };
  T(*sg)[kB + 1] = take32();
  T(*sv)[kB + 1] = take32();
  T(*sd)[kB + 1] = take32();
  T* region = sm;
  T(*sw)[kPad] = take_rest(kB);
  T(*sy)[kPad] = take_rest(kB);
  T(*sc)[kPad] = take_rest(kCTile);
  sm = region;  // block 0's b x b work, before sw and sy are used
  T(*x)[kB + 1] = take32();
  T(*g)[kB + 1] = take32();
  T(*d)[kB + 1] = take32();
  T(*bg)[kB + 1] = take32();
  T(*wb)[kB + 1] = take32();
  T* s_tau = sm;
  __shared__ int s_ok;
  const int tid = static_cast<int>(threadIdx.x);
  auto mark = [&](int point) {
    if (p.trace != 0 && rank == 0 && tid == 0) g_step_clocks[point] = clock64();
  };
  mark(0);
  const std::int64_t r0 = static_cast<std::int64_t>(rank) * p.rows;
  const std::int64_t r1 = min(p.h, r0 + p.rows);
  const std::int64_t lo = max(r0, static_cast<std::int64_t>(kB));  // this slice below the top
  if (p.update_only != 0) {
    if (*p.status != 0) return;  // uniform: the AH step factored and updated
  } else {
    T acc[4];
    ah::gram_rows<T>(p.a, p.lda, lo, r1, kB, sv, acc);
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
        x[j][i] = p.a[i + j * p.lda];
        d[j][i] = i == j ? T(1) : T(0);
      }
      if (tid == 0) s_ok = 1;
      __syncthreads();
      mark(3);
      step_top<T>(x, g, d, bg, wb, s_tau, &s_ok, p);
      mark(4);
    }
    cluster.sync();  // the partials are read; block 0's outputs are visible to the cluster
    mark(5);
    if (*p.status != 1) return;  // uniform: the Householder kernel factors the panel
    for (int idx = tid; idx < kB * kB; idx += kThreads) {
      const int i = idx % kB, j = idx / kB;
      sd[i][j] = p.d[i + j * kB];
    }
    __syncthreads();
    step_scale<T>(p, lo, r1, sd);
    __syncthreads();  // this block's V rows, written above, are read below
    mark(6);
  }
  if (p.rest == 0) return;  // (no block reads another's shared memory after this point)
  const int rest = p.rest;
  T* c = p.a + kB * p.lda;
  const int ti = tid % 32, tj = tid / 32;  // W / Y entries (ti, tj + 8 q)
  // W_c = V(r0:r1)^T C(r0:r1), by 32-row tiles.
  T acc[kRestQ];
#pragma unroll
  for (int q = 0; q < kRestQ; ++q) acc[q] = T(0);
  for (std::int64_t base = r0; base < r1; base += kCTile) {
    for (int idx = tid; idx < kCTile * kB; idx += kThreads) {
      const int rr = idx % kCTile, cc = idx / kCTile;
      const std::int64_t row = base + rr;
      sv[rr][cc] = row < r1 ? p.v[row + cc * p.ldv] : T(0);
    }
    for (int idx = tid; idx < kCTile * rest; idx += kThreads) {
      const int rr = idx % kCTile, cc = idx / kCTile;
      const std::int64_t row = base + rr;
      sc[rr][cc] = row < r1 ? c[row + cc * p.lda] : T(0);
    }
    __syncthreads();
#pragma unroll
    for (int rr = 0; rr < kCTile; ++rr) {
      const T vi = sv[rr][ti];
#pragma unroll
      for (int q = 0; q < kRestQ; ++q) {
        const int j = tj + 8 * q;
        if (j < rest) acc[q] = fma(vi, sc[rr][j], acc[q]);
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int q = 0; q < kRestQ; ++q) {
    const int j = tj + 8 * q;
    if (j < rest) sw[ti][j] = acc[q];
  }
  for (int idx = tid; idx < kB * kB; idx += kThreads) {
    const int i = idx % kB, j = idx / kB;
    sd[i][j] = p.t[i + j * p.ldt];  // T (written by block 0 or the Householder kernel)
  }
  mark(7);
  cluster.sync();  // every block's partial W is complete
  mark(8);
  // W = the partials in rank order (the same bits in every block), then Y = T^T W; each
  // entry's loads from the cluster's blocks all in flight together.
  for (int idx = tid; idx < kB * rest; idx += kThreads) {
    const int i = idx % kB, j = idx / kB;
    T part[kCluster];
#pragma unroll
    for (int r = 0; r < kCluster; ++r)
      part[r] = r < nblocks ? cluster.map_shared_rank(&sw[i][j], r)[0] : T(0);
    T s = 0;
#pragma unroll
    for (int r = 0; r < kCluster; ++r) s += part[r];
    sy[i][j] = s;
  }
  __syncthreads();
  mark(9);
  // Y = T^T W into registers, then over W (every entry of W is read before any is written).
  T yq[kRestQ];
#pragma unroll
  for (int q = 0; q < kRestQ; ++q) {
    const int idx = tid + kThreads * q;
    const int i = idx % kB, j = idx / kB;
    T s = 0;
    if (j < rest)
      for (int l = 0; l <= i; ++l) s = fma(sd[l][i], sy[l][j], s);  // T(l, i) W(l, j)
    yq[q] = s;
  }
  __syncthreads();
#pragma unroll
  for (int q = 0; q < kRestQ; ++q) {
    const int idx = tid + kThreads * q;
    const int i = idx % kB, j = idx / kB;
    if (j < rest) sy[i][j] = yq[q];
  }
  __syncthreads();
  // C(r0:r1) -= V(r0:r1) Y, by 32-row tiles of V.
  for (std::int64_t base = r0; base < r1; base += 32) {
    for (int idx = tid; idx < 32 * kB; idx += kThreads) {
      const int rr = idx % 32, cc = idx / 32;
      const std::int64_t row = base + rr;
      sv[rr][cc] = row < r1 ? p.v[row + cc * p.ldv] : T(0);
    }
    __syncthreads();
    const std::int64_t row = base + ti;
    if (row < r1) {
#pragma unroll
      for (int q = 0; q < kRestQ; ++q) {
        const int j = tj + 8 * q;
        if (j < rest) {
          T s = 0;
#pragma unroll 8
          for (int l = 0; l < kB; ++l) s = fma(sv[ti][l], sy[l][j], s);
          c[row + j * p.lda] -= s;
        }
      }
    }
    __syncthreads();
  }
  mark(10);
  cluster.sync();  // no block exits while another may still read its partial W
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
  // Off by default: measured slower than the AH panel and cuBLAS's larfb (session 20, H100:
  // geqrf 1024 FP64 3.55 ms against 2.15-2.18; docs/PERF.md): its update phases, plain FP64
  // loops on 8 warps per block, take 150k of a step's 290k cycles. GPUQR_AH_STEP=1 turns it on.
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
