// The trailing update of the blocked batched QR (batched_blocked.cu) for a listed batch whose
// matrices differ in shape: W = Y^T C, then C := C - V W, each as ONE launch over every
// matrix of the step, whatever the number of distinct shapes.
//
// Why not cuBLAS: a variable-size batch (sizes drawn from 8..512) has a distinct (rows, nc,
// ld) per matrix at almost every step, so cublas<t>gemmGroupedBatched gets hundreds of groups
// of one problem each, and C's leading dimension differs per matrix, so no bucketing by shape
// can gather them into a few gemmBatched calls. Here a thread block takes one output tile of
// one matrix: the step's tiles are numbered matrix by matrix, and a block finds its matrix by
// a binary search in a prefix table (tiles before matrix i) built on the host once per call
// and uploaded with the rest of the plan. The block derives everything else (C, V, Y, W, the
// sizes) from the matrix's descriptor, its workspace offset and the step, exactly as the
// panel kernel and the host-built pointer arrays do, so the table holds one int per matrix.
//
// The GEMMs are plain shared-memory tiled SIMT kernels (256 threads, BK-deep chunks, a
// (BM/16) x (BN/16) register tile per thread): the update streams C through memory three
// times per step (read for W, read and written for C - V W) at 4 jb flops per element, so in
// FP64 it is bound by memory bandwidth near the SIMT rate anyway; tensor cores would not buy
// much at jb = 32.
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <string>

#include "src/cuda/batched_internal.hpp"
#include "src/cuda/check.hpp"

