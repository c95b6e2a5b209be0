// Internal to src/core/sparse_qr_factor.cpp: the sparse multifrontal QR's numeric
// factorization on a stage arena (issue 9; Yeralan, Davis et al., sections 3-4). The driver is
// backend-agnostic host code: it walks the scheduler's plan (src/core/sparse_schedule.hpp)
// stage by stage and launch by launch, and per launch calls the backend's leaves on one
// arena in the context's memory:
//
//  * S-Assembly and Pack-Assembly of the launch's fronts (src/core/sparse_device_kernels.hpp),
//  * the dense QR of every front the launch finishes: small fronts together by the batched QR
//    (geqrf_vbatched, and ormqr_vbatched for carried right-hand sides), large ones by the
//    blocked QR (geqrf/ormqr) on their staircase blocks, as the CPU twin's blocked path does,
//  * with rank detection, a count of the factored pivots whose |R(j,j)| <= tol.
//
// On CUDA the arena, the maps, A's values and B live on the device; the host only plans. Each
// launch's finished fronts' R rows (and carried columns) are packed on the device and copied
// into page-locked host slots; with kept reflectors, the reflectors' column segments down to
// their staircase are copied out too, while the next launch runs. The host turns the rows into
// R's rows with the CPU twin's own code (SparseQR<T>::Twin) while the device works on the next
// launch. Contribution blocks stay in their front's buffer until packed; those whose
// parent is in a later stage go to the host at the stage's end and come back into the next
// arena. On the CPU the same driver runs on host memory with the CPU twins of the leaves (the
// tests force it), so CI covers its bookkeeping.
//
// Dead columns (Heath's rank detection) are not handled on the arena: the front QR here is the
// unpivoted blocked one, which equals Heath's as long as no pivot's norm falls to tol. The
// driver counts such pivots on the device and the factorization reruns on the CPU twin when
// there is one (SparseFactorStats::fallback says so), so the result is always the twin's.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gpuqr/batched.hpp"
#include "gpuqr/dense.hpp"
#include "gpuqr/error.hpp"
#include "src/core/dense_kernels.hpp"
#include "src/core/dispatch.hpp"
#include "src/core/sparse_device_kernels.hpp"
#include "src/core/sparse_qr_twin.hpp"

namespace gpuqr {
namespace detail {

/// An array of U in a context's memory (device on CUDA), owned; uploaded from host vectors.
template <class U>
class ArenaArray {
 public:
  ArenaArray() = default;
  ArenaArray(std::int64_t n, MemorySpace space, int device)
      : n_(n), space_(space), device_(device) {
    p_ = static_cast<U*>(allocate(static_cast<std::size_t>(n) * sizeof(U), space, device));
  }
  ArenaArray(const std::vector<U>& host, MemorySpace space, int device)
      : ArenaArray(static_cast<std::int64_t>(host.size()), space, device) {
    copy_2d(p_, n_, space_, host.data(), n_, MemorySpace::host, n_, 1, sizeof(U));
  }
  ~ArenaArray() { deallocate(p_, space_, device_); }
  ArenaArray(const ArenaArray&) = delete;
  ArenaArray& operator=(const ArenaArray&) = delete;
  ArenaArray(ArenaArray&& o) noexcept { *this = std::move(o); }
  ArenaArray& operator=(ArenaArray&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    std::swap(space_, o.space_);
    std::swap(device_, o.device_);
    return *this;
  }
  U* data() const noexcept { return p_; }
  std::int64_t size() const noexcept { return n_; }

 private:
  U* p_ = nullptr;
  std::int64_t n_ = 0;
  MemorySpace space_ = MemorySpace::host;
  int device_ = -1;
};

/// An integer setting from the environment (tuning knobs measured on the device), else `def`.
inline std::int64_t env_int(const char* name, std::int64_t def) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoll(v) : def;
}

/// Host memory for copies out of a context's memory (page-locked on CUDA, so that copies
/// into it are asynchronous), owned.
class HostBuffer {
 public:
  HostBuffer() = default;
  HostBuffer(const Context& ctx, std::size_t bytes) : ctx_(ctx) {
    p_ = GPUQR_DISPATCH(ctx_, sparse_host_alloc, bytes);
  }
  ~HostBuffer() {
    if (p_ != nullptr) GPUQR_DISPATCH(ctx_, sparse_host_free, p_);
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  HostBuffer(HostBuffer&& o) noexcept : ctx_(o.ctx_), p_(o.p_) { o.p_ = nullptr; }
  HostBuffer& operator=(HostBuffer&& o) noexcept {
    std::swap(ctx_, o.ctx_);
    std::swap(p_, o.p_);
    return *this;
  }
  void* data() const noexcept { return p_; }

 private:
  Context ctx_ = Context::cpu();
  void* p_ = nullptr;
};

/// Elements of front f's R rows packed (RPackDesc): its first min(rows, npiv) rows, each from
/// its diagonal to the front's last column.
inline std::int64_t r_packed_elems(const FrontInfo& fr) {
  const std::int64_t live = std::min(fr.rows, fr.npiv);
  return r_pack_offset(live, static_cast<std::int64_t>(fr.cols.size()));
}

/// The device buffer R's rows (and the carried columns of k right-hand sides) are packed
/// into, in elements: launches whose rows need more are packed and copied in pieces (every
/// front fits: at least the largest front's rows, and its carried columns).
inline std::int64_t r_pack_buffer_elems(const SparseAnalysis& an, std::int64_t k) {
  std::int64_t largest = 0;
  for (const FrontInfo& fr : an.fronts)
    largest = std::max({largest, r_packed_elems(fr), fr.rows * k});
  return largest + (std::int64_t(1) << 25);
}

/// The fronts launch l of `sched` finishes (factors), in task order.
inline std::vector<std::int64_t> fronts_finished_by(const SparseSchedule& sched, std::int64_t l) {
  std::vector<std::int64_t> finished;
  for (std::int64_t t = sched.launch_ptr[l]; t < sched.launch_ptr[l + 1]; ++t) {
    const SparseTask& task = sched.tasks[t];
    if (task.kind == SparseTaskKind::factorize_front ||
        (task.kind == SparseTaskKind::factorize_panel && task.panel + 1 == task.panels))
      finished.push_back(task.front);
  }
  return finished;
}

}  // namespace detail

template <class T>
struct SparseQR<T>::Device {
  using I = std::int64_t;
  using Noise = typename Twin::Noise;

  SparseQR<T>& self;
  Twin& twin;  ///< the host side: R rows, carried rows, reflectors (its code, not its fronts)
  const CscMatrix<T>& a;
  const MatrixView<const T>* b;
  const detail::SparseAssemblyMaps& maps;
  Context ctx;
  double tol;
  I k;
  MemorySpace space;
  int dev;
  /// Fronts with min(rows, cols) >= this go to the blocked dense QR, smaller ones to the
  /// batched QR; the dense path's staircase blocks are `block` columns wide.
  I dense_min;
  I block;
  /// A dense front is factored whole (one geqrf) when its staircase keeps at least this
  /// fraction of the rows a full QR would touch (GPUQR_SPARSE_WHOLE, percent).
  double whole;

