// The shared state behind a Context. Backend code reaches the CUDA handles through it; the
// handles are stored as void* so that core code compiles without CUDA headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpuqr/context.hpp"

namespace gpuqr::detail {

class GraphCache;   // src/core/graph_cache.hpp
struct GraphKey;

class ContextImpl {
 public:
  ContextImpl() = default;  // the CPU
  ~ContextImpl();
  ContextImpl(const ContextImpl&) = delete;
  ContextImpl& operator=(const ContextImpl&) = delete;

  Backend backend = Backend::cpu;
  int device = -1;
  CudaStream stream = nullptr;
  bool owns_stream = false;
  bool check_finite = true;
  /// Host <-> device copies of staged host arguments (Context::staging_stats).
  std::int64_t staging_bytes = 0;
  double staging_seconds = 0;
  void* cublas = nullptr;    // cublasHandle_t
  void* cusolver = nullptr;  // cusolverDnHandle_t

  /// Grow-only device buffers, one per user so that a driver's buffers survive the leaf calls
  /// it makes: kLeafWorkspace for leaf operations (cuSOLVER's work arrays, small results),
  /// kDriverWorkspace for drivers (the blocked QR's V, T and W).
  static constexpr int kLeafWorkspace = 0;
  static constexpr int kDriverWorkspace = 1;
  /// kCallWorkspace: what a public call needs for its own duration (gels' tau).
  static constexpr int kCallWorkspace = 2;
  /// kTallSkinnyWorkspace: the tall-skinny drivers (CholeskyQR, QRF-AH, TSQR), which may call
  /// the blocked QR; kUpdateWorkspace: the QR-updating drivers.
  static constexpr int kTallSkinnyWorkspace = 3;
  static constexpr int kUpdateWorkspace = 4;
  /// kSplitWorkspace: the FP32 Gram matrix's 3xTF32 split of W's row chunks and its partial
  /// sums (triangle_gemm.cu), which run while the leaf workspace holds W itself.
  static constexpr int kSplitWorkspace = 5;
  static constexpr int kWorkspaces = 6;
  void* workspace[kWorkspaces] = {};
  std::size_t workspace_bytes[kWorkspaces] = {};
  /// A second lane of work for look-ahead (CUDA: its own stream, handles and workspaces;
  /// created on first use by cuda_aux_lane); `event` orders work between the two lanes.
  std::unique_ptr<ContextImpl> aux;
  void* event = nullptr;  // cudaEvent_t, created on first use

  /// The CPU backend's driver workspace (host memory), grow-only; see host_workspace().
  std::vector<double> host_workspace;
  // Grown on demand by cuda_workspace(); owned here, freed by cuda_release_context().
  void* scratch = nullptr;  // a small device buffer for results read back (info, norms)
  /// The finite scan's flag in pinned, mapped host memory (cudaHostAlloc, on the scan's
  /// first call): its kernel writes it directly, so the scan needs no memset and no copy back.
  void* finite_host = nullptr;
  int* finite_device = nullptr;  // its device address

  /// CUDA graph replay of the dense calls (Context::set_cuda_graphs; src/cuda/graph_replay.cu).
  bool graphs = false;
  /// Whether a key is captured at its first call (Context::set_cuda_graphs(true),
  /// GPUQR_GRAPH=1) rather than at its second (the default mode).
  bool graphs_from_first_call = false;
  /// True while this lane's stream is being captured: cuda_workspace must not grow a buffer
  /// then (a synchronization and a cudaMalloc) and throws GraphCaptureAbort instead.
  bool capturing = false;
  std::unique_ptr<GraphCache> graph_cache;  // created on first use
  /// The cuBLAS workspace set on this lane's handle before its first capture, so that cuBLAS
  /// allocates nothing inside a graph (cublasSetWorkspace); freed with the context.
  void* blas_workspace = nullptr;
};

/// Thrown inside a stream capture by what cannot be captured (a workspace that would have to
/// grow): the graph path abandons the capture and runs the call directly.
struct GraphCaptureAbort {
  const char* what;
};

// Implemented by the CUDA backend (src/cuda/context.cu) or the stubs (src/stubs/).
void cuda_init_context(ContextImpl& impl, int device, CudaStream stream);
void cuda_release_context(ContextImpl& impl) noexcept;
void cuda_synchronize(const ContextImpl& impl);
/// A device workspace of at least `bytes`, grown (never shrunk) on demand; growing waits for
/// the stream first, since queued work may still read the old buffer.
void* cuda_workspace(ContextImpl& impl, std::size_t bytes,
                     int slot = ContextImpl::kLeafWorkspace);
std::string cuda_describe(const ContextImpl& impl);
std::vector<DeviceInfo> cuda_device_list() noexcept;
/// The context's second lane (created on first use, same device).
ContextImpl& cuda_aux_lane(ContextImpl& impl);
/// Work enqueued later on `to` waits for all work enqueued so far on `from`.
void cuda_lane_signal(ContextImpl& from, ContextImpl& to);
std::string cuda_unavailable_reason_impl();
/// The graph path (src/cuda/graph_replay.cu): replays the graph cached for `key` (the call's
/// own values; the context's streams and workspace addresses are added here), or captures
/// `enqueue` into a new one (an update of a graph of the same shape where one exists),
/// instantiates and launches it. `uses_aux`: the work also runs on the second lane (which
/// joins the capture through lane_signal's events). False when nothing was enqueued and the
/// caller must run `enqueue` itself: the capture failed, the stream is already capturing or
/// cannot be, or the build synchronizes after every launch (GPUQR_DEBUG_SYNC).
bool cuda_graph_run(ContextImpl& impl, GraphKey key, bool uses_aux,
                    const std::function<void()>& enqueue);
/// The default of Context::cuda_graphs, from GPUQR_GRAPH (read once): unset, on from a key's
/// second call (returns 1); 1, on from its first call (2); 0, off (0).
int cuda_graphs_default() noexcept;
void* cuda_malloc(std::size_t bytes, int device);
void cuda_free(void* p, int device) noexcept;
/// Free bytes of device memory now (cudaMemGetInfo).
std::int64_t cuda_free_memory(int device);
/// Synchronous 2-D copy where at least one side is device memory.
void cuda_copy_2d(void* dst, std::int64_t ldd_bytes, bool dst_device, const void* src,
                  std::int64_t lds_bytes, bool src_device, std::int64_t row_bytes,
                  std::int64_t cols);

}  // namespace gpuqr::detail
