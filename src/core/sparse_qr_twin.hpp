// Internal to src/core/sparse_qr_factor.cpp: the CPU twin of the GPU sparse factorization.
// It runs the scheduler's plan (src/core/sparse_schedule.hpp) stage by stage and launch by
// launch, each task as the GPU's task kernel will: S-Assembly from the packed tuples and
// Pack-Assembly through Rimap/Rjmap (src/core/sparse_assembly.hpp), Factorize by the dense
// staircase QR (src/core/sparse_qr_fronts.hpp). Contribution blocks leaving a stage move to a
// separate "host" store and come back when their parent's stage starts; a Pack-Assembly of a
// block that is not resident is an error, so the twin checks the stage plan too. The numbers
// do not depend on the order: each front is assembled exactly as before (same values, same
// staircase row order), and R's rows are gathered per front and concatenated in postorder.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "gpuqr/error.hpp"
#include "gpuqr/sparse_qr.hpp"
#include "src/core/sparse_assembly.hpp"
#include "src/core/sparse_device_kernels.hpp"
#include "src/core/sparse_qr_detail.hpp"
#include "src/core/sparse_qr_fronts.hpp"
#include "src/core/sparse_schedule.hpp"
#include "src/core/sparse_stages.hpp"

namespace gpuqr {
namespace detail {

/// The rows of A*Q: for each original row, (permuted column, value) pairs, ascending columns.
template <class T>
struct RowsOfAQ {
  std::vector<std::int64_t> ptr;
  std::vector<std::int64_t> cols;
  std::vector<T> values;
};

template <class T>
RowsOfAQ<T> rows_of_aq(const CscMatrix<T>& a, const std::vector<std::int64_t>& q) {
  using I = std::int64_t;
  RowsOfAQ<T> out;
  const I m = a.rows, n = a.cols, nnz = a.nnz();
  out.ptr.assign(m + 1, 0);
  out.cols.resize(nnz);
  out.values.resize(nnz);
  for (I p = 0; p < nnz; ++p) ++out.ptr[a.row_indices[p] + 1];
  for (I i = 0; i < m; ++i) out.ptr[i + 1] += out.ptr[i];
  std::vector<I> fill(out.ptr.begin(), out.ptr.end() - 1);
  for (I k = 0; k < n; ++k) {
    for (I p = a.col_ptr[q[k]]; p < a.col_ptr[q[k] + 1]; ++p) {
      const I at = fill[a.row_indices[p]]++;
      out.cols[at] = k;
      out.values[at] = a.values[p];
    }
  }
  return out;
}

/// R's structural row patterns within one front, as bit sets over the front's columns. Row j's
/// pattern P(j) is {j} + the columns of the rows of A whose leftmost column is j + P(c) - {c}
/// for every etree child c of j (the analysis' recurrence). P(j) lies in the columns of j's
/// front, and a child c outside j's front is the top pivot of a child front, whose P(c) - {c}
/// is that front's contribution-block columns; so a front's rows need nothing but the front:
/// each row's bits are seeded (itself, its rows of A, the child fronts attached to it) and,
/// once complete (its children come before it), or-ed into its etree parent's row.
/// Per front O(npiv x ncols / 64) words instead of a pattern list per row.
template <class T>
class FrontRowStructure {
  using I = std::int64_t;
  using Word = std::uint64_t;

