// Q = A X for tall A (m x n, n <= 128) and upper triangular X (n x n) in one streamed pass: the
// CUDA leaf `tall_times_upper` (src/core/cholqr_kernels.hpp), CholeskyQR's explicit Q.
//
// Why not cuBLAS: its GEMM m x n x n takes X whole (twice the flops of the triangle) and is
// compute-bound at n = 128 (FP64 on an H100: ~1.0 ms at m = 2^20, against ~0.7 ms to read A
// and write Q at the copy rate); TRMM runs far below the bandwidth on these shapes.
//
// The frame and the product are those of the product-Gram kernels (gram_kernels.cu,
// gram_tf32.cu), written out instead of fed to a Gram: a persistent grid streams 32 KiB chunks
// of rows of A through a ring of three shared-memory stages filled by cp.async (two chunks in
// flight while one is computed on), X sits in shared memory with its strictly lower triangle
// zeroed at the load (never read: a NaN there is ignored), and each warp computes one product
// item (a 32-column band of W = A X times 16 (FP64) or 32 (FP32) rows) by mma, its k range cut
// at the band's last nonzero row of X (half the flops for a triangular X), and stores it from
// its registers straight to Q: a lane holds 4 consecutive rows of a column, written with 16-byte
// stores (evict-first: Q is not read again here), 4 lanes covering 128 contiguous bytes of a
// column. FP64 on the FP64 tensor cores (mma.sync .f64, m16n8k8 on sm_90, gram_dmma.cuh); FP32
// on the TF32 tensor cores with the 3xTF32 split and the Gram kernels' accumulation (a fresh
// accumulator per 16 rows of X, 6 mma, then FP32 adds into a running total in registers,
// gram_tf32.cuh): errors of an FP32 GEMM's order, not TF32's.
//
// In place (Q = A, same ld): each chunk's rows are read whole into shared memory (and the
// block waits for them) before any of them is written, and no other block touches them.
//
// Expected on an H100 (a model, not a measurement; m = 2^20, n = 128): A read and Q written
// once, 2 GiB (FP64) or 1 GiB (FP32), ~0.7 or ~0.35 ms at ~3 TB/s; the FP64 mma for a
// triangular X are ~17 GFLOP, ~0.3 ms at the DMMA peak, so the pass should stay near the
// copy rate.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "src/core/cholqr_kernels.hpp"
#include "src/core/dense_kernels.hpp"
#include "src/cuda/check.hpp"
#include "src/cuda/cholqr_blas.hpp"
#include "src/cuda/gram_common.cuh"
#include "src/cuda/gram_dmma.cuh"
#include "src/cuda/gram_kernels.hpp"
#include "src/cuda/gram_tf32.cuh"
#include "src/cuda/triangle_gemm.hpp"

