#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# valgrind.sh TEST_PROGRAM...  (make valgrind) Runs the C unit and vector test programs under
# valgrind memcheck: any memcheck error (invalid read or write, use of an uninitialised value,
# a definite leak) makes valgrind exit 97, which the runner counts as a failed test. The
# statistical tests (tests/stat/) are left out: they run millions of draws of the same code the
# unit tests cover, which would take valgrind hours. Prints the runner's summary, then
# "valgrind: N programs, M with memcheck errors".
set -uo pipefail
command -v valgrind >/dev/null || { echo "valgrind: not found (make deps installs it)"; exit 1; }
progs=()
for t in "$@"; do
  case "$t" in */tests/stat/*) ;; *) progs+=("$t") ;; esac
done
[ ${#progs[@]} -gt 0 ] || { echo "valgrind: no test programs given"; exit 1; }
export TEST_WRAPPER="valgrind --tool=memcheck --error-exitcode=97 --leak-check=full \
--errors-for-leak-kinds=definite --show-leak-kinds=definite --track-origins=yes -q"
OUT=${OUT:-build/host}
OUT="$OUT/valgrind" bash "$(dirname "$0")/run-tests.sh" "${progs[@]}"
rc=$?
logs="$OUT/valgrind/test-logs"
bad=$(grep -lE '^==[0-9]+== ([A-Z]|[0-9,]+ bytes in)' "$logs"/*.log 2>/dev/null | wc -l)
echo "valgrind: ${#progs[@]} programs, $bad with memcheck errors"
[ "$rc" -eq 0 ] && [ "$bad" -eq 0 ]
