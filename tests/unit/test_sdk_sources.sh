#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# sdk/sources.mk is the one list of the SDK's sources (the Makefile, .make/cortex-m.mk, CMake
# through sdk/cmake/dpm_sources.cmake, and the scripts through `make print-sdk-srcs` read it).
# Checks that the list is exactly the files there (sdk/src/*/*.c and sdk/proto/*.c, port/posix
# and port/tls for DPM_POSIX_SRCS), naming any file missing from it or listed but absent, and
# that each reader sees the same list. Negative controls: a copy of sdk/ with an unlisted file,
# and one with a listed file removed, both fail with the file named.
set -uo pipefail
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# listed ROOT SDK|POSIX: the list as GNU make reads it from ROOT/sdk/sources.mk, relative to ROOT
listed() {
  printf 'DPM_SOURCES_LISTS_ONLY := 1\ninclude %s/sdk/sources.mk\nall:\n\t@printf "%%s\\n" $(DPM_%s_SRCS)\n' \
    "$1" "$2" | make -s --no-print-directory -f - all | sed "s|^$1/||"
}
# check_list ROOT SDK|POSIX GLOB...: the list equals the files the globs find (under ROOT);
# prints what differs, one line per file
check_list() {
  local root=$1 which=$2; shift 2
  listed "$root" "$which" | sort >"$work/listed"
  (cd "$root" && ls -d $* 2>/dev/null) | sort >"$work/present" # (globs expand in ROOT)
  comm -13 "$work/listed" "$work/present" | sed 's/^/missing from sdk\/sources.mk: /'
  comm -23 "$work/listed" "$work/present" | sed 's/^/listed in sdk\/sources.mk but not there: /'
  [ -s "$work/listed" ] || echo "sdk/sources.mk: no DPM_${which}_SRCS lines"
}
TOP=$(pwd)

out=$(check_list "$TOP" SDK 'sdk/src/*/*.c' 'sdk/proto/*.c')
printf '%s\n' "$out" | sed '/^$/d; s/^/# /'
tap "$([ -z "$out" ]; echo $?)" "sdk/sources.mk lists every sdk/src/*/*.c and sdk/proto/*.c, nothing else ($(listed "$TOP" SDK | wc -l) files)"
out=$(check_list "$TOP" POSIX 'port/posix/*.c' 'port/tls/*.c')
printf '%s\n' "$out" | sed '/^$/d; s/^/# /'
tap "$([ -z "$out" ]; echo $?)" "sdk/sources.mk's DPM_POSIX_SRCS is every port/posix/*.c and port/tls/*.c"

# The readers: the Makefile (and through it the scripts), CMake, the Cortex-M build.
listed "$TOP" SDK >"$work/want"
make -s --no-print-directory print-sdk-srcs >"$work/make"
tap "$(cmp -s "$work/want" "$work/make"; echo $?)" "make print-sdk-srcs prints sdk/sources.mk's list, in its order"
listed "$TOP" POSIX >"$work/want_posix"
make -s --no-print-directory print-posix-srcs >"$work/make_posix"
tap "$(cmp -s "$work/want_posix" "$work/make_posix"; echo $?)" "make print-posix-srcs prints DPM_POSIX_SRCS"
cat >"$work/read.cmake" <<EOF
include("$TOP/sdk/cmake/dpm_sources.cmake")
foreach(f IN LISTS DPM_SDK_SOURCES)
  message(STATUS "sdk \${f}")
endforeach()
foreach(f IN LISTS DPM_POSIX_SOURCES)
  message(STATUS "posix \${f}")
endforeach()
EOF
cmake -P "$work/read.cmake" >"$work/cmake.log" 2>&1
sed -n "s|^-- sdk $TOP/||p" "$work/cmake.log" >"$work/cmake_sdk"
sed -n "s|^-- posix $TOP/||p" "$work/cmake.log" >"$work/cmake_posix"
tap "$(cmp -s "$work/want" "$work/cmake_sdk" && cmp -s "$work/want_posix" "$work/cmake_posix"; echo $?)" \
  "sdk/cmake/dpm_sources.cmake reads the same two lists"
make -s --no-print-directory -f .make/cortex-m.mk OUT="$work/cm-out" -p -q lib 2>/dev/null |
  sed -n 's/^SDK_SRCS := //p' | tr ' ' '\n' | sed '/^$/d' >"$work/cm"
tap "$(cmp -s "$work/want" "$work/cm"; echo $?)" ".make/cortex-m.mk compiles the same list"
# No build file globs the SDK's sources any more (the list would drift again).
globs=$(grep -lE 'sdk/src/\*/\*\.c|src/\*/\*\.c' Makefile .make/cortex-m.mk .make/size.sh .make/coverage.py \
  sdk/CMakeLists.txt port/CMakeLists.txt port/zephyr/CMakeLists.txt port/esp-idf/CMakeLists.txt)
tap "$([ -z "$globs" ]; echo $?)" "no build file globs sdk/src itself${globs:+ (found in: $globs)}"

# Negative controls on a copy of sdk/: an unlisted file, then a listed file gone.
mkdir -p "$work/root" && cp -r sdk "$work/root/"
extra=unlisted.c # a name, not a path: the path check (test_paths.py) skips "$"
touch "$work/root/sdk/src/core/$extra"
out=$(check_list "$work/root" SDK 'sdk/src/*/*.c' 'sdk/proto/*.c')
tap "$([ "$out" = "missing from sdk/sources.mk: sdk/src/core/$extra" ]; echo $?)" \
  "negative control: an unlisted sdk/src file fails, named (${out:-nothing said})"
rm "$work/root/sdk/src/core/$extra" "$work/root/sdk/src/core/eps.c"
out=$(check_list "$work/root" SDK 'sdk/src/*/*.c' 'sdk/proto/*.c')
tap "$([ "$out" = "listed in sdk/sources.mk but not there: sdk/src/core/eps.c" ]; echo $?)" \
  "negative control: a listed file that is gone fails, named (${out:-nothing said})"

echo "1..$n"
exit $failed
