#!/usr/bin/env bash
# Builds the named targets here (no GPU needed) the way common.sh builds them on the device
# (Release, CUDA for sm_90, the carried SuiteSparse and CUTLASS), in build-pack, and packs
# them into .carry-bin/bins.tar.xz with the tree's stamp, so that a device call that carries
# .carry-bin skips its build (~150 s of device time). common.sh uses them only when the stamp
# matches the tree it runs on and every shared library they need is found there; otherwise it
# builds as before. Usage: scripts/dev/pack_bins.sh gpuqr_tests gpuqr_tester gpuqr_panel_bench
# then carry [".carry-suitesparse", ".carry-cutlass", ".carry-bin"].
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
[ $# -gt 0 ] || { echo "usage: $0 target..."; exit 2; }
eval "$(sed -n '/^tree_stamp() {/,/^}/p' scripts/dev/common.sh)"  # the same digest as common.sh
ss=$PWD/.carry-suitesparse
cut=(); [ -d .carry-cutlass/include ] && cut=(-DGPUQR_CUTLASS_DIR=$PWD/.carry-cutlass)
mkdir -p build-pack
cmake -S . -B build-pack -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON \
  -DCMAKE_PREFIX_PATH="$ss" "${cut[@]}" > build-pack/configure.log
grep -E "gpuqr: CUTLASS" build-pack/configure.log
stamp_before=$(tree_stamp)
cmake --build build-pack --target "$@"
[ "$(tree_stamp)" = "$stamp_before" ] || { echo "the tree changed during the build"; exit 1; }
files=()
for t in "$@"; do
  f=$(cd build-pack && find . -name "$t" -type f -perm -u+x | head -1)
  [ -n "$f" ] || { echo "no binary for $t"; exit 1; }
  files+=("$f")
done
mkdir -p .carry-bin
(cd build-pack && tar cf - "${files[@]}") | xz -9 -T2 > .carry-bin/bins.tar.xz
echo "$stamp_before" > .carry-bin/stamp
ls -la .carry-bin
