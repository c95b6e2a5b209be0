// Leaf operations of the blocked Householder QR (src/core/blocked_qr.cpp), declared once and
// implemented per backend: kernels::cpu (LAPACK's geqr2/larft/larfb: the reference twins) and
// kernels::cuda (our panel kernel, cuBLAS GEMMs). Reflectors are passed as an explicit V:
// unit lower trapezoidal with zeros above the diagonal, so that applying them is plain GEMM.
#pragma once

#include <cstdint>

#include "gpuqr/dense.hpp"
#include "src/core/context_impl.hpp"

#define GPUQR_DECLARE_BLOCKED_KERNELS                                                              \
  /* The widest panel of h rows panel_qr handles best in one call. */                              \
  std::int64_t max_panel_width(detail::ContextImpl& ctx, int elem_bytes, std::int64_t h);          \
  /* Whether panel_qr on an h x b panel waits for the device once (a status read back): the        \
     driver then enqueues what does not depend on the panel first. */                              \
  bool panel_waits_for_host(detail::ContextImpl& ctx, int elem_bytes, std::int64_t h,              \
                            std::int64_t b);                                                       \
  /* Unblocked Householder QR of the h x b panel (h >= b, b <= max_panel_width): R on and          \
     above the diagonal, reflectors below, their scalars in tau (b entries), V (h x b)             \
     written explicitly (unit diagonal, zeros above) and, unless t is empty, T (b x b) of          \
     H_1 ... H_b = I - V T V^T as larft computes it. */                                            \
  template <class T>                                                                               \
  void panel_qr(detail::ContextImpl& ctx, MatrixView<T> panel, VectorView<T> tau, MatrixView<T> v, \
                MatrixView<T> t);                                                                  \
  /* panel_qr on the first ib columns of `panel` (h x w, ib <= w), then the other w - ib           \
     columns updated by the block reflector: larfb(left, trans, v, t, ...) with `work`             \
     (ib x (w - ib)) as its scratch. CUDA can fuse both into one cluster launch (the AH step,      \
     src/cuda/panel_qr_ah_step.cu; off by default); t must not be empty. */                        \
  template <class T>                                                                               \
  void panel_qr_update(detail::ContextImpl& ctx, MatrixView<T> panel, std::int64_t ib,             \
                       VectorView<T> tau, MatrixView<T> v, MatrixView<T> t, MatrixView<T> work);   \
  /* V (h x k) := the explicit unit lower trapezoid of the reflectors stored in `qr`. */           \
  template <class T>                                                                               \
  void form_v(detail::ContextImpl& ctx, MatrixView<const T> qr, MatrixView<T> v);                  \
  /* T (k x k, upper) with H_1 ... H_k = I - V T V^T (forward, columnwise, as LAPACK's             \
     larft); `gram` is k x k scratch. */                                                           \
  template <class T>                                                                               \
  void larft(detail::ContextImpl& ctx, MatrixView<const T> v, VectorView<const T> tau,             \
             MatrixView<T> t, MatrixView<T> gram);                                                 \
  /* As larft, when T's diagonal tile x tile blocks already hold the T of each tile's              \
     reflectors (panel_qr's output for inner panels of width `tile`): only the rest of T is        \
     computed. */                                                                                  \
  template <class T>                                                                               \
  void larft_known_diagonal(detail::ContextImpl& ctx, MatrixView<const T> v,                       \
                            VectorView<const T> tau, MatrixView<T> t, MatrixView<T> gram,          \
                            std::int64_t tile);                                                    \
  /* C := op(H) C (left) or C op(H) (right), H = I - V T V^T, V m x k (left) or n x k              \
     (right); `work` is k x C.cols (left) or C.rows x k (right) scratch. */                        \
  template <class T>                                                                               \
  void larfb(detail::ContextImpl& ctx, Side side, Op op, MatrixView<const T> v,                    \
             MatrixView<const T> t, MatrixView<T> c, MatrixView<T> work);                          \
  /* a := off everywhere, diag on the diagonal (LAPACK's laset 'A'). */                            \
  template <class T>                                                                               \
  void laset(detail::ContextImpl& ctx, T off, T diag, MatrixView<T> a);

