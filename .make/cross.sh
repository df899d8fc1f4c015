#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make cross: build for every target and run the host-independent tests there.
#   Linux targets (qemu-user): armhf, aarch64 and s390x (big-endian). libdpm, the nanopb runtime,
#     the posix + TLS port and Mbed TLS 3.6 (host config) are cross-built by the Makefile
#     (CROSS_COMPILE=<triplet>- cross-tests); the unit, statistical (DPM_STAT_DIVISOR) and golden
#     vector tests and the TLS client test (against openssl s_server on 127.0.0.1) run there.
#   Cortex-M (qemu-system-arm, semihosting): cortex-m3 (mps2-an385), cortex-m4 and cortex-m4-fpu
#     (mps2-an386), built by .make/cortex-m.mk: the unit tests that need no host and the golden
#     vectors as one image each, plus tests/cross/test_cm_checks.sh; on cortex-m4 also
#     tests/cross/test_cm_stack.sh (make size's one-call stack figure against a painted stack).
# Prints one line per suite as it goes, then "<target>: N passed, N failed, N skipped" per target
# and the summed "N passed, N failed, N skipped" last (a skip counted as skipped, never as a pass:
# run-tests.sh's own counts); exits non-zero on any failure, a failed build or a missing tool
# (naming the Debian package). Logs: $BUILD_DIR/cross/.
# Env: CROSS_TARGETS (subset, e.g. "armhf cortex-m4"), CROSS_JOBS (parallel suites, default
# nproc), DPM_STAT_DIVISOR (default 20).
set -uo pipefail
BUILD_DIR=${BUILD_DIR:-build}
MAKE=${MAKE:-make}
JOBS=${CROSS_JOBS:-$(nproc)}
export DPM_STAT_DIVISOR=${DPM_STAT_DIVISOR:-20}
LOG="$BUILD_DIR/cross"
mkdir -p "$LOG"
start=$(date +%s)

# name  kind  triplet-or-CPU  runner (qemu-system: machine)
TARGETS=(
  "armhf linux arm-linux-gnueabihf qemu-arm"
  "aarch64 linux aarch64-linux-gnu qemu-aarch64"
  "s390x linux s390x-linux-gnu qemu-s390x"
  "cortex-m3 cm cortex-m3 mps2-an385"
  "cortex-m4 cm cortex-m4 mps2-an386"
  "cortex-m4-fpu cm cortex-m4 mps2-an386"
)
selected=${CROSS_TARGETS:-armhf aarch64 s390x cortex-m3 cortex-m4 cortex-m4-fpu}
declare -A DEBARCH=([arm-linux-gnueabihf]=armhf [aarch64-linux-gnu]=arm64 [s390x-linux-gnu]=s390x)
declare -A CPUFLAGS=([cortex-m3]="-mcpu=cortex-m3 -mthumb -mfloat-abi=soft"
                     [cortex-m4]="-mcpu=cortex-m4 -mthumb -mfloat-abi=soft"
                     [cortex-m4-fpu]="-mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard")

