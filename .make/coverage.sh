#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# coverage.sh OUT: line coverage of every sdk/ source after `make test` ran with --coverage.
set -uo pipefail
out=$1
total_lines=0 total_hit=0
printf '%-40s %8s %8s\n' "file" "lines" "covered"
for src in $(ls sdk/src/*/*.c); do
  obj="$out/obj/${src%.c}.o"
  [ -f "${obj%.o}.gcda" ] || { printf '%-40s %8s %8s\n' "$src" "-" "never run"; continue; }
  line=$(gcov -n -o "$(dirname "$obj")" "$src" 2>/dev/null | awk -v f="$src" '
    $0 ~ "^File .*"f"'"'"'" {hit=1; next}
    hit && /^Lines executed:/ {print; exit}')
  pct=$(echo "$line" | sed -E 's/Lines executed:([0-9.]+)% of ([0-9]+)/\1 \2/')
  p=${pct% *} n=${pct#* }
  [ -n "$n" ] && [ "$n" != "$pct" ] || continue
  printf '%-40s %8d %7.1f%%\n' "$src" "$n" "$p"
  total_lines=$((total_lines + n))
  total_hit=$(echo "$total_hit + $p * $n / 100" | bc)
done
printf '%-40s %8d %7.1f%%\n' "sdk/ total" "$total_lines" "$(echo "100 * $total_hit / $total_lines" | bc -l)"
