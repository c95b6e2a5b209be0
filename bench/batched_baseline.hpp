// The baselines of gpuqr_batched_bench (bench/batched_baseline.cu): cuBLAS's geqrfBatched and
// cuSOLVER's geqrf looped over several streams, plus device helpers (random fill, copies,
// synchronization). Plain C++ interface: no CUDA header here.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace gpuqr::bench {

/// Device-side state of the baselines for one device: cuBLAS handle, cuSOLVER handles on
/// `streams` streams, workspaces grown on demand.
class BatchedBaseline {
 public:
  BatchedBaseline(int device, int streams);
  ~BatchedBaseline();
  BatchedBaseline(const BatchedBaseline&) = delete;
  BatchedBaseline& operator=(const BatchedBaseline&) = delete;

  /// cublas<t>geqrfBatched on `count` m x n matrices (device pointers a[i], lda, tau[i]);
  /// the pointer arrays are host arrays, uploaded once here (outside any timing) and kept.
  template <class T>
  void prepare_cublas(const std::vector<T*>& a, const std::vector<T*>& tau);
  /// Runs the prepared cublas<t>geqrfBatched (asynchronous).
  template <class T>
  void run_cublas(std::int64_t m, std::int64_t n, std::int64_t lda, std::int64_t count);

  /// cublas<t>gelsBatched (no transpose, m >= n) on the prepared pointers: prepare_cublas's
  /// first array the A_i (lda), its second ("tau") the B_i (ldb). Asynchronous.
  template <class T>
  void run_cublas_gels(std::int64_t m, std::int64_t n, std::int64_t nrhs, std::int64_t lda,
                       std::int64_t ldb, std::int64_t count);

  /// cusolverDn<t>geqrf on every matrix, round-robin over the streams (asynchronous).
  template <class T>
  void run_cusolver(const std::vector<std::int64_t>& m, const std::vector<std::int64_t>& n,
                    const std::vector<T*>& a, const std::vector<std::int64_t>& lda,
                    const std::vector<T*>& tau);

  /// Waits for all baseline streams.
  void synchronize();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// Device memory helpers (synchronous unless said).
void* device_alloc(std::size_t bytes);
void device_free(void* p) noexcept;
void device_copy(void* dst, const void* src, std::size_t bytes);
/// Fills `count` entries with uniform values in [-1, 1) from `seed`.
template <class T>
void device_fill_random(T* p, std::size_t count, std::uint64_t seed);
void device_synchronize();

}  // namespace gpuqr::bench
