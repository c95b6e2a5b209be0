// Pieces shared by the tall-skinny entry points (src/core/tsqr.cpp) and TallSkinnyQR
// (src/core/tall_skinny_qr.cpp): argument checks and the explicit-Q driver.
#pragma once

#include <cstdint>
#include <string>

#include "gpuqr/tsqr.hpp"

namespace gpuqr::detail {

/// Throws InvalidArgument unless `a` is usable by `ctx` for a tall-skinny factorization
/// (context memory, m >= n, finite when ctx.check_finite()), and NotCompiled for methods this
/// build does not have. Writes nothing.
///
/// With `cholesky_first` (the caller's first step is CholeskyQR on A itself, or on a copy),
/// the NaN/Inf pass over A is left to that step when CholeskyQR is tried at all: returns true,
/// and the caller passes `routine` to try_cholesky, whose first Gram matrix's trace (the sum
/// of A's squares: NaN or Inf whenever an entry is) decides whether the full check must run,
/// before anything is written. That saves a read of A (~3 ms at 2^20 x 1024 FP64).
template <class T>
bool check_tall_skinny(const Context& ctx, MatrixView<const T> a, const TsqrOptions& options,
                       const char* routine, bool cholesky_first = false);

/// True when `automatic` tries the CholeskyQR methods for an m x n matrix (m >= 4 n).
bool tall_enough(std::int64_t m, std::int64_t n);

/// TallSkinnyQR's borrowed-input path (TsqrOptions::borrow_input): CholeskyQR on `a` itself.
/// True when the result keeps Q implicit as a R^{-1} (single-pass CholeskyQR2): R in `r`,
/// R^{-1} in `rinv`, `info` filled, nothing tall written. False otherwise (another method is
/// needed, or Q would have to be formed): then nothing was written and the caller copies A.
/// `unchecked`: the routine whose NaN/Inf check of A was deferred (check_tall_skinny), or null.
template <class T>
bool run_borrowed(const Context& ctx, MatrixView<const T> a, MatrixView<T> r, MatrixView<T> rinv,
                  const TsqrOptions& options, TsqrInfo& info, const char* unchecked = nullptr);

/// True when `automatic` uses the TSQR tree (after CholeskyQR was rejected, or instead of
/// Householder QR): shapes where the tree was measured faster than the blocked Householder QR.
bool tsqr_preferred(std::int64_t m, std::int64_t n);
/// Whether `automatic` gives geqrf's form (tsqr_geqrf) by the blocked Householder QR rather
/// than by CholeskyQR2 + Householder reconstruction: wide n, where the former is faster.
bool householder_preferred_for_geqrf(std::int64_t n, int elem_bytes);
/// Whether `automatic` gives TallSkinnyQR (R, Q implicit) by the blocked Householder QR (on a
/// copy of A) rather than by CholeskyQR2: FP32 with n >= 512 and m n >= 2^31, where
/// CholeskyQR2's block GEMMs run on the FP32 pipes and Householder's fewer flops win.
bool householder_preferred_for_r(std::int64_t m, std::int64_t n, int elem_bytes);

/// Whether the blocked Householder QR of an m x n matrix factors its outer panels by
/// CholeskyQR (geqrf_cholesky_panels): CUDA, n wider than one panel, m >= 16 n.
/// GPUQR_CHOLQR_PANELS=0/1 overrides the backend part (measurements, tests).
bool cholesky_panels_preferred(const Context& ctx, std::int64_t m, std::int64_t n, int elem_bytes);
/// Its panel width (128; GPUQR_CHOLQR_PANEL_WIDTH for measurements) and block-reflector
/// width (two panels; GPUQR_CHOLQR_OUTER).
std::int64_t cholesky_panel_width(int elem_bytes);
std::int64_t cholesky_outer_width(int elem_bytes);

/// geqrf's form of an m x n matrix (m >= n) by panels of width `nb`, each factored by
/// CholeskyQR2 (shifted CholeskyQR3 where the condition estimate asks for it) with its
/// Householder vectors reconstructed (orhr_col, the signs folded into R). Panels are grouped
/// into blocks of `outer` columns (a multiple of nb): each panel is applied to the rest of
/// its block, the panels' T merged into the block's (T12 = -T1 V1^T V2 T2), and the block
/// applied to the trailing columns as one block reflector (V from `a` itself, its top made
/// explicit for the update and restored after). A panel that CholeskyQR rejects, and every
/// column after it, go to the blocked Householder QR (run_geqrf) once the block's finished
/// panels have been applied; `fallback_reason` (may be null) then says why. Output exactly as
/// geqrf's. Returns how many panels CholeskyQR factored.
template <class T>
std::int64_t geqrf_cholesky_panels(const Context& ctx, MatrixView<T> a, VectorView<T> tau,
                                   std::int64_t nb, std::int64_t outer,
                                   std::string* fallback_reason);

/// The block's second panel's merge T12 = -T1 V1^T V2 T2 without the product V1^T V2 over the
/// rows (geqrf_cholesky_panels): from the first panel's in-block update W = V1^T C and small
/// n x n products (see the driver), where kIdentityMergeRho and kIdentityMergeGamma allow
/// it. Taken by default for FP64 (identity_merge_wanted);
/// identity_merge_mode(0 / 1) forces it off / on (tests, measurements; -1: the rule), as
/// GPUQR_MERGE_IDENTITY=0/1 does; identity_merge_count() counts the merges it made.
bool identity_merge_wanted(int elem_bytes);
/// Whether geqrf_cholesky_panels runs its panels' CholeskyQR2 in single-pass form
/// (GPUQR_CHOLQR_PANEL_SINGLE_PASS) and with the first Gram matrix in TF32 as a preconditioner
/// (GPUQR_CHOLQR_PANEL_LOW_GRAM; certified, else redone in full precision): each env switch
/// 0/1 if set, else GPUQR_CHOLQR_PANEL_LEAN 0/1 for both, else the measured rule (FP64).
bool panel_option_wanted(const char* name, int elem_bytes);
void identity_merge_mode(int mode);
std::int64_t identity_merge_count();
/// The identity merge's bounds: ||R12||_F <= rho ||P||_F, where P is the second panel (b
/// columns) after the in-block update and R12 the b x b block above it (C = [R12; P]: with a
/// large R12 the identity's B = V1_b^T P is a difference of two terms of size ||C|| and keeps
/// their rounding), and ||P||_F ||R_1^{-1}||_F / b <= gamma (about 1 for a well-conditioned P;
/// R_1^{-1} multiplies that rounding). Measured (tests, FP64 2500 x 136, b = 64, entries
/// uniform in (-1, 1) plus a common shift s, ||R12|| / ||P|| ~ sqrt(3) s): the backward error
/// against the direct merge's was 1.0x at s = 0, 1.14x at s = 0.3, 2.2x at 0.5, 6.7x at 1.0.
inline constexpr double kIdentityMergeRho = 0.25;
inline constexpr double kIdentityMergeGamma = 4.0;

/// geqrf's form for the tall-skinny entry points' Householder method: geqrf_cholesky_panels
/// where cholesky_panels_preferred says so (info.cholesky_panels, info.fallback_reason),
/// else run_geqrf.
template <class T>
void run_householder_geqrf(const Context& ctx, MatrixView<T> a, VectorView<T> tau, TsqrInfo& info);

/// TSQR of `a` (m x n, m >= n >= 1) into an explicit Q (`q`, m x n, may be `a`) and R (`r`,
/// n x n); `leaf_rows` as TsqrTree's (0: chosen). Synchronizes before returning.
template <class T>
void tsqr_tree_explicit(const Context& ctx, MatrixView<const T> a, MatrixView<T> q,
                        MatrixView<T> r, std::int64_t leaf_rows);

/// The explicit-Q factorization after the checks: Q (m x n) into `q` (which may be `a`
/// itself; when it is not, `a` is left as it was), R (n x n, zeros below) into `r`.
template <class T>
TsqrInfo run_explicit(const Context& ctx, MatrixView<const T> a, MatrixView<T> q, MatrixView<T> r,
                      const TsqrOptions& options, const char* unchecked = nullptr);

/// As run_explicit in place (q = a, the caller's own copy of A), except that when
/// CholeskyQR2 runs in single-pass form Q is not formed: then q_implicit is set, `a` is left
/// as A, and `rinv` (n x n) holds R^{-1}, so that Q = A R^{-1}. Otherwise `a` holds Q.
template <class T>
TsqrInfo run_implicit(const Context& ctx, MatrixView<T> a, MatrixView<T> r, MatrixView<T> rinv,
                      const TsqrOptions& options, bool& q_implicit,
                      const char* unchecked = nullptr);

}  // namespace gpuqr::detail
