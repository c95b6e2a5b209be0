// gpuqr/batched.hpp: QR of many small matrices in one call, of equal or of different sizes.
//
// Every matrix is column-major with its own leading dimension. The arrays that describe a
// batch (sizes, leading dimensions, pointers) are host arrays of `batch` entries; the matrices
// and tau vectors they point to are in the context's memory: host memory on a CPU context,
// device memory (on the context's device) on a CUDA context. CUDA calls are asynchronous on
// the context's stream (the host arrays may be reused as soon as the call returns).
// Matrices of one batch must not overlap.
//
// Every matrix is checked before anything is written: a bad size, leading dimension or null
// pointer of any matrix throws InvalidArgument naming its index ("matrix 7: lda = 3 < m = 5"),
// and then no matrix of the batch is touched. Not checked: that the pointers are in the
// context's memory space (a host pointer on a CUDA context faults in the kernel). The dense
// route's streams are shared per device by the process: calls on the same device from several
// host threads at once are not supported yet. float and double are instantiated.
//
// Backends: the CPU runs LAPACK per matrix (threads over the batch). CUDA factors small
// matrices (n <= 32, m <= 64) a warp each in registers, matrices that fit in shared memory a
// thread block each, and the rest with the dense blocked QR, matrices spread over streams.
#pragma once

#include <cstdint>

#include "gpuqr/context.hpp"
#include "gpuqr/dense.hpp"

namespace gpuqr {

/// QR factorization of `batch` m x n matrices (any m, n >= 0), as LAPACK's geqrf on each:
/// matrix i starts at a + i * stride_a (leading dimension lda >= max(1, m)), its tau (min(m, n)
/// entries) at tau + i * stride_tau. Needs stride_a >= lda * n and stride_tau >= min(m, n) so
/// that matrices do not overlap. Asynchronous on CUDA.
template <class T>
void geqrf_strided_batched(const Context& ctx, std::int64_t m, std::int64_t n, T* a,
                           std::int64_t lda, std::int64_t stride_a, T* tau,
                           std::int64_t stride_tau, std::int64_t batch);

/// As geqrf_strided_batched, the matrices and taus given by host arrays of `batch` pointers
/// (into the context's memory); all m x n with leading dimension lda. Asynchronous on CUDA.
template <class T>
void geqrf_batched(const Context& ctx, std::int64_t m, std::int64_t n, T* const* a,
                   std::int64_t lda, T* const* tau, std::int64_t batch);

/// Variable-size batched QR: matrix i is m[i] x n[i] at a[i] with leading dimension lda[i]
/// (>= max(1, m[i])); its min(m[i], n[i]) scalars go to tau[i]. Pointers of empty matrices
/// may be null. Host arrays of `batch` entries; asynchronous on CUDA.
template <class T>
void geqrf_vbatched(const Context& ctx, const std::int64_t* m, const std::int64_t* n,
                    T* const* a, const std::int64_t* lda, T* const* tau, std::int64_t batch);

/// Variable-size batched orgqr: matrix i (m[i] x n[i], m[i] >= n[i] >= k[i]) holds k[i]
/// reflectors in its first k[i] columns (as geqrf left them) and tau[i] their scalars; on
/// exit it holds the first n[i] columns of Q = H_1 ... H_k. Asynchronous on CUDA.
template <class T>
void orgqr_vbatched(const Context& ctx, const std::int64_t* m, const std::int64_t* n,
                    const std::int64_t* k, T* const* a, const std::int64_t* lda,
                    const T* const* tau, std::int64_t batch);

/// Variable-size batched ormqr from the left: C_i := op(Q_i) C_i, Q_i = H_1 ... H_k[i] from
/// the reflectors in the first k[i] columns of a[i] (m[i] rows, lda[i], k[i] <= m[i]) and
/// tau[i]; C_i is m[i] x nc[i] at c[i] with leading dimension ldc[i]. op = trans gives Q^T C.
/// Asynchronous on CUDA.
template <class T>
void ormqr_vbatched(const Context& ctx, Op op, const std::int64_t* m, const std::int64_t* nc,
                    const std::int64_t* k, const T* const* a, const std::int64_t* lda,
                    const T* const* tau, T* const* c, const std::int64_t* ldc,
                    std::int64_t batch);

/// Variable-size batched least squares min ||A_i X_i - B_i||, as LAPACK's gels('N') on each:
/// A_i is m[i] x n[i] with m[i] >= n[i] and full column rank, B_i m[i] x nrhs[i] (ldb[i] >=
/// max(1, m[i])). On exit a[i] holds geqrf's factors and b[i] X_i in its first n[i] rows
/// (Q^T B_i below). An exactly singular R gives Inf/NaN in X_i (no check, no exception).
/// Asynchronous on CUDA (workspace for tau comes from the context).
template <class T>
void gels_vbatched(const Context& ctx, const std::int64_t* m, const std::int64_t* n,
                   const std::int64_t* nrhs, T* const* a, const std::int64_t* lda, T* const* b,
                   const std::int64_t* ldb, std::int64_t batch);

/// Variable-size batched least squares min ||A_i X_i - B_i|| (m[i] >= n[i], full column rank),
/// arguments and checks as gels_vbatched, but **A is destroyed**: on exit a[i]'s contents are
/// unspecified (no geqrf form is promised). b[i] holds X_i in its first n[i] rows; below them
/// (rows n[i]..m[i]) an (m[i] - n[i]) x nrhs[i] block whose column j has the norm of the
/// residual B_i e_j - A_i X_i e_j (as LAPACK's gels; the block itself is not Q^T B on every
/// route). Giving up the factors lets CUDA run large or tall matrices on the tile engine: QR of
/// the augmented [A_i | B_i] in a workspace of sum m[i] (n[i] + nrhs[i]) elements per call
/// (plus the engine's reflector slots), then R X = (Q^T B)'s top. Other sizes, and the CPU
/// backend, take gels_vbatched's route. GPUQR_BATCHED_ENGINE=0 / 1 forces the engine route off
/// / on (every matrix with n, nrhs >= 1) for comparisons. Asynchronous on CUDA, apart from the
/// engine's host planning (the call returns when its last launch is enqueued).
template <class T>
void lstsq_vbatched(const Context& ctx, const std::int64_t* m, const std::int64_t* n,
                    const std::int64_t* nrhs, T* const* a, const std::int64_t* lda, T* const* b,
                    const std::int64_t* ldb, std::int64_t batch);

}  // namespace gpuqr