namespace gpuqr::kernels::cuda {
namespace {

constexpr std::int64_t kBlockedMinRows = 65536;                  // blocked_applies
constexpr std::size_t kInPlaceBytes = std::size_t(32) << 20;  // in place: W's row chunk (L2)

using cuda_detail::DeviceGuard;

/// FP64: chunks of 32 KiB (128, 64, 32 rows), 8 product items of 16 rows, one per warp.
template <int NP>
struct DmmaUpperShape {
  static constexpr int kBands = NP / 32;
  static constexpr int kRows = 32 * 128 / NP;
  static constexpr int kChunk = kRows * NP;  // doubles
  static constexpr int kStages = 3;
  static constexpr int kPairs = kRows / 16;  // product items per band
  static constexpr int kItems = kBands * kPairs;
  static constexpr int kThreads = kItems * 32;
  static constexpr std::size_t kSmemBytes =
      std::size_t(kStages * kChunk + NP * NP) * sizeof(double);
  static_assert(kItems == 8 && kRows % 16 == 0, "chunk shape");
};

/// FP32: chunks of 32 KiB (256, 128, 64 rows), 8 product items of 32 rows, one per warp; X
/// split in two halves (big, small).
template <int NP>
struct Tf32UpperShape {
  static constexpr int kBands = NP / 32;
  static constexpr int kRows = 8192 / NP;
  static constexpr int kChunk = kRows * NP;  // floats
  static constexpr int kStages = 3;
  static constexpr int kItemsPerBand = kRows / 32;
  static constexpr int kItems = kBands * kItemsPerBand;
  static constexpr int kThreads = kItems * 32;
  static constexpr std::size_t kSmemBytes =
      std::size_t(kStages * kChunk + 2 * NP * NP) * sizeof(float);
  static_assert(kItems == 8 && kRows % 32 == 0, "chunk shape");
};

/// Rows r .. r + 3 of column `col` of Q (16-byte stores where q_vec allows and all 4 rows are
/// below m; columns past n skipped).
template <class T>
__device__ __forceinline__ void store_rows(T* q, std::int64_t ldq, std::int64_t m, int n,
                                           bool q_vec, int col, std::int64_t r, const T (&v)[4]) {
  if (col >= n || r >= m) return;
  T* o = q + col * ldq + r;
  if (q_vec && r + 4 <= m) {
    if constexpr (std::is_same_v<T, double>) {
      __stcs(reinterpret_cast<double2*>(o), make_double2(v[0], v[1]));
      __stcs(reinterpret_cast<double2*>(o) + 1, make_double2(v[2], v[3]));
    } else {
      __stcs(reinterpret_cast<float4*>(o), make_float4(v[0], v[1], v[2], v[3]));
    }
  } else {
#pragma unroll
    for (int e = 0; e < 4; ++e)
      if (r + e < m) o[e] = v[e];
  }
}

/// Zeros in columns n .. NP-1 of every stage (the copies never write there; the product reads
/// them up to its band's k end, against zero rows of X, and 0 * garbage may be NaN). The first
/// barrier of the chunk loop orders these before any read.
template <class T, int Stages, int Chunk, int Rows, int Threads>
__device__ __forceinline__ void zero_tail_columns(T* stages, int n) {
  for (int e = threadIdx.x; e < Stages * Chunk; e += Threads)
    if ((e % Chunk) / Rows >= n) stages[e] = T(0);
}

/// Q := A X, X upper triangular, FP64 on the tensor cores; chunks blockIdx.x, + gridDim.x, ...
/// a and q may be the same matrix (no __restrict__).
template <int NP, dmma::Mma M>
__global__ void __launch_bounds__(DmmaUpperShape<NP>::kThreads, 1)
    dmma_upper_product_kernel(const double* a, std::int64_t lda, std::int64_t m, int n,
                              bool vec_ok, const double* __restrict__ x, std::int64_t ldx,
                              double* q, std::int64_t ldq, bool q_vec, std::int64_t chunks) {
  using S = DmmaUpperShape<NP>;
  extern __shared__ __align__(16) unsigned char smem[];
  double* stages = reinterpret_cast<double*>(smem);
  double* xs = stages + S::kStages * S::kChunk;
  __shared__ int band_end[S::kBands];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  zero_tail_columns<double, S::kStages, S::kChunk, S::kRows, S::kThreads>(stages, n);
  dmma::load_x<NP, S::kThreads, true>(x, ldx, n, xs, band_end);
  // Prologue: the first kStages - 1 chunks in flight, one commit group each (empty groups past
  // the end keep the count that cp_async_wait relies on).
  for (int s = 0; s + 1 < S::kStages; ++s) {
    const std::int64_t c = blockIdx.x + std::int64_t(s) * gridDim.x;
    if (c < chunks)
      dmma::fetch<S::kRows, S::kThreads>(a, lda, m, n, c * S::kRows, vec_ok,
                                         stages + s * S::kChunk);
    dmma::cp_async_commit();
  }
  int band, row;
  dmma::product_item<S>(warp, band, row);
  const int g = lane >> 2, t = lane & 3;
  int slot = 0;
  for (std::int64_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
    dmma::cp_async_wait<S::kStages - 2>();  // this thread's copies of `chunk` have landed
    // Everyone's copies of `chunk` have landed (so, in place, its rows may now be written),
    // and every read of the stage refilled next (the previous chunk's) is done.
    __syncthreads();
    const std::int64_t ahead = chunk + std::int64_t(S::kStages - 1) * gridDim.x;
    const int refill = slot == 0 ? S::kStages - 1 : slot - 1;
    if (ahead < chunks)
      dmma::fetch<S::kRows, S::kThreads>(a, lda, m, n, ahead * S::kRows, vec_ok,
                                         stages + refill * S::kChunk);
    dmma::cp_async_commit();
    double acc[4][2][2];
    dmma::product_acc<S, NP, M>(stages + slot * S::kChunk, xs, band_end[band], band, row, lane,
                                acc);
    // acc[c][j][i] = W(row + 4 t + 2 i + j, 32 band + 8 c + g).
    const std::int64_t r = chunk * S::kRows + row + 4 * t;
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const double v[4] = {acc[c][0][0], acc[c][1][0], acc[c][0][1], acc[c][1][1]};
      store_rows<double>(q, ldq, m, n, q_vec, 32 * band + 8 * c + g, r, v);
    }
    slot = slot + 1 == S::kStages ? 0 : slot + 1;
  }
}

/// Q := A X, X upper triangular, FP32 on the TF32 tensor cores (3xTF32).
template <int NP>
__global__ void __launch_bounds__(Tf32UpperShape<NP>::kThreads, 1)
    tf32_upper_product_kernel(const float* a, std::int64_t lda, std::int64_t m, int n,
                              bool vec_ok, const float* __restrict__ x, std::int64_t ldx,
                              float* q, std::int64_t ldq, bool q_vec, std::int64_t chunks) {
  using S = Tf32UpperShape<NP>;
  extern __shared__ __align__(16) unsigned char smem[];
  float* stages = reinterpret_cast<float*>(smem);
  float* xs = stages + S::kStages * S::kChunk;  // 2 NP^2 floats: big, small
  __shared__ int band_end[S::kBands];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  zero_tail_columns<float, S::kStages, S::kChunk, S::kRows, S::kThreads>(stages, n);
  load_x<NP, S::kThreads, true>(x, ldx, n, xs, band_end);
  for (int s = 0; s + 1 < S::kStages; ++s) {
    const std::int64_t c = blockIdx.x + std::int64_t(s) * gridDim.x;
    if (c < chunks)
      fetch<S::kRows, S::kThreads>(a, lda, m, n, c * S::kRows, vec_ok, stages + s * S::kChunk);
    cp_async_commit();
  }
  int band, row;
  product_item<S>(warp, band, row);
  const int g = lane >> 2, t = lane & 3;
  int slot = 0;
  for (std::int64_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
    cp_async_wait<S::kStages - 2>();  // this thread's copies of `chunk` have landed
    // Everyone's copies of `chunk` have landed (so, in place, its rows may now be written),
    // and every read of the stage refilled next (the previous chunk's) is done.
    __syncthreads();
    const std::int64_t ahead = chunk + std::int64_t(S::kStages - 1) * gridDim.x;
    const int refill = slot == 0 ? S::kStages - 1 : slot - 1;
    if (ahead < chunks)
      fetch<S::kRows, S::kThreads>(a, lda, m, n, ahead * S::kRows, vec_ok,
                                   stages + refill * S::kChunk);
    cp_async_commit();
    const float* src = stages + slot * S::kChunk;
    const int kend = band_end[band];
    float total[2][4][4] = {};
#pragma unroll 1
    for (int k0 = 0; k0 < kend; k0 += 16) {
      float acc[2][4][4];
      product_block<S, NP>(src, xs, k0, band, row, lane, acc);
#pragma unroll
      for (int p = 0; p < 2; ++p)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) total[p][j][e] += acc[p][j][e];
    }
    // total[p][0..3][2 half + nn] = rows row + 8 t + 4 nn .. + 3 of column 32 band + 16 p +
    // 8 half + g.
#pragma unroll
    for (int p = 0; p < 2; ++p)
#pragma unroll
      for (int half = 0; half < 2; ++half)
#pragma unroll
        for (int nn = 0; nn < 2; ++nn) {
          const int e = 2 * half + nn;
          const float v[4] = {total[p][0][e], total[p][1][e], total[p][2][e], total[p][3][e]};
          store_rows<float>(q, ldq, m, n, q_vec, 32 * band + 16 * p + 8 * half + g,
                                    chunk * S::kRows + row + 8 * t + 4 * nn, v);
        }
    slot = slot + 1 == S::kStages ? 0 : slot + 1;
  }
}

