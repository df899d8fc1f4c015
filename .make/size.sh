#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make size: flash, static RAM and worst-case stack of the SDK on a Cortex-M4 (Thumb-2, -Os,
# soft float, newlib-nano), per module, for four builds:
#   tuple_only   only the tuple mechanisms (DPM_MECH_ROC_HIST/DPAUC/FEDAUC/USTAT 0), and no
#                two-aggregator mode (DPM_VDAF 0)
#   tuple_min    tuple_only without tuple_ml (DPM_MECH_TUPLE_ML 0: no Laplace sampler) and
#                without the SDK's upload (DPM_UPLOAD 0: the app posts the outbox's records and
#                gives campaigns as structs; rooted at DEVICE_API_MIN): the smallest tuple
#                build, which carries issue 32's budgets (16 KB flash, 1 KB held RAM, 2 KB stack)
#   default      the default configuration
#   default+tls  default + port/tls with Mbed TLS 3.6 under the device config
#   default+lean_tls  default without the two-aggregator mode (DPM_VDAF 0, which the lean
#                profile requires) + port/tls under the lean TLS 1.3-only profile
#                (dpm_mbedtls_device_lean.h); budget 120 KiB of flash (issue 32)
#   default+lean_aes_tls  the same with the lean profile's AES-128-GCM variant (reported only)
#   default+tls+dap  default+tls + the two-aggregator mode (Prio3 sharding, DAP reports, HPKE
#                sealing); its flash beyond default+tls is what the mode adds (budget 16 KB)
#   default+tls+dap_shapes  the same with only the Prio3 variants of the campaigns' shapes
#                (issue 30: Histogram and SumVec; DPM_VDAF_FIELD64=0, DPM_VDAF_MULTIHOT=0) and
#                without the hybrid's label RR (DPM_DAP_LABEL_RR=0): what a device with those
#                tasks adds (the same budget)
#   default+tls+dap_shapes+label_rr  dap_shapes with the label RR (issue 31: tasks with
#                DPM_DAP_EXT_LOCAL_LABEL_RR): its cost is the difference (reported only)
# Each build is one image rooted at the device API below (what a firmware calls: dpm_device_*,
# the SDK's RAM storage; every public function of port/tls), linked with --gc-sections, plus
# the TRNG hook of port/cortex-m (what the SDK's function pointers reach on a device). Functions
# only a collector or a test calls (report decode, campaign encode, the raw samplers, the
# low-level report calls) are not rooted; what they pull in anyway is counted. The tuple builds'
# stack comes from a second image that also links the port's production RNG (below) and adds
# an interrupt allowance; tests/cross/test_cm_stack.sh (make cross) checks the figure against a
# painted stack under QEMU. .make/size.py
# reads the map, the -fstack-usage /
# -fcallgraph-info=su output and the disassembly, prints the table and writes
# $BUILD_DIR/size.json. The TLS arena is measured, not assumed: the device-config client of
# tests/unit/test_mbedtls_device_config.sh runs full TLS 1.3 and 1.2 sessions on 32-bit ARM
# (armhf under qemu-user: the pointer and word sizes of a Cortex-M) and bisects the smallest arena.
set -euo pipefail
BUILD_DIR=${BUILD_DIR:-build}
MAKE=${MAKE:-make}
PYTHON=${PYTHON:-/usr/bin/python3}
JOBS=$(nproc)
SIZE="$BUILD_DIR/size"
CPU="-mcpu=cortex-m4 -mthumb -mfloat-abi=soft"
ANALYSIS="-fstack-usage -fcallgraph-info=su"
MBED_OUT="$BUILD_DIR/mbedtls/cortex-m4-size"
MBED_LEAN="$BUILD_DIR/mbedtls/cortex-m4-size-lean"
MBED_LEAN_AES="$BUILD_DIR/mbedtls/cortex-m4-size-lean-aes"
# DEVICE_API, OTHER_API (the default build's other report kinds), REPORT_CALLS, TUPLE_ONLY,
# TUPLE_MIN (the tuple builds' flags)
. .make/device_api.sh
mkdir -p "$SIZE"

for tool in arm-none-eabi-gcc:gcc-arm-none-eabi qemu-arm:qemu-user \
            arm-linux-gnueabihf-gcc:gcc-arm-linux-gnueabihf cmake:cmake; do
  command -v "${tool%%:*}" >/dev/null 2>&1 ||
    { echo "make size: missing ${tool%%:*} (Debian package ${tool#*:}; make cross-deps)" >&2; exit 1; }
