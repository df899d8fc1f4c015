#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Memory budgets of the device API (issue 13), checked on every `make test`:
#  - what an app holds between calls (tests/cross/size_state.c: dpm_device_t + dpm_mech_t + the
#    RAM storage handle) stays within the compile-time budgets, for the default and the
#    tuple-only build, on x86_64 and on Cortex-M4;
#  - the worst-case stack of one tuple report (dpm_device_report_tuple) of the tuple-only build
#    on x86_64 is <= 1536 bytes (-fstack-usage and the call graph: .make/stack_host.py), a
#    function-pointer call charged with what the device API's image can reach (make size's
#    .make/device_api.sh), not with callbacks nothing in it takes (FedAUC's, in this build).
# Each check has a negative control: a budget lowered below the figure must fail.
set -uo pipefail
PYTHON=${PYTHON:-/usr/bin/python3}
CC=${CC:-gcc}
BUILD_DIR=${BUILD_DIR:-build}
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
INC="-std=c99 -Wall -Werror -Isdk/include -Isdk/proto"
. .make/device_api.sh
IMAGE="$DEVICE_API $DEVICE_PREFIX* !$DAP_PREFIX*" # the local-DP app (no two-aggregator calls)

state() { # CC CFLAGS...: compile size_state.c
  local cc=$1; shift
  "$cc" $INC "$@" -c tests/cross/size_state.c -o "$work/state.o" 2>"$work/state.err"
}
state "$CC" $TUPLE_ONLY; tap $? "x86_64 tuple-only: device + mechanism + RAM storage within the budget"
state "$CC"; tap $? "x86_64 default: device + mechanism + RAM storage within the budget"
state "$CC" $TUPLE_ONLY -DDPM_SIZE_HELD_MAX=1000u
tap "$([ $? != 0 ] && grep -q dpm_size_held_within_budget "$work/state.err"; echo $?)" \
  "negative control: a budget below the held size fails the build"
if command -v arm-none-eabi-gcc >/dev/null; then
  state arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb $TUPLE_ONLY
  tap $? "Cortex-M4 tuple-only: within the budget"
  state arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb
  tap $? "Cortex-M4 default: within the budget"
else
  tap 1 "arm-none-eabi-gcc missing (Debian package gcc-arm-none-eabi; make cross-deps)"
fi

# The tuple-only SDK as the Makefile builds it (-O2), with the stack analysis flags.
ok=0
sdk_srcs=$(make -s --no-print-directory print-sdk-srcs) || ok=1
for f in $sdk_srcs "$BUILD_DIR"/src/nanopb/pb_{common,encode,decode}.c; do
  b="$work/obj/$(basename "${f%.c}")"
  mkdir -p "$work/obj"
  "$CC" -std=c99 -O2 -Isdk/include -Iport/include -Isdk/proto -isystem "$BUILD_DIR/src/nanopb" \
    -Isdk/src/internal -Isdk/src -ffunction-sections -fdata-sections $TUPLE_ONLY \
    -fstack-usage -fcallgraph-info=su -c "$f" -o "$b.o" -dumpbase "$b" || ok=1
done
tap $ok "the tuple-only SDK builds with -fstack-usage -fcallgraph-info=su"
"$PYTHON" .make/stack_host.py "$work/obj" dpm_device_report_tuple --image "$IMAGE" --budget 1536 \
  2>&1 | sed 's/^/# /'
tap "${PIPESTATUS[0]}" "x86_64 tuple-only: dpm_device_report_tuple's worst-case stack <= 1536 bytes"
"$PYTHON" .make/stack_host.py "$work/obj" dpm_device_report_tuple --image "$IMAGE" --budget 256 \
  >"$work/missed.out" 2>&1
tap "$([ $? = 1 ] && grep -q '^MISSED .* over by ' "$work/missed.out"; echo $?)" \
  "negative control: a 256-byte stack budget is reported as missed, with by how much"
# the image: FedAUC's stream callbacks are compiled (fedauc_wire.c is not optional) but nothing
# the device API links takes their address in this build; rooting their taker brings them in
"$PYTHON" .make/stack_host.py "$work/obj" dpm_device_report_tuple --image "$IMAGE" >"$work/img.out"
grep -q "outside the image, not counted: .*fedauc_wire:decode_array" "$work/img.out"
tap $? "FedAUC's callbacks are outside the tuple-only device image"
"$PYTHON" .make/stack_host.py "$work/obj" dpm_device_report_tuple \
  --image "$IMAGE dpm_fedauc_reply_decode" >"$work/img2.out"
grep -q "deepest of .*fedauc_wire:decode_array" "$work/img2.out"
tap $? "negative control: rooting dpm_fedauc_reply_decode puts its callback in the image"
"$PYTHON" .make/stack_host.py "$work/obj" dpm_device_report_tuple --image "dpm_no_such_fn" \
  >/dev/null 2>&1
tap "$([ $? = 2 ]; echo $?)" "negative control: an image root that is not in the SDK is an error"
"$PYTHON" .make/stack_host.py "$work/obj" dpm_no_such_function >/dev/null 2>&1
tap "$([ $? = 2 ]; echo $?)" "negative control: a root that is not in the SDK cannot be measured"

echo "1..$n"
exit $failed
