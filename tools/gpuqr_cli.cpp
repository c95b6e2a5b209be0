// gpuqr: the command-line tool.
//
//   gpuqr lstsq A.mtx [b.mtx] [--backend auto|cpu|cuda] [--precision double|single]
//               [--repeat N] [--dense] [--verbose] [-o x.mtx]
//   gpuqr info
//
// Exit status: 0 success; 1 error (gpuqr::Error and the tool's own checks: "gpuqr: error: ..."),
// or no unique solution (R exactly singular); 2 usage error (unknown command or option).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include "gpuqr/accuracy.hpp"
#include "gpuqr/context.hpp"
#include "gpuqr/dense.hpp"
#include "gpuqr/error.hpp"
#include "gpuqr/io.hpp"
#include "gpuqr/matrix.hpp"
#include "gpuqr/sparse.hpp"
#include "gpuqr/sparse_analysis.hpp"
#include "gpuqr/sparse_qr.hpp"

#ifndef GPUQR_VERSION_STRING
#define GPUQR_VERSION_STRING "unknown"
#endif

namespace {

using namespace gpuqr;
using Clock = std::chrono::steady_clock;

// ---- errors of the tool itself ----------------------------------------------------------------

/// A command-line mistake: "gpuqr: <message>" and a pointer to the help, exit status 2.
class UsageError : public std::runtime_error {
 public:
  UsageError(const std::string& message, std::string command)
      : std::runtime_error(message), command_(std::move(command)) {}
  const std::string& command() const { return command_; }

 private:
  std::string command_;
};

/// A problem the tool finds in its input (m < n, b of the wrong shape): exit status 1.
class ToolError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---- help texts -------------------------------------------------------------------------------

const char* const kMainHelp =
    R"(usage: gpuqr <command> [options]

Dense Householder QR and least squares on an NVIDIA GPU (CUDA: cuSOLVER/cuBLAS) or the CPU
(LAPACKE/OpenBLAS).

commands:
  lstsq A.mtx [b.mtx]   solve min ||A x - b||_2 by QR; report time and accuracy
  info                  version, CUDA build and devices, CPU backend

options:
  -h, --help            this help; 'gpuqr <command> --help' for a command's options
  --version             print the version

exit status: 0 success, 1 error (or no unique least-squares solution), 2 usage error
)";

const char* const kLstsqHelp =
    R"(usage: gpuqr lstsq A.mtx [b.mtx] [options]

Solves min ||A x - b||_2 for A m x n with m >= n by Householder QR (A = Q R, x = R^-1 Q^T b,
gpuqr::HouseholderQR) and reports the time and the accuracy of x.

A and b are Matrix Market files (array or coordinate; real, integer or pattern; general,
symmetric or skew-symmetric). b must be m x 1.

A coordinate (sparse) A is solved by sparse multifrontal QR (gpuqr::SparseQR, COLAMD column
ordering; the natural ordering, with a note, in a build without SuiteSparse), never
densified: on the CUDA backend the fronts are assembled and factored on the GPU, on the CPU
backend by the CPU code. Its rank detection (as SuiteSparseQR's: a column whose
remaining norm is <= tol = 20 (m + n) eps max_j ||A(:, j)||_2 is dropped) reports the
numerical rank; when it is below n, x is the basic solution (zero on the dropped columns) and
the tool prints how many columns were dropped (on the GPU, a dropped column makes the
factorization run again on the CPU, and the tool says so). --dense densifies a sparse A and
uses the dense QR instead.

Without b the tool makes a problem whose solution is known:
  x_true(i) = 1 + i/n            (i = 0 .. n-1)
  b = A x_true + z               z orthogonal to range(A), ||z||_2 = 0.1 ||A x_true||_2
z is a fixed pseudo-random vector (seed 1) projected onto range(A)'s orthogonal complement
with a double-precision CPU QR of A, so x_true is the exact least-squares solution and the
residual is not zero (when m = n, z = 0). The relative error of x is then reported.

options:
  --backend auto|cpu|cuda    where to compute; auto (default): CUDA device 0 when one is
                             visible, else the CPU
  --precision double|single  arithmetic of the factorization and the solve (default double).
                             Files are read in double; single converts A and b to float.
                             The accuracy measures are always computed in double.
  --repeat N                 factor and solve N times; report the best time and the first
                             (default 1)
  --dense                    densify a sparse A and use the dense QR
  --verbose                  sparse path: also print the analysis (fronts, nnz(R), flops,
                             peak memory, arithmetic intensity, analysis and factor times)
  -o, --output x.mtx         write x (n x 1) as a Matrix Market array file
  -h, --help                 this help

