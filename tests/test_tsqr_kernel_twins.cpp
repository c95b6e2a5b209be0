// Each CUDA TSQR leaf (src/cuda/tsqr_kernels.cu) against its CPU twin (LAPACK geqr2/ormqr per
// block) on the same random inputs. Both follow geqr2's algorithm and sign convention, so the
// factors, tau and the transformed C are compared entry by entry within rounding. Covers the
// shared-memory kernels (leaf blocks in place, stacked triangles, an explicit batch of
// unequal blocks) and the per-block cuSOLVER path (wide n). CUDA only: skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "gpuqr/accuracy.hpp"
#include "src/core/tsqr_kernels.hpp"
#include "tests/support/backends.hpp"
#include "tests/support/generators.hpp"
#include "tests/support/twins.hpp"

namespace gpuqr::testing {
namespace {

class TsqrTreeKernelTwinsCuda : public BackendTest {};

/// Runs f once per CUDA factor kernel (the shared-memory default and the register one, chosen
/// through GPUQR_TSQR_FACTOR_KERNEL), restoring the environment after.
template <class F>
void for_each_factor_kernel(F&& f) {
  for (const char* kernel : {"shared", "register"}) {
    SCOPED_TRACE(std::string("factor kernel ") + kernel);
    setenv("GPUQR_TSQR_FACTOR_KERNEL", kernel, 1);
    f();
  }
  unsetenv("GPUQR_TSQR_FACTOR_KERNEL");
}

using kernels::Pieces;

template <class T>
Pieces<T> strided(T* base, std::int64_t ld, std::int64_t count, std::int64_t group,
                  std::int64_t stride, std::int64_t rows, std::int64_t last) {
  Pieces<T> p;
  p.base = base;
  p.ld = ld;
  p.count = count;
  p.group = group;
  p.stride = stride;
  p.rows = rows;
  p.last_rows = last;
  return p;
}

/// The same pieces rebased from one matrix's storage onto another's (same ld).
template <class T>
Pieces<T> rebase(Pieces<T> p, T* from, T* to) {
  p.base = to + (p.base - from);
  return p;
}

/// Factors blocks of `a` (m x n) by both backends: `stacked` = n x n triangles at the top of
/// row blocks of `block` rows, `group` per node, into a (group*n x n*nodes) buffer; else the
/// row blocks themselves in place. Then applies the result to a random C with every op, and
/// with top_only. Compares everything.
template <class T>
void compare(Context& gpu, std::int64_t m, std::int64_t n, std::int64_t block, std::int64_t group,
             bool stacked, std::uint64_t seed, T scale = T(1)) {
  Context cpu = Context::cpu();
  const double tol = 100.0 * std::sqrt(double(block * std::max<std::int64_t>(group, 1))) *
                     accuracy::eps<T>();
  const std::int64_t pieces = m / block;
  const std::int64_t last = m - (pieces - 1) * block;
  Matrix<T> a = random_matrix<T>(m, n, seed);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) a(i, j) *= scale;
  Matrix<T> a_gpu = to_ctx<T>(gpu, a.view());
  const std::int64_t nodes = stacked ? (pieces + group - 1) / group : pieces;
  Pieces<T> src_c = stacked ? strided<T>(a.data(), m, pieces, group, block, n, n)
                            : strided<T>(a.data(), m, pieces, 1, block, block, last);
  const std::int64_t drows = stacked ? group * n : block;
  // A partial last node fills only its first last_node rows of its columns of buf: the rest is
  // defined by nobody. Both backends start from the same poison, so the whole buffer compares
  // (and a write outside a node's rows shows).
  Matrix<T> buf(stacked ? drows : 1, stacked ? nodes * n : 1);
  for (std::int64_t j = 0; j < buf.cols(); ++j)
    for (std::int64_t i = 0; i < buf.rows(); ++i) buf(i, j) = T(7.25);
  Matrix<T> buf_gpu = to_ctx<T>(gpu, buf.view());
  const std::int64_t last_node = stacked ? (pieces - (nodes - 1) * group) * n : last;
  Pieces<T> dst_c = stacked ? strided<T>(buf.data(), drows, nodes, 1, n * drows, drows, last_node)
                            : src_c;
  Pieces<T> src_g = rebase(src_c, a.data(), a_gpu.data());
  Pieces<T> dst_g = stacked ? rebase(dst_c, buf.data(), buf_gpu.data()) : src_g;
  Matrix<T> tau(n, nodes), tau_gpu = device_matrix<T>(gpu, n, nodes);
  kernels::cpu::tsqr_batched_geqrf<T>(cpu.impl(), src_c.template as<const T>(), dst_c, n,
                                      tau.view(), stacked);
  kernels::cuda::tsqr_batched_geqrf<T>(gpu.impl(), src_g.template as<const T>(), dst_g, n,
                                       tau_gpu.view(), stacked);
  if (stacked) EXPECT_LT(entry_diff(to_host(gpu, buf_gpu), buf), tol);
  else EXPECT_LT(entry_diff(to_host(gpu, a_gpu), a), tol);
  EXPECT_LT(entry_diff(to_host(gpu, tau_gpu), tau), tol);
  // Apply: C's pieces are the row blocks (plain) or n-row pieces at the blocks' tops (stacked).
  for (Op op : {Op::trans, Op::no_trans}) {
    for (bool top_only : {false, true}) {
      if (top_only && stacked) continue;
      for (std::int64_t k : {1, 3, 40, 64}) {
        SCOPED_TRACE(std::string(op == Op::trans ? "Q^T" : "Q") + " k " + std::to_string(k) +
                     (top_only ? " top_only" : ""));
        Matrix<T> c = random_matrix<T>(m, k, seed + 10 + k);
        Matrix<T> c_gpu = to_ctx<T>(gpu, c.view());
        Pieces<T> cp = stacked ? strided<T>(c.data(), m, pieces, group, block, n, n)
                               : strided<T>(c.data(), m, pieces, 1, block, block, last);
        Pieces<T> cg = rebase(cp, c.data(), c_gpu.data());
        Pieces<const T> v_c = dst_c.template as<const T>();
        Pieces<const T> v_g = dst_g.template as<const T>();
        kernels::cpu::tsqr_batched_apply<T>(cpu.impl(), op, v_c, n, tau.view(), cp, k, stacked,
                                            top_only);
        kernels::cuda::tsqr_batched_apply<T>(gpu.impl(), op, v_g, n, tau_gpu.view(), cg, k,
                                             stacked, top_only);
        EXPECT_LT(entry_diff(to_host(gpu, c_gpu), c), tol);
      }
    }
  }
}

TEST_P(TsqrTreeKernelTwinsCuda, LeafBlocksInPlace) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    // (m, n, block): n = 1, a last block longer than the rest, widths up to 64, a wide one
    // that takes the per-block cuSOLVER path.
    for (auto [m, n, block] : std::vector<std::tuple<int, int, int>>{
             {640, 1, 64}, {1000, 16, 96}, {2100, 32, 200}, {3000, 64, 256}, {777, 5, 100},
             {2400, 150, 800}, {2560, 64, 256}, {2048, 100, 256}, {4096, 16, 1024}}) {
      SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + " block " + std::to_string(block));
      for_each_factor_kernel([&] { compare<T>(ctx(), m, n, block, 1, false, 100 + n); });
    }
  }));
}

