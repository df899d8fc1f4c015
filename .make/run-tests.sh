#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run-tests.sh TEST...  Runs every test program and script, each printing TAP ("ok N - name" /
# "not ok N - name"), and prints one summary line per suite and, last, "N passed, N failed".
# A suite that exits non-zero without reporting a failure (a crash, an abort) counts as one
# failed test. Exit status: 0 only if nothing failed. TEST_RUNNER (e.g. "qemu-arm", or a
# qemu-system-arm command line ending in -kernel) runs the compiled programs of a cross build.
set -uo pipefail
export CMOCKA_MESSAGE_OUTPUT=TAP
total_pass=0 total_fail=0
logdir=${OUT:-build/host}/test-logs
mkdir -p "$logdir"
for t in "$@"; do
  name=$(basename "$t")
  log="$logdir/$name.log"
  start=$(date +%s.%N)
  case "$t" in
    *.sh) bash "$t" >"$log" 2>&1 ;;
    *.py) "${PYTHON:-/usr/bin/python3}" "$t" >"$log" 2>&1 ;;
    *) ${TEST_RUNNER:-} "$t" >"$log" 2>&1 ;;
  esac
  rc=$?
  pass=$(grep -cE '^ok [0-9]+' "$log")
  fail=$(grep -cE '^not ok [0-9]+' "$log")
  if [ "$rc" -ne 0 ] && [ "$fail" -eq 0 ]; then
    fail=1
    echo "not ok - $name exited with status $rc without reporting a failure" >>"$log"
  fi
  secs=$(printf '%.1f' "$(echo "$(date +%s.%N) - $start" | bc)")
  printf '%-28s %4d passed, %d failed  (%ss)\n' "$name" "$pass" "$fail" "$secs"
  if [ "$fail" -ne 0 ]; then
    grep -E '^not ok|^# |error|Error|failure' "$log" | head -n 20 | sed 's/^/    /'
  fi
  total_pass=$((total_pass + pass))
  total_fail=$((total_fail + fail))
done
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