#define GPUQR_INSTANTIATE_BLOCKED_KERNELS(T)                                                       \
  template void panel_qr<T>(detail::ContextImpl&, MatrixView<T>, VectorView<T>, MatrixView<T>,     \
                            MatrixView<T>);                                                        \
  template void panel_qr_update<T>(detail::ContextImpl&, MatrixView<T>, std::int64_t,              \
                                   VectorView<T>, MatrixView<T>, MatrixView<T>, MatrixView<T>);    \
  template void form_v<T>(detail::ContextImpl&, MatrixView<const T>, MatrixView<T>);               \
  template void larft<T>(detail::ContextImpl&, MatrixView<const T>, VectorView<const T>,           \
                         MatrixView<T>, MatrixView<T>);                                            \
  template void larft_known_diagonal<T>(detail::ContextImpl&, MatrixView<const T>,                 \
                                        VectorView<const T>, MatrixView<T>, MatrixView<T>,         \
                                        std::int64_t);                                             \
  template void larfb<T>(detail::ContextImpl&, Side, Op, MatrixView<const T>, MatrixView<const T>, \
                         MatrixView<T>, MatrixView<T>);                                            \
  template void laset<T>(detail::ContextImpl&, T, T, MatrixView<T>);

namespace gpuqr::kernels::cpu {
GPUQR_DECLARE_BLOCKED_KERNELS
}  // namespace gpuqr::kernels::cpu

