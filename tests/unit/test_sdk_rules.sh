#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The SDK's hard rules, checked on the built library rather than promised:
#   1. libdpm.a references no heap function (malloc, calloc, realloc, free);
#   2. libdpm.a defines no writable data (.data, .bss, common): no mutable globals;
#   3. sdk/ compiles with general-purpose registers only: no floating point anywhere;
#   4. the poison pragma really stops a heap call at compile time;
#   5. a mechanism's private header (sdk/src/mech/*_internal.h) is included only inside mech/:
#      the rest of the SDK reaches a mechanism through its ops (mech/mech_ops.h).
# Each checker also runs on a deliberately bad object to show it can fail.
set -uo pipefail
OUT=${OUT:-build/host}
NM=${NM:-nm}
CC=${CC:-gcc}
LIB="$OUT/libdpm.a"
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

heap_refs() { "$NM" -u "$1" 2>/dev/null | awk '{print $NF}' | grep -E '^(malloc|calloc|realloc|free)$' | sort -u; }
# Objects in writable sections (instrumentation of `make sanitize` / `make coverage` aside): .data, .bss, small data, thread-local, common. Const tables
# holding pointers sit in .data.rel.ro in position-independent builds: read-only after
# relocation (RELRO), and plain .rodata on devices, so they are not mutable state.
OBJDUMP=${OBJDUMP:-${NM%nm}objdump}
writable_syms() {
  "$OBJDUMP" -t "$1" 2>/dev/null |
    awk '$3 == "O" || $2 == "O" {
           for (i = 1; i <= NF; i++) if ($i ~ /^\./ || $i == "*COM*") { sec = $i; break }
           if ((sec ~ /^\.(s?data|s?bss|tdata|tbss)(\.|$)/ && sec !~ /^\.data\.rel\.ro/) || sec == "*COM*")
             print $NF
         }' | grep -vE '^(__odr_asan|__asan|__ubsan|__gcov|__llvm_gcov)' | sort -u
}

[ -f "$LIB" ] || { echo "not ok 1 - $LIB missing (build first)"; exit 1; }

bad=$(heap_refs "$LIB"); tap "$([ -z "$bad" ]; echo $?)" "libdpm.a references no heap function${bad:+ (found: $bad)}"
bad=$(writable_syms "$LIB"); tap "$([ -z "$bad" ]; echo $?)" "libdpm.a defines no writable data${bad:+ (found: $bad)}"

# Negative controls: an object that breaks both rules must be flagged by the same checkers.
cat >"$work/bad.c" <<'C'
#include <stdlib.h>
int counter;
static int hidden = 3;
int *grab(void) { counter += hidden++; return malloc(4); }
C
"$CC" -c "$work/bad.c" -o "$work/bad.o" && ar rcs "$work/libbad.a" "$work/bad.o"
tap "$([ -n "$(heap_refs "$work/libbad.a")" ]; echo $?)" "heap checker flags a library that calls malloc"
tap "$([ "$(writable_syms "$work/libbad.a" | wc -l)" -ge 2 ]; echo $?)" "writable-data checker flags a global and a static"

# 3. No floating point: recompile every sdk/ source with FP registers forbidden (x86, ARM64).
case "$("$CC" -dumpmachine)" in
  x86_64*|i?86*|aarch64*) nofp=-mgeneral-regs-only ;;
  *) nofp="" ;;
esac
# (the SDK's sources: sdk/sources.mk's list, as every build compiles them)
sdk_srcs=$(make -s --no-print-directory print-sdk-srcs) || { echo "# make print-sdk-srcs failed"; sdk_srcs=""; }
tap "$([ -n "$sdk_srcs" ]; echo $?)" "make print-sdk-srcs lists the SDK's sources"
if [ -n "$nofp" ]; then
  rc=0
  for src in $sdk_srcs "${BUILD_DIR:-build}"/src/nanopb/pb_*.c; do
    "$CC" -std=c99 -O2 $nofp -Isdk/include -Iport/include -Isdk/src/internal -Isdk/src \
      -Isdk/proto -isystem "${BUILD_DIR:-build}/src/nanopb" \
      -c "$src" -o "$work/fp.o" 2>"$work/fp.log" || { rc=1; echo "# float in $src:"; sed 's/^/#   /' "$work/fp.log" | head -5; }
  done
  tap "$rc" "sdk/ and the nanopb runtime compile without floating-point registers ($nofp)"
  echo 'double half(double x) { return x / 2; }' >"$work/fp_bad.c"
  "$CC" -std=c99 -O2 $nofp -c "$work/fp_bad.c" -o "$work/fp_bad.o" 2>/dev/null
  tap "$([ $? -ne 0 ]; echo $?)" "the no-float check rejects code that uses double"
fi
bad=$(grep -l '<math\.h>' $sdk_srcs sdk/src/*/*.h 2>/dev/null)
tap "$([ -z "$bad" ]; echo $?)" "no math.h in sdk/src${bad:+ (found in: $bad)}"

# 4. The poison pragma in dpm_internal.h turns a heap call into a compile error.
printf '#include "dpm_internal.h"\nvoid *f(void);\nvoid *f(void) { return malloc(1); }\n' >"$work/poison.c"
"$CC" -std=c99 -Isdk/include -Isdk/src/internal -c "$work/poison.c" -o "$work/poison.o" 2>/dev/null
tap "$([ $? -ne 0 ]; echo $?)" "dpm_internal.h poisons malloc at compile time"

# 5. mech/*_internal.h stays inside sdk/src/mech/ (report/ used to include fedauc_internal.h).
# private_mech_includes ROOT: every include of a mechanism's private header outside ROOT/mech
private_mech_includes() {
  grep -rnE '^#include "mech/[a-z0-9_]+_internal\.h"' "$1" --include='*.[ch]' | grep -v "^$1/mech/"
}
bad=$(private_mech_includes sdk/src)
tap "$([ -z "$bad" ]; echo $?)" "mech/*_internal.h included only inside sdk/src/mech${bad:+ (found: $(echo "$bad" | head -3 | tr '\n' ' '))}"
mkdir -p "$work/src"
cp -r sdk/src/. "$work/src/"
printf '#include "mech/fedauc_internal.h"\n' >"$work/src/report/planted.c"
private_mech_includes "$work/src" | grep -q 'report/planted.c'
tap $? "negative control: a report/ file including mech/fedauc_internal.h is found"

echo "1..$n"
exit $failed
