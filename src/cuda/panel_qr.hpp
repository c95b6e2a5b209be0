// The fused panel kernel (src/cuda/panel_qr.cu), used by the blocked-QR leaves.
#pragma once

#include <cstdint>

#include "gpuqr/matrix.hpp"
#include "src/core/context_impl.hpp"

namespace gpuqr::kernels::cuda {

inline constexpr int kPanelMaxWidth = 32;

/// Elements of T the fused panel kernel needs as workspace for an h x b panel.
std::int64_t panel_qr_workspace_elems(std::int64_t h, int b);

/// Factors the h x b panel (b <= kPanelMaxWidth) in one cooperative launch on ctx's stream,
/// writing tau and the explicit V; false (nothing launched) when the panel is too tall for the
/// device's shared memory, so the caller falls back.
template <class T>
bool panel_qr_fused(detail::ContextImpl& ctx, MatrixView<T> panel, VectorView<T> tau,
                    MatrixView<T> v, T* workspace);

}  // namespace gpuqr::kernels::cuda
