// C := A^T B where the inner dimension m (the rows of A and B) is long and C (k x n) is small:
// cuBLAS's one GEMM of that shape has only a few output tiles to spread over the GPU, so the
// rows are cut into blocks, one strided-batched GEMM writes every block's k x n product, and a
// small kernel sums them in a fixed order (bitwise reproducible). Used by larfb's V^T C and
// larft's V^T V on tall matrices (src/cuda/blocked_kernels.cu) and by the CholeskyQR Gram
// matrix (src/cuda/cholqr_kernels.cu). src/cuda/ only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "src/core/context_impl.hpp"

namespace gpuqr::kernels::cuda {

/// How the rows are cut: `blocks` blocks of `rows` rows (the last one shorter); blocks <= 1
/// means one plain GEMM.
struct LongSplit {
  std::int64_t rows = 0;
  std::int64_t blocks = 1;
  /// Elements of the partial products' workspace (0 when there is nothing to split).
  std::size_t partial_elems(std::int64_t k, std::int64_t n) const {
    return blocks > 1 ? std::size_t(blocks) * std::size_t(k) * std::size_t(n) : 0;
  }
};

/// The split for a k x n product over m rows on `ctx`'s device: enough blocks that the batch
/// has about four output tiles per multiprocessor, each block at least kMinRows rows, the
/// partials at most 64 MiB; one block (no split) where the plain GEMM already has that many
/// tiles or m is short. GPUQR_LONG_SPLIT=0 turns it off (measurements).
LongSplit long_gemm_split(const detail::ContextImpl& ctx, std::int64_t m, std::int64_t k,
                          std::int64_t n, std::size_t elem);

/// C (k x n, ld ldc) := A^T B, A m x k (ld lda), B m x n (ld ldb), by `split`; `parts` holds
/// split.partial_elems(k, n) elements (device, unused when split.blocks <= 1). Enqueued on
/// ctx's stream; nothing waits or allocates.
template <class T>
void gemm_tn_long(detail::ContextImpl& ctx, std::int64_t k, std::int64_t n, std::int64_t m,
                  const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T* c,
                  std::int64_t ldc, LongSplit split, T* parts);

/// The partial products of rows [0, h) into parts + first * k n, ... (blocks of `rows` rows;
/// the short last one alone): the first half of gemm_tn_long, for callers that produce the
/// rows chunk by chunk (gram_of_product).
template <class T>
void partial_products(detail::ContextImpl& ctx, std::int64_t k, std::int64_t n, std::int64_t h,
                      const T* a, std::int64_t lda, const T* b, std::int64_t ldb,
                      std::int64_t rows, T* parts, std::int64_t first);

/// C (k x n, ld ldc) := the sum of `count` partial products (k x n each, packed) in order.
template <class T>
void sum_partials(detail::ContextImpl& ctx, const T* parts, std::int64_t count, std::int64_t k,
                  std::int64_t n, T* c, std::int64_t ldc);

}  // namespace gpuqr::kernels::cuda