report:
  time                 HouseholderQR::compute (factor) and ::solve on the context, waited
                       for; with CUDA the host<->device copies of A, b and x are timed apart.
                       Sparse path: factor = SparseQR's constructor (symbolic analysis and
                       numeric factorization), solve = SparseQR::solve
  ||A x - b||_2        the residual norm, in double against the double A and b
  optimality           ||A^T r||_2 / (||A||_F ||r||_2), r = b - A x: 0 at the exact solution;
                       a backward-stable solve gives a modest multiple of eps when ||r|| is
                       not tiny (it is rounding noise when the system is consistent)
  rank                 sparse path: the numerical rank, and the columns dropped (count, and
                       the first few, indices from 0)
  rcond estimate       min |R(i,i)| / max |R(i,i)| (sparse path: over the kept columns): an
                       upper bound on 1/cond_2(A) (of the kept columns), so a small
                       value proves ill-conditioning (a warning is printed), a moderate one
                       does not exclude it
  error                ||x - x_true||_2 / ||x_true||_2, when b was generated

Dense path: when R(i,i) is exactly zero (A rank deficient) there is no unique solution: x is
not computed, nothing is written, and the exit status is 1. The sparse path returns the basic
solution instead (exit status 0); the error against x_true is then not reported, since x_true
is one of many least-squares solutions.
)";

const char* const kInfoHelp =
    R"(usage: gpuqr info

Prints the gpuqr version, whether the CUDA backend is compiled in, the CUDA devices visible
(name, compute capability, SMs, memory) or why none is usable, the CPU context (OpenBLAS
configuration and threads), and the context that '--backend auto' picks.
)";

// ---- small helpers ----------------------------------------------------------------------------

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string fmt(const char* format, double v) {
  const int size = std::snprintf(nullptr, 0, format, v);
  if (size <= 0) return std::string();
  std::string out(static_cast<std::size_t>(size) + 1, '\0');
  std::snprintf(out.data(), out.size(), format, v);
  out.resize(static_cast<std::size_t>(size));
  return out;
}

/// "0.241 ms", "12.4 ms", "1.53 s".
std::string fmt_ms(double ms) {
  if (ms >= 1000.0) return fmt("%.3g s", ms / 1000.0);
  if (ms >= 100.0) return fmt("%.0f ms", ms);
  return fmt("%.3g ms", ms);
}

void field(const std::string& key, const std::string& value) {
  std::printf("  %-36s %s\n", key.c_str(), value.c_str());
}

void warn(const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "gpuqr: warning: %s\n", message.c_str());
}

const char* to_string(io::MmFormat f) {
  return f == io::MmFormat::coordinate ? "coordinate" : "array";
}
const char* to_string(io::MmField f) {
  switch (f) {
    case io::MmField::real: return "real";
    case io::MmField::integer: return "integer";
    case io::MmField::pattern: return "pattern";
  }
  return "?";
}
const char* to_string(io::MmSymmetry s) {
  switch (s) {
    case io::MmSymmetry::general: return "general";
    case io::MmSymmetry::symmetric: return "symmetric";
    case io::MmSymmetry::skew_symmetric: return "skew-symmetric";
  }
  return "?";
}

std::string shape(std::int64_t m, std::int64_t n) {
  return std::to_string(m) + " x " + std::to_string(n);
}

template <class To, class From>
Matrix<To> convert(MatrixView<const From> a) {
  Matrix<To> out(a.rows(), a.cols());
  for (std::int64_t j = 0; j < a.cols(); ++j)
    for (std::int64_t i = 0; i < a.rows(); ++i) out(i, j) = static_cast<To>(a(i, j));
  return out;
}

double norm2(const Matrix<double>& v) {
  double s = 0.0;
  for (std::int64_t i = 0; i < v.rows(); ++i) s += v(i, 0) * v(i, 0);
  return std::sqrt(s);
}

/// splitmix64: a tiny generator whose stream is the same on every platform.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  /// Uniform in [-1, 1).
  double uniform() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0;
  }

 private:
  std::uint64_t state_;
};

// ---- gpuqr lstsq ------------------------------------------------------------------------------

struct LstsqOptions {
  std::string a_path;
  std::string b_path;  // empty: generate b
  std::string out_path;
  BackendChoice backend = BackendChoice::automatic;
  bool single = false;
  int repeat = 1;
  bool dense = false;    // --dense: densify a sparse A on the CPU too
  bool verbose = false;  // --verbose: the sparse analysis
};

