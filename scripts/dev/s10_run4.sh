#!/usr/bin/env bash
# Session 10, fourth call: the FP64 direct rows kernel (64 x 16) at 16 against 20 resident
# warps (GPUQR_BATCHED_ROWS_WARPS), 1 GiB against cuBLAS in the same run, twice; ncu of the
# 16-warp kernel (stall reasons, pipes, shared-memory wavefronts).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}"; mkdir -p "$out"; w="$out/w"; mkdir -p "$w"; b=build-gpu; s=$(date +%s)
finish() { tar czf "$out/logs.tgz" -C "$w" . ; rm -rf "$w"; echo "total $(( $(date +%s) - s )) s"; }
trap finish EXIT
ss=$PWD/.carry-suitesparse
export LD_LIBRARY_PATH=$ss/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$w/device.txt"
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUQR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH=$ss > "$w/configure.log" 2>&1 || { tail -20 "$w/configure.log"; exit 1; }
cmake --build $b --parallel 16 --target gpuqr_batched_bench > "$w/build.log" 2>&1 || { grep -E "error" -A5 "$w/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - s )) s"
B=$b/bench/gpuqr_batched_bench
for R in 16 20 16 20; do
  GPUQR_BATCHED_ROWS_WARPS=$R timeout 60 $B --n 16 --shape both --precision double --gib 1 --no-variable > "$w/rows_w$R.txt" 2>&1; echo "== rows warps $R rc $?"; grep -E "64x16 " "$w/rows_w$R.txt" | cut -c1-110
done
echo "t $(( $(date +%s) - s )) s"
st=""; for r in barrier branch_resolving dispatch_stall drain imc_miss lg_throttle long_scoreboard math_pipe_throttle membar mio_throttle misc no_instruction not_selected selected short_scoreboard sleeping tex_throttle wait; do st="$st,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"; done
timeout 200 ncu --kernel-name regex:rows_direct --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section InstructionStats --section LaunchStats --section Occupancy --metrics "${st#,},smsp__inst_executed_pipe_fp64.sum,smsp__inst_executed_pipe_lsu.sum,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum" $B --n 16 --shape tall --precision double --gib 0.25 --no-baseline --no-variable --repeat 1 > "$w/ncu_rows_64x16.txt" 2>&1; echo "ncu rc $?"
grep -E "Duration|Issued Ipc|Warp Cycles Per Issued|Registers Per|Achieved Active|stalled|pipe_fp64|pipe_lsu|inst_executed.sum|wavefronts|bank_conflicts|Memory Throughput|Compute \(SM\)" "$w/ncu_rows_64x16.txt" | head -50
echo "t $(( $(date +%s) - s )) s"
