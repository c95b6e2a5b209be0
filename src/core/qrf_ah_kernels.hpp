// Leaf of QRF-AH (Tomas & Quintana-Orti 2020; src/core/qrf_ah.cpp): the small b x b panel
// work of their Algorithm 2, declared once and implemented per backend (kernels::cpu, the
// reference twin in src/cpu/qrf_ah_kernels.cpp; kernels::cuda, one thread block in
// src/cuda/qrf_ah_kernels.cu; NotCompiled stubs in src/stubs/cholqr_stubs.cpp).
#pragma once

#include <cstdint>

#include "gpuqr/dense.hpp"
#include "src/core/context_impl.hpp"

namespace gpuqr::detail {
/// The widest QRF-AH panel the panel leaf takes.
inline constexpr std::int64_t kAhMaxBlock = 32;
/// The norm-update test ends a panel when a later column's remaining squared norm falls to
/// this fraction of its squared norm at the panel's start. The paper uses sqrt(eps), which
/// lets the Gram-based norms lose up to half their digits (u / fraction): measured on the
/// stress test that costs 1e3-1e5x Householder QR's orthogonality for rho = 1e-2..1e-4; at
/// 1e-2 the loss stays within a small factor, and panels end early a little more often.
inline constexpr double kAhRemainingFraction = 1e-2;
/// The amplification test ends a panel before column k when forming its vector's bottom part,
/// P_B D(:, k), cancels too much: kappa_k = sqrt(tau_k / 2) sum_i |D(i, k)| ||P(:, i)|| (the
/// rounding error of P_B D(:, k) relative to ||v_k|| = sqrt(2 / tau_k), in units of eps) above
/// this bound. The norm-update test alone let panels of Kahan-like triangles through with
/// kappa ~ 1e5 (orthogonality 1e7-1e8 m eps, session 5); in a numpy model of Algorithm 2 the
/// loss of orthogonality grows like kappa^2 / 100, random panels have kappa <= 2, and a bound
/// of 8 kept every stress panel (Kahan, near-dependent chains, the paper's rho test) within
/// 1.3 m eps, Householder QR's class.
inline constexpr double kAhMaxAmplification = 8.0;
}  // namespace gpuqr::detail

#define GPUQR_DECLARE_QRF_AH_KERNELS                                                          \
  /* The panel of Algorithm 2 from its top block `top` (b x b, b <= kAhMaxBlock, the panel's  \
     first b rows) and its Gram matrix `gram` (b x b, P^T P of the whole panel P; destroyed): \
     for the first kb columns (kb >= 1: the panel ends early when the norm-update test finds  \
     severe cancellation in a later column, or the amplification test in the next one) writes R on and above the diagonal of `top` and   \
     the Householder vectors' top part below it, tau[0..kb), and D (b x b, upper triangular;  \
     columns >= kb zero) with the vectors' part below the top block = P_B D. Columns >= kb of \
     `top` are left as they were. status[0] := kb (a double, context memory). */             \
  template <class T>                                                                          \
  void ah_panel(detail::ContextImpl& ctx, MatrixView<T> top, MatrixView<T> gram,              \
                MatrixView<T> d, VectorView<T> tau, VectorView<double> status);

#define GPUQR_INSTANTIATE_QRF_AH_KERNELS(T)                                                   \
  template void ah_panel<T>(detail::ContextImpl&, MatrixView<T>, MatrixView<T>, MatrixView<T>, \
                            VectorView<T>, VectorView<double>);

namespace gpuqr::kernels::cpu {
GPUQR_DECLARE_QRF_AH_KERNELS
}  // namespace gpuqr::kernels::cpu

namespace gpuqr::kernels::cuda {
GPUQR_DECLARE_QRF_AH_KERNELS
}  // namespace gpuqr::kernels::cuda
