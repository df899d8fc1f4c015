#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# lint.sh FILE... -- COMPILE FLAGS
# clang-format (check only), cppcheck and clang-tidy over the given sources. The gate passes
# only if all three tools are installed, each exits 0 AND prints nothing (clang-tidy's
# "N warnings generated." count of suppressed system-header warnings aside): a missing tool,
# a crash, a compile error or a single finding fails it. Prints one line per tool, then
# "lint: 0 findings" or "lint: FAILED (...)".
set -uo pipefail
files=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do files+=("$1"); shift; done
[ $# -gt 0 ] && shift
flags=("$@")
cfiles=(); for f in "${files[@]}"; do [[ $f == *.c ]] && cfiles+=("$f"); done
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
CPPCHECK=${CPPCHECK:-cppcheck}
CLANG_TIDY=${CLANG_TIDY:-clang-tidy}
failed=()
JOBS=${LINT_JOBS:-$(nproc)}

for tool in "$CLANG_FORMAT" "$CPPCHECK" "$CLANG_TIDY"; do
  command -v "$tool" >/dev/null || { echo "lint: $tool not found (make deps installs it)"; failed+=("$tool missing"); }
done
if [ ${#failed[@]} -gt 0 ]; then echo "lint: FAILED (${failed[*]})"; exit 1; fi
[ ${#files[@]} -gt 0 ] || { echo "lint: FAILED (no files given)"; exit 1; }

# check NAME CMD...: run it; its status and everything it prints decide.
check() {
  local name=$1; shift
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  out=$(printf '%s\n' "$out" | grep -vE '^[0-9]+ warnings? generated\.$|^$')
  local findings; findings=$(printf '%s\n' "$out" | grep -cE 'warning:|error:|style:|portability:|performance:')
  if [ "$rc" -ne 0 ] || [ -n "$out" ]; then
    printf '%s\n' "$out" | head -n 60
    echo "lint: $name: exit status $rc, $findings findings"
    failed+=("$name")
  else
    echo "lint: $name: clean"
  fi
}

echo "lint: clang-format on ${#files[@]} files"
check clang-format "$CLANG_FORMAT" --dry-run --Werror "${files[@]}"

# cppcheck gets the include paths and defines (system include dirs as plain -I, their findings
# suppressed: fetched code is not ours to lint).
incs=() prev=""
for f in "${flags[@]}"; do
  [[ $f == -I* || $f == -D* ]] && incs+=("$f")
  [[ $prev == -isystem ]] && incs+=("-I$f" "--suppress=*:$f/*")
  prev=$f
done
echo "lint: cppcheck on ${#cfiles[@]} files"
check cppcheck "$CPPCHECK" -j "$JOBS" --quiet --error-exitcode=1 --std=c99 \
  --enable=warning,style,performance,portability --inline-suppr \
  --suppress=missingIncludeSystem --suppress=unusedFunction \
  --suppress=constParameterCallback --suppress=constParameterPointer \
  "${incs[@]}" "${cfiles[@]}"

# clang-tidy, one process per core (LINT_JOBS) over every LINT_JOBS-th file: the step's time
# halves on CI's two cores; the findings and the exit status are those of all of them.
tidy() {
  local dir rc=0 part pids=() j i
  dir=$(mktemp -d)
  for ((j = 0; j < JOBS; j++)); do
    part=()
    for ((i = j; i < ${#cfiles[@]}; i += JOBS)); do part+=("${cfiles[i]}"); done
    [ ${#part[@]} -gt 0 ] || continue
    "$CLANG_TIDY" --quiet "${part[@]}" -- "${flags[@]/-Werror/}" -Wno-unknown-warning-option \
      >"$dir/$j" 2>&1 &
    pids+=($!)
  done
  for i in "${pids[@]}"; do wait "$i" || rc=1; done
  cat "$dir"/*
  rm -rf "$dir"
  return $rc
}
echo "lint: clang-tidy on ${#cfiles[@]} files ($JOBS at a time)"
check clang-tidy tidy

if [ ${#failed[@]} -eq 0 ]; then echo "lint: 0 findings"; exit 0; fi
echo "lint: FAILED (${failed[*]})"
exit 1