  // The context's copies of the maps, of A's values and of B.
  detail::ArenaArray<I> s_row, s_col, s_value, pack_row, pack_col, b_dst, b_src;
  detail::ArenaArray<T> a_values, b_values;
  std::vector<I> b_ptr;  ///< per front: its entries of b_dst / b_src
  detail::ArenaArray<T> arena;
  detail::ArenaArray<I> small_count;
  // Per front, valid in its stage: element offsets of its buffer and tau in the arena.
  std::vector<I> at, tau_at;
  // Per carried-in child, valid in the stage that packs it: its compact block's offset.
  std::vector<I> cb_at;
  // Q-less: R's rows leave the device packed (RPackDesc), into two page-locked host slots
  // used by the launches in turn (the host takes one launch's rows while the next launch
  // fills the other), through a device buffer of pack_elems.
  I pack_elems = 0;
  detail::ArenaArray<T> pack_dev;
  detail::HostBuffer slots[2];
  double host_alloc = 0;
  static constexpr I kSmallSlotElems = I(1) << 22;  ///< GPUQR_SPARSE_SMALL_SLOT overrides
  I small_elems = 0;
  detail::HostBuffer small_slots[2];
  std::future<void> big_ready;  ///< the full-size slots, allocated on another thread
  std::vector<const T*> packed_base;  ///< per front: its packed rows in its launch's slot
  std::vector<const T*> carried_base;  ///< per front: its carried columns there (k > 0)

  /// The caller's context (its stream and handles) with the NaN/Inf check of the dense calls
  /// off for the factorization's duration (A was checked; fronts only hold its transforms,
  /// and on a device each check would wait for the stream); restored on exit.
  bool was_checking;
  /// GPUQR_SPARSE_PROFILE=1: wait for the device after each enqueued part (SparseFactorStats).
  bool profile = detail::env_int("GPUQR_SPARSE_PROFILE", 0) != 0;
  /// GPUQR_SPARSE_TRACE=1: one line per launch on stderr (a diagnostic of the host's time:
  /// what each part of the launch loop took, and the fronts it handled).
  bool trace = detail::env_int("GPUQR_SPARSE_TRACE", 0) != 0;
  /// Kept mode: a reflector block leaves by one 2-D copy where it fits the bounce buffer
  /// (GPUQR_SPARSE_BLOCK_COPY=0: a copy per column segment; a measurement knob).
  bool block_copy = detail::env_int("GPUQR_SPARSE_BLOCK_COPY", 1) != 0;
  /// Launches that finish no front are enqueued without a wait (GPUQR_SPARSE_MERGE=0: each
  /// launch is waited for, as before; a measurement knob).
  bool merge_idle = detail::env_int("GPUQR_SPARSE_MERGE", 1) != 0;
  /// Contexts (streams of their own) for the dense fronts of a launch (factor_dense_all);
  /// GPUQR_SPARSE_LANES of them, made on first use.
  I lanes_wanted = detail::env_int("GPUQR_SPARSE_LANES", 4);
  std::vector<Context> lanes;
  std::vector<Context> copiers;            ///< kept mode: the contexts copy_reflectors copies on
  std::vector<detail::HostBuffer> bounce;  ///< kept mode: a page-locked chunk per copier
  std::future<void> bounce_ready;          ///< their allocation, on another thread
  bool bounce_on = false;
  static constexpr I kBounceElems = I(1) << 22;  ///< the largest bounce buffer (32 MiB double)
  I bounce_elems = kBounceElems;                 ///< this factorization's (run())
  /// The CPU arena's stand-in for a bounce buffer: small, so that the tests cut segments.
  static constexpr I kHostStagingElems = 4096;
  /// Kept mode: threads copying fronts out (GPUQR_SPARSE_COPIERS, a measurement knob: 4, 8
  /// and 12 were within the spread between calls on grid3d:45, session 18).
  std::size_t copiers_wanted =
      static_cast<std::size_t>(std::max<I>(1, detail::env_int("GPUQR_SPARSE_COPIERS", 4)));
  /// Kept mode on CUDA: bounce buffers from this many MB of fronts (GPUQR_SPARSE_BOUNCE_FROM_MB,
  /// a measurement knob; 0, the default: always; sessions 7-18 used 1000, copying the fronts
  /// of smaller problems whole).
  double bounce_from_bytes =
      1e6 * static_cast<double>(detail::env_int("GPUQR_SPARSE_BOUNCE_FROM_MB", 0));
  /// Kept mode: each copier's bounce buffer in two halves on two streams, so that a half
  /// crosses the bus while the host empties the other (GPUQR_SPARSE_DOUBLE_BUFFER=0: one
  /// buffer, copied then emptied; a measurement knob).
  bool double_buffer = detail::env_int("GPUQR_SPARSE_DOUBLE_BUFFER", 1) != 0;
  /// Kept mode: when a launch's fronts' reflectors start for the host (GPUQR_SPARSE_COPY_AT, a
  /// measurement knob): 2 (the default) as soon as the launch is complete, so that the copier
  /// threads run while this thread enqueues the next launches and takes R's rows out; 1 after
  /// the next launch is enqueued, beside take_out; 0 after the next launch is enqueued, then
  /// take_out (session 18's order).
  I copy_at = detail::env_int("GPUQR_SPARSE_COPY_AT", 2);
  struct CopyJob;
  std::unique_ptr<CopyJob> copy_job;  ///< begin_copy's threads, until end_copy
  /// R's rows of a complete launch's fronts are taken out (take_out) on a thread of their own
  /// from the launch's end, while this thread enqueues the next launches (GPUQR_SPARSE_ROWS_EARLY
  /// =0: on this thread, after the next launch is enqueued; a measurement knob).
  bool rows_early = detail::env_int("GPUQR_SPARSE_ROWS_EARLY", 1) != 0;
  std::future<void> rows_job;  ///< that thread, until take_out_and_copy
  /// The trace's account of the copier threads: ns waiting for a half, ns emptying halves,
  /// bytes emptied (summed over threads).
  std::atomic<std::int64_t> copy_wait_ns{0}, copy_memcpy_ns{0}, copy_bytes{0};

  /// Times `body` (enqueueing work) into acc; in profile mode with the device's time.
  template <class F>
  void enqueued(double& acc, F&& body) {
    timed(acc, [&] {
      body();
      if (profile) ctx.synchronize();
    });
  }

  Device(SparseQR<T>& s, Twin& t, const CscMatrix<T>& a_, const MatrixView<const T>* b_,
         const detail::SparseAssemblyMaps& m, const Context& user, double tol_)
      : self(s), twin(t), a(a_), b(b_), maps(m), ctx(user.is_cuda() ? user : Context::cpu()),
        tol(tol_), k(b_ != nullptr ? b_->cols() : 0), space(detail::space_of(ctx)),
        dev(ctx.device()),
        dense_min(detail::env_int("GPUQR_SPARSE_DENSE_MIN", 1024)),
        block(detail::env_int("GPUQR_SPARSE_BLOCK", 256)),
        whole(static_cast<double>(detail::env_int("GPUQR_SPARSE_WHOLE", 80)) / 100),
        was_checking(ctx.check_finite()) {
    ctx.set_check_finite(false);
  }
  /// Waits for the device first: on an error path copies may still be in flight into the
  /// page-locked slots and bounce buffers, which go back to a cache that hands them out again
  /// (src/cuda/pinned_pool.hpp), so they must be idle before the members below are destroyed.
  ~Device() {
    auto idle = [](const Context& c) noexcept {
      try {
        c.synchronize();
      } catch (...) {  // an error already reported, or being: nothing more to do here
      }
    };
    copy_job.reset();  // its threads stop after their current front
    if (rows_job.valid()) rows_job.wait();
    idle(ctx);
    for (const Context& c : lanes) idle(c);
    for (const Context& c : copiers) idle(c);
    ctx.set_check_finite(was_checking);
  }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const SparseAnalysis& an() const { return self.analysis_; }
  I ncols(I f) const { return static_cast<I>(an().fronts[f].cols.size()); }
  I rows(I f) const { return an().fronts[f].rows; }
  I width(I f) const { return ncols(f) + k; }
  I front_elems(I f) const { return rows(f) * width(f); }
  I tau_elems(I f) const { return std::min(rows(f), ncols(f)); }
  I cb_elems(I c) const { return an().fronts[c].cb_rows * (an().fronts[c].cb_cols + k); }
  T* front_ptr(I f) const { return arena.data() + at[f]; }

