#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The test runner (.make/run-tests.sh) counts honestly: a SKIP is never a pass (and a failure
# under CI=1 unless marked "outside CI:"), a crash, a silent suite and a broken plan are
# failures, and the last line is "N passed, N failed, N skipped"; a failed suite's stderr is
# shown, and every suite's stdin is /dev/null; two lanes (TEST_LANES=2) count as one and share
# a queue. Fed with fake suites.
set -uo pipefail
cd "$(dirname "$0")/../.."
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/t_skips.sh" <<'S'
echo "ok 1 - a"; echo "ok 2 - b # SKIP no tool"; echo "not ok 3 # SKIP cmocka_test"
echo "ok 4 - d # SKIP outside CI: needs a board attached"; echo "1..4"
S
printf 'echo "ok 1 - a"; echo "not ok 2 - b"; echo "1..2"; exit 1\n' >"$work/t_fail.sh"
printf 'echo "ok 1 - a"; kill -ABRT $$\n' >"$work/t_crash.sh"
printf 'exit 0\n' >"$work/t_silent.sh"
printf 'echo "ok 1 - a"; echo "1..3"\n' >"$work/t_plan.sh"
printf 'echo "ok 1 - a"; echo "ok 2 - b"; echo "1..2"\n' >"$work/t_good.sh"

run() { env -u CI OUT="$work/out" "$@" 2>/dev/null | tail -n 1; }
tap "$([ "$(run bash .make/run-tests.sh "$work/t_good.sh")" = "2 passed, 0 failed, 0 skipped" ]; echo $?)" \
    "two passing tests: '2 passed, 0 failed, 0 skipped' as the last line"
out=$(run bash .make/run-tests.sh "$work/t_skips.sh")
tap "$([ "$out" = "1 passed, 0 failed, 3 skipped" ]; echo $?)" "skips are counted as skipped, not passed ($out)"
out=$(run env CI=1 bash .make/run-tests.sh "$work/t_skips.sh")
tap "$([ "$out" = "1 passed, 2 failed, 1 skipped" ]; echo $?)" \
    "under CI=1 a skip fails unless it says 'outside CI:' ($out)"
env -u CI OUT="$work/out" CI=1 bash .make/run-tests.sh "$work/t_skips.sh" >/dev/null 2>&1
tap "$([ $? != 0 ]; echo $?)" "under CI=1 a skip makes the run exit non-zero"
for t in fail crash silent plan; do
  out=$(run bash .make/run-tests.sh "$work/t_$t.sh")
  env -u CI OUT="$work/out" bash .make/run-tests.sh "$work/t_$t.sh" >/dev/null 2>&1
  rc=$?
  tap "$([ "$out" = "$([ $t = silent ] && echo 0 || echo 1) passed, 1 failed, 0 skipped" ] && [ $rc != 0 ]; echo $?)" \
      "negative control: a $t suite counts one failure and fails the run ($out)"
done
# A suite that fails with its reason on stderr only (no TAP-looking line): the runner shows it.
# Negative control: the runner before this showed only lines matching its TAP patterns.
printf 'echo "ok 1 - a"; echo "pseudo-terminal device missing: cannot open /dev/ptmx" >&2; exit 1\n' \
  >"$work/t_stderr.sh"
out=$(env -u CI OUT="$work/out" bash .make/run-tests.sh "$work/t_stderr.sh" 2>&1)
tap "$(echo "$out" | grep -q '| pseudo-terminal device missing: cannot open /dev/ptmx' &&
       [ "$(echo "$out" | tail -n 1)" = "1 passed, 1 failed, 0 skipped" ]; echo $?)" \
    "a failing suite's stderr is shown (its reason), and the failure counted"
# Every suite's stdin is /dev/null, whatever the runner's: a test cannot pass or fail by what the
# terminal (or a pipe) in front of make gives it. Negative control: the runner before this
# passed its own stdin on, and this suite read the line from it.
printf 'if read -r x; then echo "not ok 1 - read %%s from stdin" "$x"; else echo "ok 1 - stdin is empty"; fi; echo 1..1\n' \
  >"$work/t_stdin.sh"
out=$(echo "typed at the terminal" | env -u CI OUT="$work/out" bash .make/run-tests.sh "$work/t_stdin.sh" 2>/dev/null | tail -n 1)
tap "$([ "$out" = "1 passed, 0 failed, 0 skipped" ]; echo $?)" \
    "suites run with stdin from /dev/null, not the runner's ($out)"
