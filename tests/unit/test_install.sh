#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make install works and an installed tree is usable the ways sdk/README.md "Using the SDK in your
# build" shows: examples/hello built three ways against the installed tree (a plain Makefile,
# pkg-config, CMake find_package) and two ways from the source checkout (sdk/sources.mk, CMake
# add_subdirectory), a posix port consumer through pkg-config, find_package and
# add_subdirectory; each binary runs and its output is checked. Plus DESTDIR staging, the version check of the CMake
# package and the installed options. Env: BUILD_DIR, CC.
set -uo pipefail
BUILD_DIR=${BUILD_DIR:-build}
CC=${CC:-gcc}
TOP=$(pwd)
# The programs every build makes, and what each must print.
CONSUMER=examples/hello/main.c
CONSUMER_SAYS='^hello: one tuple_mr report of [0-9]+ bytes queued, epsilon spent 1\.000000$'
POSIX_CONSUMER=tests/install/posix_consumer.c
POSIX_SAYS='^posix consumer: one report of [0-9]+ bytes queued, drawn from the port.s CTR_DRBG$'
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
P=$work/prefix
cp "$CONSUMER" "$work/consumer.c"
cp "$POSIX_CONSUMER" "$work/posix_consumer.c"
submake() { env -u MAKEFLAGS -u MAKELEVEL make --no-print-directory "$@"; }
show() { sed 's/^/# /' "$1" | tail -n "${2:-8}"; }
# Global pb_ symbols of an archive (none when nanopb is kept private), and its dpm_pb_ ones.
pb_leaks() { nm -g "$1" | awk 'NF >= 2 && $NF ~ /^pb_/ {print $NF}'; }
pb_private() { nm -g --defined-only "$1" | awk '$NF ~ /^dpm_pb_/' | wc -l; }

# ---- make install ----------------------------------------------------------------------------
submake -j2 BUILD_DIR="$BUILD_DIR" install PREFIX="$P" >"$work/install.log" 2>&1
tap $? "make install PREFIX=<tmp>"
grep '^install: dpmetrics' "$work/install.log" | sed 's/^/# /'
missing=""
for f in include/dpm/dpm.h include/dpm/port_posix.h include/dpm/build_config.h lib/libdpm.a \
  lib/libdpm_posix.a lib/libdpm_mbedtls.a lib/libdpm_mbedx509.a lib/libdpm_mbedcrypto.a \
  lib/pkgconfig/dpmetrics.pc lib/pkgconfig/dpmetrics-posix.pc \
  lib/cmake/dpmetrics/dpmetricsConfig.cmake lib/cmake/dpmetrics/dpmetricsConfigVersion.cmake; do
  [ -f "$P/$f" ] && grep -q "^install: $P/$f\$" "$work/install.log" || missing="$missing $f"
done
[ -z "$missing" ]
tap $? "it installs and names headers, libraries, .pc files, CMake package${missing:+ (missing:$missing)}"
[ -x "$P/bin/dpm-collector" ] && [ -x "$P/bin/dpm-sim" ] && "$P/bin/dpm-collector" --version | grep -q '^dpm-collector ' &&
  [ -f "$P/share/dpmetrics/collector/dpm-collector.service" ] &&
  grep -q "^ExecStart=/usr/local/bin/dpm-collector " "$P/share/dpmetrics/collector/dpm-collector.service"
tap $? "it installs dpm-collector and dpm-sim in PREFIX/bin, where the systemd unit (installed beside) runs them with PREFIX=/usr/local"
[ ! -e "$P/include/dpm.pb.h" ] && [ ! -e "$P/include/pb.h" ] && [ ! -d "$P/include/mbedtls" ]
tap $? "no nanopb or Mbed TLS header is installed (the public headers need none)"
[ -f "$P/lib/libdpm.a" ] && [ -z "$(pb_leaks "$P/lib/libdpm.a")" ] && [ "$(pb_private "$P/lib/libdpm.a")" -gt 0 ]
tap $? "the installed libdpm.a exports no pb_ symbol"

submake BUILD_DIR="$BUILD_DIR" install PREFIX=/opt/dpmetrics DESTDIR="$work/stage" >"$work/stage.log" 2>&1 &&
  [ -f "$work/stage/opt/dpmetrics/lib/libdpm.a" ] && [ ! -e /opt/dpmetrics/lib/libdpm.a ] &&
  grep -q '^prefix=/opt/dpmetrics$' "$work/stage/opt/dpmetrics/lib/pkgconfig/dpmetrics.pc"
tap $? "DESTDIR stages the tree under DESTDIR, and the .pc names the final PREFIX"

# ---- three builds against the installed tree ---------------------------------------------------
check_run() { # NAME BINARY: run it; it must succeed and print what it is expected to
  "$2" >"$work/$1.out" 2>&1
  local rc=$? says=$CONSUMER_SAYS
  case $1 in posix-*) says=$POSIX_SAYS ;; esac
  show "$work/$1.out" 2
  [ $rc = 0 ] && grep -Eq "$says" "$work/$1.out"
  tap $? "$1: the binary runs and makes its report"
}

