#!/usr/bin/env bash
# Session 18, second call: grid3d:45 Q-less with GPUQR_SPARSE_TRACE=1 (per-launch host times),
# then SuiteSparseQR on the same problem (the baseline of this device's host).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_sparse_gpu_bench
bench=$b/bench/gpuqr_sparse_gpu_bench
GPUQR_SPARSE_TRACE=1 timeout 120 $bench --mode qless --warmup 1 --repeat 1 --sides gpu --gen grid3d:45 > "$w/trace.txt" 2> "$w/trace.err"; echo "== trace rc $?"
grep -vE "^ *BLAS and|^intensity" "$w/trace.txt" | tail -n 8; n=$(grep -c "stages and schedule" "$w/trace.err"); echo "runs traced $n"
# the last traced run
awk '/stages and schedule/{buf=""} {buf=buf $0 "\n"} END{printf "%s", buf}' "$w/trace.err"
stamp
timeout 120 $bench --mode qless --warmup 0 --repeat 1 --sides spqr --gen grid3d:45 > "$w/spqr.txt" 2>&1; echo "== spqr rc $?"
grep -vE "^ *BLAS and|^intensity" "$w/spqr.txt" | tail -n 6
