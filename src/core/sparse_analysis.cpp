// Symbolic analysis of a sparse multifrontal QR: ordering, column elimination tree, postorder,
// R's structure (row-merge symbolic), fundamental supernodes, relaxed amalgamation, fronts.
#include "gpuqr/sparse_analysis.hpp"

#include <algorithm>
#include <string>

#include "gpuqr/error.hpp"
#include "src/core/sparse_ordering.hpp"

namespace gpuqr {
namespace detail {
namespace {

using I = std::int64_t;

/// Column elimination tree of A*Q (the etree of (AQ)^T (AQ)) from A's columns, Liu's
/// algorithm with path compression: the rows of A act as cliques of A^T A, so each row only
/// links its previous column to the current one.
std::vector<I> column_etree(const CscPattern& a, const std::vector<I>& q) {
  const I n = a.cols;
  std::vector<I> parent(n, -1), ancestor(n, -1), prev_col(a.rows, -1);
  for (I k = 0; k < n; ++k) {
    const I col = q[k];
    for (I p = a.col_ptr[col]; p < a.col_ptr[col + 1]; ++p) {
      const I row = a.row_indices[p];
      // Climb from the row's previous column to the root of its current subtree, pointing
      // every visited node at k (path compression); that root becomes a child of k.
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

/// Children of each node in ascending order, as head/next linked lists.
void child_lists(const std::vector<I>& parent, std::vector<I>& head, std::vector<I>& next) {
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

/// Postorder of a forest by iterative depth-first search (roots and children ascending).
std::vector<I> tree_postorder(const std::vector<I>& parent) {
  const I n = static_cast<I>(parent.size());
  std::vector<I> head, next, post, stack;
  child_lists(parent, head, next);
  post.reserve(n);
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
  if (static_cast<I>(post.size()) != n) GPUQR_THROW(Error, "column etree is not a forest");
  return post;
}

/// Flops (multiplications + additions) of the staircase Householder QR of a front with
/// `ncols` columns whose column j is nonzero only in rows [0, stair[j]) (stair ascending, its
/// last entry the front's row count): reflector k (k < min(rows, ncols)) has length
/// h = stair[k] - k and is applied to the ncols - k - 1 columns right of
/// it, costing 4hw + 3h + w + 5 with w = ncols - k - 1 (h taken as 1 when the staircase
/// leaves no row at or below the diagonal: the reflector still exists, tau = 0, as geqrf's
/// for a zero column). For a dense front (stair[j] = rows)
/// this sums exactly to LAWN 41's geqrf count; with the staircase it counts what
/// SuiteSparseQR's flop count counts (the rows below the staircase are never touched).
double staircase_flops(const std::vector<I>& stair) {
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

/// R's structure by fundamental supernodes: `first` holds each supernode's first column (plus
/// n), its pattern (the columns of R's row `first`, ascending) is idx[ptr[s], ptr[s+1]),
/// super_of the supernode of each column and row_counts the size of every row of R.
struct SupernodalR {
  std::vector<I> first, ptr, idx, super_of, row_counts;
};

/// Merges the consecutive ascending runs v[bounds[r], bounds[r+1]) into one ascending v, by
/// pairs (log2(runs) passes over v), through `scratch`.
void merge_runs(std::vector<I>& v, std::vector<I>& bounds, std::vector<I>& scratch) {
  scratch.resize(v.size());
  while (bounds.size() > 2) {
    std::size_t out = 1;
    for (std::size_t r = 0; r + 1 < bounds.size(); r += 2) {
      const I lo = bounds[r], mid = bounds[r + 1];
      const I hi = r + 2 < bounds.size() ? bounds[r + 2] : mid;
      std::merge(v.begin() + lo, v.begin() + mid, v.begin() + mid, v.begin() + hi,
                 scratch.begin() + lo);
      bounds[out++] = hi;
    }
    bounds.resize(out);
    v.swap(scratch);
  }
}

/// R's structure (row-merge symbolic): row j of R = {j} + the columns of A's rows whose
/// leftmost column is j + the rows of R of j's etree children without their own column.
/// When j's only child is j - 1 and row j is row j - 1 without j - 1 (j and those A rows'
/// columns already lie in it), j continues j - 1's fundamental supernode: checking that costs
/// a look at the A rows, and row j is not built. So only the first row of each supernode is
/// built, which every other row of the supernode is a suffix of; the cost is nnz(A) plus
/// the supernodes' patterns, not nnz(R).
SupernodalR supernodal_r_structure(const std::vector<I>& etree, const std::vector<I>& row_ptr,
                                   const std::vector<I>& row_cols, const std::vector<I>& lm_ptr,
                                   const std::vector<I>& lm_rows) {
  const I n = static_cast<I>(etree.size());
  SupernodalR sr;
  sr.row_counts.assign(n, 0);
  sr.ptr.push_back(0);
  std::vector<I> head, next;
  child_lists(etree, head, next);
  std::vector<I> nchildren(n, 0);
  for (I j = 0; j < n; ++j)
    if (etree[j] != -1) ++nchildren[etree[j]];
  // mark[x] == s: column x lies in supernode s's pattern; while s is the current supernode,
  // its columns >= j are exactly those of row j - 1 of R right of j - 1.
  std::vector<I>& super_of = sr.super_of;
  super_of.assign(n, 0);
  std::vector<I> mark(n, -1), pj, bounds, scratch;
  I cur = -1;
  for (I j = 0; j < n; ++j) {
    bool extends = j > 0 && etree[j - 1] == j && nchildren[j] == 1 && mark[j] == cur;
    for (I p = lm_ptr[j]; extends && p < lm_ptr[j + 1]; ++p) {
      const I i = lm_rows[p];
      for (I t = row_ptr[i]; t < row_ptr[i + 1]; ++t) {
        if (mark[row_cols[t]] != cur) {
          extends = false;
          break;
        }
      }
    }
    if (extends) {
      super_of[j] = cur;
      sr.row_counts[j] = sr.row_counts[j - 1] - 1;
      continue;
    }
    // A new supernode: its first row, as the union of ascending runs (j itself, each A row's
    // and each child's new columns), merged.
    cur = static_cast<I>(sr.first.size());
    sr.first.push_back(j);
    super_of[j] = cur;
    pj.clear();
    bounds.assign(1, 0);
    const auto add_run = [&](const I* begin, const I* end) {
      for (const I* x = begin; x != end; ++x) {
        if (mark[*x] != cur) {
          mark[*x] = cur;
          pj.push_back(*x);
        }
      }
      if (static_cast<I>(pj.size()) > bounds.back()) bounds.push_back(static_cast<I>(pj.size()));
    };
    add_run(&j, &j + 1);
    for (I p = lm_ptr[j]; p < lm_ptr[j + 1]; ++p) {
      const I i = lm_rows[p];
      add_run(row_cols.data() + row_ptr[i], row_cols.data() + row_ptr[i + 1]);
    }
    // A child c of a supernode's first column ends its own supernode s (else c + 1 = j would
    // continue it): row c of R is s's pattern from position c - first[s] on, c itself first.
    for (I c = head[j]; c != -1; c = next[c]) {
      const I s = super_of[c];
      const I* row = sr.idx.data() + sr.ptr[s] + (c - sr.first[s]);
      add_run(row + 1, sr.idx.data() + sr.ptr[s + 1]);
    }
    merge_runs(pj, bounds, scratch);
    sr.row_counts[j] = static_cast<I>(pj.size());
    sr.idx.insert(sr.idx.end(), pj.begin(), pj.end());
    sr.ptr.push_back(static_cast<I>(sr.idx.size()));
  }
  sr.first.push_back(n);
  return sr;
}

/// The fill-reducing ordering requested by `options`, validated.
std::vector<I> initial_ordering(const CscPattern& a, const SparseAnalysisOptions& options) {
  const I n = a.cols;
  switch (options.ordering) {
    case ColumnOrdering::natural: {
      std::vector<I> q(n);
      for (I k = 0; k < n; ++k) q[k] = k;
      return q;
    }
    case ColumnOrdering::given: {
      const auto& q = options.column_permutation;
      GPUQR_CHECK_ARG(static_cast<I>(q.size()) == n,
                      "given column_permutation must have one entry per column (" +
                          std::to_string(n) + "), it has " + std::to_string(q.size()));
      std::vector<char> seen(n, 0);
      for (I k = 0; k < n; ++k) {
        GPUQR_CHECK_ARG(q[k] >= 0 && q[k] < n && !seen[q[k]],
                        "given column_permutation is not a permutation of 0..n-1 (entry " +
                            std::to_string(k) + " = " + std::to_string(q[k]) + ")");
        seen[q[k]] = 1;
      }
      return q;
    }
    case ColumnOrdering::colamd:
      return colamd_ordering(a);
    case ColumnOrdering::amd:
      return amd_ata_ordering(a);
  }
  GPUQR_THROW(InvalidArgument, "unknown ColumnOrdering");
}

/// The analysis proper; `value_bytes` is sizeof(T).
SparseAnalysis analyze(const CscPattern& a, const SparseAnalysisOptions& options,
                       double value_bytes) {
  GPUQR_CHECK_ARG(options.relax_columns >= 0, "relax_columns must be >= 0");
  GPUQR_CHECK_ARG(options.relax_fill == options.relax_fill, "relax_fill must not be NaN");
  const I m = a.rows, n = a.cols;
  SparseAnalysis res;
  res.rows = m;
  res.cols = n;

  // ---- ordering (composed with its etree postorder) and the column etree -------------------
  std::vector<I> q = initial_ordering(a, options);
  res.etree = column_etree(a, q);
  if (options.postorder_columns && n > 0) {
    // A postorder is a topological order of the etree, so it changes neither R's structure
    // nor the tree (Liu 1990): the etree of A*Q*P is the etree of A*Q relabelled, no need to
    // compute it again from A.
    const std::vector<I> post = tree_postorder(res.etree);
    std::vector<I> composed(n), when(n), parent(n);
    for (I k = 0; k < n; ++k) composed[k] = q[post[k]], when[post[k]] = k;
    for (I k = 0; k < n; ++k) {
      const I p = res.etree[post[k]];
      parent[k] = p == -1 ? -1 : when[p];
    }
    q.swap(composed);
    res.etree.swap(parent);
  }
  res.postorder = tree_postorder(res.etree);

  // ---- rows of A*Q as ascending lists of permuted columns; leftmost columns ---------------
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
  // Rows grouped by leftmost column (ascending row index within a column).
  std::vector<I> lm_ptr(n + 1, 0), lm_rows;
  for (I i = 0; i < m; ++i) {
    if (row_ptr[i + 1] > row_ptr[i]) {
      res.row_leftmost[i] = row_cols[row_ptr[i]];
      ++lm_ptr[res.row_leftmost[i] + 1];
    }
  }
  for (I j = 0; j < n; ++j) lm_ptr[j + 1] += lm_ptr[j];
  lm_rows.resize(lm_ptr[n]);
  {
    std::vector<I> fill(lm_ptr.begin(), lm_ptr.end() - 1);
    for (I i = 0; i < m; ++i)
      if (res.row_leftmost[i] >= 0) lm_rows[fill[res.row_leftmost[i]]++] = i;
  }

  // ---- R's structure, by fundamental supernodes ----------------------------------------------
  SupernodalR sr = supernodal_r_structure(res.etree, row_ptr, row_cols, lm_ptr, lm_rows);
  const std::vector<I>& sfirst = sr.first;
  const I ns = static_cast<I>(sfirst.size()) - 1;
  res.r_row_counts = std::move(sr.row_counts);
  res.r_column_counts.assign(n, 0);
  for (I s = 0; s < ns; ++s) {
    // Row j of R (j in the supernode [first, last]) is the supernode's pattern from position
    // j - first on: the supernode's column first + u lies in u + 1 of its rows, the columns
    // right of it in all of them.
    const I first = sfirst[s], width = sfirst[s + 1] - first;
    const I* pat = sr.idx.data() + sr.ptr[s];
    const I len = sr.ptr[s + 1] - sr.ptr[s];
    for (I u = 0; u < width; ++u) res.r_column_counts[pat[u]] += u + 1;
    for (I u = width; u < len; ++u) res.r_column_counts[pat[u]] += width;
  }
  for (I j = 0; j < n; ++j) res.nnz_r += res.r_row_counts[j];
  res.fundamental_supernodes = sfirst;

  // ---- fundamental supernodes' tree and structural R entries ---------------------------------
  const std::vector<I>& super_of = sr.super_of;
  std::vector<I> sparent(ns, -1);
  std::vector<double> strue(ns, 0);  // structural R entries of the supernode's rows
  for (I s = 0; s < ns; ++s) {
    const I last = sfirst[s + 1] - 1;
    if (res.etree[last] != -1) sparent[s] = super_of[res.etree[last]];
    for (I j = sfirst[s]; j <= last; ++j) strue[s] += static_cast<double>(res.r_row_counts[j]);
  }

  // ---- relaxed amalgamation: groups of consecutive supernodes [low, top] ---------------------
  std::vector<I> top_of(ns);
  std::vector<I> g_npiv(ns), g_nonpiv(ns);  // indexed by the group's top supernode
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

  // ---- fronts, in ascending order of their first pivot (a postorder) -------------------------
  std::vector<I> front_of_col(n, -1);
  for (I s = 0; s < ns; ++s) {
    if (s > 0 && top_of[s] == top_of[s - 1]) continue;
    const I top = top_of[s];
    FrontInfo f;
    f.first_pivot = sfirst[s];
    f.npiv = sfirst[top + 1] - sfirst[s];
    const I last = f.first_pivot + f.npiv - 1;
    // The top supernode's pattern starts with its own columns, which end at `last`.
    const I* pat = sr.idx.data() + sr.ptr[top] + (last + 1 - sfirst[top]);
    const I* pat_end = sr.idx.data() + sr.ptr[top + 1];
    f.cols.reserve(f.npiv + (pat_end - pat));
    for (I j = f.first_pivot; j <= last; ++j) f.cols.push_back(j);
    f.cols.insert(f.cols.end(), pat, pat_end);
    for (I j = f.first_pivot; j <= last; ++j) front_of_col[j] = static_cast<I>(res.fronts.size());
    f.a_rows.reserve(lm_ptr[last + 1] - lm_ptr[f.first_pivot]);
    res.fronts.push_back(std::move(f));
  }
  // A's rows go to the front of their leftmost column; visiting them in order leaves every
  // front's a_rows ascending.
  for (I i = 0; i < m; ++i)
    if (res.row_leftmost[i] >= 0) res.fronts[front_of_col[res.row_leftmost[i]]].a_rows.push_back(i);
  const I nf = static_cast<I>(res.fronts.size());
  std::vector<I> pos(n, -1), stair;
  double live_cb = 0, peak = 0, moved = 0;
  for (I fi = 0; fi < nf; ++fi) {
    FrontInfo& f = res.fronts[fi];
    const I last = f.first_pivot + f.npiv - 1;
    if (res.etree[last] != -1) {
      f.parent = front_of_col[res.etree[last]];
      if (f.parent <= fi) GPUQR_THROW(Error, "sparse analysis: fronts are not in postorder");
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
      map.reserve(child.cb_cols);
      for (I t = child.npiv; t < static_cast<I>(child.cols.size()); ++t) {
        const I where = pos[child.cols[t]];
        if (where < 0 || (!map.empty() && where <= map.back()))
          GPUQR_THROW(Error, "sparse analysis: a child's columns are not in its parent front");
        map.push_back(where);
      }
      f.child_col_map.push_back(std::move(map));
    }
    for (I t = 0; t < ncols; ++t) pos[f.cols[t]] = -1;
    f.cb_cols = ncols - f.npiv;
    f.cb_rows = std::max<I>(0, std::min(f.rows - f.npiv, f.cb_cols));
    // The staircase: rows by leftmost front column (A's rows at their leftmost pivot, a
    // child's CB row r, upper trapezoidal, at its CB column r), stair[j] = rows reaching j.
    stair.assign(static_cast<std::size_t>(ncols), 0);
    if (ncols > 0) {
      for (const I i : f.a_rows) ++stair[res.row_leftmost[i] - f.first_pivot];
      for (std::size_t c = 0; c < f.children.size(); ++c)
        for (I r = 0; r < res.fronts[f.children[c]].cb_rows; ++r) ++stair[f.child_col_map[c][r]];
      for (I t = 1; t < ncols; ++t) stair[t] += stair[t - 1];
    }
    f.flops = staircase_flops(stair);
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

}  // namespace
}  // namespace detail

template <class T>
SparseAnalysis analyze_sparse_qr(const CscMatrix<T>& a, const SparseAnalysisOptions& options) {
  a.validate();
  detail::CscPattern pattern{a.rows, a.cols, a.col_ptr.data(), a.row_indices.data()};
  return detail::analyze(pattern, options, static_cast<double>(sizeof(T)));
}

bool sparse_orderings_available() noexcept { return detail::have_suitesparse_orderings(); }

template SparseAnalysis analyze_sparse_qr<float>(const CscMatrix<float>&,
                                                 const SparseAnalysisOptions&);
template SparseAnalysis analyze_sparse_qr<double>(const CscMatrix<double>&,
                                                  const SparseAnalysisOptions&);

}  // namespace gpuqr
