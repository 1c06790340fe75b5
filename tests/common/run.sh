#!/usr/bin/env bash
# Tests for io/common (software RSS, core lists) and apps/linux_baseline
# (the Linux epoll benchmark server and client).  Prints one line per check
# and ends with "N passed, N failed"; exit status non-zero on any failure.
# The baseline test runs on the loopback of a network namespace it creates
# (iipt-lb-<pid>) and removes on exit.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(mktemp -d /tmp/iipt-common.XXXXXX)
pass=0; fail=0

record() { # record <0|1 ok> <description>
  if [ "$1" -eq 1 ]; then echo "PASS: $2"; pass=$((pass + 1)); else echo "FAIL: $2"; fail=$((fail + 1)); fi
}

# Runs a check binary and adds its PASS/FAIL lines to the totals; a binary
# that dies before reporting counts as one failure.
run_checks() { # run_checks <name> <binary>
  local out rc p f
  out=$("$2" 2>&1); rc=$?
  echo "$out"
  p=$(grep -c '^PASS: ' <<<"$out"); f=$(grep -c '^FAIL: ' <<<"$out")
  pass=$((pass + p)); fail=$((fail + f))
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then record 0 "$1 exited with status $rc without reporting a failure"; fi
}

CFLAGS="-std=gnu11 -O2 -Wall -Wextra -Werror"
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all"
for t in test_rss test_corelist test_latency_hist test_arp_cache; do
  if gcc $CFLAGS $SAN -o "$build/$t" "$here/$t.c" 2>"$build/$t.cc.log"; then
    record 1 "build $t (gcc $CFLAGS, ASan+UBSan)"
    run_checks "$t" "$build/$t"
  else
    cat "$build/$t.cc.log"; record 0 "build $t"
  fi
done

if [ -f "$here/baseline.sh" ]; then
  source "$here/baseline.sh"
fi

rm -rf "$build"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
