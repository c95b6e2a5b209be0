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
int cuda_graphs_default() noexcept {
  static const int mode = [] {
    const char* text = std::getenv("GPUQR_GRAPH");
    const std::string value = text == nullptr ? "" : text;
    return value == "0" ? 0 : (value == "1" ? 2 : 1);
  }();
  return mode;
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
  const int graphs = detail::cuda_graphs_default();
  impl->graphs = graphs != 0;
  impl->graphs_from_first_call = graphs == 2;
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
void Context::set_cuda_graphs(bool on) noexcept {
  impl_->graphs = on;
  impl_->graphs_from_first_call = on;
}

Context::GraphStats Context::graph_stats() const noexcept {
  GraphStats stats;
  if (const detail::GraphCache* cache = impl_->graph_cache.get()) {
    stats.launches = cache->counters.launches;
    stats.captures = cache->counters.captures;
    stats.updates = cache->counters.updates;
    stats.fallbacks = cache->counters.fallbacks;
    stats.first_calls = cache->counters.first_calls;
    stats.cached = static_cast<std::int64_t>(cache->executables());
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