TEST_P(TsqrTreeKernelTwinsCuda, StackedTriangles) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    // (m, n, block, group): nodes of 2..16 triangles, a last node with fewer children, and a
    // stack too tall for shared memory (per-block path, gathered through copies).
    for (auto [m, n, block, group] : std::vector<std::tuple<int, int, int, int>>{
             {1000, 8, 100, 4}, {2000, 32, 100, 3}, {4096, 64, 128, 2}, {800, 16, 50, 16},
             {3000, 150, 300, 2}}) {
      SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + " group " + std::to_string(group));
      for_each_factor_kernel([&] { compare<T>(ctx(), m, n, block, group, true, 200 + n); });
    }
  }));
}

TEST_P(TsqrTreeKernelTwinsCuda, TinyAndHugeEntries) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    // Column norms whose squares under- or overflow: the kernels' scaled-norm path.
    const bool fp64 = sizeof(T) == 8;
    for (T scale : {T(fp64 ? 1e-160 : 1e-20), T(fp64 ? 1e150 : 1e18)}) {
      SCOPED_TRACE("scale " + std::to_string(double(scale)));
      for_each_factor_kernel([&] {
        compare<T>(ctx(), 1200, 24, 300, 1, false, 500, scale);
        compare<T>(ctx(), 1200, 24, 300, 4, true, 501, scale);
      });
    }
  }));
}

