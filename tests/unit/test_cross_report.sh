#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make cross's summary (.make/cross-report.sh) counts honestly: "<target>: N passed, N failed,
# N skipped" per target and the sum last, a skip counted as skipped (never passed), and a test
# without a result, a failed build or a target with no tests counted as a failure. Fed with the
# output of .make/run-tests.sh over fake suites, as make cross produces it.
set -uo pipefail
cd "$(dirname "$0")/../.."
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'echo "ok 1 - a"; echo "ok 2 - b # SKIP no tool"; echo "1..2"\n' >"$work/t_skip.sh"
printf 'echo "ok 1 - a"; echo "ok 2 - b"; echo "1..2"\n' >"$work/t_good.sh"
printf 'echo "ok 1 - a"; echo "not ok 2 - b"; echo "1..2"; exit 1\n' >"$work/t_fail.sh"
log="$work/log"
# target <name> <test>...: run each test as cross.sh does and list it
target() {
  local name=$1; shift
  mkdir -p "$log/$name/results"
  : >"$log/$name/tests.list"
  for t in "$@"; do
    echo "$t" >>"$log/$name/tests.list"
    env -u CI OUT="$log/$name" bash .make/run-tests.sh "$t" \
      >"$log/$name/results/$(basename "$t").out" 2>&1
  done
}
report() { bash .make/cross-report.sh "$log" "$@" >"$work/out" 2>&1; }

target a "$work/t_good.sh" "$work/t_skip.sh"
target b "$work/t_skip.sh"
report a b
st=$?
tap "$([ $st = 0 ] && [ "$(grep -x 'a: 3 passed, 0 failed, 1 skipped' "$work/out")" ] &&
       [ "$(grep -x 'b: 1 passed, 0 failed, 1 skipped' "$work/out")" ] &&
       [ "$(tail -n 1 "$work/out")" = "4 passed, 0 failed, 2 skipped" ]; echo $?)" \
    "per target and summed: skips counted as skipped, not passed, exit 0"
sed 's/^/# /' "$work/out"

target c "$work/t_good.sh" "$work/t_fail.sh"
report a c
st=$?
tap "$([ $st != 0 ] && grep -qx 'c: 3 passed, 1 failed, 0 skipped' "$work/out" &&
       [ "$(tail -n 1 "$work/out")" = "6 passed, 1 failed, 1 skipped" ]; echo $?)" \
    "negative control: a failing test fails the sum and the exit status"

# a result line in another format (e.g. the old "N passed, N failed") is no result
target d "$work/t_good.sh"
sed -i -E 's/^([0-9]+ passed, [0-9]+ failed), [0-9]+ skipped$/\1/' "$log/d/results/t_good.sh.out"
report d
st=$?
tap "$([ $st != 0 ] && grep -q 'd  t_good.sh: no result' "$work/out" &&
       [ "$(tail -n 1 "$work/out")" = "0 passed, 1 failed, 0 skipped" ]; echo $?)" \
    "negative control: a test without a 'N passed, N failed, N skipped' line fails"

target e "$work/t_good.sh"
rm "$log/e/results/t_good.sh.out"
report e
tap "$([ $? != 0 ] && grep -q 'e  t_good.sh: no result' "$work/out"; echo $?)" \
    "negative control: a listed test that left no output fails"

mkdir -p "$log/f"; : >"$log/f/build-failed"
report a f
st=$?
tap "$([ $st != 0 ] && grep -qx 'f: 0 passed, 1 failed, 0 skipped' "$work/out"; echo $?)" \
    "negative control: a target whose build failed counts one failure"

target g
report g
tap "$([ $? != 0 ] && grep -qx 'g: 0 passed, 1 failed, 0 skipped' "$work/out"; echo $?)" \
    "negative control: a target that ran no test fails"

report
tap "$([ $? != 0 ]; echo $?)" "negative control: no target at all fails"
echo "1..$n"
exit $failed