cat >"$work/Makefile" <<EOF
# A plain Makefile project using the installed headers and libraries.
CFLAGS = -std=c99 -Wall -Wextra -Werror -I$P/include
LDLIBS = -L$P/lib -ldpm
consumer: consumer.c
EOF
submake -C "$work" CC="$CC" consumer >"$work/make.log" 2>&1
tap $? "plain Makefile build against the installed tree"
show "$work/make.log" 3
check_run makefile "$work/consumer"

export PKG_CONFIG_PATH=$P/lib/pkgconfig
flags=$(pkg-config --cflags --libs dpmetrics) &&
  "$CC" ${LDFLAGS:-} -std=c99 -Wall -Werror "$work/consumer.c" $flags -o "$work/consumer-pc" 2>"$work/pc.err"
tap $? "pkg-config build: cc consumer.c \$(pkg-config --cflags --libs dpmetrics)"
echo "# pkg-config --cflags --libs dpmetrics: ${flags:-}"
check_run pkg-config "$work/consumer-pc"
pflags=$(pkg-config --cflags --libs dpmetrics-posix) &&
  "$CC" ${LDFLAGS:-} -std=c99 -Wall -Werror "$work/posix_consumer.c" $pflags -o "$work/posix-pc" 2>"$work/ppc.err"
tap $? "pkg-config build of the posix port consumer (dpmetrics-posix)"
show "$work/ppc.err" 3
check_run posix-pkg-config "$work/posix-pc"

mkdir -p "$work/cm"
cat >"$work/cm/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.13)
project(consumer C)
find_package(dpmetrics 0.0 REQUIRED)
add_executable(consumer ../consumer.c)
target_link_libraries(consumer PRIVATE dpmetrics::dpm)
add_executable(posix_consumer ../posix_consumer.c)
target_link_libraries(posix_consumer PRIVATE dpmetrics::posix)
EOF
{ cmake -S "$work/cm" -B "$work/cm/b" -DCMAKE_C_COMPILER="$CC" -DCMAKE_PREFIX_PATH="$P" &&
  cmake --build "$work/cm/b" -j2; } >"$work/cm.log" 2>&1
tap $? "CMake build with find_package(dpmetrics) against the installed tree"
show "$work/cm.log" 4
check_run cmake "$work/cm/b/consumer"
check_run posix-cmake "$work/cm/b/posix_consumer"

# ---- two builds from the source checkout --------------------------------------------------
mkdir -p "$work/src"
cat >"$work/src/Makefile" <<EOF
# A Makefile project compiling the SDK from the checkout through sdk/sources.mk.
DPM_ROOT := $TOP
DPM_NANOPB_DIR := $TOP/$BUILD_DIR/src/nanopb
include \$(DPM_ROOT)/sdk/sources.mk
CFLAGS = -std=c99 -O1 -Wall
dpm_objs := \$(patsubst \$(DPM_ROOT)/%.c,obj/%.o,\$(DPM_SDK_SRCS)) \\
            \$(patsubst \$(DPM_NANOPB_DIR)/%.c,obj/nanopb/%.o,\$(DPM_NANOPB_SRCS))
obj/nanopb/%.o: \$(DPM_NANOPB_DIR)/%.c
	@mkdir -p \$(@D) && \$(CC) \$(CFLAGS) \$(DPM_CFLAGS) -c \$< -o \$@
obj/%.o: \$(DPM_ROOT)/%.c
	@mkdir -p \$(@D) && \$(CC) \$(CFLAGS) \$(DPM_CFLAGS) -c \$< -o \$@
consumer: ../consumer.c \$(dpm_objs)
	\$(CC) \$(CFLAGS) \$(DPM_APP_CFLAGS) \$^ -o \$@
EOF
submake -C "$work/src" -j2 CC="$CC" consumer >"$work/src.log" 2>&1
tap $? "Makefile build from source with sdk/sources.mk"
show "$work/src.log" 3
check_run sources.mk "$work/src/consumer"
# the same project without the nanopb runtime: an error that says what to do, not "pb.h: No
# such file" from the first SDK file compiled
submake -C "$work/src" -j2 CC="$CC" DPM_NANOPB_DIR="$work/no-nanopb" consumer \
  >"$work/src-nopb.log" 2>&1
[ $? -ne 0 ] && grep -q "no nanopb runtime in DPM_NANOPB_DIR=$work/no-nanopb" "$work/src-nopb.log" &&
  grep -q "make deps" "$work/src-nopb.log" && ! grep -q "No such file" "$work/src-nopb.log"
tap $? "sources.mk without the nanopb runtime stops at once, naming the directory and make deps"
show "$work/src-nopb.log" 3