 public:
  /// Seeds front f's rows; `rows_at_pivot[i]` are the rows of A whose leftmost column is pivot
  /// i of the front (local).
  void seed(const SparseAnalysis& an, const RowsOfAQ<T>& aq, I f,
            const std::vector<std::vector<I>>& rows_at_pivot) {
    const FrontInfo& fr = an.fronts[f];
    npiv_ = fr.npiv;
    words_ = (static_cast<I>(fr.cols.size()) + 63) / 64;
    bits_.assign(static_cast<std::size_t>(npiv_ * words_), 0);
    const I fp = fr.first_pivot, last = fp + fr.npiv;
    const auto local = [&](I x) -> I {
      if (x >= fp && x < last) return x - fp;
      const auto it = std::lower_bound(fr.cols.begin() + fr.npiv, fr.cols.end(), x);
      if (it == fr.cols.end() || *it != x)
        GPUQR_THROW(Error, "SparseQR: a column of R's pattern is not in its front");
      return static_cast<I>(it - fr.cols.begin());
    };
    for (I i = 0; i < npiv_; ++i) {
      set(i, i);
      for (const I r : rows_at_pivot[static_cast<std::size_t>(i)])
        for (I p = aq.ptr[r]; p < aq.ptr[r + 1]; ++p) set(i, local(aq.cols[p]));
    }
    for (std::size_t c = 0; c < fr.children.size(); ++c) {
      const FrontInfo& ch = an.fronts[fr.children[c]];
      const I at = an.etree[ch.first_pivot + ch.npiv - 1] - fp;
      if (at < 0 || at >= npiv_)
        GPUQR_THROW(Error, "SparseQR: a child front is not attached to its parent's pivots");
      for (const I t : fr.child_col_map[c]) set(at, t);
    }
    etree_ = &an.etree;
    fp_ = fp;
  }
  /// Completes every row, in order (each row's etree children come before it).
  void complete() {
    for (I i = 0; i < npiv_; ++i) finish_row(i);
  }
  /// Whether local column t is in row i's pattern; row i must be complete (finish_row was
  /// called for every local row before i, as complete() does).
  bool has(I i, I t) const {
    return (bits_[static_cast<std::size_t>(i * words_ + t / 64)] >> (t % 64) & 1u) != 0;
  }
  /// Row i is done: its pattern goes to its etree parent's row when that is in the front.
  void finish_row(I i) {
    const I parent = (*etree_)[fp_ + i] - fp_;
    if (parent <= i || parent >= npiv_) return;
    const Word* from = bits_.data() + i * words_;
    Word* to = bits_.data() + parent * words_;
    for (I w = i / 64; w < words_; ++w) to[w] |= from[w];  // P(i) holds no column below i
  }

 private:
  void set(I i, I t) { bits_[static_cast<std::size_t>(i * words_ + t / 64)] |= Word{1} << (t % 64); }
  std::vector<Word> bits_;
  I npiv_ = 0, words_ = 0, fp_ = 0;
  const std::vector<I>* etree_ = nullptr;
};

}  // namespace detail

template <class T>
struct SparseQR<T>::Twin {
  using I = std::int64_t;

  /// A front's assembly state: its current staircase placement.
  struct Work {
    bool allocated = false;
    bool on_maps = true;            ///< placement is the maps' (analysis counts)
    std::vector<I> child_rows;      ///< CB rows per child the placement assumes
    std::vector<I> row_source;      ///< front row -> stacked row
    std::vector<I> row_key;         ///< stacked row -> leftmost front column
    std::vector<I> row_at;          ///< stacked row -> front row
  };
  /// A nonzero of a front's R row outside R's structure (rounding noise where a relaxed front
  /// holds structural zeros): dropped unless the row comes at or after the first zero pivot,
  /// which is known only at the end.
  struct Noise {
    I row;
    I col;
    T value;
  };

  SparseQR<T>& self;
  const CscMatrix<T>& a;
  const MatrixView<const T>* b;
  const detail::SparseAssemblyMaps& maps;
  const detail::RowsOfAQ<T>& aq;
  /// One per thread that runs tasks: its context (LAPACK calls), the staircase QR's scratch,
  /// and R's pattern of the front whose rows it takes.
  struct Worker {
    int id = 0;
    Context ctx = Context::cpu();
    std::vector<T> scratch;
    std::vector<T> rows;
    detail::FrontRowStructure<T> structure;
  };
  std::vector<Worker> workers;
  double tol;
  I k;  ///< carried right-hand sides
  std::vector<Work> work;
  std::vector<Matrix<T>> cb;       ///< resident contribution blocks ("device")
  std::vector<char> cb_resident;
  std::vector<Matrix<T>> host_cb;  ///< blocks carried across a stage boundary
  /// R's rows are written in place into self's r_cols_ / r_values_: row j's structural
  /// nonzeros (diagonal first) at row_start[j] .., kept[j] of them. row_start sums the
  /// analysis' row counts |P(j)|, which bound them; finish() closes the gaps.
  std::vector<I> row_start, kept;
  std::vector<std::vector<Noise>> noise;  ///< per front, in row then column order
  std::vector<Matrix<T>> tails;    ///< per front: carried columns of the rows R does not reach
  Matrix<T> c_r;                   ///< carried columns of R's rows, by permuted column
  std::atomic<I> stage_bytes{0};

