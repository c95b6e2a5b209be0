// CUDA backend of the TSQR leaves (src/core/tsqr_kernels.hpp).
//
// Batched kernels: one thread block per matrix block, the block held in dynamic shared memory
// (up to the device's opt-in limit, ~227 KB on Hopper), read from global memory once and
// written once. Householder QR as LAPACK's geqr2 (the same reflectors as the CPU twin up to
// rounding): per column, a block-wide norm, the pivot on thread 0, then each warp updates its
// own trailing columns (lane-strided dot product, shuffle reduction, axpy).
// For stacked n x n upper triangles (tree nodes) only the rows that can be nonzero take part:
// reflector j touches row j of the first triangle and rows 0..j of the others.
// The apply kernel keeps V in shared memory and walks C in chunks of columns, one warp per
// column: the reflectors need no block-wide barrier there.
//
// The apply to k >= n/2 columns (forming Q) of blocks of up to 1024 rows and 16 < n <= 64
// (FP64) / 128 (FP32) takes the register-resident kernel of src/cuda/tsqr_register_qr.cuh
// instead (faster there: see reg_apply); its factor twin runs where a block does not fit
// shared memory, or everywhere with GPUQR_TSQR_FACTOR_KERNEL=register (slower as measured:
// see register_factor).
// Blocks too tall for shared memory (wide n) go to cuSOLVER, one call per block (geqrf /
// ormqr, with small gather/scatter copies for stacked pieces). Nothing here synchronizes the
// host; the only allocation is the grow-only tall-skinny workspace of that fallback's apply.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <string>
#include <type_traits>

#include "src/core/dense_kernels.hpp"
#include "src/core/tsqr_kernels.hpp"
#include "src/cuda/check.hpp"
#include "src/cuda/tsqr_register_qr.cuh"

