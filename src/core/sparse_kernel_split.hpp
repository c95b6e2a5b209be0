// How the CUDA sparse leaves (src/cuda/sparse_kernels.cu) cut a call's descriptors into equal
// pieces of work: index arithmetic shared by the host, which plans a launch, and the kernels.
// It lives apart from the kernels so that CI checks it on the host (no GPU needed).
//
// Fronts are very unequal (one S-Assembly descriptor may hold 10^6 tuples, the next 3), so
// neither a block per descriptor nor a 2-D grid over descriptor x chunk keeps the GPU busy and
// balanced. A call's work is flattened instead: descriptor d owns the items [start[d],
// start[d + 1]) of one sequence (S-Assembly and the diagonal check: entries; Pack-Assembly:
// warp tiles), block b takes items [b per_block, (b + 1) per_block), and the host tells each
// block the first descriptor it meets (first[b]), so a block only searches the descriptors
// first[b] .. first[b + 1]: one for a large front, a handful for tiny ones.
#pragma once

#include <cstdint>
#include <vector>

#include "src/core/sparse_device_kernels.hpp"

#ifndef GPUQR_HOST_DEVICE
#if defined(__CUDACC__)
#define GPUQR_HOST_DEVICE __host__ __device__
#else
#define GPUQR_HOST_DEVICE
#endif
#endif

namespace gpuqr::detail::sparse_split {

/// A call's work, flattened. Descriptors without work are left out (kept lists the others),
/// so that every descriptor of a block's window holds at least one of its items: a window
/// has at most per_block + 1 descriptors.
struct WorkSplit {
  std::vector<std::int64_t> kept;   ///< indices into the call's descriptors
  std::vector<std::int64_t> start;  ///< kept.size() + 1 offsets; start.back() = items()
  std::vector<std::int64_t> first;  ///< blocks() + 1: block b's first descriptor (into kept)
  std::int64_t items() const { return start.back(); }
  std::int64_t blocks() const { return static_cast<std::int64_t>(first.size()) - 1; }
};

/// The split of descriptors with `sizes` items each into blocks of `per_block` items.
/// first[blocks()] is the last kept descriptor, so that block b's items all belong to
/// descriptors first[b] .. first[b + 1].
inline WorkSplit split_work(const std::vector<std::int64_t>& sizes, std::int64_t per_block) {
  WorkSplit s;
  s.start.push_back(0);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] <= 0) continue;
    s.kept.push_back(static_cast<std::int64_t>(i));
    s.start.push_back(s.start.back() + sizes[i]);
  }
  const std::int64_t blocks = (s.items() + per_block - 1) / per_block;
  s.first.resize(static_cast<std::size_t>(blocks) + 1);
  std::size_t d = 0;
  for (std::int64_t b = 0; b < blocks; ++b) {
    while (s.start[d + 1] <= b * per_block) ++d;
    s.first[static_cast<std::size_t>(b)] = static_cast<std::int64_t>(d);
  }
  s.first.back() = s.kept.empty() ? 0 : static_cast<std::int64_t>(s.kept.size()) - 1;
  return s;
}

/// The descriptor owning item x: the last d in [lo, hi] with start[d] <= x (start ascending,
/// start[lo] <= x).
GPUQR_HOST_DEVICE inline std::int64_t owner(const std::int64_t* start, std::int64_t lo,
                                            std::int64_t hi, std::int64_t x) {
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    if (start[mid] <= x) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

// ---- Pack-Assembly's warp tiles -------------------------------------------------------------

/// A warp tile is kPackTileRows rows (a lane each, so a column's rows are read contiguously
/// and each lane's Rimap entry is loaded once for all the tile's columns) by kPackTileCols
/// columns (one load in flight per column and lane).
inline constexpr std::int64_t kPackTileRows = 32;
inline constexpr std::int64_t kPackTileCols = 16;
static_assert(kPackTileRows % kPackTileCols == 0, "a row tile starts on a column tile");

/// Whether Pack-Assembly moves the block's entry (r, v), v a "virtual" column: v < cb_cols is
/// the CB's column v (its upper trapezoid only), cb_cols <= v < cb_cols + k the carried column
/// v - cb_cols (every row). Either way it is src column v.
GPUQR_HOST_DEVICE inline bool pack_moves(const PackDesc& d, std::int64_t k, std::int64_t r,
                                         std::int64_t v) {
  return r < d.cb_rows && v < d.cb_cols + k && (v >= d.cb_cols || r <= v);
}

/// The warp tiles of one Pack-Assembly descriptor, numbered row tile by row tile. Row tile i
/// (rows from 32 i) has entries only in CB columns v >= 32 i and in the carried columns, so
/// its tiles start at column tile first_col_tile(i) and run to the last: the trapezoid's
/// empty lower part gets no tiles, and tile l's place follows from l alone.
struct PackTiling {
  std::int64_t row_tiles = 0;
  std::int64_t col_tiles = 0;  ///< over all cb_cols + k virtual columns
  std::int64_t cb_cols = 0;

  GPUQR_HOST_DEVICE std::int64_t first_col_tile(std::int64_t i) const {
    const std::int64_t r = i * kPackTileRows;
    return (r < cb_cols ? r : cb_cols) / kPackTileCols;
  }
  /// Tiles of row tiles [0, i): first_col_tile(i') is i' kPackTileRows / kPackTileCols while
  /// 32 i' < cb_cols (i' < i0), cb_cols / kPackTileCols after.
  GPUQR_HOST_DEVICE std::int64_t tiles_before(std::int64_t i) const {
    constexpr std::int64_t ratio = kPackTileRows / kPackTileCols;
    const std::int64_t i0 = (cb_cols + kPackTileRows - 1) / kPackTileRows;
    const std::int64_t m = i < i0 ? i : i0;
    return i * col_tiles - (ratio * (m * (m - 1) / 2) + (i - m) * (cb_cols / kPackTileCols));
  }
  GPUQR_HOST_DEVICE std::int64_t tiles() const { return tiles_before(row_tiles); }
  /// Tile l (< tiles()) as (row tile i, column tile c), by bisection over the row tiles.
  GPUQR_HOST_DEVICE void locate(std::int64_t l, std::int64_t& i, std::int64_t& c) const {
    std::int64_t lo = 0, hi = row_tiles - 1;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo + 1) / 2;
      if (tiles_before(mid) <= l) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    i = lo;
    c = first_col_tile(i) + (l - tiles_before(i));
  }
};

/// The tiling of `d` with k carried columns. Without carried columns, rows at or below
/// cb_cols hold nothing (r <= t < cb_cols) and get no tiles; with them, every tile holds an
/// entry.
GPUQR_HOST_DEVICE inline PackTiling pack_tiling(const PackDesc& d, std::int64_t k) {
  const std::int64_t rows = (k > 0 || d.cb_rows < d.cb_cols) ? d.cb_rows : d.cb_cols;
  PackTiling t;
  t.cb_cols = d.cb_cols;
  t.row_tiles = rows > 0 ? (rows + kPackTileRows - 1) / kPackTileRows : 0;
  t.col_tiles = (d.cb_cols + k + kPackTileCols - 1) / kPackTileCols;
  return t;
}

}  // namespace gpuqr::detail::sparse_split
