#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fuzz.sh: run libFuzzer targets and count what they did.
#   fuzz.sh --check-toolchain     exit 1 unless $CLANG (default clang) and its libFuzzer runtime
#                                 are installed (Debian: clang, libclang-rt-14-dev)
#   fuzz.sh BIN...                fuzz each target for FUZZ_SECONDS (default 60), or until
#                                 FUZZ_RUNS executions if that is set
#   fuzz.sh --seeds BIN...        run each target once over every seed of its corpus, no fuzzing
# BIN is a binary build/<target>-fuzz/fuzz/fuzz_<name> (make fuzz-build). Its seeds are
# $FUZZ_CORPUS/<name>/ (default tests/fuzz/corpus; never modified), its dictionary
# tests/fuzz/fuzz_<name>.dict if there is one. The corpus grows in <bin dir>/../fuzz-work/<name>/corpus/, findings (crash-*,
# leak-*, timeout-*, oom-*) land in <bin dir>/../fuzz-work/<name>/artifacts/.
# FUZZ_JOBS targets run at once (default: the number of cores), each on one core, so a target
# gets the same executions as alone; their lines are printed in the order given.
# Prints "fuzz <name>: N executions, M crashes" per target (M = findings written by this run:
# libFuzzer stops at the first one), then a summary. Exit status 0 only if every target ran at
# least one input (every seed, with --seeds) and none found anything.
set -uo pipefail
cd "$(dirname "$0")/.."
CLANG=${CLANG:-clang}

if [ "${1:-}" = "--check-toolchain" ]; then
  command -v "$CLANG" >/dev/null || { echo "fuzz: $CLANG not found (make deps installs clang)" >&2; exit 1; }
  if ! "$CLANG" -print-file-name=libclang_rt.fuzzer-x86_64.a | grep -q /; then
    echo "fuzz: no libFuzzer runtime for $CLANG (Debian: libclang-rt-14-dev)" >&2
    exit 1
  fi
  exit 0
fi
mode=fuzz
if [ "${1:-}" = "--seeds" ]; then mode=seeds; shift; fi
[ $# -gt 0 ] || { echo "usage: fuzz.sh [--seeds] BIN..." >&2; exit 2; }
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_RUNS=${FUZZ_RUNS:-}
FUZZ_CORPUS=${FUZZ_CORPUS:-tests/fuzz/corpus}
# libFuzzer reads -max_total_time=0 and -runs=0 as "no limit" / "no run": refuse both
[[ $FUZZ_SECONDS =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: FUZZ_SECONDS must be >= 1" >&2; exit 2; }
[[ -z $FUZZ_RUNS || $FUZZ_RUNS =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: FUZZ_RUNS must be >= 1" >&2; exit 2; }

export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# one BIN OUT: fuzz (or replay) one target; its lines go to OUT, "runs found bad" to OUT.sum.
one() {
  local bin=$1 out=$2 name seeds work log nseeds opts stamp files rc runs limit found bad
  name=$(basename "$bin"); name=${name#fuzz_}
  seeds="$FUZZ_CORPUS/$name"
  work="$(dirname "$bin")/../fuzz-work/$name"
  mkdir -p "$work/corpus" "$work/artifacts"
  log="$work/$mode.log"
  if [ ! -x "$bin" ]; then
    echo "fuzz $name: 0 executions, 0 crashes (no binary $bin)"; echo "0 0 1" >"$out.sum"; return
  fi
  nseeds=$(find "$seeds" -type f 2>/dev/null | wc -l)
  if [ "$nseeds" -eq 0 ]; then
    echo "fuzz $name: 0 executions, 0 crashes (no seeds in $seeds)"; echo "0 0 1" >"$out.sum"; return
  fi
  opts=(-timeout=10 -rss_limit_mb=2048 -artifact_prefix="$work/artifacts/")
  [ -f "tests/fuzz/fuzz_$name.dict" ] && opts+=(-dict="tests/fuzz/fuzz_$name.dict")
  stamp="$work/.start"; : >"$stamp"
  if [ "$mode" = seeds ]; then
    # every seed file once, in its own run of the target function
    mapfile -t files < <(find "$seeds" -type f | sort)
    "$bin" "${opts[@]}" "${files[@]}" >"$log" 2>&1
    rc=$?
    runs=$(grep -c '^Executed ' "$log")
    [ "$runs" -eq "$nseeds" ] || rc=${rc/#0/1}
  else
    limit=(-max_total_time="$FUZZ_SECONDS")
    [ -n "$FUZZ_RUNS" ] && limit=(-runs="$FUZZ_RUNS")
    "$bin" "${opts[@]}" "${limit[@]}" -print_final_stats=1 "$work/corpus" "$seeds" >"$log" 2>&1
    rc=$?
    runs=$(awk '/stat::number_of_executed_units/ {print $NF}' "$log" | tail -n1)
    runs=${runs:-0}
  fi
  found=$(find "$work/artifacts" -type f -newer "$stamp" | wc -l)
  [ "$rc" -ne 0 ] && [ "$found" -eq 0 ] && found=1 # died without writing an artifact
  echo "fuzz $name: $runs executions, $found crashes"
  bad=0
  if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ] || [ "$runs" -eq 0 ]; then
    bad=1
    grep -E 'ERROR|runtime error|SUMMARY|Test unit written|deadly signal' "$log" | head -n 12 |
      sed 's/^/    /'
    echo "    log: $log"
  fi
  echo "$runs $found $bad" >"$out.sum"
}

FUZZ_JOBS=${FUZZ_JOBS:-$(nproc)}
[[ $FUZZ_JOBS =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: FUZZ_JOBS must be >= 1" >&2; exit 2; }
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
i=0
for bin in "$@"; do
  while [ "$(jobs -rp | wc -l)" -ge "$FUZZ_JOBS" ]; do wait -n; done
  one "$bin" "$results/$i" >"$results/$i" 2>&1 &
  i=$((i + 1))
done
wait
failed=0 total_runs=0 total_found=0
for ((k = 0; k < i; k++)); do
  cat "$results/$k"
  read -r runs found bad <"$results/$k.sum" 2>/dev/null || { runs=0 found=0 bad=1; }
  [ "$bad" -eq 0 ] || failed=1
  total_runs=$((total_runs + runs))
  total_found=$((total_found + found))
done
echo "fuzz: $# targets, $total_runs executions, $total_found crashes"
exit $failed
