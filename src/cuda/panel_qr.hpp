// The fused panel kernel (src/cuda/panel_qr.cu), used by the blocked-QR leaves.
#pragma once

#include <cstdint>

#include "gpuqr/matrix.hpp"
#include "src/core/context_impl.hpp"

namespace gpuqr::kernels::cuda {

inline constexpr int kPanelMaxWidth = 32;

/// Elements of T the fused panel kernel needs as workspace for an h x b panel.
std::int64_t panel_qr_workspace_elems(std::int64_t h, int b);

/// The widest panel (32, 16 or 8) of h rows that one thread-block cluster holds on `device`.
std::int64_t panel_qr_max_width(int device, int elem_bytes, std::int64_t h);

/// Factors the h x b panel (b <= kPanelMaxWidth) in one launch on ctx's stream (a cluster, or
/// a cooperative grid for taller panels), writing tau, the explicit V and, when t is not
/// empty, T (b x b, as larft). False (nothing launched) when the panel is too tall for the
/// device's shared memory, so the caller falls back.
/// The single-block kernel (panel_qr_single.cu): panels of at most panel_qr_single_rows rows
/// (0 when disabled) and b <= 32, h >= b, factored by one thread block with one block barrier
/// per column. False (nothing launched) for any other panel.
template <class T>
bool panel_qr_single(detail::ContextImpl& ctx, MatrixView<T> panel, VectorView<T> tau,
                     MatrixView<T> v, MatrixView<T> t);
std::int64_t panel_qr_single_rows(int elem_bytes);

template <class T>
bool panel_qr_fused(detail::ContextImpl& ctx, MatrixView<T> panel, VectorView<T> tau,
                    MatrixView<T> v, MatrixView<T> t, T* workspace);

}  // namespace gpuqr::kernels::cuda
