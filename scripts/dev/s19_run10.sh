#!/usr/bin/env bash
# Session 19, run 10: after the review fixes (host code: the huge-page threshold's clamp, the
# placement deciding the arena on a CUDA context, a failed bounce allocation falling back to
# whole fronts). The sparse tests, then kept grid3d:45 and the small shipped problems once
# more (ours only; SuiteSparseQR as in runs 4 and 5).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_sparse_gpu_bench
timeout 150 $b/tests/gpuqr_tests --gtest_filter='*Sparse*:*Placement*' > "$w/sparse_tests.log" 2>&1; echo "sparse tests rc $?"
grep -E "^\[  FAILED|PASSED|SKIPPED|tests ran" "$w/sparse_tests.log" | head -20; grep -B3 -A10 "Failure" "$w/sparse_tests.log" | head -30
bench=$b/bench/gpuqr_sparse_gpu_bench
timeout 100 $bench --mode kept --warmup 1 --repeat 3 --sides gpu --gen grid3d:45 --matrices .carry-matrices/Franz6_id1959_aug.mtx,.carry-matrices/Groebner_id2003_aug.mtx > "$w/kept.txt" 2>&1; echo "== kept rc $?"
grep -E "^(grid|Groeb|Franz)|gpu parts" "$w/kept.txt"
