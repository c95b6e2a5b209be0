// gpuqr/sparse_qr.hpp: sparse multifrontal QR factorization and least squares on the CPU.
//
// Built on the symbolic analysis of gpuqr/sparse_analysis.hpp. Each front (children first) is
// assembled from the rows of A whose leftmost permuted column is one of its pivots and from
// its children's contribution blocks, its rows are sorted into staircase order, and it is
// factorized by the library's dense QR (geqrf on a CPU Context). The first npiv rows of the
// front's R are rows first_pivot.. of R; the next cb_rows rows (the contribution block) go to
// the parent front.
//
// By default the Householder vectors and scalars of every front are kept, so solve() applies
// Q^T to its right-hand sides front by front in the same order (ormqr), then back-substitutes
// with R: one factorization serves any number of solves. Q-less mode
// (SparseQROptions::keep_householder = false), like SuiteSparseQR's [C, R] = qr(A, B): the
// right-hand sides B are given to the constructor and carried through every front as extra
// columns, so C = Q^T B comes out of the factorization itself, and each front's reflectors are
// discarded as soon as its R rows, contribution block and carried rows are taken out; only R,
// C and a few integers per front stay. solve_carried() then solves from C.
//
// Rank detection as SuiteSparseQR does it (Heath's method): with a tolerance tol >= 0 (by
// default SuiteSparseQR's 20 (m + n) eps max_j ||A(:, j)||_2), a pivot column whose norm over
// the rows still available in its front (at and below the front's next pivot row) is <= tol
// is "dead": that part of it is dropped (set to zero), it gets no Householder reflector and no
// R row (R(k, k) = 0 and row k of R is empty), and the front's next pivot column uses the same
// row. A front with d dead columns therefore passes up to d more rows to its parent than the
// analysis predicted (FrontInfo::rows and cb_rows are hints then, not the sizes used). Pivot
// columns are factored one by one (BLAS-2) when rank detection is on; with the tolerance off
// (SparseQROptions::tolerance < 0, other than -2) the 64-column blocked path is used and only
// exact zero pivots are reported (R(k, k) == 0 of the unpivoted QR; solve() then throws).
// With rank detection, solve() returns the basic solution (x = 0 on the dead columns).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpuqr/context.hpp"
#include "gpuqr/matrix.hpp"
#include "gpuqr/sparse.hpp"
#include "gpuqr/sparse_analysis.hpp"

