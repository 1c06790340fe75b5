#!/usr/bin/env bash
# Runs every test suite (tests/*/run.sh, in name order) and prints the total.
# Each suite builds what it needs, prints one line per check and ends with
# "N passed, N failed" (optionally ", N skipped"); its exit status is non-zero
# when something failed. Select suites with SUITES="unit loop" (folder names).
set -u
cd "$(dirname "$0")/.."
total_pass=0; total_fail=0; total_skip=0; failed_suites=""
suites=${SUITES:-$(for d in tests/*/; do [ -x "$d/run.sh" ] && basename "$d"; done)}
for s in $suites; do
  echo "=== suite $s"
  log=$(mktemp)
  start=$(date +%s)
  bash "tests/$s/run.sh" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  line=$(grep -E '^([A-Za-z]+: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
  rm -f "$log"
  p=$(echo "$line" | sed -nE 's/.*\b([0-9]+) passed.*/\1/p'); p=${p:-0}
  f=$(echo "$line" | sed -nE 's/.* ([0-9]+) failed.*/\1/p'); f=${f:-0}
  k=$(echo "$line" | sed -nE 's/.* ([0-9]+) skipped.*/\1/p'); k=${k:-0}
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi   # a suite that crashed counts as a failure
  [ "$f" -ne 0 ] && failed_suites="$failed_suites $s"
  total_pass=$((total_pass + p)); total_fail=$((total_fail + f)); total_skip=$((total_skip + k))
  echo "=== suite $s: $p passed, $f failed, $k skipped ($(( $(date +%s) - start )) s)"
done
[ -n "$failed_suites" ] && echo "failed suites:$failed_suites"
echo "total: $total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ]