template <class T, class S, auto Kernel>
void launch_upper(detail::ContextImpl& ctx, MatrixView<const T> a, MatrixView<const T> x,
                  MatrixView<T> q) {
  // Above 48 KiB of dynamic shared memory needs the opt-in (a host-side attribute, no sync).
  GPUQR_CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(S::kSmemBytes)));
  const std::int64_t m = a.rows();
  const int n = static_cast<int>(a.cols());
  const std::int64_t chunks = (m + S::kRows - 1) / S::kRows;
  const std::int64_t grid = std::min<std::int64_t>(
      chunks, resident_blocks<Kernel>(S::kThreads, S::kSmemBytes, ctx.device));
  // 16-byte copies and stores need every column start 16-byte aligned (chunk rows and the
  // lanes' rows are multiples of 4).
  constexpr std::int64_t kVec = 16 / sizeof(T);
  const bool vec_ok = reinterpret_cast<std::uintptr_t>(a.data()) % 16 == 0 && a.ld() % kVec == 0;
  const bool q_vec = reinterpret_cast<std::uintptr_t>(q.data()) % 16 == 0 && q.ld() % kVec == 0;
  Kernel<<<static_cast<unsigned>(grid), S::kThreads, S::kSmemBytes, ctx.stream>>>(
      a.data(), a.ld(), m, n, vec_ok, x.data(), x.ld(), q.data(), q.ld(), q_vec, chunks);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