done

echo "size: building the SDK for Cortex-M4 (-Os) and Mbed TLS with the device, lean and lean_aes profiles"
cm() { # OUT EXTRA_CFLAGS targets...
  local out=$1 extra=$2; shift 2
  $MAKE --no-print-directory -f .make/cortex-m.mk -j"$JOBS" CM=cortex-m4 OPT=-Os BUILD_DIR="$BUILD_DIR" \
    OUT="$out" EXTRA_CFLAGS="$ANALYSIS $extra" "$@" >"$out.log" 2>&1 ||
    { tail -n 20 "$out.log"; echo "make size: the $out build failed" >&2; exit 1; }
}
DAP_SHAPES_RR="-DDPM_VDAF_FIELD64=0 -DDPM_VDAF_MULTIHOT=0"
DAP_SHAPES="$DAP_SHAPES_RR -DDPM_DAP_LABEL_RR=0"
mkdir -p "$SIZE/tuple_only" "$SIZE/tuple_min" "$SIZE/default" "$SIZE/default_lean" "$SIZE/default_lean_aes" \
  "$SIZE/dap_shapes" "$SIZE/dap_shapes_rr"
cm "$SIZE/tuple_only" "$TUPLE_ONLY" lib state drbg "$SIZE/tuple_only/libdpm_cm.a"
cm "$SIZE/tuple_min" "$TUPLE_MIN" lib state drbg "$SIZE/tuple_min/libdpm_cm.a"
cm "$SIZE/default" "" lib state tls "$SIZE/default/libdpm_cm.a"
cm "$SIZE/default_lean" "-DDPM_VDAF=0" MBEDTLS_CONFIG=device_lean lib tls "$SIZE/default_lean/libdpm_cm.a"
cm "$SIZE/default_lean_aes" "-DDPM_VDAF=0" MBEDTLS_CONFIG=device_lean_aes lib tls "$SIZE/default_lean_aes/libdpm_cm.a"
cm "$SIZE/dap_shapes" "$DAP_SHAPES" lib state tls "$SIZE/dap_shapes/libdpm_cm.a"
cm "$SIZE/dap_shapes_rr" "$DAP_SHAPES_RR" lib state tls "$SIZE/dap_shapes_rr/libdpm_cm.a"
mbed() { # NAME OUT CONFIG
  MBEDTLS_SRC="$BUILD_DIR/src/mbedtls" bash .make/build-mbedtls.sh "$1" "$2" \
    "$PWD/port/tls/config/$3" -DCMAKE_SYSTEM_NAME=Generic -DCMAKE_SYSTEM_PROCESSOR=arm \
    -DCMAKE_C_COMPILER=arm-none-eabi-gcc -DCMAKE_TRY_COMPILE_TARGET_TYPE=STATIC_LIBRARY \
    -DCMAKE_POSITION_INDEPENDENT_CODE=OFF -DCMAKE_BUILD_TYPE=MinSizeRel \
    "-DCMAKE_C_FLAGS=$CPU -ffunction-sections -fdata-sections $ANALYSIS" | sed 's/^deps:/size:/'
}
mbed cortex-m4-size "$MBED_OUT" dpm_mbedtls_device.h
mbed cortex-m4-size-lean "$MBED_LEAN" dpm_mbedtls_device_lean.h
mbed cortex-m4-size-lean-aes "$MBED_LEAN_AES" dpm_mbedtls_device_lean_aes.h