namespace gpuqr {
namespace detail {

/// Memory for UninitAllocator: large blocks (4 MiB and more; GPUQR_HUGE_FROM_MB) 2 MiB-aligned
/// and, on Linux, advised to use transparent huge pages, so that their first touch faults once
/// per 2 MiB instead of once per 4 KiB page; smaller ones from operator new. Throws
/// std::bad_alloc.
void* uninit_allocate(std::size_t bytes);
void uninit_deallocate(void* p, std::size_t bytes) noexcept;

/// An allocator whose elements made without a value are left uninitialized: R's arrays (10^8
/// entries and more) are written in full by many threads before anything reads them, and
/// zeroing them first on one thread cost more than writing them.
template <class U>
struct UninitAllocator {
  using value_type = U;
  template <class V>
  struct rebind {
    using other = UninitAllocator<V>;
  };
  UninitAllocator() noexcept = default;
  template <class V>
  UninitAllocator(const UninitAllocator<V>&) noexcept {}
  U* allocate(std::size_t n) { return static_cast<U*>(uninit_allocate(n * sizeof(U))); }
  void deallocate(U* p, std::size_t n) noexcept { uninit_deallocate(p, n * sizeof(U)); }
  template <class V>
  bool operator==(const UninitAllocator<V>&) const noexcept { return true; }
  template <class V>
  bool operator!=(const UninitAllocator<V>&) const noexcept { return false; }
  template <class V>
  void construct(V* p) noexcept(std::is_nothrow_default_constructible_v<V>) {
    ::new (static_cast<void*>(p)) V;
  }
  template <class V, class... Args>
  void construct(V* p, Args&&... args) {
    ::new (static_cast<void*>(p)) V(std::forward<Args>(args)...);
  }
};

}  // namespace detail

/// Where SparseQR's numeric factorization runs when SparseQROptions::context is a CUDA
/// context (a CPU context always runs it on the CPU).
enum class SparsePlacement {
  /// By the analysis (the default): on the device when the problem's flops and arithmetic
  /// intensity reach SparseQROptions::gpu_min_flops and gpu_min_intensity, else on the CPU,
  /// where small problems are faster (factor_stats().fallback then says why).
  automatic,
  device,  ///< on the device, whatever the problem's size
  cpu,     ///< on the CPU (the context's device is not used)
};

/// Options of SparseQR.
struct SparseQROptions {
  /// Options of the symbolic analysis (ordering, amalgamation).
  SparseAnalysisOptions analysis;
  /// Rank-detection tolerance, as SuiteSparseQR's tol: -2 (the default) picks
  /// 20 (m + n) eps max_j ||A(:, j)||_2 (eps of T); any other negative value turns rank
  /// detection off; a value >= 0 is used as given (0 drops only exactly zero columns).
  double tolerance = -2;
  /// Keep every front's Householder vectors (the default), so that solve(B), apply_qt,
  /// apply_q and solve_transposed_min_norm work for any B after the factorization. false:
  /// Q-less mode: the vectors are discarded front by front (saving their memory, about the
  /// size of all the fronts); only the right-hand sides given to the constructor can be
  /// solved (solve_carried), and solve(B), apply_qt, apply_q and solve_transposed_min_norm
  /// throw InvalidArgument.
  bool keep_householder = true;
  /// Working-memory cap in bytes for the factorization's stages (0: none). The postordered
  /// front tree is cut into stages whose fronts, assembly maps and carried-in contribution
  /// blocks fit the cap (as the GPU factorization does with its device memory); the result
  /// does not depend on it (the same R bit for bit, rank and solutions). InvalidArgument when
  /// negative or below what one front needs (the message names the front and the bytes).
  /// Sizes come from the analysis; with rank detection, fronts above dead columns can exceed
  /// them (SparseFactorStats::peak_stage_bytes says what was held).
  std::int64_t memory_cap_bytes = 0;
  /// CPU threads for the numeric factorization (0: the hardware's). The independent tasks of a
  /// launch (fronts of different subtrees, their assemblies) run on up to this many threads,
  /// each with its own LAPACK context; the result is bit for bit that of one thread.
  int threads = 1;
  /// Where the numeric factorization runs. Context::cpu() (the default): the CPU twin of the
  /// scheduler, on `threads` threads. A CUDA context: every stage's fronts live in one device
  /// arena; S-Assembly, Pack-Assembly and the dense QR of every front (small fronts batched,
  /// large ones by the blocked GPU QR on their staircase blocks) run on the context's stream,
  /// R's rows (and, when kept, each front's reflectors) are copied to the host as their
  /// launch finishes; with no memory_cap_bytes the stages are sized to the device's free
  /// memory. A and B are host matrices as always. With rank detection on, a dead column
  /// found on the device makes the factorization run again on the CPU (factor_stats().fallback
  /// says so): the result is always the CPU's definition.
  Context context = Context::cpu();
  /// On a CUDA context: the device, the CPU, or (the default) whichever the analysis says is
  /// faster; see SparsePlacement.
  SparsePlacement placement = SparsePlacement::automatic;
  /// SparsePlacement::automatic's bars: the device takes problems of at least gpu_min_flops
  /// (SparseAnalysis::flops) and gpu_min_intensity (SparseAnalysis::intensity, flops per
  /// byte moved when every front is read and written once). Measured on an H100 against the
  /// CPU factorization on the host's 16 cores (docs/PERF.md, session 19): kept Householder
  /// vectors, grid2d:80 (1.65e8 flops, intensity 3.9) took 0.075 s on the device and 0.057
  /// on the CPU, grid3d:12 (3.0e8, 8.2) 0.045 and 0.049, grid2d:160 (1.6e9, 6.4) 0.158 and
  /// 0.257; every larger problem measured ran faster on the device. InvalidArgument when
  /// negative.
  double gpu_min_flops = 5e8;
  double gpu_min_intensity = 5;
};

namespace detail {
/// Why SparseQR with `options` runs its numeric factorization on the CPU although its
/// context is a CUDA one (`cuda`; options.context.is_cuda() in SparseQR): "" when it runs on
/// the device, and always "" when `cuda` is false; else SparsePlacement::cpu, or automatic
/// placement below its bars (the message names the bar).
std::string sparse_cpu_placement_reason(const SparseAnalysis& analysis,
                                        const SparseQROptions& options, bool cuda);
}  // namespace detail

/// How the factorization ran through the sparse scheduler (SparseQR::factor_stats()).
struct SparseFactorStats {
  std::int64_t stages = 0;    ///< stages of the memory cap
  std::int64_t launches = 0;  ///< launches of tasks (kernel launches on a GPU)
  std::int64_t tasks = 0;     ///< S-Assembly, Pack-Assembly and Factorize tasks run
  /// The largest working memory of a stage in bytes, counted as a device would hold it: the
  /// stage's fronts as assembled, their assembly maps and the carried-in contribution blocks.
  std::int64_t peak_stage_bytes = 0;
  /// Bytes of contribution blocks carried across stage boundaries (each moved out to the host
  /// at the end of its stage and back at the start of its parent's).
  std::int64_t carried_bytes = 0;
  /// Where the numeric factorization ran: "cpu" or "cuda".
  std::string ran_on = "cpu";
  /// Why a factorization asked for on a CUDA context ran on the CPU ("" when it did not).
  std::string fallback;
  /// Fronts factored by the batched QR and by the blocked dense QR (CUDA runs).
  std::int64_t batched_fronts = 0;
  std::int64_t dense_fronts = 0;
  /// Of the dense fronts, those factored by one geqrf call on the whole front (their
  /// staircase saves little); the others by blocks of columns on their staircase.
  std::int64_t whole_fronts = 0;
  /// Wall-clock seconds of the factorization's parts: the symbolic analysis; the plan (assembly
  /// maps, stages, schedule); the numeric factorization (on a device: with the uploads, the
  /// copies out and R's rows built on the host); of that, the host waiting for the device,
  /// copying between host and device, and turning fronts into R's rows (on the CPU twin this
  /// is inside the tasks); and the end (R's rows concatenated, C assembled).
  double analysis_seconds = 0;
  double plan_seconds = 0;
  double numeric_seconds = 0;
  double wait_seconds = 0;
  double copy_seconds = 0;
  double rows_seconds = 0;
  double finish_seconds = 0;
  /// Of the numeric time on a device: the host enqueuing the assemblies, the QR of the small
  /// fronts (batched) and of the large ones (blocked), and packing R's rows for the copy out.
  /// With GPUQR_SPARSE_PROFILE=1 in the environment the driver waits for the device after
  /// each, so these hold the device's time too (a diagnostic: it serializes host and device).
  /// Where a launch's dense fronts run on several lanes (streams and host threads), the small
  /// fronts' QR runs beside them and dense_qr_seconds includes it.
  double assembly_seconds = 0;
  double small_qr_seconds = 0;
  double dense_qr_seconds = 0;
  double pack_seconds = 0;
  /// Bytes of R's rows copied to the host packed (Q-less on a device).
  std::int64_t packed_bytes = 0;
  /// Of the numeric time on a device: allocating the page-locked host slots R's rows are
  /// copied into (in copy_seconds too), and releasing the device's buffers at the end.
  double host_alloc_seconds = 0;
  double release_seconds = 0;
};

/// The multifrontal QR factorization A Q = Q_H R of a sparse m x n matrix (any m, n) on the
/// CPU, with Q the fill-reducing column permutation of the analysis and Q_H orthogonal (kept
/// implicitly as per-front Householder reflectors). float and double are instantiated.
template <class T>
class SparseQR {
 public:
  /// Analyzes and factors `a` (validated: InvalidArgument for a malformed matrix or a NaN/Inf
  /// value, or from the analysis for bad options; NotCompiled for colamd/amd without
  /// SuiteSparse).
  explicit SparseQR(const CscMatrix<T>& a, const SparseQROptions& options = {});