  Twin(SparseQR<T>& s, const CscMatrix<T>& a_, const MatrixView<const T>* b_,
       const detail::SparseAssemblyMaps& m, const detail::RowsOfAQ<T>& aq_, double tol_,
       int threads)
      : self(s), a(a_), b(b_), maps(m), aq(aq_), tol(tol_), k(b_ != nullptr ? b_->cols() : 0) {
    workers.resize(static_cast<std::size_t>(std::max(threads, 1)));
    for (std::size_t w = 0; w < workers.size(); ++w) {
      workers[w].id = static_cast<int>(w);
      workers[w].ctx.set_check_finite(false);  // A was checked; fronts only hold its transforms
    }
    const I nf = static_cast<I>(s.analysis_.fronts.size());
    work.resize(nf);
    cb.resize(nf);
    cb_resident.assign(nf, 0);
    host_cb.resize(nf);
    noise.resize(nf);
    tails.resize(nf);
    c_r = Matrix<T>(s.analysis_.cols, k);
    const I n = s.analysis_.cols;
    if (static_cast<I>(s.analysis_.r_row_counts.size()) != n)
      GPUQR_THROW(Error, "SparseQR: the analysis has no row counts of R");
    row_start.assign(static_cast<std::size_t>(n) + 1, 0);
    for (I j = 0; j < n; ++j) row_start[j + 1] = row_start[j] + s.analysis_.r_row_counts[j];
    kept.assign(static_cast<std::size_t>(n), 0);
    s.r_cols_.resize(static_cast<std::size_t>(row_start[n]));
    s.r_values_.resize(static_cast<std::size_t>(row_start[n]));
  }

  const SparseAnalysis& an() const { return self.analysis_; }
  I width(I f) const { return static_cast<I>(an().fronts[f].cols.size()) + k; }

  /// Runs every stage's launches; fills self's fronts and stats.
  void run(const detail::SparseStagePlan& plan, const detail::SparseSchedule& sched) {
    SparseFactorStats& stats = self.stats_;
    stats.stages = static_cast<I>(plan.stages.size());
    stats.launches = sched.launches();
    stats.tasks = static_cast<I>(sched.tasks.size());
    for (std::size_t s = 0; s < plan.stages.size(); ++s) {
      const detail::SparseStage& st = plan.stages[s];
      stage_bytes = 0;
      for (I f = st.begin; f < st.end; ++f) stage_bytes += maps.front_bytes(an(), f);
      for (const I c : st.carried_in) {  // back from the host
        cb[c] = std::move(host_cb[c]);
        cb_resident[c] = 1;
        const I bytes = cb[c].rows() * cb[c].cols() * static_cast<I>(sizeof(T));
        stage_bytes += bytes;
        stats.carried_bytes += bytes;
      }
      for (I l = sched.stage_launch_ptr[s]; l < sched.stage_launch_ptr[s + 1]; ++l)
        run_launch(sched, l);
      for (const I f : st.carried_out) {  // out to the host with the stage's R rows
        host_cb[f] = std::move(cb[f]);
        cb_resident[f] = 0;
      }
      stats.peak_stage_bytes = std::max(stats.peak_stage_bytes, stage_bytes.load());
    }
  }

  /// Launch l's tasks. One worker: in order. Several: the tasks grouped by the front they
  /// write (a Pack-Assembly writes its parent), each group in order on one thread, groups in
  /// parallel; the tasks of a launch are independent otherwise (as on the GPU), so the result
  /// is bit for bit the sequential one. A launch that packs a block factored in the same
  /// launch (the scheduler never plans one) runs in order.
  void run_launch(const detail::SparseSchedule& sched, I l) {
    const I t0 = sched.launch_ptr[l], t1 = sched.launch_ptr[l + 1];
    if (workers.size() == 1 || t1 - t0 < 2) {
      for (I t = t0; t < t1; ++t) run_task(sched.tasks[t], workers[0]);
      return;
    }
    std::vector<I> owner_group(static_cast<std::size_t>(an().fronts.size()), -1);
    std::vector<std::vector<I>> groups;
    std::vector<char> factored(static_cast<std::size_t>(an().fronts.size()), 0);
    for (I t = t0; t < t1; ++t) {
      const detail::SparseTask& task = sched.tasks[t];
      if (task.kind != detail::SparseTaskKind::s_assembly &&
          task.kind != detail::SparseTaskKind::pack_assembly)
        factored[task.front] = 1;
      I& g = owner_group[task.front];
      if (g < 0) {
        g = static_cast<I>(groups.size());
        groups.emplace_back();
      }
      groups[g].push_back(t);
    }
    for (I t = t0; t < t1; ++t) {
      const detail::SparseTask& task = sched.tasks[t];
      if (task.kind == detail::SparseTaskKind::pack_assembly && factored[task.child]) {
        for (I u = t0; u < t1; ++u) run_task(sched.tasks[u], workers[0]);
        return;
      }
    }
    std::atomic<std::size_t> next{0};
    std::exception_ptr failure;
    std::atomic<bool> failed{false};
    auto body = [&](Worker& wk) {
      for (std::size_t g; (g = next.fetch_add(1)) < groups.size() && !failed.load();) {
        try {
          for (const I t : groups[g]) run_task(sched.tasks[t], wk);
        } catch (...) {
          if (!failed.exchange(true)) failure = std::current_exception();
        }
      }
    };
    const std::size_t nthreads = std::min(workers.size(), groups.size());
    std::vector<std::thread> pool;
    for (std::size_t w = 1; w < nthreads; ++w) pool.emplace_back(body, std::ref(workers[w]));
    body(workers[0]);
    for (std::thread& th : pool) th.join();
    if (failure) std::rethrow_exception(failure);
  }

