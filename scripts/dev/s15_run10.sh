#!/usr/bin/env bash
# Session 15, tenth call: run 9 measured square geqrf 4096 and gels 1024 slower than runs 2-7
# (another machine): A/B of the AH panel's workspace change on one machine, the tester of the
# code before it (src/cuda/panel_qr_ah.cu of commit e59c10f, built in /tmp/old) against the
# current one, alternating; racecheck on the AH panel's twin test (the new sum kernel).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tester
rm -rf /tmp/old; mkdir -p /tmp/old
tar cf - --exclude=./build-gpu --exclude=./docs --exclude=./.git . | tar xf - -C /tmp/old
cp scripts/dev/s15_old_panel_qr_ah.cu.txt /tmp/old/src/cuda/panel_qr_ah.cu
(cd /tmp/old && cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > /dev/null 2>&1 && cmake --build build --parallel 16 --target gpuqr_tester > "$w/build_old.log" 2>&1); echo "old build rc $?"
stamp
for k in 1 2; do
  for which in new old; do
    T=$b/bench/gpuqr_tester; [ $which = old ] && T=/tmp/old/build/bench/gpuqr_tester
    timeout 60 $T --backend cuda --baseline cusolver --op geqrf,gels --precision d --dim 1024,4096 --repeat 5 --no-check 2>&1 | grep -E "^geqrf|^gels" | awk -v w=$which '{print w, $1, $2, $8, $11, $13}'
  done
done
stamp
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*PanelQrAhMatchesGeqr2OrDeclines*cuda_float' > "$w/san_racecheck.log" 2>&1; echo "racecheck rc $?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" "$w/san_racecheck.log" | head -4
stamp
