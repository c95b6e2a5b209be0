// Fill-reducing column orderings from SuiteSparse (COLAMD, AMD), when it was found at build
// time (GPUQR_HAVE_SUITESPARSE); otherwise they throw NotCompiled.
#include "src/core/sparse_ordering.hpp"

#include <algorithm>
#include <string>

#include "gpuqr/error.hpp"

#ifdef GPUQR_HAVE_SUITESPARSE
#include <amd.h>
#include <colamd.h>
#endif

namespace gpuqr::detail {

#ifdef GPUQR_HAVE_SUITESPARSE

static_assert(sizeof(SuiteSparse_long) == sizeof(std::int64_t),
              "SuiteSparse_long must be 64-bit");

bool have_suitesparse_orderings() noexcept { return true; }

std::vector<std::int64_t> colamd_ordering(const CscPattern& a) {
  const SuiteSparse_long m = a.rows, n = a.cols;
  const SuiteSparse_long nnz = a.col_ptr[a.cols];
  if (n == 0) return {};
  // colamd_l overwrites A (its workspace) and p (the permutation on return).
  const std::size_t alen = colamd_l_recommended(nnz, m, n);
  if (alen == 0) GPUQR_THROW(InvalidArgument, "colamd: matrix too large for COLAMD");
  std::vector<SuiteSparse_long> work(alen, 0);
  std::copy(a.row_indices, a.row_indices + nnz, work.begin());
  std::vector<SuiteSparse_long> p(a.col_ptr, a.col_ptr + n + 1);
  double knobs[COLAMD_KNOBS];
  colamd_l_set_defaults(knobs);
  SuiteSparse_long stats[COLAMD_STATS] = {};
  const SuiteSparse_long ok =
      colamd_l(m, n, static_cast<SuiteSparse_long>(alen), work.data(), p.data(), knobs, stats);
  if (!ok) {
    GPUQR_THROW(Error, "colamd_l failed with status " + std::to_string(stats[COLAMD_STATUS]));
  }
  return std::vector<std::int64_t>(p.begin(), p.begin() + n);
}

std::vector<std::int64_t> amd_ata_ordering(const CscPattern& a) {
  const std::int64_t m = a.rows, n = a.cols;
  if (n == 0) return {};
  // Rows of A as lists of columns.
  std::vector<std::int64_t> rp(m + 1, 0), rc(a.col_ptr[n]);
  for (std::int64_t p = 0; p < a.col_ptr[n]; ++p) ++rp[a.row_indices[p] + 1];
  for (std::int64_t i = 0; i < m; ++i) rp[i + 1] += rp[i];
  {
    std::vector<std::int64_t> next(rp.begin(), rp.end() - 1);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t p = a.col_ptr[j]; p < a.col_ptr[j + 1]; ++p)
        rc[next[a.row_indices[p]]++] = j;
  }
  // Pattern of A^T A without its diagonal (AMD ignores it), column by column.
  std::vector<SuiteSparse_long> cp(n + 1, 0), ci;
  std::vector<std::int64_t> mark(n, -1);
  for (std::int64_t j = 0; j < n; ++j) {
    const std::size_t start = ci.size();
    mark[j] = j;
    for (std::int64_t p = a.col_ptr[j]; p < a.col_ptr[j + 1]; ++p) {
      const std::int64_t i = a.row_indices[p];
      for (std::int64_t q = rp[i]; q < rp[i + 1]; ++q) {
        const std::int64_t k = rc[q];
        if (mark[k] != j) {
          mark[k] = j;
          ci.push_back(k);
        }
      }
    }
    std::sort(ci.begin() + static_cast<std::ptrdiff_t>(start), ci.end());
    cp[j + 1] = static_cast<SuiteSparse_long>(ci.size());
  }
  std::vector<SuiteSparse_long> perm(n);
  double control[AMD_CONTROL], info[AMD_INFO];
  amd_l_defaults(control);
  SuiteSparse_long dummy = 0;  // AMD rejects a null Ai even when A^T A is diagonal
  const SuiteSparse_long status =
      amd_l_order(n, cp.data(), ci.empty() ? &dummy : ci.data(), perm.data(), control, info);
  if (status != AMD_OK && status != AMD_OK_BUT_JUMBLED) {
    GPUQR_THROW(Error, "amd_l_order failed with status " + std::to_string(status));
  }
  return std::vector<std::int64_t>(perm.begin(), perm.end());
}

#else  // !GPUQR_HAVE_SUITESPARSE

bool have_suitesparse_orderings() noexcept { return false; }

std::vector<std::int64_t> colamd_ordering(const CscPattern&) {
  GPUQR_THROW(NotCompiled,
              "the colamd ordering needs SuiteSparse (COLAMD), which this gpuqr build did not "
              "find; use ColumnOrdering::natural or ::given");
}

std::vector<std::int64_t> amd_ata_ordering(const CscPattern&) {
  GPUQR_THROW(NotCompiled,
              "the amd ordering needs SuiteSparse (AMD), which this gpuqr build did not find; "
              "use ColumnOrdering::natural or ::given");
}

#endif

}  // namespace gpuqr::detail
