#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks of one Cortex-M build (run by .make/cross.sh with the target's other test images):
#   1. the harness reports failure: an image that exits 3 makes QEMU exit 3 (semihosting
#      SYS_EXIT_EXTENDED), so a failing test image fails its run;
#   2. a fault does not hang: an image reading unmapped memory is reported by the port's fault
#      handler and exits with 128 + 3 (HardFault);
#   3. the example firmware (examples/cortex-m) makes its three reports and exits 0;
#   4. libdpm.a (sdk/ + nanopb) does no floating point: no FPU arithmetic or conversion (the
#      cortex-m4-fpu build would use them for any float) and no soft-float helper call
#      (__aeabi_f*, __aeabi_d*: what float becomes without an FPU). With the FPU on, GCC may
#      still keep 64-bit integers in FPU registers (vldr/vstr/vmov/vpush): counted and shown,
#      not an error, but it means the FPU must be enabled before SDK calls (startup.c does);
#   5. negative control: the same check flags a function that uses float.
# Env: CM_OUT (the build: .make/cortex-m.mk's OUT), CM_QEMU (the qemu-system-arm command line,
# ending in -kernel), CM_CFLAGS (the target's CPU flags, for the control).
set -uo pipefail
out=${CM_OUT:?}
qemu=${CM_QEMU:?}
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

timeout 60 $qemu "$out/exit_control.elf" >"$work/exit.log" 2>&1
rc=$?
tap "$([ $rc = 3 ] && grep -q 'control: exit status 3' "$work/exit.log"; echo $?)" \
  "an image returning 3 makes QEMU exit 3 (got $rc)"

timeout 60 $qemu "$out/fault_control.elf" >"$work/fault.log" 2>&1
rc=$?
sed 's/^/# /' "$work/fault.log"
tap "$([ $rc = 131 ] && grep -q '^fault: exception 0x00000003' "$work/fault.log"; echo $?)" \
  "a fault is reported and exits 131 instead of hanging (got $rc)"

timeout 60 $qemu "$out/cortex-m-example.elf" >"$work/example.log" 2>&1
rc=$?
sed 's/^/# /' "$work/example.log"
tap "$([ $rc = 0 ] && [ "$(grep -c '^report [a-z_]*: [0-9]* bytes' "$work/example.log")" = 3 ] &&
  [ "$(grep -c '^queued report, [0-9]* bytes' "$work/example.log")" = 3 ]; echo $?)" \
  "examples/cortex-m firmware makes and queues a tuple_mr, a tuple_ml and a roc_hist report through the device API (exit $rc)"

# FPU instructions are v<op> mnemonics in Thumb-2 disassembly; arithmetic, compares and
# conversions are floating point, loads/stores/moves only move bits.
FP_MOVES='^v(ldr|str|ldm|stm|push|pop|mov)'
float_use() {
  { arm-none-eabi-objdump -d "$1" 2>/dev/null |
      awk -F'\t' -v moves="$FP_MOVES" 'NF >= 3 && $3 ~ /^v[a-z]/ && $3 !~ moves {print "instruction " $3}'
    arm-none-eabi-nm -u "$1" 2>/dev/null | awk '$NF ~ /^__aeabi_[fd]/ || $NF ~ /^__aeabi_[ul]?[dfi]2[dfi]/ {print "call " $NF}'
  } | sed 's/ .*\t.*//' | sort -u | head -5
}
moves=$(arm-none-eabi-objdump -d "$out/libdpm.a" 2>/dev/null | awk -F'\t' -v moves="$FP_MOVES" 'NF >= 3 && $3 ~ moves' | wc -l)
echo "# FPU register moves (64-bit integers kept in FPU registers by the compiler): $moves"
bad=$(float_use "$out/libdpm.a")
tap "$([ -z "$bad" ]; echo $?)" "libdpm.a does no floating point (no FPU arithmetic, no soft-float call)${bad:+: $(echo $bad)}"

printf 'float scale(float x);\nfloat scale(float x) { return x * 2.5f + 1.0f; }\n' >"$work/fp.c"
# shellcheck disable=SC2086
arm-none-eabi-gcc ${CM_CFLAGS:-} -O2 -c "$work/fp.c" -o "$work/fp.o"
tap "$([ -n "$(float_use "$work/fp.o")" ]; echo $?)" "negative control: the check flags a function using float"

echo "1..$n"
exit $failed