namespace gpuqr::kernels::cuda::batched {
namespace {

constexpr int kThreads = 256;
constexpr int kSide = 16;  // threads per tile row and per tile column (kSide^2 = kThreads)

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

/// C(row0:row0+BM, col0:col0+BN) := alpha op(A) B + (accumulate ? C : 0) within m x n, inner
/// size k; op(A) = A^T (A is k x m, ld lda) when TransA, else A (m x k). Thread (tx, ty) owns
/// rows row0 + tx + 16 i and columns col0 + ty + 16 q, so that a warp's stores run down a
/// column (coalesced) and its reads of the A chunk hit 16 consecutive words.
template <class T, int BM, int BN, int BK, bool TransA>
__device__ void tile_gemm(const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T* c,
                          std::int64_t ldc, int m, int n, int k, int row0, int col0, T alpha,
                          bool accumulate) {
  constexpr int RM = BM / kSide, RN = BN / kSide;
  // +1: the stores below write a chunk across its k index with 16 threads on one column.
  __shared__ T s_a[BK][BM + 1];
  __shared__ T s_b[BK][BN + 1];
  const int tx = threadIdx.x % kSide, ty = threadIdx.x / kSide;
  T acc[RM][RN];
#pragma unroll
  for (int i = 0; i < RM; ++i)
#pragma unroll
    for (int q = 0; q < RN; ++q) acc[i][q] = T(0);
  for (int k0 = 0; k0 < k; k0 += BK) {
    // op(A)'s chunk: A^T reads run along k (A's column), A's along the rows.
    for (int e = threadIdx.x; e < BM * BK; e += kThreads) {
      const int kk = TransA ? e % BK : e / BM, r = TransA ? e / BK : e % BM;
      const int gr = row0 + r, gk = k0 + kk;
      T x = T(0);
      if (gr < m && gk < k) x = TransA ? a[gk + std::int64_t(gr) * lda] : a[gr + std::int64_t(gk) * lda];
      s_a[kk][r] = x;
    }
    for (int e = threadIdx.x; e < BN * BK; e += kThreads) {
      const int kk = e % BK, cc = e / BK;
      const int gc = col0 + cc, gk = k0 + kk;
      s_b[kk][cc] = gc < n && gk < k ? b[gk + std::int64_t(gc) * ldb] : T(0);
    }
    __syncthreads();  // the chunk is in shared memory before anyone multiplies it
#pragma unroll 8
    for (int kk = 0; kk < BK; ++kk) {
      T av[RM], bv[RN];
#pragma unroll
      for (int i = 0; i < RM; ++i) av[i] = s_a[kk][tx + kSide * i];
#pragma unroll
      for (int q = 0; q < RN; ++q) bv[q] = s_b[kk][ty + kSide * q];
#pragma unroll
      for (int i = 0; i < RM; ++i)
#pragma unroll
        for (int q = 0; q < RN; ++q) acc[i][q] += av[i] * bv[q];
    }
    __syncthreads();  // everyone is done with the chunk before the next one overwrites it
  }
#pragma unroll
  for (int q = 0; q < RN; ++q) {
    const int gc = col0 + ty + kSide * q;
    if (gc >= n) continue;
#pragma unroll
    for (int i = 0; i < RM; ++i) {
      const int gr = row0 + tx + kSide * i;
      if (gr >= m) continue;
      T* out = c + gr + std::int64_t(gc) * ldc;
      // Without accumulate C is not read: W's workspace holds whatever was there (NaN too).
      *out = accumulate ? *out + alpha * acc[i][q] : alpha * acc[i][q];
    }
  }
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

/// W = Y^T C: W is jb x nc (ld jb), one tile row (jb <= 32 = BM), tiles across nc.
template <class T>
__global__ void __launch_bounds__(kThreads) update_w_kernel(UpdateArgs<T> p) {
  const int t = static_cast<int>(blockIdx.x);
  const int i = owner_of(p.tiles_w, p.count, t);
  const StepView<T> s = view_at(p, i);
  const int col0 = (t - p.tiles_w[i]) * kUpdateWCols;
  tile_gemm<T, kUpdateWRows, kUpdateWCols, 32, true>(s.y, s.rows, s.c, s.ld, s.w, s.jb, s.jb,
                                                      s.nc, s.rows, 0, col0, T(1), false);
}

/// C := C - V W: C is rows x nc (ld the matrix's), tiles of kUpdateCRows x kUpdateCCols.
template <class T>
__global__ void __launch_bounds__(kThreads) update_c_kernel(UpdateArgs<T> p) {
  const int t = static_cast<int>(blockIdx.x);
  const int i = owner_of(p.tiles_c, p.count, t);
  const StepView<T> s = view_at(p, i);
  const int local = t - p.tiles_c[i];
  const int across = (s.nc + kUpdateCCols - 1) / kUpdateCCols;
  const int row0 = (local / across) * kUpdateCRows, col0 = (local % across) * kUpdateCCols;
  tile_gemm<T, kUpdateCRows, kUpdateCCols, 32, false>(s.v, s.rows, s.w, s.jb, s.c, s.ld, s.rows,
                                                       s.nc, s.jb, row0, col0, T(-1), true);
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

int update_c_tiles(int rows, int nc, int jb) {
  if (rows <= 0 || nc <= 0 || jb <= 0) return 0;
  return ((rows + kUpdateCRows - 1) / kUpdateCRows) * ((nc + kUpdateCCols - 1) / kUpdateCCols);
}

template <class T>
void launch_update(const UpdateArgs<T>& p, std::int64_t total_w, std::int64_t total_c,
                   cudaStream_t stream) {
  if (p.count == 0 || total_w == 0) return;
  // Same stream, so the C update starts after every W is complete (a kernel boundary).
  update_w_kernel<T><<<grid_of_tiles(total_w), kThreads, 0, stream>>>(p);
  GPUQR_CUDA_CHECK_LAUNCH(stream);
  update_c_kernel<T><<<grid_of_tiles(total_c), kThreads, 0, stream>>>(p);
  GPUQR_CUDA_CHECK_LAUNCH(stream);
}

template void launch_update<float>(const UpdateArgs<float>&, std::int64_t, std::int64_t,
                                   cudaStream_t);
template void launch_update<double>(const UpdateArgs<double>&, std::int64_t, std::int64_t,
                                    cudaStream_t);

}  // namespace gpuqr::kernels::cuda::batched
