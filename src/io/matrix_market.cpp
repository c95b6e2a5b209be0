// Matrix Market reader and writers (https://math.nist.gov/MatrixMarket/formats.html).
//
// The reader takes the whole input into memory and scans it line by line with strtoll/strtod
// on whitespace-separated tokens, so files of a few MB read in milliseconds. Every error names
// the input and its 1-based line: "name:line: what went wrong".
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <istream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gpuqr/error.hpp"
#include "gpuqr/io.hpp"

namespace gpuqr::io {

namespace {

/// A token: [begin, end) inside the input text (which is NUL-terminated after its last byte).
struct Token {
  const char* begin = nullptr;
  const char* end = nullptr;
  std::string str() const { return std::string(begin, end); }
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// Quotes a token for a message, shortened when long.
std::string quoted(const Token& t) {
  std::string s = t.str();
  if (s.size() > 40) s = s.substr(0, 40) + "...";
  return "'" + s + "'";
}

/// Splits `text` into lines and tokens, counting lines from 1, and raises IoError with the
/// input's name and the current line.
class Scanner {
 public:
  Scanner(const std::string& text, const std::string& name)
      : p_(text.c_str()), end_(text.c_str() + text.size()), name_(name) {}

  /// Moves to the next line; false at the end of the input. The line's tokens are in tokens().
  bool next_line() {
    if (p_ >= end_) return false;
    ++line_;
    const char* nl = static_cast<const char*>(std::memchr(p_, '\n', end_ - p_));
    line_begin_ = p_;
    line_end_ = nl ? nl : end_;
    p_ = nl ? nl + 1 : end_;
    tokens_.clear();
    for (const char* q = line_begin_; q < line_end_;) {
      while (q < line_end_ && is_space(*q)) ++q;
      if (q >= line_end_) break;
      Token t{q, q};
      while (q < line_end_ && !is_space(*q)) ++q;
      t.end = q;
      tokens_.push_back(t);
    }
    return true;
  }

  /// Moves to the next line that is neither blank nor a comment; false at the end.
  bool next_data_line() {
    while (next_line()) {
      if (!tokens_.empty() && *tokens_[0].begin != '%') return true;
    }
    return false;
  }

  const std::vector<Token>& tokens() const { return tokens_; }
  std::int64_t line() const { return line_; }
  /// The current line without surrounding blanks, shortened when long (for messages).
  std::string line_text() const {
    if (tokens_.empty()) return std::string();
    std::string s(tokens_.front().begin, tokens_.back().end);
    return s.size() > 60 ? s.substr(0, 60) + "..." : s;
  }

  [[noreturn]] void fail(const std::string& message) const { fail_at(line_, message); }
  [[noreturn]] void fail_at(std::int64_t line, const std::string& message) const {
    GPUQR_THROW(IoError, name_ + ":" + std::to_string(line) + ": " + message);
  }

  /// The token as a whole integer (strtoll must consume all of it).
  std::int64_t integer(const Token& t, const char* what) const {
    // Fast path: up to 18 plain decimal digits (cannot overflow); anything else via strtoll.
    if (t.end - t.begin <= 18) {
      std::int64_t v = 0;
      const char* q = t.begin;
      while (q < t.end && *q >= '0' && *q <= '9') v = v * 10 + (*q++ - '0');
      if (q == t.end) return v;
    }
    errno = 0;
    char* stop = nullptr;
    const long long v = std::strtoll(t.begin, &stop, 10);
    if (stop != t.end) fail(std::string("bad ") + what + " " + quoted(t) + " (not an integer)");
    if (errno == ERANGE) fail(std::string(what) + " " + quoted(t) + " is out of the 64-bit range");
    return static_cast<std::int64_t>(v);
  }

  /// The token as a number: real (strtod must consume all of it) or integer field.
  double number(const Token& t, MmField field, const ReadOptions& options) const {
    double v = 0.0;
    if (field == MmField::integer) {
      v = static_cast<double>(integer(t, "integer value"));
    } else {
      char* stop = nullptr;
      v = std::strtod(t.begin, &stop);
      if (stop != t.end || stop == t.begin) fail("bad value " + quoted(t) + " (not a number)");
    }
    if (options.require_finite && !std::isfinite(v)) {
      fail("value " + quoted(t) + " is not finite (ReadOptions::require_finite is set)");
    }
    return v;
  }

