#!/usr/bin/env bash
# Packet-level unit tests: every tests/unit/test_*.c is built against the
# stack with AddressSanitizer and UndefinedBehaviorSanitizer and run.
set -u
cd "$(dirname "$0")"
out=${BUILD_DIR:-../../build/tests/unit}
mkdir -p "$out"
CC=${CC:-gcc}
CFLAGS="-g -O1 -Wall -Wextra -Werror -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
pass=0; fail=0
for src in test_*.c; do
  bin="$out/${src%.c}"
  if ! $CC $CFLAGS "$src" -o "$bin"; then
    echo "not ok - build $src"; fail=$((fail + 1)); continue
  fi
  log=$(mktemp)
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 "$bin" >"$log" 2>&1
  rc=$?
  cat "$log"
  p=$(sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\1/p' "$log" | tail -n1); p=${p:-0}
  f=$(sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\2/p' "$log" | tail -n1); f=${f:-0}
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then echo "not ok - $src exited with $rc"; f=1; fi
  rm -f "$log"
  pass=$((pass + p)); fail=$((fail + f))
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
