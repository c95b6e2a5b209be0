#!/usr/bin/env bash
# Session 20, fifth call: the AH step with less shared memory (75 KB FP64: C read straight
# from global memory, block 0's b x b arrays sharing a region with W and Y). Its twin test and
# memcheck, kernel durations by ncu (geqrf 1024 FP64 with and without the step), then geqrf
# 1024 / 4096 against cuSOLVER: step on / off, with and without look-ahead, clusters of 4,
# the main lane's GEMMs on 112 SMs (GPUQR_GEMM_SMS).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" gpuqr_tests gpuqr_tester
timeout 120 $b/tests/gpuqr_tests --gtest_filter='*PanelQrUpdateStep*:*BlockedQR*:-*cpu*' > "$w/tests_step.log" 2>&1; echo "step tests rc $?"
grep -E "^\[  (PASSED|FAILED) |FAILED  \]|Failure" "$w/tests_step.log" | head -10
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $b/tests/gpuqr_tests --gtest_filter='*PanelQrUpdateStep*cuda_double' > "$w/san_memcheck.log" 2>&1; echo "memcheck rc $?"; grep -E "ERROR SUMMARY" "$w/san_memcheck.log" | head -2
stamp
T=$b/bench/gpuqr_tester
for v in 1 0; do
  GPUQR_AH_STEP=$v timeout 120 ncu --metrics gpu__time_duration.sum --csv $T --backend cuda --baseline none --op geqrf --precision d --dim 1024 --repeat 1 --warmup 0 --no-check > "$w/ncu_step$v.csv" 2>&1; echo "ncu step=$v rc $?"
done
python3 - "$w" <<'PY'
import csv, sys, collections, os
for v in (1, 0):
    path = os.path.join(sys.argv[1], f"ncu_step{v}.csv")
    rows = [l for l in open(path) if l.startswith('"')]
    tot = collections.defaultdict(float); cnt = collections.Counter()
    for r in csv.DictReader(rows):
        try: val = float(r["Metric Value"].replace(",", ""))
        except Exception: continue
        name = r["Kernel Name"].split("(")[0][:60]
        tot[name] += val; cnt[name] += 1
    print(f"step={v}: total {sum(tot.values())/1e3:.1f} us over {sum(cnt.values())} kernels")
    for name, t in sorted(tot.items(), key=lambda x: -x[1])[:12]:
        print(f"  {t/1e3:9.1f} us  {cnt[name]:4d}  {t/cnt[name]/1e3:7.2f} us each  {name}")
PY
stamp
run() { env "$@" timeout 60 $T --backend cuda --baseline cusolver --op geqrf --precision d,s --dim 1024,4096 --repeat 5 --warmup 2 > "$w/t.txt" 2>&1; echo "[$*] $(grep -E '^geqrf ' $w/t.txt | awk '{printf "%s%s %s/%s=%s  ", $2, $5, $8, $11, $13}')"; cat "$w/t.txt" >> "$w/tester_all.txt"; }
run GPUQR_AH_STEP=0
run GPUQR_AH_STEP=1
run GPUQR_AH_STEP=0 GPUQR_LOOKAHEAD=0
run GPUQR_AH_STEP=1 GPUQR_LOOKAHEAD=0
run GPUQR_AH_STEP=1 GPUQR_AH_STEP_CLUSTER=4
run GPUQR_AH_STEP=0 GPUQR_GEMM_SMS=112
run GPUQR_AH_STEP=1 GPUQR_GEMM_SMS=112
stamp
