// The problems of gpuqr_sparse_gpu_bench: generated least-squares grids (`--gen`) and Matrix
// Market files (`--matrices`). See sparse_problems.cpp for the generators and the flops of the
// default set.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpuqr/sparse.hpp"

namespace gpuqr::bench {

/// One sparse problem: its name in the table and the matrix (host, CSC).
struct SparseProblem {
  std::string name;
  CscMatrix<double> a;
};

/// What `--gen default` stands for: grid3d at about 10, 100, 1000 and 4000 GFLOP with COLAMD,
/// and one 2-D grid of low intensity (the table in sparse_problems.cpp).
extern const char* const kDefaultSparseGen;

/// Splits "a,b,c" at the commas; empty items are dropped.
std::vector<std::string> split_list(const std::string& text);

/// A generated problem, parsed from its --gen spec:
///  - "grid3d:NX": an NX^3 grid, n = NX^3 unknowns; rows 0..n-1 are the 7-point stencil of each
///    grid point (its neighbours inside the grid), rows n..2n-1 a diagonal block (one entry per
///    column), so m = 2n and A has full column rank;
///  - "grid2d:N": the same on an N x N grid with the 5-point stencil.
struct GridSpec {
  std::string text;  ///< the spec as given, the problem's name
  int dims = 3;
  std::int64_t side = 0;
};

/// Parses a --gen item; throws InvalidArgument for an unknown kind, a side < 2 or more than
/// 2e8 unknowns.
GridSpec parse_grid_spec(const std::string& spec);

/// The matrix of `spec`. Every coefficient is drawn uniformly from [0.5, 1.5) (never zero) by
/// a generator seeded with `seed` and the spec's text, so a spec always gives the same matrix.
/// About 0.2 s per million unknowns.
SparseProblem generate_sparse_problem(const GridSpec& spec, std::uint64_t seed = 42);

/// The Matrix Market files named by `items`: each a file, or a directory whose *.mtx files are
/// taken in name order. Throws InvalidArgument for a path that does not exist.
std::vector<std::string> matrix_market_paths(const std::vector<std::string>& items);

}  // namespace gpuqr::bench
