#!/usr/bin/env bash
# Configures (Release, Ninja) and builds gpuqr in build/ (or $GPUQR_BUILD_DIR) with all cores.
# The CUDA backend is on when nvcc is found: on PATH, or in /usr/local/cuda/bin (then added to
# PATH). Extra arguments are build targets (default: everything).
#
#   bash scripts/build.sh                 # library, tool, tests, bench
#   bash scripts/build.sh gpuqr_cli       # just the gpuqr tool
#
# Environment: GPUQR_BUILD_DIR (default build), GPUQR_CMAKE_ARGS (extra configure arguments,
# e.g. "-DGPUQR_ENABLE_CUDA=OFF" or "-DGPUQR_CUDA_ARCHITECTURES=80").
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir="${GPUQR_BUILD_DIR:-build}"

if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
if command -v nvcc >/dev/null 2>&1; then
  echo "build: nvcc found ($(command -v nvcc)): the CUDA backend is built"
else
  echo "build: no nvcc: CPU-only build (the CUDA backend is left out)"
fi

# A build directory made by another generator cannot be reused with Ninja.
if [ -f "$build_dir/CMakeCache.txt" ] && \
   ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$build_dir/CMakeCache.txt"; then
  echo "build: $build_dir/ was configured with another generator; remove it or set" \
       "GPUQR_BUILD_DIR" >&2
  exit 1
fi

# shellcheck disable=SC2086  # GPUQR_CMAKE_ARGS is a list of words
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release ${GPUQR_CMAKE_ARGS:-}

jobs="$(nproc 2>/dev/null || echo 2)"
if [ "$#" -gt 0 ]; then
  cmake --build "$build_dir" --parallel "$jobs" --target "$@"
else
  cmake --build "$build_dir" --parallel "$jobs"
fi