template <int NP>
void launch_upper(detail::ContextImpl& ctx, MatrixView<const double> a,
                  MatrixView<const double> x, MatrixView<double> q) {
  launch_upper<double, DmmaUpperShape<NP>, dmma_upper_product_kernel<NP, dmma::Mma::m16n8k8>>(
      ctx, a, x, q);
}
template <int NP>
void launch_upper(detail::ContextImpl& ctx, MatrixView<const float> a, MatrixView<const float> x,
                  MatrixView<float> q) {
  launch_upper<float, Tf32UpperShape<NP>, tf32_upper_product_kernel<NP>>(ctx, a, x, q);
}

/// Whether the current device lets the kernel for n columns (1..128) opt in to its shared
/// memory (224 KiB at n > 64: Hopper, not A100).
template <class T>
bool upper_kernel_fits(std::int64_t n) {
  constexpr bool kD = std::is_same_v<T, double>;
  const std::size_t need =
      n <= 32   ? (kD ? DmmaUpperShape<32>::kSmemBytes : Tf32UpperShape<32>::kSmemBytes)
      : n <= 64 ? (kD ? DmmaUpperShape<64>::kSmemBytes : Tf32UpperShape<64>::kSmemBytes)
                : (kD ? DmmaUpperShape<128>::kSmemBytes : Tf32UpperShape<128>::kSmemBytes);
  int device = 0, optin = 0;
  GPUQR_CUDA_CHECK(cudaGetDevice(&device));
  GPUQR_CUDA_CHECK(
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return need + 64 <= std::size_t(optin);  // + the kernel's static shared memory
}

/// Whether the streamed kernel takes this shape at all (the leaf's choice; the driver's is
/// tall_times_upper_wanted). FP32 only on the TF32 tensor cores (gram_tf32_enabled()).
template <class T>
bool upper_kernel_applies(std::int64_t m, std::int64_t n) {
  if (m < 1 || n < 1 || n > kGramKernelMaxCols) return false;
  if (std::is_same_v<T, float> && !gram_tf32_enabled()) return false;
  return upper_kernel_fits<T>(n);
}

std::atomic<int> qprod_override{-1};  // tall_times_upper_mode(): -1 GPUQR_QPROD, 0 off, 1 on

/// Where the block-column GEMMs (triangle_gemm.hpp) form Q = A X: wider than the streamed
/// kernel takes, and tall (the tall-skinny drivers' shapes; below, multiply's one GEMM).
bool blocked_applies(std::int64_t m, std::int64_t n) {
  return n > kGramKernelMaxCols && n > kTriangleBlock && m >= kBlockedMinRows && m >= 4 * n;
}

/// Whether the views' memory overlaps (column-major extents).
template <class T, class U>
bool overlaps(MatrixView<T> p, MatrixView<U> r) {
  if (p.empty() || r.empty()) return false;
  const auto lo = [](auto v) { return reinterpret_cast<std::uintptr_t>(v.data()); };
  const auto hi = [](auto v) {
    return reinterpret_cast<std::uintptr_t>(v.data() + (v.cols() - 1) * v.ld() + v.rows());
  };
  return lo(p) < hi(r) && lo(r) < hi(p);
}

}  // namespace

