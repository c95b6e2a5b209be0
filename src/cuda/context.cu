// CUDA backend of Context and of device memory: device selection, the stream, the cuBLAS and
// cuSOLVER handles, the per-context workspace and scratch, allocation and 2-D copies.
// The declarations live in src/core/context_impl.hpp; src/stubs/cuda_stubs.cpp is the twin a
// build without CUDA links instead.
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "gpuqr/error.hpp"
#include "src/core/context_impl.hpp"
#include "src/core/graph_cache.hpp"
#include "src/cuda/check.hpp"

namespace gpuqr {

bool cuda_compiled() noexcept { return true; }

namespace detail {
namespace {

using cuda_detail::DeviceGuard;

/// "79.6 GiB": one decimal, for descriptions.
std::string gib_1(std::size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1ull << 30));
  return text;
}

/// "12.50 GiB (13421772800 bytes)": for allocation failures, where the exact size matters.
std::string gib_2(std::size_t bytes) {
  char text[64];
  std::snprintf(text, sizeof text, "%.2f GiB (%zu bytes)",
                static_cast<double>(bytes) / (1ull << 30), bytes);
  return text;
}

/// The number of visible devices, or the failed status of cudaGetDeviceCount (the error is
/// cleared, so it does not resurface as the "last error" of a later, unrelated call).
cudaError_t query_device_count(int& count) noexcept {
  count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    count = 0;
  }
  return status;
}

/// Why CUDA is unusable, from cudaGetDeviceCount's outcome; "" when a device is visible.
std::string reason_from_count(cudaError_t status, int count) {
  std::string reason;
  if (status == cudaErrorNoDevice) {
    reason = std::string("no CUDA device is visible (cudaGetDeviceCount: ") +
             cudaGetErrorString(status) + ")";
  } else if (status == cudaErrorInsufficientDriver) {
    reason = std::string("the NVIDIA driver is missing or older than this build's CUDA ") +
             "runtime needs (cudaGetDeviceCount: " + cudaGetErrorString(status) + ")";
  } else if (status != cudaSuccess) {
    reason = std::string("the CUDA runtime cannot be used (cudaGetDeviceCount: ") +
             cudaGetErrorString(status) + ")";
  } else if (count == 0) {
    reason = "no CUDA device is visible (cudaGetDeviceCount found 0 devices)";
  } else {
    return "";
  }
  // A common cause of "no device" on a machine with GPUs; say so when it is set.
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) {
    reason += std::string("; CUDA_VISIBLE_DEVICES is \"") + visible + "\"";
  }
  return reason;
}

/// The device holding `p` (device memory), or -1 when the runtime cannot tell.
int device_of(const void* p) noexcept {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged
             ? attributes.device
             : -1;
}

