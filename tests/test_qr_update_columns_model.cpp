// The update cost model (calibration, caches, predictions), the update policies, and the CUDA
// leaf multiply_add against its CPU twin (issue 6).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "src/core/update_kernels.hpp"
#include "tests/support/generators.hpp"
#include "tests/support/update_columns_checks.hpp"

namespace gpuqr::testing {
namespace {

class QrUpdateModelTest : public BackendTest {};

void expect_valid(const UpdateRates& r) {
  for (double v : {r.gemm_large, r.gemm_thin, r.bandwidth, r.launch_seconds,
                   r.panel_row_column_seconds, r.geqrf_efficiency}) {
    EXPECT_TRUE(std::isfinite(v));
    EXPECT_GT(v, 0.0);
  }
  EXPECT_TRUE(std::isfinite(r.panel_column_seconds));
  EXPECT_GE(r.panel_column_seconds, 0.0);
  EXPECT_GT(r.gemm_large, 1e6);  // any machine does a megaflop per second
  EXPECT_GT(r.bandwidth, 1e6);
  EXPECT_LT(r.launch_seconds, 1e-2);
  EXPECT_GT(r.geqrf_efficiency, 0.05);  // the model is within a factor 20 of our geqrf
  EXPECT_LT(r.geqrf_efficiency, 20.0);
}

/// A scratch XDG_CACHE_HOME for the scope.
class ScratchCache {
 public:
  ScratchCache() {
    dir_ = std::filesystem::temp_directory_path() /
           ("gpuqr_cache_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    setenv("XDG_CACHE_HOME", dir_.c_str(), 1);
    unsetenv("GPUQR_NO_RATE_CACHE");
    UpdateCostModel::clear_memory_cache();
  }
  ~ScratchCache() {
    unsetenv("XDG_CACHE_HOME");
    UpdateCostModel::clear_memory_cache();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

TEST_P(QrUpdateModelTest, CalibrationGivesPositiveFiniteRatesAndCaches) {
  ScratchCache cache;
  const UpdateCostModel model = UpdateCostModel::calibrate(ctx());
  expect_valid(model.rates(true));
  expect_valid(model.rates(false));
  EXPECT_EQ(model.cuda(), ctx().is_cuda());
  // The disk cache holds it, keyed by device and version; a load gives the same rates.
  const std::string file = UpdateCostModel::cache_file(model.device());
  ASSERT_FALSE(file.empty());
  EXPECT_EQ(file.rfind(cache.dir().string(), 0), 0u) << file;
  ASSERT_TRUE(std::filesystem::exists(file)) << file;
  UpdateCostModel loaded("", false, {}, {});
  ASSERT_TRUE(UpdateCostModel::load(file, model.device(), loaded));
  EXPECT_EQ(loaded.rates(true).gemm_large, model.rates(true).gemm_large);
  EXPECT_EQ(loaded.rates(false).panel_row_column_seconds, model.rates(false).panel_row_column_seconds);
  EXPECT_FALSE(UpdateCostModel::load(file, model.device() + " other", loaded));
  // Memory cache: the same object again without measuring (the file is gone).
  std::filesystem::remove(file);
  const UpdateCostModel again = UpdateCostModel::calibrate(ctx());
  EXPECT_EQ(again.rates(true).gemm_thin, model.rates(true).gemm_thin);
  EXPECT_FALSE(std::filesystem::exists(file));
  // Disk cache: a planted file is what a fresh process (cleared memory) gets.
  UpdateRates fake = model.rates(true);
  fake.gemm_large = 12345.0;
  UpdateCostModel(model.device(), model.cuda(), fake, fake).save(file);
  UpdateCostModel::clear_memory_cache();
  EXPECT_EQ(UpdateCostModel::calibrate(ctx()).rates(false).gemm_large, 12345.0);
  // A corrupt file is ignored (measured again), and GPUQR_NO_RATE_CACHE keeps the disk out.
  { std::ofstream(file) << "gpuqr-update-rates 1\n" << model.device() << "\n1\nfp32 nan\n"; }
  UpdateCostModel::clear_memory_cache();
  setenv("GPUQR_NO_RATE_CACHE", "1", 1);
  const UpdateCostModel fresh = UpdateCostModel::calibrate(ctx());
  unsetenv("GPUQR_NO_RATE_CACHE");
  expect_valid(fresh.rates(true));
  UpdateCostModel probe("", false, {}, {});
  EXPECT_FALSE(UpdateCostModel::load(file, model.device(), probe));  // still the corrupt one
}

TEST_P(QrUpdateModelTest, PredictionsAreMonotone) {
  UpdateRates r;
  r.gemm_large = 5e13, r.gemm_thin = 1e13, r.bandwidth = 3e12, r.launch_seconds = 5e-6;
  r.panel_column_seconds = 2e-6, r.panel_row_column_seconds = 1e-10, r.geqrf_efficiency = 1.3;
  const UpdateCostModel synthetic("synthetic", true, r, r);
  ScratchCache cache;
  const UpdateCostModel measured = UpdateCostModel::calibrate(ctx());
  for (const UpdateCostModel* model : {&synthetic, &measured}) {
    for (UpdateOp op : {UpdateOp::remove_columns, UpdateOp::add_columns, UpdateOp::rank_k,
                        UpdateOp::add_rows, UpdateOp::remove_rows}) {
      SCOPED_TRACE(std::string(to_string(op)) + " on " + model->device());
      for (bool fp64 : {true, false}) {
        const std::int64_t m = 4000, n = 1000, p = 100, k = 300;
        const UpdatePrediction base = model->predict(op, m, n, p, k, fp64);
        EXPECT_GT(base.update_seconds, 0.0);
        EXPECT_GT(base.refactor_seconds, 0.0);
        EXPECT_GT(base.rebuild_seconds, base.refactor_seconds * 0.5);
        EXPECT_TRUE(std::isfinite(base.update_seconds));
        const UpdatePrediction more_m = model->predict(op, 2 * m, n, p, k, fp64);
        const UpdatePrediction more_n = model->predict(op, m, 2 * n, p, k, fp64);
        // Removing columns: more columns at the same k leave fewer trailing ones, so p grows
        // with the trailing count t = n - k - p fixed.
        const bool remove = op == UpdateOp::remove_columns;
        const UpdatePrediction more_p = model->predict(op, m, n, 2 * p, remove ? k - p : k, fp64);
        EXPECT_GE(more_m.update_seconds, base.update_seconds);
        EXPECT_GE(more_m.refactor_seconds, base.refactor_seconds);
        EXPECT_GE(more_n.refactor_seconds, base.refactor_seconds);
        EXPECT_GE(more_p.update_seconds, base.update_seconds);
        EXPECT_GE(more_n.update_seconds, base.update_seconds);
      }
    }
    // Removing columns near the end is cheap; the model says so (the paper's case).
    const UpdatePrediction late = model->predict(UpdateOp::remove_columns, 8000, 3000, 100, 2800);
    EXPECT_LT(late.update_seconds, late.refactor_seconds);
    const UpdatePrediction early = model->predict(UpdateOp::remove_columns, 8000, 3000, 100, 0);
    EXPECT_GT(early.update_seconds, late.update_seconds);
  }
}

TEST_P(QrUpdateModelTest, PoliciesGiveTheSameFactorization) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const std::int64_t m = 40, n = 10;
    for (UpdatePolicy policy : {UpdatePolicy::refactor, UpdatePolicy::automatic}) {
      TrackedColumns<T> t{random_matrix<T>(m, n, 8000), random_matrix<T>(m, 2, 8001)};
      UpdatableQR<T> qr(ctx(), t.a.view(), t.b.view(), UpdateQ::full);
      UpdateRates slow_update;  // launches dominate, geqrf free: refactoring looks cheaper
      slow_update.gemm_large = slow_update.gemm_thin = 1e12, slow_update.bandwidth = 1e12;
      slow_update.launch_seconds = 1.0, slow_update.geqrf_efficiency = 1e-9;
      const UpdateCostModel model("forced", ctx().is_cuda(), slow_update, slow_update);
      // automatic: the policy follows the prediction it reports.
      const auto expect_refactored = [&](const UpdateInfo& info) {
        if (policy == UpdatePolicy::refactor) {
          EXPECT_TRUE(info.refactored);
        } else {
          EXPECT_GT(info.predicted_update_seconds, 0.0);
          EXPECT_EQ(info.refactored,
                    info.predicted_rebuild_seconds < info.predicted_update_seconds);
        }
      };
      qr.set_policy(policy, &model);
      EXPECT_EQ(qr.policy(), policy);
      const Matrix<T> rows = random_matrix<T>(2, n, 8002), e = random_matrix<T>(2, 2, 8003);
      qr.add_rows(5, rows.view(), e.view());  // rows are always updated
      t.insert_rows(5, rows, e);
      const Matrix<T> u = random_matrix<T>(qr.rows(), 3, 8004);
      UpdateInfo info = qr.add_columns(4, u.view());
      t.insert_cols(4, u);
      expect_refactored(info);
      expect_close_to_fresh(compare_with_fresh(ctx(), qr, t));
      info = qr.remove_columns(1, 2);
      t.erase_cols(1, 2);
      expect_refactored(info);
      expect_close_to_fresh(compare_with_fresh(ctx(), qr, t));
      const Matrix<T> ru = random_matrix<T>(qr.rows(), 2, 8005), rv = random_matrix<T>(qr.cols(), 2, 8006);
      info = qr.update_rank_k(ru.view(), rv.view());
      t.add_rank_k(ru, rv);
      expect_refactored(info);
      expect_close_to_fresh(compare_with_fresh(ctx(), qr, t));
      // Rank deficiency is caught on the refactor path too, and changes nothing.
      const ColumnSnapshot<T> before(ctx(), qr);
      Matrix<T> dep(qr.rows(), 1);
      for (std::int64_t i = 0; i < qr.rows(); ++i) dep(i, 0) = t.a(i, 0);
      EXPECT_THROW(qr.add_columns(2, dep.view()), InvalidArgument);
      before.expect_same(ctx(), qr);
      // Back to updating.
      qr.set_policy(UpdatePolicy::update);
      EXPECT_FALSE(qr.remove_columns(0, 1).refactored);
      t.erase_cols(0, 1);
      expect_close_to_fresh(compare_with_fresh(ctx(), qr, t));
    }
  }));
}

INSTANTIATE_TEST_SUITE_P(Backends, QrUpdateModelTest, all_backend_cases(), case_name);

/// multiply_add on CUDA against the CPU twin, all transpose combinations.
class QrUpdateColumnsCudaTwins : public BackendTest {};

TEST_P(QrUpdateColumnsCudaTwins, MultiplyAddMatchesCpu) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const std::int64_t mm = 37, nn = 29, kk = 45;
    for (Op op_a : {Op::no_trans, Op::trans}) {
      for (Op op_b : {Op::no_trans, Op::trans}) {
        const Matrix<T> a = op_a == Op::trans ? random_matrix<T>(kk, mm, 9000) : random_matrix<T>(mm, kk, 9000);
        const Matrix<T> b = op_b == Op::trans ? random_matrix<T>(nn, kk, 9001) : random_matrix<T>(kk, nn, 9001);
        Matrix<T> c_cpu = random_matrix<T>(mm, nn, 9002);
        const Matrix<T> a_d = to_ctx<T>(ctx(), a.view()), b_d = to_ctx<T>(ctx(), b.view());
        Matrix<T> c_gpu = to_ctx<T>(ctx(), c_cpu.view());
        kernels::cpu::multiply_add<T>(Context::cpu().impl(), op_a, op_b, T(-0.5), a.view(), b.view(), c_cpu.view());
        kernels::cuda::multiply_add<T>(ctx().impl(), op_a, op_b, T(-0.5), a_d.view(), b_d.view(), c_gpu.view());
        const Matrix<T> back = to_host(ctx(), c_gpu);
        const double diff = accuracy::relative_difference<T>(back.view(), c_cpu.view());
        EXPECT_LT(track("multiply_add cuda vs cpu (eps)", diff / accuracy::eps<T>()), 100.0);
      }
    }
  }));
}