/// The problem in double on the host, as read (and densified) or generated.
struct Problem {
  std::int64_t m = 0, n = 0;
  /// Dense A: filled on the dense path (empty on the sparse path).
  Matrix<double> a;
  /// Sparse A: filled for a coordinate file (kept on the dense path too).
  std::optional<CscMatrix<double>> sparse;
  /// Whether the sparse multifrontal QR solves it (CPU backend, coordinate file, no --dense).
  bool sparse_path = false;
  ColumnOrdering ordering = ColumnOrdering::colamd;
  Matrix<double> b;
  std::optional<Matrix<double>> x_true;
};

const char* ordering_name(ColumnOrdering ordering) {
  switch (ordering) {
    case ColumnOrdering::colamd: return "COLAMD";
    case ColumnOrdering::amd: return "AMD";
    case ColumnOrdering::natural: return "natural column ordering";
    case ColumnOrdering::given: return "given column ordering";
  }
  return "?";
}

/// SparseQR with the problem's ordering; COLAMD missing (NotCompiled) switches the problem to
/// the natural ordering with a note.
template <class T>
SparseQR<T> sparse_factor(const CscMatrix<T>& a, Problem& p, const Context& ctx = Context::cpu()) {
  SparseQROptions options;
  options.analysis.ordering = p.ordering;
  options.context = ctx;
  // The tool's --backend says where to run (auto: the GPU when there is one), so small
  // problems stay on the device too; SparseQR's own default would place them on the CPU.
  options.placement = SparsePlacement::device;
  try {
    return SparseQR<T>(a, options);
  } catch (const NotCompiled&) {
    if (p.ordering == ColumnOrdering::natural) throw;
    field("note", std::string(ordering_name(p.ordering)) +
                      " not compiled in (no SuiteSparse): natural column ordering instead");
    p.ordering = ColumnOrdering::natural;
    options.analysis.ordering = p.ordering;
    return SparseQR<T>(a, options);
  }
}

/// y = A x for sparse A (double), x n x 1.
Matrix<double> sparse_times(const CscMatrix<double>& a, const Matrix<double>& x) {
  Matrix<double> y(a.rows, 1);
  for (std::int64_t i = 0; i < a.rows; ++i) y(i, 0) = 0.0;
  for (std::int64_t j = 0; j < a.cols; ++j) {
    const double xj = x(j, 0);
    for (std::int64_t k = a.col_ptr[j]; k < a.col_ptr[j + 1]; ++k)
      y(a.row_indices[k], 0) += a.values[k] * xj;
  }
  return y;
}

/// z = (I - Q Q^T) w by the sparse QR: z = w - A x_ls(w), done twice (the second pass removes
/// what rounding left of range(A)). With A rank deficient, x_ls is the basic solution: A x_ls
/// is still w's projection onto range(A) (up to the dropped columns, of norm <= tol).
void project_sparse(Problem& p, Matrix<double>& z) {
  const SparseQR<double> qr = sparse_factor<double>(*p.sparse, p);
  for (int pass = 0; pass < 2; ++pass) {
    const Matrix<double> y = qr.solve(z.view());
    const Matrix<double> ay = sparse_times(*p.sparse, y);
    for (std::int64_t i = 0; i < z.rows(); ++i) z(i, 0) -= ay(i, 0);
  }
}

void densify(Problem& p);

/// b = A x_true + z with z orthogonal to range(A), ||z|| = 0.1 ||A x_true|| (see the help).
/// On the sparse path z is projected with a double SparseQR of A.
void generate_rhs(Problem& p) {
  const std::int64_t m = p.m, n = p.n;
  Matrix<double> x_true(n, 1);
  for (std::int64_t i = 0; i < n; ++i) x_true(i, 0) = 1.0 + static_cast<double>(i) / n;

  // z = (I - Q Q^T) w with Q the first n columns of A's Householder Q (double, CPU).
  Matrix<double> z(m, 1);
  SplitMix64 rng(1);
  for (std::int64_t i = 0; i < m; ++i) z(i, 0) = rng.uniform();
  const double w_norm = norm2(z);
  if (p.sparse_path) {
    project_sparse(p, z);
  } else {
    HouseholderQR<double> qr(Context::cpu(), p.a.view());
    qr.apply_q(Side::left, Op::trans, z.view());
    for (std::int64_t i = 0; i < n; ++i) z(i, 0) = 0.0;
    qr.apply_q(Side::left, Op::no_trans, z.view());
  }

  Matrix<double> b(m, 1);
  if (p.sparse_path) {
    b = sparse_times(*p.sparse, x_true);
  } else {
    for (std::int64_t i = 0; i < m; ++i) b(i, 0) = 0.0;
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i) b(i, 0) += p.a(i, j) * x_true(j, 0);
  }
  const double z_norm = norm2(z), ax_norm = norm2(b);
  if (m > n && z_norm > 1e-8 * w_norm && ax_norm > 0.0) {
    const double scale = 0.1 * ax_norm / z_norm;
    for (std::int64_t i = 0; i < m; ++i) b(i, 0) += scale * z(i, 0);
    field("right-hand side", "generated: b = A x_true + z, x_true(i) = 1 + i/n,");
    field("", "z orthogonal to range(A), ||z|| = 0.1 ||A x_true||");
  } else {
    field("right-hand side", "generated: b = A x_true, x_true(i) = 1 + i/n (m = n: no residual)");
  }
  p.b = std::move(b);
  p.x_true = std::move(x_true);
}

