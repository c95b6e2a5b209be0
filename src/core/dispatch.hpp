// Backend dispatch and the argument checks shared by the drivers.
#pragma once

#include <string>

#include "gpuqr/context.hpp"
#include "gpuqr/matrix.hpp"
#include "src/core/context_impl.hpp"

/// Calls kernels::cpu::name or kernels::cuda::name by the context's backend.
#define GPUQR_DISPATCH(ctx, name, ...)                                  \
  ((ctx).is_cuda() ? ::gpuqr::kernels::cuda::name((ctx).impl(), __VA_ARGS__) \
                   : ::gpuqr::kernels::cpu::name((ctx).impl(), __VA_ARGS__))

/// As GPUQR_DISPATCH, on an explicit lane (a ContextImpl of the context's backend).
#define GPUQR_DISPATCH_ON(ctx, lane, name, ...)                          \
  ((ctx).is_cuda() ? ::gpuqr::kernels::cuda::name((lane), __VA_ARGS__)  \
                   : ::gpuqr::kernels::cpu::name((lane), __VA_ARGS__))

namespace gpuqr::detail {

/// The context's second lane of work (look-ahead): on CUDA another stream, on the CPU the same.
inline ContextImpl& aux_lane(const Context& ctx) {
  return ctx.is_cuda() ? cuda_aux_lane(ctx.impl()) : ctx.impl();
}

/// Later work on `to` waits for the work enqueued so far on `from` (no-op on the CPU).
inline void lane_signal(const Context& ctx, ContextImpl& from, ContextImpl& to) {
  if (ctx.is_cuda() && &from != &to) cuda_lane_signal(from, to);
}


/// The memory space a context computes in.
inline MemorySpace space_of(const Context& ctx) {
  return ctx.is_cuda() ? MemorySpace::device : MemorySpace::host;
}

/// Throws InvalidArgument unless a view with this space/device can be used by `ctx`.
inline void check_space(const Context& ctx, MemorySpace space, int device, const char* what,
                        const char* routine) {
  const MemorySpace want = space_of(ctx);
  if (space != want) {
    GPUQR_THROW(InvalidArgument, std::string(routine) + ": " + what + " is in " +
                                     to_string(space) + " memory, but the " +
                                     to_string(ctx.backend()) + " context computes in " +
                                     to_string(want) + " memory");
  }
  if (want == MemorySpace::device && device >= 0 && device != ctx.device()) {
    GPUQR_THROW(InvalidArgument, std::string(routine) + ": " + what + " is on device " +
                                     std::to_string(device) + ", the context on device " +
                                     std::to_string(ctx.device()));
  }
}

template <class V>
void check_view(const Context& ctx, const V& v, const char* what, const char* routine) {
  check_space(ctx, v.space(), v.device(), what, routine);
}

inline std::string shape(std::int64_t r, std::int64_t c) {
  return std::to_string(r) + "x" + std::to_string(c);
}

}  // namespace gpuqr::detail