/// The same column sequence on CUDA and on the CPU: the invariants (|diag R|, solution)
/// agree, factors are not compared entry by entry (signs may differ).
TEST_P(QrUpdateColumnsCudaTwins, CudaSequenceMatchesCpuInvariants) {
  GPUQR_FOR_PRECISION(([&]<class T>() {
    const Matrix<T> a = random_matrix<T>(300, 120, 9100), b = random_matrix<T>(300, 2, 9101);
    UpdatableQR<T> gpu(ctx(), a.view(), b.view()), cpu(Context::cpu(), a.view(), b.view());
    const Matrix<T> u = random_matrix<T>(300, 40, 9102), v = random_matrix<T>(150, 3, 9103);
    const Matrix<T> ru = random_matrix<T>(300, 3, 9104);
    for (UpdatableQR<T>* qr : {&gpu, &cpu}) {
      qr->remove_columns(30, 10);
      qr->add_columns(50, u.view());
      qr->update_rank_k(ru.view(), v.view());
      qr->remove_columns(0, 17);
    }
    const Matrix<T> rg = to_host(ctx(), gpu.matrix_r()), rc = cpu.matrix_r();
    ASSERT_EQ(rg.cols(), rc.cols());
    double worst = 0, size = 0;
    for (std::int64_t j = 0; j < rc.cols(); ++j) {
      worst = std::max(worst, std::abs(std::abs(double(rg(j, j))) - std::abs(double(rc(j, j)))));
      size = std::max(size, std::abs(double(rc(j, j))));
    }
    EXPECT_LT(track("columns cuda vs cpu |diag R| (eps)", worst / (size * accuracy::eps<T>())), 1e4);
    LstsqInfo ig, ic;
    const Matrix<T> xg = to_host(ctx(), gpu.solve(&ig)), xc = cpu.solve(&ic);
    const double diff = accuracy::relative_difference<T>(xg.view(), xc.view());
    EXPECT_LT(track("columns cuda vs cpu x (eps/rcond)",
                    diff * std::max(ic.rcond_estimate, 1e-300) / accuracy::eps<T>()), 1e3);
    EXPECT_GT(gpu.last_update().device_launches, 0);
  }));
}

INSTANTIATE_TEST_SUITE_P(Cuda, QrUpdateColumnsCudaTwins, cuda_backend_cases(), case_name);

}  // namespace
}  // namespace gpuqr::testing
