#!/usr/bin/env bash
# Sourced by the device-session scripts (s13_run*.sh on) with the build targets as arguments:
# logs go to $OUT/w and are archived to $OUT/logs.tgz on exit; the carried SuiteSparse
# (.carry-suitesparse) is on the library path, the carried CUTLASS headers (.carry-cutlass)
# are used when present; the device's name, then binaries packed by pack_bins.sh
# (.carry-bin, when built from this very tree) or a Release build with
# CUDA in build-gpu of the targets named. Leaves $w (the log folder), $b (the build folder)
# and stamp (prints the seconds since the start).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; rm -rf "$w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
stamp() { echo "t $(( $(date +%s) - s )) s"; }
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
# A digest of the sources a build reads (the same here and in the device's copy of the tree).
tree_stamp() {
  find src include tests bench cmake CMakeLists.txt -type f -print0 | LC_ALL=C sort -z |
    xargs -0 sha1sum | sha1sum | cut -c1-40
}
# Unpacks .carry-bin/bins.tar.xz into build folder $1 when its stamp is this tree's and the
# binaries named after it are there with every shared library they need; else returns 1.
prebuilt_bins() {
  local dir=$1; shift
  [ -f .carry-bin/bins.tar.xz ] && [ "$(cat .carry-bin/stamp 2>/dev/null)" = "$(tree_stamp)" ] || return 1
  mkdir -p "$dir" && xz -dc .carry-bin/bins.tar.xz | tar xf - -C "$dir" || return 1
  local t f
  for t in "$@"; do
    f=$(find "$dir" -name "$t" -type f -perm -u+x | head -1)
    [ -n "$f" ] || { echo "prebuilt: $t missing"; return 1; }
    if ldd "$f" | grep -q "not found"; then echo "prebuilt: $t lacks $(ldd "$f" | grep "not found" | head -3 | tr '\n' ' ')"; return 1; fi
  done
}
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$w/device.txt"
# Binaries built beforehand by scripts/dev/pack_bins.sh (carried as .carry-bin) are used when
# their stamp matches this tree and every library they need is found; otherwise the build.
if prebuilt_bins "$b" "$@"; then
  echo "prebuilt binaries ($(cat .carry-bin/stamp | cut -c1-12)): $* ($(( $(date +%s) - s )) s)"
else
  cut=(); [ -d .carry-cutlass/include ] && cut=(-DGPUQR_CUTLASS_DIR=$PWD/.carry-cutlass)  # carried CUTLASS headers
  cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss "${cut[@]}" > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
  cmake --build $b --parallel 16 --target "$@" > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
  grep -E "gpuqr: CUTLASS" "$w/configure.log"
  echo "build $(( $(date +%s) - s )) s"
fi
# Every CUDA test but the CPU-bound GramTf32.WideGramWithinFp32Bounds, with what is left of a
# budget of $1 seconds (default 590) since the start; its log goes to $out/tests.log.
full_suite() {
  local left=$(( ${1:-590} - ($(date +%s) - s) ))
  timeout $left $b/tests/gpuqr_tests --gtest_filter='-*cpu*:*WideGramWithinFp32Bounds*' > "$w/tests.log" 2>&1; echo "tests rc $? (limit $left s)"
  grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests.log" | head -20; grep -c "^\[       OK" "$w/tests.log"
  cp "$w/tests.log" "$out/"
}
