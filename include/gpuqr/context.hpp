// gpuqr/context.hpp: where work runs.
//
// A Context is the CPU, or one CUDA device with its stream, cuBLAS and cuSOLVER handles and a
// growable device workspace. Contexts are cheap to copy: copies share the same resources.
// This header includes no CUDA header; a stream is passed as the opaque cudaStream_t pointer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct CUstream_st;  // the type behind cudaStream_t

namespace gpuqr {

/// The stream type of the CUDA runtime (identical to cudaStream_t).
using CudaStream = CUstream_st*;

enum class Backend { cpu, cuda };

/// "cpu" or "cuda".
const char* to_string(Backend backend);

/// Which backend a user asked for on a command line or in a config: auto picks CUDA when a
/// device is visible, else the CPU.
enum class BackendChoice { automatic, cpu, cuda };

/// Parses "auto", "cpu" or "cuda"; throws InvalidArgument otherwise.
BackendChoice parse_backend_choice(const std::string& text);

/// One CUDA device as the runtime reports it.
struct DeviceInfo {
  int index = 0;
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  std::int64_t total_memory_bytes = 0;
  int multiprocessors = 0;
};

/// True when this build has the CUDA backend (it may still see no device).
bool cuda_compiled() noexcept;

/// The CUDA devices visible now; empty when CUDA is not compiled, there is no driver or no GPU.
/// Never throws.
std::vector<DeviceInfo> cuda_devices() noexcept;

/// Why no CUDA device is usable ("" when one is): for messages and test skips.
std::string cuda_unavailable_reason();

namespace detail {
class ContextImpl;
}

class Context {
 public:
  /// The CPU backend (LAPACKE/OpenBLAS).
  static Context cpu();

  /// CUDA device `device` with a stream of its own (non-blocking), created now.
  /// Throws NotCompiled without the CUDA backend, CudaError when the device is unusable.
  static Context cuda(int device = 0);

  /// CUDA device `device` working on the caller's `stream`, which the caller keeps alive
  /// and destroys; gpuqr work is enqueued on it in order.
  static Context cuda(int device, CudaStream stream);

  /// CUDA device 0 if one is visible, else the CPU.
  static Context best();

  /// Resolves a user's choice: automatic = best(), cuda = cuda(0), cpu = cpu().
  static Context from_choice(BackendChoice choice);

  Backend backend() const noexcept;
  bool is_cuda() const noexcept { return backend() == Backend::cuda; }
  /// The CUDA device index; -1 for the CPU.
  int device() const noexcept;
  /// The CUDA stream; nullptr for the CPU.
  CudaStream stream() const noexcept;

  /// Blocks until all work enqueued on this context has finished (no-op on the CPU).
  void synchronize() const;

  /// One line: "cpu (OpenBLAS ...)" or "cuda:0 NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79 GiB)".
  std::string describe() const;

  /// Whether inputs are checked for NaN/Inf before factorizing (default true, as SciPy's
  /// check_finite). Turning it off saves one pass over each input.
  bool check_finite() const noexcept;
  void set_check_finite(bool on) noexcept;

  /// Host <-> device copies made for host arguments of calls on a CUDA context (the
  /// LAPACK-level functions of dense.hpp accept host matrices there and stage them through
  /// device copies): totals since the context was created or the last reset. Always zero on
  /// the CPU.
  struct StagingStats {
    std::int64_t bytes = 0;
    double seconds = 0;
  };
  StagingStats staging_stats() const noexcept;
  void reset_staging_stats() const noexcept;

  /// CUDA graph replay of geqrf, orgqr, ormqr and gels on device data (their factorization
  /// and Q steps; gels' host-side checks stay outside): a call whose key (operation,
  /// precision, sizes, leading dimensions, the A/tau/C addresses, the context's stream and
  /// workspaces, block sizes) was seen before is captured into a CUDA graph once, and later
  /// calls with that key replay it with one launch; calls of the same shape on other buffers
  /// update it. Up to 16 keys per context, least recently used dropped, all freed with the
  /// context. Results are those of the direct path, bit for bit (the same kernels). A capture
  /// that fails falls back to the direct path; a stream that is already capturing (the
  /// caller's own graph) gets the direct path. Calls with host matrices never use it. No
  /// effect on the CPU.
  /// Default on a CUDA context: on, capturing a key at its second call (a call made once
  /// never pays for a capture); GPUQR_GRAPH=0 in the environment at context creation turns it
  /// off, GPUQR_GRAPH=1 captures from a key's first call (read once per process).
  /// set_cuda_graphs(true) captures from the first call too; set_cuda_graphs(false) turns
  /// it off.
  bool cuda_graphs() const noexcept;
  void set_cuda_graphs(bool on) noexcept;

  /// What the graph path did since the context was created (all zero when unused).
  struct GraphStats {
    std::int64_t launches = 0;   // calls replayed by a graph launch
    std::int64_t captures = 0;   // graphs captured (then instantiated or applied by update)
    std::int64_t updates = 0;    // captures applied to an existing graph by cudaGraphExecUpdate
    std::int64_t fallbacks = 0;  // calls run directly after a capture failed
    std::int64_t first_calls = 0;  // calls run directly as their key's first (default mode)
    std::int64_t cached = 0;       // graphs held now
  };
  GraphStats graph_stats() const noexcept;

  detail::ContextImpl& impl() const noexcept { return *impl_; }

 private:
  explicit Context(std::shared_ptr<detail::ContextImpl> impl);
  std::shared_ptr<detail::ContextImpl> impl_;
};

}  // namespace gpuqr
