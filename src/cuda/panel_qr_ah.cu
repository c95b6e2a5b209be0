// The blocked QR's panel by QRF-AH (Tomas & Quintana-Orti 2020), with no host wait: a panel
// P (h x b, b <= 32) is factored from its Gram matrix and its top b x b block, so the tall
// part is read twice (once for the Gram matrix, once to scale it into the Householder
// vectors) and the per-column work touches only b x b matrices in one thread block: no
// per-column barrier over the tall part, which is what bounds the Householder panel kernels
// (panel_qr_single.cu, panel_qr.cu) at 1-4 us per column.
//
//   1 ah_gram_kernel     B = P_B^T P_B (P_B = rows b..h) as at most kMaxParts partial sums
//                        (tall panels: up to kMaxPartsTall, summed to kSumSegments by
//                        ah_sum_parts_kernel)
//   2 ah_top_kernel      G = P_T^T P_T + B; Algorithm 2 (ah::factor) gives R, V_T, D, tau;
//                        when it factored all b columns: T from V^T V = V_T^T V_T + D^T B D
//                        (larft's recurrence), R / V_T / tau / T written, status = 1
//   3 ah_scale_kernel    status 1: V_B = P_B D, in place and into the explicit V
// Otherwise (the norm-update test would end the panel early, or a column's squared norm is
// outside the range where Gram entries neither overflow nor underflow) status = 0 and
// nothing is written: the Householder kernel launched after these (with `skip` = status)
// factors the panel instead. The choice is made on the device; the host never waits.
// The result is geqrf's (beta = -sign(alpha) ||x||, the same tau), up to rounding.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "src/core/qrf_ah_kernels.hpp"
#include "src/cuda/ah_top.cuh"
#include "src/cuda/check.hpp"
#include "src/cuda/panel_qr.hpp"
#include "src/cuda/pdl.cuh"
#include "src/cuda/qrf_ah_panel.cuh"
#include "src/cuda/safe_range.cuh"

