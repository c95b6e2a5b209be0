// CholeskyQR2 and shifted CholeskyQR3 over the leaves of src/core/cholqr_kernels.hpp.
//
// One CholeskyQR step on W (m x n): G = W^T W (GEMM), R = chol(G + s I) and R^{-1} (n x n),
// W := W R^{-1} (GEMM with the explicit inverse). CholeskyQR2 is two steps (s = 0);
// when R_1 is well conditioned it runs in single-pass form: the second Gram matrix is
// (A R_1^{-1})^T (A R_1^{-1}) computed chunk by chunk without storing W, and Q = A R^{-1}
// by one GEMM or, on CUDA for n <= 128, one streamed pass that skips R^{-1}'s zero triangle
// (multiply_upper; 4 passes over the tall data instead of 6);
// shifted CholeskyQR3 is a shifted step followed by two plain ones. Every step is enqueued
// without waiting except for one read of the step's status (a few doubles) after its
// Cholesky (in single-pass form one read for both steps: the second is speculated): a
// breakdown ends the attempt there, and R's conditioning picks how R^{-1} is
// applied: by GEMM with the explicit inverse (fast, and accurate while R is well conditioned:
// fl(A X) errs by u |A| |X|, a residual of order kappa(R) u), else by TRSM (row-wise backward
// stable). Only after the last step is certified are Q (the last GEMM) and R = R_k ... R_1
// written, so a rejected attempt changes nothing.
#include "src/core/cholesky_qr.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

#include "src/core/cholqr_kernels.hpp"
#include "src/core/dense_drivers.hpp"
#include "src/core/dense_kernels.hpp"
#include "src/core/dispatch.hpp"

namespace gpuqr::detail {

namespace {
/// GPUQR_CHOLQR_SINGLE_PASS=0 turns the single-pass CholeskyQR2 off, for measurements.
bool single_pass_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("GPUQR_CHOLQR_SINGLE_PASS");
    return v == nullptr || std::string(v) != "0";
  }();
  return on;
}
/// GPUQR_CHOLQR_SPECULATE=0 turns the speculated second step off, for measurements.
bool speculation_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("GPUQR_CHOLQR_SPECULATE");
    return v == nullptr || std::string(v) != "0";
  }();
  return on;
}
/// GPUQR_CHOLQR_BLOCK_JACOBI (read on every call: tests, measurements): "0" never, "1" whenever
/// the shape allows and D is well defined (the prediction skipped: the certificate decides),
/// else the default rule.
int block_jacobi_mode() {
  const char* v = std::getenv("GPUQR_CHOLQR_BLOCK_JACOBI");
  if (v == nullptr || *v == '\0') return -1;
  return std::string(v) == "0" ? 0 : 1;
}
}  // namespace

bool block_jacobi_shape(std::int64_t m, std::int64_t n) {
  return n >= 2 * kJacobiBlock && m >= 4 * n && block_jacobi_mode() != 0;
}

double cholesky_shift_factor(std::int64_t m, std::int64_t n, double unit_roundoff) {
  return 11.0 * (double(m) * double(n) + double(n) * double(n + 1)) * unit_roundoff;
}

template <class T>
TsqrBuffers<T> carve_tsqr_buffers(const Context& ctx, std::int64_t m, std::int64_t n,
                                  int work_matrices) {
  const std::int64_t n1 = std::max<std::int64_t>(n, 1), m1 = std::max<std::int64_t>(m, 1);
  auto round = [](std::size_t bytes) { return (bytes + 255) / 256 * 256; };
  const std::size_t mat = round(std::size_t(m1) * std::size_t(n1) * sizeof(T));
  const std::size_t sq = round(std::size_t(n1) * std::size_t(n1) * sizeof(T));
  const std::size_t vec = round(std::size_t(n1) * sizeof(T));
  const std::size_t stat = round(kStatusSlots * kStatusSize * sizeof(double));
  const std::size_t total = std::size_t(work_matrices) * mat + 9 * sq + 2 * vec + stat;
  TsqrBuffers<T> buf;
  char* base = nullptr;
  if (ctx.is_cuda()) {
    base = static_cast<char*>(
        cuda_workspace(ctx.impl(), total, ContextImpl::kTallSkinnyWorkspace));
  } else {
    buf.host.assign(total / sizeof(double) + 1, 0.0);
    base = reinterpret_cast<char*>(buf.host.data());
  }
  const MemorySpace space = space_of(ctx);
  const int dev = ctx.device();
  char* p = base;
  auto take_matrix = [&](std::int64_t rows, std::size_t bytes) {
    MatrixView<T> v(reinterpret_cast<T*>(p), rows, n, std::max<std::int64_t>(rows, 1), space,
                    dev);
    p += bytes;
    return v;
  };
  for (int i = 0; i < work_matrices; ++i) buf.w[i] = take_matrix(m, mat);
  for (auto& r : buf.r) r = take_matrix(n, sq);
  for (auto& r : buf.rinv) r = take_matrix(n, sq);
  buf.rinv_all = take_matrix(n, sq);
  buf.work = take_matrix(n, sq);
  buf.prod = take_matrix(n, sq);
  buf.t = take_matrix(n, sq);
  buf.d = VectorView<T>(reinterpret_cast<T*>(p), n, space, dev);
  p += vec;
  buf.tau = VectorView<T>(reinterpret_cast<T*>(p), n, space, dev);
  p += vec;
  buf.status =
      VectorView<double>(reinterpret_cast<double*>(p), kStatusSlots * kStatusSize, space, dev);
  return buf;
}