 private:
  const char* p_;
  const char* end_;
  const std::string& name_;
  std::int64_t line_ = 0;
  const char* line_begin_ = nullptr;
  const char* line_end_ = nullptr;
  std::vector<Token> tokens_;
};

/// Reads the banner line into `mm`; Unsupported for complex or hermitian files.
void read_banner(Scanner& s, const std::string& name, MatrixMarket& mm) {
  if (!s.next_line()) s.fail_at(1, "empty input: missing the %%MatrixMarket banner");
  const auto& t = s.tokens();
  if (t.empty() || lower(t[0].str()) != "%%matrixmarket") {
    s.fail("missing %%MatrixMarket banner (the first line must start with it)");
  }
  if (t.size() != 5) {
    s.fail("bad banner: expected '%%MatrixMarket matrix <format> <field> <symmetry>', got " +
           std::to_string(t.size() - 1) + " word(s) after %%MatrixMarket");
  }
  const std::string object = lower(t[1].str()), format = lower(t[2].str()),
                    field = lower(t[3].str()), symmetry = lower(t[4].str());
  if (object != "matrix") s.fail("bad banner: object " + quoted(t[1]) + " (only 'matrix')");

  if (format == "coordinate") {
    mm.format = MmFormat::coordinate;
  } else if (format == "array") {
    mm.format = MmFormat::array;
  } else {
    s.fail("bad banner: format " + quoted(t[2]) + " (expected coordinate or array)");
  }

  bool complex = false;
  if (field == "real") {
    mm.field = MmField::real;
  } else if (field == "integer") {
    mm.field = MmField::integer;
  } else if (field == "pattern") {
    mm.field = MmField::pattern;
  } else if (field == "complex") {
    complex = true;
  } else {
    s.fail("bad banner: field " + quoted(t[3]) + " (expected real, integer, pattern or complex)");
  }

  if (symmetry == "general") {
    mm.symmetry = MmSymmetry::general;
  } else if (symmetry == "symmetric") {
    mm.symmetry = MmSymmetry::symmetric;
  } else if (symmetry == "skew-symmetric") {
    mm.symmetry = MmSymmetry::skew_symmetric;
  } else if (symmetry == "hermitian") {
    complex = true;
  } else {
    s.fail("bad banner: symmetry " + quoted(t[4]) +
           " (expected general, symmetric, skew-symmetric or hermitian)");
  }
  if (complex) {
    GPUQR_THROW(Unsupported, name + ":" + std::to_string(s.line()) +
                                 ": complex is not supported yet (banner says " + field + " " +
                                 symmetry + ")");
  }
  if (mm.field == MmField::pattern && mm.format == MmFormat::array) {
    s.fail("bad banner: field pattern is only valid with the coordinate format, not array");
  }
  if (mm.field == MmField::pattern && mm.symmetry == MmSymmetry::skew_symmetric) {
    s.fail("bad banner: field pattern cannot be skew-symmetric");
  }
}

/// Reads the size line: "rows cols nnz" (coordinate) or "rows cols" (array).
std::int64_t read_size(Scanner& s, MatrixMarket& mm) {
  if (!s.next_data_line()) s.fail("unexpected end of input: missing the size line");
  const auto& t = s.tokens();
  const bool coord = mm.format == MmFormat::coordinate;
  const std::size_t want = coord ? 3 : 2;
  if (t.size() != want) {
    s.fail(std::string("bad size line: expected ") +
           (coord ? "'rows cols entries'" : "'rows cols'") + ", found " +
           std::to_string(t.size()) + " field(s)");
  }
  mm.rows = s.integer(t[0], "row count");
  mm.cols = s.integer(t[1], "column count");
  const std::int64_t nnz = coord ? s.integer(t[2], "entry count") : 0;
  if (mm.rows < 0 || mm.cols < 0 || nnz < 0) {
    s.fail("bad size line: negative size '" + s.line_text() + "'");
  }
  if (mm.symmetry != MmSymmetry::general && mm.rows != mm.cols) {
    const char* kind = mm.symmetry == MmSymmetry::symmetric ? "symmetric" : "skew-symmetric";
    s.fail(std::string("bad size line: a ") + kind + " matrix must be square, got " +
           std::to_string(mm.rows) + " x " + std::to_string(mm.cols));
  }
  if (coord) return nnz;
  // Array: how many values are stored (general: all; symmetric: lower triangle with the
  // diagonal; skew: strictly lower triangle). Guard the product against overflow.
  const std::int64_t n = mm.cols;
  if (mm.rows != 0 && mm.cols > INT64_MAX / 2 / mm.rows) s.fail("bad size line: matrix too large");
  if (mm.symmetry == MmSymmetry::general) return mm.rows * mm.cols;
  if (mm.symmetry == MmSymmetry::symmetric) return n * (n + 1) / 2;
  return n * (n - 1) / 2;
}

[[noreturn]] void fail_short(const Scanner& s, std::int64_t expected, std::int64_t found) {
  s.fail("unexpected end of input: expected " + std::to_string(expected) + " entries, found " +
         std::to_string(found));
}

/// After the declared entries: any further data line is an error.
void expect_end(Scanner& s, std::int64_t expected) {
  if (s.next_data_line()) {
    s.fail("extra entry '" + s.line_text() + "' after the " + std::to_string(expected) +
           " entries the size line declared");
  }
}

void read_coordinate(Scanner& s, std::int64_t nnz, std::size_t text_size,
                     const ReadOptions& options, MatrixMarket& mm) {
  const bool pattern = mm.field == MmField::pattern;
  const std::size_t fields = pattern ? 2 : 3;
  const bool mirrored = mm.symmetry != MmSymmetry::general;
  const double mirror_sign = mm.symmetry == MmSymmetry::skew_symmetric ? -1.0 : 1.0;
  // Every entry takes at least 4 bytes ("1 1\n"): never reserve more than the text can hold.
  const auto cap = static_cast<std::size_t>(
      std::min<std::int64_t>(nnz, static_cast<std::int64_t>(text_size / 4 + 1)) *
      (mirrored ? 2 : 1));
  std::vector<std::int64_t> ri, ci;
  std::vector<double> vals;
  ri.reserve(cap);
  ci.reserve(cap);
  vals.reserve(cap);

  for (std::int64_t k = 0; k < nnz; ++k) {
    if (!s.next_data_line()) fail_short(s, nnz, k);
    const auto& t = s.tokens();
    if (t.size() < fields) {
      s.fail("entry " + std::to_string(k + 1) + " has " + std::to_string(t.size()) +
             " field(s), expected " + std::to_string(fields) +
             (pattern ? " (row col)" : " (row col value)"));
    }
    if (t.size() > fields) {
      s.fail("trailing garbage " + quoted(t[fields]) + " after entry " + std::to_string(k + 1) +
             " (expected " + std::to_string(fields) + " fields)");
    }
    const std::int64_t i = s.integer(t[0], "row index");
    const std::int64_t j = s.integer(t[1], "column index");
    if (i < 1 || i > mm.rows) {
      s.fail("row index " + std::to_string(i) + " out of range 1.." + std::to_string(mm.rows));
    }
    if (j < 1 || j > mm.cols) {
      s.fail("column index " + std::to_string(j) + " out of range 1.." + std::to_string(mm.cols));
    }
    const double v = pattern ? 1.0 : s.number(t[2], mm.field, options);
    if (mm.symmetry == MmSymmetry::skew_symmetric && i == j) {
      s.fail("diagonal entry (" + std::to_string(i) + ", " + std::to_string(j) +
             ") in a skew-symmetric matrix (its diagonal is zero and not stored)");
    }
    ri.push_back(i - 1);
    ci.push_back(j - 1);
    vals.push_back(v);
    // Symmetric storage holds one triangle: mirror every off-diagonal entry.
    if (mirrored && i != j) {
      ri.push_back(j - 1);
      ci.push_back(i - 1);
      vals.push_back(mirror_sign * v);
    }
  }
  expect_end(s, nnz);
  mm.sparse = CscMatrix<double>::from_triplets(mm.rows, mm.cols, ri, ci, vals);
  // Pattern entries are structure only: repeated ones stay 1, not their count.
  if (pattern) std::fill(mm.sparse.values.begin(), mm.sparse.values.end(), 1.0);
}

void read_array(Scanner& s, std::int64_t count, std::size_t text_size, const ReadOptions& options,
                MatrixMarket& mm) {
  // Values first, the matrix after: a size line claiming a huge matrix fails on the short
  // data before anything that large is allocated (each value takes at least 2 bytes).
  std::vector<double> vals;
  vals.reserve(static_cast<std::size_t>(
      std::min<std::int64_t>(count, static_cast<std::int64_t>(text_size / 2 + 1))));
  for (std::int64_t k = 0; k < count; ++k) {
    if (!s.next_data_line()) fail_short(s, count, k);
    const auto& t = s.tokens();
    if (t.size() > 1) {
      s.fail("trailing garbage " + quoted(t[1]) + " after entry " + std::to_string(k + 1) +
             " (array files hold one value per line)");
    }
    vals.push_back(s.number(t[0], mm.field, options));
  }
  expect_end(s, count);

  Matrix<double> a(mm.rows, mm.cols);
  std::fill(a.data(), a.data() + a.ld() * mm.cols, 0.0);
  std::size_t k = 0;
  if (mm.symmetry == MmSymmetry::general) {
    for (std::int64_t j = 0; j < mm.cols; ++j)
      for (std::int64_t i = 0; i < mm.rows; ++i) a(i, j) = vals[k++];
  } else {
    // Column-major lower triangle (strictly lower for skew-symmetric), mirrored above.
    const bool skew = mm.symmetry == MmSymmetry::skew_symmetric;
    for (std::int64_t j = 0; j < mm.cols; ++j) {
      for (std::int64_t i = skew ? j + 1 : j; i < mm.rows; ++i) {
        a(i, j) = vals[k];
        a(j, i) = skew ? -vals[k] : vals[k];
        ++k;
      }
    }
  }
  mm.dense = std::move(a);
}

MatrixMarket parse(const std::string& text, const std::string& name, const ReadOptions& options) {
  Scanner s(text, name);
  MatrixMarket mm;
  read_banner(s, name, mm);
  const std::int64_t count = read_size(s, mm);
  if (mm.format == MmFormat::coordinate) {
    read_coordinate(s, count, text.size(), options, mm);
  } else {
    read_array(s, count, text.size(), options, mm);
  }
  return mm;
}

/// Closes a FILE* on scope exit.
struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f) std::fclose(f);
  }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

FilePtr open_for_write(const std::string& path) {
  FilePtr f(std::fopen(path.c_str(), "wb"));
  if (!f) {
    GPUQR_THROW(IoError, "cannot open '" + path + "' for writing: " + std::strerror(errno));
  }
  return f;
}

void finish_write(FilePtr f, const std::string& path) {
  const bool bad = std::ferror(f.get()) != 0;
  const int err = errno;
  const int closed = std::fclose(f.release());
  if (bad || closed != 0) {
    GPUQR_THROW(IoError, "error writing '" + path + "': " + std::strerror(bad ? err : errno));
  }
}

template <class T>
void write_dense(const std::string& path, MatrixView<const T> a, const char* value_format) {
  if (!a.on_host()) {
    GPUQR_THROW(InvalidArgument, "write_matrix_market: the matrix must be in host memory (is " +
                                     std::string(to_string(a.space())) + ")");
  }
  FilePtr f = open_for_write(path);
  std::fprintf(f.get(), "%%%%MatrixMarket matrix array real general\n");
  std::fprintf(f.get(), "%lld %lld\n", static_cast<long long>(a.rows()),
               static_cast<long long>(a.cols()));
  for (std::int64_t j = 0; j < a.cols(); ++j) {
    for (std::int64_t i = 0; i < a.rows(); ++i) {
      std::fprintf(f.get(), value_format, static_cast<double>(a(i, j)));
    }
  }
  finish_write(std::move(f), path);
}

}  // namespace

