// Runs one test source for every backend and precision: a parameter says which, and the
// fixture skips (with the reason) where the backend has no device.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "gpuqr/context.hpp"
#include "gpuqr/matrix.hpp"

namespace gpuqr::testing {

struct BackendCase {
  Backend backend;
  bool is_double;
};

inline void PrintTo(const BackendCase& c, std::ostream* os) {
  *os << to_string(c.backend) << (c.is_double ? "/double" : "/float");
}

inline std::string case_name(const ::testing::TestParamInfo<BackendCase>& info) {
  return std::string(to_string(info.param.backend)) + (info.param.is_double ? "_double" : "_float");
}

inline auto all_backend_cases() {
  return ::testing::Values(BackendCase{Backend::cpu, true}, BackendCase{Backend::cpu, false},
                           BackendCase{Backend::cuda, true}, BackendCase{Backend::cuda, false});
}

/// The CUDA cases alone (for tests that compare CUDA kernels with their CPU twins).
inline auto cuda_backend_cases() {
  return ::testing::Values(BackendCase{Backend::cuda, true}, BackendCase{Backend::cuda, false});
}

/// Fixture: ctx() is the backend's context; CUDA cases skip when no GPU is visible.
class BackendTest : public ::testing::TestWithParam<BackendCase> {
 protected:
  void SetUp() override {
    if (GetParam().backend == Backend::cuda) {
      if (cuda_devices().empty()) {
        GTEST_SKIP() << "no GPU here (" << cuda_unavailable_reason()
                     << "): CUDA backend case skipped";
      }
      ctx_ = Context::cuda(0);
    } else {
      ctx_ = Context::cpu();
    }
  }
  Context& ctx() { return *ctx_; }
  bool is_double() const { return GetParam().is_double; }
  std::optional<Context> ctx_;
};

/// Copies a host matrix into the context's memory.
template <class T>
Matrix<T> to_ctx(const Context& ctx, MatrixView<const T> host) {
  return Matrix<T>::copy_of(host, ctx.is_cuda() ? MemorySpace::device : MemorySpace::host,
                            ctx.device());
}

/// Waits for the context, then copies to the host.
template <class T>
Matrix<T> to_host(const Context& ctx, const Matrix<T>& m) {
  ctx.synchronize();
  return m.to_host();
}

/// The first `size` entries of a matrix's storage (all its rows by default) as a vector, in
/// the matrix's memory space.
template <class T>
VectorView<T> vec(Matrix<T>& m, std::int64_t size = -1) {
  return VectorView<T>(m.data(), size < 0 ? m.rows() : size, m.space(), m.device());
}
template <class T>
VectorView<const T> vec(const Matrix<T>& m, std::int64_t size = -1) {
  return VectorView<const T>(m.data(), size < 0 ? m.rows() : size, m.space(), m.device());
}

/// Runs `body.template operator()<T>()` for the case's precision.
#define GPUQR_FOR_PRECISION(body)            \
  do {                                       \
    if (is_double()) {                       \
      body.template operator()<double>();    \
    } else {                                 \
      body.template operator()<float>();     \
    }                                        \
  } while (0)

}  // namespace gpuqr::testing
