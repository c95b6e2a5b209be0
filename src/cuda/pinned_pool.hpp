// Page-locked host memory for copies out of the device, pinned a piece at a time and kept for
// reuse (the sparse QR's host slots and bounce buffers: src/core/sparse_qr_device.hpp).
//
// Why not cudaMallocHost: pinning is slow (~2 GB/s: grid3d:45's two 426 MB slots took 0.4 s)
// and one cudaMallocHost call holds the driver's lock throughout, so a thread that allocates
// the slots in the background stalls every CUDA allocation of the thread that enqueues work
// (measured: the first launch of that factorization waited 0.3-0.4 s for a 1 MB workspace).
// Here the pages are faulted in without any CUDA call, then registered in kChunk pieces, so
// other threads wait at most one piece's registration. Copies into a block must not cross a
// piece (each is its own registration): kChunk-aligned pieces let copy_to_host_pieces split
// any copy at kChunk boundaries of the host address.
//
// Freed blocks stay registered in a process-wide cache, reused by the next request they fit
// (a repeated factorization allocates nothing), up to GPUQR_PINNED_CACHE_MB (default 2048;
// 0 keeps nothing); beyond it the largest cached blocks are unregistered and freed.
#pragma once

#include <cstddef>

namespace gpuqr::kernels::cuda::pinned {

/// Registration pieces: 16 MiB, aligned to 16 MiB in the address space (smaller blocks are
/// one piece each).
inline constexpr std::size_t kChunk = std::size_t(16) << 20;

/// At least `bytes` of page-locked host memory (a cached block when one fits), kChunk-aligned.
/// Throws OutOfMemory when the memory cannot be allocated or pinned.
void* acquire(std::size_t bytes);

/// Returns a block from acquire() to the cache (nullptr: nothing). Never throws.
void release(void* p) noexcept;

/// Frees every cached block now (blocks in use are not touched).
void trim() noexcept;

}  // namespace gpuqr::kernels::cuda::pinned
