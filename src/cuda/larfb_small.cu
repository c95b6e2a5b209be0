// larfb_small: C := (I - V op(T) V^T) C for k <= 32 reflectors on a short C, one launch (see
// larfb_small.hpp). Block b takes C's columns 4 b .. 4 b + 3:
//   1. W = V^T C(:, cols) (k x 4): warp w takes V's columns 8 (w % 4) .. + 7 and every other
//      32-row tile (w / 4), lanes over rows so that each load is one coalesced 256-byte row
//      segment of a column; its 8 x 4 partial sums are summed over the lanes by a butterfly
//      that halves the values each step (31 shuffles, lane l ends with entry l), then the
//      two row groups in a fixed order (the same bits on every run).
//   2. Y = op(T) W (k x 4) in shared memory.
//   3. C(r, cols) -= V(r, :) Y, a thread a row.
// FP64 work per block is ~2 m k 4 x 2; at m = 1024 that is ~2k cycles of the FP64 pipe a phase
// on one SM, against the three or four cuBLAS launches (W = V^T C split-K and its reduction,
// op(T) W, C -= V W) it replaces.
#include <cuda_runtime.h>

#include <atomic>
#include <cstdlib>

#include "src/cuda/check.hpp"
#include "src/cuda/larfb_small.hpp"
#include "src/cuda/pdl.cuh"