/// Throws ToolError when the dense m x n double matrix would not fit in this machine's memory
/// (a large sparse file would otherwise be densified into swapping or the OOM killer).
void check_fits_in_memory(std::int64_t m, std::int64_t n) {
  const double bytes = 8.0 * static_cast<double>(m) * static_cast<double>(n);
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return;  // unknown: let the allocation decide
  const double physical = static_cast<double>(pages) * static_cast<double>(page_size);
  // The tool holds A about three times (as read, in double, in the solver's precision).
  if (3.0 * bytes > physical) {
    constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
    throw ToolError("densifying A (" + shape(m, n) + ") needs " +
                    fmt("%.1f GiB per copy, too much for this machine's ", bytes / kGiB) +
                    fmt("%.1f GiB of memory (the sparse QR, used for a ", physical / kGiB) +
                    "sparse A on the CPU backend without --dense, never densifies)");
  }
}

/// Densifies the sparse A for the dense path (checking it fits in memory).
void densify(Problem& p) {
  check_fits_in_memory(p.m, p.n);
  p.a = p.sparse->to_dense();
  p.sparse_path = false;
}

Problem load_problem(const LstsqOptions& o, bool on_device) {
  Problem p;
  const auto t0 = Clock::now();
  io::MatrixMarket mm = io::read_matrix_market(o.a_path);
  const double read_ms = ms_since(t0);
  const std::int64_t m = mm.rows, n = mm.cols;
  std::printf("gpuqr lstsq %s\n", o.a_path.c_str());
  std::string what = shape(m, n) + ", " + to_string(mm.format) + " " + to_string(mm.field) +
                     " " + to_string(mm.symmetry);
  if (mm.is_sparse()) {
    const double entries = static_cast<double>(m) * static_cast<double>(n);
    what += ", " + std::to_string(mm.sparse.nnz()) + " nonzeros";
    if (entries > 0) what += fmt(" (%.2g%% dense)", 100.0 * mm.sparse.nnz() / entries);
  }
  field("A", what);
  if (mm.field == io::MmField::pattern) field("", "pattern file: every entry read as 1");
  p.m = m;
  p.n = n;
  if (mm.is_sparse()) {
    if (o.dense) {
      field("note", "sparse input densified (--dense)");
    } else {
      p.sparse_path = true;
      p.ordering = sparse_orderings_available() ? ColumnOrdering::colamd
                                                : ColumnOrdering::natural;
      field("method", std::string("sparse multifrontal QR (") + (on_device ? "GPU" : "CPU") +
                          "), " + ordering_name(p.ordering));
      if (p.ordering == ColumnOrdering::natural) {
        field("note", "COLAMD not compiled in (gpuqr built without SuiteSparse): natural "
                      "column ordering");
      }
    }
  }
  if (m == 0 || n == 0) throw ToolError("A is " + shape(m, n) + ": nothing to solve");
  if (m < n) {
    throw ToolError("A is " + shape(m, n) +
                    " with fewer rows than columns (m < n): least squares by QR needs "
                    "m >= n; underdetermined (minimum-norm) problems are not supported yet");
  }
  if (mm.is_sparse()) p.sparse = std::move(mm.sparse);
  if (p.sparse_path) {
    // A stays sparse: nothing of size m x n is allocated.
  } else if (p.sparse) {
    densify(p);
  } else {
    check_fits_in_memory(m, n);
    p.a = std::move(mm.dense);
  }

  if (!o.b_path.empty()) {
    const auto t1 = Clock::now();
    io::MatrixMarket mb = io::read_matrix_market(o.b_path);
    if (mb.rows != m || mb.cols != 1) {
      throw ToolError(o.b_path + " is " + shape(mb.rows, mb.cols) + ", but A has " +
                      std::to_string(m) + " rows: b must be " + shape(m, 1));
    }
    p.b = mb.to_dense();
    field("right-hand side", o.b_path + " (" + to_string(mb.format) + " " +
                                 to_string(mb.field) + ")");
    field("read", fmt_ms(read_ms + ms_since(t1)));
  } else {
    field("read", fmt_ms(read_ms));
    generate_rhs(p);
  }
  return p;
}

