#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every fuzz target builds (make fuzz-build: clang, libFuzzer, ASan + UBSan) and runs once over
# each of its seeds without a finding, so a harness that no longer compiles, links or passes
# its own seeds fails `make test` instead of going unnoticed until someone runs `make fuzz`.
# The set of targets is exact: tests/fuzz/check_targets.py holds the tree to tests/fuzz/targets.txt
# (a lost target, an unlisted one, or a parser of untrusted bytes without a target fails), with
# negative controls on a copy of the tree.
# Negative controls: .make/fuzz.sh must report a harness that crashes on a seed, one that has
# no seeds, and one whose crash only fuzzing finds.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=${BUILD_DIR:-build}
PYTHON=${PYTHON:-/usr/bin/python3}
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A fresh make: this script may run inside `make test` of another variant (sanitize,
# coverage), whose command-line variables must not reach the fuzz build.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -j2 BUILD_DIR="$BUILD_DIR" \
  fuzz-build >"$work/build.log" 2>&1
rc=$?
tail -n 20 "$work/build.log" | grep -E 'error|Error' | sed 's/^/# /'
tap "$rc" "make fuzz-build builds every target"

# The targets, exactly as tests/fuzz/targets.txt lists them (check_targets.py: every fuzz_*.c is
# listed and every listed one exists, calls its parsers and has seeds; every parser of untrusted
# bytes in the headers has a target or a stated reason; tests/README.md's table agrees).
out=$("$PYTHON" tests/fuzz/check_targets.py 2>&1)
st=$?
echo "$out" | grep -v '^[a-z0-9_]*$' | sed 's/^/# /'
mapfile -t targets < <(echo "$out" | grep -E '^[a-z0-9_]+$')
tap "$([ "$st" = 0 ] && [ "${#targets[@]}" -gt 0 ]; echo $?)" \
    "${#targets[@]} fuzz targets, exactly those of tests/fuzz/targets.txt, every parser accounted for"

bins=()
for t in "${targets[@]}"; do
  name=fuzz_$t
  bin="$BUILD_DIR/host-fuzz/fuzz/$name"
  bins+=("$bin")
  out=$(bash .make/fuzz.sh --seeds "$bin" 2>&1)
  st=$?
  echo "$out" | sed 's/^/# /'
  seeds=$(find "tests/fuzz/corpus/${name#fuzz_}" -type f 2>/dev/null | wc -l)
  tap "$([ "$st" = 0 ] && [ "$seeds" -gt 0 ] &&
        echo "$out" | grep -q "^fuzz ${name#fuzz_}: $seeds executions, 0 crashes"; echo $?)" \
      "${name#fuzz_}: every one of its $seeds seeds runs, no finding"
done
# Negative controls of the list check, on a copy of what it reads: losing a target, a fuzz
# source the list does not know, a new parser in a header, an entry the target never calls,
# a target without seeds, a README table that disagrees.
copy() {
  rm -rf "$work/tree"; mkdir -p "$work/tree"
  find tests/fuzz sdk port/include host-sim/collector host-sim/mech host-sim/sim/scenario host-sim/aggregator tests/support \
    tests/README.md \
    \( -path 'tests/fuzz/*' -o -name '*.h' -o -name README.md \) -type f -print0 |
    xargs -0 cp --parents -t "$work/tree"
}
control() { # what-it-shows expected-message
  out=$("$PYTHON" tests/fuzz/check_targets.py "$work/tree" 2>&1)
  tap "$([ $? != 0 ] && echo "$out" | grep -qF "$2"; echo $?)" "negative control: $1 fails the list check"
}
copy
tap "$("$PYTHON" tests/fuzz/check_targets.py "$work/tree" >/dev/null 2>&1; echo $?)" \
    "the copy the negative controls start from passes the list check"
rm "$work/tree/tests/fuzz/fuzz_memo.c"
control "losing a target's source" "target memo: no tests/fuzz/fuzz_memo.c"
copy
cp "$work/tree/tests/fuzz/fuzz_report.c" "$work/tree/tests/fuzz/fuzz_extra.c"
control "a fuzz source the list does not know" "fuzz_extra.c is not a target"
copy
printf 'dpm_status_t dpm_thing_decode(const uint8_t *buf, size_t len);\n' \
  >>"$work/tree/sdk/include/dpm/expert/report.h"
control "a new parser without a target" "parser dpm_thing_decode"
copy
sed -i 's/dpm_report_decode(/dpm_report_decode_not(/g' "$work/tree/tests/fuzz/fuzz_report.c"
control "a target that no longer calls its parser" "fuzz_report.c never calls dpm_report_decode"
copy
rm -rf "$work/tree/tests/fuzz/corpus/ledger"
control "a target without seeds" "target ledger: no seeds"
copy
sed -i '/^| `outbox` | outbox region bytes/d' "$work/tree/tests/README.md"
control "a README fuzz table without one of the targets" "tests/README.md's fuzz table"

# Negative controls, built with the same toolchain: a target that aborts on inputs starting
# with "boom".
mkdir -p "$work/bin" "$work/corpus/canary" "$work/corpus/empty"
cat >"$work/canary.c" <<'C'
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    if (n >= 4 && memcmp(d, "boom", 4) == 0) {
        abort();
    }
    return 0;
}
C
clang -g -fsanitize=fuzzer,address "$work/canary.c" -o "$work/bin/fuzz_canary" 2>"$work/cc.log"
tap $? "the canary target builds"
cp "$work/bin/fuzz_canary" "$work/bin/fuzz_empty"
printf 'fine' >"$work/corpus/canary/a"
printf 'boom' >"$work/corpus/canary/b"
out=$(FUZZ_CORPUS="$work/corpus" bash .make/fuzz.sh --seeds "$work/bin/fuzz_canary" 2>&1)
st=$?
tap "$([ "$st" != 0 ] && echo "$out" | grep -q '^fuzz canary: .* 1 crashes'; echo $?)" \
    "negative control: a seed that crashes fails the run and is counted"
out=$(FUZZ_CORPUS="$work/corpus" bash .make/fuzz.sh --seeds "$work/bin/fuzz_empty" 2>&1)
tap "$([ $? != 0 ]; echo $?)" "negative control: a target without seeds fails the run"
rm "$work/corpus/canary/b"
out=$(FUZZ_CORPUS="$work/corpus" FUZZ_SECONDS=20 bash .make/fuzz.sh "$work/bin/fuzz_canary" 2>&1)
st=$?
echo "$out" | head -n 3 | sed 's/^/# /'
tap "$([ "$st" != 0 ] && echo "$out" | grep -qE '^fuzz canary: [1-9][0-9]* executions, 1 crashes'; echo $?)" \
    "negative control: fuzzing finds the crash no seed shows, and fails"
echo "1..$n"
exit $failed
