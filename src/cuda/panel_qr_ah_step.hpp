// The AH step (src/cuda/panel_qr_ah_step.cu): one 32-column inner panel of the blocked QR's
// outer panel by QRF-AH together with its update of the outer panel's next columns, in one
// cluster launch, with the Householder kernel and an update-only launch enqueued after it
// for where Algorithm 2 declines (the host never waits). src/cuda/ only.
#pragma once

#include <cstdint>

#include "gpuqr/matrix.hpp"
#include "src/core/context_impl.hpp"

namespace gpuqr::kernels::cuda {

/// Whether the AH step takes an inner panel of h rows and width b followed by `rest` columns
/// of its outer panel on `device`: b = 32, rest <= 96, h from the AH panel's fewest rows to
/// 4096, the Householder fallback able to launch; only with GPUQR_AH_STEP=1 or
/// panel_qr_ah_step_mode(1) (off by default: measured slower, see the .cu file).
bool panel_qr_ah_step_wanted(int device, int elem_bytes, std::int64_t h, std::int64_t b,
                             std::int64_t rest);
/// Tests and measurements: -1 default (GPUQR_AH_STEP), 0 never, 1 wherever it applies.
void panel_qr_ah_step_mode(int mode);
int panel_qr_ah_step_override();
/// Elements of T the step needs as its own workspace (D and the status word).
std::int64_t panel_qr_ah_step_workspace_elems();

/// `panel` is h x (32 + rest): factors its first 32 columns (tau, the explicit V (h x 32) and
/// T (32 x 32), R and the reflectors in place, as panel_qr) and applies H^T to the other
/// `rest` columns (as larfb with Side::left, Op::trans). `step_ws`: the step's workspace;
/// `panel_ws`: panel_qr_workspace_elems(h, 32) elements for the Householder fallback. False
/// (nothing launched) where panel_qr_ah_step_wanted says no or t is empty.
template <class T>
bool panel_qr_ah_step(detail::ContextImpl& ctx, MatrixView<T> panel, VectorView<T> tau,
                      MatrixView<T> v, MatrixView<T> t, T* step_ws, T* panel_ws);

}  // namespace gpuqr::kernels::cuda
