// Sparse multifrontal QR on the CPU: the numeric factorization on top of the symbolic
// analysis (rank detection, Householder vectors kept or B carried along, Q-less), run through
// the sparse scheduler's stages and launches by the CPU twin (src/core/sparse_qr_twin.hpp),
// and R.
#include "gpuqr/sparse_qr.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <thread>

#include "gpuqr/error.hpp"
#include "src/core/sparse_assembly.hpp"
#include "src/core/sparse_qr_detail.hpp"
#include "src/core/sparse_qr_device.hpp"
#include "src/core/sparse_qr_twin.hpp"
#include "src/core/sparse_schedule.hpp"
#include "src/core/sparse_stages.hpp"

namespace gpuqr {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// The stage cap of a CUDA factorization without a caller's cap: the device's free memory
/// less what the driver uploads besides the stages (the maps are counted in the stages too,
/// so this is conservative), less a reserve for the dense QR's workspaces (1/8 of it, and at
/// least 512 MiB), less `extra` (the buffer R's rows are packed into, Q-less).
template <class T>
std::int64_t device_stage_cap(const Context& ctx, const detail::SparseAssemblyMaps& maps,
                              const CscMatrix<T>& a, std::int64_t k, std::int64_t extra) {
  const std::int64_t free = detail::cuda_free_memory(ctx.device());
  const std::int64_t fixed = maps.total_bytes() + extra +
                             (a.nnz() + a.rows * k) * static_cast<std::int64_t>(sizeof(T));
  const std::int64_t reserve = std::max<std::int64_t>(free / 8, std::int64_t(512) << 20);
  return std::max<std::int64_t>(free - fixed - reserve, 1);
}

}  // namespace

template <class T>
SparseQR<T>::SparseQR(const CscMatrix<T>& a, const SparseQROptions& options) {
  factor(a, nullptr, options);
}

template <class T>
SparseQR<T>::SparseQR(const CscMatrix<T>& a, MatrixView<const T> b,
                      const SparseQROptions& options) {
  factor(a, &b, options);
}

