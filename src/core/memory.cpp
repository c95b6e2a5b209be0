#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "gpuqr/matrix.hpp"
#include "gpuqr/sparse_qr.hpp"
#include "src/core/context_impl.hpp"

namespace gpuqr {

const char* to_string(MemorySpace space) {
  return space == MemorySpace::host ? "host" : "device";
}

namespace detail {

void* allocate(std::size_t bytes, MemorySpace space, int device) {
  if (bytes == 0) return nullptr;
  if (space == MemorySpace::device) return cuda_malloc(bytes, device);
  // A cache line (what OpenBLAS likes); blocks of 64 MiB and more on 2 MiB huge pages where
  // the system has them (first touch then faults once per 2 MiB, not per 4 KiB: a sparse
  // factorization's fronts copied out in kept mode are gigabytes of fresh memory).
  const bool huge = bytes >= (std::size_t(64) << 20);
  const std::size_t align = huge ? std::size_t(2) << 20 : 64;
  const std::size_t rounded = (bytes + align - 1) / align * align;
  void* p = std::aligned_alloc(align, rounded);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (p != nullptr && huge) (void)madvise(p, rounded, MADV_HUGEPAGE);  // advice only
#endif
  if (p == nullptr) {
    GPUQR_THROW(OutOfMemory, "host allocation of " + std::to_string(bytes) + " bytes failed");
  }
  return p;
}

void deallocate(void* p, MemorySpace space, int device) noexcept {
  if (p == nullptr) return;
  if (space == MemorySpace::device) {
    cuda_free(p, device);
  } else {
    std::free(p);
  }
}

void copy_2d(void* dst, std::int64_t ldd, MemorySpace dst_space, const void* src,
             std::int64_t lds, MemorySpace src_space, std::int64_t rows, std::int64_t cols,
             std::size_t elem) {
  if (rows == 0 || cols == 0) return;
  const auto row_bytes = static_cast<std::int64_t>(rows * elem);
  if (dst_space == MemorySpace::host && src_space == MemorySpace::host) {
    for (std::int64_t j = 0; j < cols; ++j) {
      std::memcpy(static_cast<char*>(dst) + j * ldd * elem,
                  static_cast<const char*>(src) + j * lds * elem, row_bytes);
    }
    return;
  }
  cuda_copy_2d(dst, ldd * static_cast<std::int64_t>(elem), dst_space == MemorySpace::device,
               src, lds * static_cast<std::int64_t>(elem), src_space == MemorySpace::device,
               row_bytes, cols);
}

namespace {
constexpr std::size_t kHugePage = std::size_t(2) << 20;
/// Blocks from this many bytes go on huge pages (GPUQR_HUGE_FROM_MB, default 4; read once,
/// so that a block is freed the way it was allocated). Kept sparse reflectors are thousands
/// of such blocks: from 4 MiB instead of 64, grid3d:45 kept took 1.59 s instead of 1.71
/// (H100, session 19), the first touch of 3.3 GB costing fewer faults.
std::size_t huge_block() {
  static const std::size_t bytes = [] {
    const char* v = std::getenv("GPUQR_HUGE_FROM_MB");
    const long mb = v != nullptr ? std::strtol(v, nullptr, 10) : 4;
    // From one huge page (smaller blocks would reserve a whole one) to 1 TiB (no overflow).
    return std::size_t(mb < 2 ? 2 : mb > (1L << 20) ? (1L << 20) : mb) << 20;
  }();
  return bytes;
}
}  // namespace

void* uninit_allocate(std::size_t bytes) {
  if (bytes < huge_block()) return ::operator new(bytes);
  const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, rounded);
  if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Advice only (without THP it changes nothing), and only for the whole huge pages the block
  // fills: the partial one at its end stays on small pages, so no memory is backed that the
  // block does not use.
  (void)madvise(p, bytes / kHugePage * kHugePage, MADV_HUGEPAGE);
#endif
  return p;
}

void uninit_deallocate(void* p, std::size_t bytes) noexcept {
  if (p == nullptr) return;
  if (bytes < huge_block()) {
    ::operator delete(p);
  } else {
    std::free(p);
  }
}

}  // namespace detail
}  // namespace gpuqr
