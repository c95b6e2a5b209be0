// Session 25 probe: the FP64 streamed product Q = A X (X 128 x 128 upper triangular, m = 2^20),
// the CholeskyQR panels' leaf (src/cuda/gram_product.cu's dmma_upper_product_kernel), against a
// layout with twice the work per warp and per barrier: 64-row chunks (two stages of 64 KiB),
// X packed by 32-column bands down to each band's diagonal (80 KiB instead of 128), warps of
// 32 rows x 32 columns (8 mma per 8-row k block instead of 4, for 8 16-byte loads instead of 6),
// the next k block's fragments loaded while this one's mma run. Prints ms per call (CUDA events,
// median of 7), the rate counted on the triangle's flops, and the largest difference from
// cuBLAS DGEMM's product (X's lower triangle zero) relative to that product's largest entry.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "src/cuda/gram_dmma.cuh"

namespace dm = gpuqr::kernels::cuda::dmma;

#define CK(x)                                                                              \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) {                                                               \
      std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

__device__ __forceinline__ void store4(double* q, std::int64_t ldq, std::int64_t m, int n,
                                       bool q_vec, int col, std::int64_t r, const double (&v)[4]) {
  if (col >= n || r >= m) return;
  double* o = q + col * ldq + r;
  if (q_vec && r + 4 <= m) {
    __stcs(reinterpret_cast<double2*>(o), make_double2(v[0], v[1]));
    __stcs(reinterpret_cast<double2*>(o) + 1, make_double2(v[2], v[3]));
  } else {
    for (int e = 0; e < 4; ++e)
      if (r + e < m) o[e] = v[e];
  }
}

template <int Stages, int Chunk, int Rows, int Threads>
__device__ __forceinline__ void zero_tail(double* stages, int n) {
  for (int e = threadIdx.x; e < Stages * Chunk; e += Threads)
    if ((e % Chunk) / Rows >= n) stages[e] = 0.0;
}

// ---- V0: the library's kernel as it is (32-row chunks, three stages, 16 x 32 items) ----------
struct Old {
  static constexpr int kBands = 4, kRows = 32, kChunk = kRows * 128, kStages = 3;
  static constexpr int kPairs = kRows / 16, kItems = 8, kThreads = 256;
  static constexpr std::size_t kSmem = std::size_t(kStages * kChunk + 128 * 128) * 8;
};

__global__ void __launch_bounds__(256, 1)
    old_kernel(const double* a, std::int64_t lda, std::int64_t m, int n, bool vec_ok,
               const double* __restrict__ x, std::int64_t ldx, double* q, std::int64_t ldq,
               bool q_vec, std::int64_t chunks) {
  using S = Old;
  extern __shared__ __align__(16) unsigned char smem[];
  double* stages = reinterpret_cast<double*>(smem);
  double* xs = stages + S::kStages * S::kChunk;
  __shared__ int band_end[4];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  zero_tail<S::kStages, S::kChunk, S::kRows, S::kThreads>(stages, n);
  dm::load_x<128, S::kThreads, true>(x, ldx, n, xs, band_end);
  for (int s = 0; s + 1 < S::kStages; ++s) {
    const std::int64_t c = blockIdx.x + std::int64_t(s) * gridDim.x;
    if (c < chunks)
      dm::fetch<S::kRows, S::kThreads>(a, lda, m, n, c * S::kRows, vec_ok, stages + s * S::kChunk);
    dm::cp_async_commit();
  }
  int band, row;
  dm::product_item<S>(warp, band, row);
  const int g = lane >> 2, t = lane & 3;
  int slot = 0;
  for (std::int64_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
    dm::cp_async_wait<S::kStages - 2>();
    __syncthreads();
    const std::int64_t ahead = chunk + std::int64_t(S::kStages - 1) * gridDim.x;
    const int refill = slot == 0 ? S::kStages - 1 : slot - 1;
    if (ahead < chunks)
      dm::fetch<S::kRows, S::kThreads>(a, lda, m, n, ahead * S::kRows, vec_ok,
                                       stages + refill * S::kChunk);
    dm::cp_async_commit();
    double acc[4][2][2];
    dm::product_acc<S, 128, dm::Mma::m16n8k8>(stages + slot * S::kChunk, xs, band_end[band], band,
                                              row, lane, acc);
    const std::int64_t r = chunk * S::kRows + row + 4 * t;
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const double v[4] = {acc[c][0][0], acc[c][1][0], acc[c][0][1], acc[c][1][1]};
      store4(q, ldq, m, n, q_vec, 32 * band + 8 * c + g, r, v);
    }
    slot = slot + 1 == S::kStages ? 0 : slot + 1;
  }
}

