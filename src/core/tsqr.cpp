// The tall-skinny QR entry points of gpuqr/tsqr.hpp: method names, checks, the choice of
// `automatic`, tsqr_explicit and tsqr_geqrf. CholeskyQR2 and shifted CholeskyQR3 come from
// src/core/cholesky_qr.cpp; Householder QR (the reference and the fallback) from the dense
// drivers; the Householder form of an explicit Q from the orhr_col leaf.
#include "gpuqr/tsqr.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "src/core/blocked_kernels.hpp"
#include "src/core/blocked_qr.hpp"
#include "src/core/cholesky_qr.hpp"
#include "src/core/cholqr_kernels.hpp"
#include "src/core/dense_drivers.hpp"
#include "src/core/dense_kernels.hpp"
#include "src/core/dispatch.hpp"
#include "src/core/qrf_ah.hpp"
#include "src/core/tsqr_drivers.hpp"
#include "src/core/tsqr_tree.hpp"
#include "src/core/update_kernels.hpp"

namespace gpuqr {

const char* to_string(TsqrMethod method) {
  switch (method) {
    case TsqrMethod::automatic: return "automatic";
    case TsqrMethod::householder: return "householder";
    case TsqrMethod::qrf_ah: return "qrf_ah";
    case TsqrMethod::tsqr: return "tsqr";
    case TsqrMethod::cholesky_qr2: return "cholesky_qr2";
    case TsqrMethod::shifted_cholesky_qr3: return "shifted_cholesky_qr3";
  }
  return "?";
}

TsqrMethod parse_tsqr_method(const std::string& text) {
  if (text == "auto") return TsqrMethod::automatic;
  for (TsqrMethod m : {TsqrMethod::automatic, TsqrMethod::householder, TsqrMethod::qrf_ah,
                       TsqrMethod::tsqr, TsqrMethod::cholesky_qr2,
                       TsqrMethod::shifted_cholesky_qr3}) {
    if (text == to_string(m)) return m;
  }
  GPUQR_THROW(InvalidArgument, "unknown tall-skinny QR method '" + text +
                                   "': expected auto, automatic, householder, qrf_ah, tsqr, "
                                   "cholesky_qr2 or shifted_cholesky_qr3");
}

namespace detail {

namespace {

/// GPUQR_<NAME> as 0 or 1, else -1 (unset: the rule decides). Read at every call, so that one
/// process can measure both sides (A/B measurements, tests).
int env_switch(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return -1;
  return std::string(text) == "0" ? 0 : 1;
}

}  // namespace

bool tall_enough(std::int64_t m, std::int64_t n) { return m >= 4 * n; }

bool householder_preferred_for_geqrf(std::int64_t n, int elem_bytes) {
  // Measured on the H200 (m = 2^20, session 15, docs/PERF.md): geqrf's form by the blocked
  // Householder QR against CholeskyQR2 + orhr_col, FP64 n = 256 / 512 / 1024: 12.0 / 31.6 /
  // 93.1 ms against 11.0 / 39.0 / 129.9; FP32: 10.2 / 28.0 / 82.7 against 13.2 / 41.4 / 136.2.
  return n >= (elem_bytes == 8 ? 512 : 256);
}

bool householder_preferred_for_r(std::int64_t m, std::int64_t n, int elem_bytes) {
  // Measured on the H200 (session 16 run 11, docs/PERF.md), FP32 R alone with A borrowed,
  // `automatic` taking Householder QR (A copied into the object's own storage) against
  // CholeskyQR2 named, same run, ms: 2^22 x 1024 341 against 427, 2^22 x 512 113 against 119,
  // 2^20 x 1024 88.3 against 88.1, 2^20 x 512 31.7 against 28.6 (the object's m x n
  // allocation and copy weigh there). So from m n >= 2^31 elements. FP64 runs CholeskyQR2's
  // GEMMs on the tensor cores and keeps it everywhere.
  //
  // Session 20 (H100, run 1): with the outer panels by CholeskyQR (geqrf_cholesky_panels) the
  // Householder route is faster in FP32 from 2^28 elements: 2^20 x 1024 82.5 against 89.1 ms,
  // 2^20 x 512 25.7 against 28.4, 2^18 x 1024 22.9 against 23.9; not at 2^18 x 512 (8.2
  // against 7.8). FP64 keeps CholeskyQR2 (2^20 x 1024: 100 against 81: the copy of A and the
  // route's own time).
  //
  // Session 22 (H100, runs 1-2): FP32 CholeskyQR2's Gram matrices past 128 columns now run on
  // the TF32 tensor cores (3xTF32 with short chains, triangle_gemm.cu), and CholeskyQR2 wins
  // R alone everywhere measured: 2^20 x 1024 69.2 ms against 79.2, 2^20 x 512 22.7 against
  // 26.8, 2^22 x 1024 246 against 315 (chains of 2048 there). Householder QR only when forced.
  const int forced = env_switch("GPUQR_R_HOUSEHOLDER");  // measurements
  if (forced >= 0) return forced == 1;
  (void)m;
  (void)n;
  (void)elem_bytes;
  return false;
}

bool tsqr_preferred(std::int64_t m, std::int64_t n) {
  // Measured on the H200 (docs/PERF.md): the tree beats cuSOLVER's geqrf for n <= 32 on
  // tall shapes; for wider n its leaves are slower than the blocked Householder QR.
  return n <= 32 && m >= 64 * n;
}

template <class T>
void tsqr_tree_explicit(const Context& ctx, MatrixView<const T> a, MatrixView<T> q,
                        MatrixView<T> r, std::int64_t leaf_rows) {
  // The tree factors a copy of A in place (its leaves keep their reflectors there) and forms
  // Q from it into `q`, which may be A itself.
  Matrix<T> work(a.rows(), a.cols(), space_of(ctx), ctx.device());
  GPUQR_DISPATCH(ctx, copy, a, work.view());
  const TsqrTree<T> tree(ctx, work.view(), leaf_rows);
  tree.r(r);
  tree.form_q(q);
  ctx.synchronize();  // `work` and the tree's levels are freed on return
}

namespace {

bool is_cholesky(TsqrMethod m) {
  return m == TsqrMethod::cholesky_qr2 || m == TsqrMethod::shifted_cholesky_qr3;
}

/// The CholeskyQR methods to try, in order, for `options` on an m x n matrix.
std::vector<TsqrMethod> cholesky_attempts(const TsqrOptions& options, std::int64_t m,
                                          std::int64_t n) {
  if (is_cholesky(options.method)) return {options.method};
  if (options.method == TsqrMethod::automatic && n > 0 && tall_enough(m, n)) {
    return {TsqrMethod::cholesky_qr2, TsqrMethod::shifted_cholesky_qr3};
  }
  return {};
}

/// GPUQR_EXPLICIT_HOUSEHOLDER=1 (measurements): `automatic`'s explicit Q goes straight to
/// Householder QR.
bool explicit_skips_cholesky(const TsqrOptions& options) {
  return options.method == TsqrMethod::automatic && env_switch("GPUQR_EXPLICIT_HOUSEHOLDER") == 1;
}

}  // namespace

template <class T>
bool check_tall_skinny(const Context& ctx, MatrixView<const T> a, const TsqrOptions& options,
                       const char* routine, bool cholesky_first) {
  check_view(ctx, a, "A", routine);
  GPUQR_CHECK_ARG(a.rows() >= a.cols(), std::string(routine) + ": A is " +
                                            shape(a.rows(), a.cols()) +
                                            "; tall-skinny QR needs m >= n");
  GPUQR_CHECK_ARG(options.block >= 0, std::string(routine) + ": options.block = " +
                                          std::to_string(options.block) + " is negative");
  if (cholesky_first && ctx.check_finite() && !a.empty() &&
      !cholesky_attempts(options, a.rows(), a.cols()).empty()) {
    return true;  // CholeskyQR's first Gram matrix decides (cholesky_qr's `unchecked`)
  }
  check_finite<T>(ctx, a, "A", routine);
  return false;
}

namespace {

/// Tries the CholeskyQR methods for `options`; on success (or a kept rejected result) R is in
/// buf.prod, Q = buf.q_left buf.q_right, also written to `q` unless q is empty, and info
/// says which. With `implicit` set, a single-pass CholeskyQR2 leaves Q unwritten and sets
/// *implicit (Q = q_left q_right with q_left the input). Returns false when none was accepted:
/// then nothing was written, and info.fallback_reason says why.
/// `unchecked`: the routine whose NaN/Inf check of `a` was deferred to here (see
/// check_tall_skinny), or null; the first attempt's first Gram matrix settles it.
/// `accepted` (optional) receives the accepted attempt's outcome; `low_first` asks for the
/// mixed-precision first attempt whatever low_gram_first says.
template <class T>
bool try_cholesky(const Context& ctx, MatrixView<const T> a, MatrixView<T> q,
                  const TsqrOptions& options, TsqrBuffers<T>& buf, TsqrInfo& info,
                  bool* implicit = nullptr, const char* unchecked = nullptr,
                  CholeskyQrOutcome* accepted = nullptr, bool low_first = false) {
  const bool keep = is_cholesky(options.method) && !options.fallback;
  for (TsqrMethod method : cholesky_attempts(options, a.rows(), a.cols())) {
    const bool shifted = method == TsqrMethod::shifted_cholesky_qr3;
    buf = carve_tsqr_buffers<T>(ctx, a.rows(), a.cols(), shifted ? 2 : 1);
    // The single-pass form where Q stays implicit (TallSkinnyQR), or where Q = A R^{-1} is
    // one streamed pass (multiply_upper): with cuBLAS's GEMM for Q it was measured slower on
    // the H200 (explicit Q 1M x 64 FP64: 2.18 ms against 1.20; GPUQR_QPROD=0 restores that).
    //
    // Not above 128 columns: there the backend forms A X by block-column GEMMs (CUDA), the
    // single pass's second Gram matrix stores W = A R_1^{-1} anyway, and Q = A R^{-1} in
    // place goes through row chunks and copies; the two-step form writes Q = W R_2^{-1} out
    // of place instead. Measured on the H100 (session 21, docs/PERF.md; with the Gram
    // matrix by halves): explicit Q FP64 2^20 x 256 13.4 -> 10.0 ms, x 1024 124 -> 105-115.
    const bool q_streamed = implicit == nullptr && q.data() != nullptr && a.cols() <= 128 &&
                            upper_product_streamed<T>(ctx, a.rows(), a.cols());
    const MatrixView<T> q_out = implicit != nullptr ? MatrixView<T>() : q;
    const bool single_pass_ok = implicit != nullptr || q_streamed;
    CholeskyQrOutcome out;
    if (!shifted && (low_first || low_gram_first<T>(ctx, a.rows(), a.cols()))) {
      // Mixed precision first (the first Gram matrix a TF32 preconditioner); where its
      // certificate fails (an ill-conditioned A: the perturbation grows as kappa^2), nothing
      // was written and the same method runs again in full precision.
      out = cholesky_qr<T>(ctx, a, q_out, shifted, /*keep_rejected=*/false, buf, single_pass_ok,
                           unchecked, /*low_first=*/true);
      unchecked = nullptr;  // its trace was finite, so A is (else cholesky_qr threw)
    }
    if (!out.ok) {
      // A block-Jacobi attempt that failed its certificate is not repeated.
      out = cholesky_qr<T>(ctx, a, q_out, shifted, keep, buf, single_pass_ok, unchecked,
                           /*low_first=*/false, /*block_jacobi_ok=*/!out.block_jacobi);
      unchecked = nullptr;
    }
    if (!out.ok && out.block_jacobi) {  // nothing was written (unless kept): once more with R_1
      out = cholesky_qr<T>(ctx, a, q_out, shifted, keep, buf, single_pass_ok, nullptr,
                           /*low_first=*/false, /*block_jacobi_ok=*/false);
    }
    if (out.condition_estimate > 0) info.condition_estimate = out.condition_estimate;
    if (out.ok || keep) {
      if (accepted != nullptr) *accepted = out;
      info.method = method;
      info.orthogonality_certificate = out.last_offset;
      info.mixed_precision = out.low_first;
      info.block_jacobi = out.block_jacobi;
      if (!out.ok) info.fallback_reason = out.reason + " (returned anyway: fallback off)";
      if (implicit != nullptr && out.single_pass) {
        *implicit = true;
      } else if (implicit != nullptr && q.data() != nullptr) {
        multiply_upper<T>(ctx, buf.q_left, buf.q_right, q);
      }
      return true;
    }
    if (!info.fallback_reason.empty()) info.fallback_reason += "; ";
    info.fallback_reason += out.reason;
  }
  return false;
}

template <class T>
VectorView<T> as_vector(MatrixView<T> m) {
  return VectorView<T>(m.data(), m.rows(), m.space(), m.device());
}

}  // namespace

template <class T>
TsqrInfo run_explicit(const Context& ctx, MatrixView<const T> a, MatrixView<T> q, MatrixView<T> r,
                      const TsqrOptions& options, const char* unchecked) {
  TsqrInfo info;
  const std::int64_t m = a.rows(), n = a.cols();
  if (n == 0) return info;
  TsqrBuffers<T> buf;
  const bool skip_cholesky = explicit_skips_cholesky(options);
  if (!skip_cholesky && try_cholesky<T>(ctx, a, q, options, buf, info, nullptr, unchecked)) {
    GPUQR_DISPATCH(ctx, copy, MatrixView<const T>(buf.prod), r);
    return info;
  }
  if (options.method == TsqrMethod::tsqr ||
      (options.method == TsqrMethod::automatic && tsqr_preferred(m, n))) {
    info.method = TsqrMethod::tsqr;
    tsqr_tree_explicit<T>(ctx, a, q, r, options.block);
    return info;
  }
  // Householder QR (or QRF-AH): geqrf's form in q, R out, then Q formed in place by orgqr.
  info.method = options.method == TsqrMethod::qrf_ah ? TsqrMethod::qrf_ah
                                                     : TsqrMethod::householder;
  if (q.data() != a.data()) GPUQR_DISPATCH(ctx, copy, a, q);
  buf = carve_tsqr_buffers<T>(ctx, m, n, 0);
  VectorView<T> tau = buf.tau;
  Matrix<T> tau_store;
  if (info.method == TsqrMethod::qrf_ah) {
    info.panels_shrunk = run_qrf_ah<T>(ctx, q, tau, options.block);
  } else {
    if (cholesky_panels_preferred(ctx, m, n, static_cast<int>(sizeof(T)))) {
      // The panels' CholeskyQR carves the tall-skinny workspace again (and may grow it):
      // tau must not live there.
      tau_store = Matrix<T>(n, 1, space_of(ctx), ctx.device());
      tau = VectorView<T>(tau_store.data(), n, tau_store.space(), tau_store.device());
    }
    run_householder_geqrf<T>(ctx, q, tau, info);
  }
  GPUQR_DISPATCH(ctx, copy_upper, MatrixView<const T>(q.block(0, 0, n, n)), r);
  run_orgqr<T>(ctx, n, q, VectorView<const T>(tau));
  if (!tau_store.empty()) ctx.synchronize();  // tau_store is freed on return
  return info;
}

template <class T>
TsqrInfo run_implicit(const Context& ctx, MatrixView<T> a, MatrixView<T> r, MatrixView<T> rinv,
                      const TsqrOptions& options, bool& q_implicit, const char* unchecked) {
  q_implicit = false;
  TsqrInfo info;
  if (a.cols() == 0) return info;
  TsqrBuffers<T> buf;
  if (try_cholesky<T>(ctx, MatrixView<const T>(a), a, options, buf, info, &q_implicit, unchecked)) {
    GPUQR_DISPATCH(ctx, copy, MatrixView<const T>(buf.prod), r);
    if (q_implicit) GPUQR_DISPATCH(ctx, copy, MatrixView<const T>(buf.rinv_all), rinv);
    return info;
  }
  // Nothing was written: the other methods, in place.
  return run_explicit<T>(ctx, MatrixView<const T>(a), a, r, options);
}

template <class T>
bool run_borrowed(const Context& ctx, MatrixView<const T> a, MatrixView<T> r, MatrixView<T> rinv,
                  const TsqrOptions& options, TsqrInfo& info, const char* unchecked) {
  if (a.cols() == 0 || options.method == TsqrMethod::tsqr ||
      options.method == TsqrMethod::qrf_ah || options.method == TsqrMethod::householder) {
    return false;
  }
  TsqrBuffers<T> buf;
  bool implicit = false;
  TsqrInfo tried;
  if (!try_cholesky<T>(ctx, a, MatrixView<T>(), options, buf, tried, &implicit, unchecked) ||
      !implicit) {
    return false;  // nothing of the caller's was written; the caller copies A and starts over
  }
  info = tried;
  GPUQR_DISPATCH(ctx, copy, MatrixView<const T>(buf.prod), r);
  GPUQR_DISPATCH(ctx, copy, MatrixView<const T>(buf.rinv_all), rinv);
  return true;
}

namespace {

/// GPUQR_<NAME> as a positive integer, else `fallback` (measurements).
std::int64_t env_positive(const char* name, std::int64_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  const long long v = std::strtoll(text, nullptr, 10);
  return v >= 1 ? v : fallback;
}

}  // namespace

std::int64_t cholesky_panel_width(int elem_bytes) {
  (void)elem_bytes;
  // 128: the widest n that the one-pass Gram kernels (DMMA / 3xTF32) and the one-block
  // Cholesky (cholesky_small.cu) handle.
  return env_positive("GPUQR_CHOLQR_PANEL_WIDTH", 128);
}

std::int64_t cholesky_outer_width(int elem_bytes) {
  // Two panels per block reflector: the trailing update's GEMMs get an inner dimension of
  // 256 (with 128 the update C -= V W is near the memory bound in FP64).
  return env_positive("GPUQR_CHOLQR_OUTER", 2 * cholesky_panel_width(elem_bytes));
}

bool cholesky_panels_preferred(const Context& ctx, std::int64_t m, std::int64_t n, int elem_bytes) {
  const int forced = env_switch("GPUQR_CHOLQR_PANELS");
  const std::int64_t nb = cholesky_panel_width(elem_bytes);
  const bool shape_ok = n > nb && m >= 16 * n;
  // Forced on (measurements): any m >= n wider than one panel, square included.
  if (forced >= 0) return forced == 1 && n > nb && m >= n;
  return ctx.is_cuda() && shape_ok;
}

namespace {
std::atomic<int> merge_override{-1};  // identity_merge_mode()
std::atomic<std::int64_t> merges_by_identity{0};
}  // namespace

bool identity_merge_wanted(int elem_bytes) {
  const int mode = merge_override.load();
  if (mode >= 0) return mode == 1;
  const int forced = env_switch("GPUQR_MERGE_IDENTITY");  // measurements
  if (forced >= 0) return forced == 1;
  // FP64: the product V1^T V2 over the rows is a DGEMM of 2 m b^2 flops per block (0.8 ms at
  // m = 2^20, 3.1 ms at 2^22 on the H200, session 26). FP32 keeps larfb for the in-block
  // update, whose products run on the TF32 tensor cores there (larfb_tf32.cu), where the
  // identity's three separate products would be SGEMMs.
  return elem_bytes == 8;
}

void identity_merge_mode(int mode) { merge_override.store(mode); }

bool panel_option_wanted(const char* name, int elem_bytes) {
  const int own = env_switch(name);
  if (own >= 0) return own == 1;
  const int lean = env_switch("GPUQR_CHOLQR_PANEL_LEAN");
  if (lean >= 0) return lean == 1;
  // Session 26 (H200, run 5, FP64 geqrf's form x 1024): both on against both off, ms: 2^20
  // rows 66.3 against 68.2-68.3, 2^22 257.9 against 268.5-270.1 (at the power cap there, where
  // the W pass that the single-pass form skips and the FP64 Gram matrix's DMMA cost power).
  return elem_bytes == 8;
}

std::int64_t identity_merge_count() { return merges_by_identity.load(); }

template <class T>
std::int64_t geqrf_cholesky_panels(const Context& ctx, MatrixView<T> a, VectorView<T> tau,
                                   std::int64_t nb, std::int64_t outer,
                                   std::string* fallback_reason) {
  const std::int64_t m = a.rows(), n = a.cols(), k = std::min(m, n);
  if (k == 0) return 0;
  nb = std::max<std::int64_t>(1, std::min(nb, k));
  outer = std::max<std::int64_t>(1, outer / nb) * nb;  // whole panels
  // Look-ahead as in blocked_geqrf, the other way round: the panels (CholeskyQR, whose status
  // reads wait on the context's stream) stay on the main lane; a block's reflector is applied
  // on the second lane, first to the next block's columns (the main lane waits for that
  // alone), then to the rest while the main lane factors the next block.
  ContextImpl& main = ctx.impl();
  ContextImpl& side = lookahead_on(ctx) ? aux_lane(ctx) : main;
  // Carved once. Main lane: W of the in-block updates (outer x outer), the explicit top
  // (outer x outer), the merge's V^T V piece and product (outer x nb each). Second lane: W of
  // the trailing updates (outer x n), the saved and the explicit top (outer x outer each).
  // The blocks' T (outer x outer), two: block p's is read on the second lane while the main
  // lane builds block p + 1's.
  const auto round = [](std::int64_t e) { return (e + 31) / 32 * 32; };
  const std::int64_t sq = round(outer * outer);
  // The identity merge (main lane, nb x nb or nb x outer each): S = T1^T W of the in-block
  // update, -V1_b^T P, and one more piece of scratch.
  enum Piece { kWMain, kTopMain, kG, kX, kS, kB, kE, kWSide, kSave, kTopSide, kT0, kT1, kPieces };
  const std::int64_t sizes[kPieces] = {sq,
                                       sq,
                                       round(outer * nb),
                                       round(outer * nb),
                                       round(outer * nb),
                                       round(outer * nb),
                                       round(outer * nb),
                                       round(outer * std::max<std::int64_t>(n, 1)),
                                       sq,
                                       sq,
                                       sq,
                                       sq};
  std::int64_t total = 0;
  for (std::int64_t e : sizes) total += e;
  const MemorySpace space = space_of(ctx);
  const int dev = ctx.device();
  T* base = nullptr;
  std::vector<T> host;
  if (ctx.is_cuda()) {
    base = static_cast<T*>(cuda_workspace(main, static_cast<std::size_t>(total) * sizeof(T),
                                          ContextImpl::kDriverWorkspace));
  } else {
    host.resize(static_cast<std::size_t>(total));
    base = host.data();
  }
  T* pieces[kPieces];
  for (int i = 0; i < kPieces; ++i) {
    pieces[i] = base;
    base += sizes[i];
  }
  auto view = [&](Piece piece, std::int64_t rows, std::int64_t cols) {
    return MatrixView<T>(pieces[piece], rows, cols, std::max<std::int64_t>(rows, 1), space, dev);
  };
  auto tau_at = [&](std::int64_t j, std::int64_t len) {
    return VectorView<T>(tau.data() + j, len, tau.space(), tau.device());
  };
  // The explicit unit lower triangle over a's width x width block at (r, c) (its strictly
  // lower part kept), on `lane`, through `tmp`.
  auto explicit_top = [&](ContextImpl& lane, std::int64_t r, std::int64_t c, std::int64_t width,
                          MatrixView<T> tmp) {
    MatrixView<T> top = a.block(r, c, width, width);
    GPUQR_DISPATCH_ON(ctx, lane, form_v, MatrixView<const T>(top), tmp);
    GPUQR_DISPATCH_ON(ctx, lane, copy, MatrixView<const T>(tmp), top);
  };
  // On the second lane: the reflectors of columns j .. j + width (geqrf's form, T in `t`)
  // applied to a(j:m, c0:c1) for each range, then to a(j:m, c1:n) after signalling the main
  // lane (when split_at is between c0 and n). The top block is saved, made explicit for the
  // updates and restored.
  auto apply_block = [&](std::int64_t j, std::int64_t width, MatrixView<T> t, std::int64_t c0,
                         std::int64_t split_at) {
    if (c0 >= n) {
      lane_signal(ctx, side, main);
      return;
    }
    MatrixView<T> save = view(kSave, width, width);
    GPUQR_DISPATCH_ON(ctx, side, copy, MatrixView<const T>(a.block(j, j, width, width)), save);
    explicit_top(side, j, j, width, view(kTopSide, width, width));
    const MatrixView<const T> v(a.block(j, j, m - j, width));
    const MatrixView<const T> tw(t.block(0, 0, width, width));
    auto update = [&](std::int64_t c, std::int64_t d) {
      if (d <= c) return;
      GPUQR_DISPATCH_ON(ctx, side, larfb, Side::left, Op::trans, v, tw, a.block(j, c, m - j, d - c),
                        view(kWSide, width, d - c));
    };
    const std::int64_t mid = std::min(std::max(split_at, c0), n);
    update(c0, mid);
    lane_signal(ctx, side, main);  // the main lane's next block may start
    update(mid, n);
    GPUQR_DISPATCH_ON(ctx, side, copy, MatrixView<const T>(save), a.block(j, j, width, width));
  };
  // The block's second panel's T12 = -T1 (V1^T V2) T2 by the identity (identity_merge_wanted),
  // with V1 the first panel's reflectors, C its b columns before the in-block update, C' after,
  // R12 = C'(top b rows), P = C'(the rows below: the second panel's input), V1 = [V1_t; V1_b]:
  //   (I - V1 T1 V1^T) is orthogonal, so T1^{-1} + T1^{-T} = V1^T V1, and with S = T1^T V1^T C
  //   (the in-block update's own product) V1^T C' = V1^T C - V1^T V1 S = -T1^{-1} S, so
  //   B = V1_b^T P = -T1^{-1} S - V1_t^T R12 (b x b work at the first panel);
  //   the second panel's Q = P R_1^{-1} R_2^{-1} (CholeskyQR2) and orhr_col's V2 = (Q - [D; 0])
  //   U^{-1}, T2 = -U D L2^{-T} (D its signs, L2 its unit lower top), so U^{-1} = -D L2^{-T}
  //   T2^{-1} and T12 = T1 (V1_b^T Q D - V1_b(top b rows)^T) L2^{-T}, V1_b^T Q = B R_1^{-1}
  //   R_2^{-1}.
  // Only products of b x b matrices, instead of V1_b^T V2 over the rows. V1^T C' has the
  // absolute error of V1^T C (of order u ||V1|| ||C||) and R_1^{-1} multiplies it, where the
  // direct product errs by u ||V1|| ||W|| (W = P R_1^{-1}, ||W||_F ~ sqrt(b)); and B is the
  // difference of two terms of size ||C||. So the merge is taken only where ||R12||_F <=
  // kIdentityMergeRho ||P||_F (C is mostly P) and ||P||_F ||R_1^{-1}||_F / b <=
  // kIdentityMergeGamma (P well conditioned), with ||R12||_F read back after the in-block
  // update and ||P||_F^2 = trace(P^T P), ||R_1^{-1}||_F from CholeskyQR's status; and only
  // after CholeskyQR2 (two plain steps, or the single-pass form).
  const bool identity_on = identity_merge_wanted(static_cast<int>(sizeof(T)));
  const bool panel_single_pass =
      panel_option_wanted("GPUQR_CHOLQR_PANEL_SINGLE_PASS", static_cast<int>(sizeof(T)));
  const bool panel_low_gram =
      panel_option_wanted("GPUQR_CHOLQR_PANEL_LOW_GRAM", static_cast<int>(sizeof(T)));
  std::int64_t done = 0;
  int parity = 0;
  for (std::int64_t j = 0; j < k; j += outer, parity ^= 1) {
    const std::int64_t jb = std::min(outer, k - j), h = m - j;
    const MatrixView<T> tt = view(parity != 0 ? kT1 : kT0, outer, outer);
    if (jb > nb) GPUQR_DISPATCH_ON(ctx, main, fill, tt.block(0, 0, jb, jb), T(0));
    bool have_b = false;     // -B = -V1_b^T P of this block in kB
    double r12_norm2 = 0.0;  // ||R12||_F^2
    for (std::int64_t i = 0; i < jb; i += nb) {
      const std::int64_t ib = std::min(nb, jb - i);
      MatrixView<T> panel = a.block(j + i, j + i, h - i, ib);
      TsqrBuffers<T> buf;
      TsqrInfo tried;
      CholeskyQrOutcome accepted;
      // The panel's CholeskyQR2 in single-pass form where R_1 allows it (W = P R_1^{-1} never
      // stored: orhr_col_of_product reads the panel itself and writes V over it) and with its
      // first Gram matrix in TF32 (panel_option_wanted).
      bool single = false;
      if (!try_cholesky<T>(ctx, MatrixView<const T>(panel), MatrixView<T>(), TsqrOptions{}, buf,
                           tried, panel_single_pass ? &single : nullptr, nullptr, &accepted,
                           panel_low_gram)) {
        // Nothing of the panel was written: the block's finished panels go to the columns
        // after the block, then this panel and everything after it by Householder panels.
        if (fallback_reason != nullptr) {
          *fallback_reason = "columns " + std::to_string(j + i) + ".." + std::to_string(n - 1) +
                             " by Householder panels: " +
                             (tried.fallback_reason.empty() ? std::string("CholeskyQR not tried")
                                                            : tried.fallback_reason);
        }
        if (i > 0) {
          lane_signal(ctx, main, side);
          apply_block(j, i, tt, j + jb, n);
        }
        lane_signal(ctx, side, main);  // every update of the trailing columns is done
        run_geqrf<T>(ctx, a.block(j + i, j + i, h - i, n - j - i), tau_at(j + i, k - j - i));
        return done;
      }
      // V into the panel (its top block: L below the diagonal, U on and above it), T and
      // the signs D; R_geqrf = D R, written last by finish_geqrf.
      GPUQR_DISPATCH(ctx, orhr_col_of_product, buf.q_left, buf.q_right, panel, buf.t, buf.d,
                     buf.work);
      GPUQR_DISPATCH(ctx, copy, MatrixView<const T>(buf.t), tt.block(i, i, ib, ib));
      if (i > 0 || i + ib < jb) explicit_top(main, j + i, j + i, ib, view(kTopMain, ib, ib));
      bool identity = have_b && i == nb && tried.method == TsqrMethod::cholesky_qr2 &&
                      accepted.first_trace >= 0 && accepted.first_inverse_norm > 0;
      if (identity) {
        const double p_norm = std::sqrt(accepted.first_trace);
        const double rho = std::sqrt(r12_norm2) / p_norm;
        const double gamma = p_norm * accepted.first_inverse_norm / double(ib);
        identity = std::isfinite(rho) && std::isfinite(gamma) && rho <= kIdentityMergeRho &&
                   gamma <= kIdentityMergeGamma;
      }
      if (identity) {
        // Transposed: Y = (V1_b^T Q)^T = -X^T (-B)^T with X = R_1^{-1} R_2^{-1}, then
        // Mt = L2^{-1} (V1_b(top b rows) - D Y) = -(the bracket above, times L2^{-T})^T, and
        // T12 = -T1 Mt^T (tt's block was zeroed with the block).
        const MatrixView<const T> bneg(view(kB, i, ib));
        MatrixView<T> x = view(kE, ib, ib), y = view(kG, ib, i), dm = view(kS, ib, ib),
                      mt = view(kX, ib, i);
        if (accepted.single_pass) {  // Q = P X with X = q_right already
          GPUQR_DISPATCH(ctx, copy, MatrixView<const T>(buf.q_right), x);
        } else {  // Q = W q_right, W = P R_1^{-1}
          GPUQR_DISPATCH(ctx, multiply, Op::no_trans, MatrixView<const T>(buf.rinv[0]),
                         MatrixView<const T>(buf.q_right), x);
        }
        GPUQR_DISPATCH(ctx, fill, y, T(0));
        GPUQR_DISPATCH(ctx, multiply_add, Op::trans, Op::trans, T(-1), MatrixView<const T>(x), bneg,
                       y);
        GPUQR_DISPATCH(ctx, fill, dm, T(0));
        GPUQR_DISPATCH(ctx, copy,
                       MatrixView<const T>(buf.d.data(), 1, ib, 1, buf.d.space(), buf.d.device()),
                       MatrixView<T>(dm.data(), 1, ib, dm.ld() + 1, dm.space(), dm.device()));
        GPUQR_DISPATCH(ctx, copy, MatrixView<const T>(a.block(j + i, j, ib, i)), mt);
        GPUQR_DISPATCH(ctx, multiply_add, Op::no_trans, Op::no_trans, T(-1),
                       MatrixView<const T>(dm), MatrixView<const T>(y), mt);
        GPUQR_DISPATCH(ctx, trsm, Uplo::lower, Op::no_trans, Diag::unit,
                       MatrixView<const T>(a.block(j + i, j + i, ib, ib)), mt);
        GPUQR_DISPATCH(ctx, multiply_add, Op::no_trans, Op::trans, T(-1),
                       MatrixView<const T>(tt.block(0, 0, i, i)), MatrixView<const T>(mt),
                       tt.block(0, i, i, ib));
        merges_by_identity.fetch_add(1);
      } else if (i > 0) {
        // T's block beside it: -T_prev (V_prev^T V_i) T_i, V_i zero above its rows.
        MatrixView<T> g = view(kG, i, ib), x = view(kX, i, ib);
        GPUQR_DISPATCH(ctx, multiply, Op::trans, MatrixView<const T>(a.block(j + i, j, h - i, i)),
                       MatrixView<const T>(panel), g);
        GPUQR_DISPATCH(ctx, multiply, Op::no_trans, MatrixView<const T>(tt.block(0, 0, i, i)),
                       MatrixView<const T>(g), x);
        GPUQR_DISPATCH(ctx, multiply, Op::no_trans, MatrixView<const T>(x),
                       MatrixView<const T>(buf.t), tt.block(0, i, i, ib), -1.0);
      }
      if (i + ib < jb && identity_on && i == 0) {
        // larfb's three products by hand, keeping S = T1^T (V1^T C) for the next panel's merge.
        const MatrixView<const T> v1(panel);
        const std::int64_t rest = jb - ib, ib2 = std::min(nb, rest);
        MatrixView<T> c = a.block(j, j + ib, h, rest);
        MatrixView<T> w = view(kWMain, ib, rest), st = view(kS, ib, rest);
        GPUQR_DISPATCH(ctx, multiply, Op::trans, v1, MatrixView<const T>(c), w);
        GPUQR_DISPATCH(ctx, multiply, Op::trans, MatrixView<const T>(buf.t), MatrixView<const T>(w),
                       st);
        GPUQR_DISPATCH(ctx, multiply_add, Op::no_trans, Op::no_trans, T(-1), v1,
                       MatrixView<const T>(st), c);
        // -B = T1^{-1} S + V1_t^T R12 over the second panel's columns.
        MatrixView<T> bneg = view(kB, ib, ib2);
        const MatrixView<const T> r12(a.block(j, j + ib, ib, ib2));
        GPUQR_DISPATCH(ctx, copy, MatrixView<const T>(st.block(0, 0, ib, ib2)), bneg);
        GPUQR_DISPATCH(ctx, trsm, Uplo::upper, Op::no_trans, Diag::non_unit,
                       MatrixView<const T>(buf.t), bneg);
        GPUQR_DISPATCH(ctx, multiply_add, Op::trans, Op::no_trans, T(1),
                       MatrixView<const T>(a.block(j, j, ib, ib)), r12, bneg);
        // ||R12||_F for the merge's bound (synchronizes the main lane: the second panel's
        // CholeskyQR waits for its own status right after anyway).
        r12_norm2 = 0.0;
        for (double v : GPUQR_DISPATCH(ctx, column_norms, r12)) r12_norm2 += v * v;
        have_b = true;
      } else if (i + ib < jb) {
        GPUQR_DISPATCH(ctx, larfb, Side::left, Op::trans, MatrixView<const T>(panel),
                       MatrixView<const T>(buf.t), a.block(j + i, j + i + ib, h - i, jb - i - ib),
                       view(kWMain, ib, jb - i - ib));
      }
      GPUQR_DISPATCH(ctx, finish_geqrf, MatrixView<const T>(buf.prod), VectorView<const T>(buf.d),
                     MatrixView<const T>(buf.t), panel, tau_at(j + i, ib));
      ++done;
    }
    // The block's reflector on the second lane: the next block's columns first.
    lane_signal(ctx, main, side);
    apply_block(j, jb, tt, j + jb, j + jb + std::min(outer, k - j - jb));
  }
  lane_signal(ctx, side, main);  // later work on the context's stream sees every update
  return done;
}

template <class T>
void run_householder_geqrf(const Context& ctx, MatrixView<T> a, VectorView<T> tau, TsqrInfo& info) {
  if (cholesky_panels_preferred(ctx, a.rows(), a.cols(), static_cast<int>(sizeof(T)))) {
    const int bytes = static_cast<int>(sizeof(T));
    info.cholesky_panels =
        geqrf_cholesky_panels<T>(ctx, a, tau, cholesky_panel_width(bytes),
                                 cholesky_outer_width(bytes), &info.fallback_reason);
  } else {
    run_geqrf<T>(ctx, a, tau);
  }
}

}  // namespace detail

template <class T>
TsqrInfo tsqr_explicit(const Context& ctx, MatrixView<T> a, MatrixView<T> r,
                       const TsqrOptions& options) {
  const char* routine = "tsqr_explicit";
  detail::check_view(ctx, r, "R", routine);
  GPUQR_CHECK_ARG(r.rows() == a.cols() && r.cols() == a.cols(),
                  std::string(routine) + ": R is " + detail::shape(r.rows(), r.cols()) +
                      ", must be n x n = " + detail::shape(a.cols(), a.cols()));
  const bool deferred =
      detail::check_tall_skinny<T>(ctx, a, options, routine,
                                   /*cholesky_first=*/!detail::explicit_skips_cholesky(options));
  return detail::run_explicit<T>(ctx, a, a, r, options, deferred ? routine : nullptr);
}

template <class T>
TsqrInfo tsqr_geqrf(const Context& ctx, MatrixView<T> a, VectorView<T> tau,
                    const TsqrOptions& options) {
  const char* routine = "tsqr_geqrf";
  detail::check_view(ctx, tau, "tau", routine);
  GPUQR_CHECK_ARG(tau.size() >= a.cols(), std::string(routine) + ": tau has " +
                                              std::to_string(tau.size()) +
                                              " entries, needs n = " + std::to_string(a.cols()));
  const bool householder_first =
      options.method == TsqrMethod::automatic &&
      detail::householder_preferred_for_geqrf(a.cols(), static_cast<int>(sizeof(T)));
  const bool deferred = detail::check_tall_skinny<T>(ctx, a, options, routine,
                                                     /*cholesky_first=*/!householder_first);
  TsqrInfo info;
  if (a.cols() == 0) return info;
  detail::TsqrBuffers<T> buf;
  if (!householder_first && detail::try_cholesky<T>(ctx, a, MatrixView<T>(), options, buf, info,
                                                    nullptr, deferred ? routine : nullptr)) {
    // Q D = the first n columns of I - V T V^T, so A = Q R = (Q D)(D R): R_geqrf = D R.
    // Q = q_left q_right is never formed: orhr_col works from the two factors.
    GPUQR_DISPATCH(ctx, orhr_col_of_product, buf.q_left, buf.q_right, a, buf.t, buf.d,
                   buf.work);
    GPUQR_DISPATCH(ctx, finish_geqrf, MatrixView<const T>(buf.prod), VectorView<const T>(buf.d),
                   MatrixView<const T>(buf.t), a, tau);
    return info;
  }
  const std::int64_t m = a.rows(), n = a.cols();
  if (options.method == TsqrMethod::tsqr ||
      (options.method == TsqrMethod::automatic && detail::tsqr_preferred(m, n))) {
    // The tree's explicit Q, then the Householder vectors reconstructed from it.
    info.method = TsqrMethod::tsqr;
    const MemorySpace space = detail::space_of(ctx);
    Matrix<T> q(m, n, space, ctx.device()), r(n, n, space, ctx.device());
    detail::tsqr_tree_explicit<T>(ctx, MatrixView<const T>(a), q.view(), r.view(), options.block);
    buf = detail::carve_tsqr_buffers<T>(ctx, m, n, 0);
    GPUQR_DISPATCH(ctx, orhr_col, MatrixView<const T>(q.view()), a, buf.t, buf.d);
    GPUQR_DISPATCH(ctx, finish_geqrf, MatrixView<const T>(r.view()), VectorView<const T>(buf.d),
                   MatrixView<const T>(buf.t), a, tau);
    ctx.synchronize();  // q and r are freed on return
    return info;
  }
  if (options.method == TsqrMethod::qrf_ah) {
    info.method = TsqrMethod::qrf_ah;
    info.panels_shrunk = detail::run_qrf_ah<T>(ctx, a, tau, options.block);
    return info;
  }
  info.method = TsqrMethod::householder;
  detail::run_householder_geqrf<T>(ctx, a, tau, info);
  return info;
}

namespace detail {

namespace {
std::atomic<int> tall_mode{-1};  // run_geqrf_tall_mode
}  // namespace

void run_geqrf_tall_mode(int mode) { tall_mode.store(mode); }

template <class T>
void run_geqrf_tall(const Context& ctx, MatrixView<T> a, VectorView<T> tau) {
  static const bool env_on = [] {
    const char* text = std::getenv("GPUQR_TALL_INNER_QR");
    return text == nullptr || std::string(text) != "0";
  }();
  const std::int64_t m = a.rows(), n = a.cols();
  const int mode = tall_mode.load();
  if (mode >= 0) {
    if (mode == 1 && ctx.is_cuda() && n >= 1 && tall_enough(m, n)) {
      tsqr_geqrf<T>(ctx, a, tau);
    } else {
      run_geqrf<T>(ctx, a, tau);
    }
    return;
  }
  const bool on = env_on;
  // Measured on an H100 (gpuqr_update_columns_bench --only add-end, GPUQR_TALL_INNER_QR=0/1,
  // same run): it saved 0.3-1.1 ms on 6000..10000 x 200 blocks, but lost 0.1-0.3 ms on
  // 1000..2000 x 100..200 and 0.4-2.5 ms on 2000..5000 x 500..1000 (more flops, host waits).
  if (on && ctx.is_cuda() && n >= 128 && n <= 256 && m >= 30 * n) {
    tsqr_geqrf<T>(ctx, a, tau);
  } else {
    run_geqrf<T>(ctx, a, tau);
  }
}

}  // namespace detail

#define GPUQR_INSTANTIATE_TSQR_API(T)                                                             \
  template TsqrInfo tsqr_geqrf<T>(const Context&, MatrixView<T>, VectorView<T>,                   \
                                  const TsqrOptions&);                                            \
  template TsqrInfo tsqr_explicit<T>(const Context&, MatrixView<T>, MatrixView<T>,                \
                                     const TsqrOptions&);                                         \
  template void detail::run_geqrf_tall<T>(const Context&, MatrixView<T>, VectorView<T>);          \
  template bool detail::check_tall_skinny<T>(const Context&, MatrixView<const T>,                 \
                                             const TsqrOptions&, const char*, bool);              \
  template TsqrInfo detail::run_explicit<T>(const Context&, MatrixView<const T>, MatrixView<T>,   \
                                            MatrixView<T>, const TsqrOptions&, const char*);      \
  template TsqrInfo detail::run_implicit<T>(const Context&, MatrixView<T>, MatrixView<T>,         \
                                            MatrixView<T>, const TsqrOptions&, bool&,             \
                                            const char*);                                         \
  template bool detail::run_borrowed<T>(const Context&, MatrixView<const T>, MatrixView<T>,       \
                                        MatrixView<T>, const TsqrOptions&, TsqrInfo&,             \
                                        const char*);                                             \
  template void detail::tsqr_tree_explicit<T>(const Context&, MatrixView<const T>, MatrixView<T>, \
                                              MatrixView<T>, std::int64_t);                       \
  template std::int64_t detail::geqrf_cholesky_panels<T>(                                         \
      const Context&, MatrixView<T>, VectorView<T>, std::int64_t, std::int64_t, std::string*);    \
  template void detail::run_householder_geqrf<T>(const Context&, MatrixView<T>, VectorView<T>,    \
                                                 TsqrInfo&);

GPUQR_INSTANTIATE_TSQR_API(float)
GPUQR_INSTANTIATE_TSQR_API(double)

}  // namespace gpuqr
