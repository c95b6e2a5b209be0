// QRF-AH, the driver (src/core/qrf_ah.cpp): Householder QR with approximate Householder
// vectors (Tomas & Quintana-Orti 2020), output in geqrf's form.
#pragma once

#include <cstdint>

#include "gpuqr/tsqr.hpp"

namespace gpuqr::detail {

/// The panel width QRF-AH uses for n columns when `requested` (TsqrOptions::block; 0: chosen)
/// is asked for: at most kAhMaxBlock and n.
std::int64_t qrf_ah_block(std::int64_t n, std::int64_t requested);

/// QRF-AH of `a` (m x n, m >= n, context memory) in place in geqrf's form; tau (n entries).
/// Returns how many panels ended early on the norm-update test (TsqrInfo::panels_shrunk).
/// Synchronizes once per panel (its width decides the next panel) and before returning.
template <class T>
std::int64_t run_qrf_ah(const Context& ctx, MatrixView<T> a, VectorView<T> tau,
                        std::int64_t block);

}  // namespace gpuqr::detail
