#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Constant time, checked (tests/ct/ct_noise.c, ctgrind style): binary RR, GRR and the
# fixed-draw Laplace run under valgrind memcheck with their secret input's bits marked
# undefined; memcheck must report no conditional jump or move and no memory access that
# depends on them, over many inputs and random streams. Negative controls: a branch on the
# secret and a table lookup indexed by it must each be reported. Two checks legitimately test
# the secret and are accepted by their source text, nowhere else: GRR's argument check
# "x >= g->k" (public answer: valid) and fixed-draw Laplace's overflow test of the output.
# The SDK's noise sources are compiled here with the release flags (-O2), whatever variant of
# the build runs the suite: constant time is a property of optimised code, and valgrind cannot
# run the sanitizer variant.
set -uo pipefail
cd "$(dirname "$0")/../.."
CC=${CC:-gcc}
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

command -v valgrind >/dev/null
tap $? "valgrind is installed (make deps)"
[ -f /usr/include/valgrind/memcheck.h ]
tap $? "valgrind/memcheck.h is installed"
"$CC" -std=c99 -O2 -g -Wall -Wextra -Werror -D_DEFAULT_SOURCE -Isdk/include -Iport/include \
  -Isdk/src/internal -Isdk/src -Itests/support -o "$work/ct_noise" tests/ct/ct_noise.c \
  sdk/src/noise/*.c sdk/src/core/*.c tests/support/test_rng.c >"$work/cc.log" 2>&1
rc=$?
sed 's/^/# /' "$work/cc.log" | head -20
tap $rc "ct_noise builds with -O2 against the SDK's noise sources"

vg() { # mode -> log in $work/$1.log, status in $?
  valgrind --tool=memcheck --error-exitcode=99 --expensive-definedness-checks=yes \
    --track-origins=no "$work/ct_noise" "$1" >"$work/$1.log" 2>&1
}
errors() { grep -oE 'ERROR SUMMARY: [0-9]+ errors' "$work/$1.log" | awk '{print $3}'; }
# The source line (file:line) of the top frame of every secret-dependence error in a log.
sites() {
  awk '/depends on uninitialised value|Use of uninitialised value/ {want = 1; next}
       want && / at 0x/ {want = 0; if (match($0, /\([^()]*:[0-9]+\)$/)) print substr($0, RSTART + 1, RLENGTH - 2)}' \
    "$work/$1.log"
}
# The two declassification points (see tests/ct/ct_noise.c): a site is accepted only if its
# source line holds one of these expressions, in the file named.
allowed() { # file:line
  local file=${1%%:*} line=${1##*:} path text
  path=$(find sdk/src/noise -name "$file" | head -n 1)
  [ -n "$path" ] || return 1
  text=$(sed -n "${line}p" "$path")
  case "$file" in
    grr.c) [[ $text == *'x >= g->k'* ]] ;;
    laplace_fixed.c) [[ $text == *'^ sum)) >> 63'* ]] ;;
    *) return 1 ;;
  esac
}
for mode in rr grr laplace_fixed; do
  vg "$mode"
  total=$(errors "$mode")
  # memcheck prints each error context (site) once, then only counts it
  contexts=$(grep -oE 'ERROR SUMMARY: [0-9]+ errors from [0-9]+ contexts' "$work/$mode.log" | awk '{print $6}')
  bad=0 good=0
  while read -r site; do
    [ -n "$site" ] || continue
    if allowed "$site"; then
      good=$((good + 1))
      echo "# $mode: declassified check at $site"
    else
      bad=$((bad + 1))
      echo "# $mode: SECRET-DEPENDENT at $site"
    fi
  done < <(sites "$mode" | sort -u)
  [ "$bad" = 0 ] || grep -E 'depends on uninitialised|uninitialised value|at 0x|by 0x' "$work/$mode.log" | head -n 12 | sed 's/^/# /'
  tap "$([ "$bad" = 0 ] && [ "$good" = "${contexts:-x}" ] && grep -q "ct_noise $mode: done" "$work/$mode.log"; echo $?)" \
      "$mode: no branch or memory access depends on the secret outside the declassified check (memcheck: ${total:-?} errors from ${contexts:-?} contexts, $good declassified, $bad other)"
done
first=$(grep -n 'static inline uint32_t grr_select' sdk/src/noise/grr.c | cut -d: -f1)
tap "$(! allowed "grr.c:$first" && ! allowed "laplace_fixed.c:1" && ! allowed "ct_noise.c:1"; echo $?)" \
    "negative control: the declassified checks accept no other source line"
vg neg_branch; rc=$?
tap "$([ "$rc" = 99 ] && grep -q 'Conditional jump or move depends on uninitialised value' "$work/neg_branch.log"; echo $?)" \
    "negative control: a branch on the secret is reported ($(errors neg_branch) errors)"
vg neg_table; rc=$?
tap "$([ "$rc" = 99 ] && grep -q 'Use of uninitialised value of size' "$work/neg_table.log"; echo $?)" \
    "negative control: a table lookup indexed by the secret is reported ($(errors neg_table) errors)"
echo "1..$n"
exit $failed
