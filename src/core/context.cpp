#include "gpuqr/context.hpp"

#include <cblas.h>

#include <cstdlib>
#include <string>

#include "gpuqr/error.hpp"
#include "src/core/context_impl.hpp"
#include "src/core/graph_cache.hpp"

namespace gpuqr {

const char* to_string(Backend backend) { return backend == Backend::cpu ? "cpu" : "cuda"; }

BackendChoice parse_backend_choice(const std::string& text) {
  if (text == "auto") return BackendChoice::automatic;
  if (text == "cpu") return BackendChoice::cpu;
  if (text == "cuda") return BackendChoice::cuda;
  GPUQR_THROW(InvalidArgument, "unknown backend '" + text + "': expected auto, cpu or cuda");
}

std::vector<DeviceInfo> cuda_devices() noexcept { return detail::cuda_device_list(); }

std::string cuda_unavailable_reason() { return detail::cuda_unavailable_reason_impl(); }

namespace detail {
bool cuda_graphs_default() noexcept {
  static const bool on = [] {
    const char* text = std::getenv("GPUQR_GRAPH");
    return text != nullptr && std::string(text) == "1";
  }();
  return on;
}

ContextImpl::~ContextImpl() {
  if (backend == Backend::cuda) cuda_release_context(*this);
}
}  // namespace detail

Context::Context(std::shared_ptr<detail::ContextImpl> impl) : impl_(std::move(impl)) {}

Context Context::cpu() { return Context(std::make_shared<detail::ContextImpl>()); }

Context Context::cuda(int device) { return cuda(device, nullptr); }

Context Context::cuda(int device, CudaStream stream) {
  auto impl = std::make_shared<detail::ContextImpl>();
  detail::cuda_init_context(*impl, device, stream);  // throws NotCompiled / CudaError
  impl->backend = Backend::cuda;
  impl->graphs = detail::cuda_graphs_default();
  return Context(std::move(impl));
}

Context Context::best() { return cuda_devices().empty() ? cpu() : cuda(0); }

Context Context::from_choice(BackendChoice choice) {
  switch (choice) {
    case BackendChoice::cpu:
      return cpu();
    case BackendChoice::cuda:
      if (cuda_devices().empty()) {
        GPUQR_THROW(InvalidArgument,
                    "backend cuda was asked for, but " + cuda_unavailable_reason());
      }
      return cuda(0);
    case BackendChoice::automatic:
      break;
  }
  return best();
}

Backend Context::backend() const noexcept { return impl_->backend; }
int Context::device() const noexcept { return impl_->device; }
CudaStream Context::stream() const noexcept { return impl_->stream; }
bool Context::check_finite() const noexcept { return impl_->check_finite; }
void Context::set_check_finite(bool on) noexcept { impl_->check_finite = on; }
bool Context::cuda_graphs() const noexcept { return impl_->graphs; }
void Context::set_cuda_graphs(bool on) noexcept { impl_->graphs = on; }

Context::GraphStats Context::graph_stats() const noexcept {
  GraphStats stats;
  if (const detail::GraphCache* cache = impl_->graph_cache.get()) {
    stats.launches = cache->counters.launches;
    stats.captures = cache->counters.captures;
    stats.updates = cache->counters.updates;
    stats.fallbacks = cache->counters.fallbacks;
    stats.cached = static_cast<std::int64_t>(cache->size());
  }
  return stats;
}

Context::StagingStats Context::staging_stats() const noexcept {
  return {impl_->staging_bytes, impl_->staging_seconds};
}
void Context::reset_staging_stats() const noexcept {
  impl_->staging_bytes = 0;
  impl_->staging_seconds = 0;
}

void Context::synchronize() const {
  if (is_cuda()) detail::cuda_synchronize(*impl_);
}

std::string Context::describe() const {
  if (is_cuda()) return detail::cuda_describe(*impl_);
  std::string text = "cpu";
  const char* config = openblas_get_config();
  if (config != nullptr) text += std::string(" (") + config + ", " +
                                 std::to_string(openblas_get_num_threads()) + " threads)";
  return text;
}

}  // namespace gpuqr
