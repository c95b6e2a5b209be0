// UpdatableQR<T>: adding rows (blocked Householder on [R; U], tpqrt's shape) and removing rows
// (compress the rows' tail of Q with one Householder QR, then Givens rotations, applied for
// p >= 8 by blocks of positions as GEMMs), section 3.3 and 3.4 of Andrew & Dingle.
// Backend-agnostic: every step is a leaf of update_kernels.hpp,
// blocked_kernels.hpp or dense_kernels.hpp, enqueued in order on the context; the scratch is
// sized once per update before the loops. Adding rows neither allocates nor synchronizes in its
// loop; removing rows uploads each batch's row indices (a stream synchronization per batch of
// kRemoveBatch rows), which a later version should hoist out of the batch loop.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "gpuqr/update.hpp"
#include "src/core/blocked_kernels.hpp"
#include "src/core/dense_drivers.hpp"
#include "src/core/dense_kernels.hpp"
#include "src/core/dispatch.hpp"
#include "src/core/qr_update_internal.hpp"
#include "src/core/update_kernels.hpp"

namespace gpuqr {

namespace {

using detail::UpdateScratch;

/// Column block of the add-rows reduction (detail::update_block_width), at most n.
std::int64_t add_block_width(const Context& ctx, std::int64_t n) {
  return std::min(detail::update_block_width(ctx), n);
}

template <class T>
VectorView<T> sub(VectorView<T> v, std::int64_t offset, std::int64_t size) {
  return VectorView<T>(v.data() + offset, size, v.space(), v.device());
}

using detail::copy_into;

/// Removing rows: deletions of at least this many rows apply their Givens rotations as GEMMs
/// (apply_rotations_blocked); fewer keep the one-pass rotation kernel. GPUQR_REMOVE_BLOCKED=0
/// or 1 forces either (measurements).
constexpr std::int64_t kBlockedDeletionMinRows = 8;
/// Positions per block of the blocked application. Per block of w positions the GEMMs move
/// Q's (w + p) columns through a scratch twice and do 2 m (w + p)^2 flops: traffic per
/// position falls with w, flops per position (w + p)^2 / w are least at w = p and grow
/// slowly past it (+22% at w = 256, p = 100); 128 sits between for p = 20..100.
/// GPUQR_REMOVE_BLOCK overrides it (measurements).
constexpr std::int64_t kDeletionBlock = 128;

bool blocked_deletion(std::int64_t p) {
  static const int forced = [] {
    const char* text = std::getenv("GPUQR_REMOVE_BLOCKED");
    return text == nullptr ? -1 : std::atoi(text);
  }();
  return forced >= 0 ? forced != 0 : p >= kBlockedDeletionMinRows;
}

std::int64_t deletion_block() {
  static const std::int64_t nb = [] {
    const char* text = std::getenv("GPUQR_REMOVE_BLOCK");
    const long long v = text == nullptr ? 0 : std::atoll(text);
    return v > 0 ? static_cast<std::int64_t>(v) : kDeletionBlock;
  }();
  return nb;
}

/// GPUQR_REMOVE_ROTATIONS=0: each block's G by its own laset and rotation launch, as before
/// accumulate_deletion_rotations (read per call; a measurement knob, with the CUDA angle
/// kernel's of the same name).
bool per_block_accumulation() {
  const char* text = std::getenv("GPUQR_REMOVE_ROTATIONS");
  return text != nullptr && std::string(text) == "0";
}

/// Adding rows without Q: up to kAddRowsChunk rows always take the chained reduction
/// (add_rows_chained); more rows take it on CUDA (chunks of 16 rows in one launch, a wavefront
/// over chunks and tiles) and the blocked tpqrt shape on the CPU (the CPU twin is plain loops).
/// GPUQR_ADD_CHAINED=0 or 1 forces the blocked or the chained path for p > 16 (read per call;
/// a measurement knob).
bool chained_add(const Context& ctx, std::int64_t p) {
  if (p <= kernels::kAddRowsChunk) return true;
  const char* text = std::getenv("GPUQR_ADD_CHAINED");
  if (text != nullptr && *text != '\0') return std::atoi(text) != 0;
  return ctx.is_cuda();
}

/// One target of apply_rotations_blocked: lines of x with their p pivots in acc (lines: x's
/// rows when lines_are_rows, else its columns), as apply_deletion_rotations takes them;
/// `triangular`: line i has no entries beyond position i (R^T).
template <class T>
struct RotationTarget {
  MatrixView<T> x, acc;
  bool lines_are_rows = true;
  bool triangular = false;
};

/// Applies the rotations of deletion_rotations (c, s: n x p) to every target, with the result
/// of apply_deletion_rotations, by blocks of positions: the rotations of positions [j0, j1)
/// and all pivots, in the deletion's order, make the orthogonal G ((w + p) x (w + p),
/// w = j1 - j0; accumulate_deletion_rotations), then every line takes
/// [x_blk, acc] <- [x_blk, acc] G (GEMMs; G^T from the left for column lines). Blocks run
/// from the last positions to the first, as the deletion does; one G serves every target.
/// A triangular target's block [j0, j1) touches lines j0.. only (earlier lines hold zeros
/// there and in their pivots). The G's depend on c and s only, not on each other: they are
/// built `group` blocks per launch (each G alone is a chain of w p rotations per line on
/// w + p lines, too little work to fill the device), into g: (nb + p) x group (nb + p).
/// t: (nb + p) times the most lines of a target.
template <class T>
std::int64_t apply_rotations_blocked(const Context& ctx, MatrixView<const T> c,
                                     MatrixView<const T> s,
                                     const std::vector<RotationTarget<T>>& targets, std::int64_t nb,
                                     std::int64_t group, MatrixView<T> g, T* t) {
  const std::int64_t n = c.rows(), p = c.cols();
  const bool per_block = per_block_accumulation();
  std::int64_t launches = 0;
  for (std::int64_t b = 0; b * nb < n; ++b) {
    const std::int64_t j1 = n - b * nb;
    const std::int64_t j0 = std::max<std::int64_t>(0, j1 - nb), w = j1 - j0, wp = w + p;
    MatrixView<T> gm;
    if (per_block) {
      gm = g.block(0, 0, wp, wp);
      GPUQR_DISPATCH(ctx, laset, T(0), T(1), gm);
      GPUQR_DISPATCH(ctx, apply_deletion_rotations, c.block(j0, 0, w, p), s.block(j0, 0, w, p),
                     gm.block(0, 0, wp, w), gm.block(0, w, wp, p), true, false);
      launches += 2;
    } else {
      if (b % group == 0) {  // the G's of blocks b .. b + group - 1: positions [lo, j1)
        const std::int64_t lo = std::max<std::int64_t>(0, j1 - group * nb);
        GPUQR_DISPATCH(ctx, accumulate_deletion_rotations, c.block(lo, 0, j1 - lo, p),
                       s.block(lo, 0, j1 - lo, p), nb, g);
        ++launches;
      }
      gm = g.block(0, (b % group) * (nb + p), wp, wp);
    }
    const MatrixView<const T> g_top = gm.block(0, 0, w, wp), g_bottom = gm.block(w, 0, p, wp);
    for (const RotationTarget<T>& tg : targets) {
      const std::int64_t lines = tg.lines_are_rows ? tg.x.rows() : tg.x.cols();
      const std::int64_t l0 = tg.triangular ? j0 : 0, nl = lines - l0;
      if (nl <= 0) continue;
      const MemorySpace space = tg.x.space();
      const int device = tg.x.device();
      if (tg.lines_are_rows) {
        MatrixView<T> xb = tg.x.block(l0, j0, nl, w), pb = tg.acc.block(l0, 0, nl, p);
        MatrixView<T> tm(t, nl, wp, nl, space, device);
        GPUQR_DISPATCH(ctx, laset, T(0), T(0), tm);
        GPUQR_DISPATCH(ctx, multiply_add, Op::no_trans, Op::no_trans, T(1), MatrixView<const T>(xb),
                       g_top, tm);
        GPUQR_DISPATCH(ctx, multiply_add, Op::no_trans, Op::no_trans, T(1), MatrixView<const T>(pb),
                       g_bottom, tm);
        GPUQR_DISPATCH(ctx, copy, MatrixView<const T>(tm.block(0, 0, nl, w)), xb);
        GPUQR_DISPATCH(ctx, copy, MatrixView<const T>(tm.block(0, w, nl, p)), pb);
      } else {
        MatrixView<T> xb = tg.x.block(j0, l0, w, nl), pb = tg.acc.block(0, l0, p, nl);
        MatrixView<T> tm(t, wp, nl, wp, space, device);
        GPUQR_DISPATCH(ctx, laset, T(0), T(0), tm);
        GPUQR_DISPATCH(ctx, multiply_add, Op::trans, Op::no_trans, T(1), g_top,
                       MatrixView<const T>(xb), tm);
        GPUQR_DISPATCH(ctx, multiply_add, Op::trans, Op::no_trans, T(1), g_bottom,
                       MatrixView<const T>(pb), tm);
        GPUQR_DISPATCH(ctx, copy, MatrixView<const T>(tm.block(0, 0, w, nl)), xb);
        GPUQR_DISPATCH(ctx, copy, MatrixView<const T>(tm.block(w, 0, p, nl)), pb);
      }
      launches += 5;
    }
  }
  return launches;
}

}  // namespace

template <class T>
void UpdatableQR<T>::check_rows_block(std::int64_t k, MatrixView<const T> u,
                                      MatrixView<const T> e) const {
  const char* routine = "UpdatableQR::add_rows";
  GPUQR_CHECK_ARG(k >= 0 && k <= m_, std::string(routine) + ": position k = " +
                                         std::to_string(k) + " is outside 0.." +
                                         std::to_string(m_));
  GPUQR_CHECK_ARG(u.cols() == n_, std::string(routine) + ": U is " +
                                      detail::shape(u.rows(), u.cols()) + ", A~ has " +
                                      std::to_string(n_) + " columns");
  const bool e_ok = nrhs_ == 0 ? e.cols() == 0 : (e.rows() == u.rows() && e.cols() == nrhs_);
  GPUQR_CHECK_ARG(e_ok, std::string(routine) + ": e is " + detail::shape(e.rows(), e.cols()) +
                            ", expected " + detail::shape(u.rows(), nrhs_) +
                            " (U's rows x the right-hand sides)");
  if (u.space() == detail::space_of(ctx_)) detail::check_view(ctx_, u, "U", routine);
  if (e.space() == detail::space_of(ctx_) && !e.empty())
    detail::check_view(ctx_, e, "e", routine);
}

template <class T>
UpdateInfo UpdatableQR<T>::add_rows(std::int64_t k, MatrixView<const T> u,
                                    MatrixView<const T> e) {
  check_rows_block(k, u, e);
  const std::int64_t p = u.rows(), n = n_, m = m_, nrhs = nrhs_;
  UpdateInfo info;
  if (p == 0) return last_ = info;
  const std::int64_t nb = add_block_width(ctx_, n);
  const bool keep_q = q_mode_ != UpdateQ::none;
  // No Q: the chained reduction where chained_add says so (one launch on CUDA).
  const bool chained = !keep_q && chained_add(ctx_, p);
  const std::int64_t chain_flags = kernels::add_rows_chained_flags(n, nrhs, p);
  const std::int64_t mq = m + p;  // Q's rows after the update
  const std::size_t es = sizeof(T);
  auto bytes = [&](std::int64_t count) { return UpdateScratch::piece_bytes(count, es); };
  const std::size_t total =
      bytes(p * (n + nrhs)) + 2 * bytes((nb + p) * nb) + bytes(nb) + 2 * bytes(nb * nb) +
      bytes(32 * nb) + bytes(nb * std::max<std::int64_t>(std::max(n, nrhs), 1)) +
      (keep_q ? bytes(mq * nb) : 0) + (q_mode_ == UpdateQ::thin ? bytes(mq * p) : 0) +
      (chained ? bytes(kernels::add_rows_chained_scalars(n, p)) +
                     UpdateScratch::piece_bytes(chain_flags, sizeof(int))
               : 0);
  UpdateScratch scratch(ctx_, total);
  // U and e side by side (one leading dimension), so that one pass checks both.
  MatrixView<T> ue = scratch.matrix<T>(p, n + nrhs);
  MatrixView<T> uu = ue.block(0, 0, p, n);
  MatrixView<T> ee = ue.block(0, n, p, nrhs);
  MatrixView<T> s_buf = scratch.matrix<T>(nb + p, nb);
  MatrixView<T> v_buf = scratch.matrix<T>(nb + p, nb);
  VectorView<T> tau = scratch.vector<T>(nb);
  MatrixView<T> t_buf = scratch.matrix<T>(nb, nb);
  MatrixView<T> gram = scratch.matrix<T>(nb, nb);
  MatrixView<T> wi = scratch.matrix<T>(32, nb);
  MatrixView<T> w = scratch.matrix<T>(nb, std::max<std::int64_t>(std::max(n, nrhs), 1));
  MatrixView<T> wq = keep_q ? scratch.matrix<T>(mq, nb) : MatrixView<T>();
  MatrixView<T> bq_thin = q_mode_ == UpdateQ::thin ? scratch.matrix<T>(mq, p) : MatrixView<T>();

  // Inputs in, checked: nothing of the object has changed yet.
  copy_into<T>(ctx_, u, uu);
  copy_into<T>(ctx_, e, ee);
  // One pass over both (on CUDA one host round trip); where it fails, the one at fault is named.
  if (ctx_.check_finite() && !GPUQR_DISPATCH(ctx_, all_finite, MatrixView<const T>(ue))) {
    detail::check_finite<T>(ctx_, uu, "U", "UpdatableQR::add_rows");
    detail::check_finite<T>(ctx_, ee, "e", "UpdatableQR::add_rows");
  }

  reserve_rows(mq);
  std::int64_t launches = 0;
  const bool cuda = ctx_.is_cuda();
  // The new rows go to the bottom of Q's storage (the paper's permutation): Q grows to
  // [Q 0; 0 I] (full) or the thin Q gets zero rows and a scratch block B = [0; I] of p columns.
  m_ = mq;
  MatrixView<T> q = q_view();
  MatrixView<T> d = d_view();
  m_ = m;  // committed below, once everything is enqueued
  MatrixView<T> bq;
  if (q_mode_ == UpdateQ::full) {
    GPUQR_DISPATCH(ctx_, fill, q.block(m, 0, p, m), T(0));
    GPUQR_DISPATCH(ctx_, laset, T(0), T(0), q.block(0, m, m, p));
    GPUQR_DISPATCH(ctx_, laset, T(0), T(1), q.block(m, m, p, p));
    bq = q.block(0, m, mq, p);
    launches += 3;
  } else if (q_mode_ == UpdateQ::thin) {
    GPUQR_DISPATCH(ctx_, fill, q.block(m, 0, p, n), T(0));
    GPUQR_DISPATCH(ctx_, laset, T(0), T(0), bq_thin.block(0, 0, m, p));
    GPUQR_DISPATCH(ctx_, laset, T(0), T(1), bq_thin.block(m, 0, p, p));
    bq = bq_thin;
    launches += 3;
  }
  MatrixView<T> e_rows = d.block(m, 0, p, nrhs);  // d's new rows start as e
  if (nrhs > 0) {
    GPUQR_DISPATCH(ctx_, copy, MatrixView<const T>(ee), e_rows);
    ++launches;
  }
  MatrixView<T> r = r_view();
  if (chained) {
    VectorView<T> tau_all = scratch.vector<T>(kernels::add_rows_chained_scalars(n, p));
    VectorView<int> flags = scratch.vector<int>(chain_flags);
    GPUQR_DISPATCH(ctx_, add_rows_chained, r, uu, d.block(0, 0, n, nrhs), e_rows, tau_all, flags);
    launches += kernels::add_rows_chained_launches(p);
    info.blocks = 1;
  }
  for (std::int64_t j = 0; j < (chained ? 0 : n); j += nb) {
    const std::int64_t jb = std::min(nb, n - j), h = jb + p;
    // S = [R(j:j+jb, j:j+jb); U(:, j:j+jb)]: the triangle and the new rows, factored by inner
    // panels (the reflectors' top part stays the identity: the triangle has zeros below).
    MatrixView<T> s = s_buf.block(0, 0, h, jb);
    MatrixView<T> v = v_buf.block(0, 0, h, jb);
    MatrixView<T> t = t_buf.block(0, 0, jb, jb);
    GPUQR_DISPATCH(ctx_, copy_upper, MatrixView<const T>(r.block(j, j, jb, jb)), s.block(0, 0, jb, jb));
    GPUQR_DISPATCH(ctx_, copy, MatrixView<const T>(uu.block(0, j, p, jb)), s.block(jb, 0, p, jb));
    launches += 2;
    const std::int64_t inner = std::min<std::int64_t>(
        {32, jb, GPUQR_DISPATCH(ctx_, max_panel_width, static_cast<int>(es), h)});
    for (std::int64_t i = 0; i < jb; i += inner) {
      const std::int64_t ib = std::min(inner, jb - i);
      if (i > 0) {
        GPUQR_DISPATCH(ctx_, laset, T(0), T(0), v.block(0, i, i, ib));
        ++launches;
      }
      GPUQR_DISPATCH(ctx_, panel_qr, s.block(i, i, h - i, ib), sub(tau, i, ib),
                     v.block(i, i, h - i, ib), t.block(i, i, ib, ib));
      launches += detail::panel_qr_launches();
      if (i + ib < jb) {
        GPUQR_DISPATCH(ctx_, larfb, Side::left, Op::trans, MatrixView<const T>(v.block(i, i, h - i, ib)),
                       MatrixView<const T>(t.block(i, i, ib, ib)), s.block(i, i + ib, h - i, jb - i - ib),
                       wi.block(0, 0, ib, jb - i - ib));
        launches += detail::larfb_launches();
      }
    }
    GPUQR_DISPATCH(ctx_, larft_known_diagonal, MatrixView<const T>(v), VectorView<const T>(sub(tau, 0, jb)),
                   t, gram.block(0, 0, jb, jb), inner);
    GPUQR_DISPATCH(ctx_, copy_upper, MatrixView<const T>(s.block(0, 0, jb, jb)), r.block(j, j, jb, jb));
    launches += detail::larft_known_diagonal_launches(jb) + 1;
    // The block reflector H = I - [I; V_U] T [I; V_U]^T on the rest of [R; U], on [d; e], on Q.
    const MatrixView<const T> vu = v.block(jb, 0, p, jb);
    if (j + jb < n) {
      GPUQR_DISPATCH(ctx_, tpmqrt, Side::left, Op::trans, vu, MatrixView<const T>(t),
                     r.block(j, j + jb, jb, n - j - jb), uu.block(0, j + jb, p, n - j - jb),
                     w.block(0, 0, jb, n - j - jb));
      launches += 5;
    }
    if (nrhs > 0) {
      GPUQR_DISPATCH(ctx_, tpmqrt, Side::left, Op::trans, vu, MatrixView<const T>(t),
                     d.block(j, 0, jb, nrhs), e_rows, w.block(0, 0, jb, nrhs));
      launches += 5;
    }
    if (keep_q) {
      GPUQR_DISPATCH(ctx_, tpmqrt, Side::right, Op::no_trans, vu, MatrixView<const T>(t),
                     q.block(0, j, mq, jb), bq, wq.block(0, 0, mq, jb));
      launches += 5;
    }
    ++info.blocks;
  }
  m_ = mq;
  row_order_.insert(row_order_.begin() + k, static_cast<std::size_t>(p), 0);
  for (std::int64_t i = 0; i < p; ++i) row_order_[static_cast<std::size_t>(k + i)] = m + i;
  info.device_launches = cuda ? launches : 0;
  info.batches = 1;
  return last_ = info;
}

template <class T>
UpdateInfo UpdatableQR<T>::remove_rows(std::int64_t k, std::int64_t p) {
  const char* routine = "UpdatableQR::remove_rows";
  GPUQR_CHECK_ARG(q_mode_ == UpdateQ::full,
                  std::string(routine) + ": removing rows needs the full Q (UpdateQ::full); "
                      "this object keeps " + (q_mode_ == UpdateQ::thin ? "a thin Q" : "no Q") +
                      ": rebuild it from A~ with UpdateQ::full");
  GPUQR_CHECK_ARG(p >= 0 && k >= 0 && k + p <= m_,
                  std::string(routine) + ": rows " + std::to_string(k) + ".." +
                      std::to_string(k + p - 1) + " (k = " + std::to_string(k) + ", p = " +
                      std::to_string(p) + ") are not within the " + std::to_string(m_) +
                      " rows of A~");
  GPUQR_CHECK_ARG(m_ - p >= n_, std::string(routine) + ": removing " + std::to_string(p) +
                                    " of " + std::to_string(m_) + " rows leaves fewer than n = " +
                                    std::to_string(n_) + " rows (A~ would lose full column rank)");
  UpdateInfo info;
  for (std::int64_t done = 0; done < p; done += kRemoveBatch) {
    const UpdateInfo part = remove_batch(k, std::min(kRemoveBatch, p - done));
    info.device_launches += part.device_launches;
    info.rotations += part.rotations;
    info.batches += 1;
  }
  return last_ = info;
}

template <class T>
UpdateInfo UpdatableQR<T>::remove_batch(std::int64_t k, std::int64_t p) {
  const std::int64_t m = m_, n = n_, nrhs = nrhs_;
  // Host bookkeeping: the removed storage rows, and which storage rows and Q columns move to
  // close the gaps (the last p rows into removed slots; the last p columns into the p pivot
  // columns n..n+p-1, which the deletion retires).
  std::vector<std::int64_t> rows(row_order_.begin() + k, row_order_.begin() + k + p);
  std::vector<char> removed(static_cast<std::size_t>(m), 0);
  for (std::int64_t i : rows) removed[static_cast<std::size_t>(i)] = 1;
  std::vector<std::int64_t> row_from, row_to, col_from, col_to;
  for (std::int64_t i = m - p; i < m; ++i)
    if (!removed[static_cast<std::size_t>(i)]) row_from.push_back(i);
  for (std::int64_t i : rows)
    if (i < m - p) row_to.push_back(i);
  for (std::int64_t c = std::max(m - p, n + p); c < m; ++c) col_from.push_back(c);
  for (std::int64_t c = n; c < std::min(n + p, m - p); ++c) col_to.push_back(c);

  const std::size_t es = sizeof(T), is = sizeof(std::int64_t);
  auto bytes = [&](std::int64_t count, std::size_t elem) {
    return UpdateScratch::piece_bytes(count, elem);
  };
  const bool blocked = blocked_deletion(p);
  const std::int64_t nbd = std::max<std::int64_t>(1, std::min(deletion_block(), n));
  // The G's of the blocked application: `group` blocks' worth at a time, at most as many
  // elements as the GEMMs' scratch t (max(m, nrhs) x (nbd + p)), at least one block.
  const std::int64_t blocks = std::max<std::int64_t>(1, (n + nbd - 1) / nbd);
  const std::int64_t group = std::clamp<std::int64_t>(std::max(m, nrhs) / (nbd + p), 1,
                                                      std::min<std::int64_t>(blocks, 65535));
  const std::size_t blocked_bytes = blocked ? bytes((nbd + p) * (nbd + p) * group, es) +
                                                  bytes(std::max(m, nrhs) * (nbd + p), es) +
                                                  bytes(n * p, es)
                                            : 0;
  const std::size_t total = bytes((m - n) * p, es) + bytes(p, es) + bytes(p * (n + p), es) +
                            2 * bytes(n * p, es) + bytes(n * n, es) + bytes(p, is) + blocked_bytes +
                            2 * bytes(static_cast<std::int64_t>(row_from.size()), is) +
                            2 * bytes(static_cast<std::int64_t>(col_from.size()), is);
  UpdateScratch scratch(ctx_, total);
  MatrixView<T> y = scratch.matrix<T>(m - n, p);
  VectorView<T> tau = scratch.vector<T>(p);
  MatrixView<T> z = scratch.matrix<T>(p, n + p);
  MatrixView<T> c = scratch.matrix<T>(n, p);
  MatrixView<T> s = scratch.matrix<T>(n, p);
  MatrixView<T> rt = scratch.matrix<T>(n, n);
  const VectorView<const std::int64_t> rows_d = scratch.upload(rows);
  const VectorView<const std::int64_t> row_from_d = scratch.upload(row_from);
  const VectorView<const std::int64_t> row_to_d = scratch.upload(row_to);
  const VectorView<const std::int64_t> col_from_d = scratch.upload(col_from);
  const VectorView<const std::int64_t> col_to_d = scratch.upload(col_to);

  MatrixView<T> q = q_view();
  MatrixView<T> d = d_view();
  std::int64_t launches = 0;
  // 1. The rows' part in Q's last m - n columns (R's zero rows) into p columns: Householder QR
  //    of Y = Q(rows, n:m)^T, applied to Q(:, n:m) from the right and to d(n:m) from the left.
  GPUQR_DISPATCH(ctx_, gather_rows, MatrixView<const T>(q), rows_d, n, true, y);
  detail::run_geqrf_tall<T>(ctx_, y, tau);
  detail::run_ormqr<T>(ctx_, Side::right, Op::no_trans, y, tau, q.block(0, n, m, m - n));
  if (nrhs > 0)
    detail::run_ormqr<T>(ctx_, Side::left, Op::trans, y, tau, d.block(n, 0, m - n, nrhs));
  launches += 1 + detail::blocked_launches(p, true) +
              (nrhs > 0 ? 2 : 1) * detail::blocked_launches(p, false);
  // 2. Givens: zero the rows' part in the first n columns against pivot columns n..n+p-1.
  GPUQR_DISPATCH(ctx_, gather_rows, MatrixView<const T>(q), rows_d, std::int64_t{0}, false, z);
  GPUQR_DISPATCH(ctx_, deletion_rotations, z, c, s);
  const MatrixView<const T> cc = c, sc = s;
  if (blocked) {
    // The same rotations, in the same order per line, by blocks of positions as GEMMs.
    MatrixView<T> g = scratch.matrix<T>(nbd + p, (nbd + p) * group);
    T* t = scratch.vector<T>(std::max(m, nrhs) * (nbd + p)).data();
    MatrixView<T> pt = scratch.matrix<T>(n, p);  // R's pivot rows (transposed), from zero
    // R through its transpose: its lines (R's columns) as rows, lower triangular.
    GPUQR_DISPATCH(ctx_, transpose, MatrixView<const T>(r_view()), rt);
    GPUQR_DISPATCH(ctx_, laset, T(0), T(0), pt);
    std::vector<RotationTarget<T>> targets{{q.block(0, 0, m, n), q.block(0, n, m, p), true, false},
                                           {rt, pt, true, true}};
    if (nrhs > 0) targets.push_back({d.block(0, 0, n, nrhs), d.block(n, 0, p, nrhs), false, false});
    launches += 2 + apply_rotations_blocked<T>(ctx_, cc, sc, targets, nbd, group, g, t);
    GPUQR_DISPATCH(ctx_, transpose, MatrixView<const T>(rt), r_view());
    launches += 2 + 1;
  } else {
    GPUQR_DISPATCH(ctx_, apply_deletion_rotations, cc, sc, q.block(0, 0, m, n), q.block(0, n, m, p),
                   true, false);
    if (nrhs > 0) {
      GPUQR_DISPATCH(ctx_, apply_deletion_rotations, cc, sc, d.block(0, 0, n, nrhs),
                     d.block(n, 0, p, nrhs), false, false);
    }
    // R through its transpose, so that the threads' lines (R's columns) are contiguous.
    GPUQR_DISPATCH(ctx_, transpose, MatrixView<const T>(r_view()), rt);
    GPUQR_DISPATCH(ctx_, apply_deletion_rotations, cc, sc, rt, MatrixView<T>(), true, true);
    GPUQR_DISPATCH(ctx_, transpose, MatrixView<const T>(rt), r_view());
    launches += 2 + 1 + (nrhs > 0 ? 1 : 0) + 3;
  }
  // 3. Retire the removed rows and the pivot columns: move the last ones into their slots.
  GPUQR_DISPATCH(ctx_, move_lines, q, col_from_d, col_to_d, false);
  if (nrhs > 0) GPUQR_DISPATCH(ctx_, move_lines, d, col_from_d, col_to_d, true);
  GPUQR_DISPATCH(ctx_, move_lines, q.block(0, 0, m, m - p), row_from_d, row_to_d, true);
  launches += nrhs > 0 ? 3 : 2;

  std::vector<std::int64_t> remap(static_cast<std::size_t>(m));
  for (std::int64_t i = 0; i < m; ++i) remap[static_cast<std::size_t>(i)] = i;
  for (std::size_t i = 0; i < row_from.size(); ++i)
    remap[static_cast<std::size_t>(row_from[i])] = row_to[i];
  row_order_.erase(row_order_.begin() + k, row_order_.begin() + k + p);
  for (std::int64_t& i : row_order_) i = remap[static_cast<std::size_t>(i)];
  m_ = m - p;
  UpdateInfo info;
  info.device_launches = ctx_.is_cuda() ? launches : 0;
  info.rotations = n * p;
  info.batches = 1;
  return info;
}

template UpdateInfo UpdatableQR<float>::add_rows(std::int64_t, MatrixView<const float>,
                                                 MatrixView<const float>);
template UpdateInfo UpdatableQR<double>::add_rows(std::int64_t, MatrixView<const double>,
                                                  MatrixView<const double>);
template UpdateInfo UpdatableQR<float>::remove_rows(std::int64_t, std::int64_t);
template UpdateInfo UpdatableQR<double>::remove_rows(std::int64_t, std::int64_t);

}  // namespace gpuqr
