#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run-tests.sh TEST...  Runs every test program and script, each printing TAP, and prints one
# summary line per suite and, last, "N passed, N failed, N skipped". TEST_WRAPPER (e.g. a
# valgrind command line, see .make/valgrind.sh) is put in front of every test program;
# TEST_RUNNER (e.g. "qemu-arm", or a qemu-system-arm command line ending in -kernel) runs the
# compiled programs of a cross build.
#
# How a TAP line counts:
#   "ok N ..." with a "# SKIP" directive (any case), and cmocka's "not ok N # SKIP name":
#     skipped, never passed;
#   "ok N ..." otherwise: passed;  "not ok N ..." otherwise (a "# TODO" too): failed.
# A suite also counts one failure when it exits non-zero without reporting a failure (a crash,
# an abort), when it reports nothing at all, or when its plan ("1..N") disagrees with the
# number of results it printed.
#
# Every suite runs with its standard input from /dev/null, whatever the runner's is (a terminal,
# a pipe, nothing): a test that needs a terminal device creates one itself (a pseudo-terminal:
# tests/e2e/e2e_util.py run_on_pty) and says so when it cannot. Its log holds its standard output
# and error together; when it fails, the runner shows its failed results and then the last lines
# of its standard error, where a program says why (not only the lines that look like TAP).
#
# Under CI (environment CI=1, set by .ci/run) a skip is a failure, because CI installs
# everything the suite needs (make deps) and builds everything it tests (make all, make
# fuzz-build): a skip there means a test did not run that should have. The one exception is
# a skip whose reason starts with "outside CI:", for what CI cannot have by design: hardware
# attached to the machine, or a build configuration other than the default one CI builds.
# No test in this repository uses it today; cmocka's skip() cannot carry a reason, so a cmocka
# skip always fails in CI. Exit status: 0 only if nothing failed. TEST_LANES=N (make test: 2)
# runs the compiled programs and the scripts side by side, TEST_IDLE's scripts in a lane of
# their own (below).
set -uo pipefail
export CMOCKA_MESSAGE_OUTPUT=TAP
ci=0; [ "${CI:-}" = 1 ] || [ "${CI:-}" = true ] && ci=1
total_pass=0 total_fail=0 total_skip=0
logdir=${OUT:-build/host}/test-logs
mkdir -p "$logdir"
# One suite, in a subshell that, once it has waited for the suite, writes its children's CPU
# time (user and system: the second line of `times`) to $tf: the suite's own processes and
# nothing else (not another lane, which the main shell reaps whenever that lane ends).
run_one() (
  case "$1" in
    *.sh) bash "$1" ;;
    *.py) "${PYTHON:-/usr/bin/python3}" "$1" ;;
    *) ${TEST_WRAPPER:-} ${TEST_RUNNER:-} "$1" ;;
  esac
  st=$?
  times >"$tf"
  exit $st
)
# One suite: its log, its line (and on failure its details) printed as one block, so that two
# lanes' lines never interleave mid-line, and its counts in $logdir/$name.counts.
run_suite() {
  local t=$1 name log errlog start rc results skip_lines skip pass fail nres plan extra bad secs
  local report cpu tf
  name=$(basename "$t")
  log="$logdir/$name.log"
  errlog="$logdir/$name.stderr"
  start=$(date +%s.%N)
  : >"$log"
  # stdout and stderr both append to the log; stderr is kept apart too, to be shown on failure
  tf="$logdir/$name.times"
  rm -f "$tf"
  run_one "$t" </dev/null >>"$log" 2> >(tee "$errlog" >>"$log")
  rc=$?
  wait $! 2>/dev/null # the tee above: its last lines are in both files before they are read
  results=$(grep -E '^(not )?ok [0-9]+' "$log")
  skip_lines=$(printf '%s\n' "$results" | grep -iE '#[[:space:]]*skip' )
  skip=$(printf '%s' "$skip_lines" | grep -c .)
  pass=$(printf '%s\n' "$results" | grep -viE '#[[:space:]]*skip' | grep -cE '^ok ')
  fail=$(printf '%s\n' "$results" | grep -viE '#[[:space:]]*skip' | grep -cE '^not ok ')
  nres=$((pass + fail + skip))
  plan=$(grep -oE '^1\.\.[0-9]+' "$log" | tail -n1 | cut -d. -f3)
  extra=""
  if [ "$rc" -ne 0 ] && [ "$fail" -eq 0 ]; then
    extra="exited with status $rc without reporting a failure"
  elif [ "$nres" -eq 0 ]; then
    extra="reported no test result"
  elif [ -n "$plan" ] && [ "$plan" -ne "$nres" ]; then
    extra="planned $plan tests, reported $nres"
  fi
  if [ -n "$extra" ]; then
    fail=$((fail + 1))
    echo "not ok - $name $extra" >>"$log"
  fi
  if [ "$ci" = 1 ] && [ "$skip" -gt 0 ]; then
    # in CI a skip is a failure unless CI cannot have what it needs by design
    bad=$(printf '%s\n' "$skip_lines" | grep -viE '#[[:space:]]*skip[^a-z]*outside CI:' | grep -c .)
    skip=$((skip - bad))
    fail=$((fail + bad))
    [ "$bad" -gt 0 ] && echo "not ok - $name: $bad skipped test(s) count as failed under CI=1" >>"$log"
  fi
  secs=$(printf '%.1f' "$(echo "$(date +%s.%N) - $start" | bc)")
  # "1m2.500s 0m0.250s": minutes and seconds of user and system time (none if it was killed)
  cpu=$(tail -n 1 "$tf" 2>/dev/null |
    awk '{ split($1, a, "m"); split($2, b, "m"); printf "%.1f", a[1] * 60 + a[2] + b[1] * 60 + b[2] }')
  rm -f "$tf"
  cpu=${cpu:-?}
  report=$(
    printf '%-28s %4d passed, %d failed, %d skipped  (%ss, %ss CPU)\n' "$name" "$pass" "$fail" \
      "$skip" "$secs" "$cpu"
    if [ "$fail" -ne 0 ]; then
      grep -iE '^not ok|^# |error|failure|# skip' "$log" | head -n 20 | sed 's/^/    /'
      if [ -s "$errlog" ]; then
        echo "    -- its standard error (last 15 lines of $errlog):"
        tail -n 15 "$errlog" | sed 's/^/    | /'
      fi
    elif [ "$skip" -ne 0 ]; then
      grep -iE '#[[:space:]]*skip' "$log" | head -n 5 | sed 's/^/    /'
    fi
  )
  printf '%s\n' "$report"
  echo "$pass $fail $skip" >"$logdir/$name.counts"
}

