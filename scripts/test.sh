#!/usr/bin/env bash
# The whole test suite: installs what is missing (scripts/setup.sh), configures and builds
# (Release, Ninja, build/, CUDA when nvcc is found), then runs every test with ctest,
# GPU-labelled ones included (they skip with a message where no GPU is visible).
# The exit status is ctest's.
#
#   bash scripts/test.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh
bash scripts/build.sh

build_dir="${GPUQR_BUILD_DIR:-build}"
# The package test configures a consumer project, which must find the same nvcc.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
status=0
ctest --test-dir "$build_dir" --output-on-failure || status=$?
exit "$status"