# link NAME OUT "ROOTS" LIBS...: an image rooted at ROOTS (each must exist: a renamed function
# must not shrink the figures silently), every dpm_device_* function, every global function of
# port/tls (if linked) and the port's TRNG hook; nothing else.
link() {
  local name=$1 out=$2 roots=$3; shift 3
  local defined flags=() f
  defined=$(arm-none-eabi-nm -g --defined-only "$@" 2>/dev/null | awk '$2 == "T" {print $3}' | sort -u)
  for f in $roots; do
    grep -qx "$f" <<<"$defined" || { echo "make size: $f is not in the SDK any more: update .make/device_api.sh" >&2; exit 1; }
    flags+=("-Wl,--undefined=$f")
  done
  for f in $(grep -E "^(dpm_tls_|$DEVICE_PREFIX)" <<<"$defined" | grep -vE "^$DAP_PREFIX"); do
    flags+=("-Wl,--undefined=$f")
  done
  if [[ " $roots " == *" dpm_device_dap_accept_task "* ]]; then # the two-aggregator build
    for f in $(grep -E "^$DAP_PREFIX" <<<"$defined"); do flags+=("-Wl,--undefined=$f"); done
  fi
  arm-none-eabi-gcc $CPU --specs=nano.specs --specs=nosys.specs -nostartfiles -Tport/cortex-m/mps2.ld \
    -Wl,-e,dpm_strerror -Wl,--gc-sections -Wl,--emit-relocs -Wl,--no-warn-rwx-segments \
    -Wl,-Map="$SIZE/$name.map" -o "$SIZE/$name.elf" "${flags[@]}" \
    -Wl,--undefined=dpm_cm_trng "$@" "$out/obj/port/cortex-m/trng.o" -lc -lgcc
}
link tuple_only "$SIZE/tuple_only" "$DEVICE_API" "$SIZE/tuple_only/libdpm.a"
link tuple_min "$SIZE/tuple_min" "$DEVICE_API_MIN" "$SIZE/tuple_min/libdpm.a"
# The tuple builds' stack is measured on the same image with the port's production random
# source linked (port/cortex-m/ctr_drbg.c: CTR_DRBG over Mbed TLS's entropy collector and the
# TRNG hook, device config), the hook a firmware gives the SDK; flash and RAM stay the SDK's.
for b in tuple_only tuple_min; do
  roots=$DEVICE_API; [ $b = tuple_min ] && roots=$DEVICE_API_MIN
  link $b+rng "$SIZE/$b" "$roots dpm_cm_drbg_init dpm_cm_drbg" "$SIZE/$b/obj/port/cortex-m/ctr_drbg.o" \
    "$SIZE/$b/libdpm.a" "$MBED_OUT/library/libmbedcrypto.a"
done
link default "$SIZE/default" "$DEVICE_API $OTHER_API" "$SIZE/default/libdpm.a"
link default+tls "$SIZE/default" "$DEVICE_API $OTHER_API" "$SIZE/default/libdpm_tls.a" "$SIZE/default/libdpm.a" \
  "$MBED_OUT/library/libmbedtls.a" "$MBED_OUT/library/libmbedx509.a" "$MBED_OUT/library/libmbedcrypto.a"
link default+lean_tls "$SIZE/default_lean" "$DEVICE_API $OTHER_API" "$SIZE/default_lean/libdpm_tls.a" \
  "$SIZE/default_lean/libdpm.a" "$MBED_LEAN/library/libmbedtls.a" "$MBED_LEAN/library/libmbedx509.a" \
  "$MBED_LEAN/library/libmbedcrypto.a"
link default+lean_aes_tls "$SIZE/default_lean_aes" "$DEVICE_API $OTHER_API" \
  "$SIZE/default_lean_aes/libdpm_tls.a" "$SIZE/default_lean_aes/libdpm.a" "$MBED_LEAN_AES/library/libmbedtls.a" \
  "$MBED_LEAN_AES/library/libmbedx509.a" "$MBED_LEAN_AES/library/libmbedcrypto.a"
link default+tls+dap "$SIZE/default" "$DEVICE_API $OTHER_API $DAP_API" "$SIZE/default/libdpm_tls.a" \
  "$SIZE/default/libdpm.a" "$MBED_OUT/library/libmbedtls.a" "$MBED_OUT/library/libmbedx509.a" \
  "$MBED_OUT/library/libmbedcrypto.a"
link default+tls+dap_shapes "$SIZE/dap_shapes" "$DEVICE_API $OTHER_API $DAP_API" \
  "$SIZE/dap_shapes/libdpm_tls.a" "$SIZE/dap_shapes/libdpm.a" "$MBED_OUT/library/libmbedtls.a" \
  "$MBED_OUT/library/libmbedx509.a" "$MBED_OUT/library/libmbedcrypto.a"
link default+tls+dap_shapes+label_rr "$SIZE/dap_shapes_rr" "$DEVICE_API $OTHER_API $DAP_API" \
  "$SIZE/dap_shapes_rr/libdpm_tls.a" "$SIZE/dap_shapes_rr/libdpm.a" "$MBED_OUT/library/libmbedtls.a" \
  "$MBED_OUT/library/libmbedx509.a" "$MBED_OUT/library/libmbedcrypto.a"

