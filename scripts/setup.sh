#!/usr/bin/env bash
# Installs what building and testing gpuqr needs on Debian/Ubuntu, and nothing when it is all
# there already (checked with dpkg-query, so a second run does not touch apt).
#
#   bash scripts/setup.sh
#
# Packages: cmake, ninja-build, g++ (build); libopenblas-dev, liblapacke-dev (the CPU backend);
# libgtest-dev (tests); libsuitesparse-dev (for the sparse work to come); python3 (scripts).
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

if [ "${#missing[@]}" -eq 0 ]; then
  echo "setup: all packages present (${packages[*]})"
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