  void run_task(const detail::SparseTask& t, Worker& wk) {
    switch (t.kind) {
      case detail::SparseTaskKind::s_assembly: s_assembly(t.front); break;
      case detail::SparseTaskKind::pack_assembly: pack_assembly(t.front, t.child); break;
      case detail::SparseTaskKind::factorize_front: factorize(t.front, wk); break;
      case detail::SparseTaskKind::factorize_panel:
        // The CPU kernel factors a whole front; it runs when the last panel is due (the
        // front is done, and its CB ready, at the end of that launch).
        if (t.panel + 1 == t.panels) factorize(t.front, wk);
        break;
    }
  }

  /// Allocates front f (zeroed) with the maps' placement.
  void allocate(I f) {
    Work& w = work[f];
    if (w.allocated) return;
    const FrontInfo& fr = an().fronts[f];
    w.allocated = true;
    for (const I c : fr.children) w.child_rows.push_back(an().fronts[c].cb_rows);
    w.row_source.assign(maps.row_source.begin() + maps.stack_ptr[f],
                        maps.row_source.begin() + maps.stack_ptr[f + 1]);
    w.row_key.assign(maps.row_key.begin() + maps.stack_ptr[f],
                     maps.row_key.begin() + maps.stack_ptr[f + 1]);
    set_row_at(w);
    Matrix<T>& qr = self.fronts_[f].qr;
    qr = Matrix<T>(fr.rows, width(f));
    std::fill(qr.data(), qr.data() + qr.ld() * qr.cols(), T(0));
    stage_bytes += fr.rows * width(f) * static_cast<I>(sizeof(T));
  }

  static void set_row_at(Work& w) {
    w.row_at.resize(w.row_source.size());
    for (std::size_t r = 0; r < w.row_source.size(); ++r) w.row_at[w.row_source[r]] = static_cast<I>(r);
  }

  /// Re-places front f's rows when child `ci` (index into children) passes `rows` CB rows
  /// instead of the placement's count (dead columns below it): new staircase order, rows
  /// already assembled moved to their new positions.
  void replace_rows(I f, std::size_t ci, I rows) {
    Work& w = work[f];
    const FrontInfo& fr = an().fronts[f];
    const I na = static_cast<I>(fr.a_rows.size());
    std::vector<I> old_first(fr.children.size()), new_first(fr.children.size());
    std::vector<I> counts = w.child_rows;
    counts[ci] = rows;
    for (std::size_t c = 0, o = na, n = na; c < fr.children.size(); ++c) {
      old_first[c] = static_cast<I>(o);
      new_first[c] = static_cast<I>(n);
      o += w.child_rows[c];
      n += counts[c];
    }
    auto new_stacked = [&](I s) {  // an old stacked row's index under the new counts
      if (s < na) return s;
      std::size_t c = fr.children.size() - 1;
      while (old_first[c] > s) --c;
      return new_first[c] + (s - old_first[c]);
    };
    std::vector<I> source, key;
    detail::place_front_rows(an(), maps, f, counts, source, key);
    Work nw;
    nw.allocated = true;
    nw.on_maps = false;
    nw.child_rows = std::move(counts);
    nw.row_source = std::move(source);
    nw.row_key = std::move(key);
    set_row_at(nw);
    Matrix<T>& qr = self.fronts_[f].qr;
    Matrix<T> grown(static_cast<I>(nw.row_source.size()), qr.cols());
    std::fill(grown.data(), grown.data() + grown.ld() * grown.cols(), T(0));
    for (I r = 0; r < qr.rows(); ++r) {
      const I to = nw.row_at[new_stacked(w.row_source[r])];
      for (I j = 0; j < qr.cols(); ++j) grown(to, j) = qr(r, j);
    }
    stage_bytes += (grown.rows() - qr.rows()) * qr.cols() * static_cast<I>(sizeof(T));
    qr = std::move(grown);
    w = std::move(nw);
  }