// ---- V1: 64-row chunks, two stages, X packed by bands, 32 x 32 items ------------------------
template <int Stages>
struct New {
  static constexpr int kRows = 64, kChunk = kRows * 128, kStages = Stages, kThreads = 256;
  static constexpr int kXPacked = 32 * 32 * 10;  // bands of 32, 64, 96, 128 rows
  static constexpr std::size_t kSmem = std::size_t(kStages * kChunk + kXPacked) * 8;
};

__device__ __forceinline__ int band_base(int b) { return 512 * b * (b + 1); }
/// X(k, 32 b + c) of band b (rows 0 .. 32 (b + 1)), k even, and k + 1: column-major by band,
/// 16-byte units XOR-permuted by 4 (c & 1) as x_at.
__device__ __forceinline__ int xp_at(int b, int k, int c) {
  return band_base(b) + c * 32 * (b + 1) + (((k >> 1) ^ ((c & 1) << 2)) << 1);
}

template <int Threads>
__device__ __forceinline__ void load_x_packed(const double* x, std::int64_t ldx, int n, double* xs,
                                              int* band_end) {
  const int tid = threadIdx.x;
  if (tid < 4) band_end[tid] = 0;
  for (int b = 0; b < 4; ++b) {
    const int kb = 32 * (b + 1);
    for (int e = tid; e < 32 * kb; e += Threads) {
      const int cl = e / kb, k = e % kb, c = 32 * b + cl;
      const bool in = k < n && c < n && k <= c;
      xs[xp_at(b, k & ~1, cl) + (k & 1)] = in ? x[k + c * ldx] : 0.0;
    }
  }
  __syncthreads();
  if (tid < n) {
    const int b = tid / 32, cl = tid % 32;
    int last = 0;
    for (int k = 32 * (b + 1) - 1; k >= 0; --k)
      if (xs[xp_at(b, k & ~1, cl) + (k & 1)] != 0.0) {
        last = k + 1;
        break;
      }
    atomicMax(&band_end[b], (last + 7) & ~7);
  }
}

struct Frag {
  double xv[4][2];     // [8-column block of the band][slot]
  double av[2][2][2];  // [16-row group][row tile][slot]
};

template <int Rows>
__device__ __forceinline__ void load_frag(const double* src, const double* xs, int band, int k0,
                                          int row, int g, int t, Frag& f) {
  const int k = k0 + 2 * t;
#pragma unroll
  for (int c = 0; c < 4; ++c) dm::lds2(xs + xp_at(band, k, 8 * c + g), f.xv[c]);
#pragma unroll
  for (int grp = 0; grp < 2; ++grp)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      double v[2];
      dm::lds2(src + dm::chunk_at<Rows>(row + 16 * grp + 2 * g, k + e), v);
      f.av[grp][0][e] = v[0];
      f.av[grp][1][e] = v[1];
    }
}

__device__ __forceinline__ void mma_frag(const Frag& f, double (&acc)[4][4][2]) {
#pragma unroll
  for (int p = 0; p < 2; ++p)
#pragma unroll
    for (int jj = 0; jj < 4; ++jj)
      dm::mma<dm::Mma::m16n8k8, true>(acc[2 * p][jj], acc[2 * p + 1][jj], &f.xv[2 * p][0],
                                      &f.xv[2 * p + 1][0], &f.av[jj >> 1][jj & 1][0]);
}

