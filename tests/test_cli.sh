#!/usr/bin/env bash
# The gpuqr tool end to end (CPU backend): the demo problem solves accurately, options work,
# and bad input gives the documented messages and exit codes.
#   bash tests/test_cli.sh <path to gpuqr> <source dir>
set -uo pipefail
gpuqr="$1"
src="$2"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/gpuqr_cli.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect <want exit code> <pattern in stdout+stderr> -- args...
expect() {
  local want="$1" pattern="$2"
  shift 3
  local out rc
  out="$("$gpuqr" "$@" 2>&1)"
  rc=$?
  if [ "$rc" -ne "$want" ]; then fail "gpuqr $* exited $rc, want $want"$'\n'"$out"; return; fi
  if ! grep -qE -- "$pattern" <<<"$out"; then fail "gpuqr $*: no /$pattern/ in"$'\n'"$out"; fi
}

# A relative error printed as 1.234e-05: is it below the bound?
error_below() {
  local line value
  line="$("$gpuqr" "${@:2}" 2>&1 | grep 'x_true||_2 /')" || { fail "gpuqr ${*:2}: no error line"; return; }
  value="$(awk '{print $NF}' <<<"$line")"
  awk -v v="$value" -v b="$1" 'BEGIN { exit !(v < b) }' || fail "gpuqr ${*:2}: error $value >= $1"
}

# The optimality ratio ||A^T r|| / (||A|| ||r||) printed as 1.234e-05: is it below the bound?
optimality_below() {
  local line value
  line="$("$gpuqr" "${@:2}" 2>&1 | grep '||A^T r||_2 /')" || { fail "gpuqr ${*:2}: no optimality line"; return; }
  value="$(awk '{print $NF}' <<<"$line")"
  awk -v v="$value" -v b="$1" 'BEGIN { exit !(v < b) }' || fail "gpuqr ${*:2}: optimality $value >= $1"
}

