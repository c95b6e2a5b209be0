#!/usr/bin/env bash
# Smoke test of gpuqr_tester: a tiny CPU case set must pass, print the summary line, and write
# one valid JSON object per case with the documented keys.
# Usage: test_bench.sh /path/to/gpuqr_tester
set -u

tester="${1:?usage: test_bench.sh /path/to/gpuqr_tester}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

fail() {
  echo "test_bench: FAIL: $*" >&2
  echo "---- tester output ----" >&2
  cat "$tmp/out.txt" >&2 2>/dev/null
  exit 1
}

# 2 precisions x 4 operations x 2 sizes = 16 cases, all checked against LAPACK.
"$tester" --backend cpu --baseline lapack --dim 64,100x40 --op all --precision d,s \
  --repeat 2 --warmup 1 --json "$tmp/out.jsonl" >"$tmp/out.txt" 2>&1
rc=$?
[ "$rc" -eq 0 ] || fail "exit code $rc (expected 0)"
grep -qx "16 passed, 0 failed" "$tmp/out.txt" || fail "no '16 passed, 0 failed' summary line"
grep -q "^op " "$tmp/out.txt" || fail "no header line"

python3 - "$tmp/out.jsonl" <<'EOF' || fail "JSON output"
import json, sys
keys = {"op", "m", "n", "precision", "backend", "device", "time_ms", "gflops", "baseline",
        "baseline_time_ms", "baseline_gflops", "speedup", "error", "orth", "baseline_error",
        "baseline_orth", "status"}
lines = [l for l in open(sys.argv[1]) if l.strip()]
assert len(lines) == 16, f"{len(lines)} JSON lines, expected 16"
seen = set()
for line in lines:
    row = json.loads(line)
    missing = keys - row.keys()
    assert not missing, f"missing keys {sorted(missing)} in {line}"
    assert row["status"] == "pass", f"status {row['status']} in {line}"
    assert row["backend"] == "cpu" and row["baseline"] == "lapack", line
    assert row["time_ms"] > 0 and row["gflops"] > 0 and row["baseline_time_ms"] > 0, line
    assert 0 <= row["error"] < 30 and 0 <= row["baseline_error"] < 30, line
    if row["op"] in ("geqrf", "orgqr"):
        assert 0 <= row["orth"] < 30 and 0 <= row["baseline_orth"] < 30, line
    seen.add((row["op"], row["m"], row["n"], row["precision"]))
assert len(seen) == 16, f"{len(seen)} distinct cases"
EOF

# --host-data is accepted (on the CPU it changes nothing; on CUDA the matrices are staged).
"$tester" --backend cpu --baseline lapack --dim 50 --op geqrf --repeat 1 --warmup 0 \
  --host-data >"$tmp/host.txt" 2>&1 || fail "--host-data run failed"
grep -qx "1 passed, 0 failed" "$tmp/host.txt" || fail "--host-data: no '1 passed' line"

# A bad option is a usage error (exit 2), not a crash.
"$tester" --no-such-option >"$tmp/bad.txt" 2>&1
rc=$?
[ "$rc" -eq 2 ] || fail "exit code $rc for a bad option (expected 2)"

echo "test_bench: OK"