namespace {

/// The status vectors of all steps on the host (synchronizes on CUDA: the one wait).
std::vector<double> read_status(const Context& ctx, VectorView<double> status) {
  std::vector<double> host(static_cast<std::size_t>(status.size()));
  if (ctx.is_cuda()) {
    ctx.synchronize();  // the statuses are written by work queued on the stream
    copy_2d(host.data(), status.size(), MemorySpace::host, status.data(), status.size(),
            MemorySpace::device, status.size(), 1, sizeof(double));
  } else {
    std::copy(status.data(), status.data() + status.size(), host.begin());
  }
  return host;
}

VectorView<double> step_status(VectorView<double> all, int step) {
  return VectorView<double>(all.data() + step * kStatusSize, kStatusSize, all.space(),
                            all.device());
}

/// Slots first .. first + count - 1 of the status vector, read at once.
std::vector<double> read_slots(const Context& ctx, VectorView<double> all, int first, int count) {
  return read_status(ctx, VectorView<double>(all.data() + first * kStatusSize, count * kStatusSize,
                                             all.space(), all.device()));
}

/// Block-Jacobi preconditioner from the first Gram matrix G (buf.r[0], not yet factored): D in
/// buf.r[2] and D^{-1} in buf.t, the Cholesky factor of G's block diagonal (blocks of
/// kJacobiBlock; zeros elsewhere, exactly: potrf and the triangular inverse of a block
/// diagonal matrix keep its zeros), its status in slot kSlotJacobiFactor; and the prediction
/// of (A D^{-1})^T (A D^{-1}) = D^{-T} G D^{-1} in buf.work, whose status (its row sum) goes
/// to slot kSlotJacobiPredicted. buf.prod is scratch. n x n work only: a few ms at n = 1024.
template <class T>
void prepare_block_jacobi(const Context& ctx, TsqrBuffers<T>& buf, std::int64_t n) {
  GPUQR_DISPATCH(ctx, fill, buf.r[2], T(0));
  for (std::int64_t j0 = 0; j0 < n; j0 += kJacobiBlock) {
    const std::int64_t jb = std::min(kJacobiBlock, n - j0);
    GPUQR_DISPATCH(ctx, copy, MatrixView<const T>(buf.r[0].block(j0, j0, jb, jb)),
                   buf.r[2].block(j0, j0, jb, jb));
  }
  GPUQR_DISPATCH(ctx, cholesky_inverse, buf.r[2], buf.t, 0.0,
                 step_status(buf.status, kSlotJacobiFactor));
  GPUQR_DISPATCH(ctx, multiply, Op::trans, MatrixView<const T>(buf.t),
                 MatrixView<const T>(buf.r[0]), buf.prod);
  GPUQR_DISPATCH(ctx, multiply, Op::no_trans, MatrixView<const T>(buf.prod),
                 MatrixView<const T>(buf.t), buf.work);
  GPUQR_DISPATCH(ctx, gram_status, MatrixView<const T>(buf.work),
                 step_status(buf.status, kSlotJacobiPredicted));
}

/// Whether block-Jacobi is taken: D well defined and (unless forced by the knob) the
/// predicted row sum within kJacobiPredicted.
bool block_jacobi_accepts(const std::vector<double>& jacobi) {
  const double* d = jacobi.data();
  const double* g = jacobi.data() + kStatusSize;
  if (d[kStatusBreakdown] != 0.0) return false;
  return block_jacobi_mode() == 1 || g[kStatusRowSum] <= kJacobiPredicted;
}

std::string fmt(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", v);
  return text;
}

}  // namespace