mkdir -p "$work/sub"
cat >"$work/sub/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.13)
project(consumer C)
add_subdirectory($TOP/sdk dpmetrics-sdk)
add_subdirectory($TOP/port dpmetrics-port)
add_executable(consumer ../consumer.c)
target_link_libraries(consumer PRIVATE dpmetrics::dpm)
add_executable(posix_consumer ../posix_consumer.c)
target_link_libraries(posix_consumer PRIVATE dpmetrics::posix)
EOF
{ cmake -S "$work/sub" -B "$work/sub/b" -DCMAKE_C_COMPILER="$CC" \
    -DDPM_NANOPB_DIR="$TOP/$BUILD_DIR/src/nanopb" -DDPM_MBEDTLS_DIR="$TOP/$BUILD_DIR/mbedtls/host" \
    -DDPM_MBEDTLS_INCLUDE_DIR="$TOP/$BUILD_DIR/src/mbedtls/include" &&
  cmake --build "$work/sub/b" -j2; } >"$work/sub.log" 2>&1
tap $? "CMake build from source with add_subdirectory(sdk) and add_subdirectory(port)"
show "$work/sub.log" 4
check_run add_subdirectory "$work/sub/b/consumer"
check_run posix-add_subdirectory "$work/sub/b/posix_consumer"
sublib=$work/sub/b/dpmetrics-sdk/libdpm.a
[ -f "$sublib" ] && [ -z "$(pb_leaks "$sublib")" ] && [ "$(pb_private "$sublib")" -gt 0 ]
tap $? "the add_subdirectory libdpm.a keeps nanopb private too (dpm_pb_*)"

# ---- what the package refuses -----------------------------------------------------------------
mkdir -p "$work/ver"
cat >"$work/ver/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.13)
project(ver NONE)
find_package(dpmetrics 99.0 REQUIRED)
EOF
! cmake -S "$work/ver" -B "$work/ver/b" -DCMAKE_PREFIX_PATH="$P" >"$work/ver.log" 2>&1 &&
  grep -q 'compatible with requested version "99.0"' "$work/ver.log"
tap $? "find_package(dpmetrics 99.0) is refused by the version file"

"$CC" -std=c99 -Werror -DDPM_MAX_BINS=16 -I"$P/include" -fsyntax-only "$work/consumer.c" \
  2>"$work/redef.err"
rc=$?
grep -m1 'redefined' "$work/redef.err" | sed 's/^/# /'
[ $rc != 0 ] && grep -q '"DPM_MAX_BINS" redefined' "$work/redef.err"
tap $? "an app compiled with other DPM_* values than the installed library's is stopped (redefined)"

# The simulator-only entry points are not part of the installed API: no installed header
# declares dpm_receipt_unmetered (a receipt no ledger charged), and dpm/expert/simulator.h,
# which does, is not installed; in the source tree it stops a build without
# -DDPM_SIMULATOR_API (what host-sim and the tests set) at its #error.
cat >"$work/sim_api.c" <<'EOF2'
#include "dpm/expert/simulator.h"
int main(void)
{
    dpm_receipt_issuer_t iss = DPM_RECEIPT_ISSUER_INIT;
    dpm_receipt_t rc;
    dpm_mech_t m = {0};
    return (int)dpm_receipt_unmetered(&iss, &m, 0, &rc);
}
EOF2
! grep -rq "dpm_receipt_unmetered" "$P/include" && [ ! -e "$P/include/dpm/expert/simulator.h" ] &&
  ! "$CC" -std=c99 -Isdk/include -Isdk/proto -fsyntax-only "$work/sim_api.c" 2>"$work/simapi.err" &&
  grep -q "for simulators and tests" "$work/simapi.err" &&
  "$CC" -std=c99 -Werror=implicit-function-declaration -DDPM_SIMULATOR_API -Isdk/include \
    -Isdk/proto -fsyntax-only "$work/sim_api.c"
tap $? "no installed header declares dpm_receipt_unmetered; simulator.h needs -DDPM_SIMULATOR_API"

# The layout: the front door and its bits, the expert API in its folder, the SDK's own HTTP
# client not installed (an app posts with dpm_device_flush, the uploader or its own stack).
[ -f "$P/include/dpm/dpm.h" ] && [ -f "$P/include/dpm/campaign.h" ] &&
  [ -f "$P/include/dpm/bits/mech.h" ] && [ -f "$P/include/dpm/expert/noise.h" ] &&
  [ -f "$P/include/dpm/expert/uploader.h" ] && [ ! -e "$P/include/dpm/expert/http.h" ] &&
  [ ! -e "$P/include/dpm/expert/simulator.h" ] &&
  [ ! -e "$P/include/dpm/noise.h" ]
tap $? "headers: dpm/*.h the front door, dpm/bits/, dpm/expert/ without http.h and simulator.h"
for h in "$P"/include/dpm/expert/*.h; do
  printf '#include "dpm/expert/%s"\n' "$(basename "$h")"
done >"$work/expert_all.c"
"$CC" -std=c99 -Werror -I"$P/include" -fsyntax-only "$work/expert_all.c" 2>"$work/expert.err"
rc=$?
head -3 "$work/expert.err" | sed 's/^/# /'
tap $rc "every installed expert header compiles against the installed tree"

echo "1..$n"
exit $failed