/// Waits for all work on `device` (the current device when -1).
void synchronize_device(int device) {
  if (device < 0) {
    GPUQR_CUDA_CHECK(cudaDeviceSynchronize());
    return;
  }
  DeviceGuard guard(device);
  GPUQR_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace

void cuda_init_context(ContextImpl& impl, int device, CudaStream stream) {
  int count = 0;
  const cudaError_t count_status = query_device_count(count);
  if (count_status != cudaSuccess || count == 0) {
    GPUQR_THROW(CudaError, "cannot create a CUDA context for device " + std::to_string(device) +
                               ": " + reason_from_count(count_status, count));
  }
  if (device < 0 || device >= count) {
    GPUQR_THROW(InvalidArgument, "cuda device " + std::to_string(device) + " requested, " +
                                     std::to_string(count) + " visible (valid indices 0.." +
                                     std::to_string(count - 1) + ")");
  }

  DeviceGuard guard(device);
  impl.device = device;
  try {
    if (stream == nullptr) {
      // Non-blocking: our work must not serialize with the legacy default stream that other
      // code in the process may be using.
      cudaStream_t own = nullptr;
      GPUQR_CUDA_CHECK(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking));
      impl.stream = own;
      impl.owns_stream = true;
    } else {
      int stream_device = -1;
      if (cudaStreamGetDevice(stream, &stream_device) != cudaSuccess) {
        // Special handles (cudaStreamLegacy, per-thread) may not report one; trust the caller.
        (void)cudaGetLastError();
      } else if (stream_device != device) {
        GPUQR_THROW(InvalidArgument, "Context::cuda: the stream belongs to device " +
                                         std::to_string(stream_device) +
                                         ", not to the requested device " +
                                         std::to_string(device));
      }
      impl.stream = stream;
      impl.owns_stream = false;
    }

    cublasHandle_t blas = nullptr;
    GPUQR_CUBLAS_CHECK(cublasCreate(&blas));
    impl.cublas = blas;
    GPUQR_CUBLAS_CHECK(cublasSetStream(blas, impl.stream));
    // Scalars (trsm's alpha) are passed from the host.
    GPUQR_CUBLAS_CHECK(cublasSetPointerMode(blas, CUBLAS_POINTER_MODE_HOST));
    // Measurements only: GPUQR_CUBLAS_MATH=bf16x9 / fixedpoint lets cuBLAS emulate FP32 /
    // FP64 GEMMs on the tensor cores (its CUBLAS_EMULATION_STRATEGY decides where). Off by
    // default: no test covers the emulated products' accuracy yet.
    if (const char* math = std::getenv("GPUQR_CUBLAS_MATH"); math != nullptr && *math != '\0') {
      const std::string m(math);
      GPUQR_CHECK_ARG(m == "bf16x9" || m == "fixedpoint",
                      "GPUQR_CUBLAS_MATH is '" + m + "': bf16x9 or fixedpoint");
      GPUQR_CUBLAS_CHECK(cublasSetMathMode(blas, m == "bf16x9"
                                                     ? CUBLAS_FP32_EMULATED_BF16X9_MATH
                                                     : CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH));
    }

    // Measurements only: GPUQR_GEMM_SMS=N has the context's own lane's GEMMs target N
    // multiprocessors (cublasSetSmCountTarget), leaving the rest to the second lane's panels
    // (the look-ahead); the second lane keeps cuBLAS's default (cuda_aux_lane).
    if (const char* sms = std::getenv("GPUQR_GEMM_SMS"); sms != nullptr && std::atoi(sms) > 0) {
      GPUQR_CUBLAS_CHECK(cublasSetSmCountTarget(blas, std::atoi(sms)));
    }

    cusolverDnHandle_t solver = nullptr;
    GPUQR_CUSOLVER_CHECK(cusolverDnCreate(&solver));
    impl.cusolver = solver;
    GPUQR_CUSOLVER_CHECK(cusolverDnSetStream(solver, impl.stream));

    GPUQR_CUDA_CHECK(cudaMalloc(&impl.scratch, cuda_detail::kScratchBytes));
  } catch (...) {
    cuda_release_context(impl);  // frees whatever was created before the failure
    throw;
  }
}

void cuda_release_context(ContextImpl& impl) noexcept {
  if (impl.device < 0) return;
  DeviceGuard guard(impl.device, std::nothrow);
  // Work still queued on the stream may use the handles, the workspace and the scratch; wait
  // for it before releasing them. Errors are ignored: this runs from a destructor (and, at
  // process exit, possibly after the runtime has shut down), which must not throw.
  if (impl.stream != nullptr) (void)cudaStreamSynchronize(impl.stream);
  // The aux lane's work may read this lane's buffers (the driver's V): let it finish first.
  if (impl.aux && impl.aux->stream != nullptr) (void)cudaStreamSynchronize(impl.aux->stream);
  impl.graph_cache.reset();  // the graphs reference the workspaces freed below
  if (impl.cusolver != nullptr) {
    (void)cusolverDnDestroy(static_cast<cusolverDnHandle_t>(impl.cusolver));
    impl.cusolver = nullptr;
  }
  if (impl.cublas != nullptr) {
    (void)cublasDestroy(static_cast<cublasHandle_t>(impl.cublas));
    impl.cublas = nullptr;
  }
  if (impl.blas_workspace != nullptr) {  // set on the handle, so freed after it
    (void)cudaFree(impl.blas_workspace);
    impl.blas_workspace = nullptr;
  }
  for (int slot = 0; slot < ContextImpl::kWorkspaces; ++slot) {
    if (impl.workspace[slot] != nullptr) {
      (void)cudaFree(impl.workspace[slot]);
      impl.workspace[slot] = nullptr;
      impl.workspace_bytes[slot] = 0;
    }
  }
  if (impl.scratch != nullptr) {
    (void)cudaFree(impl.scratch);
    impl.scratch = nullptr;
  }
  if (impl.finite_host != nullptr) {
    (void)cudaFreeHost(impl.finite_host);
    impl.finite_host = nullptr;
    impl.finite_device = nullptr;
  }
  if (impl.event != nullptr) {
    (void)cudaEventDestroy(static_cast<cudaEvent_t>(impl.event));
    impl.event = nullptr;
  }
  if (impl.owns_stream && impl.stream != nullptr) (void)cudaStreamDestroy(impl.stream);
  impl.stream = nullptr;
  impl.owns_stream = false;
  (void)cudaGetLastError();  // leave no error of ours behind for the next caller to find
}

