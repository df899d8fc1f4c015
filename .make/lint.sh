#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# lint.sh FILE... -- COMPILE FLAGS
# clang-format (check only), cppcheck and clang-tidy over the given sources; zero findings.
set -uo pipefail
files=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do files+=("$1"); shift; done
shift
flags=("$@")
cfiles=(); for f in "${files[@]}"; do [[ $f == *.c ]] && cfiles+=("$f"); done
status=0

echo "lint: clang-format on ${#files[@]} files"
clang-format --dry-run --Werror "${files[@]}" || status=1

echo "lint: cppcheck"
# cppcheck gets the include paths and defines (system include dirs as plain -I, their findings
# suppressed: fetched code is not ours to lint).
incs=() prev=""
for f in "${flags[@]}"; do
  [[ $f == -I* || $f == -D* ]] && incs+=("$f")
  [[ $prev == -isystem ]] && incs+=("-I$f" "--suppress=*:$f/*")
  prev=$f
done
cppcheck --quiet --error-exitcode=1 --std=c99 --enable=warning,style,performance,portability \
  --inline-suppr --suppress=missingIncludeSystem --suppress=unusedFunction \
  --suppress=constParameterCallback --suppress=constParameterPointer \
  "${incs[@]}" "${cfiles[@]}" || status=1

echo "lint: clang-tidy on ${#cfiles[@]} files"
clang-tidy --quiet "${cfiles[@]}" -- "${flags[@]/-Werror/}" -Wno-unknown-warning-option 2>/dev/null |
  grep -E 'warning:|error:' && status=1

if [ $status -eq 0 ]; then echo "lint: 0 findings"; else echo "lint: findings above"; fi
exit $status