void tall_times_upper_mode(int mode) { qprod_override.store(mode); }

template <class T>
bool tall_times_upper_wanted(detail::ContextImpl& ctx, std::int64_t m, std::int64_t n) {
  const int mode = qprod_override.load();
  if (mode == 0) return false;
  DeviceGuard guard(ctx.device);
  if (mode == 1) return upper_kernel_applies<T>(m, n) || blocked_applies(m, n);
  const char* v = std::getenv("GPUQR_QPROD");
  if (v != nullptr && *v != '\0') {
    const std::string s(v);
    GPUQR_CHECK_ARG(s == "0" || s == "1", "GPUQR_QPROD is '" + s + "': 0 or 1");
    if (s == "0") return false;
  }
  // The product Gram kernels' rule (m >= 65536 unless GPUQR_GRAM_KERNEL says otherwise): the
  // same frame and the same shared memory.
  if (blocked_applies(m, n)) return true;
  return gram_kernel_wanted(m, n, static_cast<int>(sizeof(T))) && upper_kernel_applies<T>(m, n);
}

template <class T>
void tall_times_upper(detail::ContextImpl& ctx, MatrixView<const T> a, MatrixView<const T> x,
                      MatrixView<T> q) {
  const std::int64_t m = a.rows(), n = a.cols();
  if (m == 0 || n == 0) return;
  const bool in_place = q.data() == a.data();
  GPUQR_CHECK_ARG(!in_place || q.ld() == a.ld(),
                  "tall_times_upper: Q is A in place with another ld (" +
                      std::to_string(q.ld()) + " against " + std::to_string(a.ld()) + ")");
  GPUQR_CHECK_ARG(in_place || !overlaps(a, q), "tall_times_upper: Q overlaps A without being it");
  GPUQR_CHECK_ARG(!overlaps(x, q), "tall_times_upper: Q overlaps X");
  DeviceGuard guard(ctx.device);
  if (n > kTriangleBlock && !upper_kernel_applies<T>(m, n)) {
    // Block columns by GEMM (triangle_gemm.hpp) on a copy of X with zeros below (X's own
    // lower triangle is not read), in place through row chunks of at most kInPlaceBytes.
    const std::int64_t nb = triangle_block_width();
    const std::int64_t chunk = std::min<std::int64_t>(
        m, std::max<std::int64_t>(4096, static_cast<std::int64_t>(kInPlaceBytes /
                                                                   (nb * sizeof(T)))));
    const std::size_t xz_elems = (std::size_t(n) * std::size_t(n) + 31) / 32 * 32;
    T* xz = static_cast<T*>(detail::cuda_workspace(
        ctx, (xz_elems + (in_place ? std::size_t(chunk) * nb : 0)) * sizeof(T)));
    const MatrixView<T> xzv(xz, n, n, n, MemorySpace::device, ctx.device);
    copy_upper<T>(ctx, x, xzv);
    if (in_place) {
      upper_product_blocked_in_place<T>(ctx, q.data(), q.ld(), m, n, xz, n, xz + xz_elems, chunk);
    } else {
      upper_product_blocked<T>(ctx, a.data(), a.ld(), m, n, xz, n, q.data(), q.ld());
    }
    return;
  }
  if (!upper_kernel_applies<T>(m, n)) {
    // cuBLAS TRMM, out of place (in place when Q is A): X's lower triangle is not read either.
    cholqr_detail::trmm_right_upper(cholqr_detail::blas(ctx), m, n, x.data(), x.ld(), a.data(),
                                    a.ld(), q.data(), q.ld());
    return;
  }
  if (n <= 32) {
    launch_upper<32>(ctx, a, x, q);
  } else if (n <= 64) {
    launch_upper<64>(ctx, a, x, q);
  } else {
    launch_upper<128>(ctx, a, x, q);
  }
}

GPUQR_INSTANTIATE_TALL_TIMES_UPPER(float)
GPUQR_INSTANTIATE_TALL_TIMES_UPPER(double)

}  // namespace gpuqr::kernels::cuda