# The arena: smallest that completes a TLS 1.3 and a TLS 1.2 session, measured on 32-bit ARM.
# (The lean profile's run is also its QEMU session test: TLS 1.3 with and without a client
# certificate, refusals of TLS 1.2-only and RSA servers, on armhf under qemu-arm.)
measure_arena() { # PROFILE LOG VERSIONS...: kept (as a cache) only if every version was measured
  local profile=$1 log=$2 v; shift 2
  if [ -s "$log" ] && [ ! port/tls/tls_client.c -nt "$log" ] &&
     ! find port/tls/config -name 'dpm_mbedtls_device*.h' -newer "$log" | grep -q .; then
    return 0
  fi
  echo "size: measuring the TLS arena of the $profile profile on armhf (qemu-arm): real sessions against openssl s_server"
  PROFILE=$profile CC=arm-linux-gnueabihf-gcc NM=arm-linux-gnueabihf-nm RUNNER=qemu-arm BUILD_DIR="$BUILD_DIR" \
    DEVICE_CHECK=$profile-check-armhf \
    MBEDTLS_CMAKE_ARGS="-DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=arm -DCMAKE_C_COMPILER=arm-linux-gnueabihf-gcc" \
    bash tests/unit/test_mbedtls_device_config.sh >"$log.new" 2>&1 || true
  for v in "$@"; do
    if ! grep -q "^# smallest arena for a TLS $v session" "$log.new"; then
      mv "$log.new" "${log%.log}.failed.log"; rm -f "$log"
      echo "size: the $profile arena measurement failed: ${log%.log}.failed.log" >&2
      return 0
    fi
  done
  mv "$log.new" "$log"
}
arena_log="$SIZE/arena.log"
lean_arena_log="$SIZE/arena_lean.log"
measure_arena device "$arena_log" '1\.2' '1\.3'
measure_arena device_lean "$lean_arena_log" '1\.3' '1\.3+cert'

# x86_64, the build machine (issue 13's targets): the SDK as the Makefile builds it (-O2), with
# -fstack-usage / -fcallgraph-info=su, for the one-call stack (.make/stack_host.py), and the
# sizes of the state an app holds (size_state.c, whose compile-time budgets also apply here).
HOST_FLAGS="-std=c99 -O2 -Isdk/include -Iport/include -Isdk/proto -isystem $BUILD_DIR/src/nanopb
  -Isdk/src/internal -Isdk/src -ffunction-sections -fdata-sections $ANALYSIS"
SDK_SRCS=$($MAKE -s --no-print-directory print-sdk-srcs) ||
  { echo "make size: make print-sdk-srcs failed" >&2; exit 1; }