# Lanes (TEST_LANES, default 1): with N >= 2, the scripts (tests/**/*.py, *.sh: servers,
# sockets, builds) run one after another in one lane, while the compiled test programs, and the
# scripts named in TEST_POOL (ones that keep to their own temporary and build folders, so they
# may run beside any other script), form a queue that the other N - 1 lanes take from from the
# start, and the scripts' lane too once its own scripts are done. Each entry is claimed once
# (mkdir is atomic). A suite's line is printed when it ends; the totals are the same as one
# lane's: each suite's counts are read back from its .counts file.
# Why a queue: a fixed split left one lane idle for minutes while the other ran (1,013 s of
# scripts against 821 s of programs at 496ea24). Why make test runs two lanes on this 2-core
# machine and not three: three took longer (1,039 s against 977 s for make test of e1abb74, the
# build up to date), although many scripts show less CPU time than wall time (the CPU time
# counts only processes the suite waits for).
# TEST_IDLE: scripts that mostly wait (real timeouts, clock periods, a PostgreSQL cluster, a
# browser) run one after another in a lane of their own, beside the others, then join the
# queue. In the scripts' lane they kept a core idle: make test of 3edfdee ran two suites at
# once for 786 of its 885 s, yet used 1,180 CPU-seconds of the 1,770 two cores give, and ten
# such scripts held 340 s of it for 66 CPU-seconds. Each opens its servers on port 0 (or
# one the kernel just gave) in its own temporary folder, so it may run beside any script.
run_lane() {
  local t
  for t in "$@"; do
    run_suite "$t"
  done
}
run_queue() { # the shared queue: run each entry this lane claims first
  local i
  for i in "${!queue[@]}"; do
    mkdir "$logdir/claim.$i" 2>/dev/null && run_suite "${queue[$i]}"
  done
}
for t in "$@"; do
  rm -f "$logdir/$(basename "$t").counts"
done
case "${TEST_LANES:-1}" in
  '' | *[!0-9]* | 0)
    echo "TEST_LANES=${TEST_LANES}: give a number of lanes, 1 or more (make test: 2)" >&2
    exit 2
    ;;
esac
if [ "${TEST_LANES:-1}" -ge 2 ]; then
  pooled=() progs=() scripts=() idle=() lanes=()
  for t in "$@"; do
    case " ${TEST_POOL:-} " in
      *" $t "*) pooled+=("$t"); continue ;;
    esac
    case " ${TEST_IDLE:-} " in
      *" $t "*) idle+=("$t"); continue ;;
    esac
    case "$t" in
      *.sh | *.py) scripts+=("$t") ;;
      *) progs+=("$t") ;;
    esac
  done
  queue=("${pooled[@]}" "${progs[@]}") # the pooled scripts are long builds: first
  rm -rf "$logdir"/claim.*
  for ((i = 1; i < TEST_LANES; i++)); do
    run_queue &
    lanes+=($!)
  done
  if [ ${#idle[@]} -gt 0 ]; then
    { run_lane "${idle[@]}"; run_queue; } &
    lanes+=($!)
  fi
  run_lane "${scripts[@]}"
  run_queue
  # The lanes' own status is not used (each suite's counts are read back below). bash may have
  # reaped a lane already while waiting for a suite's tee (a process substitution), and then
  # says "not a child of this shell": nothing is lost, so that message is silenced.
  for lane in "${lanes[@]}"; do
    wait "$lane" 2>/dev/null || true
  done
  rm -rf "$logdir"/claim.*
else
  run_lane "$@"
fi
for t in "$@"; do
  counts="$logdir/$(basename "$t").counts"
  if [ -r "$counts" ]; then
    read -r pass fail skip <"$counts"
  else # the lane died before the suite ended: it counts as one failure
    pass=0 fail=1 skip=0
    echo "not ok - $(basename "$t") left no result"
  fi
  total_pass=$((total_pass + pass))
  total_fail=$((total_fail + fail))
  total_skip=$((total_skip + skip))
done
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ]