template <class T>
void SparseQR<T>::factor(const CscMatrix<T>& a, const MatrixView<const T>* b,
                         const SparseQROptions& options) {
  using I = std::int64_t;
  a.validate();
  if (b != nullptr) check_rhs(*b, a.rows, "SparseQR");
  GPUQR_CHECK_ARG(options.gpu_min_flops >= 0 && options.gpu_min_intensity >= 0,
                  "SparseQR: gpu_min_flops and gpu_min_intensity must be >= 0, got " +
                      std::to_string(options.gpu_min_flops) + " and " +
                      std::to_string(options.gpu_min_intensity));
  GPUQR_CHECK_ARG(options.memory_cap_bytes >= 0,
                  "SparseQR: memory_cap_bytes must be >= 0 (0: no cap), got " +
                      std::to_string(options.memory_cap_bytes));
  keep_householder_ = options.keep_householder;
  for (I p = 0; p < a.nnz(); ++p) {
    GPUQR_CHECK_ARG(std::isfinite(a.values[p]),
                    "SparseQR: A has a NaN or Inf value at entry " + std::to_string(p));
  }
  const auto t_analysis = std::chrono::steady_clock::now();
  analysis_ = analyze_sparse_qr(a, options.analysis);
  const double analysis_seconds = seconds_since(t_analysis);
  const auto t_plan = std::chrono::steady_clock::now();
  const I n = a.cols;
  // SuiteSparseQR's tolerance: 20 (m + n) eps max_j ||A(:, j)||_2 by default (-2).
  if (options.tolerance == -2) {
    double maxnorm = 0;
    for (I j = 0; j < n; ++j) {
      double s2 = 0;
      for (I p = a.col_ptr[j]; p < a.col_ptr[j + 1]; ++p)
        s2 += static_cast<double>(a.values[p]) * static_cast<double>(a.values[p]);
      maxnorm = std::max(maxnorm, std::sqrt(s2));
    }
    tol_ = 20.0 * static_cast<double>(a.rows + n) *
           static_cast<double>(std::numeric_limits<T>::epsilon()) * maxnorm;
  } else {
    tol_ = options.tolerance < 0 ? -1.0 : options.tolerance;
  }

  // The host plan, as the GPU factorization builds it: assembly maps, stages, launches.
  const detail::CscPattern pattern{a.rows, a.cols, a.col_ptr.data(), a.row_indices.data()};
  const detail::SparseAssemblyMaps maps = detail::build_sparse_assembly_maps(analysis_, pattern);
  const I k = b != nullptr ? b->cols() : 0;
  const detail::StageSizes sizes{static_cast<I>(sizeof(T)), k};
  GPUQR_CHECK_ARG(options.threads >= 0, "SparseQR: threads must be 0 (all) or positive, not " +
                                            std::to_string(options.threads));
  const int threads = options.threads > 0
                          ? options.threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const detail::RowsOfAQ<T> aq = detail::rows_of_aq(a, analysis_.column_permutation);
  const std::string placed_on_cpu = detail::sparse_cpu_placement_reason(analysis_, options, options.context.is_cuda());
  const bool on_arena =
      options.context.is_cuda() ? placed_on_cpu.empty() : detail::sparse_arena_on_cpu().load();
  const double maps_seconds = seconds_since(t_plan);

  // One numeric factorization, on the stage arena (`arena`) or by the CPU twin; false when
  // the arena run met a pivot at or below the rank-detection tolerance (`small`: how many).
  auto numeric = [&](bool arena, I& small) -> bool {
    const auto t0 = std::chrono::steady_clock::now();
    I cap = options.memory_cap_bytes;
    if (arena && options.context.is_cuda()) {
      const I pack_bytes = detail::r_pack_buffer_elems(analysis_, k) * static_cast<I>(sizeof(T));
      const I free_cap = device_stage_cap(options.context, maps, a, k, pack_bytes);
      cap = cap == 0 ? free_cap : std::min(cap, free_cap);
    }
    const detail::SparseStagePlan stages = detail::plan_sparse_stages(analysis_, maps, cap, sizes);
    const detail::SparseSchedule schedule = detail::plan_sparse_schedule(analysis_, maps, stages);
    fronts_.clear();
    fronts_.resize(analysis_.fronts.size());
    zero_pivots_.clear();
    r_cols_.clear();
    r_values_.clear();
    stats_ = SparseFactorStats();
    stats_.analysis_seconds = analysis_seconds;
    stats_.plan_seconds = maps_seconds + seconds_since(t0);
    const auto t1 = std::chrono::steady_clock::now();
    Twin twin(*this, a, b, maps, aq, tol_, threads);
    if (detail::env_int("GPUQR_SPARSE_TRACE", 0) != 0)
      std::fprintf(stderr, "sparse trace: stages and schedule %.2f ms, twin %.2f ms\n",
                   1e3 * std::chrono::duration<double>(t1 - t0).count(), 1e3 * seconds_since(t1));
    if (arena) {
      Device device(*this, twin, a, b, maps, options.context, tol_);
      small = device.run(stages, schedule);
      const auto t_release = std::chrono::steady_clock::now();
      device.release();
      stats_.release_seconds = seconds_since(t_release);
      if (small > 0) return false;
    } else {
      twin.run(stages, schedule);
    }
    stats_.numeric_seconds = seconds_since(t1);
    const auto t2 = std::chrono::steady_clock::now();
    // Carried right-hand sides: c_r row k holds the transformed B of R's row k, c_tail the
    // rows R does not reach in apply_qt's order; qtb_ is assembled from both.
    Matrix<T> c_tail(a.rows, k);
    I tail = 0;
    twin.finish(c_tail, tail);
    if (static_cast<I>(r_row_ptr_.size()) != n + 1)
      GPUQR_THROW(Error, "SparseQR: the fronts' pivots do not cover every column");
    assemble_qtb(b, twin.c_r, c_tail, tail);
    stats_.finish_seconds = seconds_since(t2);
    return true;
  };
  I small = 0;
  if (on_arena && numeric(true, small)) return;
  const bool fell_back = on_arena;
  numeric(false, small);
  if (!fell_back && !placed_on_cpu.empty()) stats_.fallback = placed_on_cpu;
  if (fell_back) {
    stats_.fallback = "rank detection: " + std::to_string(small) +
                      " pivot(s) with |R(k,k)| <= tolerance on the " +
                      to_string(options.context.backend()) +
                      " stage arena; dead columns are handled by the CPU twin only";
  }
}

