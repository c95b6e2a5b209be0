#!/usr/bin/env bash
# The demo: installs what is missing (scripts/setup.sh), builds gpuqr (Release, Ninja, build/),
# then shows the machine (`gpuqr info`) and solves the shipped least-squares problem
# data/matrices/ash219.mtx (Harwell-Boeing ash219, 219 x 85) on the GPU when there is one,
# else on the CPU; then a second, larger problem, lp_e226 transposed (472 x 223).
#
#   bash scripts/demo.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh
bash scripts/build.sh gpuqr_cli

build_dir="${GPUQR_BUILD_DIR:-build}"
gpuqr="$build_dir/tools/gpuqr"

run() {
  echo
  echo "\$ $gpuqr $*"
  "$gpuqr" "$@"
}

run info
run lstsq data/matrices/ash219.mtx
run lstsq data/matrices/lp_e226_transposed.mtx --repeat 10