  /// Elements of stage s's arena: its fronts, their tau, the carried-in blocks.
  I stage_elems(const detail::SparseStage& st) const {
    I e = 0;
    for (I f = st.begin; f < st.end; ++f) e += front_elems(f) + tau_elems(f);
    for (const I c : st.carried_in) e += cb_elems(c);
    return e;
  }

  /// Adds the seconds `body` takes to `acc`.
  template <class F>
  static void timed(double& acc, F&& body) {
    const auto t0 = std::chrono::steady_clock::now();
    body();
    acc += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  /// Uploads what every stage reads: the maps, A's values, B and B's row map.
  void upload(I arena_elems) {
    s_row = detail::ArenaArray<I>(maps.s_row, space, dev);
    s_col = detail::ArenaArray<I>(maps.s_col, space, dev);
    s_value = detail::ArenaArray<I>(maps.s_value, space, dev);
    pack_row = detail::ArenaArray<I>(maps.pack_row, space, dev);
    pack_col = detail::ArenaArray<I>(maps.pack_col, space, dev);
    a_values = detail::ArenaArray<T>(a.values, space, dev);
    if (k > 0) {
      // Front f's A rows in the maps' placement: stacked row s (< a_rows.size()) sits at the
      // front row r with row_source[r] == s.
      const I nf = static_cast<I>(an().fronts.size());
      std::vector<I> dst, src;
      b_ptr.assign(nf + 1, 0);
      for (I f = 0; f < nf; ++f) {
        const FrontInfo& fr = an().fronts[f];
        const I na = static_cast<I>(fr.a_rows.size());
        for (I r = 0; r < fr.rows; ++r) {
          const I s = maps.row_source[maps.stack_ptr[f] + r];
          if (s < na) {
            dst.push_back(r);
            src.push_back(fr.a_rows[s]);
          }
        }
        b_ptr[f + 1] = static_cast<I>(dst.size());
      }
      b_dst = detail::ArenaArray<I>(dst, space, dev);
      b_src = detail::ArenaArray<I>(src, space, dev);
      b_values = detail::ArenaArray<T>(a.rows * k, space, dev);
      detail::copy_2d(b_values.data(), a.rows, space, b->data(), b->ld(), MemorySpace::host,
                      a.rows, k, sizeof(T));
    }
    arena = detail::ArenaArray<T>(arena_elems, space, dev);
    small_count = detail::ArenaArray<I>(std::vector<I>{0}, space, dev);
  }

  /// Runs the plan. Returns how many factored pivots have |R(j,j)| <= tol (0 without rank
  /// detection): when any, the caller reruns on the CPU twin. Fills self's fronts and the
  /// twin's R rows and carried rows.
  I run(const detail::SparseStagePlan& plan, const detail::SparseSchedule& sched) {
    const I nf = static_cast<I>(an().fronts.size());
    at.assign(nf, -1);
    tau_at.assign(nf, -1);
    cb_at.assign(nf, -1);
    I arena_elems = 0;
    for (const detail::SparseStage& st : plan.stages)
      arena_elems = std::max(arena_elems, stage_elems(st));
    SparseFactorStats& stats = self.stats_;
    const auto t_start = std::chrono::steady_clock::now();
    timed(stats.copy_seconds, [&] { upload(arena_elems); });
    const double t_upload = stats.copy_seconds;
    timed(stats.copy_seconds, [&] { setup_packing(sched); });
    if (trace)
      std::fprintf(
          stderr, "sparse trace: arena %.3f GB, upload %.2f ms, packing set up %.2f ms\n",
          static_cast<double>(arena_elems) * sizeof(T) / 1e9, 1e3 * t_upload,
          1e3 * (std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count() -
                 t_upload));
    // Bounce buffers, allocated on another thread (until they are there fronts are copied
    // whole). Their allocation by one cudaMallocHost that held the driver's lock cost small
    // problems 60-90 ms (session 7), so they were only made from 1 GB of fronts; they are
    // pinned by pieces and cached now (pinned_pool.hpp), and sized to the problem: about an
    // eighth of the fronts' elements per copier, from 2^17 elements to kBounceElems.
    double front_bytes = 0;
    for (I f = 0; f < static_cast<I>(an().fronts.size()); ++f)
      front_bytes += static_cast<double>(front_elems(f)) * static_cast<double>(sizeof(T));
    if (self.keep_householder_ && ctx.is_cuda() && front_bytes > 0 &&
        front_bytes >= bounce_from_bytes) {
      const double want = front_bytes / sizeof(T) / (8.0 * static_cast<double>(copiers_wanted));
      bounce_elems = I(1) << 17;
      while (bounce_elems < kBounceElems && static_cast<double>(bounce_elems) < want)
        bounce_elems *= 2;
      const Context on = ctx;
      bounce_ready = std::async(std::launch::async, [this, on] {
        for (std::size_t t = 0; t < copiers_wanted; ++t)
          bounce.emplace_back(on, static_cast<std::size_t>(bounce_elems) * sizeof(T));
      });
    }
    stats.stages = static_cast<I>(plan.stages.size());
    stats.launches = sched.launches();
    stats.tasks = static_cast<I>(sched.tasks.size());
    stats.ran_on = to_string(ctx.backend());
    for (std::size_t s = 0; s < plan.stages.size(); ++s) {
      const detail::SparseStage& st = plan.stages[s];
      const double copy_before = stats.copy_seconds;
      timed(stats.copy_seconds, [&] { begin_stage(st); });
      if (trace)
        std::fprintf(stderr, "sparse trace: stage %zu begins %.2f ms\n", s,
                     1e3 * (stats.copy_seconds - copy_before));
      // As the planner counts it (fronts, maps, carried-in blocks); the arena holds each
      // front's tau besides (min(rows, cols) values).
      stats.peak_stage_bytes = std::max(stats.peak_stage_bytes, st.peak_bytes);
      std::vector<I> pending;  // fronts finished by the previous launch, not yet taken out
      int parity = 0;          // the host slot the next fronts' R rows are packed into
      for (I l = sched.stage_launch_ptr[s]; l < sched.stage_launch_ptr[s + 1]; ++l) {
        SparseFactorStats before;  // for the trace line
        if (trace) before = stats;
        const auto t0 = std::chrono::steady_clock::now();
        std::vector<I> finished = run_launch(sched, l);
        // A launch that finishes no front (its fronts' Pack-Assembly, their QR due in the
        // next) is not waited for: the next launch is enqueued behind it at once, and the host
        // takes `pending` out while the device runs both. (Waiting here left the device idle
        // while the host turned the previous launch's fronts into R's rows.)
        if (finished.empty() && merge_idle && l + 1 < sched.stage_launch_ptr[s + 1]) {
          if (trace) trace_launch(l, finished, before, t0);
          continue;
        }
        enqueued(stats.pack_seconds, [&] { pack_rows(finished, parity); });
        parity ^= 1;  // the host reads the other slot (pending's) meanwhile
        // The previous launch's fronts: their reflectors to the host (kept mode), their R
        // rows (packed) into R's arrays, while this one runs.
        take_out_and_copy(pending);
        timed(stats.wait_seconds, [&] { ctx.synchronize(); });
        timed(stats.copy_seconds, [&] { copy_out(finished); });
        if (self.keep_householder_ && copy_at >= 2)
          timed(stats.copy_seconds, [&] { begin_copy(finished); });
        if (rows_early)
          timed(stats.rows_seconds, [&] {
            rows_job = std::async(std::launch::async, [this, fs = finished] { take_out(fs); });
          });
        if (trace) trace_launch(l, finished, before, t0);
        pending = std::move(finished);
      }
      const auto t_tail = std::chrono::steady_clock::now();
      take_out_and_copy(pending);
      timed(stats.copy_seconds, [&] { end_stage(st); });
      if (trace && self.keep_householder_)
        std::fprintf(stderr,
                     "sparse trace: reflector copies %.3f GB, threads' wait %.1f ms, emptying "
                     "%.1f ms (summed over threads)\n",
                     static_cast<double>(copy_bytes.load()) / 1e9, copy_wait_ns.load() / 1e6,
                     copy_memcpy_ns.load() / 1e6);
      if (trace)
        std::fprintf(
            stderr, "sparse trace: stage %zu tail (last fronts out, end of stage) %.2f ms\n", s,
            1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t_tail).count());
    }
    stats.host_alloc_seconds = host_alloc;
    if (tol < 0) return 0;
    std::vector<I> count(1, 0);
    detail::copy_2d(count.data(), 1, MemorySpace::host, small_count.data(), 1, space, 1, 1,
                    sizeof(I));
    return count[0];
  }

