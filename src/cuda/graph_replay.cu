// CUDA graphs of whole dense calls (Context::cuda_graphs; keys: src/core/dense_replay.cpp).
// A geqrf of n = 1024 is ~240 kernel launches and cuBLAS calls on two streams; replaying it
// as one graph takes the host's launch rate out of its time. On a key's first call the work
// is captured from the context's stream (the second lane joins the capture through the
// events lane_signal records, as the CUDA programming guide's fork/join pattern), then
// instantiated, or applied to a graph of the same shape by cudaGraphExecUpdate, and launched.
//
// What capture needs of the code it records, and where it is met:
// - no allocation and no synchronization: the drivers allocate nothing in their loops, and a
//   workspace that would have to grow throws GraphCaptureAbort (context.cu) instead; the
//   capture is abandoned, the call runs directly (which grows it) and the next call captures.
// - the second lane, its stream, events and handles exist before the capture (created here).
// - cuBLAS must not allocate its workspace inside the capture (it would add memory nodes to
//   every graph): each lane's handle gets one workspace (cublasSetWorkspace) before its first
//   capture, of the size of cuBLAS's own default pool so that it picks the same kernels.
// - host values captured into the graph (cuBLAS's host-mode alpha and beta, kernel
//   arguments, block sizes, knobs) are constants or part of the key.
// - no host reads of device data: the public calls' checks that read results (finite
//   scan, R's diagonal, residual norms) stay outside the captured part.
// Anything else that fails inside a capture (an unsupported launch, a cuSOLVER call) runs
// the call directly; after kCaptureTries such failures the key runs directly from then on.
// The user's call never fails because of the graph path.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <memory>

#include "src/core/context_impl.hpp"
#include "src/core/graph_cache.hpp"
#include "src/cuda/check.hpp"

namespace gpuqr::detail {
namespace {

using cuda_detail::DeviceGuard;

constexpr std::size_t kGraphsPerContext = 16;
/// Failed captures of a key before it runs directly for good (the second try sees what the
/// direct run between them initialized: kernels loaded, function attributes set).
constexpr int kCaptureTries = 2;

/// The size of cuBLAS's default workspace pool (cublasSetWorkspace's documentation): 32 MiB
/// from Hopper (sm_90) on, 4 MiB before.
std::size_t blas_workspace_bytes(int device) {
  int major = 0;
  GPUQR_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return (major >= 9 ? 32u : 4u) << 20;
}

/// Gives the lane's cuBLAS handle a workspace of its own, once.
void set_blas_workspace(ContextImpl& lane) {
  if (lane.blas_workspace != nullptr) return;
  const std::size_t bytes = blas_workspace_bytes(lane.device);
  // Work already queued may use cuBLAS's default pool: let it finish before the switch.
  GPUQR_CUDA_CHECK(cudaStreamSynchronize(lane.stream));
  void* p = cuda_malloc(bytes, lane.device);
  const cublasStatus_t status =
      cublasSetWorkspace(static_cast<cublasHandle_t>(lane.cublas), p, bytes);
  if (status != CUBLAS_STATUS_SUCCESS) {
    cuda_free(p, lane.device);
    cuda_detail::throw_cublas(status, "cublasSetWorkspace", __FILE__, __LINE__);
  }
  lane.blas_workspace = p;
}

GraphCache& cache_of(ContextImpl& impl) {
  if (!impl.graph_cache) {
    ContextImpl* owner = &impl;
    impl.graph_cache = std::make_unique<GraphCache>(kGraphsPerContext, [owner](void* exec) {
      // An evicted graph may still run on the stream: wait before destroying it (rare: a
      // 17th key). The context's release waits for the stream before clearing the cache.
      (void)cudaStreamSynchronize(owner->stream);
      (void)cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec));
      (void)cudaGetLastError();
    });
  }
  return *impl.graph_cache;
}