struct Timing {
  double h2d = 0.0;
  double factor = 0.0;
  double solve = 0.0;
  double d2h = 0.0;
  double compute() const { return factor + solve; }
};

/// The run with the least compute time.
const Timing& best_run(const std::vector<Timing>& runs) {
  return *std::min_element(runs.begin(), runs.end(), [](const Timing& l, const Timing& r) {
    return l.compute() < r.compute();
  });
}

/// "factor F + solve S = T", with "(best of N; first F)" for repeated runs.
std::string describe_runs(const std::vector<Timing>& runs) {
  const Timing& first = runs.front();
  const Timing& best = best_run(runs);
  std::string time = "factor " + fmt_ms(best.factor) + " + solve " + fmt_ms(best.solve) + " = " +
                     fmt_ms(best.compute());
  if (runs.size() > 1) {
    time += " (best of " + std::to_string(runs.size()) + "; first " +
            fmt_ms(first.compute()) + ")";
  }
  return time;
}

/// The accuracy lines, the rcond warnings and -o, shared by the dense and the sparse path.
template <class T>
int report_accuracy(const Problem& p, const LstsqOptions& o, const Matrix<T>& x,
                    const Matrix<double>& xd, double r_norm, double optimality, double rcond) {
  const double b_norm = norm2(p.b);
  field("||A x - b||_2", fmt("%.6e", r_norm) +
                             (b_norm > 0.0 ? fmt(" (%.3g ||b||_2)", r_norm / b_norm) : ""));
  std::string opt_text = fmt("%.3e", optimality);
  if (b_norm > 0.0 && r_norm <= 1e3 * accuracy::eps<T>() * b_norm) {
    opt_text += " (r is at rounding level: not informative)";
  }
  field("||A^T r||_2 / (||A||_F ||r||_2)", opt_text);
  field("rcond estimate (min/max |R(i,i)|)", fmt("%.3e", rcond));
  if (p.x_true) {
    field("||x - x_true||_2 / ||x_true||_2",
          fmt("%.3e", accuracy::relative_difference<double>(xd.view(), p.x_true->view())));
  }

  const double eps = accuracy::eps<T>();
  if (rcond <= 1e2 * eps) {
    warn(fmt("rcond estimate %.2e is below 100 eps: A is numerically rank deficient "
             "in this precision and x is dominated by rounding errors",
             rcond));
  } else if (rcond < std::sqrt(eps)) {
    warn(fmt("rcond estimate %.2e is small: A is ill-conditioned ", rcond) +
         fmt("(cond_2(A) >= 1/rcond = %.1e): x may lose ",
             1.0 / rcond) +
         fmt("%.0f or more of its ", std::log10(1.0 / rcond)) +
         fmt("%.0f significant digits", -std::log10(eps)));
  }

  if (!o.out_path.empty()) {
    io::write_matrix_market(o.out_path, x.view());
    field("x written to", o.out_path);
  }
  return 0;
}