namespace gpuqr::kernels::cuda {
GPUQR_DECLARE_BLOCKED_KERNELS
/// Which kernel factors panels short enough for one thread block (tests and measurements):
/// -1 = default (the single-block kernel unless GPUQR_PANEL_SINGLE=0), 0 = never, 1 = always.
void panel_qr_single_block(int mode);
/// Whether panel_qr tries the AH panel (QRF-AH from the Gram matrix, src/cuda/panel_qr_ah.cu)
/// first: -1 = default (panels of at least panel_qr_ah_min_rows rows unless
/// GPUQR_PANEL_AH=0), 0 = never, 1 = every panel with h >= 2b.
void panel_qr_ah_mode(int mode);
/// The AH step (panel_qr_update's fused path, src/cuda/panel_qr_ah_step.cu; off by default,
/// GPUQR_AH_STEP=1): -1 default, 0 never, 1 wherever it applies (tests and measurements); and
/// whether it applies to an inner panel of h rows and width b followed by `rest` columns.
void panel_qr_ah_step_mode(int mode);
bool panel_qr_ah_step_wanted(int device, int elem_bytes, std::int64_t h, std::int64_t b,
                             std::int64_t rest);
/// Which threads run the AH panel's Algorithm 2 (tests and measurements): -1 = default (four
/// warps unless GPUQR_AH_WARP says 0 or 1), 0 = the block (factor_block), 1 = one warp with
/// the columns in registers (factor_block_warp), 4 = four warps with a quarter of the rows
/// each (factor_block_warps), 6 and 7 = four warps with the rows interleaved (7 with the
/// shorter reciprocal chains: the default), 10 = mode 7 with the block's other four warps
/// running its instructions ahead, storing nothing (the same bits). The warps' versions take
/// 32-column panels; others the block's.
void panel_qr_ah_warp_mode(int mode);
/// Where the AH panel forms T (tests and measurements): -1 = default (beside the scaling, in
/// a kernel of its own that overlaps it, unless GPUQR_AH_T_BESIDE=0), 0 = in the b x b kernel,
/// after Algorithm 2, 1 = beside the scaling. The same bits either way.
void panel_qr_ah_t_beside_mode(int mode);
/// How the AH panel's b x b kernel reads the Gram pass's partial sums (tests and
/// measurements): -1 = default (3 unless GPUQR_AH_WIDE_READ says 0, 1 or 2), 0 = four
/// partials at a time, 1 = eight, the top block's loads first, 2 = as 1, only their upper
/// triangles (mirrored), 3 = as 1, sixteen at a time. The same bits in every mode.
void panel_qr_ah_read_mode(int mode);
/// Measurements: while on, the AH panel's top kernel records clock64() at its 7 phase
/// boundaries; panel_qr_ah_trace_clocks copies the last launch's 8 slots (synchronous).
void panel_qr_ah_trace(bool on);
void panel_qr_ah_trace_clocks(long long* out);
/// Whether larfb's product with T uses cuBLAS TRMM (the earlier path) instead of a GEMM with
/// the full T: -1 = default (GEMM unless GPUQR_LARFB_TRMM=1), 0 = never, 1 = always (tests
/// and A/B measurements).
void larfb_trmm_mode(int mode);
/// Whether FP32 larfb (left side) computes W = V^T C and C -= V W on the TF32 tensor cores by
/// the 3xTF32 split (CUTLASS; src/cuda/larfb_tf32.cu): -1 = default (C of 131072 rows or more,
/// k and n of at least 64, unless GPUQR_LARFB_TF32=0), 0 = never, 1 = every FP32 left-side call
/// (tests and A/B measurements). FP64 is not affected; a build without CUTLASS never takes it.
void larfb_tf32_mode(int mode);
/// Whether larfb (left side) with at most 32 reflectors on a short C takes one launch of our
/// own (src/cuda/larfb_small.cu) instead of cuBLAS's GEMMs: -1 = default (C of at most
/// GPUQR_LARFB_SMALL_ROWS rows, 2048, and 256 columns, unless GPUQR_LARFB_SMALL=0), 0 = never,
/// 1 = wherever k <= 32 (tests and A/B measurements). Not with larfb_trmm_mode's TRMM path,
/// nor for FP32 while larfb_tf32_mode(1) asks for the 3xTF32 products everywhere.
void larfb_small_mode(int mode);
/// How many larfb calls took that launch so far in this process (tests).
std::int64_t larfb_small_count();
/// How many larfb calls took the 3xTF32 product C -= V W so far in this process (tests).
std::int64_t larfb_tf32_count();
/// Whether this build has larfb's 3xTF32 kernels (CUTLASS found at configure time).
bool larfb_tf32_built();
/// How larft and larft_known_diagonal merge T's diagonal 32-blocks into the whole T: two
/// strided-batched GEMMs per doubling level (the default), two cuBLAS TRMMs per merge, or one
/// merge kernel per level (TRMMs above 256 columns).
/// GPUQR_LARFT_MERGE=gemm|trmm|kernel forces one.
enum class LarftMerge { gemm = 0, trmm = 1, kernel = 2 };
/// -1 = default (GPUQR_LARFT_MERGE, else the GEMMs), else a LarftMerge's value (tests).
void larft_merge_mode(int mode);
/// The overrides above (larfb_trmm_mode, larfb_small_mode, larft_merge_mode, panel_qr_single_block,
/// panel_qr_ah_mode, panel_qr_ah_warp_mode, panel_qr_ah_t_beside_mode, ...) as one number: they
/// change which kernels a call enqueues, so a graph's key holds it. The environment knobs are read
/// once per process and need no key.
std::int64_t knob_signature();
/// The AH panel alone (tests, and panel_qr on panels too tall for the fused kernels):
/// enqueues it, waits, and says whether it factored the panel
/// (outputs as panel_qr's) or left everything unchanged for the Householder kernel.
template <class T>
bool panel_qr_ah_only(detail::ContextImpl& ctx, MatrixView<T> panel, VectorView<T> tau,
                      MatrixView<T> v, MatrixView<T> t);
}  // namespace gpuqr::kernels::cuda
