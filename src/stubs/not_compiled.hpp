// What every stub of a build without the CUDA backend throws.
#pragma once

#include <string>

#include "gpuqr/error.hpp"

namespace gpuqr::detail {

/// Throws NotCompiled for `what` (a CUDA entry point), saying how to build the backend.
[[noreturn]] inline void not_compiled(const char* what) {
  GPUQR_THROW(NotCompiled, std::string(what) +
                               ": this gpuqr was built without the CUDA backend "
                               "(configure with nvcc present and GPUQR_ENABLE_CUDA=ON)");
}

}  // namespace gpuqr::detail