/// The lane's stream and buffers: a graph holds their addresses.
void add_lane(GraphKey& key, const ContextImpl& lane) {
  key.add_address(lane.stream);
  for (int slot = 0; slot < ContextImpl::kWorkspaces; ++slot) {
    key.add_address(lane.workspace[slot]);
  }
  key.add_address(lane.scratch);
  key.add_address(lane.blas_workspace);
}

/// The call's key completed with the lanes it runs on.
GraphKey with_lanes(const GraphKey& call, const ContextImpl& impl, const ContextImpl* aux) {
  GraphKey key = call;
  add_lane(key, impl);
  if (aux != nullptr) add_lane(key, *aux);
  return key;
}

/// Whether a capture can start on the stream: not the legacy default stream, not already
/// capturing (the caller recording its own graph gets our kernels in it, directly).
bool can_capture(const ContextImpl& impl) {
#ifdef GPUQR_DEBUG_SYNC
  (void)impl;
  return false;  // every launch check synchronizes, which a capture forbids
#else
  if (impl.stream == nullptr || impl.stream == cudaStreamLegacy) return false;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(impl.stream, &status) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return status == cudaStreamCaptureStatusNone;
#endif
}

/// Joins the second lane back into the capture of `main` (cudaStreamEndCapture fails while a
/// stream that joined has not), when it joined at all.
void join_back(ContextImpl& aux, ContextImpl& main) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(aux.stream, &status) == cudaSuccess &&
      status == cudaStreamCaptureStatusActive) {
    (void)cudaEventRecord(static_cast<cudaEvent_t>(aux.event), aux.stream);
    (void)cudaStreamWaitEvent(main.stream, static_cast<cudaEvent_t>(aux.event), 0);
  }
  (void)cudaGetLastError();
}

enum class CaptureOutcome { graph, retry, never };

