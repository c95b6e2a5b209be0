// C := A^T B where the inner dimension m (the rows of A and B) is long and C (k x n) is small:
// cuBLAS's one GEMM of that shape has only a few output tiles to spread over the GPU, so the
// rows are cut into blocks, one strided-batched GEMM writes every block's k x n product, and a
// small kernel sums them in a fixed order (bitwise reproducible). Used by the CholeskyQR Gram
// matrix (src/cuda/cholqr_kernels.cu, its own split rule). Tried for larfb's V^T C and
// larft's V^T V on tall matrices in session 15 and dropped: cuBLAS already splits those, and
// the split slowed 65536 x 1024 geqrf (docs/PERF.md). src/cuda/ only.
#pragma once

#include <cstdint>

#include "src/core/context_impl.hpp"

namespace gpuqr::kernels::cuda {

/// The partial products of rows [0, h) into parts + first * k n, ... (blocks of `rows` rows;
/// the short last one alone): one strided-batched GEMM; callers that produce the rows chunk
/// by chunk (gram_of_product) call it per chunk.
template <class T>
void partial_products(detail::ContextImpl& ctx, std::int64_t k, std::int64_t n, std::int64_t h,
                      const T* a, std::int64_t lda, const T* b, std::int64_t ldb,
                      std::int64_t rows, T* parts, std::int64_t first);

/// C (k x n, ld ldc) := the sum of `count` partial products (k x n each, packed) in order.
template <class T>
void sum_partials(detail::ContextImpl& ctx, const T* parts, std::int64_t count, std::int64_t k,
                  std::int64_t n, T* c, std::int64_t ldc);

}  // namespace gpuqr::kernels::cuda