# Lanes (TEST_LANES=2, make test): the programs and the scripts run side by side, and the totals
# and the exit status are one lane's. Fake programs: executables without .sh/.py.
printf '#!/bin/sh\nsleep 1; echo "ok 1 - p"; echo "1..1"\n' >"$work/p_slow"
printf '#!/bin/sh\necho "ok 1 - p"; echo "not ok 2 - q"; echo "1..2"\n' >"$work/p_fail"
printf 'sleep 1; echo "ok 1 - s"; echo "1..1"\n' >"$work/t_slow.sh"
chmod +x "$work/p_slow" "$work/p_fail"
suites=("$work/p_slow" "$work/p_fail" "$work/t_slow.sh" "$work/t_good.sh" "$work/t_crash.sh")
one=$(run bash .make/run-tests.sh "${suites[@]}")
start=$(date +%s.%N)
two=$(run env TEST_LANES=2 bash .make/run-tests.sh "${suites[@]}")
secs=$(echo "$(date +%s.%N) - $start" | bc)
env -u CI OUT="$work/out" TEST_LANES=2 bash .make/run-tests.sh "${suites[@]}" >/dev/null 2>&1
rc=$?
tap "$([ "$one" = "6 passed, 2 failed, 0 skipped" ] && [ "$two" = "$one" ] && [ $rc != 0 ]; echo $?)" \
    "two lanes count what one lane counts and fail the run alike ($one / $two)"
tap "$([ "$(echo "$secs < 1.9" | bc)" = 1 ]; echo $?)" \
    "two lanes overlap: a 1 s program and a 1 s script in ${secs} s"
# Programs only (make sanitize TEST_SCRIPTS=): they share the two lanes.
cp "$work/p_slow" "$work/p_slow2"
start=$(date +%s.%N)
two=$(run env TEST_LANES=2 bash .make/run-tests.sh "$work/p_slow" "$work/p_slow2" "$work/p_fail")
secs=$(echo "$(date +%s.%N) - $start" | bc)
tap "$([ "$two" = "3 passed, 1 failed, 0 skipped" ] && [ "$(echo "$secs < 1.9" | bc)" = 1 ]; echo $?)" \
    "programs alone alternate between the lanes: two 1 s programs in ${secs} s ($two)"
# The queue: once its own scripts are done, the scripts' lane takes programs too, and a script
# named in TEST_POOL may run in either lane. Each fake suite marks itself running while it
# sleeps and notes how many of its kind (programs p, scripts s) were running at its start, so
# the check does not depend on the machine's load; each also appends its name to a tally, to
# show it ran exactly once. Negative control: under the fixed split (before the queue) two
# programs never overlap in the first case, nor two scripts in the second.
for i in 1 2 3 4 5 6; do
  printf '#!/bin/sh\nw="%s"; touch "$w/run.p%s"; ls "$w"/run.p* | wc -l >>"$w/overlap"; sleep 1\nrm "$w/run.p%s"; echo p%s >>"$w/tally"; echo "ok 1 - p"; echo "1..1"\n' \
    "$work" "$i" "$i" "$i" >"$work/q_$i"
  chmod +x "$work/q_$i"
done
for i in 1 2 3 4; do
  printf 'w="%s"; touch "$w/run.s%s"; ls "$w"/run.s* | wc -l >>"$w/overlap"; sleep 1\nrm "$w/run.s%s"; echo s%s >>"$w/tally"; echo "ok 1 - s"; echo "1..1"\n' \
    "$work" "$i" "$i" "$i" >"$work/s_$i.sh"
done
: >"$work/tally"; : >"$work/overlap"
two=$(run env TEST_LANES=2 bash .make/run-tests.sh "$work"/q_{1,2,3,4,5,6} "$work/s_1.sh")
most=$(sort -n "$work/overlap" | tail -n 1)
tap "$([ "$two" = "7 passed, 0 failed, 0 skipped" ] && [ "$(sort "$work/tally" | tr '\n' ' ')" = "p1 p2 p3 p4 p5 p6 s1 " ] &&
       [ "$most" = 2 ]; echo $?)" \
    "both lanes take programs from the queue: two programs ran at once ($most), each suite once ($two)"