  /// One GPUQR_SPARSE_TRACE line: launch l's parts in ms (their growth since `before`).
  void trace_launch(I l, const std::vector<I>& finished, const SparseFactorStats& before,
                    std::chrono::steady_clock::time_point t0) const {
    const SparseFactorStats& now = self.stats_;
    I dense = 0;
    double flops = 0;
    for (const I f : finished) {
      if (std::min(rows(f), ncols(f)) >= dense_min) ++dense;
      flops += an().fronts[f].flops;
    }
    auto ms = [](double a, double b) { return 1e3 * (a - b); };
    std::fprintf(
        stderr,
        "sparse trace: launch %lld fronts %zu dense %lld gflop %.1f | assembly %.2f "
        "small %.2f dense %.2f pack %.2f rows %.2f wait %.2f copy %.2f | all %.2f ms\n",
        static_cast<long long>(l), finished.size(), static_cast<long long>(dense), flops / 1e9,
        ms(now.assembly_seconds, before.assembly_seconds),
        ms(now.small_qr_seconds, before.small_qr_seconds),
        ms(now.dense_qr_seconds, before.dense_qr_seconds),
        ms(now.pack_seconds, before.pack_seconds), ms(now.rows_seconds, before.rows_seconds),
        ms(now.wait_seconds, before.wait_seconds), ms(now.copy_seconds, before.copy_seconds),
        1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }

  /// Frees the device's buffers, the host slots and the lanes (the work on them is done).
  void release() {
    auto t0 = std::chrono::steady_clock::now();
    auto lap = [&t0]() {
      const auto t = std::chrono::steady_clock::now();
      const double s = std::chrono::duration<double>(t - t0).count();
      t0 = t;
      return 1e3 * s;
    };
    ctx.synchronize();
    const double t_sync = lap();
    arena = detail::ArenaArray<T>();
    pack_dev = detail::ArenaArray<T>();
    const double t_arena = lap();
    if (big_ready.valid()) big_ready.wait();
    for (detail::HostBuffer& slot : slots) slot = detail::HostBuffer();
    for (detail::HostBuffer& slot : small_slots) slot = detail::HostBuffer();
    const double t_slots = lap();
    lanes.clear();
    copiers.clear();
    const double t_lanes = lap();
    if (trace)
      std::fprintf(stderr, "sparse trace: release sync %.2f arena %.2f slots %.2f lanes %.2f ms\n",
                   t_sync, t_arena, t_slots, t_lanes);
    if (bounce_ready.valid()) bounce_ready.wait();
    bounce.clear();
    s_row = detail::ArenaArray<I>();
    s_col = detail::ArenaArray<I>();
    s_value = detail::ArenaArray<I>();
    pack_row = detail::ArenaArray<I>();
    pack_col = detail::ArenaArray<I>();
    b_dst = detail::ArenaArray<I>();
    b_src = detail::ArenaArray<I>();
    a_values = detail::ArenaArray<T>();
    b_values = detail::ArenaArray<T>();
  }

  /// Sizes the packing buffers: the device buffer (r_pack_buffer_elems, or the largest launch
  /// when smaller) and two host slots of the largest launch's rows.
  void setup_packing(const detail::SparseSchedule& sched) {
    I largest_launch = 0;
    for (I l = 0; l < sched.launches(); ++l) {
      I e = 0;
      for (const I f : detail::fronts_finished_by(sched, l)) e += packed_elems(f);
      largest_launch = std::max(largest_launch, e);
    }
    pack_elems = std::min(detail::r_pack_buffer_elems(an(), k), largest_launch);
    const I nf = static_cast<I>(an().fronts.size());
    packed_base.assign(nf, nullptr);
    carried_base.assign(nf, nullptr);
    if (largest_launch == 0) return;
    pack_dev = detail::ArenaArray<T>(pack_elems, space, dev);
    // Page-locked memory is slow to pin (0.4 s for the 2 x 426 MB of grid3d:45): small slots
    // now, for the first launches (small fronts), the full-size ones on another thread while
    // the device works (pinned piece by piece, so this thread's CUDA calls are not held up:
    // src/cuda/pinned_pool.hpp); a launch waits for them only when its rows do not fit the
    // small. Freed slots stay pinned for the next factorization.
    small_elems = std::min(largest_launch, detail::env_int("GPUQR_SPARSE_SMALL_SLOT", kSmallSlotElems));
    timed(host_alloc, [&] {
      for (detail::HostBuffer& slot : small_slots)
        slot = detail::HostBuffer(ctx, static_cast<std::size_t>(small_elems) * sizeof(T));
    });
    if (largest_launch > small_elems) {
      const Context on = ctx;
      big_ready = std::async(std::launch::async, [this, on, largest_launch] {
        for (detail::HostBuffer& slot : slots)
          slot = detail::HostBuffer(on, static_cast<std::size_t>(largest_launch) * sizeof(T));
      });
    }
  }

  /// Elements front f leaves in a host slot: its R rows packed, then its carried columns (all
  /// its rows: contiguous in the front, which has ld = rows).
  I packed_elems(I f) const { return detail::r_packed_elems(an().fronts[f]) + rows(f) * k; }

  /// Enqueues the packing of fronts fs' R rows (and carried columns) and their copy into a host
  /// slot of parity `slot` (the launches that finish fronts alternate, so the slot the host reads
  /// is never the one being filled), in pieces of at most pack_elems (the device buffer is reused
  /// in stream order: a piece is packed only after the previous piece's copy).
  void pack_rows(const std::vector<I>& fs, int slot) {
    I need = 0;
    for (const I f : fs) need += packed_elems(f);
    if (need > small_elems && big_ready.valid()) timed(host_alloc, [&] { big_ready.get(); });
    T* host = static_cast<T*>(need <= small_elems ? small_slots[slot].data() : slots[slot].data());
    std::vector<detail::RPackDesc> piece;
    I used = 0, base = 0;
    auto flush = [&] {
      if (piece.empty()) return;
      GPUQR_DISPATCH(ctx, sparse_pack_r_rows<T>, arena.data(), piece, pack_dev.data());
      GPUQR_DISPATCH(ctx, sparse_copy_to_host<T>, host + base, pack_dev.data(), used);
      self.stats_.packed_bytes += used * static_cast<I>(sizeof(T));
      base += used;
      used = 0;
      piece.clear();
    };
    for (const I f : fs) {
      const FrontInfo& fr = an().fronts[f];
      const I e = detail::r_packed_elems(fr);
      packed_base[f] = host;  // nothing is read (no live rows) unless set below
      if (e > 0) {
        if (used + e > pack_elems) flush();
        packed_base[f] = host + base + used;
        piece.push_back(
            {at[f], std::max<I>(1, rows(f)), std::min(rows(f), fr.npiv), ncols(f), used});
        used += e;
      }
      // The carried columns, one contiguous range of the front: packed as one "row" of
      // rows * k entries (ld 1), so that they leave in the same copy as R's rows.
      const I c = rows(f) * k;
      if (c > 0) {
        if (used + c > pack_elems) flush();
        carried_base[f] = host + base + used;
        piece.push_back({at[f] + ncols(f) * rows(f), 1, 1, c, used});
        used += c;
      }
    }
    flush();
  }

  /// Lays out stage st's arena (zeroed) and brings back its carried-in blocks.
  void begin_stage(const detail::SparseStage& st) {
    I e = 0;
    for (I f = st.begin; f < st.end; ++f) {
      at[f] = e;
      e += front_elems(f);
      tau_at[f] = e;
      e += tau_elems(f);
    }
    for (const I c : st.carried_in) {
      cb_at[c] = e;
      e += cb_elems(c);
    }
    if (e > 0) GPUQR_DISPATCH(ctx, fill, MatrixView<T>(arena.data(), e, 1, e, space, dev), T(0));
    ctx.synchronize();  // the copies below are not on the context's stream
    for (const I c : st.carried_in) {
      const Matrix<T>& block = twin.host_cb[c];
      detail::copy_2d(arena.data() + cb_at[c], std::max<I>(1, block.rows()), space, block.data(),
                      block.ld(), MemorySpace::host, block.rows(), block.cols(), sizeof(T));
      self.stats_.carried_bytes += block.rows() * block.cols() * static_cast<I>(sizeof(T));
      twin.host_cb[c] = Matrix<T>();
    }
  }

  /// The contribution blocks of st's fronts whose parent is in a later stage, to the host.
  void end_stage(const detail::SparseStage& st) {
    ctx.synchronize();
    for (const I f : st.carried_out) {
      const FrontInfo& fr = an().fronts[f];
      const I live = std::min(rows(f), fr.npiv), cbr = fr.cb_rows;
      Matrix<T> block(cbr, fr.cb_cols + k);
      detail::copy_2d(block.data(), block.ld(), MemorySpace::host,
                      front_ptr(f) + live + fr.npiv * rows(f), rows(f), space, cbr,
                      fr.cb_cols + k, sizeof(T));
      twin.host_cb[f] = std::move(block);
    }
  }

  /// Enqueues launch l: its assemblies, then the QR of the fronts it finishes; returns those.
  std::vector<I> run_launch(const detail::SparseSchedule& sched, I l) {
    std::vector<detail::SAssemblyDesc> s_tasks;
    std::vector<detail::PackDesc> p_tasks;
    for (I t = sched.launch_ptr[l]; t < sched.launch_ptr[l + 1]; ++t) {
      const detail::SparseTask& task = sched.tasks[t];
      if (task.kind == detail::SparseTaskKind::s_assembly) s_tasks.push_back(s_desc(task.front));
      if (task.kind == detail::SparseTaskKind::pack_assembly)
        p_tasks.push_back(pack_desc(task.front, task.child));
    }
    // A front's QR runs whole when its last panel is due, as the CPU twin's.
    std::vector<I> finished = detail::fronts_finished_by(sched, l);
    enqueued(self.stats_.assembly_seconds, [&] {
      if (!s_tasks.empty())
        GPUQR_DISPATCH(ctx, sparse_s_assembly<T>, arena.data(), a_values.data(), s_row.data(),
                       s_col.data(), s_value.data(), b_values.data(), std::max<I>(1, a.rows), k,
                       b_dst.data(), b_src.data(), s_tasks);
      if (!p_tasks.empty())
        GPUQR_DISPATCH(ctx, sparse_pack_assembly<T>, arena.data(), pack_row.data(),
                       pack_col.data(), k, p_tasks);
    });
    factor(finished);
    return finished;
  }

  detail::SAssemblyDesc s_desc(I f) const {
    detail::SAssemblyDesc d;
    d.front = at[f];
    d.ld = std::max<I>(1, rows(f));
    d.t0 = maps.s_ptr[f];
    d.t1 = maps.s_ptr[f + 1];
    d.ncols = ncols(f);
    if (k > 0) {
      d.b0 = b_ptr[f];
      d.b1 = b_ptr[f + 1];
    }
    return d;
  }

  detail::PackDesc pack_desc(I p, I c) const {
    const FrontInfo& ch = an().fronts[c];
    detail::PackDesc d;
    if (cb_at[c] >= 0) {  // carried in: a compact block
      d.src = cb_at[c];
      d.sld = std::max<I>(1, ch.cb_rows);
    } else {  // the child's front buffer: rows live.., columns npiv..
      d.src = at[c];
      d.sld = std::max<I>(1, ch.rows);
      d.r0 = std::min(ch.rows, ch.npiv);
      d.c0 = ch.npiv;
    }
    d.cb_rows = ch.cb_rows;
    d.cb_cols = ch.cb_cols;
    d.dst = at[p];
    d.dld = std::max<I>(1, rows(p));
    d.dncols = ncols(p);
    d.row_map = maps.pack_row_ptr[c];
    d.col_map = maps.pack_col_ptr[c];
    return d;
  }

  /// The QR of fronts `fs` (assembled): batched for the small ones, blocked for the large.
  void factor(const std::vector<I>& fs) {
    std::vector<I> m, n, lda, nc, kk, dense;
    std::vector<T*> ap, taup, cp;
    std::vector<detail::DiagDesc> diag;
    for (const I f : fs) {
      const I r = rows(f), c = ncols(f), kf = std::min(r, c);
      if (kf == 0) continue;
      if (kf >= dense_min) {
        dense.push_back(f);
        ++self.stats_.dense_fronts;
      } else {
        m.push_back(r);
        n.push_back(c);
        lda.push_back(r);
        ap.push_back(front_ptr(f));
        taup.push_back(arena.data() + tau_at[f]);
        nc.push_back(k);
        kk.push_back(kf);
        cp.push_back(front_ptr(f) + c * r);
        ++self.stats_.batched_fronts;
      }
      if (tol >= 0) diag.push_back({at[f], r, std::min(r, an().fronts[f].npiv)});
    }
    const I batch = static_cast<I>(m.size());
    auto small = [&] {
      if (batch == 0) return;
      enqueued(self.stats_.small_qr_seconds, [&] {
        geqrf_vbatched<T>(ctx, m.data(), n.data(), ap.data(), lda.data(), taup.data(), batch);
        if (k > 0) {
          std::vector<const T*> ca(ap.begin(), ap.end()), ctau(taup.begin(), taup.end());
          ormqr_vbatched<T>(ctx, Op::trans, m.data(), nc.data(), kk.data(), ca.data(),
                            lda.data(), ctau.data(), cp.data(), lda.data(), batch);
        }
      });
    };
    if (!dense.empty()) {
      enqueued(self.stats_.dense_qr_seconds, [&] { factor_dense_all(dense, small); });
    } else {
      small();
    }
    if (!diag.empty())
      GPUQR_DISPATCH(ctx, sparse_count_small_diagonals<T>, arena.data(), tol, diag,
                     small_count.data());
  }

  /// The dense fronts `fs` of one launch (independent of each other), and `small` (the
  /// batched QR of the launch's small fronts, on the context). On CUDA with two or more dense
  /// fronts they go to `lanes` contexts of their own streams, one host thread per lane
  /// enqueueing the fronts largest first: a front's QR is a few hundred small kernels and
  /// library calls, bound by the host's enqueueing and the GPU's launch latency, so fronts on
  /// separate threads and streams overlap where one stream would run them back to back. The
  /// lanes wait for the context's work so far (the assemblies) and the context waits for
  /// theirs before anything after the QR.
  template <class Small>
  void factor_dense_all(std::vector<I> fs, Small&& small) {
    const std::size_t nl = std::min<std::size_t>(static_cast<std::size_t>(std::max<I>(lanes_wanted, 1)), fs.size());
    if (!ctx.is_cuda() || nl <= 1) {
      small();
      for (const I f : fs) self.stats_.whole_fronts += factor_dense(ctx, f) ? 1 : 0;
      return;
    }
    while (lanes.size() < nl) {
      lanes.push_back(Context::cuda(dev));
      lanes.back().set_check_finite(false);
    }
    for (std::size_t l = 0; l < nl; ++l) detail::cuda_lane_signal(ctx.impl(), lanes[l].impl());
    std::stable_sort(fs.begin(), fs.end(),
                     [&](I x, I y) { return an().fronts[x].flops > an().fronts[y].flops; });
    std::atomic<std::size_t> next{0};
    std::atomic<I> whole_count{0};
    std::atomic<bool> failed{false};
    std::exception_ptr failure;
    auto body = [&](std::size_t l) {
      try {
        for (std::size_t i; !failed.load() && (i = next.fetch_add(1)) < fs.size();)
          if (factor_dense(lanes[l], fs[i])) ++whole_count;
      } catch (...) {
        if (!failed.exchange(true)) failure = std::current_exception();
      }
    };
    std::vector<std::thread> pool;
    for (std::size_t l = 0; l < nl; ++l) pool.emplace_back(body, l);
    std::exception_ptr small_failure;
    try {
      small();  // on this thread and the context's stream, beside the lanes
    } catch (...) {
      small_failure = std::current_exception();
    }
    for (std::thread& t : pool) t.join();
    for (std::size_t l = 0; l < nl; ++l) detail::cuda_lane_signal(lanes[l].impl(), ctx.impl());
    if (failure) std::rethrow_exception(failure);
    if (small_failure) std::rethrow_exception(small_failure);
    self.stats_.whole_fronts += whole_count.load();
  }

  /// The blocked QR of front f on its staircase: `block` columns at a time, each block
  /// factored and applied to the columns right of it on the rows its staircase reaches.
  bool factor_dense(const Context& on, I f) {
    const I r = rows(f), c = ncols(f), w = width(f), kf = std::min(r, c);
    const std::vector<I> stair = staircase(f);
    const MatrixView<T> front(front_ptr(f), r, w, r, space, dev);
    T* tau = arena.data() + tau_at[f];
    // A front whose staircase saves little (by default: the rows below it are under a fifth
    // of the columns' heights) is one geqrf call: the blocked driver's look-ahead then overlaps its
    // panels with the trailing update, which block-by-block calls cannot.
    double stair_rows = 0, full_rows = 0;
    for (I j = 0; j < kf; ++j) {
      stair_rows += static_cast<double>(std::max<I>(stair[j] - j, 0));
      full_rows += static_cast<double>(r - j);
    }
    if (stair_rows >= whole * full_rows) {
      const VectorView<T> tau_all(tau, kf, space, dev);
      geqrf<T>(on, front.block(0, 0, r, c), tau_all);
      if (k > 0)
        ormqr<T>(on, Side::left, Op::trans, MatrixView<const T>(front.block(0, 0, r, kf)),
                 VectorView<const T>(tau_all), front.block(0, c, r, k));
      return true;
    }
    for (I c0 = 0; c0 < kf; c0 += block) {
      const I c1 = std::min(c0 + block, kf);
      const I height = std::max(stair[c1 - 1], c0) - c0;
      if (height == 0) continue;  // no row reaches these columns: H = I (tau stays 0)
      const I kb = std::min(height, c1 - c0);
      const VectorView<T> tau_block(tau + c0, kb, space, dev);
      geqrf<T>(on, front.block(c0, c0, height, c1 - c0), tau_block);
      if (c1 < w)
        ormqr<T>(on, Side::left, Op::trans, MatrixView<const T>(front.block(c0, c0, height, kb)),
                 VectorView<const T>(tau_block), front.block(c0, c1, height, w - c1));
    }
    return false;
  }

  /// Front f's staircase in the maps' placement: column j is nonzero in rows [0, stair[j]).
  std::vector<I> staircase(I f) const {
    const I r = rows(f), c = ncols(f), base = maps.stack_ptr[f];
    std::vector<I> stair(static_cast<std::size_t>(c));
    for (I j = 0, i = 0; j < c; ++j) {
      while (i < r && maps.row_key[base + maps.row_source[base + i]] <= j) ++i;
      stair[j] = i;
    }
    return stair;
  }

  /// The finished fronts' bookkeeping for the host and their carried columns (the
  /// launch is complete: both are in a host slot, packed by pack_rows); kept mode's
  /// reflectors come through copy_reflectors.
  void copy_out(const std::vector<I>& fs) {
    for (const I f : fs) {
      set_front_meta(f);
      Front& out = self.fronts_[f];
      const I r = rows(f);
      out.qr = Matrix<T>(k > 0 ? r : 0, k);
      if (k > 0 && r > 0)
        detail::copy_2d(out.qr.data(), out.qr.ld(), MemorySpace::host, carried_base[f], r,
                        MemorySpace::host, r, k, sizeof(T));
    }
  }

  /// Front f's rows, live rows, contribution rows and pivot rows, as the twin's code reads them.
  void set_front_meta(I f) {
    const FrontInfo& fr = an().fronts[f];
    Front& out = self.fronts_[f];
    const I r = rows(f), live = std::min(r, fr.npiv);
    out.rows = r;
    out.live = live;
    out.cb_rows = std::max<I>(0, std::min(r - live, fr.cb_cols));
    out.pivot_row.assign(static_cast<std::size_t>(fr.npiv), -1);
    for (I i = 0; i < live; ++i) out.pivot_row[i] = i;
  }

  /// Fronts fs (their launch complete): R's rows out of the host slot (take_out) and, when
  /// kept, their reflectors to the host, as copy_at says (with 2 their copy began when the
  /// launch was complete; here it is waited for).
  void take_out_and_copy(const std::vector<I>& fs) {
    SparseFactorStats& stats = self.stats_;
    // R's rows: taken out here, or waited for (rows_early: their thread began at the launch's
    // end; rows_seconds then counts the wait only).
    auto rows_out = [&] {
      timed(stats.rows_seconds, [&] {
        if (!rows_early) return take_out(fs);
        if (rows_job.valid()) rows_job.get();
      });
    };
    if (!self.keep_householder_) return rows_out();
    if (copy_at <= 0) {
      timed(stats.copy_seconds, [&] { copy_reflectors(fs); });
      return rows_out();
    }
    if (copy_at == 1) timed(stats.copy_seconds, [&] { begin_copy(fs); });
    rows_out();
    timed(stats.copy_seconds, [&] { end_copy(); });  // what the copy took beyond the rest
  }

  /// Kept reflectors: fronts fs' reflectors, by the blocks the solve applies
  /// (Front::reflectors: each column from its block's first row to the block's staircase),
  /// and their tau to the host, once the launch that factored them is complete, while this
  /// thread goes on (copy_at says when; end_copy waits). The fronts' layouts are made here;
  /// the copy is cut into items of consecutive blocks of one front (about half a bounce
  /// buffer each), so that a large front is spread over the threads: the root's reflectors
  /// were one thread's 0.2 s after the last launch (grid3d:45, session 19). On CUDA up to
  /// copiers_wanted threads copy, each through a page-locked bounce buffer of its own, cut in
  /// two halves with a stream each: while one half's copies cross the bus the host empties
  /// the other into the blocks (a Stager). A block leaves by one 2-D copy where it fits a
  /// half, else by column segments. Only these blocks cross the bus (grid3d:45: 3.3 GB, where
  /// the whole fronts are 13.4). Until the bounce buffers are there (they are allocated on
  /// another thread, and only for large problems), a front is copied whole and cut into
  /// blocks on the host. On the CPU the same halves are a small host buffer, emptied on this
  /// thread, so that the tests run the same path.
  void copy_reflectors(const std::vector<I>& fs) {
    begin_copy(fs);
    end_copy();
  }

  /// Front f's blocks [b0, b1) (with its tau when `tau`), or the whole front when `whole`.
  struct CopyItem {
    I f;
    I b0, b1;
    bool tau, whole;
  };
  /// The copier threads' shared state: the items, the next one to take, the first failure.
  struct CopyJob {
    std::vector<CopyItem> items;
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr failure;
    std::vector<std::thread> pool;
    ~CopyJob() {  // error paths: the threads stop after their current item
      failed = true;
      for (std::thread& th : pool)
        if (th.joinable()) th.join();
    }
  };

  /// A copier's bounce buffer as two halves on[0], on[1] (one when on[1] is null): copies go
  /// into the half being filled, each with the host place it is due (a run); a full half
  /// waits while the other, filled before it, is emptied.
  struct Stager {
    /// buf: 2 h elements (h when b is null), or null for whole fronts only.
    Stager(const Context* a, const Context* b, T* buf, I h)
        : on{a, b}, part{buf, buf != nullptr && b != nullptr ? buf + h : nullptr}, half(h) {}
    const Context* on[2];
    T* part[2];
    I half;
    I used[2] = {0, 0};
    std::vector<std::pair<T*, I>> runs[2];
    int cur = 0;
  };

  void stage_drain(Stager& s, int p) {
    if (s.used[p] == 0) return;
    const auto t0 = std::chrono::steady_clock::now();
    s.on[p]->synchronize();  // the host reads the half next
    const auto t1 = std::chrono::steady_clock::now();
    const T* from = s.part[p];
    for (const auto& run : s.runs[p]) {
      std::memcpy(run.first, from, static_cast<std::size_t>(run.second) * sizeof(T));
      from += run.second;
    }
    if (trace) {
      using ns = std::chrono::nanoseconds;
      copy_wait_ns += std::chrono::duration_cast<ns>(t1 - t0).count();
      copy_memcpy_ns +=
          std::chrono::duration_cast<ns>(std::chrono::steady_clock::now() - t1).count();
      copy_bytes += static_cast<std::int64_t>(s.used[p]) * static_cast<std::int64_t>(sizeof(T));
    }
    s.runs[p].clear();
    s.used[p] = 0;
  }
  /// Room for n (<= s.half) elements in the half being filled.
  void stage_room(Stager& s, I n) {
    if (s.used[s.cur] + n <= s.half) return;
    if (s.on[1] == nullptr) return stage_drain(s, 0);
    stage_drain(s, s.cur ^ 1);
    s.cur ^= 1;
  }
  /// n elements due at dst: where in the half being filled to copy them.
  T* stage_take(Stager& s, T* dst, I n) {
    std::vector<std::pair<T*, I>>& runs = s.runs[s.cur];
    if (!runs.empty() && runs.back().first + runs.back().second == dst)
      runs.back().second += n;
    else
      runs.emplace_back(dst, n);
    T* at = s.part[s.cur] + s.used[s.cur];
    s.used[s.cur] += n;
    return at;
  }
  void stage_finish(Stager& s) {
    if (s.on[1] != nullptr) stage_drain(s, s.cur ^ 1);  // the older half first
    stage_drain(s, s.cur);
  }
  /// n contiguous device elements at src to the host at dst, through the halves.
  void stage_copy(Stager& s, T* dst, const T* src, I n) {
    for (I at = 0; at < n;) {
      stage_room(s, 1);
      const I len = std::min(n - at, s.half - s.used[s.cur]);
      T* to = stage_take(s, dst + at, len);
      GPUQR_DISPATCH(*s.on[s.cur], sparse_copy_to_host<T>, to, src + at, len);
      at += len;
    }
  }

  void begin_copy(const std::vector<I>& fs) {
    end_copy();  // one copy at a time (the callers wait for each before the next begins)
    if (fs.empty()) return;
    const bool cuda = ctx.is_cuda();
    const std::size_t per = double_buffer ? 2 : 1;  // contexts per copier
    if (cuda && !bounce_on && bounce_ready.valid() &&
        bounce_ready.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
      try {
        bounce_ready.get();
        bounce_on = bounce.size() >= copiers_wanted;
      } catch (const std::exception&) {  // no page-locked memory for them: whole fronts then
        bounce_on = false;
      }
    }
    const bool staged = !cuda || bounce_on;
    const I half = (cuda ? bounce_elems : kHostStagingElems) / static_cast<I>(per);
    constexpr I nb = SparseQR<T>::kReflectorBlock;
    std::vector<CopyItem> items;
    for (const I f : fs) {
      Front& out = self.fronts_[f];
      const I r = rows(f), nrefl = tau_elems(f);
      out.row_source.assign(maps.row_source.begin() + maps.stack_ptr[f],
                            maps.row_source.begin() + maps.stack_ptr[f + 1]);
      if (!staged) {
        items.push_back({f, 0, 0, true, true});
        continue;
      }
      const std::vector<I> stair = staircase(f);
      Twin::layout_reflectors(out, nrefl, [&](I j) { return std::min(r, stair[j]); });
      const I blocks = static_cast<I>(out.block_rows.size());
      I b0 = 0, acc = 0;
      for (I b = 0; b < blocks; ++b) {
        const I n = out.block_rows[b] * (std::min(nrefl, (b + 1) * nb) - b * nb);
        if (acc > 0 && acc + n > half) {
          items.push_back({f, b0, b, b0 == 0, false});
          b0 = b;
          acc = 0;
        }
        acc += n;
      }
      if (b0 < blocks || nrefl > 0) items.push_back({f, b0, blocks, b0 == 0, false});
    }
    if (!cuda) {
      std::vector<T> buf(kHostStagingElems);
      Stager s(&ctx, double_buffer ? &ctx : nullptr, buf.data(), half);
      for (const CopyItem& it : items) copy_item(s, it);
      stage_finish(s);
      return;
    }
    const std::size_t nc = std::min(copiers_wanted, items.size());
    while (copiers.size() < nc * per) {
      copiers.push_back(Context::cuda(dev));
      copiers.back().set_check_finite(false);
    }
    copy_job = std::make_unique<CopyJob>();
    CopyJob& job = *copy_job;
    job.items = std::move(items);
    for (std::size_t t = 0; t < nc; ++t)
      job.pool.emplace_back([this, &job, t, per, half, staged] {
        try {
          T* buf = staged ? static_cast<T*>(bounce[t].data()) : nullptr;
          Stager s(&copiers[t * per], per == 2 ? &copiers[t * per + 1] : nullptr, buf, half);
          for (std::size_t i; !job.failed.load() && (i = job.next.fetch_add(1)) < job.items.size();)
            copy_item(s, job.items[i]);
          if (staged) stage_finish(s);
        } catch (...) {
          if (!job.failed.exchange(true)) job.failure = std::current_exception();
        }
      });
  }

  /// Waits for begin_copy's threads; rethrows the first failure.
  void end_copy() {
    if (!copy_job) return;
    for (std::thread& th : copy_job->pool) th.join();
    copy_job->pool.clear();
    const std::exception_ptr failure = copy_job->failure;
    copy_job.reset();
    if (failure) std::rethrow_exception(failure);
  }

  /// One CopyItem through the stager s (on s.on[0] alone for a whole front).
  void copy_item(Stager& s, const CopyItem& it) {
    const I f = it.f;
    Front& out = self.fronts_[f];
    const I r = rows(f), nrefl = tau_elems(f);
    if (it.whole) {  // the whole front, cut into blocks on the host
      Matrix<T> whole(r, ncols(f));
      out.tau.resize(static_cast<std::size_t>(nrefl));
      GPUQR_DISPATCH(*s.on[0], sparse_copy_to_host<T>, whole.data(), front_ptr(f), r * ncols(f));
      GPUQR_DISPATCH(*s.on[0], sparse_copy_to_host<T>, out.tau.data(), arena.data() + tau_at[f],
                     nrefl);
      s.on[0]->synchronize();  // the host reads both next
      twin.compact_reflectors(f, staircase(f), whole.data(), whole.ld());
      return;
    }
    const T* front = front_ptr(f);
    constexpr I nb = SparseQR<T>::kReflectorBlock;
    for (I b = it.b0; b < it.b1; ++b) {
      const I r0 = b * nb, t1 = std::min(nrefl, r0 + nb), h = out.block_rows[b];
      T* dst = out.reflectors.data() + out.block_at[b];
      if (block_copy && h * (t1 - r0) <= s.half) {  // the block at once: one 2-D copy
        stage_room(s, h * (t1 - r0));
        T* to = stage_take(s, dst, h * (t1 - r0));
        GPUQR_DISPATCH(*s.on[s.cur], sparse_copy_block_to_host<T>, to, h, front + r0 * r + r0, r, h,
                       t1 - r0);
        continue;
      }
      for (I t = r0; t < t1; ++t)  // column t, from the block's first row
        stage_copy(s, dst + (t - r0) * h, front + t * r + r0, h);
    }
    if (it.tau) stage_copy(s, out.tau.data(), arena.data() + tau_at[f], nrefl);
  }

  /// body(item, worker) for items [0, n) on the twin's workers (worker 0 is this thread); the
  /// first exception is rethrown once all have stopped.
  template <class F>
  void parallel(std::size_t n, F&& body) {
    const int workers = static_cast<int>(std::min<std::size_t>(twin.workers.size(), n));
    if (workers <= 1) {
      for (std::size_t i = 0; i < n; ++i) body(i, 0);
      return;
    }
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr failure;
    auto run = [&](int w) {
      for (std::size_t i; !failed.load() && (i = next.fetch_add(1)) < n;) {
        try {
          body(i, w);
        } catch (...) {
          if (!failed.exchange(true)) failure = std::current_exception();
        }
      }
    };
    std::vector<std::thread> pool;
    for (int w = 1; w < workers; ++w) pool.emplace_back(run, w);
    run(0);
    for (std::thread& t : pool) t.join();
    if (failure) std::rethrow_exception(failure);
  }

  /// R's rows and the carried rows of fronts `fs` (copied out), with the CPU twin's code, on
  /// the twin's workers (the fronts of one launch are independent); in Q-less mode the fronts'
  /// host copies are released. Three passes: every front's R pattern; R's rows in pieces of
  /// about 2^20 entries (GPUQR_SPARSE_PIECE), so that one large front (the root's, 5 10^7 entries on grid3d:45)
  /// spreads over all workers; then per front its noise in row order, its carried rows and
  /// its reflectors.
  void take_out(const std::vector<I>& fs) {
    if (fs.empty()) return;
    const I piece = detail::env_int("GPUQR_SPARSE_PIECE", I(1) << 20);  // tests make it small
    std::vector<detail::FrontRowStructure<T>> patterns(fs.size());
    parallel(fs.size(), [&](std::size_t i, int) { twin.r_pattern(fs[i], patterns[i]); });
    struct Piece {
      std::size_t front;
      I i0, i1;
    };
    std::vector<Piece> pieces;
    std::vector<std::size_t> first_piece(fs.size() + 1, 0);
    for (std::size_t i = 0; i < fs.size(); ++i) {
      const FrontInfo& fr = an().fronts[fs[i]];
      const I step = std::max<I>(1, piece / std::max<I>(1, ncols(fs[i])));
      for (I i0 = 0; i0 < fr.npiv; i0 += step) pieces.push_back({i, i0, std::min(fr.npiv, i0 + step)});
      first_piece[i + 1] = pieces.size();
    }
    std::vector<std::vector<Noise>> drops(pieces.size());
    parallel(pieces.size(), [&](std::size_t p, int w) {
      const Piece& pc = pieces[p];
      const I f = fs[pc.front];
      twin.take_r_row_range(f, patterns[pc.front], packed_base[f], pc.i0, pc.i1,
                            twin.workers[static_cast<std::size_t>(w)].rows, drops[p]);
    });
    parallel(fs.size(), [&](std::size_t i, int) {
      const I f = fs[i];
      std::vector<Noise>& noise = twin.noise[f];
      noise.clear();
      for (std::size_t p = first_piece[i]; p < first_piece[i + 1]; ++p)
        noise.insert(noise.end(), drops[p].begin(), drops[p].end());
      twin.take_carried(f, 0);
      Front& out = self.fronts_[f];
      out.qr = Matrix<T>();  // the carried columns, taken out
      if (!self.keep_householder_) {
        std::vector<T>().swap(out.tau);
        std::vector<I>().swap(out.row_source);
      }
    });
  }
};

}  // namespace gpuqr
