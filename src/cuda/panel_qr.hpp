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
/// `skip` (device memory, may be null): when it holds 1 at launch the kernel returns at once
/// (the AH panel below factored the panel); the same for panel_qr_fused's kernels.
template <class T>
bool panel_qr_single(detail::ContextImpl& ctx, MatrixView<T> panel, VectorView<T> tau,
                     MatrixView<T> v, MatrixView<T> t, const int* skip = nullptr);
std::int64_t panel_qr_single_rows(int elem_bytes);

template <class T>
bool panel_qr_fused(detail::ContextImpl& ctx, MatrixView<T> panel, VectorView<T> tau,
                    MatrixView<T> v, MatrixView<T> t, T* workspace,
                    const int* skip = nullptr);
/// Whether panel_qr_fused launches for an h x b panel (rather than returning false).
bool panel_qr_fused_fits(int device, int elem_bytes, std::int64_t h, int b);

/// The AH panel (panel_qr_ah.cu): QRF-AH's Gram-based factorization of the h x b panel,
/// enqueued on ctx's stream without a host wait, for panels of at least
/// panel_qr_ah_min_rows() rows (h >= 2b, 2 <= b <= 32). Returns the device status word (1:
/// factored, with the same outputs as the fused kernels; 0: left unchanged because the
/// norm-update test would end it early or a column's squares leave the safe range), to be
/// passed as `skip` to the fused kernel launched next; nullptr when nothing was launched.
/// `workspace` holds panel_qr_ah_workspace_elems(h) elements for an h-row panel.
template <class T>
int* panel_qr_ah(detail::ContextImpl& ctx, MatrixView<T> panel, VectorView<T> tau,
                 MatrixView<T> v, MatrixView<T> t, T* workspace);
std::int64_t panel_qr_ah_workspace_elems(std::int64_t h);
/// The values set by panel_qr_single_block, panel_qr_ah_mode and panel_qr_ah_warp_mode (-1:
/// none), for knob_signature.
int panel_qr_single_override();
int panel_qr_ah_override();
int panel_qr_ah_warp_override();
int panel_qr_ah_t_beside_override();
int panel_qr_ah_read_override();
/// Whether the AH panel forms T beside the scaling (panel_qr_ah_t_beside_mode's override if
/// set, else GPUQR_AH_T_BESIDE, else yes) rather than in its b x b kernel.
bool panel_qr_ah_t_beside();
/// How the AH panel's b x b kernel runs Algorithm 2 (panel_qr_ah_warp_mode's values, the
/// override if set, else GPUQR_AH_WARP, else the default): 0 the block, 1 one warp, 4 four
/// warps, 6 four warps with the rows interleaved, 7 the same with the shorter reciprocal
/// chains, 10 mode 7 with four shadow warps running its code ahead (ah::factor_block,
/// factor_block_warp, factor_block_warps, factor_block_warps_interleaved).
int panel_qr_ah_warp_factor();
/// 0 when the AH panel is off (GPUQR_PANEL_AH=0, or panel_qr_ah_mode(0)), else the fewest
/// rows a panel of elem_bytes entries needs to take it (GPUQR_PANEL_AH_MIN_ROWS, or the
/// measured default: below it the single-block kernel is faster).
std::int64_t panel_qr_ah_min_rows(int elem_bytes);
/// Tests and measurements: -1 default, 0 never, 1 always (any panel with h >= 2b).
void panel_qr_ah_mode(int mode);

}  // namespace gpuqr::kernels::cuda