TEST_P(TsqrTreeKernelTwinsCuda, ExplicitBatchOfUnequalBlocks) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    // Separate matrices of different heights and leading dimensions, as a batched-QR caller
    // would pass them: device arrays of pointers, rows and lds.
    Context cpu = Context::cpu();
    const std::int64_t n = 12;
    const std::vector<std::int64_t> rows = {12, 40, 100, 7, 64};  // 7 < n: 7 reflectors
    std::vector<Matrix<T>> host, dev;
    std::vector<T*> hp, dp;
    std::vector<std::int64_t> lds;
    for (std::size_t b = 0; b < rows.size(); ++b) {
      host.push_back(random_matrix<T>(rows[b] + 3, n, 300 + b));  // ld = rows + 3
      dev.push_back(to_ctx<T>(ctx(), host.back().view()));
      hp.push_back(host.back().data());
      dp.push_back(dev.back().data());
      lds.push_back(rows[b] + 3);
    }
    const auto count = static_cast<std::int64_t>(rows.size());
    const DeviceArray<T*> d_ptrs(dp, ctx().device());
    const DeviceArray<std::int64_t> d_rows(rows, ctx().device()), d_lds(lds, ctx().device());
    Pieces<T> pc, pg;
    pc.count = pg.count = count;
    pc.max_rows = pg.max_rows = 100;
    pc.ptrs = hp.data();
    pc.rows_of = rows.data();
    pc.lds = lds.data();
    pg.ptrs = d_ptrs.data();
    pg.rows_of = d_rows.data();
    pg.lds = d_lds.data();
    Matrix<T> tau(n, count), tau_gpu = device_matrix<T>(ctx(), n, count);
    kernels::cpu::tsqr_batched_geqrf<T>(cpu.impl(), pc.template as<const T>(), pc, n, tau.view(),
                                        false);
    kernels::cuda::tsqr_batched_geqrf<T>(ctx().impl(), pg.template as<const T>(), pg, n,
                                         tau_gpu.view(), false);
    const double tol = 1000.0 * accuracy::eps<T>();
    for (std::size_t b = 0; b < rows.size(); ++b) {
      const Matrix<T> back = to_host(ctx(), dev[b]);
      // Only the block's rows are the factorization; the 3 padding rows must be untouched.
      EXPECT_LT(entry_diff(back, host[b]), tol) << "block " << b;
    }
    EXPECT_LT(entry_diff(to_host(ctx(), tau_gpu), tau), tol);
  }));
}

TEST_P(TsqrTreeKernelTwinsCuda, SetTops) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    Context cpu = Context::cpu();
    Matrix<T> c = random_matrix<T>(500, 20, 400);
    Matrix<T> c_gpu = to_ctx<T>(ctx(), c.view());
    Pieces<T> pc = strided<T>(c.data(), 500, 4, 1, 100, 100, 200);
    kernels::cpu::tsqr_set_tops<T>(cpu.impl(), pc, 20, 20);
    kernels::cuda::tsqr_set_tops<T>(ctx().impl(), rebase(pc, c.data(), c_gpu.data()), 20, 20);
    EXPECT_EQ(entry_diff(to_host(ctx(), c_gpu), c), 0.0);
  }));
}

INSTANTIATE_TEST_SUITE_P(Backends, TsqrTreeKernelTwinsCuda, cuda_backend_cases(), case_name);

}  // namespace
}  // namespace gpuqr::testing
