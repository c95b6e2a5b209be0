#!/usr/bin/env bash
# Session 22: issue 3's tester, this code against the session's base (4c7fc24, its sources
# carried as .carry-old), alternating, on one warm machine.
source scripts/dev/common.sh gpuqr_tester >/dev/null
ss=$PWD/.carry-suitesparse
cmake -S .carry-old -B build-old -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > build-old-conf.log 2>&1 && cmake --build build-old --parallel 16 --target gpuqr_tester > build-old.log 2>&1 || { tail -20 build-old-conf.log build-old.log; exit 1; }
stamp
for i in 1 2; do for t in $b build-old; do echo "== $t"; timeout 60 $t/bench/gpuqr_tester --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 1024,4096 --repeat 5 --warmup 2 2>&1 | grep -E '^geqrf ' | awk '{printf "%s %s%s %s/%s=%s\n", $1, $2, $5, $8, $11, $13}'; done; done