template <class T>
void SparseQR<T>::assemble_qtb(const MatrixView<const T>* b, const Matrix<T>& c_r,
                               const Matrix<T>& c_tail, std::int64_t tail) {
  using I = std::int64_t;
  const I m = rows(), n = cols(), k = c_r.cols();
  qtb_ = Matrix<T>(m, k);
  if (k == 0) return;
  const std::vector<I> lead = qt_pivot_rows();
  for (I j = 0; j < k; ++j) {
    for (I c = 0; c < n; ++c)
      if (lead[c] >= 0) qtb_(lead[c], j) = c_r(c, j);
    const I nr = r_row_count();
    for (I r = 0; r < tail; ++r) qtb_(nr + r, j) = c_tail(r, j);
    I at = nr + tail;  // then A's empty rows (in no front), unchanged
    for (I i = 0; i < m; ++i)
      if (analysis_.row_leftmost[i] < 0) qtb_(at++, j) = (*b)(i, j);
    if (at != m) GPUQR_THROW(Error, "SparseQR: the carried rows do not cover A's rows");
  }
}

template <class T>
std::int64_t SparseQR<T>::stored_bytes() const noexcept {
  std::size_t bytes = r_values_.size() * sizeof(T) +
                      (r_cols_.size() + r_row_ptr_.size()) * sizeof(std::int64_t) +
                      static_cast<std::size_t>(qtb_.rows() * qtb_.cols()) * sizeof(T);
  for (const Front& fr : fronts_) {
    bytes += static_cast<std::size_t>(fr.qr.ld() * fr.qr.cols()) * sizeof(T) +
             fr.reflectors.size() * sizeof(T) +
             (fr.block_at.size() + fr.block_rows.size()) * sizeof(std::int64_t) +
             fr.tau.size() * sizeof(T) +
             (fr.row_source.size() + fr.pivot_row.size()) * sizeof(std::int64_t);
  }
  return static_cast<std::int64_t>(bytes);
}

template <class T>
std::vector<std::int64_t> SparseQR<T>::dead_columns() const {
  std::vector<std::int64_t> out;
  out.reserve(zero_pivots_.size());
  for (const std::int64_t k : zero_pivots_) out.push_back(analysis_.column_permutation[k]);
  std::sort(out.begin(), out.end());
  return out;
}

template <class T>
CscMatrix<T> SparseQR<T>::r() const {
  using I = std::int64_t;
  const I n = cols();
  CscMatrix<T> out;
  out.rows = n;
  out.cols = n;
  out.col_ptr.assign(n + 1, 0);
  for (const I j : r_cols_) ++out.col_ptr[j + 1];
  for (I j = 0; j < n; ++j) out.col_ptr[j + 1] += out.col_ptr[j];
  out.row_indices.resize(r_cols_.size());
  out.values.resize(r_values_.size());
  std::vector<I> fill(out.col_ptr.begin(), out.col_ptr.end() - 1);
  for (I k = 0; k < n; ++k) {  // rows in ascending order: each column's rows come sorted
    for (I p = r_row_ptr_[k]; p < r_row_ptr_[k + 1]; ++p) {
      const I at = fill[r_cols_[p]]++;
      out.row_indices[at] = k;
      out.values[at] = r_values_[p];
    }
  }
  return out;
}

template <class T>
double SparseQR<T>::rcond_estimate() const {
  using I = std::int64_t;
  const I n = cols();
  if (n == 0) return 1.0;
  double lo = INFINITY, hi = 0;
  for (I k = 0; k < n; ++k) {
    const double d = std::abs(static_cast<double>(r_values_[r_row_ptr_[k]]));
    lo = std::min(lo, d);
    hi = std::max(hi, d);
  }
  return hi > 0 ? lo / hi : 0.0;
}

template class SparseQR<float>;
template class SparseQR<double>;

namespace detail {

std::string sparse_cpu_placement_reason(const SparseAnalysis& analysis,
                                        const SparseQROptions& options, bool cuda) {
  if (!cuda) return "";
  switch (options.placement) {
    case SparsePlacement::device:
      return "";
    case SparsePlacement::cpu:
      return "placement: SparsePlacement::cpu on a CUDA context";
    case SparsePlacement::automatic:
      break;
  }
  auto num = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return std::string(buf);
  };
  if (analysis.flops < options.gpu_min_flops)
    return "automatic placement: " + num(analysis.flops) + " flops, below gpu_min_flops (" +
           num(options.gpu_min_flops) + "): the CPU is faster on problems this small";
  if (analysis.intensity < options.gpu_min_intensity)
    return "automatic placement: " + num(analysis.intensity) +
           " flops per byte moved, below gpu_min_intensity (" + num(options.gpu_min_intensity) +
           "): the CPU is faster on fronts this thin";
  return "";
}

}  // namespace detail

}  // namespace gpuqr