# ---- tools: say which package is missing ------------------------------------------------------
missing=()
need_cmd() { command -v "$1" >/dev/null 2>&1 || missing+=("$1 (Debian package $2)"); }
need_file() { [ -e "$1" ] || missing+=("$1 ($2)"); }
for t in "${TARGETS[@]}"; do
  read -r name kind arg runner <<<"$t"
  [[ " $selected " == *" $name "* ]] || continue
  if [ "$kind" = linux ]; then
    need_cmd "$arg-gcc" "gcc-$arg"
    need_cmd "$runner" qemu-user
    need_file "/usr/lib/$arg/libcmocka.so" "Debian package libcmocka-dev:${DEBARCH[$arg]}"
  else
    need_cmd arm-none-eabi-gcc gcc-arm-none-eabi
    need_cmd qemu-system-arm qemu-system-arm
    lib=$(arm-none-eabi-gcc -print-file-name=librdimon.a 2>/dev/null)
    [[ $lib == /* ]] || missing+=("librdimon.a (Debian package libnewlib-arm-none-eabi)")
    need_file "$BUILD_DIR/src/cmocka/src/cmocka.c" "cmocka source: run make cross-deps"
  fi
done
need_cmd openssl openssl
if [ ${#missing[@]} -gt 0 ]; then
  printf 'make cross: missing %s\n' "${missing[@]}" | sort -u >&2
  echo "make cross: install with 'make cross-deps' (or the packages named above)" >&2
  exit 1
fi

# ---- build, one target after the other (each uses all cores) ---------------------------------
declare -A LIST BUILD_FAILED RUNNER QEMU
for t in "${TARGETS[@]}"; do
  read -r name kind arg runner <<<"$t"
  [[ " $selected " == *" $name "* ]] || continue
  t0=$(date +%s)
  if [ "$kind" = linux ]; then
    $MAKE --no-print-directory -j"$JOBS" CROSS_COMPILE="$arg-" BUILD_DIR="$BUILD_DIR" cross-tests \
      >"$LOG/$name.build.log" 2>&1
    rc=$?
    LIST[$name]="$BUILD_DIR/$arg/cross-tests.list"
    RUNNER[$name]="timeout 900 $runner"
  else
    out="$BUILD_DIR/cortex-m/$name"
    $MAKE --no-print-directory -f .make/cortex-m.mk -j"$JOBS" CM="$name" BUILD_DIR="$BUILD_DIR" \
      OUT="$out" images >"$LOG/$name.build.log" 2>&1
    rc=$?
    if [ $rc = 0 ] && [ "$name" = cortex-m4 ]; then
      # the painted-stack image (tests/cross/test_cm_stack.sh): make size's tuple_min at -Os,
      # with the stack analysis flags, and Mbed TLS with them too
      (. .make/device_api.sh
       $MAKE --no-print-directory -f .make/cortex-m.mk -j"$JOBS" CM="$name" BUILD_DIR="$BUILD_DIR" \
         OUT="$out-stack" OPT=-Os EXTRA_CFLAGS="-fstack-usage -fcallgraph-info=su $TUPLE_MIN" \
         MBED_ANALYSIS=1 stack) >>"$LOG/$name.build.log" 2>&1
      rc=$?
    fi
    LIST[$name]="$out/tests.list"
    QEMU[$name]="qemu-system-arm -M $runner -cpu $arg -nographic -monitor none -serial none -semihosting-config enable=on,target=native -kernel"
    RUNNER[$name]="timeout 900 ${QEMU[$name]}"
  fi
  if [ $rc -ne 0 ] || [ ! -s "${LIST[$name]}" ]; then
    BUILD_FAILED[$name]=1
    echo "cross: $name: build FAILED ($LOG/$name.build.log):"
    grep -E 'error|Error|No such file' "$LOG/$name.build.log" | head -n 15 | sed 's/^/    /'
  else
    echo "cross: $name: built in $(( $(date +%s) - t0 )) s"
  fi
done

# ---- run: every (target, test program) pair is one job, CROSS_JOBS at a time; the slowest of
# the last run first, so the long emulated runs overlap -------------------------------------
run_one() { # name test
  local name=$1 t=$2 res="$LOG/$1/results"
  if [[ $name == cortex-m* ]]; then
    export CM_OUT="$BUILD_DIR/cortex-m/$name" CM_QEMU="${QEMU[$name]}" CM_CFLAGS="${CPUFLAGS[$name]}"
  fi
  TEST_RUNNER="${RUNNER[$name]}" OUT="$LOG/$name" PYTHON="${PYTHON:-/usr/bin/python3}" \
    bash .make/run-tests.sh "$t" >"$res/$(basename "$t").out" 2>&1
}
declare -A TESTS
jobs_list=() names=()
for t in "${TARGETS[@]}"; do
  read -r name kind _ <<<"$t"
  [[ " $selected " == *" $name "* ]] || continue
  [ -n "${BUILD_FAILED[$name]:-}" ] && continue
  TESTS[$name]="$(cat "${LIST[$name]}")"
  [ "$kind" = cm ] && TESTS[$name]+=$'\n'tests/cross/test_cm_checks.sh
  [ "$name" = cortex-m4 ] && TESTS[$name]+=$'\n'tests/cross/test_cm_stack.sh
  rm -rf "$LOG/$name/results"
  mkdir -p "$LOG/$name/results"
  while read -r test; do
    [ -n "$test" ] || continue
    prev=$(awk -v t="$(basename "$test")" '$1 == t {print $2}' "$LOG/$name.times" 2>/dev/null)
    jobs_list+=("${prev:-100000} $name $test")
  done <<<"${TESTS[$name]}"
done
while read -r _ name test; do
  [ -n "$name" ] || continue # no jobs (every build failed): printf still gives one empty line
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
  run_one "$name" "$test" &
done < <(printf '%s\n' "${jobs_list[@]}" | sort -k1,1nr)
wait

# ---- report: .make/cross-report.sh counts each target's results --------------------------------
for t in "${TARGETS[@]}"; do
  read -r name _ <<<"$t"
  [[ " $selected " == *" $name "* ]] || continue
  mkdir -p "$LOG/$name"
  if [ -n "${BUILD_FAILED[$name]:-}" ]; then
    : >"$LOG/$name/build-failed"
  else
    rm -f "$LOG/$name/build-failed"
    printf '%s\n' "${TESTS[$name]}" >"$LOG/$name/tests.list"
  fi
  names+=("$name")
done
echo "cross: $(( $(date +%s) - start )) s (DPM_STAT_DIVISOR=$DPM_STAT_DIVISOR, $JOBS parallel; logs in $LOG)"
bash "$(dirname "$0")/cross-report.sh" "$LOG" "${names[@]}"
