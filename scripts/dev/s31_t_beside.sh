#!/usr/bin/env bash
# Session 31, branch ah-t-beside-scale: the AH panel's T formed by a kernel of its own that
# runs beside the scaling kernel (ah_t_kernel) instead of inside the b x b kernel, so that
# V^T V and T (~12k of the b x b kernel's ~47k cycles) leave the inner panel's chain. In one
# call: the twin tests (the new bitwise test among them) and the routes the AH panel feeds,
# memcheck of the new test, the clock64 phases and panel times both ways, the tester
# alternated twice (GPUQR_AH_T_BESIDE 0 / 1), graph replay, and the tall-skinny geqrf form.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tester gpuqr_panel_bench gpuqr_tsqr_bench
T=$b/tests/gpuqr_tests
timeout 240 $T --gtest_filter='*KernelTwins*cuda*:*Dense.*cuda*:*BlockedQR.*cuda*:*CudaGraphReplay.*cuda*:*TsqrMethods*cuda*' > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests.log" | head; grep -B3 -A12 "Failure" "$w/tests.log" | head -40
grep -E "TBeside" "$w/tests.log" | head -4
cp "$w/tests.log" "$out/"
stamp
P=$b/bench/gpuqr_panel_bench
for m in 0 1; do GPUQR_AH_T_BESIDE=$m timeout 60 $P --trace 1 --h 1024 --precision d,s 2>&1 | sed "s/^/beside $m: /"; done
for m in 0 1; do GPUQR_AH_T_BESIDE=$m timeout 60 $P --h 96,256,1024,4096 --precision d,s --repeat 30 2>&1 | sed "s/^/beside $m: /"; done
stamp
X=$b/bench/gpuqr_tester
run() { env "$@" timeout 90 $X --backend cuda --baseline cusolver --op geqrf,orgqr,gels --precision d,s --dim 1024,2048,4096 --repeat 5 --warmup 2 > "$w/t.txt" 2>&1; echo "[$*] $(grep -E '^(geqrf|orgqr|gels) ' "$w/t.txt" | awk '{printf "%s:%s%s %s/%s=%s %s  ", $1, $5, $2, $8, $11, $13, $NF}')"; echo "== $*" >> "$out/tester_ab.txt"; cat "$w/t.txt" >> "$out/tester_ab.txt"; }
for r in 1 2; do run GPUQR_AH_T_BESIDE=0; run GPUQR_AH_T_BESIDE=1; done
stamp
timeout 40 $X --backend cuda --baseline cusolver --graph both --op geqrf,gels --precision d,s --dim 1024,4096 --repeat 5 --warmup 2 > "$out/tester_graph.txt" 2>&1; echo "graph tester rc $?"
grep -E "^(op|geqrf|gels) " "$out/tester_graph.txt"
stamp
timeout 60 $b/bench/gpuqr_tsqr_bench --m 1048576 --n 32,64,128 --precision d,s --methods automatic --forms geqrf --repeat 5 --variants default,GPUQR_AH_T_BESIDE=0 > "$out/tsqr_ab.txt" 2>&1; echo "tsqr rc $?"; tail -20 "$out/tsqr_ab.txt"
stamp
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter='*PanelQrAhTBeside*cuda_float' > "$w/san_memcheck.log" 2>&1; echo "memcheck rc $?"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$w/san_memcheck.log" | head -3
stamp