  /// S-Assembly: A's rows of front f from the packed tuples (and B's rows when carried).
  void s_assembly(I f) {
    allocate(f);
    const Work& w = work[f];
    Matrix<T>& qr = self.fronts_[f].qr;
    const I base = maps.stack_ptr[f];
    for (I t = maps.s_ptr[f]; t < maps.s_ptr[f + 1]; ++t) {
      const I r = w.on_maps ? maps.s_row[t] : w.row_at[maps.row_source[base + maps.s_row[t]]];
      qr(r, maps.s_col[t]) = a.values[maps.s_value[t]];
    }
    const FrontInfo& fr = an().fronts[f];
    const I ncols = static_cast<I>(fr.cols.size());
    for (std::size_t s = 0; s < fr.a_rows.size(); ++s)
      for (I j = 0; j < k; ++j) qr(w.row_at[s], ncols + j) = (*b)(fr.a_rows[s], j);
  }

  /// Pack-Assembly: child c's contribution block (upper trapezoidal, then its carried
  /// columns) into front p through Rimap/Rjmap; the block is freed.
  void pack_assembly(I p, I c) {
    if (!cb_resident[c])
      GPUQR_THROW(Error, "SparseQR: the contribution block of front " + std::to_string(c) +
                             " is not resident when its parent assembles it");
    allocate(p);
    const FrontInfo& fr = an().fronts[p];
    const std::size_t ci =
        std::find(fr.children.begin(), fr.children.end(), c) - fr.children.begin();
    const Matrix<T>& block = cb[c];
    if (block.rows() != work[p].child_rows[ci]) replace_rows(p, ci, block.rows());
    const Work& w = work[p];
    Matrix<T>& qr = self.fronts_[p].qr;
    const I ccols = an().fronts[c].cb_cols, ncols = static_cast<I>(fr.cols.size());
    const I* rimap = maps.pack_row.data() + maps.pack_row_ptr[c];
    const I* rjmap = maps.pack_col.data() + maps.pack_col_ptr[c];
    I first = static_cast<I>(fr.a_rows.size());
    for (std::size_t x = 0; x < ci; ++x) first += w.child_rows[x];
    for (I r = 0; r < block.rows(); ++r) {
      const I fr_row = w.on_maps ? rimap[r] : w.row_at[first + r];
      for (I t = r; t < ccols; ++t) qr(fr_row, rjmap[t]) = block(r, t);
      for (I j = 0; j < k; ++j) qr(fr_row, ncols + j) = block(r, ccols + j);
    }
    cb[c] = Matrix<T>();
    cb_resident[c] = 0;
  }

  /// Factorize: staircase QR of front f, then its R rows, contribution block and carried
  /// rows taken out; in Q-less mode the reflectors are dropped.
  void factorize(I f, Worker& wk) {
    allocate(f);
    const FrontInfo& fr = an().fronts[f];
    Front& out = self.fronts_[f];
    const Work& w = work[f];
    const I rows = out.qr.rows(), ncols = static_cast<I>(fr.cols.size());
    if (tol < 0 && rows != fr.rows)
      GPUQR_THROW(Error, "SparseQR: front row count disagrees with the analysis");
    out.rows = rows;
    out.row_source = w.row_source;
    std::vector<I> stair(static_cast<std::size_t>(ncols));
    for (I j = 0, r = 0; j < ncols; ++j) {
      while (r < rows && w.row_key[w.row_source[r]] <= j) ++r;
      stair[j] = r;
    }
    const I live = detail::staircase_qr(wk.ctx, out.qr, stair, fr.npiv, fr.cb_cols, tol, out.tau,
                                        out.pivot_row, wk.scratch);
    out.live = live;
    out.cb_rows = std::max<I>(0, std::min(rows - live, fr.cb_cols));
    if (tol < 0 && out.cb_rows != fr.cb_rows)
      GPUQR_THROW(Error, "SparseQR: contribution block size disagrees with the analysis");
    take_r_rows(f, wk.id);
    take_cb_and_carried(f);
    work[f] = Work();
    if (!self.keep_householder_) {  // Q-less: the reflectors are not needed any more
      out.qr = Matrix<T>();
      std::vector<T>().swap(out.tau);
      std::vector<I>().swap(out.row_source);
      return;
    }
    compact_reflectors(f, stair, out.qr.data(), out.qr.ld());
    out.qr = Matrix<T>();
  }

  /// Front f's pivot rows of R (exact zeros dropped, diagonal kept) into R's arrays, the
  /// entries outside R's structure into noise[f]. The values come from the host copy of the
  /// front (out.qr, column-major), or, when `packed` is given, from R's rows packed row after
  /// row (RPackDesc; rows [0, live), pivot i in front row i, as the device leaves them).
  void take_r_rows(I f, int w, const T* packed = nullptr) {
    Worker& wk = workers[static_cast<std::size_t>(w)];
    r_pattern(f, wk.structure);
    noise[f].clear();
    take_r_row_range(f, wk.structure, packed, 0, an().fronts[f].npiv, wk.rows, noise[f]);
  }

