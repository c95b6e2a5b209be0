// Generated least-squares grids and Matrix Market paths for gpuqr_sparse_gpu_bench.
//
// The default set (kDefaultSparseGen) was sized with the symbolic analysis alone
// (`gpuqr_sparse_gpu_bench --analyze-only --gen ...`: COLAMD, the default amalgamation,
// gpuqr's analysis as of 2026-11; the flops do not depend on the machine):
//
//   problem      m        n        nnz(A)   flops     front GB  largest GB  work GB  intensity
//   grid3d:20    16000    8000     61600    1.11e10   0.24      0.045       0.07     47
//   grid3d:27    39366    19683    153090   1.03e11   1.08      0.17        0.25     96
//   grid3d:38    109744   54872    430312   9.70e11   5.38      0.82        1.20     180
//   grid3d:45    182250   91125    716850   3.82e12   13.35     2.58        3.74     286
//   grid2d:700   980000   490000   2937200  1.48e11   3.85      0.13        0.18     39
//
// front GB: the sum over fronts of rows x cols x 8 bytes, i.e. every front held at once (the
// most the factorization's working memory can be; the kept Householder vectors take about as
// much on the host); largest GB: the largest front; work GB: SparseAnalysis::memory_bytes,
// the sequential factorization's working memory; intensity = flops / front bytes. The biggest,
// grid3d:45 (3.8 TFLOP), holds 13.4 GB of fronts, well inside an 80 GB GPU and the host RAM.
// Flops grow about as NX^6.5 in 3-D (grid3d:30: 1.8e11, 40: 1.2e12, 50: 6.7e12, 60: 2.7e13
// with 51 GB of fronts) and as N^3 in 2-D, whose fronts are small and whose intensity stays
// low (grid2d:1000: 5.0e11 at 56, 1500: 1.5e12 at 72, 2000: 3.9e12 at 94 with 42 GB of
// fronts). The step between neighbouring NX is uneven (COLAMD's separators): check a new size
// with --analyze-only. Building a grid takes about 0.2 s per million unknowns (grid2d:2000,
// 4e6 unknowns: 0.65 s); the analysis of grid3d:45 about 0.25 s (2 s before session 7).
#include "bench/sparse_problems.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>

#include "gpuqr/error.hpp"

namespace gpuqr::bench {

const char* const kDefaultSparseGen = "grid3d:20,grid3d:27,grid3d:38,grid3d:45,grid2d:700";

namespace {

/// The largest generated n: keeps the matrix itself (about 9n entries, 16 bytes each) small
/// next to its factorization.
constexpr std::int64_t kMaxGeneratedColumns = 200'000'000;

/// A dims-dimensional grid of side `side`, least squares with the (2 dims + 1)-point stencil
/// plus a diagonal block: rows 0..n-1 the stencil rows (row q holds point q and its
/// neighbours), rows n..2n-1 the diagonal. Built column by column straight into CSC: column p
/// holds the stencil rows of p's lower neighbours, p itself and its upper neighbours (all
/// ascending, as the grid numbering is lexicographic), then row n + p.
CscMatrix<double> grid_least_squares(int dims, std::int64_t side, std::mt19937_64& rng) {
  std::vector<std::int64_t> stride(static_cast<std::size_t>(dims));
  std::int64_t n = 1;
  for (int d = 0; d < dims; ++d) {
    stride[static_cast<std::size_t>(d)] = n;
    n *= side;
  }
  CscMatrix<double> a;
  a.rows = 2 * n;
  a.cols = n;
  const auto capacity = static_cast<std::size_t>(n * (2 * dims + 2));
  a.row_indices.reserve(capacity);
  a.values.reserve(capacity);
  a.col_ptr.assign(static_cast<std::size_t>(n + 1), 0);
  std::uniform_real_distribution<double> coefficient(0.5, 1.5);
  const auto put = [&](std::int64_t row) {
    a.row_indices.push_back(row);
    a.values.push_back(coefficient(rng));
  };
  for (std::int64_t p = 0; p < n; ++p) {
    for (int d = dims - 1; d >= 0; --d) {
      const std::int64_t s = stride[static_cast<std::size_t>(d)];
      if ((p / s) % side > 0) put(p - s);
    }
    put(p);
    for (int d = 0; d < dims; ++d) {
      const std::int64_t s = stride[static_cast<std::size_t>(d)];
      if ((p / s) % side < side - 1) put(p + s);
    }
    put(n + p);
    a.col_ptr[static_cast<std::size_t>(p + 1)] = a.nnz();
  }
  return a;
}

/// FNV-1a of `text`: a seed that depends on the spec alone, the same on every platform.
std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t h = 14695981039346656037ULL;
  for (const char ch : text) {
    h ^= static_cast<unsigned char>(ch);
    h *= 1099511628211ULL;
  }
  return h;
}

}  // namespace

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    if (comma > start) items.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

GridSpec parse_grid_spec(const std::string& spec) {
  const std::size_t colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  GPUQR_CHECK_ARG(colon != std::string::npos && (kind == "grid2d" || kind == "grid3d"),
                  "--gen: '" + spec + "' is not grid2d:N or grid3d:NX");
  const std::string size_text = spec.substr(colon + 1);
  std::size_t used = 0;
  long long side = 0;
  try {
    side = std::stoll(size_text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  GPUQR_CHECK_ARG(used == size_text.size() && side >= 2,
                  "--gen: '" + spec + "' needs a grid side >= 2");
  const int dims = kind == "grid3d" ? 3 : 2;
  GPUQR_CHECK_ARG(std::pow(static_cast<double>(side), dims) <= kMaxGeneratedColumns,
                  "--gen: '" + spec + "' has more than 2e8 unknowns");
  return {spec, dims, side};
}

SparseProblem generate_sparse_problem(const GridSpec& spec, std::uint64_t seed) {
  std::mt19937_64 rng(seed ^ fnv1a(spec.text));
  return {spec.text, grid_least_squares(spec.dims, spec.side, rng)};
}

std::vector<std::string> matrix_market_paths(const std::vector<std::string>& items) {
  namespace fs = std::filesystem;
  std::vector<std::string> paths;
  for (const std::string& item : items) {
    GPUQR_CHECK_ARG(fs::exists(item), "--matrices: '" + item + "' does not exist");
    if (!fs::is_directory(item)) {
      paths.push_back(item);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(item)) {
      if (entry.is_regular_file() && entry.path().extension() == ".mtx") {
        found.push_back(entry.path().string());
      }
    }
    std::sort(found.begin(), found.end());
    paths.insert(paths.end(), found.begin(), found.end());
  }
  return paths;
}

}  // namespace gpuqr::bench
