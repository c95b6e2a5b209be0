// Blocked Householder QR, ormqr and orgqr in compact WY form (see blocked_qr.hpp), and
// wy_geqrf: Kerr, Campbell & Richards' variant in W/Y form that forms the full Q as it goes.
// Backend-agnostic: every operation is a leaf of src/core/blocked_kernels.hpp, enqueued in
// order on the context (on CUDA: one stream, no synchronization, no allocation in the loops;
// the driver's buffers come from one grow-only workspace sized before the loop).
#include "src/core/blocked_qr.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "src/core/blocked_kernels.hpp"
#include "src/core/dispatch.hpp"
#include "src/core/update_kernels.hpp"

namespace gpuqr::detail {

namespace {

/// GPUQR_<NAME> from the environment as a positive integer, or `fallback` (for tuning runs).
std::int64_t env_size(const char* name, std::int64_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (*end != '\0' || v <= 0) {
    GPUQR_THROW(InvalidArgument, std::string(name) + "='" + text + "' is not a positive integer");
  }
  return v;
}

/// The driver's buffers: V (ldv x outer), T and G (outer x outer), W (outer x n),
/// Wi (inner x outer), carved from one workspace in the context's memory. V and T come twice:
/// look-ahead factors the next panel into the second pair while the first is in use.
template <class T>
struct Buffers {
  MatrixView<T> v, v2, t, t2, g, w, wi;  // v2, t2: the look-ahead panel's V and T
};

template <class T>
Buffers<T> carve(const Context& ctx, std::int64_t ldv, std::int64_t n, BlockSizes bs) {
  const std::int64_t nb = bs.outer, ib = bs.inner;
  const std::int64_t ldv1 = std::max<std::int64_t>(ldv, 1);
  const std::int64_t counts[] = {ldv1 * nb, ldv1 * nb, nb * nb, nb * nb, nb * nb,
                                 nb * std::max<std::int64_t>(n, 1), ib * nb};
  std::int64_t total = 0;
  for (std::int64_t c : counts) total += (c + 31) / 32 * 32;  // 256-byte aligned pieces
  T* base = nullptr;
  auto& impl = ctx.impl();
  const auto bytes = static_cast<std::size_t>(total) * sizeof(T);
  if (ctx.is_cuda()) {
    base = static_cast<T*>(cuda_workspace(impl, bytes, ContextImpl::kDriverWorkspace));
  } else {
    if (impl.host_workspace.size() * sizeof(double) < bytes) {
      impl.host_workspace.assign(bytes / sizeof(double) + 1, 0.0);
    }
    base = reinterpret_cast<T*>(impl.host_workspace.data());
  }
  const MemorySpace space = space_of(ctx);
  const int dev = ctx.device();
  T* p = base;
  auto take = [&](std::int64_t rows, std::int64_t cols, std::int64_t count) {
    MatrixView<T> view(p, rows, cols, std::max<std::int64_t>(rows, 1), space, dev);
    p += (count + 31) / 32 * 32;
    return view;
  };
  Buffers<T> b;
  b.v = take(ldv1, nb, counts[0]);
  b.v2 = take(ldv1, nb, counts[1]);
  b.t = take(nb, nb, counts[2]);
  b.t2 = take(nb, nb, counts[3]);
  b.g = take(nb, nb, counts[4]);
  b.w = take(nb, std::max<std::int64_t>(n, 1), counts[5]);
  b.wi = take(ib, nb, counts[6]);
  return b;
}

/// The lane for work that overlaps the main lane's (look-ahead panels, orgqr's T factors):
/// the context's second lane on CUDA, the main lane when GPUQR_LOOKAHEAD=0 (measurements) or
/// on the CPU.
ContextImpl& second_lane(const Context& ctx) {
  return lookahead_on(ctx) ? aux_lane(ctx) : ctx.impl();
}

template <class T>
VectorView<T> sub(VectorView<T> v, std::int64_t offset, std::int64_t size) {
  return VectorView<T>(v.data() + offset, size, v.space(), v.device());
}

/// The k x c top-left piece of a scratch view (its ld stays).
template <class T>
MatrixView<T> piece(MatrixView<T> scratch, std::int64_t rows, std::int64_t cols) {
  return MatrixView<T>(scratch.data(), rows, cols, scratch.ld(), scratch.space(),
                       scratch.device());
}

}  // namespace

bool lookahead_on(const Context& ctx) {
  const char* text = std::getenv("GPUQR_LOOKAHEAD");
  const bool off = text != nullptr && std::string(text) == "0";
  return ctx.is_cuda() && !off;
}

BlockSizes choose_block_sizes(const Context& ctx, std::int64_t m, std::int64_t n,
                              int elem_bytes, BlockSizes requested) {
  BlockSizes bs = requested;
  const std::int64_t k = std::max<std::int64_t>(std::min(m, n), 1);
  const std::int64_t widest = GPUQR_DISPATCH(ctx, max_panel_width, elem_bytes, m);
  if (bs.inner <= 0) bs.inner = env_size("GPUQR_NB_INNER", widest);
  bs.inner = std::min(bs.inner, widest);
  if (bs.outer <= 0) {
    // Outer blocks set the trailing GEMMs' inner dimension: wide enough to run near the GEMM
    // rate, narrow enough that the panel work (Level-2 and small GEMMs) stays a small share.
    // On CUDA 256, but 128 for very tall matrices (m > 4 k) up to k = 2048, as measured before
    // the faster panels (65536 x 1024; the tall-skinny routes' shapes). 256 measured faster
    // than 128 on every shape tried (H100, session 29 runs 5 and 8, alternated): geqrf FP64
    // 1024 1.71-1.76 ms against 1.83-2.12, 2048 4.03-4.11 against 4.43-4.58, 2048 x 1024
    // 2.06-2.07 against 2.31-2.61, 1024 x 2048 1.81-1.94 against 2.57-3.06, 1536 2.82-2.95
    // against 3.81-3.99, 3072 x 1024 3.02-3.20 against 3.55-3.94; FP32 alike. Half the outer
    // panels: half the look-ahead updates, T merges and trailing GEMMs, and half the host's
    // cuBLAS calls, most of the host's time to enqueue a call (run 5's gpuqr_host_profile).
    const std::int64_t fallback = ctx.is_cuda() ? (k <= 2048 && m > 4 * k ? 128 : 256) : 64;
    bs.outer = env_size("GPUQR_NB_OUTER", fallback);
  }
  bs.outer = std::max(bs.outer, bs.inner);
  bs.outer = std::min(bs.outer, k);
  bs.inner = std::min(bs.inner, bs.outer);
  return bs;
}

namespace {

/// Factors the outer panel a(j:m, j:j+jb) on `lane` into V (explicit, h x jb) and T's
/// diagonal blocks (tp, jb x jb): inner panels by panel_qr, which also gives their T, each
/// applied to the rest of the outer panel. Returns the inner width used.
template <class T>
std::int64_t factor_outer_panel(const Context& ctx, ContextImpl& lane, MatrixView<T> a,
                                VectorView<T> tau, std::int64_t j, std::int64_t jb,
                                MatrixView<T> vp, MatrixView<T> tp, const Buffers<T>& buf,
                                std::int64_t inner_cap) {
  const std::int64_t h = a.rows() - j;
  MatrixView<T> panel = a.block(j, j, h, jb);
  // Inner panels as wide as the backend handles well at this height (inner_cap at most).
  const std::int64_t inner = std::min(
      inner_cap, GPUQR_DISPATCH_ON(ctx, lane, max_panel_width, static_cast<int>(sizeof(T)), h));
  // V is explicit: zeros above each inner block (the panels write rows i.. of theirs only),
  // set for all of them at once.
  if (inner < jb) GPUQR_DISPATCH_ON(ctx, lane, laset, T(0), T(0), vp.block(0, 0, jb, jb));
  for (std::int64_t i = 0; i < jb; i += inner) {
    const std::int64_t ib = std::min(inner, jb - i);
    MatrixView<T> vi = vp.block(i, i, h - i, ib);
    MatrixView<T> ti = tp.block(i, i, ib, ib);
    // The inner panel, and its block reflector applied to the rest of the outer panel.
    GPUQR_DISPATCH_ON(ctx, lane, panel_qr_update, panel.block(i, i, h - i, jb - i), ib,
                      sub(tau, j + i, ib), vi, ti, piece(buf.wi, ib, jb - i - ib));
  }
  return inner;
}

}  // namespace

template <class T>
void blocked_geqrf(const Context& ctx, MatrixView<T> a, VectorView<T> tau, BlockSizes sizes) {
  const std::int64_t m = a.rows(), n = a.cols(), k = std::min(m, n);
  if (k == 0) return;
  const BlockSizes bs = choose_block_sizes(ctx, m, n, sizeof(T), sizes);
  Buffers<T> buf = carve<T>(ctx, m, n, bs);
  ContextImpl& main = ctx.impl();
  // Look-ahead: the next outer panel is updated first, then factored on the second lane while
  // this lane applies the current block reflector to the rest of the trailing matrix. V is
  // double-buffered between the lanes (panel p uses buffer p % 2); T, W belong to this lane,
  // the inner panels' Ti, Wi to the other.
  ContextImpl& side = second_lane(ctx);
  MatrixView<T> vbuf[2] = {buf.v, buf.v2};
  MatrixView<T> tbuf[2] = {buf.t, buf.t2};
  const std::int64_t jb0 = std::min(bs.outer, k);
  std::int64_t inner = factor_outer_panel<T>(ctx, main, a, tau, 0, jb0,
                                             vbuf[0].block(0, 0, m, jb0),
                                             tbuf[0].block(0, 0, jb0, jb0), buf, bs.inner);
  std::int64_t p = 0;
  for (std::int64_t j = 0; j < k; j += bs.outer, ++p) {
    const std::int64_t jb = std::min(bs.outer, k - j), h = m - j;
    MatrixView<T> vp = vbuf[p % 2].block(0, 0, h, jb);
    MatrixView<T> t = tbuf[p % 2].block(0, 0, jb, jb);
    const std::int64_t jn = j + jb;                             // the next panel's column
    const std::int64_t jbn = jn < k ? std::min(bs.outer, k - jn) : 0;
    if (jn >= n) break;
    // The outer T from one V^T V product, its diagonal blocks from the inner panels.
    GPUQR_DISPATCH_ON(ctx, main, larft_known_diagonal, MatrixView<const T>(vp),
                      VectorView<const T>(sub(tau, j, jb)), t, piece(buf.g, jb, jb), inner);
    auto update = [&](std::int64_t c0, std::int64_t c1) {
      if (c1 <= c0) return;
      GPUQR_DISPATCH_ON(ctx, main, larfb, Side::left, Op::trans, MatrixView<const T>(vp),
                        MatrixView<const T>(t), a.block(j, c0, h, c1 - c0),
                        piece(buf.w, jb, c1 - c0));
    };
    if (jbn == 0) {
      update(jn, n);
      continue;
    }
    update(jn, jn + jbn);
    lane_signal(ctx, main, side);  // the next panel's columns are up to date
    // A panel that waits for the device (a status read back) would hold back the enqueueing
    // of the rest of the update, and the main lane would idle meanwhile: the update first.
    const bool waits =
        GPUQR_DISPATCH_ON(ctx, side, panel_waits_for_host, static_cast<int>(sizeof(T)), m - jn,
                          std::min(bs.inner, jbn));
    if (waits) update(jn + jbn, n);
    inner = factor_outer_panel<T>(ctx, side, a, tau, jn, jbn,
                                  vbuf[(p + 1) % 2].block(0, 0, m - jn, jbn),
                                  tbuf[(p + 1) % 2].block(0, 0, jbn, jbn), buf, bs.inner);
    if (!waits) update(jn + jbn, n);
    lane_signal(ctx, side, main);  // the next iteration uses the panel, its V and T
  }
}

template <class T>
void blocked_ormqr(const Context& ctx, Side side, Op op, MatrixView<const T> a,
                   VectorView<const T> tau, MatrixView<T> c, BlockSizes sizes) {
  const std::int64_t mq = a.rows(), k = a.cols();
  if (k == 0 || c.empty()) return;
  const std::int64_t other = side == Side::left ? c.cols() : c.rows();
  const BlockSizes bs = choose_block_sizes(ctx, mq, k, sizeof(T), sizes);
  Buffers<T> buf = carve<T>(ctx, mq, other, bs);
  // Q = H_1 ... H_k. Q^T C and C Q run the blocks forward; Q C and C Q^T backward.
  const bool forward = (side == Side::left) == (op == Op::trans);
  const std::int64_t last = (k - 1) / bs.outer * bs.outer;
  for (std::int64_t step = 0; step <= last; step += bs.outer) {
    const std::int64_t j = forward ? step : last - step;
    const std::int64_t jb = std::min(bs.outer, k - j), h = mq - j;
    MatrixView<T> v = buf.v.block(0, 0, h, jb);
    MatrixView<T> t = piece(buf.t, jb, jb);
    GPUQR_DISPATCH(ctx, form_v, a.block(j, j, h, jb), v);
    GPUQR_DISPATCH(ctx, larft, MatrixView<const T>(v), sub(tau, j, jb), t, piece(buf.g, jb, jb));
    if (side == Side::left) {
      GPUQR_DISPATCH(ctx, larfb, side, op, MatrixView<const T>(v), MatrixView<const T>(t),
                     c.block(j, 0, h, c.cols()), piece(buf.w, jb, c.cols()));
    } else {
      // W is rows x jb here: the scratch W holds outer x n; use it as n x outer.
      MatrixView<T> w(buf.w.data(), c.rows(), jb, std::max<std::int64_t>(c.rows(), 1),
                      buf.w.space(), buf.w.device());
      GPUQR_DISPATCH(ctx, larfb, side, op, MatrixView<const T>(v), MatrixView<const T>(t),
                     c.block(0, j, c.rows(), h), w);
    }
  }
}

template <class T>
void blocked_orgqr(const Context& ctx, std::int64_t k, MatrixView<T> a, VectorView<const T> tau,
                   BlockSizes sizes) {
  const std::int64_t m = a.rows(), n = a.cols();
  if (n == 0) return;
  // Columns past the reflectors start as the identity's.
  if (k < n) GPUQR_DISPATCH(ctx, laset, T(0), T(0), a.block(0, k, m, n - k));
  if (k < n) GPUQR_DISPATCH(ctx, laset, T(0), T(1), a.block(k, k, m - k, n - k));
  if (k == 0) return;
  const BlockSizes bs = choose_block_sizes(ctx, m, k, sizeof(T), sizes);
  Buffers<T> buf = carve<T>(ctx, m, n, bs);
  ContextImpl& main = ctx.impl();
  if (ctx.is_cuda()) {
    // larfb keeps op(T) W (outer x n at most) in the main lane's leaf workspace; the steps
    // below widen C from one block to all n columns, and growing the workspace inside the
    // loop would synchronize the stream, so it is grown to the widest step here.
    cuda_workspace(main, static_cast<std::size_t>(bs.outer * n) * sizeof(T));
  }
  // Q = H_1 ... H_k I, block b = H_{j+1} ... H_{j+jb} (j = b outer), the blocks backward:
  // step b makes columns j.. of Q from rows j.. (Q's rows above j are zero there), its own
  // columns first set to the identity's, so that one larfb covers them and the columns
  // formed before. V_b and T_b (larft: a Gram GEMM and the batched merges, the latency-bound
  // part) are made on the second lane one step ahead, into the buffer pair b % 2, while the
  // main lane runs step b + 1's GEMMs: V_b's columns are untouched until step b itself.
  ContextImpl& side = second_lane(ctx);
  MatrixView<T> vbuf[2] = {buf.v, buf.v2};
  MatrixView<T> tbuf[2] = {buf.t, buf.t2};
  auto width = [&](std::int64_t b) { return std::min(bs.outer, k - b * bs.outer); };
  auto prepare = [&](std::int64_t b) {
    const std::int64_t j = b * bs.outer, jb = width(b), h = m - j;
    MatrixView<T> v = vbuf[b % 2].block(0, 0, h, jb);
    GPUQR_DISPATCH_ON(ctx, side, form_v, MatrixView<const T>(a.block(j, j, h, jb)), v);
    GPUQR_DISPATCH_ON(ctx, side, larft, MatrixView<const T>(v), sub(tau, j, jb),
                      piece(tbuf[b % 2], jb, jb), piece(buf.g, jb, jb));
  };
  const std::int64_t last = (k - 1) / bs.outer;
  lane_signal(ctx, main, side);  // the reflectors, as the caller's work on the main lane left them
  prepare(last);
  for (std::int64_t b = last; b >= 0; --b) {
    const std::int64_t j = b * bs.outer, jb = width(b), h = m - j;
    lane_signal(ctx, side, main);  // V_b and T_b are ready
    // The pair (b - 1) % 2 was last read by step b + 1, which the second lane waited for.
    if (b > 0) prepare(b - 1);
    GPUQR_DISPATCH_ON(ctx, main, laset, T(0), T(0), a.block(0, j, j, jb));
    GPUQR_DISPATCH_ON(ctx, main, laset, T(0), T(1), a.block(j, j, h, jb));
    GPUQR_DISPATCH_ON(ctx, main, larfb, Side::left, Op::no_trans,
                      MatrixView<const T>(vbuf[b % 2].block(0, 0, h, jb)),
                      MatrixView<const T>(piece(tbuf[b % 2], jb, jb)), a.block(j, j, h, n - j),
                      piece(buf.w, jb, n - j));
    lane_signal(ctx, main, side);  // step b is done with pair b % 2 (prepare(b - 2) reuses it)
  }
}

template <class T>
void wy_geqrf(const Context& ctx, MatrixView<T> a, VectorView<T> tau, MatrixView<T> q,
              BlockSizes sizes) {
  const std::int64_t m = a.rows(), n = a.cols(), k = std::min(m, n);
  GPUQR_DISPATCH(ctx, laset, T(0), T(1), q);  // Q = I
  if (k == 0) return;
  const BlockSizes bs = choose_block_sizes(ctx, m, n, sizeof(T), sizes);
  // V, T, G and the inner panels' scratch as blocked_geqrf's; W (m x r) in the second V;
  // X (r x n, W^T A) and Z (m x r, Q W) take turns in the W buffer (r x max(n, m)).
  Buffers<T> buf = carve<T>(ctx, m, std::max(n, m), bs);
  ContextImpl& main = ctx.impl();
  const MemorySpace space = space_of(ctx);
  const int dev = ctx.device();
  auto scratch = [&](MatrixView<T> base, std::int64_t rows, std::int64_t cols) {
    return MatrixView<T>(base.data(), rows, cols, std::max<std::int64_t>(rows, 1), space, dev);
  };
  for (std::int64_t j = 0; j < k; j += bs.outer) {
    const std::int64_t jb = std::min(bs.outer, k - j), h = m - j, nc = n - j - jb;
    MatrixView<T> y = buf.v.block(0, 0, h, jb);
    MatrixView<T> t = buf.t.block(0, 0, jb, jb);
    // T's zeros below the diagonal are read by the product W = -V T (LAPACK's larft leaves
    // that triangle as it was).
    GPUQR_DISPATCH_ON(ctx, main, laset, T(0), T(0), t);
    const std::int64_t inner = factor_outer_panel<T>(ctx, main, a, tau, j, jb, y, t, buf, bs.inner);
    GPUQR_DISPATCH_ON(ctx, main, larft_known_diagonal, MatrixView<const T>(y),
                      VectorView<const T>(sub(tau, j, jb)), t, piece(buf.g, jb, jb), inner);
    // P = H_{j+1} ... H_{j+jb} = I - V T V^T = I + W Y^T with Y = V, W = -V T.
    MatrixView<T> w = scratch(buf.v2, h, jb);
    GPUQR_DISPATCH_ON(ctx, main, laset, T(0), T(0), w);
    GPUQR_DISPATCH_ON(ctx, main, multiply_add, Op::no_trans, Op::no_trans, T(-1),
                      MatrixView<const T>(y), MatrixView<const T>(t), w);
    if (nc > 0) {  // A(j:m, j+jb:n) := P^T A = A + Y (W^T A)
      MatrixView<T> c = a.block(j, j + jb, h, nc);
      MatrixView<T> x = scratch(buf.w, jb, nc);
      GPUQR_DISPATCH_ON(ctx, main, laset, T(0), T(0), x);
      GPUQR_DISPATCH_ON(ctx, main, multiply_add, Op::trans, Op::no_trans, T(1),
                        MatrixView<const T>(w), MatrixView<const T>(c), x);
      GPUQR_DISPATCH_ON(ctx, main, multiply_add, Op::no_trans, Op::no_trans, T(1),
                        MatrixView<const T>(y), MatrixView<const T>(x), c);
    }
    // Q(:, j:m) := Q P = Q + (Q W) Y^T.
    MatrixView<T> qs = q.block(0, j, m, h);
    MatrixView<T> z = scratch(buf.w, m, jb);
    GPUQR_DISPATCH_ON(ctx, main, laset, T(0), T(0), z);
    GPUQR_DISPATCH_ON(ctx, main, multiply_add, Op::no_trans, Op::no_trans, T(1),
                      MatrixView<const T>(qs), MatrixView<const T>(w), z);
    GPUQR_DISPATCH_ON(ctx, main, multiply_add, Op::no_trans, Op::trans, T(1),
                      MatrixView<const T>(z), MatrixView<const T>(y), qs);
  }
}

#define GPUQR_INSTANTIATE_BLOCKED_QR(T)                                                            \
  template void blocked_geqrf<T>(const Context&, MatrixView<T>, VectorView<T>, BlockSizes);        \
  template void blocked_ormqr<T>(const Context&, Side, Op, MatrixView<const T>,                    \
                                 VectorView<const T>, MatrixView<T>, BlockSizes);                  \
  template void blocked_orgqr<T>(const Context&, std::int64_t, MatrixView<T>, VectorView<const T>, \
                                 BlockSizes);                                                      \
  template void wy_geqrf<T>(const Context&, MatrixView<T>, VectorView<T>, MatrixView<T>,           \
                            BlockSizes);

GPUQR_INSTANTIATE_BLOCKED_QR(float)
GPUQR_INSTANTIATE_BLOCKED_QR(double)

}  // namespace gpuqr::detail