m="$src/data/matrices"
expect 0 'gpuqr [0-9]' -- --version
expect 0 'usage: gpuqr <command>' -- --help
expect 0 'usage: gpuqr lstsq' -- lstsq --help
expect 0 'usage: gpuqr info' -- info --help
expect 0 'CPU context +cpu' -- info
# Sparse files on the CPU: sparse multifrontal QR (COLAMD, or the natural ordering with a note
# in a build without SuiteSparse); --dense densifies; --verbose prints the analysis.
expect 0 'method +sparse multifrontal QR \(CPU\), (COLAMD|natural column ordering)' -- lstsq "$m/ash219.mtx" --backend cpu
expect 0 'sparse input densified \(--dense\)' -- lstsq "$m/ash219.mtx" --backend cpu --dense
expect 0 'fronts +[0-9]+ \(largest [0-9]+ x [0-9]+\)' -- lstsq "$m/ash219.mtx" --backend cpu --verbose
expect 0 'nnz\(R\) +[0-9]+' -- lstsq "$m/ash219.mtx" --backend cpu --verbose
expect 0 'sparse multifrontal' -- lstsq "$m/lp_e226_transposed.mtx" --backend cpu --precision single
error_below 1e-13 lstsq "$m/ash219.mtx" --backend cpu --dense
# In single precision the default tolerance, 20 (m + n) eps_float max ||A(:, j)|| = 2.85, drops
# about 160 of lp_e226^T's badly scaled columns (rank 61 with COLAMD, 59 with the natural
# ordering of a build without SuiteSparse): a basic solution.
expect 0 'rank +(59|61) of 223' -- lstsq "$m/lp_e226_transposed.mtx" --backend cpu --precision single --repeat 2
# Rank deficient on the sparse path: rank detection, the basic solution, exit 0. (Column 1 is
# empty: rank 2 of 3, column 1 dropped; the dense path finds R(1, 1) exactly zero: exit 1.)
printf '%%%%MatrixMarket matrix coordinate real general\n5 3 5\n1 1 1\n2 1 2\n3 3 1\n4 3 1\n5 1 1\n' > "$tmp/sd.mtx"
expect 0 'rank +2 of 3 \(tolerance' -- lstsq "$tmp/sd.mtx" --backend cpu
expect 0 'dropped columns +1 \(1; indices from 0\): x is the basic solution' -- lstsq "$tmp/sd.mtx" --backend cpu
expect 1 'R\(1, 1\) is exactly zero' -- lstsq "$tmp/sd.mtx" --backend cpu --dense
printf '%%%%MatrixMarket matrix array real general\n5 1\n1\n2\n3\n4\n5\n' > "$tmp/b5.mtx"
expect 0 'rank +2 of 3' -- lstsq "$tmp/sd.mtx" "$tmp/b5.mtx" --backend cpu --precision single
# A shipped rank-deficient matrix (Ragusa16, 24 x 24, numerical rank 18: column 0 is zero)
# with a b outside range(A): the printed rank, 6 dropped columns, and an optimal x:
# ||A^T r|| / (||A|| ||r||) at rounding level (the dropped columns have norm <= tol).
{ printf '%%%%MatrixMarket matrix array real general\n24 1\n'; for i in $(seq 1 24); do echo "$i"; done; } > "$tmp/b24.mtx"
expect 0 'rank +18 of 24 \(tolerance' -- lstsq "$m/Ragusa16.mtx" "$tmp/b24.mtx" --backend cpu
expect 0 'dropped columns +6 \(0, ' -- lstsq "$m/Ragusa16.mtx" "$tmp/b24.mtx" --backend cpu --verbose
expect 0 'nnz\(R\) +[0-9]+' -- lstsq "$m/Ragusa16.mtx" "$tmp/b24.mtx" --backend cpu --verbose
optimality_below 1e-12 lstsq "$m/Ragusa16.mtx" "$tmp/b24.mtx" --backend cpu
optimality_below 1e-5 lstsq "$m/Ragusa16.mtx" "$tmp/b24.mtx" --backend cpu --precision single
expect 2 'option --dense takes no value' -- lstsq "$m/ash219.mtx" --dense=1
expect 0 '219 x 85, coordinate pattern general, 438 nonzeros' -- lstsq "$m/ash219.mtx" --backend cpu
error_below 1e-13 lstsq "$m/ash219.mtx" --backend cpu
error_below 1e-5 lstsq "$m/ash219.mtx" --backend cpu --precision single
error_below 1e-11 lstsq "$m/lp_e226_transposed.mtx" --backend cpu
expect 0 'best of 3' -- lstsq "$m/ash219.mtx" --backend cpu --repeat 3
expect 0 'x written to' -- lstsq "$m/ash219.mtx" --backend cpu -o "$tmp/x.mtx"
head -1 "$tmp/x.mtx" | grep -q '%%MatrixMarket matrix array real general' || fail "x.mtx header"

# Errors: exit 1 with the message; usage: exit 2.
expect 1 "gpuqr: error: .*cannot open '$tmp/nope.mtx'" -- lstsq "$tmp/nope.mtx"
printf '%%%%MatrixMarket matrix array real general\n3 2\n1\n2\nabc\n4\n5\n6\n' > "$tmp/bad.mtx"
expect 1 'gpuqr: error: .*bad.mtx:5: ' -- lstsq "$tmp/bad.mtx"
expect 1 'fewer rows than columns \(m < n\)' -- lstsq "$m/lp_e226.mtx"
expect 1 'b must be 472 x 1' -- lstsq "$m/lp_e226_transposed.mtx" "$m/ash219.mtx"
expect 1 'complex is not supported yet' -- lstsq "$m/c32.mtx"
expect 1 'exactly zero' -- lstsq "$m/Ragusa16.mtx" --backend cpu --dense
expect 2 "unknown option '--frob'" -- lstsq "$m/ash219.mtx" --frob
expect 2 "unknown command 'frob'" -- frob
expect 2 "unknown backend 'gpu'" -- lstsq "$m/ash219.mtx" --backend gpu
expect 2 "unknown precision 'half'" -- lstsq "$m/ash219.mtx" --precision half
expect 2 'missing the matrix file' -- lstsq

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all gpuqr CLI checks passed"
