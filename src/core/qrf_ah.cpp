// QRF-AH (Tomas & Quintana-Orti 2020, Algorithm 3 with Algorithm 2 for the panel): blocked
// Householder QR whose panel never reads the panel's tall part except through its Gram matrix.
// Per panel P = A(j0:m, j0:j0+b):
//   G = P^T P                    one pass over P (gram leaf; split-K GEMM on CUDA)
//   R, V_T, D, tau from G and P's top b x b block (ah_panel: b x b work, one thread block on
//                                CUDA); the panel ends early (kb < b) on the norm-update test
//   V_B = P_B D                  in place (multiply_in_place)
//   T from V (larft), trailing A(j0:m, j0+kb:n) := H^T A(...) (larfb: GEMMs)
// then the next panel starts at column j0 + kb. The output is geqrf's form. One wait per
// panel: kb decides where the next panel starts.
#include "src/core/qrf_ah.hpp"

#include <algorithm>
#include <vector>

#include "src/core/blocked_kernels.hpp"
#include "src/core/cholqr_kernels.hpp"
#include "src/core/dense_kernels.hpp"
#include "src/core/dispatch.hpp"
#include "src/core/qrf_ah_kernels.hpp"

namespace gpuqr::detail {

namespace {

double read_kb(const Context& ctx, VectorView<double> status) {
  double kb = 0;
  if (ctx.is_cuda()) {
    ctx.synchronize();  // status is written by the panel kernel queued on the stream
    copy_2d(&kb, 1, MemorySpace::host, status.data(), 1, MemorySpace::device, 1, 1,
            sizeof(double));
  } else {
    kb = status.data()[0];
  }
  return kb;
}

}  // namespace

std::int64_t qrf_ah_block(std::int64_t n, std::int64_t requested) {
  const std::int64_t b = requested > 0 ? requested : kAhMaxBlock;
  return std::max<std::int64_t>(1, std::min({b, kAhMaxBlock, n}));
}

template <class T>
std::int64_t run_qrf_ah(const Context& ctx, MatrixView<T> a, VectorView<T> tau,
                        std::int64_t block) {
  const std::int64_t m = a.rows(), n = a.cols();
  if (n == 0) return 0;
  const std::int64_t nb = qrf_ah_block(n, block);
  const MemorySpace space = space_of(ctx);
  const int dev = ctx.device();
  // Work for the whole call: V (m x nb), the larfb work (nb x n), and the small matrices.
  Matrix<T> v(m, nb, space, dev), work(nb, std::max<std::int64_t>(n, 1), space, dev);
  Matrix<T> g(nb, nb, space, dev), d(nb, nb, space, dev), t(nb, nb, space, dev);
  Matrix<T> scratch(nb, nb, space, dev);
  Matrix<double> status(1, 1, space, dev);
  const VectorView<double> st(status.data(), 1, space, dev);
  std::int64_t shrunk = 0;
  for (std::int64_t j0 = 0; j0 < n;) {
    const std::int64_t b = std::min(nb, n - j0), h = m - j0;
    MatrixView<T> panel = a.block(j0, j0, h, b);
    GPUQR_DISPATCH(ctx, gram, MatrixView<const T>(panel), g.view().block(0, 0, b, b));
    GPUQR_DISPATCH(ctx, ah_panel, panel.block(0, 0, b, b), g.view().block(0, 0, b, b),
                   d.view().block(0, 0, b, b), VectorView<T>(tau.data() + j0, b, space, dev),
                   st);
    const auto kb = static_cast<std::int64_t>(read_kb(ctx, st));
    if (kb < 1 || kb > b) {
      GPUQR_THROW(InvalidArgument, "qrf_ah: the panel kernel returned width " +
                                       std::to_string(kb) + " for a panel of " +
                                       std::to_string(b));  // an internal error
    }
    if (kb < b) ++shrunk;
    if (h > b) {  // V_B = P_B D, in place
      GPUQR_DISPATCH(ctx, multiply_in_place, panel.block(b, 0, h - b, kb),
                     MatrixView<const T>(d.view().block(0, 0, kb, kb)));
    }
    const std::int64_t rest = n - j0 - kb;
    if (rest > 0) {
      MatrixView<T> vk = v.view().block(0, 0, h, kb);
      GPUQR_DISPATCH(ctx, form_v, MatrixView<const T>(a.block(j0, j0, h, kb)), vk);
      const VectorView<const T> tk(tau.data() + j0, kb, space, dev);
      GPUQR_DISPATCH(ctx, larft, MatrixView<const T>(vk), tk, t.view().block(0, 0, kb, kb),
                     scratch.view().block(0, 0, kb, kb));
      GPUQR_DISPATCH(ctx, larfb, Side::left, Op::trans, MatrixView<const T>(vk),
                     MatrixView<const T>(t.view().block(0, 0, kb, kb)),
                     a.block(j0, j0 + kb, h, rest), work.view().block(0, 0, kb, rest));
    }
    j0 += kb;
  }
  ctx.synchronize();  // the work matrices are freed on return
  return shrunk;
}

template std::int64_t run_qrf_ah<float>(const Context&, MatrixView<float>, VectorView<float>,
                                        std::int64_t);
template std::int64_t run_qrf_ah<double>(const Context&, MatrixView<double>,
                                         VectorView<double>, std::int64_t);

}  // namespace gpuqr::detail