  /// Analyzes and factors `a` carrying B (m x k, dense, host memory) through the fronts as
  /// extra columns, so that C = Q_H^T B (qtb()) is formed during the factorization, as
  /// SuiteSparseQR's [C, R] = qr(A, B) does; with options.keep_householder = false (Q-less)
  /// the reflectors are then discarded. Same errors as the constructor above, and
  /// InvalidArgument when B is not on the host, its row count differs from m, or it holds a
  /// NaN or Inf (checked before any work).
  SparseQR(const CscMatrix<T>& a, MatrixView<const T> b, const SparseQROptions& options = {});

  std::int64_t rows() const noexcept { return analysis_.rows; }
  std::int64_t cols() const noexcept { return analysis_.cols; }

  /// The symbolic analysis the factorization followed.
  const SparseAnalysis& analysis() const noexcept { return analysis_; }

  /// R: n x n upper triangular, the factor of A*Q (column k of R is permuted column k, i.e.
  /// original column column_permutation()[k]). Exact zeros off the diagonal are not stored;
  /// the diagonal is always stored (a zero there is a missing pivot).
  CscMatrix<T> r() const;

  /// q: permuted column k is original column q[k].
  const std::vector<std::int64_t>& column_permutation() const noexcept {
    return analysis_.column_permutation;
  }

