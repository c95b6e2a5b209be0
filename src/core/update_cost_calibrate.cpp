// UpdateCostModel::measure: the micro-benchmarks behind the cost model, run through the
// library's own leaves on the context's stream (so the rates are the ones the updates get):
// a large and a thin GEMM, a matrix copy, back-to-back tiny fills, panel_qr at two heights, and
// our geqrf at one size (its time over the model's is the efficiency correction). Each rate is
// the best of three timed batches after a warm-up; every batch ends with a synchronization
// (the timer is on the host).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>

#include "gpuqr/update_cost_model.hpp"
#include "src/core/blocked_kernels.hpp"
#include "src/core/cholqr_kernels.hpp"
#include "src/core/dense_drivers.hpp"
#include "src/core/dense_kernels.hpp"
#include "src/core/dispatch.hpp"
#include "src/core/update_cost_model.hpp"

namespace gpuqr {
namespace {

/// Seconds per call of `fn`: one warm-up call, then the best of three batches of `reps`.
double time_per_call(const Context& ctx, int reps, const std::function<void()>& fn) {
  fn();
  ctx.synchronize();
  double best = 1e300;
  for (int trial = 0; trial < 3; ++trial) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) fn();
    ctx.synchronize();
    const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
    best = std::min(best, dt.count() / reps);
  }
  return std::max(best, 1e-9);
}

/// Sizes of the micro-benchmarks: short on the CPU (tests calibrate), saturating on a GPU.
struct Sizes {
  std::int64_t large, thin_mn, copy, panel_low, panel_high, geqrf_m, geqrf_n;
};
Sizes sizes_for(const Context& ctx) {
  if (ctx.is_cuda()) return {2048, 4096, 4096, 256, 8192, 4096, 2048};
  return {256, 512, 512, 128, 2048, 384, 192};
}

template <class T>
UpdateRates measure_rates(const Context& ctx) {
  const Sizes sz = sizes_for(ctx);
  const MemorySpace space = detail::space_of(ctx);
  const int dev = ctx.device();
  UpdateRates r;
  auto fill = [&](MatrixView<T> a) {  // full rank, no NaN: 1/2 off the diagonal, 1 on it
    GPUQR_DISPATCH(ctx, laset, T(0.5), T(1), a);
  };
  {
    const std::int64_t n = sz.large;
    Matrix<T> a(n, n, space, dev), b(n, n, space, dev), c(n, n, space, dev);
    fill(a.view());
    fill(b.view());
    const double s = time_per_call(ctx, 3, [&] {
      GPUQR_DISPATCH(ctx, multiply, Op::no_trans, MatrixView<const T>(a.view()),
                     MatrixView<const T>(b.view()), c.view());
    });
    r.gemm_large = 2.0 * double(n) * n * n / s;
  }
  {
    const std::int64_t n = sz.thin_mn, k = 64;
    Matrix<T> a(n, k, space, dev), b(k, n, space, dev), c(n, n, space, dev);
    fill(a.view());
    fill(b.view());
    const double s = time_per_call(ctx, 3, [&] {
      GPUQR_DISPATCH(ctx, multiply, Op::no_trans, MatrixView<const T>(a.view()),
                     MatrixView<const T>(b.view()), c.view());
    });
    r.gemm_thin = 2.0 * double(n) * n * k / s;
  }
  {
    const std::int64_t n = sz.copy;
    Matrix<T> a(n, n, space, dev), b(n, n, space, dev);
    fill(a.view());
    const double s = time_per_call(ctx, 3, [&] {
      GPUQR_DISPATCH(ctx, copy, MatrixView<const T>(a.view()), b.view());
    });
    r.bandwidth = 2.0 * double(sizeof(T)) * double(n) * n / s;
  }
  {
    Matrix<T> a(1, 1, space, dev);
    r.launch_seconds = time_per_call(ctx, 1, [&] {
      for (int i = 0; i < 200; ++i) GPUQR_DISPATCH(ctx, fill, a.view(), T(1));
    }) / 200.0;
  }
  {
    // panel_qr of h x 32 at two heights: seconds per column = c0 + c1 h.
    double per_col[2];
    const std::int64_t heights[2] = {sz.panel_low, sz.panel_high};
    for (int i = 0; i < 2; ++i) {
      const std::int64_t h = heights[i];
      const std::int64_t b = std::min<std::int64_t>(
          32, GPUQR_DISPATCH(ctx, max_panel_width, static_cast<int>(sizeof(T)), h));
      Matrix<T> a(h, b, space, dev), v(h, b, space, dev), t(b, b, space, dev), tau(b, 1, space, dev);
      const VectorView<T> tau_v(tau.data(), b, space, dev);
      fill(a.view());
      per_col[i] = time_per_call(ctx, 3, [&] {
        GPUQR_DISPATCH(ctx, panel_qr, a.view(), tau_v, v.view(), t.view());
      }) / double(b);
    }
    const double slope = (per_col[1] - per_col[0]) / double(heights[1] - heights[0]);
    r.panel_row_column_seconds = std::max(slope, 1e-15);
    r.panel_column_seconds = std::max(per_col[0] - r.panel_row_column_seconds * double(heights[0]), 0.0);
  }
  {
    const std::int64_t m = sz.geqrf_m, n = sz.geqrf_n;
    Matrix<T> a(m, n, space, dev), tau(n, 1, space, dev);
    const VectorView<T> tau_v(tau.data(), n, space, dev);
    const double s = time_per_call(ctx, 2, [&] {
      fill(a.view());
      detail::run_geqrf<T>(ctx, a.view(), tau_v);
    });
    r.geqrf_efficiency =
        s / std::max(detail::modelled_geqrf_seconds(r, ctx.is_cuda(), sizeof(T), m, n), 1e-12);
  }
  return r;
}

}  // namespace

UpdateCostModel UpdateCostModel::measure(const Context& ctx) {
  const UpdateRates fp32 = measure_rates<float>(ctx);
  const UpdateRates fp64 = measure_rates<double>(ctx);
  return UpdateCostModel(key_of(ctx), ctx.is_cuda(), fp32, fp64);
}

}  // namespace gpuqr
