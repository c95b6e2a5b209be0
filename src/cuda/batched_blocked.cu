// The blocked route of the batched QR: LAPACK's geqrf blocking with the trailing update done
// by cuBLAS batched GEMMs, for matrices too large for the register kernel whose m x nb panel
// fits shared memory. Per panel step j (nb columns, jb = min(nb, k - j) of them):
//
//   1. panel kernel, a thread block per matrix: A(j:m, j:j+jb) into shared memory, unblocked
//      Householder QR there (LAPACK's larfg conventions, as batched_block.cu), R, V and tau
//      written back to A; when trailing columns remain, also V (explicit: unit diagonal, zeros
//      above) and Y = V T (T: larft's forward upper triangular factor, from V^T V and tau in
//      shared memory) into the matrix's workspace.
//   2. W = Y^T C and C := C - V W, C = A(j:m, j+jb:n): H^T = I - V T^T V^T from the left, as
//      two batched GEMMs for the whole batch.
//
// So a step is 3 launches (the panel, two cuBLAS calls) whatever the batch's shapes:
//   strided batch     cublas<t>gemmStridedBatched (A's stride, the workspace's stride);
//   listed, one shape cublas<t>gemmBatched on device pointer arrays;
//   listed, several   cublas<t>gemmGroupedBatched (one group per distinct (rows, nc, jb, ld)
//                     at that step), which keeps a variable-size batch at 2 GEMM calls per step
//                     where bucketing by shape would cost 2 calls per distinct shape per step
//                     (hundreds for sizes drawn from 8..512).
//   listed, several   or our fused update kernel (batched_update.cu: one launch for all
//                     shapes; the grouped GEMM gets one group per matrix there, as C's ld
//                     differs per matrix): the default in FP32, GPUQR_BATCHED_VGEMM=1 in
//                     FP64 too, =2 for one shape too, =0 cuBLAS in FP32 too (own_update).
// The pointer arrays, descriptors and workspace offsets of every step are built on the host
// once per call and uploaded in one copy; the GEMM group arrays are host arrays built once.
// A listed batch is ordered by k = min(m, n), largest first, so the matrices that still have
// a panel at step j are a prefix: the panel grid shrinks instead of exiting blocks.
//
// Workspace per matrix (elements, from the call's scratch): V and Y (m x nb each, ld = the
// step's rows) and W (nb x n, ld = jb), rounded up to 32 elements.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "src/cuda/batched_internal.hpp"
#include "src/cuda/check.hpp"
#include "src/cuda/larfg_scalars.cuh"