  /// R's row patterns of front f's pivots, complete (FrontRowStructure).
  void r_pattern(I f, detail::FrontRowStructure<T>& st) const {
    const FrontInfo& fr = an().fronts[f];
    std::vector<std::vector<I>> rows_at_pivot(static_cast<std::size_t>(fr.npiv));
    for (const I i : fr.a_rows) rows_at_pivot[an().row_leftmost[i] - fr.first_pivot].push_back(i);
    st.seed(an(), aq, f, rows_at_pivot);
    st.complete();
  }

  /// Pivot rows [i0, i1) of front f (see take_r_rows) with its complete pattern `st`; the
  /// entries outside the pattern are appended to `drop` in row and column order. Rows of one
  /// front may be taken by several threads at once (disjoint ranges; `buf` is the caller's).
  void take_r_row_range(I f, const detail::FrontRowStructure<T>& st, const T* packed, I i0,
                        I i1, std::vector<T>& buf, std::vector<Noise>& drop) {
    const FrontInfo& fr = an().fronts[f];
    const Front& out = self.fronts_[f];
    const I ncols = static_cast<I>(fr.cols.size());
    I* cols = self.r_cols_.data();
    T* values = self.r_values_.data();
    // Host fronts are read a block of kRows rows at a time, column by column into a row-major
    // buffer: reading one row across a tall column-major front touches a new page per entry.
    constexpr I kRows = 64;
    for (I b0 = i0; b0 < i1; b0 += kRows) {
      const I b1 = std::min(b0 + kRows, i1);
      if (packed == nullptr) {
        buf.assign(static_cast<std::size_t>((b1 - b0) * ncols), T(0));
        for (I t = b0; t < ncols; ++t)
          for (I i = b0; i < b1; ++i) {
            const I pr = out.pivot_row[i];
            if (pr >= 0) buf[static_cast<std::size_t>((i - b0) * ncols + t)] = out.qr(pr, t);
          }
      }
      for (I i = b0; i < b1; ++i) {
        const I row = fr.first_pivot + i;
        const I pr = out.pivot_row[i];
        // v[t], t >= i: row i's entry in front column t
        const T* v = packed != nullptr ? packed + detail::r_pack_offset(i, ncols) - i
                                       : buf.data() + (i - b0) * ncols;
        I at = row_start[row];
        const I end = row_start[row + 1];
        cols[at] = row;
        values[at] = pr >= 0 ? v[i] : T(0);
        ++at;
        if (pr >= 0) {
          for (I t = i + 1; t < ncols; ++t) {
            const T x = v[t];
            if (x == T(0)) continue;
            if (st.has(i, t)) {
              if (at == end) GPUQR_THROW(Error, "SparseQR: R's row exceeds its analysed pattern");
              cols[at] = fr.cols[t];
              values[at] = x;
              ++at;
            } else {
              drop.push_back({row, fr.cols[t], x});
            }
          }
        }
        kept[row] = at - row_start[row];
      }
    }
  }

  /// Front f's contribution block (rows live.., columns npiv.., upper trapezoidal, then the
  /// carried columns) into cb[f]; the carried columns of its R rows into c_r and of the rows
  /// R does not reach into tails[f].
  void take_cb_and_carried(I f) {
    take_cb(f);
    take_carried(f);
  }

  /// Front f's contribution block into cb[f] (upper trapezoidal, then the carried columns).
  void take_cb(I f) {
    const FrontInfo& fr = an().fronts[f];
    const Front& out = self.fronts_[f];
    const I live = out.live, ncols = static_cast<I>(fr.cols.size());
    if (fr.parent >= 0) {
      Matrix<T> block(out.cb_rows, fr.cb_cols + k);
      for (I t = 0; t < fr.cb_cols; ++t)
        for (I r = 0; r < out.cb_rows; ++r)
          block(r, t) = r <= t ? out.qr(live + r, fr.npiv + t) : T(0);
      for (I j = 0; j < k; ++j)
        for (I r = 0; r < out.cb_rows; ++r) block(r, fr.cb_cols + j) = out.qr(live + r, ncols + j);
      cb[f] = std::move(block);
      cb_resident[f] = 1;
    }
  }

