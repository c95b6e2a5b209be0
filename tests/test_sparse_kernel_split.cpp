// How the CUDA sparse leaves cut their work (src/core/sparse_kernel_split.hpp), checked on the
// host, where CI runs: every item is found in its block's window, and every entry that
// Pack-Assembly moves is in exactly one warp tile, none of which is empty. The kernels
// themselves are compared with their CPU twins in tests/test_sparse_kernels.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "src/core/sparse_kernel_split.hpp"

namespace gpuqr::testing {
namespace {

using detail::PackDesc;
using Index = std::int64_t;
namespace split = detail::sparse_split;

TEST(SparseKernelSplit, EveryItemIsInItsBlocksWindow) {
  std::mt19937_64 rng(71);
  for (const Index per_block : {1, 8, 1024}) {
    std::vector<Index> sizes = {0, 5000, 0, 0, 3};
    for (int i = 0; i < 3000; ++i) sizes.push_back(rng() % 4 == 0 ? 0 : Index(rng() % 7));
    sizes.push_back(0);
    const split::WorkSplit s = split::split_work(sizes, per_block);
    ASSERT_EQ(s.start.size(), s.kept.size() + 1);
    std::vector<Index> owner_of;  // the true owner (into kept) of every item
    for (std::size_t d = 0; d < s.kept.size(); ++d) {
      ASSERT_GT(sizes[s.kept[d]], 0);
      owner_of.insert(owner_of.end(), sizes[s.kept[d]], static_cast<Index>(d));
    }
    ASSERT_EQ(s.items(), static_cast<Index>(owner_of.size()));
    ASSERT_EQ(s.blocks(), (s.items() + per_block - 1) / per_block);
    for (Index b = 0; b < s.blocks(); ++b) {
      const Index lo = s.first[b], hi = s.first[b + 1];
      ASSERT_LE(hi - lo + 1, per_block + 1) << "block " << b << "'s window is too large";
      for (Index x = b * per_block; x < std::min(s.items(), (b + 1) * per_block); ++x)
        ASSERT_EQ(split::owner(s.start.data(), lo, hi, x), owner_of[x]) << "item " << x;
    }
  }
  EXPECT_EQ(split::split_work({}, 8).blocks(), 0);
  EXPECT_EQ(split::split_work({0, 0}, 8).items(), 0);
}

/// Every entry split::pack_moves names is in exactly one tile, and no tile is empty.
void check_pack_tiles(Index cb_rows, Index cb_cols, Index k) {
  PackDesc d;
  d.cb_rows = cb_rows;
  d.cb_cols = cb_cols;
  const split::PackTiling tiling = split::pack_tiling(d, k);
  const Index nv = cb_cols + k;
  std::vector<int> seen(static_cast<std::size_t>(cb_rows * nv), 0);
  for (Index l = 0; l < tiling.tiles(); ++l) {
    Index i = -1, c = -1;
    tiling.locate(l, i, c);
    ASSERT_TRUE(i >= 0 && i < tiling.row_tiles && c >= tiling.first_col_tile(i) &&
                c < tiling.col_tiles)
        << "tile " << l << " at (" << i << ", " << c << ")";
    int entries = 0;
    for (Index r = i * split::kPackTileRows; r < (i + 1) * split::kPackTileRows; ++r)
      for (Index v = c * split::kPackTileCols; v < (c + 1) * split::kPackTileCols; ++v)
        if (split::pack_moves(d, k, r, v)) {
          ++seen[static_cast<std::size_t>(r + v * cb_rows)];
          ++entries;
        }
    ASSERT_GT(entries, 0) << "tile " << l << " of " << cb_rows << " x " << cb_cols << " is empty";
  }
  for (Index v = 0; v < nv; ++v)
    for (Index r = 0; r < cb_rows; ++r)
      ASSERT_EQ(seen[static_cast<std::size_t>(r + v * cb_rows)], v >= cb_cols || r <= v ? 1 : 0)
          << "entry (" << r << ", " << v << ") of " << cb_rows << " x " << cb_cols << ", k " << k;
}

TEST(SparseKernelSplit, PackTilesHoldEveryEntryOnce) {
  for (const Index k : {0, 1, 3, 17})
    for (const Index rows : {0, 1, 15, 16, 17, 31, 32, 33, 64, 65, 100})
      for (const Index cols : {0, 1, 15, 16, 17, 31, 32, 33, 48, 64, 70}) {
        check_pack_tiles(rows, cols, k);
        if (::testing::Test::HasFatalFailure()) return;
      }
}

}  // namespace
}  // namespace gpuqr::testing