  /// Permuted columns k with R(k, k) == 0, ascending: with rank detection the dead columns
  /// (permuted indices); without it the exact zero pivots of the unpivoted QR.
  const std::vector<std::int64_t>& zero_pivots() const noexcept { return zero_pivots_; }

  /// The same columns as zero_pivots() in original indices (column q[k] of A), ascending.
  std::vector<std::int64_t> dead_columns() const;

  /// Numerical rank: n minus the dead columns (minus the zero pivots without rank detection).
  std::int64_t rank() const noexcept {
    return cols() - static_cast<std::int64_t>(zero_pivots_.size());
  }

  /// The tolerance used (negative: rank detection off).
  double tolerance() const noexcept { return tol_; }

  /// min |R(k,k)| / max |R(k,k)| (0 with a zero pivot, 1 for n = 0): a cheap, rough
  /// indicator of 1/cond(A), as LstsqInfo::rcond_estimate.
  double rcond_estimate() const;

  /// Least-squares solutions X (n x nrhs) of min ||A X - B|| for B m x nrhs (dense, host
  /// memory), with the column permutation undone. Q^T B is formed front by front with the
  /// kept reflectors, then R Z = (Q^T B)(0:n) is solved by sparse back substitution and
  /// X(q[k], :) = Z(k, :). `residual_norms` (optional) receives ||B(:, j) - A X(:, j)||_2 from
  /// the parts of Q^T B that R does not reach. With rank detection and rank() < n, X is the
  /// basic solution: X(q[k], :) = 0 for the dead columns k, the others from the live part of
  /// R (the residual norms are then those of that solution, up to the dropped parts of A,
  /// whose column norms are <= tolerance()). Throws InvalidArgument when B's rows differ
  /// from m, B is not on the host, m < n (see min_norm_solve), or, without rank
  /// detection, R has a zero pivot (the message names the original column; see zero_pivots()),
  /// and in Q-less mode (the vectors were not kept: use solve_carried()).
  Matrix<T> solve(MatrixView<const T> b, std::vector<double>* residual_norms = nullptr) const;

  /// Q_H^T B for B m x k (dense, host memory): the orthogonal transformation of the
  /// factorization applied front by front with the kept reflectors, as solve() does. The
  /// result (m x k) is in the factorization's row order:
  ///  - rows 0 .. r_row_count()-1: the rows of R that have a reflector row, i.e. the pivots k
  ///    (permuted columns) whose front has a row for them, in ascending k. With rank()
  ///    == cols() <= rows() these are all n rows of R, row k of the result being row k of
  ///    R's right-hand side; with rank detection the dead columns (and, for m < n or a
  ///    structurally deficient front, the missing pivots) are skipped, so row t belongs to
  ///    the t-th live pivot.
  ///  - then each front's rows below its R rows and its contribution block (the rows R does
  ///    not reach), fronts in the analysis' postorder, each front's rows in its (staircase)
  ///    front order;
  ///  - then the empty rows of A (those in no front), ascending original row index,
  ///    unchanged.
  /// ||Q_H^T B(:, j)||_2 == ||B(:, j)||_2 to rounding; rows r_row_count().. hold the
  /// least-squares residual of a full-rank system. Throws InvalidArgument when B's rows
  /// differ from m, B is not on the host, or B holds a NaN or Inf, and in Q-less mode
  /// (keep_householder = false: the vectors were not kept; qtb() holds Q^T B for the B
  /// given to the constructor).
  Matrix<T> apply_qt(MatrixView<const T> b) const;

