#!/usr/bin/env bash
# Installs gpuqr from a build directory into a temporary prefix, then configures, builds and
# runs tests/package (a separate project: find_package(gpuqr) + gpuqr::gpuqr) against it.
# Exits nonzero on any failure.
#
#   bash tests/package_test.sh <build-dir> <source-dir>
set -euo pipefail

if [ "$#" -ne 2 ]; then
  echo "usage: $0 <gpuqr build dir> <gpuqr source dir>" >&2
  exit 2
fi
build_dir="$(cd "$1" && pwd)"
source_dir="$(cd "$2" && pwd)"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/gpuqr_package.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

echo "== install $build_dir into $tmp/prefix"
cmake --install "$build_dir" --prefix "$tmp/prefix"

# Use what the gpuqr build used: its C++ compiler, and the CUDA toolkit of its nvcc (the
# installed config runs find_dependency(CUDAToolkit) when gpuqr was built with CUDA).
cache_value() {
  sed -n "s/^$1:[A-Z]*=//p" "$build_dir/CMakeCache.txt" | head -n 1
}
args=(-S "$source_dir/tests/package" -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release
      "-DCMAKE_PREFIX_PATH=$tmp/prefix")
cxx="$(cache_value CMAKE_CXX_COMPILER)"
[ -n "$cxx" ] && args+=("-DCMAKE_CXX_COMPILER=$cxx")
nvcc="$(cache_value CMAKE_CUDA_COMPILER)"
if [ -n "$nvcc" ] && [ -x "$nvcc" ]; then
  args+=("-DCUDAToolkit_ROOT=$(dirname "$(dirname "$nvcc")")")
fi
if command -v ninja >/dev/null 2>&1; then
  args+=(-G Ninja)
fi

echo "== configure the consumer: cmake ${args[*]}"
cmake "${args[@]}"
echo "== build the consumer"
cmake --build "$tmp/build"
echo "== run the consumer"
"$tmp/build/consumer"