  /// The carried columns of front f's R rows into c_r, of the rows R does not reach into
  /// tails[f]. Reads out.qr's carried columns only (they start at its column `first`: the
  /// front's columns on the CPU; 0 where a device copied out the carried columns alone).
  void take_carried(I f, I first = -1) {
    const FrontInfo& fr = an().fronts[f];
    const Front& out = self.fronts_[f];
    const I live = out.live;
    if (k == 0) return;
    const I c0 = first >= 0 ? first : static_cast<I>(fr.cols.size());
    for (I i = 0; i < fr.npiv; ++i) {
      const I pr = out.pivot_row[i];
      if (pr >= 0)
        for (I j = 0; j < k; ++j) c_r(fr.first_pivot + i, j) = out.qr(pr, c0 + j);
    }
    const I r0 = detail::first_residual_row(live, out.cb_rows, fr);
    Matrix<T> tail(out.rows - r0, k);
    for (I r = r0; r < out.rows; ++r)
      for (I j = 0; j < k; ++j) tail(r - r0, j) = out.qr(r, c0 + j);
    tails[f] = std::move(tail);
  }

  /// Front::block_at and block_rows for nrefl reflectors, reflector t reaching front row
  /// end_of(t) (exclusive); out.reflectors and out.tau sized to match (values not set).
  template <class End>
  static void layout_reflectors(Front& out, I nrefl, End&& end_of) {
    constexpr I nb = SparseQR<T>::kReflectorBlock;
    const I blocks = (nrefl + nb - 1) / nb;
    out.block_at.assign(static_cast<std::size_t>(blocks), 0);
    out.block_rows.assign(static_cast<std::size_t>(blocks), 0);
    I total = 0;
    for (I b = 0; b < blocks; ++b) {
      const I r0 = b * nb, t1 = std::min(nrefl, r0 + nb);
      I end = t1;  // every reflector has its head row
      for (I t = r0; t < t1; ++t) end = std::max(end, end_of(t));
      out.block_at[b] = total;
      out.block_rows[b] = end - r0;
      total += (end - r0) * (t1 - r0);
    }
    out.reflectors.resize(static_cast<std::size_t>(total));
    out.tau.resize(static_cast<std::size_t>(nrefl));
  }

  /// The kept reflectors of front f into its blocks (Front::reflectors), out of the
  /// factored front `qr` (column-major, leading dimension ld: out.qr, or a copy of the
  /// front). `stair` is the front's staircase (column j is zero below front row
  /// stair[j] before the QR, and so is its reflector after it). With dead columns reflector
  /// t comes from the t-th live pivot column, then the CB columns, as geqrf would have left
  /// them; carried columns are not reflectors.
  void compact_reflectors(I f, const std::vector<I>& stair, const T* qr, I ld) {
    const FrontInfo& fr = an().fronts[f];
    Front& out = self.fronts_[f];
    const I rows = out.rows, live = out.live, ncols = static_cast<I>(fr.cols.size());
    const bool detect = tol >= 0;
    const I nrefl = detect ? live + std::min(rows - live, fr.cb_cols) : std::min(rows, ncols);
    std::vector<I> source(static_cast<std::size_t>(nrefl));
    if (detect) {
      I t = 0;
      for (I i = 0; i < fr.npiv && t < nrefl; ++i)
        if (out.pivot_row[i] >= 0) source[t++] = i;
      for (I c = fr.npiv; t < nrefl; ++c) source[t++] = c;
    } else {
      for (I t = 0; t < nrefl; ++t) source[t] = t;
    }
    layout_reflectors(out, nrefl, [&](I t) { return std::min(rows, stair[source[t]]); });
    constexpr I nb = SparseQR<T>::kReflectorBlock;
    const I blocks = static_cast<I>(out.block_rows.size());
    for (I b = 0; b < blocks; ++b) {
      const I r0 = b * nb, t1 = std::min(nrefl, r0 + nb), h = out.block_rows[b];
      T* dst = out.reflectors.data() + out.block_at[b];
      for (I t = r0; t < t1; ++t, dst += h) {
        const T* col = qr + source[t] * ld;
        std::copy(col + r0, col + r0 + h, dst);
      }
    }
  }

  /// R's rows in postorder, the zero pivots, and C's tail rows in postorder. While every
  /// pivot so far (in column order) is nonzero, R's rows are those of the Cholesky factor of
  /// (AQ)^T(AQ) up to signs, whose structure bounds them: entries outside it are rounding
  /// noise of the dense front QR (relaxed fronts hold structural zeros) and are dropped. From
  /// the first zero or dead pivot on no such bound holds and every nonzero is kept.
  /// body(f) for every front f < nf, on the workers' threads (fronts in any order).
  template <class F>
  void for_fronts(I nf, F&& body) {
    const std::size_t nthreads = std::min<std::size_t>(workers.size(), static_cast<std::size_t>(nf));
    if (nthreads <= 1) {
      for (I f = 0; f < nf; ++f) body(f);
      return;
    }
    std::atomic<I> next{0};
    auto run = [&] {
      for (I f; (f = next.fetch_add(1)) < nf;) body(f);
    };
    std::vector<std::thread> pool;
    for (std::size_t w = 1; w < nthreads; ++w) pool.emplace_back(run);
    run();
    for (std::thread& th : pool) th.join();
  }