Matrix<double> MatrixMarket::to_dense() const {
  if (format == MmFormat::coordinate) return sparse.to_dense();
  return dense.to_host();
}

MatrixMarket read_matrix_market(std::istream& in, const std::string& name,
                                const ReadOptions& options) {
  std::ostringstream buffer;
  if (in.peek() != std::char_traits<char>::eof()) buffer << in.rdbuf();
  if (in.bad()) GPUQR_THROW(IoError, name + ": read error");
  return parse(buffer.str(), name, options);
}

MatrixMarket read_matrix_market(const std::string& path, const ReadOptions& options) {
  FilePtr f(std::fopen(path.c_str(), "rb"));
  if (!f) GPUQR_THROW(IoError, "cannot open '" + path + "': " + std::strerror(errno));
  std::string text;
  char chunk[1 << 16];
  for (;;) {
    const std::size_t got = std::fread(chunk, 1, sizeof chunk, f.get());
    text.append(chunk, got);
    if (got < sizeof chunk) break;
  }
  if (std::ferror(f.get())) {
    GPUQR_THROW(IoError, "cannot read '" + path + "': " + std::strerror(errno));
  }
  return parse(text, path, options);
}

void write_matrix_market(const std::string& path, MatrixView<const double> a) {
  write_dense(path, a, "%.17g\n");
}

void write_matrix_market(const std::string& path, MatrixView<const float> a) {
  write_dense(path, a, "%.9g\n");
}

void write_matrix_market(const std::string& path, const CscMatrix<double>& a) {
  a.validate();
  FilePtr f = open_for_write(path);
  std::fprintf(f.get(), "%%%%MatrixMarket matrix coordinate real general\n");
  std::fprintf(f.get(), "%lld %lld %lld\n", static_cast<long long>(a.rows),
               static_cast<long long>(a.cols), static_cast<long long>(a.nnz()));
  for (std::int64_t j = 0; j < a.cols; ++j) {
    for (std::int64_t p = a.col_ptr[j]; p < a.col_ptr[j + 1]; ++p) {
      std::fprintf(f.get(), "%lld %lld %.17g\n",
                   static_cast<long long>(a.row_indices[static_cast<std::size_t>(p)] + 1),
                   static_cast<long long>(j + 1), a.values[static_cast<std::size_t>(p)]);
    }
  }
  finish_write(std::move(f), path);
}

}  // namespace gpuqr::io
