// Pieces shared by the tall-skinny entry points (src/core/tsqr.cpp) and TallSkinnyQR
// (src/core/tall_skinny_qr.cpp): argument checks and the explicit-Q driver.
#pragma once

#include <cstdint>

#include "gpuqr/tsqr.hpp"

namespace gpuqr::detail {

/// Throws InvalidArgument unless `a` is usable by `ctx` for a tall-skinny factorization
/// (context memory, m >= n, finite when ctx.check_finite()), and NotCompiled for methods this
/// build does not have. Writes nothing.
template <class T>
void check_tall_skinny(const Context& ctx, MatrixView<const T> a, const TsqrOptions& options,
                       const char* routine);

/// True when `automatic` tries the CholeskyQR methods for an m x n matrix (m >= 4 n).
bool tall_enough(std::int64_t m, std::int64_t n);

/// The explicit-Q factorization after the checks: Q (m x n) into `q` (which may be `a`
/// itself; when it is not, `a` is left as it was), R (n x n, zeros below) into `r`.
template <class T>
TsqrInfo run_explicit(const Context& ctx, MatrixView<const T> a, MatrixView<T> q,
                      MatrixView<T> r, const TsqrOptions& options);

}  // namespace gpuqr::detail