  /// Q_H C for C m x k in apply_qt's row order (dense, host memory); the result is in A's
  /// original row order. The inverse of apply_qt: apply_q(apply_qt(B)) == B to rounding.
  /// The fronts are run in reverse order with their reflectors (ormqr, no transpose) and the
  /// rows scattered back exactly inverse to apply_qt's gathering. Same errors as apply_qt
  /// (InvalidArgument in Q-less mode too).
  Matrix<T> apply_q(MatrixView<const T> c) const;

  /// The number of leading rows of apply_qt's result that are rows of R (pivots with a
  /// reflector row): rank() with rank detection; without it, n less the missing pivots
  /// (an exact zero pivot of the unpivoted QR keeps its row).
  std::int64_t r_row_count() const;

  /// With this the factorization of an M (rows() >= cols()) of full column rank, the
  /// minimum-norm solution X (rows() x k) of the underdetermined system M^T X = B, B
  /// cols() x k (dense, host). With M Q = Q_H R (Q the column permutation), M^T = Q R^T Q_H^T,
  /// so M^T x = b <=> R1^T z1 = Q^T b with z = Q_H^T x = [z1; z2] (R1 the leading n x n block
  /// of R); the minimum-norm x has z2 = 0: x = Q_H [R1^{-T} Q^T b; 0]. Throws InvalidArgument
  /// when B's rows differ from cols(), B is not on the host or holds a NaN/Inf, rows() <
  /// cols(), or rank() < cols() (the message names the rank), or in Q-less mode.
  Matrix<T> solve_transposed_min_norm(MatrixView<const T> b) const;

  /// The minimum-norm solution X (n x k) of A X = B for a sparse m x n A of full row rank
  /// (m <= n) and B m x k (dense, host): factors A^T (n x m, tall) with `options` and calls
  /// solve_transposed_min_norm. Throws InvalidArgument when B's rows differ from m, m > n,
  /// or A is not of full row rank (the numerical rank of the A^T factorization, named in the
  /// message, is < m; the default rank-detection tolerance applies).
  static Matrix<T> min_norm_solve(const CscMatrix<T>& a, MatrixView<const T> b,
                                  const SparseQROptions& options = {});

  /// Entries of R stored by r() (the diagonal always counts).
  std::int64_t nnz_r() const noexcept { return static_cast<std::int64_t>(r_values_.size()); }

  /// How the factorization ran: stages, launches, tasks, working memory (see
  /// SparseQROptions::memory_cap_bytes).
  const SparseFactorStats& factor_stats() const noexcept { return stats_; }

  /// Whether the Householder vectors were kept (SparseQROptions::keep_householder).
  bool keeps_householder() const noexcept { return keep_householder_; }

  /// C = Q_H^T B for the B given to the constructor (m x k, host memory, apply_qt's row
  /// order; m x 0 when no B was given), formed by carrying B through the fronts. With the
  /// Householder vectors kept it equals apply_qt(B) to rounding.
  const Matrix<T>& qtb() const noexcept { return qtb_; }

  /// Least-squares solutions X (n x k) for the B given to the constructor, from qtb() and R
  /// (works in both modes; the same solution as solve(B), basic solution with rank
  /// detection). `residual_norms` as in solve(). Throws InvalidArgument when m < n or, without
  /// rank detection, R has a zero pivot.
  Matrix<T> solve_carried(std::vector<double>* residual_norms = nullptr) const;