template <int Stages, bool Prefetch, bool NoMma = false>
__global__ void __launch_bounds__(256, 1)
    new_kernel(const double* a, std::int64_t lda, std::int64_t m, int n, bool vec_ok,
               const double* __restrict__ x, std::int64_t ldx, double* q, std::int64_t ldq,
               bool q_vec, std::int64_t chunks) {
  using S = New<Stages>;
  extern __shared__ __align__(16) unsigned char smem[];
  double* stages = reinterpret_cast<double*>(smem);
  double* xs = stages + S::kStages * S::kChunk;
  __shared__ int band_end[4];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  zero_tail<S::kStages, S::kChunk, S::kRows, S::kThreads>(stages, n);
  load_x_packed<S::kThreads>(x, ldx, n, xs, band_end);
  for (int s = 0; s + 1 < S::kStages; ++s) {
    const std::int64_t c = blockIdx.x + std::int64_t(s) * gridDim.x;
    if (c < chunks)
      dm::fetch<S::kRows, S::kThreads>(a, lda, m, n, c * S::kRows, vec_ok, stages + s * S::kChunk);
    dm::cp_async_commit();
  }
  // Warps w and w + 4 share a scheduler: bands 3 - w and w, 5 band units each.
  const int band = warp < 4 ? 3 - warp : warp - 4, row = warp < 4 ? 0 : 32;
  const int g = lane >> 2, t = lane & 3;
  int slot = 0;
  for (std::int64_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
    dm::cp_async_wait<S::kStages - 2>();
    __syncthreads();
    const std::int64_t ahead = chunk + std::int64_t(S::kStages - 1) * gridDim.x;
    const int refill = slot == 0 ? S::kStages - 1 : slot - 1;
    if (ahead < chunks)
      dm::fetch<S::kRows, S::kThreads>(a, lda, m, n, ahead * S::kRows, vec_ok,
                                       stages + refill * S::kChunk);
    dm::cp_async_commit();
    const double* src = stages + slot * S::kChunk;
    const int kend = NoMma ? 0 : band_end[band];
    double acc[4][4][2];
#pragma unroll
    for (int c = 0; c < 4; ++c)
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[c][j][0] = acc[c][j][1] = 0.0;
    if constexpr (Prefetch) {
      Frag cur, nxt;
      if (kend > 0) load_frag<S::kRows>(src, xs, band, 0, row, g, t, cur);
#pragma unroll 1
      for (int k0 = 0; k0 < kend; k0 += 8) {
        if (k0 + 8 < kend) load_frag<S::kRows>(src, xs, band, k0 + 8, row, g, t, nxt);
        mma_frag(cur, acc);
        cur = nxt;
      }
    } else {
#pragma unroll 1
      for (int k0 = 0; k0 < kend; k0 += 8) {
        Frag cur;
        load_frag<S::kRows>(src, xs, band, k0, row, g, t, cur);
        mma_frag(cur, acc);
      }
    }
#pragma unroll
    for (int grp = 0; grp < 2; ++grp) {
      const std::int64_t r = chunk * S::kRows + row + 16 * grp + 4 * t;
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const double v[4] = {acc[c][2 * grp][0], acc[c][2 * grp + 1][0], acc[c][2 * grp][1],
                             acc[c][2 * grp + 1][1]};
        store4(q, ldq, m, n, q_vec, 32 * band + 8 * c + g, r, v);
      }
    }
    slot = slot + 1 == S::kStages ? 0 : slot + 1;
  }
}

// ---- host ------------------------------------------------------------------------------------
__global__ void fill_kernel(double* p, std::int64_t count, unsigned seed) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    unsigned h = unsigned(i) * 2654435761u ^ seed;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    p[i] = (h & 0xffffff) / double(0x800000) - 1.0 + 1e-3;  // (-1, 1), never zero
  }
}

cudaEvent_t e0, e1;
template <class F>
float time_ms(F f) {
  f();
  CK(cudaDeviceSynchronize());
  std::vector<float> t;
  for (int r = 0; r < 7; ++r) {
    cudaEventRecord(e0);
    f();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    t.push_back(ms);
  }
  CK(cudaGetLastError());
  std::sort(t.begin(), t.end());
  return t[3];
}

template <auto K, class S>
void launch(const double* a, std::int64_t lda, std::int64_t m, int n, const double* x, double* q,
            std::int64_t ldq, int sms) {
  CK(cudaFuncSetAttribute(K, cudaFuncAttributeMaxDynamicSharedMemorySize, int(S::kSmem)));
  const std::int64_t chunks = (m + S::kRows - 1) / S::kRows;
  const bool vec_ok = reinterpret_cast<std::uintptr_t>(a) % 16 == 0 && lda % 2 == 0;
  const bool q_vec = reinterpret_cast<std::uintptr_t>(q) % 16 == 0 && ldq % 2 == 0;
  const unsigned grid = unsigned(std::min<std::int64_t>(chunks, sms));
  K<<<grid, S::kThreads, S::kSmem>>>(a, lda, m, n, vec_ok, x, 128, q, ldq, q_vec, chunks);
}

