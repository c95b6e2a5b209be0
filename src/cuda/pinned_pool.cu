// Page-locked host memory pinned by pieces and cached: see pinned_pool.hpp.
#include "src/cuda/pinned_pool.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <map>
#include <mutex>
#include <string>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "gpuqr/error.hpp"

namespace gpuqr::kernels::cuda::pinned {
namespace {

struct Block {
  std::size_t bytes = 0;   ///< capacity (past kChunk a multiple of it)
  std::size_t pinned = 0;  ///< bytes registered so far, from the start
};

/// The process's blocks: in use and cached (never destroyed, so no teardown-order issues
/// with the CUDA runtime at exit; the OS reclaims the memory).
struct Pool {
  std::mutex lock;
  std::map<void*, Block> in_use;
  std::multimap<std::size_t, void*> cached;  ///< by capacity
  std::size_t cached_bytes = 0;
};

Pool& pool() {
  static auto* p = new Pool();
  return *p;
}

std::size_t cache_limit() {
  static const std::size_t limit = [] {
    const char* v = std::getenv("GPUQR_PINNED_CACHE_MB");
    const long long mb = v != nullptr ? std::atoll(v) : 2048;
    return static_cast<std::size_t>(mb > 0 ? mb : 0) << 20;
  }();
  return limit;
}

void unpin_and_free(void* p, const Block& b) noexcept {
  auto* base = static_cast<unsigned char*>(p);
  for (std::size_t at = 0; at < b.pinned; at += kChunk)
    if (cudaHostUnregister(base + at) != cudaSuccess) (void)cudaGetLastError();
  std::free(p);
}

/// A new block: allocated and faulted in without CUDA, then registered piece by piece. A
/// block of at most kChunk is one piece, its size and alignment the power of two above the
/// request (so it lies within one kChunk-aligned piece of the address space too).
void* allocate(std::size_t bytes, Block& b) {
  std::size_t align = kChunk;
  if (bytes < kChunk) {
    align = 4096;
    while (align < bytes) align *= 2;
  }
  b.bytes = (bytes + align - 1) / align * align;
  void* p = std::aligned_alloc(align, b.bytes);
  if (p == nullptr) {
    GPUQR_THROW(OutOfMemory, "cannot allocate " + std::to_string(bytes) +
                                 " bytes of host memory for page-locked copies");
  }
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  (void)madvise(p, b.bytes, MADV_HUGEPAGE);  // advice only
#endif
  auto* base = static_cast<unsigned char*>(p);
  for (std::size_t at = 0; at < b.bytes; at += 4096) base[at] = 0;  // fault in, lock-free
  for (std::size_t at = 0; at < b.bytes; at += kChunk) {
    const std::size_t len = std::min(kChunk, b.bytes - at);
    const cudaError_t e = cudaHostRegister(base + at, len, cudaHostRegisterPortable);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      unpin_and_free(p, b);
      GPUQR_THROW(OutOfMemory, "cannot page-lock " + std::to_string(bytes) +
                                   " bytes of host memory (" + cudaGetErrorString(e) + ")");
    }
    b.pinned = at + len;
  }
  return p;
}

}  // namespace

void* acquire(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  Pool& pl = pool();
  {
    std::lock_guard<std::mutex> guard(pl.lock);
    // The smallest cached block that fits, if it is at most twice the request (a small
    // request does not take a large block that a later large request would then allocate).
    const auto it = pl.cached.lower_bound(bytes);
    if (it != pl.cached.end() && it->first / 2 <= bytes) {
      const std::size_t capacity = it->first;
      void* p = it->second;
      pl.cached_bytes -= capacity;
      pl.cached.erase(it);
      pl.in_use[p] = Block{capacity, capacity};
      return p;
    }
  }
  Block b;
  void* p = allocate(bytes, b);  // outside the pool's lock: other threads go on
  std::lock_guard<std::mutex> guard(pl.lock);
  pl.in_use[p] = b;
  return p;
}

void release(void* p) noexcept {
  if (p == nullptr) return;
  Pool& pl = pool();
  std::multimap<std::size_t, void*> evicted;
  {
    std::lock_guard<std::mutex> guard(pl.lock);
    const auto it = pl.in_use.find(p);
    if (it == pl.in_use.end()) return;  // not ours: nothing to do
    const std::size_t capacity = it->second.bytes;
    pl.in_use.erase(it);
    pl.cached.emplace(capacity, p);
    pl.cached_bytes += capacity;
    while (pl.cached_bytes > cache_limit() && !pl.cached.empty()) {
      const auto largest = std::prev(pl.cached.end());
      pl.cached_bytes -= largest->first;
      evicted.insert(*largest);
      pl.cached.erase(largest);
    }
  }
  for (const auto& [capacity, q] : evicted) unpin_and_free(q, Block{capacity, capacity});
}

void trim() noexcept {
  Pool& pl = pool();
  std::multimap<std::size_t, void*> evicted;
  {
    std::lock_guard<std::mutex> guard(pl.lock);
    evicted.swap(pl.cached);
    pl.cached_bytes = 0;
  }
  for (const auto& [capacity, q] : evicted) unpin_and_free(q, Block{capacity, capacity});
}

}  // namespace gpuqr::kernels::cuda::pinned
