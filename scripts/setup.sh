#!/usr/bin/env bash
# Installs what building and testing gpuqr needs on Debian/Ubuntu, and nothing when it is all
# there already (checked with dpkg-query, so a second run does not touch apt).
#
#   bash scripts/setup.sh
#
# Packages: cmake, ninja-build, g++ (build); libopenblas-dev, liblapacke-dev (the CPU backend);
# libgtest-dev (tests); libsuitesparse-dev (for the sparse work to come); python3 (scripts).
# Where nvcc is found, CUTLASS's headers too (fetch_cutlass below).
# The CUDA toolkit is not installed here: the CUDA backend is built when nvcc is found
# (/usr/local/cuda/bin/nvcc or on PATH), else the build is CPU-only.
set -euo pipefail

packages=(cmake ninja-build g++ libopenblas-dev liblapacke-dev libgtest-dev libsuitesparse-dev
          python3)

missing=()
for p in "${packages[@]}"; do
  # As dpkg -s: "install ok installed" only for a fully installed package.
  status="$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)"
  if [ "$status" != "install ok installed" ]; then
    missing+=("$p")
  fi
done

# CUTLASS's headers (header-only) for the CUDA backend's FP32 3xTF32 GEMMs, from the
# nvidia-cutlass wheel on PyPI into ~/.cache/gpuqr/cutlass (cmake/FindGpuqrCutlass.cmake looks
# there), only where nvcc is found. Without them the build takes cuBLAS's SGEMM instead.
cutlass_version=4.2.0.0
cutlass_dir="${HOME}/.cache/gpuqr/cutlass"
fetch_cutlass() {
  if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    return 0
  fi
  if [ -f "$cutlass_dir/include/cutlass/cutlass.h" ]; then
    echo "setup: CUTLASS headers present ($cutlass_dir)"
    return 0
  fi
  local tmp
  tmp="$(mktemp -d)"
  if python3 -m pip download --quiet --no-deps --only-binary=:all: \
       "nvidia-cutlass==$cutlass_version" -d "$tmp" >/dev/null 2>&1 &&
     python3 -m zipfile -e "$tmp"/nvidia_cutlass-*.whl "$tmp/x" >/dev/null 2>&1 &&
     [ -f "$tmp/x/cutlass_library/source/include/cutlass/cutlass.h" ]; then
    mkdir -p "$cutlass_dir"
    rm -rf "$cutlass_dir/include"
    mv "$tmp/x/cutlass_library/source/include" "$cutlass_dir/include"
    echo "setup: CUTLASS $cutlass_version headers in $cutlass_dir"
  else
    echo "setup: could not fetch CUTLASS's headers (pip, PyPI); FP32 products stay on SGEMM"
  fi
  rm -rf "$tmp"
}

if [ "${#missing[@]}" -eq 0 ]; then
  echo "setup: all packages present (${packages[*]})"
  fetch_cutlass
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup: missing ${missing[*]}, and there is no apt-get here: install them by hand" >&2
  exit 1
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo_cmd=(sudo)
  else
    echo "setup: missing ${missing[*]}; not root and no sudo: install them as root" >&2
    exit 1
  fi
fi

echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
  "${missing[@]}"
fetch_cutlass
