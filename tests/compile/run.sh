#!/usr/bin/env bash
# The stack must build freestanding exactly as seed 001's "compilation test"
# says (C89 and C++98, -m32, no libc, no headers), and as a normal optimised
# 64-bit object with gcc and clang.
set -u
cd "$(dirname "$0")"
out=${BUILD_DIR:-../../build/tests/compile}
mkdir -p "$out"
pass=0; fail=0
check() { # name, command...
  local name=$1; shift
  if "$@" >"$out/log" 2>&1; then echo "ok - $name"; pass=$((pass + 1));
  else echo "not ok - $name"; grep -v "entry symbol _start" "$out/log" | head -n 20; fail=$((fail + 1)); fi
}
stubs="stub.c"
# the seed's own stub, taken from the specification when it is beside the repository
seed=../../../shared/seeds/001_dc1b3bfa916a8932.txt
if [ -f "$seed" ]; then
  python3 - "$seed" "$out/seed_stub.c" "$PWD/../../stack/main.c" <<'PY'
import sys
s = open(sys.argv[1], encoding="utf-8").read()
i = s.index("## compilation test"); a = s.index("```c", i) + 5; b = s.index("```", a)
open(sys.argv[2], "w").write(s[a:b].replace('#include "main.c"', '#include "' + sys.argv[3] + '"'))
PY
  stubs="$stubs $out/seed_stub.c"
fi
for s in $stubs; do
  n=$(basename "$s" .c)
  check "$n: gcc -m32 -std=c89 freestanding" gcc -Werror -Wextra -Wall -pedantic -m32 -std=c89 -nostartfiles -nodefaultlibs -nostdlib -nostdinc "$s" -o "$out/$n.c89"
  check "$n: g++ -m32 -std=c++98 freestanding" g++ -Werror -Wextra -Wall -pedantic -m32 -std=c++98 -nostartfiles -nodefaultlibs -nostdlib -nostdinc -x c++ "$s" -o "$out/$n.cxx98"
  check "$n: gcc -O2 64-bit" gcc -O2 -Wall -Wextra -Werror -c "$s" -o "$out/$n.o"
  if command -v clang >/dev/null; then
    check "$n: clang -O2 64-bit" clang -O2 -Wall -Wextra -Werror -c "$s" -o "$out/$n.clang.o"
  fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
