// Tests for CscMatrix and the Matrix Market reader/writers, on the data/matrices corpus and on
// inline inputs (every malformed case names the input and the right line).
#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "gpuqr/error.hpp"
#include "gpuqr/io.hpp"
#include "gpuqr/sparse.hpp"

#ifndef GPUQR_DATA_DIR
#error "GPUQR_DATA_DIR must name the repository's data/ folder"
#endif

namespace {

using gpuqr::CscMatrix;
using gpuqr::InvalidArgument;
using gpuqr::IoError;
using gpuqr::Matrix;
using gpuqr::Unsupported;
using namespace gpuqr::io;

const std::string kMatrices = std::string(GPUQR_DATA_DIR) + "/matrices/";

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

MatrixMarket read_text(const std::string& text, const std::string& name = "mem.mtx",
                       ReadOptions options = {}) {
  std::istringstream in(text);
  return read_matrix_market(in, name, options);
}

/// "IoError: <message>", "Unsupported: <message>" or "no error".
std::string read_failure(const std::string& text, const std::string& name,
                         ReadOptions options = {}) {
  try {
    read_text(text, name, options);
  } catch (const IoError& e) {
    return "IoError: " + e.message();
  } catch (const Unsupported& e) {
    return "Unsupported: " + e.message();
  }
  return "no error";
}

/// A fresh path in the temporary directory, removed by the destructor.
struct TempPath {
  explicit TempPath(const std::string& stem)
      : path((std::filesystem::temp_directory_path() /
              ("gpuqr_test_io_" + std::to_string(::getpid()) + "_" + stem + ".mtx"))
                 .string()) {}
  ~TempPath() { std::filesystem::remove(path); }
  std::string path;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// ---- CscMatrix ------------------------------------------------------------------------------

TEST(CscMatrix, FromTripletsSumsDuplicatesAndSortsRows) {
  // Column 1 given out of order with (2,1) twice; column 0 empty; (0,2) three times.
  const std::vector<std::int64_t> i{2, 0, 2, 1, 0, 0, 0};
  const std::vector<std::int64_t> j{1, 1, 1, 2, 2, 2, 2};
  const std::vector<double> v{1.5, 2.0, 0.25, 7.0, 1.0, 2.0, 4.0};
  const auto a = CscMatrix<double>::from_triplets(3, 3, i, j, v);
  EXPECT_EQ(a.rows, 3);
  EXPECT_EQ(a.cols, 3);
  EXPECT_EQ(a.col_ptr, (std::vector<std::int64_t>{0, 0, 2, 4}));
  EXPECT_EQ(a.row_indices, (std::vector<std::int64_t>{0, 2, 0, 1}));
  EXPECT_EQ(a.values, (std::vector<double>{2.0, 1.75, 7.0, 7.0}));
  EXPECT_NO_THROW(a.validate());
  const Matrix<double> d = a.to_dense();
  const double expect[3][3] = {{0, 2.0, 7.0}, {0, 0, 7.0}, {0, 1.75, 0}};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(d(r, c), expect[r][c]) << r << "," << c;
}

TEST(CscMatrix, FromTripletsFloatAndCast) {
  const auto a = CscMatrix<float>::from_triplets(2, 2, {1, 1}, {0, 0}, {0.5f, 0.25f});
  EXPECT_EQ(a.nnz(), 1);
  EXPECT_EQ(a.values[0], 0.75f);
  const Matrix<float> d = a.to_dense();
  EXPECT_EQ(d(0, 0), 0.0f);
  EXPECT_EQ(d(1, 0), 0.75f);
  EXPECT_EQ(d(1, 1), 0.0f);
  const CscMatrix<double> b = a.cast<double>();
  EXPECT_EQ(b.col_ptr, a.col_ptr);
  EXPECT_EQ(b.values, std::vector<double>{0.75});
}

TEST(CscMatrix, FromTripletsRejectsOutOfRangeAndMismatchedLengths) {
  try {
    CscMatrix<double>::from_triplets(5, 4, {0, 9}, {0, 1}, {1.0, 2.0});
    FAIL() << "no exception";
  } catch (const InvalidArgument& e) {
    EXPECT_TRUE(contains(e.message(), "row index 9 out of range 0..4")) << e.message();
    EXPECT_TRUE(contains(e.message(), "triplet 1")) << e.message();
  }
  try {
    CscMatrix<double>::from_triplets(5, 4, {0}, {-1}, {1.0});
    FAIL() << "no exception";
  } catch (const InvalidArgument& e) {
    EXPECT_TRUE(contains(e.message(), "column index -1 out of range 0..3")) << e.message();
  }
  try {
    CscMatrix<double>::from_triplets(5, 4, {0, 1}, {0, 1}, {1.0});
    FAIL() << "no exception";
  } catch (const InvalidArgument& e) {
    EXPECT_TRUE(contains(e.message(), "different lengths (2, 2, 1)")) << e.message();
  }
  EXPECT_THROW(CscMatrix<double>::from_triplets(0, 3, {0}, {0}, {1.0}), InvalidArgument);
  EXPECT_THROW(CscMatrix<double>::from_triplets(-1, 3, {}, {}, {}), InvalidArgument);
}

TEST(CscMatrix, EmptyShapes) {
  for (auto [m, n] : {std::pair<int, int>{0, 0}, {0, 3}, {3, 0}}) {
    const auto a = CscMatrix<double>::from_triplets(m, n, {}, {}, {});
    EXPECT_EQ(a.col_ptr, std::vector<std::int64_t>(n + 1, 0));
    EXPECT_EQ(a.nnz(), 0);
    const Matrix<double> d = a.to_dense();
    EXPECT_EQ(d.rows(), m);
    EXPECT_EQ(d.cols(), n);
    for (int c = 0; c < n; ++c)
      for (int r = 0; r < m; ++r) EXPECT_EQ(d(r, c), 0.0);
  }
}

TEST(CscMatrix, ValidateRejectsBadStructure) {
  auto good = CscMatrix<double>::from_triplets(3, 2, {0, 2, 1}, {0, 0, 1}, {1, 2, 3});
  EXPECT_NO_THROW(good.validate());
  auto unsorted = good;
  std::swap(unsorted.row_indices[0], unsorted.row_indices[1]);
  EXPECT_THROW(unsorted.validate(), InvalidArgument);
  auto duplicate = good;
  duplicate.row_indices[1] = 0;
  EXPECT_THROW(duplicate.validate(), InvalidArgument);
  auto out_of_range = good;
  out_of_range.row_indices[2] = 3;
  EXPECT_THROW(out_of_range.validate(), InvalidArgument);
  EXPECT_THROW(out_of_range.to_dense(), InvalidArgument);
  auto short_ptr = good;
  short_ptr.col_ptr.pop_back();
  EXPECT_THROW(short_ptr.validate(), InvalidArgument);
  auto decreasing = good;
  decreasing.col_ptr = {0, 3, 2};
  EXPECT_THROW(decreasing.validate(), InvalidArgument);
  auto bad_end = good;
  bad_end.values.push_back(4.0);
  EXPECT_THROW(bad_end.validate(), InvalidArgument);
}

// ---- the corpus in data/matrices --------------------------------------------------------------

struct CorpusFile {
  const char* file;
  std::int64_t rows, cols;
  std::int64_t nnz;  // stored entries after symmetric expansion; -1: complex (Unsupported)
  MmField field;
  MmSymmetry symmetry;
};

const std::vector<CorpusFile>& corpus() {
  using F = MmField;
  using S = MmSymmetry;
  static const std::vector<CorpusFile> files = {
      {"ash219.mtx", 219, 85, 438, F::pattern, S::general},
      {"lp_e226_transposed.mtx", 472, 223, 2768, F::real, S::general},
      {"lp_e226.mtx", 223, 472, 2768, F::real, S::general},
      {"lp_share1b.mtx", 117, 253, 1179, F::real, S::general},
      {"lpi_itest6.mtx", 11, 17, 29, F::real, S::general},
      {"lpi_galenet.mtx", 8, 14, 22, F::integer, S::general},
      {"west0067.mtx", 67, 67, 294, F::real, S::general},
      {"b1_ss.mtx", 7, 7, 15, F::real, S::general},
      {"bfwa62.mtx", 62, 62, 450, F::real, S::general},
      {"lfat5b.mtx", 14, 14, 46, F::real, S::general},
      {"LFAT5.mtx", 14, 14, 46, F::real, S::symmetric},         // 30 stored, 14 diagonal
      {"bcspwr01.mtx", 39, 39, 131, F::pattern, S::symmetric},  // 85 stored, 39 diagonal
      {"GD06_theory.mtx", 101, 101, 380, F::pattern, S::symmetric},  // 190, none diagonal
      {"pwr01b.mtx", 39, 39, 131, F::pattern, S::general},
      {"GD98_a.mtx", 38, 38, 50, F::pattern, S::general},
      {"GD01_b.mtx", 18, 18, 37, F::pattern, S::general},
      {"Tina_AskCal.mtx", 11, 11, 29, F::pattern, S::general},
      {"Tina_AskCal_perm.mtx", 11, 11, 29, F::pattern, S::general},
      {"Ragusa16.mtx", 24, 24, 81, F::integer, S::general},
      {"a0.mtx", 0, 0, 0, F::pattern, S::general},
      {"a00.mtx", 0, 0, 0, F::pattern, S::general},
      {"a01.mtx", 0, 1, 0, F::pattern, S::general},
      {"a10.mtx", 1, 0, 0, F::pattern, S::general},
      {"a04.mtx", 0, 4, 0, F::real, S::general},
      {"c2.mtx", 2, 2, -1, F::real, S::general},
      {"c32.mtx", 3, 2, -1, F::real, S::general},
  };
  return files;
}

TEST(MatrixMarketCorpus, TableCoversEveryFileInDataMatrices) {
  std::set<std::string> listed, present;
  for (const auto& f : corpus()) listed.insert(f.file);
  for (const auto& e : std::filesystem::directory_iterator(kMatrices)) {
    if (e.path().extension() == ".mtx") present.insert(e.path().filename().string());
  }
  EXPECT_EQ(listed, present);
}

TEST(MatrixMarketCorpus, EveryFileReadsWithHeaderShape) {
  for (const auto& f : corpus()) {
    SCOPED_TRACE(f.file);
    const std::string path = kMatrices + f.file;
    if (f.nnz < 0) {
      try {
        read_matrix_market(path);
        ADD_FAILURE() << "complex file read without Unsupported";
      } catch (const Unsupported& e) {
        EXPECT_TRUE(contains(e.message(), "complex is not supported yet")) << e.message();
        EXPECT_TRUE(contains(e.message(), path)) << e.message();
      }
      continue;
    }
    const MatrixMarket mm = read_matrix_market(path);
    EXPECT_TRUE(mm.is_sparse());
    EXPECT_EQ(mm.field, f.field);
    EXPECT_EQ(mm.symmetry, f.symmetry);
    EXPECT_EQ(mm.rows, f.rows);
    EXPECT_EQ(mm.cols, f.cols);
    EXPECT_EQ(mm.sparse.rows, f.rows);
    EXPECT_EQ(mm.sparse.cols, f.cols);
    EXPECT_EQ(mm.sparse.nnz(), f.nnz);
    EXPECT_NO_THROW(mm.sparse.validate());
    const Matrix<double> d = mm.to_dense();
    EXPECT_EQ(d.rows(), f.rows);
    EXPECT_EQ(d.cols(), f.cols);
  }
}

/// The file's matrix parsed independently (iostreams, map), symmetric storage mirrored.
std::map<std::pair<std::int64_t, std::int64_t>, double> reference_entries(const std::string& path) {
  std::ifstream in(path);
  std::string line, banner;
  std::getline(in, banner);
  const bool pattern = contains(banner, "pattern");
  const bool symmetric = contains(banner, " symmetric");
  bool have_size = false;
  std::map<std::pair<std::int64_t, std::int64_t>, double> entries;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::int64_t i = 0, j = 0;
    if (line.empty() || line[0] == '%' || !(ls >> i >> j)) continue;
    if (!have_size) {
      have_size = true;
      continue;
    }
    double v = 1.0;
    if (!pattern) ls >> v;
    entries[{i - 1, j - 1}] += v;
    if (symmetric && i != j) entries[{j - 1, i - 1}] += v;
  }
  return entries;
}

TEST(MatrixMarketCorpus, EntriesMatchAnIndependentParse) {
  for (const auto& f : corpus()) {
    if (f.nnz < 0) continue;
    SCOPED_TRACE(f.file);
    const auto ref = reference_entries(kMatrices + f.file);
    const MatrixMarket mm = read_matrix_market(kMatrices + f.file);
    ASSERT_EQ(static_cast<std::int64_t>(ref.size()), mm.sparse.nnz());
    const Matrix<double> d = mm.to_dense();
    std::int64_t mismatches = 0;
    for (std::int64_t j = 0; j < d.cols(); ++j) {
      for (std::int64_t i = 0; i < d.rows(); ++i) {
        const auto it = ref.find({i, j});
        const double want = it == ref.end() ? 0.0 : it->second;  // nothing outside the file
        if (d(i, j) != want && ++mismatches <= 5) {
          ADD_FAILURE() << "(" << i << "," << j << "): " << d(i, j) << " vs " << want;
        }
      }
    }
    EXPECT_EQ(mismatches, 0);
  }
}

TEST(MatrixMarketCorpus, SpotChecksAgainstFileText) {
  const Matrix<double> west = read_matrix_market(kMatrices + "west0067.mtx").to_dense();
  EXPECT_EQ(west(4, 0), -.2788416);   // "5 1 -.2788416"
  EXPECT_EQ(west(48, 66), -.2541193); // "49 67 -.2541193"
  EXPECT_EQ(west(54, 66), 1.0);       // "55 67 1"
  EXPECT_EQ(west(0, 0), 0.0);

  const MatrixMarket lp = read_matrix_market(kMatrices + "lp_e226_transposed.mtx");
  const Matrix<double> e = lp.to_dense();
  EXPECT_EQ(e(202, 0), -1.0);    // "203 1 -1"
  EXPECT_EQ(e(356, 222), -.462); // "357 223 -.462"
  // Column 1 holds rows 1 203 414 423 428 433 435 438 448 449 455 (in the file's order).
  EXPECT_EQ(lp.sparse.col_ptr[1], 11);
  EXPECT_EQ(std::vector<std::int64_t>(lp.sparse.row_indices.begin(), lp.sparse.row_indices.begin() + 11),
            (std::vector<std::int64_t>{0, 202, 413, 422, 427, 432, 434, 437, 447, 448, 454}));

  const MatrixMarket ash = read_matrix_market(kMatrices + "ash219.mtx");
  EXPECT_EQ(ash.field, MmField::pattern);
  for (double v : ash.sparse.values) EXPECT_EQ(v, 1.0);
  EXPECT_EQ(ash.sparse.row_indices.back(), 218);  // "219 85"

  const Matrix<double> gal = read_matrix_market(kMatrices + "lpi_galenet.mtx").to_dense();
  EXPECT_EQ(gal(4, 13), -1.0);  // "5 14 -1" (integer field)
  EXPECT_EQ(gal(7, 13), 1.0);   // "8 14 1"
}

TEST(MatrixMarketCorpus, SymmetricFilesAreExpandedToBothTriangles) {
  const Matrix<double> a = read_matrix_market(kMatrices + "LFAT5.mtx").to_dense();
  EXPECT_EQ(a(0, 0), 1.57088);      // "1 1 1.57088"
  EXPECT_EQ(a(3, 0), -94.2528);     // "4 1 -94.2528"
  EXPECT_EQ(a(0, 3), -94.2528);     // its mirror
  EXPECT_EQ(a(1, 1), 1.25664e7);    // "2 2 1.25664e7"
  EXPECT_EQ(a(5, 1), -6.2832e6);    // "6 2 -6.2832e6"
  EXPECT_EQ(a(1, 5), -6.2832e6);
  for (int j = 0; j < 14; ++j)
    for (int i = 0; i < 14; ++i) EXPECT_EQ(a(i, j), a(j, i)) << i << "," << j;

  const Matrix<double> p = read_matrix_market(kMatrices + "bcspwr01.mtx").to_dense();
  EXPECT_EQ(p(38, 0), 1.0);  // "39 1"
  EXPECT_EQ(p(0, 38), 1.0);
  for (int j = 0; j < 39; ++j)
    for (int i = 0; i < 39; ++i) EXPECT_EQ(p(i, j), p(j, i));
}

TEST(MatrixMarketCorpus, MissingFileNamesPathAndReason) {
  const std::string path = kMatrices + "no_such_matrix.mtx";
  try {
    read_matrix_market(path);
    FAIL() << "no exception";
  } catch (const IoError& e) {
    EXPECT_TRUE(contains(e.message(), path)) << e.message();
    EXPECT_TRUE(contains(e.message(), std::strerror(ENOENT))) << e.message();
  }
}

// ---- inline inputs ------------------------------------------------------------------------------

TEST(MatrixMarketRead, SkewSymmetricCoordinate) {
  const MatrixMarket mm = read_text(
      "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1.5\n3 2 -4\n");
  EXPECT_EQ(mm.symmetry, MmSymmetry::skew_symmetric);
  EXPECT_EQ(mm.sparse.nnz(), 4);
  const Matrix<double> a = mm.to_dense();
  const double expect[3][3] = {{0, -1.5, 0}, {1.5, 0, 4}, {0, -4, 0}};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(a(i, j), expect[i][j]) << i << "," << j;
}

TEST(MatrixMarketRead, ArrayFormats) {
  const MatrixMarket g = read_text("%%MatrixMarket matrix array real general\n2 3\n1\n2\n3\n4\n5\n6\n");
  EXPECT_FALSE(g.is_sparse());
  ASSERT_EQ(g.dense.rows(), 2);
  ASSERT_EQ(g.dense.cols(), 3);
  EXPECT_EQ(g.dense(0, 0), 1.0);  // column-major
  EXPECT_EQ(g.dense(1, 0), 2.0);
  EXPECT_EQ(g.dense(0, 2), 5.0);
  EXPECT_EQ(g.to_dense()(1, 2), 6.0);

  // Symmetric array: the lower triangle column by column, diagonal included.
  const Matrix<double> s = read_text(
      "%%MatrixMarket matrix array real symmetric\n3 3\n11\n21\n31\n22\n32\n33\n").to_dense();
  const double es[3][3] = {{11, 21, 31}, {21, 22, 32}, {31, 32, 33}};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(s(i, j), es[i][j]) << i << "," << j;

  // Skew-symmetric array: the strictly lower triangle.
  const Matrix<double> k = read_text(
      "%%MatrixMarket matrix array integer skew-symmetric\n3 3\n21\n31\n32\n").to_dense();
  const double ek[3][3] = {{0, -21, -31}, {21, 0, -32}, {31, 32, 0}};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(k(i, j), ek[i][j]) << i << "," << j;
}

TEST(MatrixMarketRead, LenientLexicalForms) {
  // Keywords in any case, CRLF, tabs, comments and blank lines between entries.
  const MatrixMarket mm = read_text(
      "%%MatrixMarket MATRIX Coordinate REAL General\r\n% comment\r\n\r\n  2\t2 3 \r\n"
      "1 1 1e-3\r\n\r\n% another comment\r\n2 2 -.5\r\n1 2 +2\r\n\r\n");
  const Matrix<double> a = mm.to_dense();
  EXPECT_EQ(a(0, 0), 1e-3);
  EXPECT_EQ(a(1, 1), -0.5);
  EXPECT_EQ(a(0, 1), 2.0);
  EXPECT_EQ(a(1, 0), 0.0);
}

TEST(MatrixMarketRead, PatternDuplicatesStayOneAndExplicitZerosStayStored) {
  const MatrixMarket p = read_text("%%MatrixMarket matrix coordinate pattern general\n2 2 3\n1 1\n1 1\n2 1\n");
  EXPECT_EQ(p.sparse.nnz(), 2);
  EXPECT_EQ(p.sparse.values, (std::vector<double>{1.0, 1.0}));
  const MatrixMarket z = read_text("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 0\n2 2 0.0\n");
  EXPECT_EQ(z.sparse.nnz(), 2);
  const MatrixMarket d = read_text("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 2 1.25\n1 2 2\n");
  EXPECT_EQ(d.sparse.nnz(), 1);
  EXPECT_EQ(d.sparse.values[0], 3.25);
}

TEST(MatrixMarketRead, DegenerateSizes) {
  for (const char* size : {"0 0 0", "0 1 0", "1 0 0", "0 5 0"}) {
    SCOPED_TRACE(size);
    const MatrixMarket mm =
        read_text(std::string("%%MatrixMarket matrix coordinate real general\n") + size + "\n");
    std::istringstream ss(size);
    std::int64_t m = 0, n = 0;
    ss >> m >> n;
    EXPECT_EQ(mm.rows, m);
    EXPECT_EQ(mm.cols, n);
    EXPECT_EQ(mm.sparse.col_ptr, std::vector<std::int64_t>(n + 1, 0));
    EXPECT_EQ(mm.to_dense().rows(), m);
    EXPECT_EQ(mm.to_dense().cols(), n);
  }
  const MatrixMarket a = read_text("%%MatrixMarket matrix array real general\n0 3\n");
  EXPECT_EQ(a.dense.rows(), 0);
  EXPECT_EQ(a.dense.cols(), 3);
}

TEST(MatrixMarketRead, RequireFiniteOnAndOff) {
  const std::string text =
      "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 nan\n2 2 -inf\n1 2 1e999\n";
  const std::string err = read_failure(text, "nf.mtx");
  EXPECT_TRUE(contains(err, "IoError: nf.mtx:3: ")) << err;
  EXPECT_TRUE(contains(err, "not finite")) << err;
  ReadOptions lax;
  lax.require_finite = false;
  const Matrix<double> a = read_text(text, "nf.mtx", lax).to_dense();
  EXPECT_TRUE(std::isnan(a(0, 0)));
  EXPECT_TRUE(std::isinf(a(1, 1)) && a(1, 1) < 0);
  EXPECT_TRUE(std::isinf(a(0, 1)) && a(0, 1) > 0);
  const std::string arr = "%%MatrixMarket matrix array real general\n1 2\n1\nInf\n";
  EXPECT_TRUE(contains(read_failure(arr, "arr.mtx"), "IoError: arr.mtx:4: ")) << read_failure(arr, "arr.mtx");
  EXPECT_TRUE(std::isinf(read_text(arr, "arr.mtx", lax).dense(0, 1)));
}

TEST(MatrixMarketRead, ComplexAndHermitianAreUnsupported) {
  for (const char* banner : {"%%MatrixMarket matrix coordinate complex general",
                             "%%MatrixMarket matrix coordinate real hermitian",
                             "%%MatrixMarket matrix array complex hermitian"}) {
    const std::string err = read_failure(std::string(banner) + "\n1 1 1\n1 1 1 0\n", "cx.mtx");
    EXPECT_TRUE(contains(err, "Unsupported: cx.mtx:1: complex is not supported yet")) << err;
  }
}

struct BadInput {
  const char* what;
  const char* text;
  int line;
  const char* message;  // a part of the message after "name:line: "
};

TEST(MatrixMarketErrors, MalformedInputNamesFileAndLine) {
  const std::vector<BadInput> cases = {
      {"empty", "", 1, "missing the %%MatrixMarket banner"},
      {"no_banner", "3 3 1\n1 1 1\n", 1, "missing %%MatrixMarket banner"},
      {"short_banner", "%%MatrixMarket matrix coordinate real\n1 1 0\n", 1, "bad banner"},
      {"long_banner", "%%MatrixMarket matrix coordinate real general x\n1 1 0\n", 1, "bad banner"},
      {"bad_object", "%%MatrixMarket vector coordinate real general\n1 1 0\n", 1, "object 'vector'"},
      {"bad_format", "%%MatrixMarket matrix sparse real general\n1 1 0\n", 1, "format 'sparse'"},
      {"bad_field", "%%MatrixMarket matrix coordinate quaternion general\n1 1 0\n", 1, "field 'quaternion'"},
      {"bad_symmetry", "%%MatrixMarket matrix coordinate real upper\n1 1 0\n", 1, "symmetry 'upper'"},
      {"pattern_array", "%%MatrixMarket matrix array pattern general\n1 1\n1\n", 1, "pattern is only valid with the coordinate"},
      {"pattern_skew", "%%MatrixMarket matrix coordinate pattern skew-symmetric\n2 2 0\n", 1, "pattern cannot be skew"},
      {"no_size", "%%MatrixMarket matrix coordinate real general\n% only a comment\n\n", 3, "missing the size line"},
      {"size_fields", "%%MatrixMarket matrix coordinate real general\n%\n3 3\n", 3, "bad size line: expected 'rows cols entries', found 2"},
      {"array_size_fields", "%%MatrixMarket matrix array real general\n3 3 9\n", 2, "bad size line: expected 'rows cols', found 3"},
      {"size_not_int", "%%MatrixMarket matrix coordinate real general\n3 x 1\n", 2, "bad column count 'x'"},
      {"size_float", "%%MatrixMarket matrix coordinate real general\n3.0 3 1\n", 2, "bad row count '3.0'"},
      {"negative", "%%MatrixMarket matrix coordinate real general\n3 -3 0\n", 2, "negative size"},
      {"negative_nnz", "%%MatrixMarket matrix coordinate real general\n3 3 -1\n", 2, "negative size"},
      {"sym_not_square", "%%MatrixMarket matrix coordinate real symmetric\n3 2 0\n", 2, "must be square, got 3 x 2"},
      {"too_few", "%%MatrixMarket matrix coordinate real general\n5 5 3\n1 1 1\n2 2 2\n", 4, "expected 3 entries, found 2"},
      {"too_few_array", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n\n", 6, "expected 4 entries, found 3"},
      {"extra", "%%MatrixMarket matrix coordinate real general\n5 5 1\n1 1 1\n% fine\n2 2 2\n", 5, "extra entry '2 2 2' after the 1 entries"},
      {"extra_crlf", "%%MatrixMarket matrix coordinate real general\r\n1 1 0\r\n\r\n1 1 7\r\n", 4, "extra entry '1 1 7' after"},
      {"row_negative", "%%MatrixMarket matrix coordinate real general\n2 3 1\n-1 1 1\n", 3, "row index -1 out of range 1..2"},
      {"extra_array", "%%MatrixMarket matrix array real general\n1 1\n1\n2\n", 4, "extra entry '2'"},
      {"row_range",
       "%%MatrixMarket matrix coordinate real general\n%\n%\n5 5 3\n1 1 1\n2 2 2\n9 3 3\n", 7,
       "row index 9 out of range 1..5"},
      {"row_zero", "%%MatrixMarket matrix coordinate real general\n2 3 1\n0 1 1\n", 3, "row index 0 out of range 1..2"},
      {"col_range", "%%MatrixMarket matrix coordinate real general\n2 3 1\n1 4 1\n", 3, "column index 4 out of range 1..3"},
      {"index_float", "%%MatrixMarket matrix coordinate real general\n2 3 1\n1.0 1 1\n", 3, "bad row index '1.0'"},
      {"bad_number", "%%MatrixMarket matrix coordinate real general\n2 3 2\n1 1 1\n2 2 1.2.3\n", 4, "bad value '1.2.3'"},
      {"number_suffix", "%%MatrixMarket matrix coordinate real general\n2 3 1\n1 1 1.5x\n", 3, "bad value '1.5x'"},
      {"bad_integer", "%%MatrixMarket matrix coordinate integer general\n2 3 1\n1 1 1.5\n", 3, "bad integer value '1.5'"},
      {"bad_array_number", "%%MatrixMarket matrix array real general\n1 2\n1\nabc\n", 4, "bad value 'abc'"},
      {"trailing", "%%MatrixMarket matrix coordinate real general\n2 3 1\n1 1 1 junk\n", 3, "trailing garbage 'junk'"},
      {"trailing_pattern", "%%MatrixMarket matrix coordinate pattern general\n2 3 1\n1 1 1\n", 3, "trailing garbage '1'"},
      {"trailing_array", "%%MatrixMarket matrix array real general\n1 2\n1 2\n", 3, "trailing garbage '2'"},
      {"missing_value", "%%MatrixMarket matrix coordinate real general\n2 3 1\n1 1\n", 3, "has 2 field(s), expected 3"},
      {"nan", "%%MatrixMarket matrix coordinate real general\n2 3 2\n1 1 1\n2 1 NaN\n", 4, "value 'NaN' is not finite"},
      {"skew_diagonal", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n2 2 1\n", 4, "diagonal entry (2, 2)"},
  };
  for (const BadInput& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string name = std::string("mem/") + c.what + ".mtx";
    const std::string err = read_failure(c.text, name);
    const std::string where = "IoError: " + name + ":" + std::to_string(c.line) + ": ";
    EXPECT_EQ(err.rfind(where, 0), 0u) << "got: " << err << "\nwanted prefix: " << where;
    EXPECT_TRUE(contains(err, c.message)) << "got: " << err << "\nwanted: " << c.message;
  }
}

// ---- writers --------------------------------------------------------------------------------------

TEST(MatrixMarketWrite, DenseDoubleRoundTripIsBitwise) {
  const double awkward[] = {0.1, 1.0 / 3.0, -0.0, 1e-300, 4.9e-324, 1.7976931348623157e308,
                            -3.141592653589793, 2.0 / 3.0e10, 123456789.123456789, 0.0, -1e-17,
                            6.02214076e23};
  // A 3 x 4 block of a 5 x 4 matrix: the writer must honor ld.
  Matrix<double> big(5, 4);
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 5; ++i) big(i, j) = i < 3 ? awkward[i + 3 * j] : 99.0;
  const auto block = big.view().block(0, 0, 3, 4);
  TempPath tmp("dense");
  write_matrix_market(tmp.path, gpuqr::MatrixView<const double>(block));
  const std::string text = slurp(tmp.path);
  EXPECT_EQ(text.rfind("%%MatrixMarket matrix array real general\n3 4\n0.10000000000000001\n", 0), 0u)
      << text;
  const MatrixMarket mm = read_matrix_market(tmp.path);
  ASSERT_FALSE(mm.is_sparse());
  ASSERT_EQ(mm.dense.rows(), 3);
  ASSERT_EQ(mm.dense.cols(), 4);
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 3; ++i)
      EXPECT_EQ(std::memcmp(&mm.dense(i, j), &big(i, j), sizeof(double)), 0)
          << i << "," << j << ": " << mm.dense(i, j) << " vs " << big(i, j);
}

TEST(MatrixMarketWrite, DenseFloatRoundTripIsExactInFloat) {
  Matrix<float> a(2, 3);
  const float v[] = {0.1f, 1.0f / 3.0f, -0.0f, 1e-38f, 3.4028235e38f, -7.25f};
  for (int k = 0; k < 6; ++k) a(k % 2, k / 2) = v[k];
  TempPath tmp("float");
  write_matrix_market(tmp.path, gpuqr::MatrixView<const float>(a.view()));
  EXPECT_TRUE(contains(slurp(tmp.path), "\n0.100000001\n")) << slurp(tmp.path);  // %.9g
  const MatrixMarket mm = read_matrix_market(tmp.path);
  for (int k = 0; k < 6; ++k) {
    const float back = static_cast<float>(mm.dense(k % 2, k / 2));
    EXPECT_EQ(std::memcmp(&back, &v[k], sizeof(float)), 0) << k;
  }
}

TEST(MatrixMarketWrite, SparseRoundTripIsBitwise) {
  const auto a = CscMatrix<double>::from_triplets(4, 3, {3, 0, 2, 1}, {0, 0, 2, 2},
                                                  {0.1, -1.0 / 7.0, 1e-310, 2.5});
  TempPath tmp("sparse");
  write_matrix_market(tmp.path, a);
  EXPECT_EQ(slurp(tmp.path),
            "%%MatrixMarket matrix coordinate real general\n4 3 4\n1 1 -0.14285714285714285\n"
            "4 1 0.10000000000000001\n2 3 2.5\n3 3 9.9999999999999694e-311\n");
  const MatrixMarket mm = read_matrix_market(tmp.path);
  EXPECT_EQ(mm.sparse.col_ptr, a.col_ptr);
  EXPECT_EQ(mm.sparse.row_indices, a.row_indices);
  ASSERT_EQ(mm.sparse.values.size(), a.values.size());
  EXPECT_EQ(std::memcmp(mm.sparse.values.data(), a.values.data(), a.values.size() * sizeof(double)), 0);

  // A corpus matrix survives write -> read unchanged.
  const MatrixMarket lp = read_matrix_market(kMatrices + "lp_e226_transposed.mtx");
  TempPath tmp2("lp");
  write_matrix_market(tmp2.path, lp.sparse);
  const MatrixMarket back = read_matrix_market(tmp2.path);
  EXPECT_EQ(back.rows, 472);
  EXPECT_EQ(back.cols, 223);
  EXPECT_EQ(back.sparse.col_ptr, lp.sparse.col_ptr);
  EXPECT_EQ(back.sparse.row_indices, lp.sparse.row_indices);
  EXPECT_EQ(back.sparse.values, lp.sparse.values);
}

TEST(MatrixMarketWrite, DegenerateShapesRoundTrip) {
  TempPath tmp("empty");
  Matrix<double> d(0, 3);
  write_matrix_market(tmp.path, gpuqr::MatrixView<const double>(d.view()));
  const MatrixMarket md = read_matrix_market(tmp.path);
  EXPECT_EQ(md.dense.rows(), 0);
  EXPECT_EQ(md.dense.cols(), 3);
  write_matrix_market(tmp.path, CscMatrix<double>::from_triplets(3, 0, {}, {}, {}));
  const MatrixMarket ms = read_matrix_market(tmp.path);
  EXPECT_EQ(ms.rows, 3);
  EXPECT_EQ(ms.cols, 0);
  EXPECT_EQ(ms.sparse.nnz(), 0);
}

TEST(MatrixMarketWrite, UnopenablePathThrowsIoError) {
  const std::string path = "/nonexistent_gpuqr_dir/out.mtx";
  Matrix<double> a(1, 1);
  a(0, 0) = 1.0;
  try {
    write_matrix_market(path, gpuqr::MatrixView<const double>(a.view()));
    FAIL() << "no exception";
  } catch (const IoError& e) {
    EXPECT_TRUE(contains(e.message(), path)) << e.message();
  }
  EXPECT_THROW(write_matrix_market(path, CscMatrix<double>::from_triplets(1, 1, {}, {}, {})),
               IoError);
}

}  // namespace