double max_rel(const double* d, const double* ref, std::int64_t ld, std::int64_t m, int n) {
  std::vector<double> h1(std::size_t(ld) * n), h2(std::size_t(ld) * n);
  CK(cudaMemcpy(h1.data(), d, h1.size() * 8, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(h2.data(), ref, h2.size() * 8, cudaMemcpyDeviceToHost));
  double dm_ = 0, rm = 0;
  for (int c = 0; c < n; ++c)
    for (std::int64_t r = 0; r < m; ++r) {
      const double v = h1[r + c * ld], w = h2[r + c * ld];
      if (!(std::abs(v - w) <= dm_))
        dm_ = std::isnan(v) ? INFINITY : std::max(dm_, std::abs(v - w));
      rm = std::max(rm, std::abs(w));
    }
  return dm_ / rm;
}

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  std::printf("device %s, %d SMs\n", prop.name, sms);
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cublasHandle_t h;
  cublasCreate(&h);
  struct Case {
    std::int64_t m;
    int n;
  };
  const Case cases[] = {
      {1 << 20, 128}, {(1 << 20) + 37, 128}, {(1 << 20) + 1, 100}, {1 << 22, 128}};
  for (const Case& cs : cases) {
    const std::int64_t m = cs.m, ld = m;  // odd m: odd ld, the 8-byte path
    const int n = cs.n;
    double *a, *x, *q, *ref;
    CK(cudaMalloc(&a, sizeof(double) * ld * n));
    CK(cudaMalloc(&q, sizeof(double) * ld * n));
    CK(cudaMalloc(&ref, sizeof(double) * ld * n));
    CK(cudaMalloc(&x, sizeof(double) * 128 * 128));
    fill_kernel<<<1024, 256>>>(a, ld * n, 7u);
    std::vector<double> hx(128 * 128, 0.0);
    for (int c = 0; c < n; ++c)
      for (int k = 0; k <= c; ++k)
        hx[k + c * 128] = (k == c ? 1.5 : 0.0) + ((k * 37 + c * 11) % 17 - 8) / 64.0;
    CK(cudaMemcpy(x, hx.data(), hx.size() * 8, cudaMemcpyHostToDevice));
    const double one = 1, zero = 0;
    auto gemm = [&] {
      cublasDgemm_64(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, n, &one, a, ld, x, 128, &zero, ref, ld);
    };
    auto trmm = [&] {
      cublasDtrmm_64(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                     CUBLAS_DIAG_NON_UNIT, m, n, &one, x, 128, a, ld, q, ld);
    };
    auto copy = [&] { cudaMemcpyAsync(q, a, sizeof(double) * ld * n, cudaMemcpyDeviceToDevice); };
    const double tri = double(m) * n * (n + 1);  // flops of the triangle
    std::printf("\nm %lld n %d (ld %lld)\n", (long long)m, n, (long long)ld);
    const float tc = time_ms(copy);
    std::printf("  %-28s %8.3f ms (read + write %.0f GB/s)\n", "copy", tc,
                2.0 * 8 * double(ld) * n / tc / 1e6);
    const float tg = time_ms(gemm);
    std::printf("  %-28s %8.3f ms %6.1f TFLOP/s (triangle)\n", "cublasDgemm (full X)", tg,
                tri / tg / 1e9);
    const float tt = time_ms(trmm);
    std::printf("  %-28s %8.3f ms %6.1f TFLOP/s  err %.2e\n", "cublasDtrmm", tt, tri / tt / 1e9,
                max_rel(q, ref, ld, m, n));
    auto report = [&](const char* name, auto f) {
      CK(cudaMemset(q, 0xff, sizeof(double) * ld * n));  // NaN: every entry must be written
      const float ms = time_ms(f);
      std::printf("  %-28s %8.3f ms %6.1f TFLOP/s  err %.2e\n", name, ms, tri / ms / 1e9,
                  max_rel(q, ref, ld, m, n));
      // In place: A copied into q first, then q := q X.
      CK(cudaMemcpy(q, a, sizeof(double) * ld * n, cudaMemcpyDeviceToDevice));
      return ms;
    };
    report("old (32 rows, 3 stages)", [&] { launch<old_kernel, Old>(a, ld, m, n, x, q, ld, sms); });
    report("new 2 stages, prefetch",
           [&] { launch<new_kernel<2, true>, New<2>>(a, ld, m, n, x, q, ld, sms); });
    report("streaming only (no mma)",
           [&] { launch<new_kernel<2, true, true>, New<2>>(a, ld, m, n, x, q, ld, sms); });
    report("new 2 stages, no prefetch",
           [&] { launch<new_kernel<2, false>, New<2>>(a, ld, m, n, x, q, ld, sms); });
    // In place, once (not timed): q := q X must equal ref.
    CK(cudaMemcpy(q, a, sizeof(double) * ld * n, cudaMemcpyDeviceToDevice));
    launch<new_kernel<2, true>, New<2>>(q, ld, m, n, x, q, ld, sms);
    CK(cudaDeviceSynchronize());
    std::printf("  %-28s err %.2e\n", "new in place", max_rel(q, ref, ld, m, n));
    CK(cudaMemcpy(q, a, sizeof(double) * ld * n, cudaMemcpyDeviceToDevice));
    launch<old_kernel, Old>(q, ld, m, n, x, q, ld, sms);
    CK(cudaDeviceSynchronize());
    std::printf("  %-28s err %.2e\n", "old in place", max_rel(q, ref, ld, m, n));
    cudaFree(a);
    cudaFree(x);
    cudaFree(q);
    cudaFree(ref);
  }
  return 0;
}