  void finish(Matrix<T>& c_tail, I& tail) {
    const I nf = static_cast<I>(an().fronts.size()), n = an().cols;
    auto& cols = self.r_cols_;
    auto& values = self.r_values_;
    I first_zero = n;
    for (I j = 0; j < n; ++j) {
      if (values[row_start[j]] == T(0)) {
        self.zero_pivots_.push_back(j);
        first_zero = std::min(first_zero, j);
      }
    }
    // R's final row starts: the structural nonzeros, and from the first zero pivot on the
    // noise too (no structure bounds those rows).
    std::vector<I> extra(static_cast<std::size_t>(n), 0);
    bool any_extra = false;
    if (first_zero < n) {
      for (I f = 0; f < nf; ++f)
        for (const Noise& e : noise[f])
          if (e.row >= first_zero) {
            ++extra[e.row];
            any_extra = true;
          }
    }
    std::vector<I> row_ptr(static_cast<std::size_t>(n) + 1, 0);
    bool in_place = !any_extra;
    for (I j = 0; j < n; ++j) {
      row_ptr[j + 1] = row_ptr[j] + kept[j] + extra[j];
      in_place = in_place && row_ptr[j + 1] == row_start[j + 1];
    }
    if (!in_place && !any_extra) {
      // Exact zeros left gaps: close them, moving rows left in order (a row's new place never
      // passes its old one, so nothing is overwritten before it is moved).
      for (I j = 0; j < n; ++j) {
        if (row_ptr[j] == row_start[j]) continue;
        std::copy(cols.begin() + row_start[j], cols.begin() + row_start[j] + kept[j],
                  cols.begin() + row_ptr[j]);
        std::copy(values.begin() + row_start[j], values.begin() + row_start[j] + kept[j],
                  values.begin() + row_ptr[j]);
      }
      cols.resize(static_cast<std::size_t>(row_ptr[n]));
      values.resize(static_cast<std::size_t>(row_ptr[n]));
    } else if (any_extra) {
      // Rows from the first zero pivot on merge their noise back in, by column.
      std::remove_reference_t<decltype(cols)> new_cols(static_cast<std::size_t>(row_ptr[n]));
      std::remove_reference_t<decltype(values)> new_values(static_cast<std::size_t>(row_ptr[n]));
      std::vector<std::pair<const Noise*, const Noise*>> row_noise(
          static_cast<std::size_t>(n), {nullptr, nullptr});
      for (I f = 0; f < nf; ++f) {
        const std::vector<Noise>& list = noise[f];
        for (std::size_t p = 0; p < list.size();) {
          std::size_t q = p;
          while (q < list.size() && list[q].row == list[p].row) ++q;
          row_noise[list[p].row] = {list.data() + p, list.data() + q};
          p = q;
        }
      }
      for_fronts(nf, [&](I f) {
        const FrontInfo& fr = an().fronts[f];
        for (I j = fr.first_pivot; j < fr.first_pivot + fr.npiv; ++j) {
          I at = row_ptr[j], p = row_start[j];
          const I pend = row_start[j] + kept[j];
          const Noise* e = j >= first_zero ? row_noise[j].first : nullptr;
          const Noise* eend = j >= first_zero ? row_noise[j].second : nullptr;
          while (p < pend || e != eend) {
            if (e == eend || (p < pend && cols[p] < e->col)) {
              new_cols[at] = cols[p];
              new_values[at] = values[p];
              ++p;
            } else {
              new_cols[at] = e->col;
              new_values[at] = e->value;
              ++e;
            }
            ++at;
          }
        }
      });
      cols = std::move(new_cols);
      values = std::move(new_values);
    } else {
      cols.resize(static_cast<std::size_t>(row_ptr[n]));
      values.resize(static_cast<std::size_t>(row_ptr[n]));
    }
    self.r_row_ptr_ = std::move(row_ptr);
    for (I f = 0; f < nf; ++f) {
      std::vector<Noise>().swap(noise[f]);
      for (I r = 0; r < tails[f].rows(); ++r, ++tail)
        for (I j = 0; j < k; ++j) c_tail(tail, j) = tails[f](r, j);
      tails[f] = Matrix<T>();
    }
  }
};

}  // namespace gpuqr