  /// Bytes of memory the factorization holds: R (values, column indices, row pointers), the
  /// kept fronts (each front's Householder vectors, which share its storage with R's rows and
  /// the contribution block, tau, row map) and C (qtb()). The analysis is not counted.
  std::int64_t stored_bytes() const noexcept;

 private:
  /// Kept reflectors are stored by blocks of this many (Front::reflectors).
  static constexpr std::int64_t kReflectorBlock = 64;

  /// One factored front: geqrf's output on the staircase-sorted front (`qr`, while it is
  /// worked on; released once its R rows, contribution block and carried rows are out), its
  /// tau, and where each front row came from (index into [a_rows, child 0's CB rows, child
  /// 1's, ...]); in Q-less mode tau and row_source are released too.
  ///
  /// The kept reflectors, reflector t with its head in front row t (geqrf's layout; with
  /// dead columns the dead pivot columns are left out), by blocks of kReflectorBlock: block
  /// b holds reflectors [b nb, min((b + 1) nb, tau.size())) on the front rows [b nb, b nb +
  /// block_rows[b]), column-major with ld = block_rows[b], from reflectors[block_at[b]].
  /// A block's rows end at the lowest row its columns' staircase reaches: the rows below
  /// are zero and not stored (on grid3d:45 the blocks hold 2.9 GB where the whole fronts
  /// held 13.4).
  struct Front {
    Matrix<T> qr;
    std::vector<T, detail::UninitAllocator<T>> reflectors;
    std::vector<std::int64_t> block_at, block_rows;
    std::vector<T> tau;
    std::vector<std::int64_t> row_source;
    std::int64_t rows = 0;     ///< front rows actually assembled
    std::int64_t live = 0;     ///< front rows holding pivot rows of R (0..live-1)
    std::int64_t cb_rows = 0;  ///< contribution block rows: live..live+cb_rows-1
    std::vector<std::int64_t> pivot_row;  ///< per pivot: its front row, -1 when missing/dead
  };

  SparseAnalysis analysis_;
  std::vector<Front> fronts_;
  /// R in compressed sparse row form (row k: permuted column indices ascending, diagonal
  /// first), kept for the back substitution and converted to CSC by r().
  std::vector<std::int64_t> r_row_ptr_;
  std::vector<std::int64_t, detail::UninitAllocator<std::int64_t>> r_cols_;
  std::vector<T, detail::UninitAllocator<T>> r_values_;
  std::vector<std::int64_t> zero_pivots_;
  double tol_ = -1;
  bool keep_householder_ = true;
  Matrix<T> qtb_;
  SparseFactorStats stats_;

  /// The CPU twin of the GPU factorization: runs the scheduler's launches stage by stage
  /// through the flat assembly maps (src/core/sparse_qr_twin.hpp).
  struct Twin;
  /// The same plan on a stage arena in a context's memory, the fronts' QR by the dense and
  /// batched QR of that context (src/core/sparse_qr_device.hpp).
  struct Device;
  /// The numeric factorization, B (m x k, checked) carried along when not null.
  void factor(const CscMatrix<T>& a, const MatrixView<const T>* b, const SparseQROptions& options);
  /// Throws InvalidArgument naming `who` when the reflectors were not kept.
  void require_householder(const char* who) const;
  /// X from Q^T B (apply_qt's order) and R: the back substitution shared by solve() and
  /// solve_carried(); `residual_norms` from the rows R does not reach.
  Matrix<T> solve_from_qtb(const Matrix<T>& qtb, std::vector<double>* residual_norms) const;
  /// InvalidArgument naming `who` when m < n, or R has a zero pivot without rank detection.
  void check_solvable(const char* who) const;
  /// qtb_ from the carried rows of R (c_r, by permuted column), the `tail` rows R does not
  /// reach (c_tail) and B's rows that are in no front.
  void assemble_qtb(const MatrixView<const T>* b, const Matrix<T>& c_r, const Matrix<T>& c_tail,
                    std::int64_t tail);

  /// Per permuted column k: its row in apply_qt's result, or -1 (no reflector row).
  std::vector<std::int64_t> qt_pivot_rows() const;
  void check_rhs(MatrixView<const T> b, std::int64_t rows, const char* who) const;
};

}  // namespace gpuqr