template <class T>
int solve_and_report(const Context& ctx, const Problem& p, const LstsqOptions& o) {
  const bool on_device = ctx.is_cuda();
  field("precision", std::string(o.single ? "single" : "double") +
                         fmt(" (eps %.2g)", accuracy::eps<T>()));
  field("backend", ctx.describe());

  // The solver's inputs in T on the host (for double a plain copy: one code path).
  const Matrix<T> a = convert<T, double>(p.a.view());
  const Matrix<T> b = convert<T, double>(p.b.view());

  std::vector<Timing> runs;
  LstsqInfo info;
  Matrix<T> x;
  for (int r = 0; r < o.repeat; ++r) {
    Timing t;
    Matrix<T> a_dev, b_dev;
    MatrixView<const T> a_in = a.view(), b_in = b.view();
    if (on_device) {
      const auto t0 = Clock::now();
      a_dev = Matrix<T>::copy_of(a.view(), MemorySpace::device, ctx.device());
      b_dev = Matrix<T>::copy_of(b.view(), MemorySpace::device, ctx.device());
      t.h2d = ms_since(t0);
      a_in = a_dev.view();
      b_in = b_dev.view();
    }
    HouseholderQR<T> qr(ctx);
    const auto t1 = Clock::now();
    qr.compute(a_in);
    ctx.synchronize();
    t.factor = ms_since(t1);
    const auto t2 = Clock::now();
    Matrix<T> x_ctx = qr.solve(b_in, &info);
    ctx.synchronize();
    t.solve = ms_since(t2);
    if (on_device) {
      const auto t3 = Clock::now();
      x = x_ctx.to_host();
      t.d2h = ms_since(t3);
    } else {
      x = std::move(x_ctx);
    }
    runs.push_back(t);
  }

  const Timing& best = best_run(runs);
  const std::string time = describe_runs(runs);
  field(on_device ? "time on the GPU" : "time", time);
  if (on_device && runs.size() == 1) {
    field("", "(one cold run: includes one-time CUDA setup; --repeat N for warm timings)");
  }
  if (on_device) {
    field("host<->device copies", "A, b to the device " + fmt_ms(best.h2d) +
                                      ", x back " + fmt_ms(best.d2h));
  }

  if (info.singular()) {
    field("solution", "not computed: R(" + std::to_string(info.singular_at) + ", " +
                          std::to_string(info.singular_at) + ") is exactly zero");
    warn("R(" + std::to_string(info.singular_at) + ", " + std::to_string(info.singular_at) +
         ") is exactly zero (indices from 0): A is rank deficient (column " +
         std::to_string(info.singular_at) +
         (info.singular_at == 0 ? std::string(" is zero")
                                : std::string(" lies in the span of the columns before it")) +
         ") and the least-squares problem has no unique solution; x was not computed" +
         (o.out_path.empty() ? std::string() : " and " + o.out_path + " not written"));
    return 1;
  }

  // Accuracy, in double against the problem as read.
  const Matrix<double> xd = convert<double, T>(x.view());
  const double r_norm = accuracy::residual_norm<double>(p.a.view(), xd.view(), p.b.view());
  const double optimality =
      accuracy::normal_equations_residual<double>(p.a.view(), xd.view(), p.b.view());
  return report_accuracy<T>(p, o, x, xd, r_norm, optimality, info.rcond_estimate);
}

/// The rank line of the sparse path: rank, tolerance and the dropped columns (count, the
/// first few). With rank < n, x is the basic solution and x_true (if generated) is one of
/// many solutions: its error is not reported.
template <class T>
void report_rank(const SparseQR<T>& qr, Problem& p) {
  const std::vector<std::int64_t> dead = qr.dead_columns();
  std::string text = std::to_string(qr.rank()) + " of " + std::to_string(p.n) +
                     fmt(" (tolerance %.2e)", qr.tolerance());
  field("rank", text);
  if (dead.empty()) return;
  std::string cols;
  for (std::size_t i = 0; i < dead.size() && i < 8; ++i)
    cols += (i ? ", " : "") + std::to_string(dead[i]);
  if (dead.size() > 8) cols += ", ...";
  field("dropped columns", std::to_string(dead.size()) + " (" + cols +
                               "; indices from 0): x is the basic solution, 0 there");
  if (p.x_true) {
    field("note", "A is rank deficient: x_true is one of many least-squares solutions, so "
                  "the error against it is not reported");
    p.x_true.reset();
  }
}

/// min |R(k,k)| / max |R(k,k)| over the kept (nonzero) pivots: the rcond estimate of the
/// columns the basic solution uses (1 when none).
template <class T>
double live_rcond(const SparseQR<T>& qr) {
  const CscMatrix<T> r = qr.r();
  double lo = INFINITY, hi = 0.0;
  for (std::int64_t j = 0; j < r.cols; ++j) {
    const std::int64_t last = r.col_ptr[j + 1] - 1;  // the diagonal ends each column
    const double d = std::abs(static_cast<double>(r.values[last]));
    if (d == 0.0) continue;
    lo = std::min(lo, d);
    hi = std::max(hi, d);
  }
  return hi > 0.0 ? lo / hi : 1.0;
}

