// Blocked Householder QR (compact WY), backend-agnostic: the driver of the CUDA geqrf, ormqr
// and orgqr, and run on the CPU in tests against LAPACK. Two levels: outer panels of width
// `outer` are factored by inner panels of width `inner` (panel_qr), each inner block applied
// to the rest of its outer panel with larfb; then the outer block reflector (V, T from one
// V^T V product) updates the trailing matrix with large GEMMs.
#pragma once

#include <cstdint>

#include "gpuqr/dense.hpp"

namespace gpuqr::detail {

struct BlockSizes {
  std::int64_t outer = 0;  // 0: chosen by shape and precision
  std::int64_t inner = 0;  // 0: the backend's widest panel (max_panel_width)
};

/// The block sizes used for an m x n factorization of T on `ctx` (resolves zeros).
BlockSizes choose_block_sizes(const Context& ctx, std::int64_t m, std::int64_t n,
                              int elem_bytes, BlockSizes requested = {});

/// Whether the drivers put look-ahead work on the context's second lane: CUDA, unless
/// GPUQR_LOOKAHEAD=0 (measurements; read at every call).
bool lookahead_on(const Context& ctx);

/// geqrf by the blocked algorithm; arguments already checked (as geqrf's).
template <class T>
void blocked_geqrf(const Context& ctx, MatrixView<T> a, VectorView<T> tau,
                   BlockSizes sizes = {});

/// ormqr by blocked application (V and T rebuilt per outer block); arguments checked.
template <class T>
void blocked_ormqr(const Context& ctx, Side side, Op op, MatrixView<const T> a,
                   VectorView<const T> tau, MatrixView<T> c, BlockSizes sizes = {});

/// orgqr by blocked backward accumulation; arguments checked.
template <class T>
void blocked_orgqr(const Context& ctx, std::int64_t k, MatrixView<T> a, VectorView<const T> tau,
                   BlockSizes sizes = {});

/// Kerr, Campbell & Richards' blocked QR with the full Q (geqrf_wy); arguments checked, q is
/// m x m.
template <class T>
void wy_geqrf(const Context& ctx, MatrixView<T> a, VectorView<T> tau, MatrixView<T> q,
              BlockSizes sizes = {});

}  // namespace gpuqr::detail