ContextImpl& cuda_aux_lane(ContextImpl& impl) {
  if (!impl.aux) {
    auto aux = std::make_unique<ContextImpl>();
    // The highest priority: the look-ahead panel is the critical path, and its blocks should
    // get multiprocessors as soon as the trailing update's GEMM blocks free them.
    DeviceGuard guard(impl.device);
    int least = 0, greatest = 0;
    GPUQR_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    cudaStream_t stream = nullptr;
    GPUQR_CUDA_CHECK(cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, greatest));
    try {
      cuda_init_context(*aux, impl.device, stream);
      GPUQR_CUBLAS_CHECK(cublasSetSmCountTarget(static_cast<cublasHandle_t>(aux->cublas), 0));
    } catch (...) {
      (void)cudaStreamDestroy(stream);
      throw;
    }
    aux->owns_stream = true;
    aux->backend = Backend::cuda;
    aux->check_finite = impl.check_finite;
    impl.aux = std::move(aux);
  }
  return *impl.aux;
}

void cuda_lane_signal(ContextImpl& from, ContextImpl& to) {
  DeviceGuard guard(from.device);
  if (from.event == nullptr) {
    cudaEvent_t e = nullptr;
    // Timing off: a pure ordering event is cheaper to record and wait on.
    GPUQR_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    from.event = e;
  }
  // cudaStreamWaitEvent waits for the record made just before it, so re-recording the same
  // event later is safe.
  GPUQR_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(from.event), from.stream));
  GPUQR_CUDA_CHECK(cudaStreamWaitEvent(to.stream, static_cast<cudaEvent_t>(from.event), 0));
}

void cuda_synchronize(const ContextImpl& impl) {
  DeviceGuard guard(impl.device);
  GPUQR_CUDA_CHECK(cudaStreamSynchronize(impl.stream));
}

void* cuda_workspace(ContextImpl& impl, std::size_t bytes, int slot) {
  void*& buffer = impl.workspace[slot];
  std::size_t& size = impl.workspace_bytes[slot];
  if (bytes <= size && (buffer != nullptr || bytes == 0)) {
    return buffer;
  }
  // Inside a graph capture the synchronization and allocation below are illegal: the graph
  // path abandons the capture and runs the call directly, which grows the buffer.
  if (impl.capturing) throw GraphCaptureAbort{"a workspace has to grow"};
  DeviceGuard guard(impl.device);
  // Work already queued on the stream (the previous cuSOLVER call, say) may still read or
  // write the old buffer. Freeing it now could hand its memory to the new allocation, or to
  // anyone else's, while that work runs; so wait for the stream first.
  GPUQR_CUDA_CHECK(cudaStreamSynchronize(impl.stream));
  if (buffer != nullptr) {
    cuda_free(buffer, impl.device);
    buffer = nullptr;
    size = 0;
  }
  // Whole MiB: repeated calls with slightly growing sizes do not reallocate every time.
  constexpr std::size_t kGranule = std::size_t(1) << 20;
  const std::size_t rounded = (bytes + kGranule - 1) / kGranule * kGranule;
  buffer = cuda_malloc(rounded, impl.device);
  size = rounded;
  return buffer;
}

std::string cuda_describe(const ContextImpl& impl) {
  cudaDeviceProp p{};
  GPUQR_CUDA_CHECK(cudaGetDeviceProperties(&p, impl.device));
  return "cuda:" + std::to_string(impl.device) + " " + p.name + " (sm_" +
         std::to_string(p.major) + std::to_string(p.minor) + ", " +
         std::to_string(p.multiProcessorCount) + " SMs, " + gib_1(p.totalGlobalMem) + ")";
}

std::vector<DeviceInfo> cuda_device_list() noexcept {
  try {
    int count = 0;
    if (query_device_count(count) != cudaSuccess) return {};
    std::vector<DeviceInfo> devices;
    for (int i = 0; i < count; ++i) {
      cudaDeviceProp p{};
      if (cudaGetDeviceProperties(&p, i) != cudaSuccess) {
        (void)cudaGetLastError();
        return {};
      }
      DeviceInfo info;
      info.index = i;
      info.name = p.name;
      info.compute_major = p.major;
      info.compute_minor = p.minor;
      info.total_memory_bytes = static_cast<std::int64_t>(p.totalGlobalMem);
      info.multiprocessors = p.multiProcessorCount;
      devices.push_back(std::move(info));
    }
    return devices;
  } catch (...) {  // std::bad_alloc from the strings: report no device rather than throw
    return {};
  }
}

