#!/usr/bin/env bash
# Session 19, run 6: where the GPU starts to pay (issue 9's CPU-or-GPU choice). Our GPU and
# our CPU factorization (16 threads) side by side, both modes, on small generated grids and
# the shipped matrices, best of 3 after a warm-up; the analysis' flops and intensity are in
# the JSON lines.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_sparse_gpu_bench
bench=$b/bench/gpuqr_sparse_gpu_bench
timeout 400 $bench --mode both --warmup 1 --repeat 3 --sides gpu,cpu \
  --matrices data/matrices/ash219.mtx,data/matrices/lp_e226_transposed.mtx,data/matrices/lpi_galenet.mtx,data/matrices/GD98_a.mtx,.carry-matrices/Groebner_id2003_aug.mtx \
  --gen grid2d:10,grid2d:20,grid2d:40,grid2d:80,grid2d:160,grid3d:4,grid3d:6,grid3d:8,grid3d:10,grid3d:12,grid3d:16 \
  --json "$w/sweep.jsonl" > "$w/sweep.txt" 2>&1; echo "== sweep rc $?"
grep -vE "^ *BLAS and|gpu parts|gpu enqueue" "$w/sweep.txt" | tail -n 40