namespace gpuqr::kernels::cuda {
namespace {

std::atomic<int> route_override{static_cast<int>(BatchedRoute::automatic)};
std::atomic<int> nb_override{0};
std::atomic<int> update_override{static_cast<int>(BatchedUpdate::automatic)};

}  // namespace

void set_batched_route(BatchedRoute route, int nb) {
  route_override.store(static_cast<int>(route));
  nb_override.store(nb == 8 || nb == 16 || nb == 32 ? nb : 0);
}

void set_batched_update(BatchedUpdate update) { update_override.store(static_cast<int>(update)); }

namespace batched {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr std::int64_t kWsAlign = 32;     // elements: every matrix's workspace starts aligned
constexpr std::size_t kAlignBytes = 256;  // the workspace region's start
constexpr std::size_t kStageAlign = 16;   // arrays inside the uploaded staging block

/// GPUQR_BATCHED_ROUTE, read once: "old" (no blocked route), "blocked" (wherever it fits),
/// anything else or unset: the size rules.
BatchedRoute env_route() {
  static const BatchedRoute route = [] {
    const char* v = std::getenv("GPUQR_BATCHED_ROUTE");
    const std::string s = v == nullptr ? "" : v;
    if (s == "old") return BatchedRoute::old;
    if (s == "blocked") return BatchedRoute::blocked;
    return BatchedRoute::automatic;
  }();
  return route;
}

/// GPUQR_BATCHED_NB, read once: 8, 16 or 32; anything else or unset: 0 (the default, 32).
int env_nb() {
  static const int nb = [] {
    const char* v = std::getenv("GPUQR_BATCHED_NB");
    const int x = v == nullptr ? 0 : std::atoi(v);
    return x == 8 || x == 16 || x == 32 ? x : 0;
  }();
  return nb;
}

/// GPUQR_BATCHED_VGEMM, read once: "0" cuBLAS everywhere (gemmGroupedBatched for mixed
/// shapes), "1" our fused update kernel where a step has several shapes, "2" ours at every
/// listed step; anything else or unset: automatic (below).
BatchedUpdate env_update() {
  static const BatchedUpdate update = [] {
    const char* v = std::getenv("GPUQR_BATCHED_VGEMM");
    const std::string s = v == nullptr ? "" : v;
    if (s == "0") return BatchedUpdate::cublas;
    if (s == "1") return BatchedUpdate::mixed;
    if (s == "2") return BatchedUpdate::own;
    return BatchedUpdate::automatic;
  }();
  return update;
}

/// Whether a listed step whose update has `shapes` distinct (rows, nc, jb, ld) runs our update
/// kernel (batched_update.cu) rather than cuBLAS. Automatic: FP32 ours where the step has
/// several shapes, FP64 cuBLAS (H100, session 9, var batch 8..512 at 0.5 GiB: FP32 11.5 ms
/// ours against 14.9 cuBLAS; FP64 10.5 against 10.0).
template <class T>
bool own_update(std::size_t shapes) {
  auto u = static_cast<BatchedUpdate>(update_override.load());
  if (u == BatchedUpdate::automatic) u = env_update();
  if (u == BatchedUpdate::automatic)
    u = sizeof(T) == 4 ? BatchedUpdate::mixed : BatchedUpdate::cublas;
  if (u == BatchedUpdate::cublas) return false;
  if (u == BatchedUpdate::own) return true;
  return shapes > 1;
}

BatchedRoute current_route() {
  const auto r = static_cast<BatchedRoute>(route_override.load());
  return r != BatchedRoute::automatic ? r : env_route();
}

/// The panel width for an m x n matrix: forced (tests, GPUQR_BATCHED_NB), else 16 for n <= 64
/// and for tall matrices (m >= 4n), 32 otherwise. Measured on an H100 (session 8, FP64, 0.5
/// GiB batches, ms at nb 32 / 16): 64x64 5.07 / 4.70, 256x64 3.76 / 3.30, 512x128 6.30 / 4.56,
/// 1024x256 7.77 / 7.78; 128x128 4.21 / 4.36, 256x256 4.58 / 5.42, 512x512 6.81 / 9.14.
int wanted_nb(std::int64_t m, std::int64_t n) {
  const int forced = nb_override.load();
  if (forced != 0) return forced;
  const int env = env_nb();
  if (env != 0) return env;
  return n <= 64 || m >= 4 * n ? 16 : 32;
}

/// Shared memory (elements) of the panel kernel for an m-row panel of width nb: the panel
/// (ld m + 1 at most) dynamic, T and tau static, a few scalars.
std::int64_t panel_elems(std::int64_t m, int nb) { return (m + 1) * nb + nb * nb + nb + 8; }

std::int64_t ws_elems(std::int64_t m, std::int64_t n, int nb) {
  return ((2 * m + n) * nb + kWsAlign - 1) / kWsAlign * kWsAlign;
}

template <class T>
__device__ T warp_sum(T v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

template <class T>
__device__ T warp_max(T v) {
  for (int offset = 16; offset > 0; offset >>= 1)
    v = fmax(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

/// ||col(from:rows)||_2 on one warp, overflow/underflow safe (LAPACK's nrm2 idea). The xor
/// butterfly leaves the same bits on every lane, so every lane may act on the result.
template <class T>
__device__ T warp_tail_norm(const T* col, int from, int rows, int lane) {
  T ssq = 0;
  for (int i = from + lane; i < rows; i += 32) ssq += col[i] * col[i];
  ssq = warp_sum(ssq);
  const T small = std::numeric_limits<T>::min() / std::numeric_limits<T>::epsilon();
  if (ssq >= small && ssq <= std::numeric_limits<T>::max()) return sqrt(ssq);
  T amax = 0;
  for (int i = from + lane; i < rows; i += 32) amax = fmax(amax, fabs(col[i]));
  amax = warp_max(amax);
  if (amax == T(0)) return T(0);
  T scaled = 0;
  for (int i = from + lane; i < rows; i += 32) {
    const T x = col[i] / amax;
    scaled += x * x;
  }
  return amax * sqrt(warp_sum(scaled));
}

/// Unblocked Householder QR of the rows x jb panel s (ld lds) in shared memory; tau into
/// s_tau. Column c belongs to warp c % kWarps, which forms its reflector (norm, larfg, scaling)
/// alone right after applying the previous reflector to it, so one block barrier per column
/// suffices: after it every warp applies reflector c to its own columns > c.
template <class T>
__device__ void factor_panel(T* s, int lds, int rows, int jb, T* s_tau) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int c = 0; c < jb; ++c) {
    T* vc = s + c * lds;
    if (warp == c % kWarps) {
      // LAPACK's larfg (see batched_block.cu); every lane holds the same values (the xor
      // butterfly's sums are bit-identical). In range, the scalars come from the refined
      // reciprocal square root and reciprocal (larfg_scalars.cuh); else the scaled norm.
      const T alpha = vc[c];
      T ssq = 0;
      for (int i = c + 1 + lane; i < rows; i += 32) ssq += vc[i] * vc[i];
      ssq = warp_sum(ssq);
      const T total = alpha * alpha + ssq;
      T t = 0, beta = alpha, scale = 0;
      bool reflect = false;
      if (larfg_in_range(ssq, total)) {
        const Scalars<T> h = larfg_scalars(alpha, total);
        beta = h.beta;
        t = h.tau;
        scale = h.scale;
        reflect = true;
      } else {
        const T xnorm = warp_tail_norm(vc, c + 1, rows, lane);
        if (xnorm != T(0)) {
          beta = -copysign(hypot(alpha, xnorm), alpha);
          t = (beta - alpha) / beta;
          scale = T(1) / (alpha - beta);
          reflect = true;
        }
      }
      if (reflect) {
        __syncwarp();  // every lane has read alpha before lane 0 overwrites it with beta
        for (int i = c + 1 + lane; i < rows; i += 32) vc[i] *= scale;
        if (lane == 0) vc[c] = beta;
      }
      if (lane == 0) s_tau[c] = t;
    }
    __syncthreads();  // v_c and tau_c are published; nobody rewrites them later
    const T tc = s_tau[c];
    if (tc != T(0)) {
      const int first = c + 1 + ((warp - (c + 1)) % kWarps + kWarps) % kWarps;
      for (int cc = first; cc < jb; cc += kWarps) {
        T* ac = s + cc * lds;
        T dot = 0;
        for (int i = c + 1 + lane; i < rows; i += 32) dot += vc[i] * ac[i];
        const T pivot = ac[c];
        const T w = tc * (warp_sum(dot) + pivot);
        __syncwarp();  // every lane has read the pivot entry before lane 0 changes it
        if (lane == 0) ac[c] = pivot - w;
        for (int i = c + 1 + lane; i < rows; i += 32) ac[i] -= w * vc[i];
      }
    }
    __syncwarp();  // this warp's column writes are seen by its next column's norm
  }
  __syncthreads();
}

/// larft (forward, columnwise) of the factored panel: T (jb x jb, upper, ld NB) into s_t's
/// upper triangle; G = V^T V's strict upper part is staged transposed in its strict lower one
/// (G(q, i) at (i, q)), so the two never overlap.
template <class T, int NB>
__device__ void form_t(const T* s, int lds, int rows, int jb, const T* s_tau, T* s_t) {
  const int pairs = jb * (jb - 1) / 2;
  for (int e = threadIdx.x; e < pairs; e += blockDim.x) {
    // Pair e = i (i - 1) / 2 + q with 0 <= q < i.
    int i = static_cast<int>((1.0f + sqrtf(1.0f + 8.0f * static_cast<float>(e))) * 0.5f);
    while (i * (i - 1) / 2 > e) --i;
    while ((i + 1) * i / 2 <= e) ++i;
    const int q = e - i * (i - 1) / 2;
    const T* vq = s + q * lds;
    const T* vi = s + i * lds;
    T g = vq[i];  // v_i(i) = 1
    for (int r = i + 1; r < rows; ++r) g += vq[r] * vi[r];
    s_t[i + q * NB] = g;
  }
  __syncthreads();
  // Row p of T depends only on row p's earlier entries and G: a thread per row, no barrier.
  if (threadIdx.x < jb) {
    const int p = threadIdx.x;
    s_t[p + p * NB] = s_tau[p];
    for (int i = p + 1; i < jb; ++i) {
      T acc = 0;
      for (int q = p; q < i; ++q) acc += s_t[p + q * NB] * s_t[i + q * NB];
      s_t[p + i * NB] = -s_tau[i] * acc;
    }
  }
  __syncthreads();
}

/// What the panel kernel needs besides the batch: step j and where each matrix's workspace
/// is (ws + offsets[b] for a listed batch, ws + b * per for a strided one).
template <class T>
struct PanelArgs {
  DeviceBatch<T> a;
  T* ws;
  const std::int64_t* offsets;
  std::int64_t per;
  int j;
};

template <class T, int NB>
__global__ void __launch_bounds__(kThreads) blocked_panel_kernel(PanelArgs<T> p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __shared__ T s_t[NB * NB];
  __shared__ T s_tau[NB];
  const Desc<T> d = p.a.at(blockIdx.x);
  const int k = min(d.m, d.n), j = p.j;
  if (j >= k) return;
  const int rows = d.m - j, jb = min(NB, k - j), nc = d.n - j - jb, lds = rows | 1;
  T* s = reinterpret_cast<T*>(smem_raw);
  T* panel = d.a + j + std::int64_t(j) * d.ld;
  for (int e = threadIdx.x; e < rows * jb; e += blockDim.x) {
    const int r = e % rows, c = e / rows;
    s[r + c * lds] = panel[r + std::int64_t(c) * d.ld];
  }
  __syncthreads();
  factor_panel(s, lds, rows, jb, s_tau);
  for (int c = threadIdx.x; c < jb; c += blockDim.x) d.tau[j + c] = s_tau[c];
  if (nc <= 0) {  // the last panel: no trailing update, so no V or Y
    for (int e = threadIdx.x; e < rows * jb; e += blockDim.x) {
      const int r = e % rows, c = e / rows;
      panel[r + std::int64_t(c) * d.ld] = s[r + c * lds];
    }
    return;
  }
  form_t<T, NB>(s, lds, rows, jb, s_tau, s_t);
  T* v = p.ws + (p.offsets != nullptr ? p.offsets[blockIdx.x] : std::int64_t(blockIdx.x) * p.per);
  T* y = v + std::int64_t(d.m) * NB;
  for (int e = threadIdx.x; e < rows * jb; e += blockDim.x) {
    const int r = e % rows, c = e / rows;
    const T x = s[r + c * lds];
    panel[r + std::int64_t(c) * d.ld] = x;
    v[e] = r < c ? T(0) : (r == c ? T(1) : x);
    // Y(r, c) = sum over q <= min(r, c) of V(r, q) T(q, c).
    T acc = 0;
    const int top = min(r, c + 1);
    for (int q = 0; q < top; ++q) acc += s[r + q * lds] * s_t[q + c * NB];
    if (r <= c) acc += s_t[r + c * NB];  // V(r, r) = 1, V(r, q > r) = 0
    y[e] = acc;
  }
}

unsigned grid_of(std::int64_t count) {
  if (count > std::numeric_limits<int>::max()) {
    GPUQR_THROW(InvalidArgument, "batched QR: " + std::to_string(count) +
                                     " matrices exceed one launch");
  }
  return static_cast<unsigned>(count);
}

template <class T, int NB>
void launch_panel_nb(const PanelArgs<T>& args, std::int64_t max_rows, cudaStream_t stream) {
  const auto bytes = static_cast<int>((max_rows | 1) * NB * static_cast<std::int64_t>(sizeof(T)));
  GPUQR_CUDA_CHECK(cudaFuncSetAttribute(blocked_panel_kernel<T, NB>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  blocked_panel_kernel<T, NB><<<grid_of(args.a.count), kThreads, bytes, stream>>>(args);
  GPUQR_CUDA_CHECK_LAUNCH(stream);
}

/// The panel kernel over the first args.a.count matrices; max_rows bounds m - j over them.
template <class T>
void launch_panel(int nb, const PanelArgs<T>& args, std::int64_t max_rows, cudaStream_t stream) {
  if (args.a.count == 0) return;
  if (nb == 32) {
    launch_panel_nb<T, 32>(args, max_rows, stream);
  } else if (nb == 16) {
    launch_panel_nb<T, 16>(args, max_rows, stream);
  } else {
    launch_panel_nb<T, 8>(args, max_rows, stream);
  }
}

// cuBLAS, typed. C := alpha op(A) B + beta C throughout (B never transposed).

void gemm_strided(cublasHandle_t h, cublasOperation_t ta, std::int64_t m, std::int64_t n,
                  std::int64_t k, float alpha, const float* a, std::int64_t lda, std::int64_t sa,
                  const float* b, std::int64_t ldb, std::int64_t sb, float beta, float* c,
                  std::int64_t ldc, std::int64_t sc, std::int64_t count) {
  GPUQR_CUBLAS_CHECK(cublasSgemmStridedBatched_64(h, ta, CUBLAS_OP_N, m, n, k, &alpha, a, lda, sa,
                                                  b, ldb, sb, &beta, c, ldc, sc, count));
}
void gemm_strided(cublasHandle_t h, cublasOperation_t ta, std::int64_t m, std::int64_t n,
                  std::int64_t k, double alpha, const double* a, std::int64_t lda,
                  std::int64_t sa, const double* b, std::int64_t ldb, std::int64_t sb,
                  double beta, double* c, std::int64_t ldc, std::int64_t sc, std::int64_t count) {
  GPUQR_CUBLAS_CHECK(cublasDgemmStridedBatched_64(h, ta, CUBLAS_OP_N, m, n, k, &alpha, a, lda, sa,
                                                  b, ldb, sb, &beta, c, ldc, sc, count));
}

void gemm_batched(cublasHandle_t h, cublasOperation_t ta, std::int64_t m, std::int64_t n,
                  std::int64_t k, float alpha, float* const* a, std::int64_t lda, float* const* b,
                  std::int64_t ldb, float beta, float* const* c, std::int64_t ldc,
                  std::int64_t count) {
  GPUQR_CUBLAS_CHECK(cublasSgemmBatched_64(h, ta, CUBLAS_OP_N, m, n, k, &alpha, a, lda, b, ldb,
                                           &beta, c, ldc, count));
}
void gemm_batched(cublasHandle_t h, cublasOperation_t ta, std::int64_t m, std::int64_t n,
                  std::int64_t k, double alpha, double* const* a, std::int64_t lda,
                  double* const* b, std::int64_t ldb, double beta, double* const* c,
                  std::int64_t ldc, std::int64_t count) {
  GPUQR_CUBLAS_CHECK(cublasDgemmBatched_64(h, ta, CUBLAS_OP_N, m, n, k, &alpha, a, lda, b, ldb,
                                           &beta, c, ldc, count));
}

/// One GEMM call's groups (host arrays, as cublas<t>gemmGroupedBatched takes them): groups of
/// equal shape, whose problems are consecutive in the device pointer arrays.
template <class T>
struct GemmGroups {
  std::vector<cublasOperation_t> ta, tb;
  std::vector<std::int64_t> m, n, k, lda, ldb, ldc, size;
  std::vector<T> alpha, beta;
  void add(cublasOperation_t op, std::int64_t rows, std::int64_t cols, std::int64_t inner,
           T al, std::int64_t la, std::int64_t lb, T be, std::int64_t lc, std::int64_t count) {
    ta.push_back(op);
    tb.push_back(CUBLAS_OP_N);
    m.push_back(rows);
    n.push_back(cols);
    k.push_back(inner);
    alpha.push_back(al);
    lda.push_back(la);
    ldb.push_back(lb);
    beta.push_back(be);
    ldc.push_back(lc);
    size.push_back(count);
  }
};

#if CUBLAS_VERSION >= 120500
void gemm_grouped(cublasHandle_t h, const GemmGroups<float>& g, float* const* a, float* const* b,
                  float* const* c) {
  GPUQR_CUBLAS_CHECK(cublasSgemmGroupedBatched_64(
      h, g.ta.data(), g.tb.data(), g.m.data(), g.n.data(), g.k.data(), g.alpha.data(), a,
      g.lda.data(), b, g.ldb.data(), g.beta.data(), c, g.ldc.data(),
      static_cast<std::int64_t>(g.size.size()), g.size.data()));
}
void gemm_grouped(cublasHandle_t h, const GemmGroups<double>& g, double* const* a,
                  double* const* b, double* const* c) {
  GPUQR_CUBLAS_CHECK(cublasDgemmGroupedBatched_64(
      h, g.ta.data(), g.tb.data(), g.m.data(), g.n.data(), g.k.data(), g.alpha.data(), a,
      g.lda.data(), b, g.ldb.data(), g.beta.data(), c, g.ldc.data(),
      static_cast<std::int64_t>(g.size.size()), g.size.data()));
}
#endif

/// The GEMM call of `g` on the device pointer arrays a, b, c: one gemmBatched for one group,
/// one gemmGroupedBatched for several (a gemmBatched per group before cuBLAS 12.5).
template <class T>
void run_groups(cublasHandle_t h, const GemmGroups<T>& g, T* const* a, T* const* b,
                T* const* c) {
  if (g.size.size() == 1) {
    gemm_batched(h, g.ta[0], g.m[0], g.n[0], g.k[0], g.alpha[0], a, g.lda[0], b, g.ldb[0],
                 g.beta[0], c, g.ldc[0], g.size[0]);
    return;
  }
#if CUBLAS_VERSION >= 120500
  gemm_grouped(h, g, a, b, c);
#else
  std::int64_t first = 0;
  for (std::size_t q = 0; q < g.size.size(); ++q) {
    gemm_batched(h, g.ta[q], g.m[q], g.n[q], g.k[q], g.alpha[q], a + first, g.lda[q], b + first,
                 g.ldb[q], g.beta[q], c + first, g.ldc[q], g.size[q]);
    first += g.size[q];
  }
#endif
}

cublasHandle_t blas_of(const detail::ContextImpl& ctx) {
  auto h = static_cast<cublasHandle_t>(ctx.cublas);
  // alpha and beta live on the host (the context's default; set again in case a caller
  // changed it on this handle).
  GPUQR_CUBLAS_CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
  return h;
}

/// One step of a listed group: the panel's matrices (a prefix of the group's order), and the
/// trailing update's problems, ordered by shape (rows, nc, jb, ld) so that equal shapes are
/// consecutive: for cuBLAS their pointer arrays Y, C, W, V (4 x updates) start at `ptrs_at`
/// in staging; for our kernel (`own`) the block table (panel_count + 1 ints) does.
template <class T>
struct Step {
  int j = 0;
  std::int64_t panel_count = 0, max_rows = 0;
  std::vector<std::int64_t> updates;  // indices into the group's order
  GemmGroups<T> first, second;        // W = Y^T C; C := C - V W
  bool own = false;              // our update kernel (batched_update.cu), else cuBLAS
  std::vector<int> tiles_w;      // own: blocks before each panel matrix, and the total
  std::size_t ptrs_at = 0;
};

/// The listed matrices of one panel width, largest k first.
template <class T>
struct Group {
  int nb = 0;
  std::vector<Desc<T>> mats;
  std::vector<std::int64_t> offsets;  // workspace, elements from the workspace region's start
  std::vector<Step<T>> steps;
  std::size_t descs_at = 0, offsets_at = 0;
};

std::size_t stage_take(std::size_t& used, std::size_t bytes) {
  const std::size_t at = (used + kStageAlign - 1) / kStageAlign * kStageAlign;
  used = at + bytes;
  return at;
}

template <class T>
void plan_steps(Group<T>& g) {
  const int nb = g.nb;
  const int kmax = std::min(g.mats.front().m, g.mats.front().n);
  for (int j = 0; j < kmax; j += nb) {
    Step<T> st;
    st.j = j;
    for (std::size_t i = 0; i < g.mats.size(); ++i) {
      const Desc<T>& d = g.mats[i];
      const int k = std::min(d.m, d.n);
      if (k <= j) break;  // ordered by k, largest first
      ++st.panel_count;
      st.max_rows = std::max<std::int64_t>(st.max_rows, d.m - j);
      const int jb = std::min(nb, k - j);
      if (d.n - j - jb > 0) st.updates.push_back(static_cast<std::int64_t>(i));
    }
    auto key = [&](std::int64_t i) {
      const Desc<T>& d = g.mats[static_cast<std::size_t>(i)];
      const int jb = std::min(nb, std::min(d.m, d.n) - j);
      return std::make_tuple(d.m - j, d.n - j - jb, jb, d.ld);
    };
    std::stable_sort(st.updates.begin(), st.updates.end(),
                     [&](std::int64_t x, std::int64_t y) { return key(x) < key(y); });
    for (std::size_t u = 0; u < st.updates.size();) {
      std::size_t v = u + 1;
      while (v < st.updates.size() && key(st.updates[v]) == key(st.updates[u])) ++v;
      const auto [rows, nc, jb, ld] = key(st.updates[u]);
      const auto count = static_cast<std::int64_t>(v - u);
      st.first.add(CUBLAS_OP_T, jb, nc, rows, T(1), rows, ld, T(0), jb, count);
      st.second.add(CUBLAS_OP_N, rows, nc, jb, T(-1), rows, jb, T(1), ld, count);
      u = v;
    }
    st.own = !st.updates.empty() && own_update<T>(st.first.size.size());
    if (st.own) {
      st.tiles_w.assign(1, 0);
      for (std::int64_t i = 0; i < st.panel_count; ++i) {
        const Desc<T>& d = g.mats[static_cast<std::size_t>(i)];
        const int jb = std::min(nb, std::min(d.m, d.n) - j);
        const int rows = d.m - j, nc = d.n - j - jb;
        const std::int64_t w = st.tiles_w.back() + update_w_tiles(rows, nc, jb);
        if (w > std::numeric_limits<int>::max())
          GPUQR_THROW(InvalidArgument, "batched QR: too many update tiles in one step");
        st.tiles_w.push_back(static_cast<int>(w));
      }
    }
    g.steps.push_back(std::move(st));
  }
}

template <class T>
std::int64_t steps_of(const Desc<T>& d, int nb) {
  return (std::min(d.m, d.n) + nb - 1) / nb;
}

}  // namespace

template <class T>
int blocked_nb(std::int64_t m, std::int64_t n, std::int64_t budget_bytes) {
  const BatchedRoute route = current_route();
  if (route == BatchedRoute::old || m == 0 || n == 0 || small_class(m, n) >= 0) return 0;
  const std::int64_t budget = budget_bytes / static_cast<std::int64_t>(sizeof(T));
  int nb = wanted_nb(m, n);
  while (nb >= 8 && panel_elems(m, nb) > budget) nb /= 2;
  if (nb < 8) return 0;
  if (route == BatchedRoute::blocked) return nb;
  // The size rule: from n = 64, and wherever the shared-memory kernel cannot take the matrix
  // (otherwise the dense route's per-matrix cuSOLVER calls).
  return n >= 64 || m * n + n > budget ? nb : 0;
}

template <class T>
std::size_t blocked_bytes_strided(const Desc<T>& shape, std::int64_t count,
                                  std::int64_t budget_bytes) {
  const int nb = blocked_nb<T>(shape.m, shape.n, budget_bytes);
  if (nb == 0 || count == 0) return 0;
  return static_cast<std::size_t>(count * ws_elems(shape.m, shape.n, nb)) * sizeof(T) +
         kAlignBytes;
}

template <class T>
std::size_t blocked_bytes(const std::vector<Desc<T>>& mats, std::int64_t budget_bytes) {
  if (mats.empty()) return 0;
  std::size_t bytes = 2 * kAlignBytes;
  std::int64_t max_steps = 0;
  for (const Desc<T>& d : mats) {
    const int nb = blocked_nb<T>(d.m, d.n, budget_bytes);
    if (nb == 0) continue;  // not this route's (callers pass only its matrices)
    const std::int64_t steps = steps_of(d, nb);
    max_steps = std::max(max_steps, steps);
    bytes += static_cast<std::size_t>(ws_elems(d.m, d.n, nb)) * sizeof(T) + sizeof(Desc<T>) +
             sizeof(std::int64_t) + static_cast<std::size_t>(steps) * 4 * sizeof(T*);
  }
  // Alignment of every staged array: 3 panel widths, each descriptors, offsets, 1 per step.
  return bytes + static_cast<std::size_t>(3 * (2 + max_steps)) * kStageAlign;
}

template <class T>
void blocked_geqrf_strided(detail::ContextImpl& ctx, const DeviceBatch<T>& b, void* work,
                           std::size_t bytes) {
  if (b.count == 0) return;
  const int m = b.shape.m, n = b.shape.n, k = std::min(m, n);
  const std::int64_t budget = smem_budget(ctx.device);
  const int nb = blocked_nb<T>(m, n, budget);
  if (nb == 0 || blocked_bytes_strided(b.shape, b.count, budget) > bytes)
    GPUQR_THROW(InvalidArgument, "batched QR: blocked route misplanned (a bug)");
  auto* ws = reinterpret_cast<T*>(
      (reinterpret_cast<std::uintptr_t>(work) + kAlignBytes - 1) / kAlignBytes * kAlignBytes);
  const std::int64_t per = ws_elems(m, n, nb);
  cublasHandle_t h = blas_of(ctx);
  for (int j = 0; j < k; j += nb) {
    const int jb = std::min(nb, k - j), rows = m - j, nc = n - j - jb;
    launch_panel(nb, PanelArgs<T>{b, ws, nullptr, per, j}, rows, ctx.stream);
    if (nc <= 0) continue;
    T* c = b.shape.a + j + std::int64_t(j + jb) * b.shape.ld;
    T* v = ws;
    T* y = ws + std::int64_t(m) * nb;
    T* w = y + std::int64_t(m) * nb;
    gemm_strided(h, CUBLAS_OP_T, jb, nc, rows, T(1), y, rows, per, c, b.shape.ld, b.stride, T(0),
                 w, jb, per, b.count);
    gemm_strided(h, CUBLAS_OP_N, rows, nc, jb, T(-1), v, rows, per, w, jb, per, T(1), c,
                 b.shape.ld, b.stride, b.count);
  }
}

template <class T>
void blocked_geqrf_listed(detail::ContextImpl& ctx, const std::vector<Desc<T>>& mats,
                          void* work, std::size_t bytes) {
  if (mats.empty()) return;
  const std::int64_t budget = smem_budget(ctx.device);
  std::vector<Group<T>> groups;
  for (const int nb : {32, 16, 8}) {
    Group<T> g;
    g.nb = nb;
    for (const Desc<T>& d : mats)
      if (blocked_nb<T>(d.m, d.n, budget) == nb) g.mats.push_back(d);
    if (g.mats.empty()) continue;
    std::stable_sort(g.mats.begin(), g.mats.end(), [](const Desc<T>& x, const Desc<T>& y) {
      return std::min(x.m, x.n) > std::min(y.m, y.n);
    });
    groups.push_back(std::move(g));
  }
  // The staging block (uploaded once): per group its descriptors and workspace offsets, per
  // step the pointer arrays; the matrices' workspaces follow it.
  std::size_t staged = 0;
  std::int64_t ws_total = 0;
  for (Group<T>& g : groups) {
    plan_steps(g);
    g.descs_at = stage_take(staged, g.mats.size() * sizeof(Desc<T>));
    g.offsets_at = stage_take(staged, g.mats.size() * sizeof(std::int64_t));
    // Our table takes panel_count + 1 ints, within blocked_bytes' 4 pointers per update
    // (a step's panel has at least one matrix).
    for (Step<T>& st : g.steps)
      st.ptrs_at = st.own ? stage_take(staged, st.tiles_w.size() * sizeof(int))
                          : stage_take(staged, 4 * st.updates.size() * sizeof(T*));
    for (const Desc<T>& d : g.mats) {
      g.offsets.push_back(ws_total);
      ws_total += ws_elems(d.m, d.n, g.nb);
    }
  }
  auto* base = static_cast<unsigned char*>(work);
  const auto start = reinterpret_cast<std::uintptr_t>(base);
  const std::size_t ws_at =
      (start + staged + kAlignBytes - 1) / kAlignBytes * kAlignBytes - start;
  if (ws_at + static_cast<std::size_t>(ws_total) * sizeof(T) > bytes)
    GPUQR_THROW(InvalidArgument, "batched QR: blocked route scratch undersized (a bug)");
  T* ws = reinterpret_cast<T*>(base + ws_at);
  std::vector<unsigned char> host(staged);
  for (const Group<T>& g : groups) {
    std::memcpy(host.data() + g.descs_at, g.mats.data(), g.mats.size() * sizeof(Desc<T>));
    std::memcpy(host.data() + g.offsets_at, g.offsets.data(),
                g.offsets.size() * sizeof(std::int64_t));
    for (const Step<T>& st : g.steps) {
      if (st.own) {
        std::memcpy(host.data() + st.ptrs_at, st.tiles_w.data(), st.tiles_w.size() * sizeof(int));
        continue;
      }
      const std::size_t u = st.updates.size();
      std::vector<T*> ptrs(4 * u);
      for (std::size_t q = 0; q < u; ++q) {
        const auto i = static_cast<std::size_t>(st.updates[q]);
        const Desc<T>& d = g.mats[i];
        const int jb = std::min(g.nb, std::min(d.m, d.n) - st.j);
        T* v = ws + g.offsets[i];
        T* y = v + std::int64_t(d.m) * g.nb;
        ptrs[q] = y;
        ptrs[u + q] = d.a + st.j + std::int64_t(st.j + jb) * d.ld;
        ptrs[2 * u + q] = y + std::int64_t(d.m) * g.nb;
        ptrs[3 * u + q] = v;
      }
      std::memcpy(host.data() + st.ptrs_at, ptrs.data(), ptrs.size() * sizeof(T*));
    }
  }
  // Pageable source: the copy is staged before cudaMemcpyAsync returns, so `host` may go.
  GPUQR_CUDA_CHECK(
      cudaMemcpyAsync(base, host.data(), staged, cudaMemcpyHostToDevice, ctx.stream));
  cublasHandle_t h = blas_of(ctx);
  for (const Group<T>& g : groups) {
    DeviceBatch<T> b;
    b.list = reinterpret_cast<const Desc<T>*>(base + g.descs_at);
    const auto* offsets = reinterpret_cast<const std::int64_t*>(base + g.offsets_at);
    for (const Step<T>& st : g.steps) {
      b.count = st.panel_count;
      launch_panel(g.nb, PanelArgs<T>{b, ws, offsets, 0, st.j}, st.max_rows, ctx.stream);
      const std::size_t u = st.updates.size();
      if (u == 0) continue;
      if (st.own) {
        const auto* tiles = reinterpret_cast<const int*>(base + st.ptrs_at);
        const UpdateArgs<T> up{b.list, ws, offsets, tiles, static_cast<int>(st.panel_count),
                               st.j, g.nb};
        launch_update(up, st.tiles_w.back(), ctx.stream);
        continue;
      }
      T* const* ptrs = reinterpret_cast<T* const*>(base + st.ptrs_at);
      run_groups(h, st.first, ptrs, ptrs + u, ptrs + 2 * u);        // W = Y^T C
      run_groups(h, st.second, ptrs + 3 * u, ptrs + 2 * u, ptrs + u);  // C -= V W
    }
  }
}

#define GPUQR_INSTANTIATE_BATCHED_BLOCKED(T)                                                  \
  template int blocked_nb<T>(std::int64_t, std::int64_t, std::int64_t);                        \
  template std::size_t blocked_bytes_strided<T>(const Desc<T>&, std::int64_t, std::int64_t);   \
  template std::size_t blocked_bytes<T>(const std::vector<Desc<T>>&, std::int64_t);            \
  template void blocked_geqrf_strided<T>(detail::ContextImpl&, const DeviceBatch<T>&, void*,  \
                                         std::size_t);                                         \
  template void blocked_geqrf_listed<T>(detail::ContextImpl&, const std::vector<Desc<T>>&,    \
                                        void*, std::size_t);

GPUQR_INSTANTIATE_BATCHED_BLOCKED(float)
GPUQR_INSTANTIATE_BATCHED_BLOCKED(double)

}  // namespace batched
}  // namespace gpuqr::kernels::cuda