/// Records `enqueue` into `graph`. `retry`: abandoned for a reason the direct run removes (a
/// workspace had to grow); `never`: capture does not work for this call.
CaptureOutcome capture(ContextImpl& impl, ContextImpl* aux, const std::function<void()>& enqueue,
                       cudaGraph_t& graph) {
  graph = nullptr;
  // ThreadLocal: an unsafe call (a synchronization, an allocation) made by this thread inside
  // the capture fails at once, so we see it, while other threads' work is unaffected.
  if (cudaStreamBeginCapture(impl.stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
    (void)cudaGetLastError();
    return CaptureOutcome::never;
  }
  impl.capturing = true;
  if (aux != nullptr) aux->capturing = true;
  CaptureOutcome outcome = CaptureOutcome::graph;
  try {
    enqueue();
  } catch (const GraphCaptureAbort&) {
    outcome = CaptureOutcome::retry;
  } catch (...) {
    outcome = CaptureOutcome::never;  // the direct run reports the error, if it is one
  }
  impl.capturing = false;
  if (aux != nullptr) {
    aux->capturing = false;
    join_back(*aux, impl);
  }
  const cudaError_t end = cudaStreamEndCapture(impl.stream, &graph);
  if (end != cudaSuccess || outcome != CaptureOutcome::graph) {
    (void)cudaGetLastError();
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    graph = nullptr;
    return outcome == CaptureOutcome::graph ? CaptureOutcome::never : outcome;
  }
  return CaptureOutcome::graph;
}

/// An executable for `graph`: `same`'s, updated in place, when the update succeeds (same
/// topology, other addresses), else a new instantiation (null if that fails).
cudaGraphExec_t executable_for(GraphCache& cache, const GraphKey& key, cudaGraph_t graph) {
  if (GraphCache::Entry* same = cache.find_same_shape(key)) {
    auto exec = static_cast<cudaGraphExec_t>(same->exec);
    cudaGraphExecUpdateResultInfo info{};
    if (cudaGraphExecUpdate(exec, graph, &info) == cudaSuccess) {
      cache.rekey(same, key);
      ++cache.counters.updates;
      return exec;
    }
    // A failed update may leave the executable half-updated: drop it.
    (void)cudaGetLastError();
    cache.erase(same);
  }
  cudaGraphExec_t exec = nullptr;
  // Node priorities: the look-ahead lane's high stream priority is kept by its kernel nodes.
  if (cudaGraphInstantiateWithFlags(&exec, graph, cudaGraphInstantiateFlagUseNodePriority) !=
      cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  cache.insert(key, exec);
  return exec;
}

/// Launches `exec` on the stream. A launch that fails leaves the key to the direct path
/// (which reports the error again if it is not the graph's).
bool launch(GraphCache& cache, const GraphKey& key, cudaGraphExec_t exec, ContextImpl& impl) {
  if (cudaGraphLaunch(exec, impl.stream) != cudaSuccess) {
    (void)cudaGetLastError();
    cache.note_failure(key);
    ++cache.counters.fallbacks;
    return false;
  }
  ++cache.counters.launches;
  return true;
}

}  // namespace

bool cuda_graph_run(ContextImpl& impl, GraphKey call, bool uses_aux,
                    const std::function<void()>& enqueue) {
  DeviceGuard guard(impl.device);
  if (!can_capture(impl)) return false;
  ContextImpl* aux = uses_aux ? &cuda_aux_lane(impl) : nullptr;
  GraphCache& cache = cache_of(impl);
  GraphKey key = with_lanes(call, impl, aux);
  GraphCache::Entry* hit = cache.find(key);
  if (hit != nullptr && hit->exec == nullptr && hit->failures >= kCaptureTries) {
    return false;  // capture does not work for this call: run it directly
  }
  if (hit == nullptr && !impl.graphs_from_first_call) {
    // The default mode: a key is captured at its second call, so that a call made once
    // never pays for a capture. What a capture needs is made now, so that the second call's
    // key is this one; a key whose shape has a graph already is captured and updated at once.
    set_blas_workspace(impl);
    if (aux != nullptr) set_blas_workspace(*aux);
    key = with_lanes(call, impl, aux);
    hit = cache.find(key);
    if (hit == nullptr && cache.find_same_shape(key) == nullptr) {
      cache.note_seen(key);
      ++cache.counters.first_calls;
      return false;
    }
  }
  if (hit != nullptr && hit->exec != nullptr) {
    // The graph's second-lane nodes are ordered after the main stream's work only; work
    // still queued on the second lane's own stream (none after our drivers, which join it
    // back) must come first, as it would in the direct path.
    if (aux != nullptr) cuda_lane_signal(*aux, impl);
    return launch(cache, key, static_cast<cudaGraphExec_t>(hit->exec), impl);
  }

  // A miss: make what the capture must not create, then capture.
  set_blas_workspace(impl);
  if (aux != nullptr) {
    set_blas_workspace(*aux);
    // Creates both lanes' events (lane_signal makes them on first use) before the capture.
    // The waits also put the second lane's queued work before the graph (see the hit path).
    cuda_lane_signal(impl, *aux);
    cuda_lane_signal(*aux, impl);
  }
  key = with_lanes(call, impl, aux);  // the cuBLAS workspaces may be new
  cudaGraph_t graph = nullptr;
  const CaptureOutcome outcome = capture(impl, aux, enqueue, graph);
  if (outcome != CaptureOutcome::graph) {
    ++cache.counters.fallbacks;
    if (outcome == CaptureOutcome::never) cache.note_failure(key);
    return false;
  }
  cudaGraphExec_t exec = executable_for(cache, key, graph);
  (void)cudaGraphDestroy(graph);
  if (exec == nullptr) {
    ++cache.counters.fallbacks;
    cache.note_failure(key);
    return false;
  }
  ++cache.counters.captures;
  return launch(cache, key, exec, impl);
}

}  // namespace gpuqr::detail