namespace gpuqr::kernels::cuda {
namespace {

constexpr int kB = kPanelMaxWidth;  // 32
constexpr int kThreads = 256;  // the Gram pass: 4 entries of the 32 x 32 tile per thread
constexpr int kMaxParts = 128;  // partial Gram matrices summed by the top kernel
// Tall panels (more than kMaxParts * kTallChunk rows below the top block): up to
// kMaxPartsTall partials of at least kTallChunk rows, so that the Gram pass has enough blocks
// in flight (with 128 blocks it read a 1048576 x 32 FP64 panel at 0.7 TB/s: H200, ncu,
// session 15), summed by ah_sum_parts_kernel into kSumSegments partials for the top kernel.
constexpr int kMaxPartsTall = 2048;
constexpr std::int64_t kTallChunk = 512;
constexpr int kSumSegments = 16;
/// Whether an h-row panel takes the tall path (h - kB: the fewest rows below its top block);
/// the workspace's size follows it (panel_qr_ah_workspace_elems).
bool tall_panel(std::int64_t h) { return h - kB > kMaxParts * kTallChunk; }
constexpr int kMinChunk = 64;  // rows per partial, at least (GPUQR_AH_MIN_CHUNK: measurements)
// The b x b kernel's block: 8 warps share its products; Algorithm 2 runs on 4 of them by
// default (factor_block_warps_interleaved; factor_block_warps in mode 4), on all 8 in the
// block's version (4 warps of 8 rows there: 1.3x slower).
constexpr int kTopThreads = 256;
constexpr int kScaleThreads = 64;  // V_B = P_B D: small blocks spread short panels over SMs
// panel_qr_ah_warp_factor's default: Algorithm 2 by four warps, rows interleaved over them,
// with the third-order reciprocal steps (mode 7; H100, session 29 run 1, 1024 x 32 panel,
// median of 30 against mode 4, the blocked rows: FP64 42.1 us against 46.4, FP32 35.5 against
// 37.3), and the block's other four warps running the four's instructions ahead of them
// (mode 10: ncu put 45% of mode 7's stall cycles on instruction fetch). H100, session 33 run
// 3, against mode 7 in the same run: 1024 x 32 panel FP64 37.0 us against 41.1 (Algorithm 2
// 27.1k cycles against 29.6k; FP32 22.1k against 23.3k); geqrf FP64 1024 with replay 1.366
// / 1.376 ms against 1.420 / 1.395.
constexpr int kDefaultWarpFactor = 10;
constexpr std::int64_t kScaleShareRows = 16384;  // four lanes a row up to here (ah_scale_kernel)
// The AH panel's fewest rows: with Algorithm 2 by four warps it beats the single-block
// Householder kernel from 96 rows (H200, session 17 run 3, 96 x 32: FP64 41.7 us against 55.3,
// FP32 34.6 against 43.5; shorter random panels are often declined by the amplification test).
constexpr std::int64_t kMinRowsDouble = 96, kMinRowsFloat = 96;

// Measurements only (panel_qr_ah_trace): when g_ah_trace is set, thread 0 of the top kernel
// records clock64() at its phase boundaries (start, B and top block read, G, Algorithm 2,
// V^T V, T, end) into g_ah_clocks.
constexpr int kAhTracePoints = 8;
__device__ int g_ah_trace = 0;
__device__ long long g_ah_clocks[kAhTracePoints];

/// Partial p of B = P_B^T P_B over rows [b + p chunk, b + (p + 1) chunk) of the panel, all
/// kB x kB entries (zeros past b): ah::gram_rows.
template <class T>
__global__ void __launch_bounds__(kThreads) ah_gram_kernel(const T* a, std::int64_t lda,
                                                           std::int64_t h, int b,
                                                           std::int64_t chunk, T* parts) {
  pdl::enter();
  __shared__ T tile[32][kB + 1];  // [row][col]
  const std::int64_t r0 = b + blockIdx.x * chunk;
  T acc[4];
  ah::gram_rows<T>(a, lda, r0, min(h, r0 + chunk), b, tile, acc);
  const int gi = threadIdx.x % 32, gj = threadIdx.x / 32;
  T* out = parts + static_cast<std::int64_t>(blockIdx.x) * kB * kB;
#pragma unroll
  for (int q = 0; q < 4; ++q) out[gi + (gj + 8 * q) * kB] = acc[q];
}

/// Sums partials [s P / S, (s + 1) P / S) of `parts` (P = nparts, S = kSumSegments) into
/// out[s], column c of each by block (c, s): 8 groups of 32 lanes over the partials, then the
/// groups in order (a fixed order: the same result on every run).
template <class T>
__global__ void __launch_bounds__(kThreads)
    ah_sum_parts_kernel(const T* parts, int nparts, T* out) {
  pdl::enter();
  __shared__ T sums[kThreads / 32][32];
  const int c = blockIdx.x, seg = blockIdx.y, r = threadIdx.x % 32, g = threadIdx.x / 32;
  const int p0 = static_cast<int>(static_cast<std::int64_t>(nparts) * seg / kSumSegments);
  const int p1 = static_cast<int>(static_cast<std::int64_t>(nparts) * (seg + 1) / kSumSegments);
  T acc = T(0);
#pragma unroll 4
  for (int p = p0 + g; p < p1; p += kThreads / 32)
    acc += parts[static_cast<std::int64_t>(p) * kB * kB + r + c * kB];
  sums[g][r] = acc;
  __syncthreads();
  if (g == 0) {
    T total = T(0);
#pragma unroll
    for (int q = 0; q < kThreads / 32; ++q) total += sums[q][r];
    out[static_cast<std::int64_t>(seg) * kB * kB + r + c * kB] = total;
  }
}

/// acc[q] += part(p, q) for the partials p, p + 1, ... in order, kU at a time while kU more
/// remain (their loads all in flight together); advances p.
template <int kU, int kQ, class T, class Part>
__device__ __forceinline__ void sum_partials(int& p, int nparts, T* acc, Part part) {
  for (; p + kU <= nparts; p += kU) {
    T v[kU][kQ];
#pragma unroll
    for (int u = 0; u < kU; ++u)
#pragma unroll
      for (int q = 0; q < kQ; ++q) v[u][q] = part(p + u, q);
#pragma unroll
    for (int u = 0; u < kU; ++u)
#pragma unroll
      for (int q = 0; q < kQ; ++q) acc[q] += v[u][q];
  }
}

/// The b x b work, one thread block: see the file comment. status[0] = 1 when the panel was
/// factored here, 0 when it is left (unchanged) to the Householder kernel. Shared matrices
/// are stored [col][row] (entry (i, j) at [j][i]), as ah::factor_block takes them.
template <class T, int kTop>
__global__ void __launch_bounds__(kTop)
    ah_top_kernel(T* a, std::int64_t lda, int b, const T* parts, int nparts, T* tau_out, T* v,
                  std::int64_t ldv, T* t_out, std::int64_t ldt, T* d_out, int* status,
                  double threshold, int warp_factor, T* b_out, int wide_read) {
  pdl::enter();
  __shared__ T x[kB][kB + 1], g[kB][kB + 1], d[kB][kB + 1], bg[kB][kB + 1], wb[kB][kB + 1];
  __shared__ T s_tau[kB];
  __shared__ int s_ok;
  const int tid = threadIdx.x;
  const bool trace = g_ah_trace != 0;
  auto mark = [&](int p) {
    if (trace && tid == 0) g_ah_clocks[p] = clock64();
  };
  mark(0);
  // B in a fixed order (the same result on every run: each entry summed over the partials in
  // order), the top block, D = I. Thread t owns entries t + kTop q; the loads of several
  // partials for all of them are in flight together (the partials were just written: L2
  // latency, each round of loads ~650 cycles). wide_read (GPUQR_AH_WIDE_READ, default 3): 0,
  // 4 partials at a time; 1, the top block's loads issued first, then 8 partials at a time; 2, as 1 but only the partials' upper triangles (i <= j), each entry
  // mirrored in shared memory: the partials are symmetric bit for bit (the Gram pass forms
  // (i, j) and (j, i) from the same products in the same order), so half the bytes give the
  // same B (measured no faster: session 32); 3, as 1 with 16 partials at a time. The same
  // sums in the same order: the same bits in every mode.
  constexpr int kQ = kB * kB / kTop;
  static_assert(kQ * kTop == kB * kB, "kTop divides 32 x 32");
  {
    T top[kQ];
#pragma unroll
    for (int q = 0; q < kQ; ++q) {
      const int idx = tid + kTop * q, i = idx % kB, j = idx / kB;
      if (wide_read) top[q] = (i < b && j < b) ? a[i + j * lda] : T(0);
    }
    const bool sym = wide_read == 2;
    // Entry q of this thread, (tid % kB, tid / kB + (kTop / kB) q), is read unless sym and
    // below the diagonal.
    auto part = [&](int p, int q) {
      const bool want = !sym || tid % kB <= tid / kB + (kTop / kB) * q;
      return want ? parts[static_cast<std::int64_t>(p) * kB * kB + tid + kTop * q] : T(0);
    };
    T acc[kQ];
#pragma unroll
    for (int q = 0; q < kQ; ++q) acc[q] = T(0);
    int p = 0;
    // (128 threads: 8 entries each, no registers for 8 partials at a time)
    if (kQ <= 4 && wide_read == 3) sum_partials<16, kQ>(p, nparts, acc, part);
    if (kQ <= 4 && wide_read) sum_partials<8, kQ>(p, nparts, acc, part);
    sum_partials<4, kQ>(p, nparts, acc, part);
    sum_partials<1, kQ>(p, nparts, acc, part);
#pragma unroll
    for (int q = 0; q < kQ; ++q) {
      const int idx = tid + kTop * q, i = idx % kB, j = idx / kB;
      if (!sym) {
        bg[j][i] = acc[q];
      } else if (i <= j) {  // (i > j: written by the thread of (j, i))
        bg[j][i] = acc[q];
        bg[i][j] = acc[q];
      }
      x[j][i] = wide_read ? top[q] : ((i < b && j < b) ? a[i + j * lda] : T(0));
      d[j][i] = i == j ? T(1) : T(0);
    }
  }
  if (tid == 0) s_ok = 1;
  __syncthreads();
  mark(1);
  ah::top_finish<T, kTop>(x, g, d, bg, wb, s_tau, &s_ok, a, lda, b, tau_out, v, ldv, t_out, ldt,
                          d_out, status, threshold, warp_factor, trace ? g_ah_clocks : nullptr,
                          b_out);
}

/// T of a panel the b x b kernel factored with `b_out` (status 1; otherwise nothing), from
/// what that kernel wrote: the top block of R and V_T (a), D, B and tau (ah::vtv_and_t, the
/// same bits as the b x b kernel's own). Launched right after the scaling kernel and run
/// beside it: it is put on the GPU once every scaling block has passed pdl::enter, that is
/// after the b x b kernel finished, so it starts without waiting, reads through L2 (__ldcg),
/// and waits for the scaling kernel only before it ends (pdl::wait on every path), so that
/// the kernels after it still see both. Scaling and T then cost the longer of the two on
/// the panel's chain, not their sum.
template <class T>
__global__ void __launch_bounds__(kTopThreads)
    ah_t_kernel(const T* a, std::int64_t lda, int b, const T* dm, const T* bsum, const T* tau,
                const int* status, T* t_out, std::int64_t ldt) {
  pdl::trigger();
  __shared__ T x[kB][kB + 1], g[kB][kB + 1], d[kB][kB + 1], bg[kB][kB + 1], wb[kB][kB + 1];
  __shared__ T s_tau[kB];
  const int tid = threadIdx.x;
  if (__ldcg(status) == 1) {  // uniform
    for (int idx = tid; idx < kB * kB; idx += kTopThreads) {
      const int i = idx % kB, j = idx / kB;
      const bool in = i < b && j < b;
      x[j][i] = in ? __ldcg(a + i + j * lda) : T(0);
      d[j][i] = in ? __ldcg(dm + i + j * kB) : (i == j ? T(1) : T(0));
      bg[j][i] = in ? __ldcg(bsum + i + j * kB) : T(0);
    }
    if (tid < kB) s_tau[tid] = tid < b ? __ldcg(tau + tid) : T(0);
    __syncthreads();
    ah::vtv_and_t<T, kTopThreads>(x, g, d, bg, wb, s_tau, b, nullptr);
    for (int idx = tid; idx < b * b; idx += kTopThreads) {
      const int i = idx % b, j = idx / b;
      t_out[i + j * ldt] = g[j][i];
    }
  }
  pdl::wait();
}

/// V_B = P_B D for rows b..h (status 1 only), Lanes lanes a row: each loads the row's b
/// entries and forms the outputs j = q, q + Lanes, ... (q its place among them; D is upper
/// triangular, so output j sums j + 1 terms, in the same order however many lanes share the
/// row), and they store only after all of them have loaded (same warp, __syncwarp): the
/// outputs overwrite the row in place. Four lanes for short panels: one lane a row took ~10 us
/// on 1024 x 32 (ncu, H200, session 27), a chain of 528 FMAs and shared loads in each of two
/// warps an SM; one for tall ones, which are bound by reading the panel.
template <class T, int Lanes>
__global__ void __launch_bounds__(kScaleThreads)
    ah_scale_kernel(T* a, std::int64_t lda, std::int64_t h, int b, const T* dm, const int* status,
                    T* v, std::int64_t ldv) {
  pdl::enter();
  if (*status != 1) return;
  __shared__ T sd[kB][kB + 1];
  for (int idx = threadIdx.x; idx < kB * kB; idx += kScaleThreads) {
    const int i = idx % kB, j = idx / kB;
    sd[i][j] = (i < b && j < b) ? dm[i + j * kB] : T(0);
  }
  __syncthreads();
  constexpr int kLanesPerRow = Lanes, kOut = kB / kLanesPerRow;
  const int q = threadIdx.x % kLanesPerRow;
  const std::int64_t i =
      b + (static_cast<std::int64_t>(blockIdx.x) * kScaleThreads + threadIdx.x) / kLanesPerRow;
  const bool row = i < h;  // no early return: the row's lanes meet at the __syncwarp below
  T p[kB];
#pragma unroll
  for (int k = 0; k < kB; ++k) p[k] = row && k < b ? a[i + k * lda] : T(0);
  T out[kOut];
#pragma unroll
  for (int o = 0; o < kOut; ++o) {
    const int j = q + kLanesPerRow * o;
    T s = 0;
#pragma unroll
    for (int k = 0; k < kB; ++k)
      if (k <= j) s += p[k] * sd[k][j];
    out[o] = s;
  }
  __syncwarp();  // every lane of the row has read it
  if (!row) return;
#pragma unroll
  for (int o = 0; o < kOut; ++o) {
    const int j = q + kLanesPerRow * o;
    if (j < b) {
      a[i + j * lda] = out[o];
      v[i + j * ldv] = out[o];
    }
  }
}

std::atomic<int> mode_override{-1};  // panel_qr_ah_mode(): -1 default, 0 off, 1 on
std::atomic<int> warp_override{-1};  // panel_qr_ah_warp_mode(): -1 default, 0 block, 1 warp
std::atomic<int> t_beside_override{-1};  // panel_qr_ah_t_beside_mode(): -1 default, 0, 1
std::atomic<int> read_override{-1};      // panel_qr_ah_read_mode(): -1 default, 0..3

}  // namespace

void panel_qr_ah_trace(bool on) {
  const int v = on ? 1 : 0;
  GPUQR_CUDA_CHECK(cudaMemcpyToSymbol(g_ah_trace, &v, sizeof v));
}

void panel_qr_ah_trace_clocks(long long* out) {
  GPUQR_CUDA_CHECK(cudaMemcpyFromSymbol(out, g_ah_clocks, sizeof(long long) * kAhTracePoints));
}

void panel_qr_ah_mode(int mode) { mode_override.store(mode); }

void panel_qr_ah_warp_mode(int mode) { warp_override.store(mode); }
int panel_qr_ah_override() { return mode_override.load(); }

void panel_qr_ah_t_beside_mode(int mode) { t_beside_override.store(mode); }
int panel_qr_ah_t_beside_override() { return t_beside_override.load(); }
void panel_qr_ah_read_mode(int mode) { read_override.store(mode); }
int panel_qr_ah_read_override() { return read_override.load(); }

bool panel_qr_ah_t_beside() {
  const int mode = t_beside_override.load();
  if (mode >= 0) return mode == 1;
  static const bool env_on = [] {  // GPUQR_AH_T_BESIDE=0: T in the b x b kernel (A/B runs)
    const char* text = std::getenv("GPUQR_AH_T_BESIDE");
    return text == nullptr || std::atoi(text) != 0;
  }();
  return env_on;
}
int panel_qr_ah_warp_override() { return warp_override.load(); }

int panel_qr_ah_warp_factor() {
  // Clock64 per phase on an H200 (session 17 run 3, 1024 x 32), Algorithm 2: FP64 25.6k
  // cycles by four warps, 47.6k by one, 49.9k by the block; FP32 15.8k, 33.5k, 43.7k. Modes
  // 6 and 7 (session 29): the four warps with the rows interleaved, 7 also with the shorter
  // reciprocal chains; 10 (session 33, kDefaultWarpFactor): 7 with shadow warps.
  static const int env_warp = [] {
    const char* text = std::getenv("GPUQR_AH_WARP");
    const int v = text != nullptr && *text != '\0' ? std::atoi(text) : kDefaultWarpFactor;
    return v == 0 || v == 1 || v == 4 || v == 6 || v == 7 || v == 10 ? v : kDefaultWarpFactor;
  }();
  const int mode = warp_override.load();
  return mode < 0 ? env_warp : mode;
}

std::int64_t panel_qr_ah_min_rows(int elem_bytes) {
  const int mode = mode_override.load();
  if (mode == 0) return 0;
  if (mode == 1) return 1;
  static const std::int64_t env_rows = [] {
    const char* text = std::getenv("GPUQR_PANEL_AH");
    if (text != nullptr && std::atoi(text) == 0) return std::int64_t{0};
    const char* min_text = std::getenv("GPUQR_PANEL_AH_MIN_ROWS");
    const long long v = min_text != nullptr ? std::atoll(min_text) : 0;
    return v > 0 ? static_cast<std::int64_t>(v) : std::int64_t{-1};
  }();
  if (env_rows >= 0) return env_rows;
  // Where it beat the single-block Householder kernel on an H100 (gpuqr_panel_bench, b = 32,
  // docs/PERF.md); shorter panels keep that kernel.
  return elem_bytes == 8 ? kMinRowsDouble : kMinRowsFloat;
}

std::int64_t panel_qr_ah_workspace_elems(std::int64_t h) {
  // Partial Gram matrices, D, the status word (one element's room, aligned), B for the T
  // kernel, then, for a tall panel only, its partials and their sums by segment.
  const std::int64_t base = static_cast<std::int64_t>(kMaxParts) * kB * kB + 2 * kB * kB + 32;
  return tall_panel(h) ? base + static_cast<std::int64_t>(kMaxPartsTall + kSumSegments) * kB * kB
                       : base;
}

template <class T>
int* panel_qr_ah(detail::ContextImpl& ctx, MatrixView<T> panel, VectorView<T> tau,
                 MatrixView<T> v, MatrixView<T> t, T* workspace) {
  const std::int64_t h = panel.rows();
  const int b = static_cast<int>(panel.cols());
  const std::int64_t min_rows = panel_qr_ah_min_rows(static_cast<int>(sizeof(T)));
  if (min_rows <= 0 || h < min_rows || b < 2 || b > kB || h < 2 * b) return nullptr;
  // Layout: kMaxParts partials, D, the status word, B, then the tall panels' partials and
  // their sums.
  T* parts = workspace;
  T* dm = parts + static_cast<std::int64_t>(kMaxParts) * kB * kB;
  int* status = reinterpret_cast<int*>(dm + kB * kB);
  T* bsum = dm + kB * kB + 32;
  T* tall_parts = bsum + kB * kB;
  T* sums = tall_parts + static_cast<std::int64_t>(kMaxPartsTall) * kB * kB;
  const std::int64_t below = h - b;
  const bool tall = tall_panel(h);  // then below > kMaxParts * kTallChunk too
  const std::int64_t max_parts = tall ? kMaxPartsTall : kMaxParts;
  static const std::int64_t min_chunk = [] {
    const char* text = std::getenv("GPUQR_AH_MIN_CHUNK");
    const long long v = text != nullptr ? std::atoll(text) : 0;
    return v >= 32 && v <= 4096 && v % 32 == 0 ? static_cast<std::int64_t>(v)
                                               : std::int64_t{kMinChunk};
  }();
  static const int env_read = [] {  // GPUQR_AH_WIDE_READ=0 / 1 / 2: the other reads
    const char* text = std::getenv("GPUQR_AH_WIDE_READ");
    const int v = text != nullptr ? std::atoi(text) : 3;
    return v >= 0 && v <= 2 ? v : 3;
  }();
  const int read_mode = read_override.load();
  const int wide_read = read_mode >= 0 && read_mode <= 3 ? read_mode : env_read;
  std::int64_t chunk =
      std::max<std::int64_t>(tall ? kTallChunk : min_chunk, (below + max_parts - 1) / max_parts);
  chunk = (chunk + 31) / 32 * 32;
  int nparts = static_cast<int>((below + chunk - 1) / chunk);
  const double threshold = std::max(detail::kAhRemainingFraction,
                                    std::sqrt(double(std::numeric_limits<T>::epsilon())));
  const int dev = ctx.device;
  pdl::launch(dev, ah_gram_kernel<T>, dim3(nparts), dim3(kThreads), 0, ctx.stream, panel.data(),
              panel.ld(), h, b, chunk, tall ? tall_parts : parts);
  if (tall) {
    pdl::launch(dev, ah_sum_parts_kernel<T>, dim3(kB, kSumSegments), dim3(kThreads), 0, ctx.stream,
                tall_parts, nparts, sums);
    parts = sums;
    nparts = kSumSegments;
  }
  // The b x b work's block size (GPUQR_AH_THREADS=128 or 256, for measurements).
  static const int top_threads = [] {
    const char* text = std::getenv("GPUQR_AH_THREADS");
    const int v = text != nullptr ? std::atoi(text) : 0;
    return v == 128 || v == 256 ? v : kTopThreads;
  }();
  const int warp_factor = panel_qr_ah_warp_factor();
  T* t_out = t.empty() ? nullptr : t.data();
  // T beside the scaling (ah_t_kernel) rather than in the b x b kernel; with no T wanted,
  // neither (the b x b kernel then skips V^T V and T too).
  const bool t_beside = panel_qr_ah_t_beside();
  T* b_out = t_beside ? bsum : nullptr;
  if (top_threads == 128) {
    pdl::launch(dev, ah_top_kernel<T, 128>, dim3(1), dim3(128), 0, ctx.stream, panel.data(),
                panel.ld(), b, static_cast<const T*>(parts), nparts, tau.data(), v.data(), v.ld(),
                t_out, t.ld(), dm, status, threshold, warp_factor, b_out, wide_read);
  } else {
    pdl::launch(dev, ah_top_kernel<T, 256>, dim3(1), dim3(256), 0, ctx.stream, panel.data(),
                panel.ld(), b, static_cast<const T*>(parts), nparts, tau.data(), v.data(), v.ld(),
                t_out, t.ld(), dm, status, threshold, warp_factor, b_out, wide_read);
  }
  // Four lanes a row up to kScaleShareRows rows below the top block (latency-bound), else one.
  static const bool one_lane = [] {  // GPUQR_AH_SCALE_LANES=1: one lane a row (A/B runs)
    const char* text = std::getenv("GPUQR_AH_SCALE_LANES");
    return text != nullptr && std::atoi(text) == 1;
  }();
  const int lanes = below <= kScaleShareRows && !one_lane ? 4 : 1;
  const std::int64_t rows_per_block = kScaleThreads / lanes;
  const auto blocks = static_cast<unsigned>((below + rows_per_block - 1) / rows_per_block);
  if (lanes == 4)
    pdl::launch(dev, ah_scale_kernel<T, 4>, dim3(blocks), dim3(kScaleThreads), 0, ctx.stream,
                panel.data(), panel.ld(), h, b, static_cast<const T*>(dm),
                static_cast<const int*>(status), v.data(), v.ld());
  else
    pdl::launch(dev, ah_scale_kernel<T, 1>, dim3(blocks), dim3(kScaleThreads), 0, ctx.stream,
                panel.data(), panel.ld(), h, b, static_cast<const T*>(dm),
                static_cast<const int*>(status), v.data(), v.ld());
  if (t_beside && t_out != nullptr)
    pdl::launch(dev, ah_t_kernel<T>, dim3(1), dim3(kTopThreads), 0, ctx.stream,
                static_cast<const T*>(panel.data()), panel.ld(), b, static_cast<const T*>(dm),
                static_cast<const T*>(bsum), static_cast<const T*>(tau.data()),
                static_cast<const int*>(status), t_out, t.ld());
  return status;
}

template int* panel_qr_ah<float>(detail::ContextImpl&, MatrixView<float>, VectorView<float>,
                                 MatrixView<float>, MatrixView<float>, float*);
template int* panel_qr_ah<double>(detail::ContextImpl&, MatrixView<double>, VectorView<double>,
                                  MatrixView<double>, MatrixView<double>, double*);

}  // namespace gpuqr::kernels::cuda
