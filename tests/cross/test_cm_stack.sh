#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The painted-stack check of make size's Cortex-M4 one-call stack figure (run by .make/cross.sh
# for cortex-m4, on the image it builds with make size's tuple_min flags at -Os and Mbed TLS
# compiled with -fstack-usage: $CM_OUT-stack/stack_cm.elf, tests/cross/stack_cm.c):
#   1. the image makes its reports (worst tuple_mr calls: new campaigns and periods, outbox
#      compactions in one call and in steps, a DRBG reseed at every refill) and exits 0;
#   2. .make/size.py --stack-of measures dpm_device_report_tuple on this same image, its port
#      RNG hook charged at the rng->fill call (interrupts excluded: the image takes none);
#   3. the method: a function with a 1,024-byte array reads at least 1,024 bytes painted, and
#      no more than its static figure;
#   4. the painted high-water mark is <= the static figure;
#   5. negative control: the figure without the RNG hook (the hook counted as free, as before
#      issue 32) is below the painted mark, so a static analysis that dropped the hook's chain
#      would fail check 4;
#   6. the static figure is not vacuous: the painted mark is at least 80 % of it;
#   7. negative control: with the DRBG's entropy callback left out of size.py's pointer table,
#      the analysis stops instead of counting the reseed's entropy read as free.
# Env: CM_OUT (the target's build: .make/cortex-m.mk's OUT), CM_QEMU (ending in -kernel).
set -uo pipefail
out=${CM_OUT:?}-stack
qemu=${CM_QEMU:?}
PYTHON=${PYTHON:-/usr/bin/python3}
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
elf=$out/stack_cm.elf
mbed=$(cat "$out/mbed-dir" 2>/dev/null)

timeout 120 $qemu "$elf" >"$work/run.log" 2>&1
rc=$?
sed 's/^/# /' "$work/run.log"
control=$(awk '/^stack control:/ {print $3}' "$work/run.log")
measured=$(awk '/^stack max:/ {print $3}' "$work/run.log")
tap "$([ $rc = 0 ] && [ -n "$measured" ]; echo $?)" \
  "the image makes its reports with a reseed at every refill and outbox compactions (exit $rc)"

# The static analysis of this image (size.py's, as make size runs it on tuple_min).
"$PYTHON" .make/size.py --stack-of "$elf" --map "$elf.map" --dirs "$out/obj,$mbed/library" \
  dpm_device_report_tuple deep_control >"$work/static.txt" 2>&1
src=$?
sed 's/^/# /' "$work/static.txt"
field() { awk -v k="$1" '$1 == k {print $2}' "$work/static.txt"; }
with=$(field with_rng) without=$(field sdk_only) ctl_static=$(field deep_control)
tap "$([ $src = 0 ] && [ -n "$with" ] && [ -n "$without" ]; echo $?)" \
  "size.py measures the image's static one-call stack with the RNG hook ($with) and without ($without)"
tap "$([ -n "$control" ] && [ -n "$ctl_static" ] && [ "$control" -ge 1024 ] &&
  [ "$control" -le "$ctl_static" ]; echo $?)" \
  "the method: a 1,024-byte local array reads $control bytes painted, <= its static $ctl_static"
tap "$([ -n "$measured" ] && [ -n "$with" ] && [ "$measured" -le "$with" ]; echo $?)" \
  "painted high-water mark $measured <= static figure with the RNG hook $with"
tap "$([ -n "$measured" ] && [ -n "$without" ] && [ "$measured" -gt "$without" ]; echo $?)" \
  "negative control: the figure without the RNG hook ($without) is exceeded by the painted mark ($measured)"
tap "$([ -n "$measured" ] && [ -n "$with" ] && [ $((measured * 100)) -ge $((with * 80)) ]; echo $?)" \
  "the static figure is within 20 % of the painted mark ($measured of $with)"
SIZE_RNG_POINTERS_DROP=mbedtls_ctr_drbg_reseed_internal "$PYTHON" .make/size.py --stack-of "$elf" \
  --map "$elf.map" --dirs "$out/obj,$mbed/library" dpm_device_report_tuple >"$work/drop.txt" 2>&1
rc=$?
tap "$([ $rc != 0 ] && grep -q "pointer calls on the RNG hook's chain from mbedtls_ctr_drbg_reseed_internal" \
  "$work/drop.txt"; echo $?)" \
  "negative control: an unresolved pointer call on the hook's chain stops the analysis (exit $rc)"
echo "1..$n"
exit $failed