: >"$work/tally"; : >"$work/overlap"
two=$(run env TEST_LANES=2 TEST_POOL="$work/s_3.sh $work/s_4.sh" bash .make/run-tests.sh "$work"/s_{1,2,3,4}.sh)
most=$(sort -n "$work/overlap" | tail -n 1)
tap "$([ "$two" = "4 passed, 0 failed, 0 skipped" ] && [ "$(sort "$work/tally" | tr '\n' ' ')" = "s1 s2 s3 s4 " ] &&
       [ "$most" = 2 ]; echo $?)" \
    "TEST_POOL scripts run beside the other scripts: two scripts ran at once ($most), each once ($two)"
# TEST_IDLE: scripts that mostly wait get a lane of their own beside the scripts' lane; without
# it (the negative control) the same four scripts never overlap.
: >"$work/tally"; : >"$work/overlap"
two=$(run env TEST_LANES=2 TEST_IDLE="$work/s_3.sh $work/s_4.sh" bash .make/run-tests.sh "$work"/s_{1,2,3,4}.sh)
idle_most=$(sort -n "$work/overlap" | tail -n 1)
idle_tally=$(sort "$work/tally" | tr '\n' ' ')
: >"$work/tally"; : >"$work/overlap"
run env TEST_LANES=2 bash .make/run-tests.sh "$work"/s_{1,2,3,4}.sh >/dev/null
plain_most=$(sort -n "$work/overlap" | tail -n 1)
tap "$([ "$two" = "4 passed, 0 failed, 0 skipped" ] && [ "$idle_tally" = "s1 s2 s3 s4 " ] &&
       [ "$idle_most" = 2 ] && [ "$plain_most" = 1 ]; echo $?)" \
    "TEST_IDLE scripts run in their own lane: two scripts at once ($idle_most; without it $plain_most), each once ($two)"
# More lanes (TEST_LANES=3): three lanes take programs at once; two lanes never run three (the
# same queue, the negative control).
: >"$work/tally"; : >"$work/overlap"
three=$(run env TEST_LANES=3 bash .make/run-tests.sh "$work"/q_{1,2,3,4,5,6} "$work/s_1.sh")
most3=$(sort -n "$work/overlap" | tail -n 1)
tap "$([ "$three" = "7 passed, 0 failed, 0 skipped" ] && [ "$most3" = 3 ] && [ "$most" = 2 ] &&
       [ "$(sort "$work/tally" | tr '\n' ' ')" = "p1 p2 p3 p4 p5 p6 s1 " ]; echo $?)" \
    "three lanes run three programs at once ($most3; two lanes ran $most), each suite once ($three)"
env -u CI OUT="$work/out" TEST_LANES=two bash .make/run-tests.sh "$work/p_slow" >"$work/lanes.out" 2>&1
rc=$?
tap "$([ $rc = 2 ] && grep -q "give a number of lanes" "$work/lanes.out"; echo $?)" \
    "TEST_LANES=two is refused, saying what to give (exit $rc)"
# Each suite's line shows its CPU seconds beside its wall time, so a suite that waits can be told
# from one that computes: a busy program shows its CPU, one that sleeps after it almost none
# (the runner once measured around each suite in the lane's shell, and a suite was charged what
# the shell reaped during it: 0.6 s for this sleep under make test).
printf '#!/bin/sh\n%s -c "sum(range(60000000))"; echo "ok 1 - busy"; echo "1..1"\n' \
  "${PYTHON:-/usr/bin/python3}" >"$work/p_busy"
chmod +x "$work/p_busy"
lines=$(env -u CI OUT="$work/out" bash .make/run-tests.sh "$work/p_busy" "$work/p_slow" 2>&1)
busy=$(echo "$lines" | sed -n 's/^p_busy .*s, \([0-9.]*\)s CPU)$/\1/p')
idle=$(echo "$lines" | sed -n 's/^p_slow .*s, \([0-9.]*\)s CPU)$/\1/p')
tap "$([ -n "$busy" ] && [ -n "$idle" ] && [ "$(echo "$busy >= 0.4 && $idle < 0.25" | bc)" = 1 ]; echo $?)" \
    "the CPU column: a busy program ${busy}s, one that sleeps 1 s ${idle}s"
echo "1..$n"
exit $failed