std::string cuda_unavailable_reason_impl() {
  int count = 0;
  const cudaError_t status = query_device_count(count);
  return reason_from_count(status, count);
}

void* cuda_malloc(std::size_t bytes, int device) {
  if (bytes == 0) return nullptr;
  DeviceGuard guard(device);
  void* p = nullptr;
  const cudaError_t status = cudaMalloc(&p, bytes);
  if (status == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // not sticky, but would be reported by the next launch check
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    std::string state;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
      state = "; " + gib_2(free_bytes) + " free of " + gib_1(total_bytes);
    } else {
      (void)cudaGetLastError();
    }
    GPUQR_THROW(OutOfMemory, "cuda:" + std::to_string(device) + ": cannot allocate " +
                                 gib_2(bytes) + " of device memory" + state);
  }
  if (status != cudaSuccess) {
    const std::string call =
        "cudaMalloc(" + std::to_string(bytes) + " bytes) on cuda:" + std::to_string(device);
    cuda_detail::throw_cuda(status, call.c_str(), __FILE__, __LINE__);
  }
  return p;
}

std::int64_t cuda_free_memory(int device) {
  DeviceGuard guard(device);
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  GPUQR_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return static_cast<std::int64_t>(free_bytes);
}

void cuda_free(void* p, int device) noexcept {
  if (p == nullptr) return;
  if (device >= 0) {
    DeviceGuard guard(device, std::nothrow);
    if (cudaFree(p) != cudaSuccess) (void)cudaGetLastError();
  } else if (cudaFree(p) != cudaSuccess) {
    (void)cudaGetLastError();
  }
}

void cuda_copy_2d(void* dst, std::int64_t ldd_bytes, bool dst_device, const void* src,
                  std::int64_t lds_bytes, bool src_device, std::int64_t row_bytes,
                  std::int64_t cols) {
  if (row_bytes == 0 || cols == 0) return;
  const cudaMemcpyKind kind = dst_device
                                  ? (src_device ? cudaMemcpyDeviceToDevice
                                                : cudaMemcpyHostToDevice)
                                  : (src_device ? cudaMemcpyDeviceToHost
                                                : cudaMemcpyHostToHost);
  const int dst_dev = dst_device ? device_of(dst) : -1;
  const int src_dev = src_device ? device_of(src) : -1;
  const int copy_dev = dst_dev >= 0 ? dst_dev : src_dev;

  // This copy runs on the default stream, but contexts compute on non-blocking streams, which
  // the default stream does not wait for. A "synchronous" copy must see the results of work
  // already enqueued (to_host() right after matrix_r(), say), so drain the devices involved.
  if (src_dev >= 0 && src_dev != copy_dev) synchronize_device(src_dev);
  synchronize_device(copy_dev);

  std::optional<DeviceGuard> guard;
  if (copy_dev >= 0) guard.emplace(copy_dev);
  const auto max_pitch = static_cast<std::int64_t>(std::numeric_limits<int>::max());
  if (cols == 1 || (ldd_bytes == row_bytes && lds_bytes == row_bytes)) {
    GPUQR_CUDA_CHECK(cudaMemcpy(dst, src, static_cast<std::size_t>(row_bytes * cols), kind));
  } else if (ldd_bytes <= max_pitch && lds_bytes <= max_pitch) {
    GPUQR_CUDA_CHECK(cudaMemcpy2D(dst, static_cast<std::size_t>(ldd_bytes), src,
                                  static_cast<std::size_t>(lds_bytes),
                                  static_cast<std::size_t>(row_bytes),
                                  static_cast<std::size_t>(cols), kind));
  } else {
    // Pitches beyond what cudaMemcpy2D accepts (cudaDevAttrMaxPitch): one column at a time.
    for (std::int64_t j = 0; j < cols; ++j) {
      GPUQR_CUDA_CHECK(cudaMemcpy(static_cast<char*>(dst) + j * ldd_bytes,
                                  static_cast<const char*>(src) + j * lds_bytes,
                                  static_cast<std::size_t>(row_bytes), kind));
    }
  }
  // cudaMemcpy may return before a device-to-device or pageable host-to-device transfer has
  // landed; the work that follows runs on other (non-blocking) streams, so wait here.
  GPUQR_CUDA_CHECK(cudaStreamSynchronize(nullptr));
}

}  // namespace detail
}  // namespace gpuqr