template <class T>
bool upper_product_streamed(const Context& ctx, std::int64_t m, std::int64_t n) {
  return GPUQR_DISPATCH(ctx, tall_times_upper_wanted<T>, m, n);
}

template <class T>
void multiply_upper(const Context& ctx, MatrixView<const T> left, MatrixView<const T> x,
                    MatrixView<T> q) {
  const bool in_place = q.data() == left.data();
  if (upper_product_streamed<T>(ctx, left.rows(), left.cols())) {
    GPUQR_DISPATCH(ctx, tall_times_upper, in_place ? MatrixView<const T>(q) : left, x, q);
  } else if (in_place) {
    GPUQR_DISPATCH(ctx, multiply_in_place, q, x);
  } else {
    GPUQR_DISPATCH(ctx, multiply, Op::no_trans, left, x, q);
  }
}

template <class T>
bool low_gram_first(const Context& ctx, std::int64_t m, std::int64_t n) {
  const char* v = std::getenv("GPUQR_CHOLQR_LOW_GRAM");
  if (v != nullptr && *v != '\0') return std::string(v) != "0";
  return GPUQR_DISPATCH(ctx, gram_low_wanted<T>, m, n);
}

template <class T>
CholeskyQrOutcome cholesky_qr(const Context& ctx, MatrixView<const T> a, MatrixView<T> q,
                              bool shifted, bool keep_rejected, TsqrBuffers<T>& buf,
                              bool single_pass_ok, const char* unchecked, bool low_first,
                              bool block_jacobi_ok) {
  const std::int64_t m = a.rows(), n = a.cols();
  const int steps = shifted ? 3 : 2;
  const double unit_roundoff = std::numeric_limits<T>::epsilon() / 2;
  const std::string method = shifted ? "shifted CholeskyQR3" : "CholeskyQR2";
  CholeskyQrOutcome outcome;
  double estimate = 1.0;
  MatrixView<const T> in = a;
  // CholeskyQR2 in single-pass form, speculated: step 2's Gram matrix and Cholesky factor are
  // enqueued before step 1's status is read, so that one wait covers both steps (on CUDA the
  // GPU does not idle through a host round trip). Step 2 reads only R_1^{-1} and writes only
  // buf.r[1], buf.rinv[1] and its status; when step 1 rules the single pass out (a breakdown,
  // or R_1 too ill-conditioned) the loop redoes step 2 the other way over them.
  const bool single_pass_allowed = !shifted && single_pass_ok && single_pass_enabled();
  // Block-Jacobi preconditioning (see the header): prepared with step 1, chosen after its one
  // read; not speculated past.
  const bool jacobi_try = !shifted && block_jacobi_ok && block_jacobi_shape(m, n);
  const bool speculate = single_pass_allowed && speculation_enabled() && !jacobi_try;
  std::vector<double> prefetched;  // step 2's status, read with step 1's
  std::vector<double> jacobi;      // slots kSlotJacobiFactor and kSlotJacobiPredicted
  double first_kappa_f = 0.0;      // ||R_1||_F ||R_1^{-1}||_F
  for (int s = 0; s < steps; ++s) {
    const bool done = s == 1 && outcome.single_pass && !prefetched.empty();
    if (done) {
      // Enqueued with step 1 (below).
    } else if (outcome.single_pass) {
      // G = (A R_1^{-1})^T (A R_1^{-1}) in one read of A; W is not kept.
      GPUQR_DISPATCH(ctx, gram_of_upper_product, a, MatrixView<const T>(buf.rinv[0]), buf.r[s]);
    } else if (s == 0 && low_first && !shifted && GPUQR_DISPATCH(ctx, gram_low, in, buf.r[0])) {
      outcome.low_first = true;  // a preconditioner: step 2 is in full precision
    } else {
      GPUQR_DISPATCH(ctx, gram, in, buf.r[s]);
    }
    if (s == 0 && jacobi_try) prepare_block_jacobi<T>(ctx, buf, n);
    // Block-Jacobi's certificate is the row sum of W^T W - I (the factorization overwrites it).
    if (s == 1 && outcome.block_jacobi)
      GPUQR_DISPATCH(ctx, gram_status, MatrixView<const T>(buf.r[1]),
                     step_status(buf.status, kSlotLastGram));
    const double shift = (shifted && s == 0) ? cholesky_shift_factor(m, n, unit_roundoff) : 0.0;
    if (!done)
      GPUQR_DISPATCH(ctx, cholesky_inverse, buf.r[s], buf.rinv[s % 2], shift,
                     step_status(buf.status, s));
    // One wait per step (per two when speculating): a breakdown ends the attempt early, and
    // R's conditioning decides how R^{-1} is applied.
    std::vector<double> x;
    if (done) {
      x = prefetched;
    } else if (s == 0 && speculate) {
      GPUQR_DISPATCH(ctx, gram_of_upper_product, a, MatrixView<const T>(buf.rinv[0]), buf.r[1]);
      GPUQR_DISPATCH(ctx, cholesky_inverse, buf.r[1], buf.rinv[1], 0.0, step_status(buf.status, 1));
      const std::vector<double> both =
          read_status(ctx, VectorView<double>(buf.status.data(), 2 * kStatusSize,
                                              buf.status.space(), buf.status.device()));
      x.assign(both.begin(), both.begin() + kStatusSize);
      prefetched.assign(both.begin() + kStatusSize, both.end());
    } else if (s == 0 && jacobi_try) {
      const std::vector<double> all = read_slots(ctx, buf.status, 0, kSlotJacobiPredicted + 1);
      x.assign(all.begin(), all.begin() + kStatusSize);
      jacobi.assign(all.begin() + kSlotJacobiFactor * kStatusSize, all.end());
    } else if (s == 1 && outcome.block_jacobi) {
      const std::vector<double> all = read_slots(ctx, buf.status, 1, kSlotLastGram);
      x.assign(all.begin(), all.begin() + kStatusSize);
      outcome.last_row_sum = all[(kSlotLastGram - 1) * kStatusSize + kStatusRowSum];
    } else {
      x = read_status(ctx, step_status(buf.status, s));
    }
    if (s == 0 && unchecked != nullptr && !std::isfinite(x[kStatusTrace])) {
      check_finite<T>(ctx, a, "A", unchecked);  // throws unless an overflow made it so
    }
    if (x[kStatusBreakdown] != 0.0 && outcome.reason.empty()) {
      const auto col = static_cast<std::int64_t>(x[kStatusBreakdown]);
      outcome.reason = method + " step " + std::to_string(s + 1) +
                       ": the Cholesky factorization of the Gram matrix broke down " +
                       (col > n ? std::string("(R is numerically singular)")
                                : "at column " + std::to_string(col - 1));
      if (!keep_rejected) return outcome;
    }
    if (s == 0) {
      outcome.first_trace = x[kStatusTrace];
      outcome.first_inverse_norm = x[kStatusInverseNorm];
    }
    const double norm_r = std::sqrt(x[kStatusTrace] + double(n) * x[kStatusShift]);
    const double kappa_f = norm_r * x[kStatusInverseNorm];
    const double ratio = x[kStatusMinDiag] > 0 ? x[kStatusMaxDiag] / x[kStatusMinDiag]
                                               : std::numeric_limits<double>::infinity();
    estimate *= std::max({1.0, ratio, kappa_f / double(n)});
    if (s == 0) first_kappa_f = kappa_f;
    if (s + 1 == steps) {
      outcome.last_offset = x[kStatusOffset];
      break;
    }
    if (s == 0 && jacobi_try && x[kStatusBreakdown] == 0.0 && block_jacobi_accepts(jacobi)) {
      // W = A D^{-1}, per diagonal block (on CUDA the streamed pass of 128 columns), by the
      // explicit inverse or TRSM as for R_1 (D's own kappa_F); D and D^{-1} take R_1's
      // places, so R = R_2 D and Q = W R_2^{-1} (or A (D^{-1} R_2^{-1})).
      std::swap(buf.r[0], buf.r[2]);
      std::swap(buf.rinv[0], buf.t);
      outcome.block_jacobi = true;
      const double* d = jacobi.data();
      const bool by_gemm =
          std::sqrt(d[kStatusTrace]) * d[kStatusInverseNorm] / std::sqrt(double(n)) <=
          kGemmCondition;
      MatrixView<T> w = buf.w[0];
      for (std::int64_t j0 = 0; j0 < n; j0 += kJacobiBlock) {
        const std::int64_t jb = std::min(kJacobiBlock, n - j0);
        const MatrixView<const T> a_j = a.block(0, j0, m, jb);
        MatrixView<T> w_j = w.block(0, j0, m, jb);
        if (by_gemm) {
          multiply_upper<T>(ctx, a_j, MatrixView<const T>(buf.rinv[0].block(j0, j0, jb, jb)), w_j);
        } else {
          GPUQR_DISPATCH(ctx, copy, a_j, w_j);
          GPUQR_DISPATCH(ctx, trsm_right_upper, MatrixView<const T>(buf.r[0].block(j0, j0, jb, jb)),
                         w_j);
        }
      }
      in = w;
      continue;
    }
    if (s == 0 && single_pass_allowed && x[kStatusBreakdown] == 0.0 &&
        kappa_f / std::sqrt(double(n)) <= kSinglePassCondition) {
      outcome.single_pass = true;
      continue;
    }
    MatrixView<T> out = buf.w[s % 2];
    if (kappa_f / std::sqrt(double(n)) <= kGemmCondition) {
      multiply_upper<T>(ctx, in, MatrixView<const T>(buf.rinv[s % 2]), out);
    } else {
      GPUQR_DISPATCH(ctx, copy, in, out);
      GPUQR_DISPATCH(ctx, trsm_right_upper, MatrixView<const T>(buf.r[s]), out);
    }
    in = out;
  }
  if (outcome.reason.empty()) outcome.condition_estimate = estimate;
  const bool certified = outcome.last_offset <= kCertificateOffset ||
                         (outcome.block_jacobi && outcome.last_row_sum <= kJacobiCertificate);
  if (outcome.reason.empty() && !certified) {
    outcome.reason = method + (outcome.block_jacobi ? " (block-Jacobi preconditioned)" : "") +
                     ": the last step's input is not orthogonal enough to certify the result "
                     "(||W^T W - I||_F = " +
                     fmt(outcome.last_offset) + " > " + fmt(kCertificateOffset) +
                     (outcome.block_jacobi ? ", its row sum " + fmt(outcome.last_row_sum) + " > " +
                                                 fmt(kJacobiCertificate)
                                           : std::string()) +
                     ")";
  }
  if (!outcome.reason.empty() && !keep_rejected) return outcome;
  // Accepted (or kept on request): Q = W R_last^{-1} (single pass: A R_1^{-1} R_2^{-1}),
  // R = R_last ... R_1 (products of upper triangles).
  // Block-Jacobi, where Q may stay implicit: Q = A (D^{-1} R_2^{-1}) by the single pass's rule.
  if (outcome.block_jacobi && single_pass_allowed &&
      first_kappa_f / std::sqrt(double(n)) <= kSinglePassCondition)
    outcome.single_pass = true;
  if (outcome.single_pass) {
    GPUQR_DISPATCH(ctx, multiply, Op::no_trans, MatrixView<const T>(buf.rinv[0]),
                   MatrixView<const T>(buf.rinv[1]), buf.rinv_all);
    buf.q_left = a;
    buf.q_right = buf.rinv_all;
  } else {
    buf.q_left = in;
    buf.q_right = buf.rinv[(steps - 1) % 2];
  }
  if (q.data() != nullptr) multiply_upper<T>(ctx, buf.q_left, buf.q_right, q);
  if (shifted) {
    GPUQR_DISPATCH(ctx, multiply, Op::no_trans, MatrixView<const T>(buf.r[2]),
                   MatrixView<const T>(buf.r[1]), buf.t);
    GPUQR_DISPATCH(ctx, multiply, Op::no_trans, MatrixView<const T>(buf.t),
                   MatrixView<const T>(buf.r[0]), buf.prod);
  } else {
    GPUQR_DISPATCH(ctx, multiply, Op::no_trans, MatrixView<const T>(buf.r[1]),
                   MatrixView<const T>(buf.r[0]), buf.prod);
  }
  outcome.ok = outcome.reason.empty();
  return outcome;
}

#define GPUQR_INSTANTIATE_CHOLESKY_QR(T)                                                          \
  template TsqrBuffers<T> carve_tsqr_buffers<T>(const Context&, std::int64_t, std::int64_t, int); \
  template CholeskyQrOutcome cholesky_qr<T>(const Context&, MatrixView<const T>, MatrixView<T>,   \
                                            bool, bool, TsqrBuffers<T>&, bool, const char*, bool, \
                                            bool);                                                \
  template bool low_gram_first<T>(const Context&, std::int64_t, std::int64_t);                    \
  template bool upper_product_streamed<T>(const Context&, std::int64_t, std::int64_t);            \
  template void multiply_upper<T>(const Context&, MatrixView<const T>, MatrixView<const T>,       \
                                  MatrixView<T>);

GPUQR_INSTANTIATE_CHOLESKY_QR(float)
GPUQR_INSTANTIATE_CHOLESKY_QR(double)

}  // namespace gpuqr::detail