/// The sparse path (CPU): SparseQR<T> factors (analysis included) and solves; the accuracy is
/// measured with sparse products in double. A rank-deficient A gets the basic solution.
template <class T>
int solve_sparse(const Context& ctx, Problem& p, const LstsqOptions& o) {
  const CscMatrix<T> a = p.sparse->template cast<T>();
  const Matrix<T> b = convert<T, double>(p.b.view());

  std::vector<Timing> runs;
  std::optional<SparseQR<T>> qr;
  std::vector<double> residual_norms;
  Matrix<T> x;
  for (int r = 0; r < o.repeat; ++r) {
    Timing t;
    const auto t1 = Clock::now();
    qr.reset();
    qr.emplace(sparse_factor<T>(a, p, ctx));
    t.factor = ms_since(t1);
    const auto t2 = Clock::now();
    x = qr->solve(b.view(), &residual_norms);
    t.solve = ms_since(t2);
    runs.push_back(t);
  }

  field("precision", std::string(o.single ? "single" : "double") +
                         fmt(" (eps %.2g)", accuracy::eps<T>()));
  field("backend", ctx.describe());
  if (!qr->factor_stats().fallback.empty()) field("note", qr->factor_stats().fallback);
  const Timing& best = best_run(runs);
  const std::string time = describe_runs(runs);
  field("time", time);
  report_rank(*qr, p);

  if (o.verbose) {
    const SparseAnalysis& an = qr->analysis();
    // The analysis alone, timed apart (SparseQR's constructor runs it, then factors).
    SparseAnalysisOptions analysis_options;
    analysis_options.ordering = p.ordering;
    const auto t0 = Clock::now();
    (void)analyze_sparse_qr(a, analysis_options);
    const double analysis_ms = ms_since(t0);
    std::int64_t max_rows = 0, max_cols = 0;
    double max_size = -1.0;
    for (const FrontInfo& f : an.fronts) {
      const double size = static_cast<double>(f.rows) * static_cast<double>(f.cols.size());
      if (size > max_size) {
        max_size = size;
        max_rows = f.rows;
        max_cols = static_cast<std::int64_t>(f.cols.size());
      }
    }
    const double mib = 1024.0 * 1024.0;
    field("fronts", std::to_string(an.fronts.size()) + " (largest " + shape(max_rows, max_cols) +
                        ")");
    field("nnz(R)", std::to_string(qr->nnz_r()) + " stored (analysis: " +
                        std::to_string(an.nnz_r) + fmt(", %.2g per column)",
                                                       static_cast<double>(an.nnz_r) / p.n));
    field("flops", fmt("%.3g", an.flops));
    field("peak memory (fronts + pending CBs)", an.memory_bytes >= mib
                                                    ? fmt("%.3g MiB", an.memory_bytes / mib)
                                                    : fmt("%.3g KiB", an.memory_bytes / 1024.0));
    field("arithmetic intensity", fmt("%.3g flop/byte", an.intensity));
    field("analysis time", fmt_ms(analysis_ms) + " (timed apart)");
    field("numeric factorization time",
          fmt_ms(std::max(0.0, best.factor - analysis_ms)) + " (factor time - analysis time)");
  }

  // Accuracy, in double against the problem as read, with sparse products (no dense copy).
  const CscMatrix<double>& ad = *p.sparse;
  const Matrix<double> xd = convert<double, T>(x.view());
  Matrix<double> res = sparse_times(ad, xd);
  for (std::int64_t i = 0; i < p.m; ++i) res(i, 0) = p.b(i, 0) - res(i, 0);
  const double r_norm = norm2(res);
  double atr2 = 0.0, a_norm2 = 0.0;
  for (std::int64_t j = 0; j < p.n; ++j) {
    double s = 0.0;
    for (std::int64_t k = ad.col_ptr[j]; k < ad.col_ptr[j + 1]; ++k) {
      s += ad.values[k] * res(ad.row_indices[k], 0);
      a_norm2 += ad.values[k] * ad.values[k];
    }
    atr2 += s * s;
  }
  const double optimality = (r_norm == 0.0 || a_norm2 == 0.0)
                                ? 0.0
                                : std::sqrt(atr2) / (std::sqrt(a_norm2) * r_norm);
  return report_accuracy<T>(p, o, x, xd, r_norm, optimality, live_rcond(*qr));
}

