#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Negative controls for the memory and coverage gates: the valgrind gate (.make/valgrind.sh,
# make valgrind) passes a clean TAP program and fails one that reads uninitialised memory or
# leaks; the sanitizer flags of make sanitize turn a heap overflow into a failed test; the
# coverage gate (.make/coverage.py, make coverage) fails when there is no coverage data.
set -uo pipefail
cd "$(dirname "$0")/../.."
CC=${CC:-gcc}
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/clean.c" <<'C'
#include <stdio.h>
int main(void) { puts("ok 1 - clean"); puts("1..1"); return 0; }
C
cat >"$work/uninit.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    (void)argv;
    int *p = malloc(4 * sizeof(int));
    if (p == NULL) return 1;
    if (p[argc] > 3) puts("# big"); /* reads memory never written */
    free(p);
    puts("ok 1 - uninit");
    puts("1..1");
    return 0;
}
C
cat >"$work/leak.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
static void *volatile keep;
static void lose(void)
{
    for (int i = 0; i < 16; i++) {
        keep = malloc(64); /* each overwrites the only pointer to the one before */
    }
    keep = NULL;
}
int main(void)
{
    lose();
    puts("ok 1 - leak");
    puts("1..1");
    return 0;
}
C
cat >"$work/overflow.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    (void)argv;
    char *p = malloc(8);
    if (p == NULL) return 1;
    p[7 + argc] = 1; /* one past the end */
    free(p);
    puts("ok 1 - overflow");
    puts("1..1");
    return 0;
}
C
for p in clean uninit leak; do
  "$CC" -g -O0 -o "$work/t_$p" "$work/$p.c" 2>>"$work/cc.log"
done
out=$(OUT="$work/out-clean" bash .make/valgrind.sh "$work/t_clean" 2>&1)
tap "$([ $? = 0 ] && echo "$out" | grep -q 'valgrind: 1 programs, 0 with memcheck errors'; echo $?)" \
    "valgrind gate: a clean program passes"
out=$(OUT="$work/out-uninit" bash .make/valgrind.sh "$work/t_uninit" 2>&1)
tap "$([ $? != 0 ] && echo "$out" | grep -q '1 with memcheck errors'; echo $?)" \
    "negative control: valgrind gate fails on a read of uninitialised memory"
out=$(OUT="$work/out-leak" bash .make/valgrind.sh "$work/t_leak" 2>&1)
tap "$([ $? != 0 ] && echo "$out" | grep -q '1 with memcheck errors'; echo $?)" \
    "negative control: valgrind gate fails on a definite leak"

# the flags make sanitize builds with (Makefile SANITIZE_FLAGS)
flags=$(sed -n 's/^SANITIZE_FLAGS := //p' Makefile)
"$CC" -g -O1 $flags -o "$work/t_overflow" "$work/overflow.c" 2>>"$work/cc.log"
out=$(OUT="$work/out-asan" bash .make/run-tests.sh "$work/t_overflow" 2>&1)
tap "$([ $? != 0 ] && [ -n "$flags" ] && echo "$out" | tail -n 1 | grep -q '0 passed, 1 failed'; echo $?)" \
    "negative control: a heap overflow built with make sanitize's flags fails its test"

mkdir -p "$work/no-coverage"
out=$("${PYTHON:-/usr/bin/python3}" .make/coverage.py "$work/no-coverage" 2>&1)
rc=$?
tap "$([ $rc != 0 ] && echo "$out" | tail -n 1 | grep -q '^coverage: lines 0.0% branches'; echo $?)" \
    "negative control: make coverage's gate fails without coverage data"
echo "1..$n"
exit $failed
