// gpuqr/io.hpp: Matrix Market files (https://math.nist.gov/MatrixMarket/formats.html).
//
// Reads coordinate (sparse) and array (dense) files with field real, integer or pattern and
// symmetry general, symmetric or skew-symmetric (hermitian and complex files raise
// Unsupported: "complex is not supported yet"). Malformed input raises IoError whose message
// names the file and the line. Values are read in double; convert with cast()/copy as needed.
#pragma once

#include <iosfwd>
#include <string>

#include "gpuqr/matrix.hpp"
#include "gpuqr/sparse.hpp"

namespace gpuqr::io {

enum class MmFormat { coordinate, array };
enum class MmField { real, integer, pattern };
enum class MmSymmetry { general, symmetric, skew_symmetric };

/// What a Matrix Market file held. Symmetric storage is expanded to the full matrix.
struct MatrixMarket {
  MmFormat format = MmFormat::coordinate;
  MmField field = MmField::real;
  MmSymmetry symmetry = MmSymmetry::general;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  /// Filled for coordinate files (pattern entries read as 1.0).
  CscMatrix<double> sparse;
  /// Filled for array files (host memory).
  Matrix<double> dense;

  bool is_sparse() const noexcept { return format == MmFormat::coordinate; }
  /// The matrix as a dense host array, whichever format the file had.
  Matrix<double> to_dense() const;
};

struct ReadOptions {
  /// Reject NaN and Inf values (IoError naming file and line). Default on.
  bool require_finite = true;
};

/// Reads `path`. Throws IoError (cannot open, malformed: bad header, size line, short or
/// extra entries, index out of range, unparsable number, non-finite with require_finite)
/// or Unsupported (complex, hermitian).
MatrixMarket read_matrix_market(const std::string& path, const ReadOptions& options = {});

/// Reads from a stream; `name` stands for the file in messages.
MatrixMarket read_matrix_market(std::istream& in, const std::string& name,
                                const ReadOptions& options = {});

/// Writes a dense host matrix as an array real general file (17 significant digits).
void write_matrix_market(const std::string& path, MatrixView<const double> a);
void write_matrix_market(const std::string& path, MatrixView<const float> a);
/// Writes a sparse matrix as a coordinate real general file.
void write_matrix_market(const std::string& path, const CscMatrix<double>& a);

}  // namespace gpuqr::io