int cmd_lstsq(const std::vector<std::string>& args) {
  LstsqOptions o;
  std::vector<std::string> positional;
  bool options_done = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (options_done || arg.size() < 2 || arg[0] != '-') {
      positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_done = true;
      continue;
    }
    std::string name = arg, value;
    bool inline_value = false;
    const auto eq = arg.find('=');
    if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      inline_value = true;
    }
    auto take_value = [&]() -> std::string {
      if (inline_value) return value;
      if (i + 1 >= args.size()) throw UsageError("option " + name + " needs a value", "lstsq");
      return args[++i];
    };
    if (name == "-h" || name == "--help") {
      if (inline_value) throw UsageError("option --help takes no value", "lstsq");
      std::fputs(kLstsqHelp, stdout);
      return 0;
    } else if (name == "--backend") {
      const std::string v = take_value();
      try {
        o.backend = parse_backend_choice(v);
      } catch (const InvalidArgument& e) {
        throw UsageError(e.message(), "lstsq");
      }
    } else if (name == "--precision") {
      const std::string v = take_value();
      if (v == "double") {
        o.single = false;
      } else if (v == "single" || v == "float") {
        o.single = true;
      } else {
        throw UsageError("unknown precision '" + v + "': expected double or single", "lstsq");
      }
    } else if (name == "--repeat") {
      const std::string v = take_value();
      char* end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n < 1 || n > 1000000) {
        throw UsageError("--repeat needs a count >= 1, got '" + v + "'", "lstsq");
      }
      o.repeat = static_cast<int>(n);
    } else if (name == "--dense" || name == "--verbose") {
      if (inline_value) throw UsageError("option " + name + " takes no value", "lstsq");
      (name == "--dense" ? o.dense : o.verbose) = true;
    } else if (name == "-o" || name == "--output") {
      o.out_path = take_value();
      if (o.out_path.empty()) throw UsageError("option " + name + " needs a file name", "lstsq");
    } else {
      throw UsageError("unknown option '" + arg + "'", "lstsq");
    }
  }
  if (positional.empty()) throw UsageError("missing the matrix file A.mtx", "lstsq");
  if (positional.size() > 2) {
    throw UsageError("too many files: expected A.mtx [b.mtx], got '" + positional[2] + "' too",
                     "lstsq");
  }
  o.a_path = positional[0];
  if (positional.size() == 2) o.b_path = positional[1];

  // The context first: a bad --backend cuda fails before any reading.
  const Context ctx = Context::from_choice(o.backend);
  Problem p = load_problem(o, ctx.is_cuda());
  if (p.sparse_path)
    return o.single ? solve_sparse<float>(ctx, p, o) : solve_sparse<double>(ctx, p, o);
  return o.single ? solve_and_report<float>(ctx, p, o) : solve_and_report<double>(ctx, p, o);
}

// ---- gpuqr info -------------------------------------------------------------------------------

int cmd_info(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "-h" || arg == "--help") {
      std::fputs(kInfoHelp, stdout);
      return 0;
    }
    if (!arg.empty() && arg[0] == '-') throw UsageError("unknown option '" + arg + "'", "info");
    throw UsageError("unexpected argument '" + arg + "'", "info");
  }
  std::printf("gpuqr %s\n", GPUQR_VERSION_STRING);
  field("CUDA backend", cuda_compiled() ? "compiled" : "not compiled (CPU-only build)");
  const std::vector<DeviceInfo> devices = cuda_devices();
  if (devices.empty()) {
    field("CUDA devices", "none usable: " + cuda_unavailable_reason());
  } else {
    for (const DeviceInfo& d : devices) {
      field("cuda:" + std::to_string(d.index),
            d.name + ", compute capability " + std::to_string(d.compute_major) + "." +
                std::to_string(d.compute_minor) + ", " + std::to_string(d.multiprocessors) +
                " SMs, " +
                fmt("%.1f GiB", static_cast<double>(d.total_memory_bytes) / (1024.0 * 1024.0 *
                                                                               1024.0)));
    }
  }
  field("CPU context", Context::cpu().describe());
  try {
    field("--backend auto picks", Context::best().describe());
  } catch (const Error& e) {
    field("--backend auto picks", std::string("nothing usable: ") + e.what());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.empty()) {
      std::fputs(kMainHelp, stderr);
      return 2;
    }
    const std::string& command = args[0];
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (command == "-h" || command == "--help" || command == "help") {
      if (command == "help" && !rest.empty()) {
        if (rest[0] == "lstsq") return cmd_lstsq({"--help"});
        if (rest[0] == "info") return cmd_info({"--help"});
        throw UsageError("no help for unknown command '" + rest[0] + "'", "");
      }
      std::fputs(kMainHelp, stdout);
      return 0;
    }
    if (command == "--version") {
      std::printf("gpuqr %s\n", GPUQR_VERSION_STRING);
      return 0;
    }
    if (command == "lstsq") return cmd_lstsq(rest);
    if (command == "info") return cmd_info(rest);
    if (!command.empty() && command[0] == '-') {
      throw UsageError("unknown option '" + command + "'", "");
    }
    throw UsageError("unknown command '" + command + "': expected lstsq or info", "");
  } catch (const UsageError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "gpuqr: %s\nTry 'gpuqr%s%s --help'.\n", e.what(),
                 e.command().empty() ? "" : " ", e.command().c_str());
    return 2;
  } catch (const ToolError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "gpuqr: error: %s\n", e.what());
    return 1;
  } catch (const gpuqr::Error& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "gpuqr: error: %s\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fflush(stdout);
    std::fprintf(stderr, "gpuqr: error: out of host memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "gpuqr: error: %s\n", e.what());
    return 1;
  }
}
