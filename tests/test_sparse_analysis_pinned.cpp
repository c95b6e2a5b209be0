// Pins the whole output of analyze_sparse_qr: every field of SparseAnalysis (ordering, etree,
// R counts, supernodes, fronts with their rows, maps, flops, memory) must equal, bit for bit,
//  (1) a plain reference kept here: the sort-based analysis the library had before its
//      linear-time rewrite (one sorted R row pattern per column, a_rows gathered then sorted),
//      on the corpus, random matrices and grids, for every ordering;
//  (2) checksums of the output of that old code on grids and the corpus (natural ordering,
//      which depends on no external library), so that the reference cannot drift with the
//      library unnoticed.
// The library's analysis is a speed rewrite; if it is ever meant to change its output, this
// file is what has to be updated, on purpose.
#include <gtest/gtest.h>

#include "tests/support/sparse_corpus.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gpuqr/sparse.hpp"
#include "gpuqr/sparse_analysis.hpp"

namespace {

using gpuqr::ColumnOrdering;
using gpuqr::CscMatrix;
using gpuqr::FrontInfo;
using gpuqr::SparseAnalysis;
using gpuqr::SparseAnalysisOptions;
using I = std::int64_t;

// ---- the reference: the analysis as it was written before it was made fast ----------------

std::vector<I> ref_column_etree(const CscMatrix<double>& a, const std::vector<I>& q) {
  const I n = a.cols;
  std::vector<I> parent(n, -1), ancestor(n, -1), prev_col(a.rows, -1);
  for (I k = 0; k < n; ++k) {
    for (I p = a.col_ptr[q[k]]; p < a.col_ptr[q[k] + 1]; ++p) {
      const I row = a.row_indices[p];
      I j = prev_col[row];
      while (j != -1 && j < k) {
        const I next = ancestor[j];
        ancestor[j] = k;
        if (next == -1) parent[j] = k;
        j = next;
      }
      prev_col[row] = k;
    }
  }
  return parent;
}

void ref_child_lists(const std::vector<I>& parent, std::vector<I>& head, std::vector<I>& next) {
  const I n = static_cast<I>(parent.size());
  head.assign(n, -1);
  next.assign(n, -1);
  for (I j = n - 1; j >= 0; --j) {
    if (parent[j] != -1) {
      next[j] = head[parent[j]];
      head[parent[j]] = j;
    }
  }
}

std::vector<I> ref_postorder(const std::vector<I>& parent) {
  const I n = static_cast<I>(parent.size());
  std::vector<I> head, next, post, stack;
  ref_child_lists(parent, head, next);
  for (I root = 0; root < n; ++root) {
    if (parent[root] != -1) continue;
    stack.push_back(root);
    while (!stack.empty()) {
      const I p = stack.back();
      const I child = head[p];
      if (child == -1) {
        stack.pop_back();
        post.push_back(p);
      } else {
        head[p] = next[child];
        stack.push_back(child);
      }
    }
  }
  return post;
}

double ref_staircase_flops(const std::vector<I>& stair) {
  const I ncols = static_cast<I>(stair.size());
  if (ncols == 0) return 0;
  const I kmax = std::min(stair.back(), ncols);
  double flops = 0;
  for (I k = 0; k < kmax; ++k) {
    const double h = static_cast<double>(std::max<I>(stair[k] - k, 1));
    const double w = static_cast<double>(ncols - k - 1);
    flops += 4 * h * w + 3 * h + w + 5;
  }
  return flops;
}

/// The analysis of `a` with the initial column ordering `q0` (what the library's ordering step
/// returns), the other options as in `options`, for values of `value_bytes` bytes.
SparseAnalysis reference_analysis(const CscMatrix<double>& a, std::vector<I> q,
                                  const SparseAnalysisOptions& options, double value_bytes) {
  const I m = a.rows, n = a.cols;
  SparseAnalysis res;
  res.rows = m;
  res.cols = n;
  if (options.postorder_columns && n > 0) {
    const std::vector<I> post = ref_postorder(ref_column_etree(a, q));
    std::vector<I> composed(n);
    for (I k = 0; k < n; ++k) composed[k] = q[post[k]];
    q.swap(composed);
  }
  res.etree = ref_column_etree(a, q);
  res.postorder = ref_postorder(res.etree);

  // Rows of A*Q as ascending lists of permuted columns; rows by leftmost column.
  const I nnz = a.col_ptr[n];
  std::vector<I> row_ptr(m + 1, 0), row_cols(nnz);
  for (I p = 0; p < nnz; ++p) ++row_ptr[a.row_indices[p] + 1];
  for (I i = 0; i < m; ++i) row_ptr[i + 1] += row_ptr[i];
  {
    std::vector<I> fill(row_ptr.begin(), row_ptr.end() - 1);
    for (I k = 0; k < n; ++k)
      for (I p = a.col_ptr[q[k]]; p < a.col_ptr[q[k] + 1]; ++p)
        row_cols[fill[a.row_indices[p]]++] = k;
  }
  res.row_leftmost.assign(m, -1);
  std::vector<std::vector<I>> lm_rows(n);
  for (I i = 0; i < m; ++i) {
    if (row_ptr[i + 1] > row_ptr[i]) {
      res.row_leftmost[i] = row_cols[row_ptr[i]];
      lm_rows[res.row_leftmost[i]].push_back(i);
    }
  }

  // R's row patterns, one sorted list per column (all kept: this is a reference).
  std::vector<I> head, next;
  ref_child_lists(res.etree, head, next);
  std::vector<I> nchildren(n, 0);
  for (I j = 0; j < n; ++j)
    if (res.etree[j] != -1) ++nchildren[res.etree[j]];
  std::vector<std::vector<I>> pattern(n);
  std::vector<char> starts(n, 0);
  std::vector<I> mark(n, -1);
  res.r_row_counts.assign(n, 0);
  res.r_column_counts.assign(n, 0);
  for (I j = 0; j < n; ++j) {
    std::vector<I> pj{j};
    mark[j] = j;
    for (const I i : lm_rows[j]) {
      for (I t = row_ptr[i]; t < row_ptr[i + 1]; ++t) {
        if (mark[row_cols[t]] != j) {
          mark[row_cols[t]] = j;
          pj.push_back(row_cols[t]);
        }
      }
    }
    for (I c = head[j]; c != -1; c = next[c]) {
      for (const I x : pattern[c]) {
        if (x != c && mark[x] != j) {
          mark[x] = j;
          pj.push_back(x);
        }
      }
    }
    std::sort(pj.begin(), pj.end());
    const I count = static_cast<I>(pj.size());
    res.r_row_counts[j] = count;
    for (const I x : pj) ++res.r_column_counts[x];
    res.nnz_r += count;
    starts[j] = !(j > 0 && res.etree[j - 1] == j && nchildren[j] == 1 &&
                  count == res.r_row_counts[j - 1] - 1);
    pattern[j] = std::move(pj);
  }

  // Fundamental supernodes and relaxed amalgamation.
  std::vector<I>& sfirst = res.fundamental_supernodes;
  for (I j = 0; j < n; ++j)
    if (starts[j]) sfirst.push_back(j);
  const I ns = static_cast<I>(sfirst.size());
  sfirst.push_back(n);
  std::vector<I> super_of(n);
  for (I s = 0; s < ns; ++s)
    for (I j = sfirst[s]; j < sfirst[s + 1]; ++j) super_of[j] = s;
  std::vector<I> sparent(ns, -1);
  std::vector<double> strue(ns, 0);
  for (I s = 0; s < ns; ++s) {
    const I last = sfirst[s + 1] - 1;
    if (res.etree[last] != -1) sparent[s] = super_of[res.etree[last]];
    for (I j = sfirst[s]; j <= last; ++j) strue[s] += static_cast<double>(res.r_row_counts[j]);
  }
  std::vector<I> top_of(ns), g_npiv(ns), g_nonpiv(ns);
  std::vector<double> g_true(ns);
  for (I s = ns - 1; s >= 0; --s) {
    const I npiv_s = sfirst[s + 1] - sfirst[s];
    top_of[s] = s;
    g_npiv[s] = npiv_s;
    g_nonpiv[s] = res.r_row_counts[sfirst[s]] - npiv_s;
    g_true[s] = strue[s];
    if (s == ns - 1 || sparent[s] == -1 || top_of[sparent[s]] != top_of[s + 1]) continue;
    const I top = top_of[s + 1];
    const double npiv = static_cast<double>(npiv_s + g_npiv[top]);
    const double ncols = npiv + static_cast<double>(g_nonpiv[top]);
    const double stored = npiv * ncols - npiv * (npiv - 1) / 2;
    const double zeros = stored - (strue[s] + g_true[top]);
    if (npiv <= static_cast<double>(options.relax_columns) || zeros <= options.relax_fill * stored) {
      top_of[s] = top;
      g_npiv[top] += npiv_s;
      g_true[top] += strue[s];
    }
  }

  // Fronts.
  std::vector<I> front_of_col(n, -1);
  for (I s = 0; s < ns; ++s) {
    if (s > 0 && top_of[s] == top_of[s - 1]) continue;
    const I top = top_of[s];
    FrontInfo f;
    f.first_pivot = sfirst[s];
    f.npiv = sfirst[top + 1] - sfirst[s];
    const I last = f.first_pivot + f.npiv - 1;
    for (I j = f.first_pivot; j <= last; ++j) f.cols.push_back(j);
    for (const I x : pattern[sfirst[top]])
      if (x > last) f.cols.push_back(x);
    for (I j = f.first_pivot; j <= last; ++j) {
      front_of_col[j] = static_cast<I>(res.fronts.size());
      f.a_rows.insert(f.a_rows.end(), lm_rows[j].begin(), lm_rows[j].end());
    }
    std::sort(f.a_rows.begin(), f.a_rows.end());
    res.fronts.push_back(std::move(f));
  }
  const I nf = static_cast<I>(res.fronts.size());
  std::vector<I> pos(n, -1);
  double live_cb = 0, peak = 0, moved = 0;
  for (I fi = 0; fi < nf; ++fi) {
    FrontInfo& f = res.fronts[fi];
    const I last = f.first_pivot + f.npiv - 1;
    if (res.etree[last] != -1) {
      f.parent = front_of_col[res.etree[last]];
      res.fronts[f.parent].children.push_back(fi);
    }
    const I ncols = static_cast<I>(f.cols.size());
    for (I t = 0; t < ncols; ++t) pos[f.cols[t]] = t;
    f.rows = static_cast<I>(f.a_rows.size());
    double children_cb = 0;
    for (const I c : f.children) {
      const FrontInfo& child = res.fronts[c];
      f.rows += child.cb_rows;
      children_cb += static_cast<double>(child.cb_rows) * static_cast<double>(child.cb_cols);
      std::vector<I> map;
      for (I t = child.npiv; t < static_cast<I>(child.cols.size()); ++t)
        map.push_back(pos[child.cols[t]]);
      f.child_col_map.push_back(std::move(map));
    }
    for (I t = 0; t < ncols; ++t) pos[f.cols[t]] = -1;
    f.cb_cols = ncols - f.npiv;
    f.cb_rows = std::max<I>(0, std::min(f.rows - f.npiv, f.cb_cols));
    std::vector<I> stair(static_cast<std::size_t>(ncols), 0);
    if (ncols > 0) {
      for (const I i : f.a_rows) ++stair[res.row_leftmost[i] - f.first_pivot];
      for (std::size_t c = 0; c < f.children.size(); ++c)
        for (I r = 0; r < res.fronts[f.children[c]].cb_rows; ++r) ++stair[f.child_col_map[c][r]];
      for (I t = 1; t < ncols; ++t) stair[t] += stair[t - 1];
    }
    f.flops = ref_staircase_flops(stair);
    res.flops += f.flops;
    const double front_size = static_cast<double>(f.rows) * static_cast<double>(ncols);
    peak = std::max(peak, live_cb + front_size);
    live_cb += static_cast<double>(f.cb_rows) * static_cast<double>(f.cb_cols) - children_cb;
    moved += 2 * front_size * value_bytes;
  }
  res.memory_bytes = peak * value_bytes;
  res.intensity = moved > 0 ? res.flops / moved : 0;
  res.column_permutation = std::move(q);
  return res;
}

// ---- comparison and checksums --------------------------------------------------------------

bool same_bits(double x, double y) { return std::memcmp(&x, &y, sizeof x) == 0; }

/// Every field of `got` equals `want` (doubles bit for bit); stops at the first front that
/// differs, so that a broken analysis reports a few lines, not thousands.
void expect_same_analysis(const SparseAnalysis& got, const SparseAnalysis& want) {
  EXPECT_EQ(got.rows, want.rows);
  EXPECT_EQ(got.cols, want.cols);
  EXPECT_EQ(got.column_permutation, want.column_permutation);
  EXPECT_EQ(got.row_leftmost, want.row_leftmost);
  EXPECT_EQ(got.etree, want.etree);
  EXPECT_EQ(got.postorder, want.postorder);
  EXPECT_EQ(got.r_row_counts, want.r_row_counts);
  EXPECT_EQ(got.r_column_counts, want.r_column_counts);
  EXPECT_EQ(got.nnz_r, want.nnz_r);
  EXPECT_EQ(got.fundamental_supernodes, want.fundamental_supernodes);
  EXPECT_TRUE(same_bits(got.flops, want.flops)) << got.flops << " vs " << want.flops;
  EXPECT_TRUE(same_bits(got.memory_bytes, want.memory_bytes))
      << got.memory_bytes << " vs " << want.memory_bytes;
  EXPECT_TRUE(same_bits(got.intensity, want.intensity));
  ASSERT_EQ(got.fronts.size(), want.fronts.size());
  for (std::size_t f = 0; f < got.fronts.size(); ++f) {
    const FrontInfo& g = got.fronts[f];
    const FrontInfo& w = want.fronts[f];
    const bool same = g.parent == w.parent && g.children == w.children &&
                      g.first_pivot == w.first_pivot && g.npiv == w.npiv && g.cols == w.cols &&
                      g.a_rows == w.a_rows && g.rows == w.rows && g.cb_rows == w.cb_rows &&
                      g.cb_cols == w.cb_cols && g.child_col_map == w.child_col_map &&
                      same_bits(g.flops, w.flops);
    ASSERT_TRUE(same) << "front " << f << " differs (first pivot " << w.first_pivot << ")";
  }
}

/// FNV-1a over every field of an analysis, doubles by their bits.
class Fnv {
 public:
  void add(std::uint64_t v) {
    for (int b = 0; b < 8; ++b) {
      h_ ^= (v >> (8 * b)) & 0xff;
      h_ *= 1099511628211ULL;
    }
  }
  void add(double d) {
    std::uint64_t v;
    std::memcpy(&v, &d, sizeof v);
    add(v);
  }
  void add(I v) { add(static_cast<std::uint64_t>(v)); }
  void add(const std::vector<I>& v) {
    add(static_cast<I>(v.size()));
    for (const I x : v) add(x);
  }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = 14695981039346656037ULL;
};

void hash_analysis(const SparseAnalysis& an, Fnv& h) {
  h.add(an.rows), h.add(an.cols), h.add(an.column_permutation), h.add(an.row_leftmost);
  h.add(an.etree), h.add(an.postorder), h.add(an.r_row_counts), h.add(an.r_column_counts);
  h.add(an.nnz_r), h.add(an.fundamental_supernodes), h.add(an.flops), h.add(an.memory_bytes);
  h.add(an.intensity);
  h.add(static_cast<I>(an.fronts.size()));
  for (const FrontInfo& f : an.fronts) {
    h.add(f.parent), h.add(f.children), h.add(f.first_pivot), h.add(f.npiv), h.add(f.cols);
    h.add(f.a_rows), h.add(f.rows), h.add(f.cb_rows), h.add(f.cb_cols), h.add(f.flops);
    h.add(static_cast<I>(f.child_col_map.size()));
    for (const auto& map : f.child_col_map) h.add(map);
  }
}

// ---- problems ------------------------------------------------------------------------------

/// The pattern of gpuqr_sparse_gpu_bench's grids (bench/sparse_problems.cpp): a dims-D grid
/// of side `side`, rows 0..n-1 the (2 dims + 1)-point stencil, rows n..2n-1 the diagonal.
CscMatrix<double> grid(int dims, I side) {
  I n = 1;
  std::vector<I> stride;
  for (int d = 0; d < dims; ++d) stride.push_back(n), n *= side;
  CscMatrix<double> a;
  a.rows = 2 * n;
  a.cols = n;
  a.col_ptr.assign(n + 1, 0);
  const auto put = [&](I row) {
    a.row_indices.push_back(row);
    a.values.push_back(1.0);
  };
  for (I p = 0; p < n; ++p) {
    for (int d = dims - 1; d >= 0; --d)
      if ((p / stride[d]) % side > 0) put(p - stride[d]);
    put(p);
    for (int d = 0; d < dims; ++d)
      if ((p / stride[d]) % side < side - 1) put(p + stride[d]);
    put(n + p);
    a.col_ptr[p + 1] = static_cast<I>(a.row_indices.size());
  }
  return a;
}

CscMatrix<double> random_matrix(I m, I n, double density, std::mt19937_64& rng) {
  std::vector<I> ri, ci;
  std::vector<double> v;
  std::uniform_real_distribution<double> u(0, 1);
  for (I j = 0; j < n; ++j) {
    for (I i = 0; i < m; ++i) {
      if (u(rng) < density) ri.push_back(i), ci.push_back(j), v.push_back(1.0);
    }
  }
  return CscMatrix<double>::from_triplets(m, n, ri, ci, v);
}

std::vector<std::pair<std::string, CscMatrix<double>>> problems() {
  auto out = gpuqr::testing::sparse_corpus();
  out.emplace_back("grid2d:40", grid(2, 40));
  out.emplace_back("grid3d:9", grid(3, 9));
  out.emplace_back("grid3d:14", grid(3, 14));
  std::mt19937_64 rng(977);
  for (const auto& [m, n, d] : std::vector<std::tuple<I, I, double>>{
           {300, 200, 0.01}, {200, 300, 0.015}, {500, 500, 0.004}, {80, 60, 0.1}}) {
    out.emplace_back("random " + std::to_string(m) + "x" + std::to_string(n),
                     random_matrix(m, n, d, rng));
  }
  return out;
}

/// The ordering options to run: (name, options); `given` is a random permutation.
std::vector<std::pair<std::string, SparseAnalysisOptions>> option_sets(I n, std::mt19937_64& rng) {
  std::vector<std::pair<std::string, SparseAnalysisOptions>> out;
  std::vector<ColumnOrdering> ords{ColumnOrdering::natural, ColumnOrdering::given};
  if (gpuqr::sparse_orderings_available()) {
    ords.push_back(ColumnOrdering::colamd);
    ords.push_back(ColumnOrdering::amd);
  }
  for (ColumnOrdering ord : ords) {
    for (int variant = 0; variant < 3; ++variant) {
      SparseAnalysisOptions opt;
      opt.ordering = ord;
      if (ord == ColumnOrdering::given) {
        opt.column_permutation.resize(n);
        std::iota(opt.column_permutation.begin(), opt.column_permutation.end(), I{0});
        std::shuffle(opt.column_permutation.begin(), opt.column_permutation.end(), rng);
      }
      // 0: the defaults; 1: fundamental supernodes, no postorder; 2: heavy relaxation.
      if (variant == 1) {
        opt.relax_columns = 0;
        opt.relax_fill = -1;
        opt.postorder_columns = false;
      } else if (variant == 2) {
        opt.relax_columns = 32;
        opt.relax_fill = 0.3;
      }
      out.emplace_back("ordering " + std::to_string(static_cast<int>(ord)) + " variant " +
                           std::to_string(variant),
                       std::move(opt));
    }
  }
  return out;
}

TEST(SparseAnalysisPinned, MatchesSortBasedReference) {
  std::mt19937_64 rng(31337);
  int compared = 0;
  for (const auto& [name, a] : problems()) {
    for (const auto& [what, opt] : option_sets(a.cols, rng)) {
      SCOPED_TRACE(name + " " + what);
      const SparseAnalysis got = gpuqr::analyze_sparse_qr(a, opt);
      // The ordering step proper (before its postorder) is the library's: the same options
      // without the postorder return it as column_permutation.
      std::vector<I> q0 = got.column_permutation;
      if (opt.postorder_columns) {
        SparseAnalysisOptions raw = opt;
        raw.postorder_columns = false;
        q0 = gpuqr::analyze_sparse_qr(a, raw).column_permutation;
      }
      expect_same_analysis(got, reference_analysis(a, q0, opt, sizeof(double)));
      // float: only the byte counts differ.
      const SparseAnalysis got_f = gpuqr::analyze_sparse_qr(a.cast<float>(), opt);
      expect_same_analysis(got_f, reference_analysis(a, q0, opt, sizeof(float)));
      ++compared;
    }
  }
  EXPECT_GT(compared, 100);
}

// Checksums of the output of the sort-based analysis (the library's before its rewrite, which
// the reference above copies), natural ordering, default options and fundamental supernodes.
TEST(SparseAnalysisPinned, ChecksumsOfTheSortBasedAnalysis) {
  struct Case {
    const char* name;
    int dims;
    I side;
    std::uint64_t want_default, want_fundamental;
  };
  const Case cases[] = {
      {"grid2d:40", 2, 40, 0x7fdbbff6848114a4ULL, 0x5447d9e57475a703ULL},
      {"grid3d:9", 3, 9, 0x0cd5417cfdcbbfc6ULL, 0xf88120b4f8b474fbULL},
      {"grid3d:14", 3, 14, 0x73e07f57726a1b8cULL, 0xb2e655a529c51e2dULL},
  };
  SparseAnalysisOptions def;
  def.ordering = ColumnOrdering::natural;
  SparseAnalysisOptions fund = def;
  fund.relax_columns = 0;
  fund.relax_fill = -1;
  for (const Case& c : cases) {
    const auto a = grid(c.dims, c.side);
    Fnv hd, hf;
    hash_analysis(gpuqr::analyze_sparse_qr(a, def), hd);
    hash_analysis(gpuqr::analyze_sparse_qr(a, fund), hf);
    EXPECT_EQ(hd.value(), c.want_default) << c.name << std::hex << " got 0x" << hd.value();
    EXPECT_EQ(hf.value(), c.want_fundamental) << c.name << std::hex << " got 0x" << hf.value();
  }
  // The corpus, all matrices in one checksum.
  Fnv hd, hf;
  for (const auto& [name, a] : gpuqr::testing::sparse_corpus()) {
    hash_analysis(gpuqr::analyze_sparse_qr(a, def), hd);
    hash_analysis(gpuqr::analyze_sparse_qr(a, fund), hf);
  }
  EXPECT_EQ(hd.value(), 0x125b92ec3acc95bbULL) << "corpus" << std::hex << " got 0x" << hd.value();
  EXPECT_EQ(hf.value(), 0x2074991dace865e2ULL) << "corpus" << std::hex << " got 0x" << hf.value();
}

}  // namespace