namespace gpuqr::kernels::cuda {
namespace {

constexpr int kK = static_cast<int>(kLarfbSmallMaxK);  // 32
constexpr int kCols = 4;                               // C's columns per block
constexpr int kWarps = 8;  // 255 registers a thread: the batch of loads and 32 sums fit
constexpr int kThreads = 32 * kWarps;
constexpr int kGroups = 4;                 // k groups of 8 columns of V
constexpr int kSlices = kWarps / kGroups;  // row groups
constexpr int kBatch = 4;                  // rows a lane loads before using them (loads in flight)

std::atomic<int> small_override{-1};       // larfb_small_mode(): -1 default, 0 off, 1 on
std::atomic<std::int64_t> small_calls{0};  // larfb_small_count()

/// One step of the lanes' butterfly: val[0, Half) := this lane's half of val[0, 2 Half) (the
/// upper one where lane bit Half is set) plus the partner lane's copy of it.
template <int Half, class T>
__device__ __forceinline__ void fold(T* val, int lane) {
  const bool upper = (lane & Half) != 0;
#pragma unroll
  for (int j = 0; j < Half; ++j) {
    const T send = upper ? val[j] : val[j + Half];
    const T keep = upper ? val[j + Half] : val[j];
    val[j] = keep + __shfl_xor_sync(0xffffffffu, send, Half);
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    larfb_small_kernel(const T* __restrict__ v, std::int64_t ldv, const T* __restrict__ t,
                       std::int64_t ldt, int trans, T* c, std::int64_t ldc, std::int64_t m, int n,
                       int k) {
  pdl::enter();
  __shared__ T part[kSlices][kK][kCols];  // the row groups' partial W
  __shared__ T ys[kK][kCols];             // Y = op(T) W
  __shared__ T ts[kK][kK + 1];            // op(T), zeros past k
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int c0 = blockIdx.x * kCols;
  const int ncols = min(kCols, n - c0);
  for (int idx = tid; idx < kK * kK; idx += kThreads) {
    const int i = idx % kK, l = idx / kK;  // op(T)(i, l)
    T x = T(0);
    if (i < k && l < k) x = trans != 0 ? t[l + i * ldt] : t[i + l * ldt];
    ts[i][l] = x;
  }
  // 1. This warp's partial W: val[4 a + b] = sum over its rows of V(r, 8 g + a) C(r, c0 + b).
  const int g = warp % kGroups, s = warp / kGroups;
  T val[8 * kCols];  // entry e = 4 a + b
#pragma unroll
  for (int e = 0; e < 8 * kCols; ++e) val[e] = T(0);
  const T* vg = v + static_cast<std::int64_t>(8 * g) * ldv;
  const int ka = min(8, k - 8 * g);  // V's columns this warp has (may be <= 0)
  constexpr std::int64_t kStride = 32 * kSlices;
  for (std::int64_t r0 = 32 * s + lane; r0 < m; r0 += kStride * kBatch) {
    T vv[kBatch][8], cv[kBatch][kCols];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const std::int64_t r = r0 + kStride * u;
      const bool in = r < m;
#pragma unroll
      for (int a = 0; a < 8; ++a) vv[u][a] = in && a < ka ? vg[r + a * ldv] : T(0);
#pragma unroll
      for (int b = 0; b < kCols; ++b) cv[u][b] = in && b < ncols ? c[r + (c0 + b) * ldc] : T(0);
    }
#pragma unroll
    for (int u = 0; u < kBatch; ++u)
#pragma unroll
      for (int a = 0; a < 8; ++a)
#pragma unroll
        for (int b = 0; b < kCols; ++b)
          val[a * kCols + b] = fma(vv[u][a], cv[u][b], val[a * kCols + b]);
  }
  // The lanes' sums: each step keeps half of the entries (the upper half
  // where the lane's bit is set) and adds the partner's copy of them, so after the five steps
  // lane l holds the warp's sum of entry l.
  fold<16>(val, lane);
  fold<8>(val, lane);
  fold<4>(val, lane);
  fold<2>(val, lane);
  fold<1>(val, lane);
  part[s][8 * g + lane / kCols][lane % kCols] = val[0];
  __syncthreads();
  // 2. Y = op(T) W, W summed over the row groups in order.
  if (tid < kK * kCols) {
    const int i = tid % kK, b = tid / kK;
    T y = T(0);
    for (int l = 0; l < k; ++l) {
      T w = T(0);
#pragma unroll
      for (int q = 0; q < kSlices; ++q) w += part[q][l][b];
      y = fma(ts[i][l], w, y);
    }
    ys[i][b] = y;
  }
  __syncthreads();
  // 3. C(r, cols) -= V(r, :) Y, a thread a row: V's row in registers (its 32 loads in flight
  // together), Y read from shared memory (broadcasts) inside the loop: hoisted out of it, Y
  // would take 128 registers more.
  for (std::int64_t r = tid; r < m; r += kThreads) {
    asm volatile("" ::: "memory");  // keeps Y's loads in the loop
    T vr[kK];
#pragma unroll
    for (int l = 0; l < kK; ++l) vr[l] = l < k ? v[r + l * ldv] : T(0);
#pragma unroll
    for (int b = 0; b < kCols; ++b) {
      if (b < ncols) {
        T sum = T(0);
#pragma unroll
        for (int l = 0; l < kK; ++l) sum = fma(vr[l], ys[l][b], sum);
        c[r + (c0 + b) * ldc] -= sum;
      }
    }
  }
}

std::int64_t env_rows() {
  static const std::int64_t rows = [] {
    const char* text = std::getenv("GPUQR_LARFB_SMALL_ROWS");
    const long long v = text != nullptr ? std::atoll(text) : 0;
    return v > 0 ? static_cast<std::int64_t>(v) : kLarfbSmallDefaultRows;
  }();
  return rows;
}

}  // namespace

void larfb_small_mode(int mode) { small_override.store(mode); }
int larfb_small_override() { return small_override.load(); }
std::int64_t larfb_small_count() { return small_calls.load(); }

bool larfb_small_wanted(std::int64_t m, std::int64_t n, std::int64_t k) {
  if (m <= 0 || n <= 0 || k <= 0 || k > kLarfbSmallMaxK) return false;
  const int mode = small_override.load();
  if (mode >= 0) return mode == 1;
  static const bool env_off = [] {
    const char* text = std::getenv("GPUQR_LARFB_SMALL");
    return text != nullptr && std::atoi(text) == 0;
  }();
  if (env_off) return false;
  return m <= env_rows() && n <= 256;
}

template <class T>
void larfb_small(detail::ContextImpl& ctx, Op op, MatrixView<const T> v, MatrixView<const T> t,
                 MatrixView<T> c) {
  const std::int64_t m = c.rows(), n = c.cols(), k = v.cols();
  if (m == 0 || n == 0 || k == 0) return;
  if (k > kLarfbSmallMaxK || v.rows() != m || t.rows() < k || t.cols() < k)
    GPUQR_THROW(InvalidArgument, "larfb_small: V must be m x k with k <= 32 and T k x k");
  const auto blocks = static_cast<unsigned>((n + kCols - 1) / kCols);
  small_calls.fetch_add(1);
  pdl::launch(ctx.device, larfb_small_kernel<T>, dim3(blocks), dim3(kThreads), 0, ctx.stream,
              v.data(), v.ld(), t.data(), t.ld(), op == Op::trans ? 1 : 0, c.data(), c.ld(), m,
              static_cast<int>(n), static_cast<int>(k));
}

template void larfb_small<float>(detail::ContextImpl&, Op, MatrixView<const float>,
                                 MatrixView<const float>, MatrixView<float>);
template void larfb_small<double>(detail::ContextImpl&, Op, MatrixView<const double>,
                                  MatrixView<const double>, MatrixView<double>);

}  // namespace gpuqr::kernels::cuda
