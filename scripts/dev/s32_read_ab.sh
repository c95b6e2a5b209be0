#!/usr/bin/env bash
# Session 32, run 2 (branch ah-read): the b x b kernel's read (the top block's loads first,
# then 8 partial Gram matrices at a time; GPUQR_AH_WIDE_READ=0: the old read) and its write
# (constant indices for full panels), and the Gram pass's rows per partial
# (GPUQR_AH_MIN_CHUNK=128: half as many partials for the b x b kernel to read at h <= 8k).
# In one call: the b x b kernel's phases each way, the tester (geqrf, graphs off and on)
# alternated three times among the configurations, the AH routes' tests, memcheck.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tester gpuqr_panel_bench
P=$b/bench/gpuqr_panel_bench
for c in GPUQR_AH_WIDE_READ=0 GPUQR_AH_WIDE_READ=1 GPUQR_AH_MIN_CHUNK=128; do for h in 256 1024; do env $c timeout 30 $P --trace 1 --h $h --precision d,s 2>&1 | sed "s/^/[$c] /"; done; done
A="GPUQR_AH_WIDE_READ=0"; B="GPUQR_DEFAULT=1"; C="GPUQR_AH_MIN_CHUNK=128"
for c in "$A" "$B" "$C"; do env $c timeout 30 $P --h 256,1024,4096 --precision d,s --repeat 30 2>&1 | grep -v "^prec" | sed "s/^/[$c] /"; done
stamp
X=$b/bench/gpuqr_tester
run() { env "$@" timeout 60 $X --backend cuda --baseline cusolver --graph both --op geqrf --precision d,s --dim 1024,2048,4096 --repeat 7 --warmup 2 > "$w/t.txt" 2>&1; echo "[$*] $(grep -E '^(geqrf|orgqr|gels) ' "$w/t.txt" | awk '{printf "%s:%s%s %s/%s=%s g %s=%s %s  ", $1, $5, $2, $8, $11, $13, $14, $15, $NF}')"; echo "== $*" >> "$out/tester_ab.txt"; cat "$w/t.txt" >> "$out/tester_ab.txt"; }
for r in 1 2 3; do run $A; run $B; run $C; stamp; done
T=$b/tests/gpuqr_tests
F='*KernelTwins*cuda*:*Dense.*cuda*:*BlockedQR.*cuda*:*CudaGraphReplay.*cuda*:*TsqrMethods*cuda*:*TsqrCudaTwins*'
timeout 200 $T --gtest_filter="$F" > "$w/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED|tests ran" "$w/tests.log" | head; grep -B3 -A12 "Failure" "$w/tests.log" | head -30
cp "$w/tests.log" "$out/"
stamp
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter='*PanelQrAhTBeside*cuda_double' > "$w/san_memcheck.log" 2>&1; echo "memcheck rc $?"; grep -E "SUMMARY|PASSED|FAILED" "$w/san_memcheck.log" | head -3
stamp
