#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# cross-report.sh LOG TARGET...  (the end of make cross) Sums each target's test results.
# For each TARGET, LOG/TARGET/ holds either "build-failed" (counts one failure) or "tests.list"
# (the tests run there, one a line; an empty list is a failure) and results/<test>.out, the
# output of .make/run-tests.sh for that test. Prints every suite's line prefixed with its target,
# then "<target>: N passed, N failed, N skipped" per target and the sum "N passed, N failed,
# N skipped" last. A skip counts as skipped, never as passed; a test whose output lacks
# run-tests.sh's summary line (missing, crashed runner, another format) counts one failure.
# Writes LOG/TARGET.times (each test's seconds: cross.sh starts the slowest first next time).
# Exit status 0 only if nothing failed.
set -uo pipefail
LOG=$1; shift
[ $# -gt 0 ] || { echo "cross-report: no target"; exit 1; }
SUMMARY='^([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$'
total_pass=0 total_fail=0 total_skip=0 lines=()
for name in "$@"; do
  pass=0 fail=0 skip=0
  if [ -e "$LOG/$name/build-failed" ] || [ ! -f "$LOG/$name/tests.list" ]; then
    fail=1
  else
    : >"$LOG/$name.times"
    while read -r test; do
      [ -n "$test" ] || continue
      out="$LOG/$name/results/$(basename "$test").out"
      last=$(grep -E "$SUMMARY" "$out" 2>/dev/null | tail -n1)
      if [[ ! $last =~ $SUMMARY ]]; then
        echo "  $name  $(basename "$test"): no result"; fail=$((fail + 1)); continue
      fi
      pass=$((pass + BASH_REMATCH[1]))
      fail=$((fail + BASH_REMATCH[2]))
      skip=$((skip + BASH_REMATCH[3]))
      grep -vE "$SUMMARY" "$out" | sed "s/^/  $name  /"
      secs=$(sed -nE 's/.*\(([0-9.]+)s(, [0-9.]+s CPU)?\)$/\1/p' "$out" | head -n1)
      echo "$(basename "$test") ${secs%.*}" >>"$LOG/$name.times"
    done <"$LOG/$name/tests.list"
    grep -q . "$LOG/$name/tests.list" || { echo "  $name: no test ran"; fail=$((fail + 1)); }
  fi
  lines+=("$name: $pass passed, $fail failed, $skip skipped")
  total_pass=$((total_pass + pass))
  total_fail=$((total_fail + fail))
  total_skip=$((total_skip + skip))
done
printf '%s\n' "${lines[@]}"
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ]
