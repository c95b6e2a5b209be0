// The sparse multifrontal QR's leaf operations (src/core/sparse_device_kernels.hpp).
//  SparseKernelCpu:   the CPU twins against a naive reference written here from the spec, on
//                     random arenas of non-zero values and random descriptors with disjoint
//                     destinations; every entry of the arena is compared, so an entry written
//                     that the spec leaves alone shows up as well as a wrong value.
//  SparseKernelCuda:  the CUDA leaves against the CPU twins on the same inputs, bit for bit
//                     (assembly only moves values); skipped with a message without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "src/core/sparse_device_kernels.hpp"
#include "tests/support/backends.hpp"
#include "tests/support/twins.hpp"

namespace gpuqr::testing {
namespace {

using detail::DiagDesc;
using detail::PackDesc;
using detail::RPackDesc;
using detail::SAssemblyDesc;
using Index = std::int64_t;
using Writes = std::map<Index, double>;  // arena index -> value (exact for float and double)

// ---- random inputs ----------------------------------------------------------------------------

/// Uniform in +-[0.5, 2): never zero, never small next to the tolerances below.
template <class T>
std::vector<T> nonzeros(Index n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> mag(0.5, 2.0);
  std::vector<T> v(static_cast<std::size_t>(n));
  for (T& x : v) x = T(rng() % 2 == 0 ? mag(rng) : -mag(rng));
  return v;
}

/// Regions of an arena, appended with small random gaps between them.
struct Layout {
  Index size = 0;
  Index take(Index elems, std::mt19937_64& rng) {
    const Index at = size + static_cast<Index>(rng() % 5);
    size = at + elems;
    return at;
  }
};

/// `count` distinct values of [0, n), in random order.
std::vector<Index> distinct(Index n, Index count, std::mt19937_64& rng) {
  std::vector<Index> all(static_cast<std::size_t>(n));
  std::iota(all.begin(), all.end(), Index{0});
  for (Index i = 0; i < count; ++i) {
    const Index j = i + static_cast<Index>(rng() % static_cast<std::uint64_t>(n - i));
    std::swap(all[static_cast<std::size_t>(i)], all[static_cast<std::size_t>(j)]);
  }
  all.resize(static_cast<std::size_t>(count));
  return all;
}

/// Records one write; two writes to one entry would make the result depend on the order.
void put(Writes& w, Index at, double value) {
  EXPECT_TRUE(w.emplace(at, value).second) << "the inputs write arena entry " << at << " twice";
}

/// `arena` with `writes` applied.
template <class T>
std::vector<T> applied(std::vector<T> arena, const Writes& writes) {
  for (const auto& [at, value] : writes) arena[static_cast<std::size_t>(at)] = T(value);
  return arena;
}

/// Entry by entry, bit for bit.
template <class T>
::testing::AssertionResult same_entries(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "sizes differ";
  Index wrong = 0, first = -1;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) {
      if (wrong++ == 0) first = static_cast<Index>(i);
    }
  if (wrong == 0) return ::testing::AssertionSuccess();
  const auto at = static_cast<std::size_t>(first);
  return ::testing::AssertionFailure() << wrong << " entries differ, the first at " << first
                                       << ": " << got[at] << " instead of " << want[at];
}

/// How many entries `writes` changes: all of them, or the test could not see a lost write.
template <class T>
Index changed(const std::vector<T>& before, const Writes& writes) {
  Index n = 0;
  for (const auto& [at, value] : writes) n += before[static_cast<std::size_t>(at)] != T(value);
  return n;
}

// ---- S-Assembly -------------------------------------------------------------------------------

struct FrontShape {
  Index rows, ncols, tuples, rhs_rows;
};

template <class T>
struct SCase {
  Index k = 0, ldb = 1;
  std::vector<T> arena, a_values, b;
  std::vector<Index> s_row, s_col, s_value, b_dst, b_src;
  std::vector<SAssemblyDesc> tasks;
};

/// Fronts of the given shapes (each tuple a distinct entry of its front, each right-hand-side
/// row a distinct row), some split into two descriptors, all in random order.
template <class T>
SCase<T> make_s_case(const std::vector<FrontShape>& fronts, Index k, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  SCase<T> c;
  c.k = k;
  const Index values = 1000, b_rows = 800;
  c.a_values = nonzeros<T>(values, rng);
  c.ldb = b_rows + 3;
  c.b = nonzeros<T>(c.ldb * k, rng);
  Layout layout;
  for (const FrontShape& f : fronts) {
    SAssemblyDesc d;
    d.ld = f.rows + static_cast<Index>(rng() % 3);
    d.ncols = f.ncols;
    d.front = layout.take(d.ld * (f.ncols + k), rng);
    d.t0 = static_cast<Index>(c.s_row.size());
    for (const Index cell : distinct(f.rows * f.ncols, f.tuples, rng)) {
      c.s_row.push_back(cell % f.rows);
      c.s_col.push_back(cell / f.rows);
      c.s_value.push_back(static_cast<Index>(rng() % values));
    }
    d.t1 = static_cast<Index>(c.s_row.size());
    d.b0 = static_cast<Index>(c.b_dst.size());
    for (const Index row : distinct(f.rows, f.rhs_rows, rng)) {
      c.b_dst.push_back(row);
      c.b_src.push_back(static_cast<Index>(rng() % b_rows));
    }
    d.b1 = static_cast<Index>(c.b_dst.size());
    if (rng() % 2 == 0) {  // a front assembled by two descriptors (slices of its tuples)
      SAssemblyDesc e = d;
      d.t1 = e.t0 = d.t0 + (d.t1 - d.t0) / 2;
      d.b1 = e.b0 = d.b0 + (d.b1 - d.b0) / 3;
      c.tasks.push_back(e);
    }
    c.tasks.push_back(d);
  }
  c.arena = nonzeros<T>(layout.size + 3, rng);
  std::shuffle(c.tasks.begin(), c.tasks.end(), rng);
  return c;
}

/// Moderate fronts, a zero-size one, fronts with only tuples or only right-hand sides, and
/// `tiny` fronts of a few entries; with `large`, a front of 250000 tuples.
std::vector<FrontShape> mixed_fronts(bool large, int tiny, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<FrontShape> f = {{40, 12, 300, 25}, {7, 3, 21, 7}, {5, 4, 0, 0},
                               {6, 2, 0, 4},      {9, 5, 12, 0}, {33, 17, 1, 33}};
  if (large) f.push_back({1000, 400, 250000, 700});
  for (int i = 0; i < tiny; ++i) {
    const Index rows = 1 + static_cast<Index>(rng() % 4), cols = 1 + static_cast<Index>(rng() % 3);
    f.push_back({rows, cols, 1 + static_cast<Index>(rng() % static_cast<std::uint64_t>(rows * cols)),
                 static_cast<Index>(rng() % static_cast<std::uint64_t>(rows + 1))});
  }
  return f;
}

/// S-Assembly's writes, straight from the spec.
template <class T>
Writes s_writes(const SCase<T>& c, const std::vector<SAssemblyDesc>& tasks) {
  Writes w;
  for (const SAssemblyDesc& d : tasks) {
    for (Index t = d.t0; t < d.t1; ++t)
      put(w, d.front + c.s_row[t] + c.s_col[t] * d.ld, double(c.a_values[c.s_value[t]]));
    for (Index q = d.b0; q < d.b1; ++q)
      for (Index j = 0; j < c.k; ++j)
        put(w, d.front + c.b_dst[q] + (d.ncols + j) * d.ld, double(c.b[c.b_src[q] + j * c.ldb]));
  }
  return w;
}

template <class T>
void cpu_s_assembly(SCase<T>& c, const std::vector<SAssemblyDesc>& tasks) {
  const Context cpu = Context::cpu();
  kernels::cpu::sparse_s_assembly<T>(cpu.impl(), c.arena.data(), c.a_values.data(),
                                     c.s_row.data(), c.s_col.data(), c.s_value.data(),
                                     c.k > 0 ? c.b.data() : nullptr, c.ldb, c.k,
                                     c.b_dst.data(), c.b_src.data(), tasks);
}

// ---- Pack-Assembly ----------------------------------------------------------------------------

struct ChildShape {
  Index cb_rows, cb_cols;
  bool compact;  // a carried-in block (r0 = c0 = 0), else a region of the child's front buffer
};
struct ParentShape {
  Index rows, ncols;
  std::vector<ChildShape> children;
};

template <class T>
struct PackCase {
  Index k = 0;
  std::vector<T> arena;
  std::vector<Index> pack_row, pack_col;
  std::vector<PackDesc> tasks;
};

/// Parents of the given shapes; their children take disjoint rows of the parent (Rimap) and
/// ascending columns (Rjmap), so destinations are disjoint. Random order.
template <class T>
PackCase<T> make_pack_case(const std::vector<ParentShape>& parents, Index k, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  PackCase<T> c;
  c.k = k;
  Layout layout;
  for (const ParentShape& p : parents) {
    const Index dld = p.rows + static_cast<Index>(rng() % 3);
    const Index dst = layout.take(dld * (p.ncols + k), rng);
    const std::vector<Index> rows = distinct(p.rows, p.rows, rng);
    Index next_row = 0;
    for (const ChildShape& ch : p.children) {
      PackDesc d;
      d.cb_rows = ch.cb_rows;
      d.cb_cols = ch.cb_cols;
      d.dst = dst;
      d.dld = dld;
      d.dncols = p.ncols;
      d.row_map = static_cast<Index>(c.pack_row.size());
      for (Index r = 0; r < ch.cb_rows; ++r) c.pack_row.push_back(rows.at(next_row++));
      std::vector<Index> cols = distinct(p.ncols, ch.cb_cols, rng);
      std::sort(cols.begin(), cols.end());
      d.col_map = static_cast<Index>(c.pack_col.size());
      c.pack_col.insert(c.pack_col.end(), cols.begin(), cols.end());
      if (ch.compact) {
        d.sld = std::max<Index>(1, ch.cb_rows + static_cast<Index>(rng() % 2));
      } else {
        d.r0 = 1 + static_cast<Index>(rng() % 4);
        d.c0 = 1 + static_cast<Index>(rng() % 3);
        d.sld = d.r0 + ch.cb_rows + static_cast<Index>(rng() % 3);
      }
      d.src = layout.take(d.sld * (d.c0 + ch.cb_cols + k), rng);
      c.tasks.push_back(d);
    }
  }
  c.arena = nonzeros<T>(layout.size + 3, rng);
  std::shuffle(c.tasks.begin(), c.tasks.end(), rng);
  return c;
}

/// Children around tile edges (32 rows, 16 columns), more rows than columns, no rows, no
/// columns, both kinds of source; `tiny` parents of 1..3 small children; with `large`, a
/// 700 x 700 contribution block (245350 entries in its upper trapezoid).
std::vector<ParentShape> mixed_parents(bool large, int tiny, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<ParentShape> p = {
      {80, 70, {{33, 33, false}, {20, 47, true}, {16, 16, true}, {0, 5, true}}},
      {40, 10, {{12, 10, false}, {20, 3, true}, {5, 0, true}}},
      {70, 64, {{64, 64, false}, {1, 1, true}}},
  };
  if (large) p.push_back({760, 720, {{700, 700, false}, {50, 40, true}}});
  for (int i = 0; i < tiny; ++i) {
    ParentShape q{6, 5, {}};
    const int children = 1 + static_cast<int>(rng() % 3);
    for (int j = 0; j < children; ++j)
      q.children.push_back({static_cast<Index>(rng() % 3), static_cast<Index>(rng() % 4),
                            rng() % 2 == 0});
    p.push_back(q);
  }
  return p;
}

/// Pack-Assembly's writes, straight from the spec (row by row here; the twin goes by columns).
template <class T>
Writes pack_writes(const PackCase<T>& c, const std::vector<PackDesc>& tasks) {
  Writes w;
  for (const PackDesc& d : tasks) {
    const Index* rimap = c.pack_row.data() + d.row_map;
    const Index* rjmap = c.pack_col.data() + d.col_map;
    const auto src = [&](Index r, Index t) {
      return double(c.arena[d.src + (d.r0 + r) + (d.c0 + t) * d.sld]);
    };
    for (Index r = 0; r < d.cb_rows; ++r) {
      for (Index t = r; t < d.cb_cols; ++t) put(w, d.dst + rimap[r] + rjmap[t] * d.dld, src(r, t));
      for (Index j = 0; j < c.k; ++j)
        put(w, d.dst + rimap[r] + (d.dncols + j) * d.dld, src(r, d.cb_cols + j));
    }
  }
  return w;
}

template <class T>
void cpu_pack_assembly(PackCase<T>& c, const std::vector<PackDesc>& tasks) {
  const Context cpu = Context::cpu();
  kernels::cpu::sparse_pack_assembly<T>(cpu.impl(), c.arena.data(), c.pack_row.data(),
                                        c.pack_col.data(), c.k, tasks);
}

// ---- small diagonals --------------------------------------------------------------------------

constexpr double kTol = 1.0 / 1024;  // exact in float: |d| == tol is a case of its own

template <class T>
struct DiagCase {
  std::vector<T> arena;
  std::vector<DiagDesc> tasks;
  Index small = 0;  // how many of the diagonals were made small
};

/// Fronts with `counts` diagonal entries: random non-zeros, and at random a value from a list
/// of small ones (zeros, |d| = tol, tol / 2, a subnormal, NaN, infinities) or of ones just
/// large enough (2 tol, the largest finite). Every subdiagonal entry is zero, so reading
/// beside the diagonal changes the count.
template <class T>
DiagCase<T> make_diag_case(const std::vector<Index>& counts, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const T tol = T(kTol), inf = std::numeric_limits<T>::infinity();
  const std::vector<T> small = {T(0), -T(0), tol, -tol, tol / 2, std::numeric_limits<T>::denorm_min(),
                                std::numeric_limits<T>::quiet_NaN(), inf, -inf};
  const std::vector<T> large = {2 * tol, -2 * tol, std::numeric_limits<T>::max()};
  DiagCase<T> c;
  Layout layout;
  for (const Index n : counts) {
    DiagDesc d;
    d.ld = n + 1 + static_cast<Index>(rng() % 3);
    d.count = n;
    d.front = layout.take(d.ld * n, rng);
    c.tasks.push_back(d);
  }
  c.arena = nonzeros<T>(layout.size + 3, rng);
  for (const DiagDesc& d : c.tasks)
    for (Index j = 0; j < d.count; ++j) {
      T& x = c.arena[static_cast<std::size_t>(d.front + j * (d.ld + 1))];
      const auto roll = rng() % 8;
      if (roll == 0) {
        x = small[rng() % small.size()];
        ++c.small;
      } else if (roll == 1) {
        x = large[rng() % large.size()];
      }
      if (j + 1 < d.ld) c.arena[static_cast<std::size_t>(d.front + j * (d.ld + 1) + 1)] = T(0);
    }
  std::shuffle(c.tasks.begin(), c.tasks.end(), rng);
  return c;
}

// ---- the CPU twins ----------------------------------------------------------------------------

template <class T>
void check_cpu_s_assembly(Index k, std::uint64_t seed) {
  SCase<T> c = make_s_case<T>(mixed_fronts(false, 40, seed), k, seed + 1);
  const std::vector<T> before = c.arena;
  const Writes w = s_writes(c, c.tasks);
  ASSERT_EQ(changed(before, w), static_cast<Index>(w.size()));
  cpu_s_assembly(c, c.tasks);
  EXPECT_TRUE(same_entries(c.arena, applied(before, w))) << "k = " << k;
  cpu_s_assembly(c, {});  // an empty list writes nothing
  EXPECT_TRUE(same_entries(c.arena, applied(before, w)));
}

TEST(SparseKernelCpu, SAssemblyMatchesTheReference) {
  for (const Index k : {0, 3}) {
    check_cpu_s_assembly<double>(k, 11 + static_cast<std::uint64_t>(k));
    check_cpu_s_assembly<float>(k, 21 + static_cast<std::uint64_t>(k));
  }
}

template <class T>
void check_cpu_pack_assembly(Index k, std::uint64_t seed) {
  PackCase<T> c = make_pack_case<T>(mixed_parents(false, 30, seed), k, seed + 1);
  const std::vector<T> before = c.arena;
  const Writes w = pack_writes(c, c.tasks);
  ASSERT_EQ(changed(before, w), static_cast<Index>(w.size()));
  cpu_pack_assembly(c, c.tasks);
  EXPECT_TRUE(same_entries(c.arena, applied(before, w))) << "k = " << k;
  cpu_pack_assembly(c, {});
  EXPECT_TRUE(same_entries(c.arena, applied(before, w)));
}

TEST(SparseKernelCpu, PackAssemblyMatchesTheReference) {
  for (const Index k : {0, 3}) {
    check_cpu_pack_assembly<double>(k, 31 + static_cast<std::uint64_t>(k));
    check_cpu_pack_assembly<float>(k, 41 + static_cast<std::uint64_t>(k));
  }
}

// The inputs of the CUDA comparisons below (one large descriptor, thousands of tiny ones),
// checked here too, where CI runs.
TEST(SparseKernelCpu, LargeAndTinyDescriptorsMatchTheReference) {
  SCase<double> s = make_s_case<double>(mixed_fronts(true, 3000, 131), 3, 132);
  const std::vector<double> s_before = s.arena;
  const Writes sw = s_writes(s, s.tasks);
  ASSERT_GE(static_cast<Index>(sw.size()), 250000);
  cpu_s_assembly(s, s.tasks);
  EXPECT_TRUE(same_entries(s.arena, applied(s_before, sw)));

  PackCase<double> p = make_pack_case<double>(mixed_parents(true, 2000, 133), 3, 134);
  const std::vector<double> p_before = p.arena;
  const Writes pw = pack_writes(p, p.tasks);
  ASSERT_GT(static_cast<Index>(pw.size()), 245350);
  cpu_pack_assembly(p, p.tasks);
  EXPECT_TRUE(same_entries(p.arena, applied(p_before, pw)));
}

TEST(SparseKernelCpu, PackAssemblyLeavesTheLowerPartAlone) {
  PackCase<double> c = make_pack_case<double>(mixed_parents(false, 0, 51), 2, 52);
  const std::vector<double> before = c.arena;
  cpu_pack_assembly(c, c.tasks);
  Index checked = 0;
  for (const PackDesc& d : c.tasks)
    for (Index t = 0; t < d.cb_cols; ++t)
      for (Index r = t + 1; r < d.cb_rows; ++r) {
        const Index at = d.dst + c.pack_row[d.row_map + r] + c.pack_col[d.col_map + t] * d.dld;
        ASSERT_EQ(c.arena[at], before[at]) << "CB entry (" << r << ", " << t << ") was packed";
        ++checked;
      }
  EXPECT_GT(checked, 100);
}

template <class T>
void check_cpu_small_diagonals(std::uint64_t seed) {
  const DiagCase<T> c = make_diag_case<T>({1, 2, 0, 17, 40, 3, 100, 1}, seed);
  ASSERT_GT(c.small, 0);
  const Context cpu = Context::cpu();
  Index count = 7;  // the leaf adds to it
  kernels::cpu::sparse_count_small_diagonals<T>(cpu.impl(), c.arena.data(), kTol, c.tasks, &count);
  EXPECT_EQ(count, 7 + c.small);
  kernels::cpu::sparse_count_small_diagonals<T>(cpu.impl(), c.arena.data(), kTol, {}, &count);
  EXPECT_EQ(count, 7 + c.small);
}

TEST(SparseKernelCpu, CountsSmallDiagonalsWithNaNAndInfinities) {
  check_cpu_small_diagonals<double>(61);
  check_cpu_small_diagonals<float>(62);
}

TEST(SparseKernelCpu, CountsTheToleranceItselfAsSmall) {
  const Context cpu = Context::cpu();
  const std::vector<double> a = {kTol, 5, 5, std::nextafter(kTol, 1.0)};  // 2 x 2, ld 2
  Index count = 0;
  kernels::cpu::sparse_count_small_diagonals<double>(cpu.impl(), a.data(), kTol, {{0, 2, 2}},
                                                     &count);
  EXPECT_EQ(count, 1);
}

// ---- R's rows packed ---------------------------------------------------------------------------

template <class T>
struct RPackCase {
  std::vector<T> arena;
  std::vector<RPackDesc> tasks;
  Index packed = 0;  ///< elements of the packed buffer (with gaps between the fronts)
};

/// Fronts of (rows, live rows, columns), with a random leading dimension and gaps between
/// them, in the arena and in the packed buffer.
template <class T>
RPackCase<T> make_r_pack_case(const std::vector<std::array<Index, 3>>& shapes,
                              std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  RPackCase<T> c;
  Layout arena, packed;
  for (const auto& [rows, live, ncols] : shapes) {
    RPackDesc d;
    d.ld = std::max<Index>(1, rows + static_cast<Index>(rng() % 3));
    d.src = arena.take(d.ld * ncols, rng);
    d.rows = live;
    d.ncols = ncols;
    d.dst = packed.take(detail::r_pack_offset(live, ncols), rng);
    c.tasks.push_back(d);
  }
  std::shuffle(c.tasks.begin(), c.tasks.end(), rng);
  c.arena = nonzeros<T>(arena.size, rng);
  c.packed = packed.size;
  return c;
}

/// The packed buffer, written from the spec by walking it: front after front, row i holds
/// columns i .. ncols - 1; the gaps keep `fill`.
template <class T>
std::vector<T> r_pack_reference(const RPackCase<T>& c, T fill) {
  std::vector<T> out(static_cast<std::size_t>(c.packed), fill);
  for (const RPackDesc& d : c.tasks) {
    Index at = d.dst;
    for (Index i = 0; i < d.rows; ++i)
      for (Index t = i; t < d.ncols; ++t) out[static_cast<std::size_t>(at++)] = c.arena[static_cast<std::size_t>(d.src + i + t * d.ld)];
  }
  return out;
}

std::vector<std::array<Index, 3>> r_pack_shapes(bool large) {
  std::vector<std::array<Index, 3>> shapes = {
      {1, 1, 1}, {5, 0, 4}, {0, 0, 3}, {3, 3, 3}, {40, 31, 70}, {33, 33, 33}, {2, 2, 97},
      {100, 64, 64}, {7, 5, 300}};
  if (large) {
    shapes.push_back({1200, 700, 1500});
    shapes.push_back({4000, 96, 900});
    for (Index i = 0; i < 500; ++i) shapes.push_back({2 + i % 37, 1 + i % 29, 29 + i % 41});
  }
  return shapes;
}

template <class T>
void check_cpu_r_pack(std::uint64_t seed) {
  const RPackCase<T> c = make_r_pack_case<T>(r_pack_shapes(false), seed);
  const T fill = T(-7.25);
  std::vector<T> packed(static_cast<std::size_t>(c.packed), fill);
  kernels::cpu::sparse_pack_r_rows<T>(Context::cpu().impl(), c.arena.data(), c.tasks,
                                      packed.data());
  EXPECT_TRUE(same_entries(packed, r_pack_reference(c, fill)));
}

TEST(SparseKernelCpu, PackRRowsMatchesTheReference) {
  check_cpu_r_pack<double>(131);
  check_cpu_r_pack<float>(132);
}

TEST(SparseKernelCpu, CopyToHostCopiesExactly) {
  std::mt19937_64 rng(133);
  const std::vector<double> src = nonzeros<double>(1000, rng);
  detail::ContextImpl& cpu = Context::cpu().impl();
  auto* host = static_cast<double*>(kernels::cpu::sparse_host_alloc(cpu, 1000 * sizeof(double)));
  kernels::cpu::sparse_copy_to_host<double>(cpu, host, src.data(), 1000);
  EXPECT_TRUE(same_entries(std::vector<double>(host, host + 1000), src));
  kernels::cpu::sparse_host_free(cpu, host);
}

// ---- CUDA against the CPU twins ---------------------------------------------------------------

class SparseKernelCuda : public BackendTest {};

template <class E>
std::vector<E> from_device(const Context& gpu, const DeviceArray<E>& d, std::size_t n) {
  gpu.synchronize();
  std::vector<E> h(n);
  detail::copy_2d(h.data(), static_cast<Index>(n), MemorySpace::host, d.data(),
                  static_cast<Index>(n), MemorySpace::device, static_cast<Index>(n), 1, sizeof(E));
  return h;
}

/// `tasks` cut into `calls` consecutive lists (one call each, enqueued back to back).
template <class Desc>
std::vector<std::vector<Desc>> cut(const std::vector<Desc>& tasks, std::size_t calls) {
  std::vector<std::vector<Desc>> out(calls);
  if (tasks.empty()) return out;
  for (std::size_t i = 0; i < tasks.size(); ++i) out[i * calls / tasks.size()].push_back(tasks[i]);
  return out;
}

template <class T>
void check_cuda_s_assembly(const Context& gpu, Index k, std::size_t calls, std::uint64_t seed) {
  SCase<T> c = make_s_case<T>(mixed_fronts(true, 3000, seed), k, seed + 1);
  const int dev = gpu.device();
  const DeviceArray<T> arena(c.arena, dev), values(c.a_values, dev), b(c.b, dev);
  const DeviceArray<Index> row(c.s_row, dev), col(c.s_col, dev), value(c.s_value, dev),
      dst(c.b_dst, dev), src(c.b_src, dev);
  for (const std::vector<SAssemblyDesc>& part : cut(c.tasks, calls))
    kernels::cuda::sparse_s_assembly<T>(gpu.impl(), arena.data(), values.data(), row.data(),
                                        col.data(), value.data(), k > 0 ? b.data() : nullptr,
                                        c.ldb, k, dst.data(), src.data(), part);
  ASSERT_GE(static_cast<Index>(s_writes(c, c.tasks).size()), 250000);
  cpu_s_assembly(c, c.tasks);
  EXPECT_TRUE(same_entries(from_device(gpu, arena, c.arena.size()), c.arena))
      << "k = " << k << ", " << calls << " calls";
}

TEST_P(SparseKernelCuda, SAssemblyMatchesTheTwin) {
  GPUQR_FOR_PRECISION([&]<class T>() {
    for (const Index k : {0, 3}) check_cuda_s_assembly<T>(ctx(), k, 1, 81 + k);
  });
}

template <class T>
void check_cuda_pack_assembly(const Context& gpu, Index k, std::size_t calls, std::uint64_t seed) {
  PackCase<T> c = make_pack_case<T>(mixed_parents(true, 2000, seed), k, seed + 1);
  const int dev = gpu.device();
  const DeviceArray<T> arena(c.arena, dev);
  const DeviceArray<Index> rows(c.pack_row, dev), cols(c.pack_col, dev);
  for (const std::vector<PackDesc>& part : cut(c.tasks, calls))
    kernels::cuda::sparse_pack_assembly<T>(gpu.impl(), arena.data(), rows.data(), cols.data(), k,
                                           part);
  const Index writes = static_cast<Index>(pack_writes(c, c.tasks).size());
  ASSERT_GT(writes, 245350);
  cpu_pack_assembly(c, c.tasks);
  EXPECT_TRUE(same_entries(from_device(gpu, arena, c.arena.size()), c.arena))
      << "k = " << k << ", " << calls << " calls";
}

TEST_P(SparseKernelCuda, PackAssemblyMatchesTheTwin) {
  GPUQR_FOR_PRECISION([&]<class T>() {
    for (const Index k : {0, 3}) check_cuda_pack_assembly<T>(ctx(), k, 1, 91 + k);
  });
}

// More calls than the pinned staging has buffers, none waited for: each call's plan must
// survive until its own kernel has read it.
TEST_P(SparseKernelCuda, BackToBackCallsMatchTheTwin) {
  GPUQR_FOR_PRECISION([&]<class T>() {
    check_cuda_s_assembly<T>(ctx(), 3, 20, 101);
    check_cuda_pack_assembly<T>(ctx(), 3, 20, 103);
  });
}

template <class T>
void check_cuda_small_diagonals(const Context& gpu, std::uint64_t seed) {
  std::vector<Index> counts = {1500, 0, 2, 700};
  for (int i = 0; i < 3000; ++i) counts.push_back(static_cast<Index>(seed % 4 + i % 3));
  const DiagCase<T> c = make_diag_case<T>(counts, seed);
  const DeviceArray<T> arena(c.arena, gpu.device());
  const DeviceArray<Index> count(std::vector<Index>{7}, gpu.device());
  kernels::cuda::sparse_count_small_diagonals<T>(gpu.impl(), arena.data(), kTol, c.tasks,
                                                 count.data());
  Index twin = 7;
  kernels::cpu::sparse_count_small_diagonals<T>(Context::cpu().impl(), c.arena.data(), kTol,
                                                c.tasks, &twin);
  EXPECT_EQ(twin, 7 + c.small);
  EXPECT_EQ(from_device(gpu, count, 1)[0], twin);
}

TEST_P(SparseKernelCuda, CountSmallDiagonalsMatchesTheTwin) {
  GPUQR_FOR_PRECISION([&]<class T>() { check_cuda_small_diagonals<T>(ctx(), 111); });
}

TEST_P(SparseKernelCuda, EmptyListsAndEmptyDescriptorsWriteNothing) {
  GPUQR_FOR_PRECISION([&]<class T>() {
    std::mt19937_64 rng(121);
    const std::vector<T> host = nonzeros<T>(64, rng);
    const int dev = ctx().device();
    const DeviceArray<T> arena(host, dev);
    const DeviceArray<Index> count(std::vector<Index>{5}, dev);
    detail::ContextImpl& gpu = ctx().impl();
    kernels::cuda::sparse_s_assembly<T>(gpu, arena.data(), nullptr, nullptr, nullptr, nullptr,
                                        nullptr, 1, 0, nullptr, nullptr, {});
    kernels::cuda::sparse_s_assembly<T>(gpu, arena.data(), nullptr, nullptr, nullptr, nullptr,
                                        nullptr, 1, 2, nullptr, nullptr,
                                        {SAssemblyDesc{3, 4, 7, 7, 2, 5, 5}, SAssemblyDesc{}});
    kernels::cuda::sparse_pack_assembly<T>(gpu, arena.data(), nullptr, nullptr, 0, {});
    PackDesc no_rows;
    no_rows.cb_cols = 4;
    PackDesc no_cols;
    no_cols.cb_rows = 3;  // with k = 0: nothing to move
    kernels::cuda::sparse_pack_assembly<T>(gpu, arena.data(), nullptr, nullptr, 0,
                                           {no_rows, no_cols});
    kernels::cuda::sparse_count_small_diagonals<T>(gpu, arena.data(), 1e300, {}, count.data());
    kernels::cuda::sparse_count_small_diagonals<T>(gpu, arena.data(), 1e300, {DiagDesc{0, 8, 0}},
                                                   count.data());
    EXPECT_TRUE(same_entries(from_device(ctx(), arena, host.size()), host));
    EXPECT_EQ(from_device(ctx(), count, 1)[0], 5);
  });
}

// R's rows packed on the device and copied into page-locked host memory, against the twin.
template <class T>
void check_cuda_r_pack(const Context& gpu, std::uint64_t seed) {
  const RPackCase<T> c = make_r_pack_case<T>(r_pack_shapes(true), seed);
  const T fill = T(-7.25);
  std::vector<T> twin(static_cast<std::size_t>(c.packed), fill);
  kernels::cpu::sparse_pack_r_rows<T>(Context::cpu().impl(), c.arena.data(), c.tasks,
                                      twin.data());
  ASSERT_GT(c.packed, 1000000);
  const int dev = gpu.device();
  const DeviceArray<T> arena(c.arena, dev), packed(std::vector<T>(twin.size(), fill), dev);
  // Two calls, as the driver packs a launch in pieces.
  for (const std::vector<RPackDesc>& part : cut(c.tasks, 2))
    kernels::cuda::sparse_pack_r_rows<T>(gpu.impl(), arena.data(), part, packed.data());
  const std::size_t bytes = twin.size() * sizeof(T);
  T* host = static_cast<T*>(kernels::cuda::sparse_host_alloc(gpu.impl(), bytes));
  std::fill(host, host + twin.size(), T(0));
  kernels::cuda::sparse_copy_to_host<T>(gpu.impl(), host, packed.data(),
                                        static_cast<Index>(twin.size()));
  gpu.synchronize();
  const std::vector<T> got(host, host + twin.size());
  kernels::cuda::sparse_host_free(gpu.impl(), host);
  EXPECT_TRUE(same_entries(got, twin));
  EXPECT_TRUE(same_entries(twin, r_pack_reference(c, fill)));
}

TEST_P(SparseKernelCuda, PackRRowsMatchesTheTwin) {
  GPUQR_FOR_PRECISION([&]<class T>() { check_cuda_r_pack<T>(ctx(), 141); });
}

// The page-locked host blocks (src/cuda/pinned_pool.hpp) are registered in 16 MiB pieces: a
// copy that starts mid-piece and crosses two boundaries must land whole and nowhere else, and
// a freed block is kept and handed to the next request it fits.
TEST_P(SparseKernelCuda, PageLockedBlocksCopyAcrossPiecesAndAreReused) {
  const Context& gpu = ctx();
  const std::size_t n = (std::size_t(40) << 20) / sizeof(double) + 12345;
  const std::size_t offset = 1001;  // elements: the copy starts inside the first piece
  std::mt19937_64 gen(77);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> src(n);
  for (double& x : src) x = dist(gen);
  const DeviceArray<double> d(src, gpu.device());
  const std::size_t bytes = (n + offset + 7) * sizeof(double);
  auto* host = static_cast<double*>(kernels::cuda::sparse_host_alloc(gpu.impl(), bytes));
  ASSERT_NE(host, nullptr);
  std::fill(host, host + n + offset + 7, -3.0);
  kernels::cuda::sparse_copy_to_host<double>(gpu.impl(), host + offset, d.data(),
                                             static_cast<Index>(n));
  gpu.synchronize();
  EXPECT_TRUE(std::equal(src.begin(), src.end(), host + offset));
  EXPECT_EQ(host[offset - 1], -3.0);
  EXPECT_EQ(host[offset + n], -3.0);
  kernels::cuda::sparse_host_free(gpu.impl(), host);
  void* again = kernels::cuda::sparse_host_alloc(gpu.impl(), bytes);
  EXPECT_EQ(again, static_cast<void*>(host)) << "the freed block is cached and reused";
  void* small = kernels::cuda::sparse_host_alloc(gpu.impl(), 4096);
  EXPECT_NE(small, again);
  kernels::cuda::sparse_host_free(gpu.impl(), small);
  kernels::cuda::sparse_host_free(gpu.impl(), again);
}

// A block copy into page-locked memory whose columns cross the pool's 16 MiB pieces (some
// columns straddle a boundary) lands as the CPU twin's, and nothing outside it is written.
TEST_P(SparseKernelCuda, CopyBlockToHostMatchesTheTwin) {
  const Context& gpu = ctx();
  const Index lds = 1203, rows = 1000, cols = 3000, ldh = 1001, offset = 777;
  std::mt19937_64 gen(91);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> src(static_cast<std::size_t>(lds * cols));
  for (double& x : src) x = dist(gen);
  const DeviceArray<double> d(src, gpu.device());
  const std::size_t n = static_cast<std::size_t>(offset + ldh * cols + 7);
  std::vector<double> twin(n, -3.0);
  kernels::cpu::sparse_copy_block_to_host<double>(Context::cpu().impl(), twin.data() + offset, ldh,
                                                  src.data() + 5, lds, rows, cols);
  auto* host =
      static_cast<double*>(kernels::cuda::sparse_host_alloc(gpu.impl(), n * sizeof(double)));
  ASSERT_NE(host, nullptr);
  std::fill(host, host + n, -3.0);
  kernels::cuda::sparse_copy_block_to_host<double>(gpu.impl(), host + offset, ldh, d.data() + 5,
                                                   lds, rows, cols);
  gpu.synchronize();
  EXPECT_TRUE(std::equal(twin.begin(), twin.end(), host));
  EXPECT_EQ(host[offset + ldh * (cols - 1) + rows - 1],
            src[static_cast<std::size_t>(5 + lds * (cols - 1) + rows - 1)]);
  kernels::cuda::sparse_host_free(gpu.impl(), host);
}

INSTANTIATE_TEST_SUITE_P(Devices, SparseKernelCuda, cuda_backend_cases(), case_name);

}  // namespace
}  // namespace gpuqr::testing
