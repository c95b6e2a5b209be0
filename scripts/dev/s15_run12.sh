#!/usr/bin/env bash
# Session 15, twelfth call (after the last CUDA edit: the AH workspace sized by the panel's height, the
# tall partials only for tall panels): the dense, blocked, twin, tall-skinny and
# bad-input CUDA tests; the same-machine A/B against the code before the tall AH Gram change
# (run 10's); issue 4's wide cases.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tester gpuqr_tsqr_bench
rm -rf /tmp/old; mkdir -p /tmp/old
tar cf - --exclude=./build-gpu --exclude=./docs --exclude=./.git . | tar xf - -C /tmp/old
cp scripts/dev/s15_old_panel_qr_ah.cu.txt /tmp/old/src/cuda/panel_qr_ah.cu
(cd /tmp/old && cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > /dev/null 2>&1 && cmake --build build --parallel 12 --target gpuqr_tester > "$w/build_old.log" 2>&1; echo "old build rc $?" > "$w/old_rc.txt") &
timeout 240 $b/tests/gpuqr_tests --gtest_filter='*KernelTwins*:*BlockedQR*cuda*:*Dense*cuda*:*TsqrCuda*:*Tsqr*cuda*:*BadInput*cuda*:*TallTimesUpper*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|SKIPPED \]" "$w/tests.log" | head -8; grep -B3 -A12 "Failure" "$w/tests.log" | head -40
stamp
wait; cat "$w/old_rc.txt"
stamp
for k in 1 2; do
  for which in new old; do
    T=$b/bench/gpuqr_tester; [ $which = old ] && T=/tmp/old/build/bench/gpuqr_tester
    timeout 60 $T --backend cuda --baseline cusolver --op geqrf,gels --precision d --dim 1024,4096 --repeat 5 --no-check 2>&1 | grep -E "^geqrf|^gels" | awk -v w=$which '{print w, $1, $2, $8, $11, $13}'
  done
done
stamp
timeout 100 $b/bench/gpuqr_tsqr_bench --m 1048576 --n 512,1024 --precision d,s --methods automatic --forms geqrf --repeat 3 > "$w/tsqr.txt" 2>&1; echo "tsqr rc $?"
grep -E "^[ds] " "$w/tsqr.txt"
stamp