namespace gpuqr::kernels::cuda {
namespace {

using cuda_detail::DeviceGuard;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kReserveBytes = 1024;  // static shared memory and slack

/// Dynamic shared memory one block may use on `device` (the opt-in maximum, less a reserve).
std::int64_t smem_budget(int device) {
  int optin = 0;
  GPUQR_CUDA_CHECK(
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return std::max<std::int64_t>(optin - kReserveBytes, 0);
}

/// Bytes of the factor kernel's shared memory: the block and its tau.
std::int64_t geqrf_bytes(std::int64_t rows, std::int64_t n, int elem) {
  return (std::max<std::int64_t>(rows, 1) * n + n) * elem;
}

// ---- device code ------------------------------------------------------------------------------

template <class T>
__device__ T warp_sum(T v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}
template <class T>
__device__ T warp_max(T v) {
  for (int offset = 16; offset > 0; offset >>= 1) v = fmax(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

/// The block-wide sum (or max) of v, returned to every thread in the same summation order (so
/// every thread takes the same branch on it). `red` holds kWarps values.
template <class T, bool kMax>
__device__ T block_reduce(T v, T* red) {
  v = kMax ? warp_max(v) : warp_sum(v);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  T total = red[0];
  for (int w = 1; w < kWarps; ++w) total = kMax ? fmax(total, red[w]) : total + red[w];
  __syncthreads();  // red is reused by the next call
  return total;
}

/// The rows below the pivot j that reflector j can touch, as t = 0 .. count()-1.
/// Plain: rows j+1 .. rows-1. Stacked triangles of n rows: rows 0..j of every triangle but the
/// first (the first holds the pivot; below it, zeros that stay zero).
struct RowSet {
  int rows, n, j;
  bool stacked;
  __device__ int count() const {
    return stacked ? (rows / n - 1) * (j + 1) : rows - j - 1;
  }
  __device__ int row(int t) const {
    return stacked ? n * (1 + t / (j + 1)) + t % (j + 1) : j + 1 + t;
  }
};

/// Block q of `p` (columns col0 .. col0+cols-1) into s (ld lds). `triangles`: each piece's
/// upper triangle, zeros below. `top` >= 0: only the block's first `top` rows, zeros below.
template <class T>
__device__ void load_block(const Pieces<const T>& p, std::int64_t q, std::int64_t col0,
                           int cols, T* s, int lds, bool triangles, int top) {
  int offset = 0;
  for (std::int64_t k = 0; k < p.pieces_in(q); ++k) {
    const std::int64_t c = q * p.group + k;
    const T* src = p.piece_ptr(c);
    const int prow = static_cast<int>(p.piece_rows(c));
    const std::int64_t ld = p.piece_ld(c);
    for (int e = threadIdx.x; e < prow * cols; e += blockDim.x) {
      const int i = e % prow, j = e / prow;
      const bool take = (!triangles || i <= j) && (top < 0 || offset + i < top);
      s[offset + i + j * lds] = take ? src[i + (col0 + j) * ld] : T(0);
    }
    offset += prow;
  }
}

/// s (ld lds) into block q of `p` (columns col0 ..).
template <class T>
__device__ void store_block(const Pieces<T>& p, std::int64_t q, std::int64_t col0, int cols,
                            const T* s, int lds) {
  int offset = 0;
  for (std::int64_t k = 0; k < p.pieces_in(q); ++k) {
    const std::int64_t c = q * p.group + k;
    T* dst = p.piece_ptr(c);
    const int prow = static_cast<int>(p.piece_rows(c));
    const std::int64_t ld = p.piece_ld(c);
    for (int e = threadIdx.x; e < prow * cols; e += blockDim.x) {
      const int i = e % prow, j = e / prow;
      dst[i + (col0 + j) * ld] = s[offset + i + j * lds];
    }
    offset += prow;
  }
}

/// ||x||_2 of column j's rows in `set`, safe from overflow and underflow: the plain sum of
/// squares, or, when it is out of range, max|x| times the norm of x / max|x| (as LAPACK's nrm2).
template <class T>
__device__ T column_norm(const T* s, int lds, const RowSet& set, T* red) {
  const int cnt = set.count();
  T ssq = 0;
  for (int t = threadIdx.x; t < cnt; t += blockDim.x) {
    const T x = s[set.row(t) + set.j * lds];
    ssq += x * x;
  }
  ssq = block_reduce<T, false>(ssq, red);
  const T small = std::numeric_limits<T>::min() / std::numeric_limits<T>::epsilon();
  if (ssq >= small && ssq <= std::numeric_limits<T>::max()) return sqrt(ssq);
  T amax = 0;
  for (int t = threadIdx.x; t < cnt; t += blockDim.x)
    amax = fmax(amax, fabs(s[set.row(t) + set.j * lds]));
  amax = block_reduce<T, true>(amax, red);
  if (amax == T(0)) return T(0);
  T scaled = 0;
  for (int t = threadIdx.x; t < cnt; t += blockDim.x) {
    const T x = s[set.row(t) + set.j * lds] / amax;
    scaled += x * x;
  }
  scaled = block_reduce<T, false>(scaled, red);
  return amax * sqrt(scaled);
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    geqrf_kernel(Pieces<const T> src, Pieces<T> dst, int n, T* tau, std::int64_t ldtau,
                 bool stacked) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __shared__ T red[kWarps];
  __shared__ T s_scale;
  T* s = reinterpret_cast<T*>(smem_raw);
  const std::int64_t q = blockIdx.x;
  const int rows = static_cast<int>(src.block_rows(q));
  const int lds = max(rows, 1);
  T* s_tau = s + lds * n;
  load_block(src, q, 0, n, s, lds, stacked, -1);
  __syncthreads();
  const int kmax = min(rows, n);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int j = 0; j < kmax; ++j) {
    const RowSet set{rows, n, j, stacked};
    const int cnt = set.count();
    const T xnorm = column_norm(s, lds, set, red);
    if (threadIdx.x == 0) {
      // LAPACK's larfg: beta = -sign(alpha) ||(alpha, x)||, tau = (beta - alpha) / beta,
      // v = x / (alpha - beta); tau = 0 (H = I) when x is zero.
      const T alpha = s[j + j * lds];
      T t = 0, scale = 0;
      if (xnorm != T(0)) {
        const T beta = -copysign(hypot(alpha, xnorm), alpha);
        t = (beta - alpha) / beta;
        scale = T(1) / (alpha - beta);
        s[j + j * lds] = beta;
      }
      s_tau[j] = t;
      s_scale = scale;
    }
    __syncthreads();
    const T tj = s_tau[j];
    if (tj == T(0)) continue;  // uniform: every thread read the same value
    const T scale = s_scale;
    for (int t = threadIdx.x; t < cnt; t += blockDim.x) s[set.row(t) + j * lds] *= scale;
    __syncthreads();
    // Trailing columns, each owned by one warp: w = tau (v^T a_c), a_c -= w v.
    for (int c = j + 1 + warp; c < n; c += kWarps) {
      T dot = 0;
      for (int t = lane; t < cnt; t += 32) {
        const int r = set.row(t);
        dot += s[r + j * lds] * s[r + c * lds];
      }
      const T pivot = s[j + c * lds];
      const T w = tj * (warp_sum(dot) + pivot);
      __syncwarp();  // every lane has read the pivot entry before lane 0 changes it
      if (lane == 0) s[j + c * lds] = pivot - w;
      for (int t = lane; t < cnt; t += 32) {
        const int r = set.row(t);
        s[r + c * lds] -= w * s[r + j * lds];
      }
    }
    __syncthreads();
  }
  for (int j = threadIdx.x; j < n; j += blockDim.x) tau[q * ldtau + j] = j < kmax ? s_tau[j] : T(0);
  store_block(dst, q, 0, n, s, lds);
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    apply_kernel(Pieces<const T> v, int n, const T* tau, std::int64_t ldtau, Pieces<T> c,
                 std::int64_t k, int kc, bool trans, bool stacked, bool top_only) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* s_v = reinterpret_cast<T*>(smem_raw);
  const std::int64_t q = blockIdx.x;
  const int rows = static_cast<int>(v.block_rows(q));
  const int lds = max(rows, 1);
  T* s_c = s_v + lds * n;
  T* s_tau = s_c + lds * kc;
  load_block(v, q, 0, n, s_v, lds, false, -1);
  for (int j = threadIdx.x; j < n; j += blockDim.x) s_tau[j] = tau[q * ldtau + j];
  const int kmax = min(rows, n);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const Pieces<const T> c_in = c.template as<const T>();
  for (std::int64_t c0 = 0; c0 < k; c0 += kc) {
    const int kk = static_cast<int>(k - c0 < kc ? k - c0 : std::int64_t(kc));
    load_block(c_in, q, c0, kk, s_c, lds, false, top_only ? n : -1);
    __syncthreads();
    // Columns are warp-private and V is read-only: no block barrier between reflectors.
    for (int cc = warp; cc < kk; cc += kWarps) {
      T* col = s_c + cc * lds;
      for (int step = 0; step < kmax; ++step) {
        const int j = trans ? step : kmax - 1 - step;
        const T tj = s_tau[j];
        if (tj == T(0)) continue;
        const RowSet set{rows, n, j, stacked};
        const int cnt = set.count();
        const T* vj = s_v + j * lds;
        T dot = 0;
        for (int t = lane; t < cnt; t += 32) {
          const int r = set.row(t);
          dot += vj[r] * col[r];
        }
        const T pivot = col[j];
        const T w = tj * (warp_sum(dot) + pivot);
        __syncwarp();  // the pivot entry is read by every lane before lane 0 changes it
        if (lane == 0) col[j] = pivot - w;
        for (int t = lane; t < cnt; t += 32) {
          const int r = set.row(t);
          col[r] -= w * vj[r];
        }
        __syncwarp();  // lane 0's pivot write is seen by the next reflector's reads
      }
    }
    __syncthreads();
    store_block(c, q, c0, kk, s_c, lds);
    __syncthreads();  // the next chunk's load overwrites s_c
  }
}

template <class T>
__global__ void set_tops_kernel(Pieces<T> c, int n, std::int64_t k) {
  const std::int64_t q = blockIdx.x;
  T* p = c.piece_ptr(q * c.group);
  const std::int64_t prow = c.piece_rows(q * c.group);
  const std::int64_t rows = prow < n ? prow : std::int64_t(n);
  const std::int64_t ld = c.piece_ld(q * c.group);
  for (std::int64_t e = threadIdx.x; e < rows * k; e += blockDim.x) {
    const std::int64_t i = e % rows, j = e / rows;
    p[i + j * ld] = (q == 0 && i == j) ? T(1) : T(0);
  }
}

// ---- launches ---------------------------------------------------------------------------------

template <class K>
void allow_smem(K kernel, std::int64_t bytes) {
  if (bytes > 48 * 1024) {
    GPUQR_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(bytes)));
  }
}

unsigned grid_of(std::int64_t blocks, const char* routine) {
  if (blocks > std::numeric_limits<int>::max()) {
    GPUQR_THROW(InvalidArgument, std::string(routine) + ": " + std::to_string(blocks) +
                                     " blocks exceed one launch");
  }
  return static_cast<unsigned>(blocks);
}

template <class P>
void require_strided(const P& p, const char* routine) {
  if (p.ptrs != nullptr) {
    GPUQR_THROW(Unsupported, std::string(routine) +
                                 ": a block of an explicit batch is too tall for shared memory");
  }
}

template <class T>
MatrixView<T> block_view(const Pieces<T>& p, std::int64_t q, std::int64_t cols, int device) {
  return MatrixView<T>(p.piece_ptr(q * p.group), p.block_rows(q), cols, p.ld,
                       MemorySpace::device, device);
}

/// The per-block cuSOLVER path of tsqr_batched_geqrf (strided pieces only).
template <class T>
void geqrf_per_block(detail::ContextImpl& ctx, Pieces<const T> src, Pieces<T> dst,
                     std::int64_t n, MatrixView<T> tau, bool stacked) {
  require_strided(src, "tsqr_batched_geqrf");
  const int dev = ctx.device;
  fill<T>(ctx, tau, T(0));
  for (std::int64_t q = 0; q < src.blocks(); ++q) {
    MatrixView<T> out = block_view(dst, q, n, dev);
    if (src.base != dst.base || stacked) {
      std::int64_t offset = 0;
      for (std::int64_t k = 0; k < src.pieces_in(q); ++k) {
        const std::int64_t c = q * src.group + k, prow = src.piece_rows(c);
        MatrixView<const T> piece(src.piece_ptr(c), prow, n, src.ld, MemorySpace::device, dev);
        if (stacked) copy_upper<T>(ctx, piece, out.block(offset, 0, prow, n));
        else copy<T>(ctx, piece, out.block(offset, 0, prow, n));
        offset += prow;
      }
    }
    geqrf<T>(ctx, out, VectorView<T>(tau.data() + q * tau.ld(), std::min(out.rows(), n),
                                     MemorySpace::device, dev));
  }
}

/// The per-block cuSOLVER path of tsqr_batched_apply (strided pieces only); pieces of C that
/// are not one contiguous block go through the tall-skinny workspace.
template <class T>
void apply_per_block(detail::ContextImpl& ctx, Op op, Pieces<const T> v, std::int64_t n,
                     MatrixView<const T> tau, Pieces<T> c, std::int64_t k, bool top_only) {
  require_strided(v, "tsqr_batched_apply");
  require_strided(c, "tsqr_batched_apply");
  const int dev = ctx.device;
  for (std::int64_t q = 0; q < v.blocks(); ++q) {
    MatrixView<const T> vq = block_view(v, q, n, dev);
    const std::int64_t rows = vq.rows(), kk = std::min(rows, n);
    VectorView<const T> tq(tau.data() + q * tau.ld(), kk, MemorySpace::device, dev);
    if (c.group == 1) {
      MatrixView<T> cq = block_view(c, q, k, dev);
      if (top_only && rows > n) fill<T>(ctx, cq.block(n, 0, rows - n, k), T(0));
      ormqr<T>(ctx, Side::left, op, vq.block(0, 0, rows, kk), tq, cq);
      continue;
    }
    const auto bytes = static_cast<std::size_t>(rows * k) * sizeof(T);
    T* buf = static_cast<T*>(
        detail::cuda_workspace(ctx, bytes, detail::ContextImpl::kTallSkinnyWorkspace));
    MatrixView<T> cq(buf, rows, k, std::max<std::int64_t>(rows, 1), MemorySpace::device, dev);
    std::int64_t offset = 0;
    for (std::int64_t p = 0; p < c.pieces_in(q); ++p) {
      const std::int64_t ci = q * c.group + p, prow = c.piece_rows(ci);
      MatrixView<T> piece(c.piece_ptr(ci), prow, k, c.ld, MemorySpace::device, dev);
      copy<T>(ctx, MatrixView<const T>(piece), cq.block(offset, 0, prow, k));
      offset += prow;
    }
    ormqr<T>(ctx, Side::left, op, vq.block(0, 0, rows, kk), tq, cq);
    offset = 0;
    for (std::int64_t p = 0; p < c.pieces_in(q); ++p) {
      const std::int64_t ci = q * c.group + p, prow = c.piece_rows(ci);
      MatrixView<T> piece(c.piece_ptr(ci), prow, k, c.ld, MemorySpace::device, dev);
      copy<T>(ctx, MatrixView<const T>(cq.block(offset, 0, prow, k)), piece);
      offset += prow;
    }
  }
}

// ---- register-resident path --------------------------------------------------------------

/// A register kernel's shape: NC columns (>= n), G row groups of reg::kRpt rows.
struct RegShape {
  int nc = 0, g = 0;
  std::int64_t rows() const { return std::int64_t(g) * reg::kRpt; }
  explicit operator bool() const { return nc > 0; }
};

/// Calls f(NC, G) (as integral constants) for the instantiated shapes; false for others.
template <class T, class F>
bool with_shape(RegShape s, F&& f) {
  using std::integral_constant;
  switch (s.nc * 100 + s.g) {
    case 1608: f(integral_constant<int, 16>{}, integral_constant<int, 8>{}); return true;
    case 1616: f(integral_constant<int, 16>{}, integral_constant<int, 16>{}); return true;
    case 1632: f(integral_constant<int, 16>{}, integral_constant<int, 32>{}); return true;
    case 3208: f(integral_constant<int, 32>{}, integral_constant<int, 8>{}); return true;
    case 3216: f(integral_constant<int, 32>{}, integral_constant<int, 16>{}); return true;
    case 6404: f(integral_constant<int, 64>{}, integral_constant<int, 4>{}); return true;
    case 6408: f(integral_constant<int, 64>{}, integral_constant<int, 8>{}); return true;
    default: break;
  }
  if constexpr (sizeof(T) == 4) {  // FP32 holds twice the rows in the same registers
    switch (s.nc * 100 + s.g) {
      case 3232: f(integral_constant<int, 32>{}, integral_constant<int, 32>{}); return true;
      case 6416: f(integral_constant<int, 64>{}, integral_constant<int, 16>{}); return true;
      case 12804: f(integral_constant<int, 128>{}, integral_constant<int, 4>{}); return true;
      case 12808: f(integral_constant<int, 128>{}, integral_constant<int, 8>{}); return true;
      default: break;
    }
  }
  return false;
}

/// The smallest instantiated shape holding n columns and `rows` rows; empty if none.
RegShape reg_shape(int elem, std::int64_t n, std::int64_t rows) {
  const int max_nc = elem == 4 ? 128 : 64;
  for (int nc = 16; nc <= max_nc; nc *= 2) {
    if (n > nc) continue;
    const int max_g = std::min(1024 / nc, elem == 4 ? 32 : (nc == 64 ? 8 : (nc == 32 ? 16 : 32)));
    for (int g = (nc >= 64 ? 4 : 8); g <= max_g; g *= 2)
      if (std::int64_t(g) * reg::kRpt >= rows) return RegShape{nc, g};
    return RegShape{};
  }
  return RegShape{};
}

/// GPUQR_TSQR_FACTOR_KERNEL=register: factor with the register kernel wherever it holds the
/// block. The default is the shared-memory kernel, which measured faster for the factorization
/// (H200, 1048576 x 16..64: e.g. FP64 n = 64 10.5 ms against 12.0; docs/PERF.md); the register
/// kernel is the faster apply (form_q FP64 n = 64: 7.7 ms against 28.9).
bool register_factor() {
  const char* text = std::getenv("GPUQR_TSQR_FACTOR_KERNEL");
  return text != nullptr && std::string(text) == "register";
}

template <class T>
bool reg_geqrf(detail::ContextImpl& ctx, Pieces<const T> src, Pieces<T> dst, std::int64_t n,
               MatrixView<T> tau, bool stacked) {
  const RegShape shape = reg_shape(sizeof(T), n, src.max_block_rows());
  if (!shape) return false;
  return with_shape<T>(shape, [&](auto nc, auto g) {
    constexpr int NC = decltype(nc)::value, G = decltype(g)::value;
    reg::geqrf_kernel<T, NC, G><<<grid_of(src.blocks(), "tsqr_batched_geqrf"), NC * G, 0,
                                  ctx.stream>>>(src, dst, static_cast<int>(n), tau.data(),
                                                tau.ld(), stacked);
    GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  });
}

template <class T>
bool reg_apply(detail::ContextImpl& ctx, Op op, Pieces<const T> v, std::int64_t n,
               MatrixView<const T> tau, Pieces<T> c, std::int64_t k, bool top_only) {
  // Measured (H200, 1048576 rows): faster than the shared-memory apply for forming Q at
  // n = 32, 64 (FP64 n = 64: 19.9 ms against 28.9), slower for a few columns of C (Q^T b at
  // n = 64: 7.2 against 2.8: its cost per reflector does not shrink with k) and at n = 16.
  if (n <= 16 || 2 * k < n) return false;
  const RegShape shape = reg_shape(sizeof(T), n, v.max_block_rows());
  if (!shape) return false;
  const std::int64_t bytes = shape.rows() * n * static_cast<std::int64_t>(sizeof(T));
  if (bytes > smem_budget(ctx.device)) return false;
  return with_shape<T>(shape, [&](auto nc, auto g) {
    constexpr int NC = decltype(nc)::value, G = decltype(g)::value;
    allow_smem(reg::apply_kernel<T, NC, G>, bytes);
    reg::apply_kernel<T, NC, G><<<grid_of(v.blocks(), "tsqr_batched_apply"), NC * G, bytes,
                                  ctx.stream>>>(v, static_cast<int>(n), tau.data(), tau.ld(), c,
                                                k, op == Op::trans, top_only);
    GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
  });
}

}  // namespace

std::int64_t tsqr_block_rows_limit(detail::ContextImpl& ctx, int elem_bytes, std::int64_t n,
                                   std::int64_t extra) {
  DeviceGuard guard(ctx.device);
  const std::int64_t per_row = std::max<std::int64_t>(n + extra, 1) * elem_bytes;
  // One row's worth less for tau.
  return std::max<std::int64_t>(smem_budget(ctx.device) / per_row - 1, 0);
}

template <class T>
void tsqr_batched_geqrf(detail::ContextImpl& ctx, Pieces<const T> src, Pieces<T> dst,
                        std::int64_t n, MatrixView<T> tau, bool stacked) {
  const std::int64_t blocks = src.blocks();
  if (blocks == 0 || n == 0) return;
  DeviceGuard guard(ctx.device);
  const std::int64_t rows = src.max_block_rows();
  const std::int64_t bytes = geqrf_bytes(rows, n, sizeof(T));
  const bool fits = bytes <= smem_budget(ctx.device);
  if ((register_factor() || !fits) && reg_geqrf<T>(ctx, src, dst, n, tau, stacked)) return;
  if (!fits) {
    geqrf_per_block<T>(ctx, src, dst, n, tau, stacked);
    return;
  }
  allow_smem(geqrf_kernel<T>, bytes);
  geqrf_kernel<T><<<grid_of(blocks, "tsqr_batched_geqrf"), kThreads, bytes, ctx.stream>>>(
      src, dst, static_cast<int>(n), tau.data(), tau.ld(), stacked);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

template <class T>
void tsqr_batched_apply(detail::ContextImpl& ctx, Op op, Pieces<const T> v, std::int64_t n,
                        MatrixView<const T> tau, Pieces<T> c, std::int64_t k, bool stacked,
                        bool top_only) {
  const std::int64_t blocks = v.blocks();
  if (blocks == 0 || n == 0 || k == 0) return;
  DeviceGuard guard(ctx.device);
  if (reg_apply<T>(ctx, op, v, n, tau, c, k, top_only)) return;
  const std::int64_t rows = std::max<std::int64_t>(v.max_block_rows(), 1);
  const std::int64_t budget = smem_budget(ctx.device) / static_cast<std::int64_t>(sizeof(T));
  const std::int64_t kc = std::min(k, (budget - n - rows * n) / rows);
  if (kc < 1) {
    apply_per_block<T>(ctx, op, v, n, tau, c, k, top_only);
    return;
  }
  const std::int64_t bytes = (rows * (n + kc) + n) * static_cast<std::int64_t>(sizeof(T));
  allow_smem(apply_kernel<T>, bytes);
  apply_kernel<T><<<grid_of(blocks, "tsqr_batched_apply"), kThreads, bytes, ctx.stream>>>(
      v, static_cast<int>(n), tau.data(), tau.ld(), c, k, static_cast<int>(kc), op == Op::trans,
      stacked, top_only);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

template <class T>
void tsqr_set_tops(detail::ContextImpl& ctx, Pieces<T> c, std::int64_t n, std::int64_t k) {
  const std::int64_t blocks = c.blocks();
  if (blocks == 0 || n == 0 || k == 0) return;
  DeviceGuard guard(ctx.device);
  set_tops_kernel<T><<<grid_of(blocks, "tsqr_set_tops"), kThreads, 0, ctx.stream>>>(
      c, static_cast<int>(n), k);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

GPUQR_INSTANTIATE_TSQR_KERNELS(float)
GPUQR_INSTANTIATE_TSQR_KERNELS(double)

}  // namespace gpuqr::kernels::cuda
