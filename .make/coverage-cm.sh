#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# coverage-cm.sh  (make coverage) Line and branch counters of port/cortex-m, which is Arm code
# (startup, semihosting): builds the cortex-m4 images of make cross with port/cortex-m
# instrumented (.make/cortex-m.mk COVERAGE=1; tests/cross/cm_coverage.c writes the counters
# through semihosting), runs under qemu-system-arm (mps2-an386) the images whose subject is the
# port: its test (tests/cross/test_cm_port.c), the portable part's test, the harness's exit and
# fault controls and the example firmware (every other test image of make cross runs the same
# reset and exit path; make cross runs them all). Each image writes fresh .gcda files: they are
# kept, with the .gcno they belong to, in $OUT/runs/<image>/, and .make/coverage.py takes the
# union. Exits non-zero when the build fails, an image exits other than expected (0; the
# controls 3 and 131) or writes no counters.
# Env: BUILD_DIR (default build), MAKE.
set -uo pipefail
BUILD_DIR=${BUILD_DIR:-build}
OUT="$BUILD_DIR/cortex-m/coverage"
QEMU="qemu-system-arm -M mps2-an386 -cpu cortex-m4 -nographic -monitor none -serial none
  -semihosting-config enable=on,target=native -kernel"
for cmd in arm-none-eabi-gcc arm-none-eabi-gcov qemu-system-arm; do
  command -v "$cmd" >/dev/null || { echo "coverage-cm: $cmd not found (make cross-deps)"; exit 1; }
done
start=$(date +%s)
mkdir -p "$(dirname "$OUT")" # a fresh tree has no build/cortex-m yet
if ! ${MAKE:-make} --no-print-directory -f .make/cortex-m.mk -j"$(nproc)" CM=cortex-m4 \
  BUILD_DIR="$BUILD_DIR" OUT="$OUT" COVERAGE=1 images >"$OUT.build.log" 2>&1; then
  echo "coverage-cm: build failed ($OUT.build.log):"
  grep -E 'error|Error' "$OUT.build.log" | head -n 10 | sed 's/^/    /'
  exit 1
fi
objdir="$OUT/obj/port/cortex-m"
rm -rf "$OUT/runs"
find "$OUT" -name '*.gcda' -delete
images="$OUT/tests/test_cm_port.elf
$OUT/tests/test_cm_portable.elf
$OUT/exit_control.elf 3
$OUT/fault_control.elf 131
$OUT/cortex-m-example.elf"
n=0 bad=0
while read -r elf want; do
  [ -n "$elf" ] || continue
  name=$(basename "$elf" .elf)
  # shellcheck disable=SC2086
  timeout 900 $QEMU "$elf" >"$OUT/$name.log" 2>&1
  rc=$?
  n=$((n + 1))
  run="$OUT/runs/$name"
  mkdir -p "$run"
  mv "$objdir"/*.gcda "$run"/ 2>/dev/null
  if [ "$rc" != "${want:-0}" ] || ! ls "$run"/*.gcda >/dev/null 2>&1; then
    echo "coverage-cm: $name exited $rc (expected ${want:-0}) or wrote no counters ($OUT/$name.log)"
    bad=$((bad + 1))
  fi
  cp "$objdir"/*.gcno "$run"/
done <<<"$images"
echo "coverage-cm: port/cortex-m under QEMU (cortex-m4): $n images in $(( $(date +%s) - start )) s, $bad failed"
[ "$bad" = 0 ]
