// Shared pieces of the CUDA batched QR (src/cuda/batched_*.cu): the device-side batch
// description and the kernel launchers. CUDA-only header.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "src/core/batched_kernels.hpp"

namespace gpuqr::kernels::cuda::batched {

/// One matrix as the kernels see it (32 bytes, uploaded in arrays for listed batches).
template <class T>
struct Desc {
  T* a;
  T* tau;
  std::int64_t ld;
  int m, n, k, pad;
};

/// A batch in device-readable form: listed (list != nullptr, `count` descriptors in device
/// memory) or strided (matrix i at shape.a + i * stride, its tau at shape.tau + i *
/// tau_stride). Plain data, passed by value to kernels.
template <class T>
struct DeviceBatch {
  const Desc<T>* list = nullptr;
  Desc<T> shape{};
  std::int64_t stride = 0, tau_stride = 0;
  std::int64_t count = 0;

  __host__ __device__ Desc<T> at(std::int64_t i) const {
    if (list != nullptr) return list[i];
    Desc<T> d = shape;
    d.a = shape.a + i * stride;
    d.tau = shape.tau + i * tau_stride;
    return d;
  }
};

/// Dynamic shared memory one thread block may use on `device` (opt-in maximum less a reserve).
std::int64_t smem_budget(int device);

/// The register kernel's class of an m x n matrix: -1 unless n <= 32 and m <= 64.
int small_class(std::int64_t m, std::int64_t n);
constexpr int kSmallClasses = 12;

/// Householder QR of every matrix of `b` (all of class `cls`): one warp per matrix (or 2 or 4
/// matrices per warp for n <= 16 or 8), columns in registers, one pass over memory.
template <class T>
void launch_small_geqrf(const DeviceBatch<T>& b, int cls, cudaStream_t stream);

/// The rows kernel (batched_rows_small.cu) for the small kernel's class of 32 < m <= 64,
/// 8 < n <= 16: a matrix per warp, two rows of every column on a lane.
template <class T>
void launch_rows_small_geqrf(const DeviceBatch<T>& b, cudaStream_t stream);

/// The cooperative register kernel's class of an m x n matrix under the current routing
/// (test override, GPUQR_BATCHED_TALL): -1 unless n <= 32 and m <= 256, or n <= 64 and
/// m <= 128, and the small kernel does not keep the matrix (m <= 32 and n <= 32 stay there;
/// by default, GPUQR_BATCHED_TALL unset or 2, all of its class n <= 32, m <= 64).
int tall_class(std::int64_t m, std::int64_t n);
constexpr int kTallClasses = 11;

/// Householder QR of every matrix of `b` (all of tall class `cls`): a thread block per matrix,
/// each column in the registers of several lanes of one warp (batched_tall_small.cu).
template <class T>
void launch_tall_geqrf(const DeviceBatch<T>& b, int cls, cudaStream_t stream);

/// Householder QR of every matrix of `b`, one thread block per matrix held in shared memory:
/// `max_elems` bounds m * n + n over the batch and must fit smem_budget.
template <class T>
void launch_block_geqrf(const DeviceBatch<T>& b, std::int64_t max_elems, int device,
                        cudaStream_t stream);

/// C_i := op(Q_i) C_i (Q_i from v's reflectors: m rows, k of them, tau), one thread block per
/// matrix with V and a chunk of C's columns in shared memory; `identity`: C_i starts as the
/// identity's first c.n columns and is only written (orgqr; c may alias v). `max_elems` is the
/// dynamic shared memory in elements, at least m*k + k + m for every matrix.
template <class T>
void launch_block_apply(const DeviceBatch<T>& v, const DeviceBatch<T>& c, bool trans,
                        bool identity, std::int64_t max_elems, int device, cudaStream_t stream);

/// B_i(0:n, :) := R_i^{-1} B_i(0:n, :) with R_i the upper triangle of a's matrix i (n x n);
/// b's entry i: nrhs = n columns. One thread block per matrix.
template <class T>
void launch_upper_solve(const DeviceBatch<T>& a, const DeviceBatch<T>& b, cudaStream_t stream);

/// The blocked route (batched_blocked.cu): panel width (8, 16 or 32) it uses for an m x n
/// matrix under the current routing (test override, GPUQR_BATCHED_ROUTE, GPUQR_BATCHED_NB,
/// the size rules; `budget_bytes` = smem_budget), 0 where the matrix keeps the other routes.
template <class T>
int blocked_nb(std::int64_t m, std::int64_t n, std::int64_t budget_bytes);

/// Device scratch bytes of blocked_geqrf_strided for `count` matrices of `shape`, and of
/// blocked_geqrf_listed for `mats` (each with blocked_nb > 0).
template <class T>
std::size_t blocked_bytes_strided(const Desc<T>& shape, std::int64_t count,
                                  std::int64_t budget_bytes);
template <class T>
std::size_t blocked_bytes(const std::vector<Desc<T>>& mats, std::int64_t budget_bytes);

/// geqrf of every matrix by the blocked route (panel kernel + two cuBLAS batched GEMMs per
/// panel step, on the context's stream and cuBLAS handle); `work` (device, `bytes`) as sized
/// above. Asynchronous: the listed form uploads its plan from pageable host memory.
template <class T>
void blocked_geqrf_strided(detail::ContextImpl& ctx, const DeviceBatch<T>& b, void* work,
                           std::size_t bytes);
template <class T>
void blocked_geqrf_listed(detail::ContextImpl& ctx, const std::vector<Desc<T>>& mats,
                          void* work, std::size_t bytes);

/// One panel step's trailing update for a listed batch of mixed shapes (batched_update.cu):
/// matrices 0 .. count-1 of `list` (the step's panel prefix), each with its workspace at ws +
/// offsets[i] (V, Y = V T: m x nb each, ld m - j; W after them: nb x n, ld jb), step j, panel
/// width nb. tiles_w: count + 1 ascending ints in device memory, the update's blocks before
/// matrix i (update_w_tiles per matrix).
template <class T>
struct UpdateArgs {
  const Desc<T>* list;
  T* ws;
  const std::int64_t* offsets;
  const int* tiles_w;
  int count, j, nb;
};

/// The update's block: W's jb <= 32 rows by 64 columns of C.
constexpr int kUpdateWRows = 32, kUpdateWCols = 64;

/// Blocks of the update for a matrix with `rows` = m - j, `nc` trailing columns and a panel
/// of jb columns (0 where nothing is updated).
int update_w_tiles(int rows, int nc, int jb);

/// W = Y^T C then C := C - V W for every matrix of `p` (`tiles`: the table's last entry), one
/// launch on `stream`, asynchronous: a block per 64 columns of one matrix's C computes its W
/// in registers and updates the same columns.
template <class T>
void launch_update(const UpdateArgs<T>& p, std::int64_t tiles, cudaStream_t stream);

/// dst_i := src_i for every pair: dst's entry i gives the m x n block copied (its m, n, ld),
/// src's entry i where it is read (its ld; at least dst's m x n). One launch for the batch.
template <class T>
void launch_copy(const DeviceBatch<T>& src, const DeviceBatch<T>& dst, cudaStream_t stream);

}  // namespace gpuqr::kernels::cuda::batched