host_build() { # NAME EXTRA_CFLAGS
  local dir="$SIZE/host-$1" f b
  rm -rf "$dir"; mkdir -p "$dir/obj"
  for f in $SDK_SRCS "$BUILD_DIR"/src/nanopb/pb_{common,encode,decode}.c; do
    b="$dir/obj/$(basename "${f%.c}")"
    gcc $HOST_FLAGS $2 -c "$f" -o "$b.o" -dumpbase "$b" ||
      { echo "make size: the host $1 build failed on $f" >&2; exit 1; }
  done
  gcc $HOST_FLAGS $2 -c tests/cross/size_state.c -o "$dir/size_state.o" ||
    { echo "make size: host $1 state over its budget (tests/cross/size_state.c)" >&2; exit 1; }
}
echo "size: building the SDK for x86_64 (-O2) with -fstack-usage"
host_build tuple_only "$TUPLE_ONLY"
host_build default ""
# Every analysis below prints a "MISSED <build> <what>: ..." line per budget it finds missed;
# they are repeated at the end, and any of them (or a figure not measured) makes the exit 1.
status=0
log="$SIZE/analysis.log"
: >"$log"
ONE_CALL_BUDGET=1536 # issue 13: the tuple-only one-call path on x86_64
HELD_BUDGET=1024     # issue 13: what an app holds, tuple-only, x86_64
IMAGE="$DEVICE_API $DEVICE_PREFIX* !$DAP_PREFIX*" # the local-DP app (no two-aggregator calls)
echo
{
  echo "x86_64 one-call stack, tuple_only (budget $ONE_CALL_BUDGET bytes):"
  $PYTHON .make/stack_host.py "$SIZE/host-tuple_only/obj" dpm_device_report_tuple \
    --image "$IMAGE" --budget $ONE_CALL_BUDGET --build "x86_64 tuple_only" \
    --json "$BUILD_DIR/size_stack_host_tuple_only.json" 2>&1 || status=1
  echo "x86_64 one-call stack, default:"
  $PYTHON .make/stack_host.py "$SIZE/host-default/obj" $REPORT_CALLS \
    --image "$IMAGE $OTHER_API" --build "x86_64 default" \
    --json "$BUILD_DIR/size_stack_host_default.json" 2>&1 || status=1
  $PYTHON .make/memory_table.py --out "$BUILD_DIR/size_memory.json" \
    --budget "x86_64 tuple_only=$HELD_BUDGET" \
    "x86_64 tuple_only:nm:$SIZE/host-tuple_only/size_state.o" \
    "x86_64 default:nm:$SIZE/host-default/size_state.o" \
    "cortex-m4 tuple_only:arm-none-eabi-nm:$SIZE/tuple_only/size_state.o" \
    "cortex-m4 default:arm-none-eabi-nm:$SIZE/default/size_state.o" 2>&1 || status=1

  $PYTHON .make/size.py --out "$BUILD_DIR/size.json" --arena-log "$arena_log" --lean-arena-log "$lean_arena_log" --one-call "$REPORT_CALLS" \
    --rng-builds tuple_only,tuple_min \
    --build "tuple_only:$SIZE/tuple_only.elf:$SIZE/tuple_only.map:$SIZE/tuple_only/size_state.o:$SIZE/tuple_only/obj,$MBED_OUT/library:$SIZE/tuple_only+rng.elf:$SIZE/tuple_only+rng.map" \
    --build "tuple_min:$SIZE/tuple_min.elf:$SIZE/tuple_min.map:$SIZE/tuple_min/size_state.o:$SIZE/tuple_min/obj,$MBED_OUT/library:$SIZE/tuple_min+rng.elf:$SIZE/tuple_min+rng.map" \
    --build "default:$SIZE/default.elf:$SIZE/default.map:$SIZE/default/size_state.o:$SIZE/default/obj" \
    --build "default+lean_tls:$SIZE/default+lean_tls.elf:$SIZE/default+lean_tls.map:$SIZE/default_lean/size_state_tls.o:$SIZE/default_lean/obj,$MBED_LEAN/library" \
    --build "default+lean_aes_tls:$SIZE/default+lean_aes_tls.elf:$SIZE/default+lean_aes_tls.map:$SIZE/default_lean_aes/size_state_tls.o:$SIZE/default_lean_aes/obj,$MBED_LEAN_AES/library" \
    --build "default+tls+dap:$SIZE/default+tls+dap.elf:$SIZE/default+tls+dap.map:$SIZE/default/size_state_tls.o:$SIZE/default/obj,$MBED_OUT/library,$MBED_OUT/3rdparty" \
    --build "default+tls+dap_shapes:$SIZE/default+tls+dap_shapes.elf:$SIZE/default+tls+dap_shapes.map:$SIZE/dap_shapes/size_state_tls.o:$SIZE/dap_shapes/obj,$MBED_OUT/library,$MBED_OUT/3rdparty" \
    --build "default+tls+dap_shapes+label_rr:$SIZE/default+tls+dap_shapes+label_rr.elf:$SIZE/default+tls+dap_shapes+label_rr.map:$SIZE/dap_shapes_rr/size_state_tls.o:$SIZE/dap_shapes_rr/obj,$MBED_OUT/library,$MBED_OUT/3rdparty" \
    --build "default+tls:$SIZE/default+tls.elf:$SIZE/default+tls.map:$SIZE/default/size_state_tls.o:$SIZE/default/obj,$MBED_OUT/library" \
    2>&1 || status=1
} >"$log"
cat "$log"
missed=$(grep '^MISSED ' "$log" || true)
echo
if [ -n "$missed" ]; then
  echo "make size: $(wc -l <<<"$missed") budget(s) missed:"
  sed 's/^MISSED /  /' <<<"$missed"
  exit 1
fi
[ $status = 0 ] || { echo "make size: a figure could not be measured (above)" >&2; exit 1; }
echo "make size: every budget met"
