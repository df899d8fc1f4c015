#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Constant time, checked (tests/ct/ct_noise.c, ctgrind style; Prio3 in tests/ct/ct_vdaf.c, the
# two-aggregator device and aggregator path in tests/ct/ct_dap.c, below): binary RR, GRR and the
# fixed-draw Laplace, and Prio3's sharding, verification and aggregation (tests/ct/ct_vdaf.c,
# see the end), run under valgrind memcheck with their secret input's bits marked
# undefined; memcheck must report no conditional jump or move and no memory access that
# depends on them, over many inputs and random streams. Negative controls: a branch on the
# secret and a table lookup indexed by it must each be reported. Two checks legitimately test
# the secret and are accepted by their source text, nowhere else: GRR's argument check
# "x >= g->k" (public answer: valid) and fixed-draw Laplace's overflow test of the output.
# The SDK's noise sources are compiled here with the release flags (-O2), whatever variant of
# the build runs the suite: constant time is a property of optimised code, and valgrind cannot
# run the sanitizer variant.
set -uo pipefail
cd "$(dirname "$0")/../.."
CC=${CC:-gcc}
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

command -v valgrind >/dev/null
tap $? "valgrind is installed (make deps)"
[ -f /usr/include/valgrind/memcheck.h ]
tap $? "valgrind/memcheck.h is installed"
"$CC" -std=c99 -O2 -g -Wall -Wextra -Werror -D_DEFAULT_SOURCE -Isdk/include -Iport/include \
  -Isdk/src/internal -Isdk/src -Itests/support -o "$work/ct_noise" tests/ct/ct_noise.c \
  sdk/src/noise/*.c sdk/src/core/*.c tests/support/test_rng.c >"$work/cc.log" 2>&1
rc=$?
sed 's/^/# /' "$work/cc.log" | head -20
tap $rc "ct_noise builds with -O2 against the SDK's noise sources"

vg() { # mode -> log in $work/$1.log, status in $?
  valgrind --tool=memcheck --error-exitcode=99 --expensive-definedness-checks=yes \
    --track-origins=no "$work/ct_noise" "$1" >"$work/$1.log" 2>&1
}
errors() { grep -oE 'ERROR SUMMARY: [0-9]+ errors' "$work/$1.log" | awk '{print $3}'; }
# The source line (file:line) of the top frame of every secret-dependence error in a log.
sites() {
  awk '/depends on uninitialised value|Use of uninitialised value/ {want = 1; next}
       want && / at 0x/ {want = 0; if (match($0, /\([^()]*:[0-9]+\)$/)) print substr($0, RSTART + 1, RLENGTH - 2)}' \
    "$work/$1.log"
}
# The two declassification points (see tests/ct/ct_noise.c): a site is accepted only if its
# source line holds one of these expressions, in the file named.
allowed() { # file:line
  local file=${1%%:*} line=${1##*:} path text
  path=$(find sdk/src/noise -name "$file" | head -n 1)
  [ -n "$path" ] || return 1
  text=$(sed -n "${line}p" "$path")
  case "$file" in
    grr.c) [[ $text == *'x >= g->k'* ]] ;;
    laplace_fixed.c) [[ $text == *'^ sum)) >> 63'* ]] ;;
    *) return 1 ;;
  esac
}
for mode in rr grr laplace_fixed; do
  vg "$mode"
  total=$(errors "$mode")
  # memcheck prints each error context (site) once, then only counts it
  contexts=$(grep -oE 'ERROR SUMMARY: [0-9]+ errors from [0-9]+ contexts' "$work/$mode.log" | awk '{print $6}')
  bad=0 good=0
  while read -r site; do
    [ -n "$site" ] || continue
    if allowed "$site"; then
      good=$((good + 1))
      echo "# $mode: declassified check at $site"
    else
      bad=$((bad + 1))
      echo "# $mode: SECRET-DEPENDENT at $site"
    fi
  done < <(sites "$mode" | sort -u)
  [ "$bad" = 0 ] || grep -E 'depends on uninitialised|uninitialised value|at 0x|by 0x' "$work/$mode.log" | head -n 12 | sed 's/^/# /'
  tap "$([ "$bad" = 0 ] && [ "$good" = "${contexts:-x}" ] && grep -q "ct_noise $mode: done" "$work/$mode.log"; echo $?)" \
      "$mode: no branch or memory access depends on the secret outside the declassified check (memcheck: ${total:-?} errors from ${contexts:-?} contexts, $good declassified, $bad other)"
done
first=$(grep -n 'static inline uint32_t grr_select' sdk/src/noise/grr.c | cut -d: -f1)
tap "$(! allowed "grr.c:$first" && ! allowed "laplace_fixed.c:1" && ! allowed "ct_noise.c:1"; echo $?)" \
    "negative control: the declassified checks accept no other source line"
vg neg_branch; rc=$?
tap "$([ "$rc" = 99 ] && grep -q 'Conditional jump or move depends on uninitialised value' "$work/neg_branch.log"; echo $?)" \
    "negative control: a branch on the secret is reported ($(errors neg_branch) errors)"
vg neg_table; rc=$?
tap "$([ "$rc" = 99 ] && grep -q 'Use of uninitialised value of size' "$work/neg_table.log"; echo $?)" \
    "negative control: a table lookup indexed by the secret is reported ($(errors neg_table) errors)"

# ---- Prio3 (tests/ct/ct_vdaf.c): sdk/src/vdaf with its secrets undefined -----------------------
# The few decisions that look at secret-derived values on purpose are marked DPM_CT_DECLASSIFY in
# the source; this build defines the mark as valgrind's MAKE_MEM_DEFINED, so they pass and nothing
# else may. The multiplication has two paths (unsigned __int128 on this host, 32-bit limbs on
# 32-bit targets): both are checked.
declassify='-DDPM_CT_DECLASSIFY(x)=VALGRIND_MAKE_MEM_DEFINED(&(x), sizeof(x))'
vdaf_build() { # output extra-flags...
  local out=$1; shift
  "$CC" -std=c99 -O2 -g -Wall -Wextra -Werror -D_DEFAULT_SOURCE "$@" -Isdk/include -Iport/include \
    -Isdk/src/internal -Isdk/src -Itests/support -o "$out" tests/ct/ct_vdaf.c sdk/src/vdaf/*.c \
    sdk/src/core/*.c sdk/src/noise/rand.c tests/support/test_rng.c >"$work/cc_vdaf.log" 2>&1
}
vdaf_build "$work/ct_vdaf" -include valgrind/memcheck.h "$declassify"
rc1=$?
vdaf_build "$work/ct_vdaf_portable" -include valgrind/memcheck.h "$declassify" -DDPM_VDAF_PORTABLE_MUL
rc2=$?
vdaf_build "$work/ct_vdaf_nomark"
rc3=$?
sed 's/^/# /' "$work/cc_vdaf.log" | head -20
tap "$([ $rc1 = 0 ] && [ $rc2 = 0 ] && [ $rc3 = 0 ]; echo $?)" \
    "ct_vdaf builds with -O2 against sdk/src/vdaf (both multiplication paths, and without the marks)"
vgv() { # binary mode [valgrind options...] -> log $work/<binary>.<mode>.log, status in $?
  local bin=$1 mode=$2; shift 2
  valgrind --tool=memcheck --error-exitcode=99 --expensive-definedness-checks=yes \
    --track-origins=no "$@" "$work/$bin" "$mode" >"$work/$bin.$mode.log" 2>&1
}
for bin in ct_vdaf ct_vdaf_portable; do
  for mode in shard verify aggregate noise xof_aes; do
    vgv "$bin" "$mode"; rc=$?
    [ "$rc" = 0 ] || grep -E 'depends on uninitialised|uninitialised value|at 0x|by 0x' \
      "$work/$bin.$mode.log" | head -n 12 | sed 's/^/# /'
    tap "$([ "$rc" = 0 ] && grep -q "ct_vdaf $mode: done" "$work/$bin.$mode.log"; echo $?)" \
        "$bin $mode: no branch or memory access depends on a secret outside the marked decisions ($(grep -oE 'ERROR SUMMARY: [0-9]+ errors' "$work/$bin.$mode.log" | awk '{print $3}') errors)"
  done
done
# The marks, exactly: a new decision on secret data must be added here, with its reason.
marks=$(grep -n 'DPM_CT_DECLASSIFY(' sdk/src/vdaf/*.c sdk/src/vdaf/*.h | grep -v '#define' |
        sed -E 's/^([^:]*):[0-9]+: *DPM_CT_DECLASSIFY\(([a-z]+)\);.*$/\1 \2/' | sort | uniq -c |
        awk '{print $2 ":" $3 "x" $1}' | tr '\n' ' ')
want="sdk/src/vdaf/prio3.c:badx1 sdk/src/vdaf/prio3_impl.h:badx5 sdk/src/vdaf/prio3_impl.h:rootx1 "
[ "$marks" = "$want" ]
tap $? "the declassified decisions are the seven reviewed ones (found: $marks)"
vgv ct_vdaf_nomark shard; rc=$?
tap "$([ "$rc" = 99 ] && grep -q 'Conditional jump or move depends on uninitialised value' "$work/ct_vdaf_nomark.shard.log"; echo $?)" \
    "negative control: without the marks, memcheck reports the sharding's decisions ($(grep -oE 'ERROR SUMMARY: [0-9]+ errors' "$work/ct_vdaf_nomark.shard.log" | awk '{print $3}') errors)"
vgv ct_vdaf neg_reduce; rc=$?
tap "$([ "$rc" = 99 ] && grep -q 'Conditional jump or move depends on uninitialised value' "$work/ct_vdaf.neg_reduce.log"; echo $?)" \
    "negative control: a modular reduction that branches on the secret is reported"
vgv ct_vdaf neg_sbox; rc=$?
tap "$([ "$rc" = 99 ] && grep -q 'Use of uninitialised value of size' "$work/ct_vdaf.neg_sbox.log"; echo $?)" \
    "negative control: an S-box table indexed by the secret is reported"

# ---- two aggregators (tests/ct/ct_dap.c): the DAP measurement check, the HPKE seal and open ------
# The same marks (DPM_CT_DECLASSIFY in sdk/src/report/dap.c and port/tls/hpke.c) over Mbed TLS's
# host build (HKDF-SHA256, ChaCha20-Poly1305) and both paths of X25519 and AES-128-GCM: this
# host's (port/tls/x25519_64.h, unsigned __int128, its all-zero check a mark in hpke.c;
# port/tls/gcm_x86.h, AES-NI and PCLMULQDQ, which valgrind's CPU has) and the portable ones
# (-DDPM_X25519_PORTABLE -DDPM_GCM_PORTABLE: Everest and Mbed TLS's GCM, what other targets run);
# Everest's all-zero check, in Mbed TLS itself, is suppressed for its one function
# (tests/ct/everest.supp).
MBED="${BUILD_DIR:-build}/mbedtls/host/library/libmbedcrypto.a"
dap_build() { # output extra-flags...
  local out=$1; shift
  "$CC" -std=c99 -O2 -g -Wall -Wextra -Werror -D_DEFAULT_SOURCE "$@" -Isdk/include -Iport/include \
    -Isdk/src/internal -Isdk/src -isystem "${BUILD_DIR:-build}/src/mbedtls/include" \
    -isystem "${BUILD_DIR:-build}/src/mbedtls/3rdparty/everest/include" -Iport/tls/config \
    '-DMBEDTLS_CONFIG_FILE="dpm_mbedtls_host.h"' -o "$out" tests/ct/ct_dap.c sdk/src/report/dap.c \
    sdk/src/report/hpke_config.c sdk/src/vdaf/*.c sdk/src/core/*.c sdk/src/noise/grr.c \
    sdk/src/noise/xexp.c sdk/src/noise/rand.c port/tls/hpke.c "$MBED" \
    -lpthread >"$work/cc_dap.log" 2>&1
}
dap_build "$work/ct_dap" -include valgrind/memcheck.h "$declassify"
rc1=$?
dap_build "$work/ct_dap_nomark"
rc2=$?
dap_build "$work/ct_dap_portable" -include valgrind/memcheck.h "$declassify" -DDPM_X25519_PORTABLE \
  -DDPM_GCM_PORTABLE
rc3=$?
sed 's/^/# /' "$work/cc_dap.log" | head -20
tap "$([ $rc1 = 0 ] && [ $rc2 = 0 ] && [ $rc3 = 0 ]; echo $?)" \
    "ct_dap builds with -O2 against the DAP and HPKE sources and $MBED (both X25519 and GCM paths, and without the marks)"
# (the headers' names in the debug line tables: their functions may all be inlined)
grep -qa 'x25519_64\.h' "$work/ct_dap" && ! grep -qa 'x25519_64\.h' "$work/ct_dap_portable" &&
  grep -qa 'gcm_x86\.h' "$work/ct_dap" && ! grep -qa 'gcm_x86\.h' "$work/ct_dap_portable"
tap $? "ct_dap is built with port/tls/x25519_64.h and gcm_x86.h, ct_dap_portable without"
supp=--suppressions=tests/ct/everest.supp
for bin in ct_dap ct_dap_portable; do
  for mode in measure seal open; do
    [ "$bin" = ct_dap_portable ] && [ "$mode" = measure ] && continue # no X25519 in it
    vgv "$bin" "$mode" "$supp"; rc=$?
    [ "$rc" = 0 ] || grep -E 'depends on uninitialised|uninitialised value|at 0x|by 0x' \
      "$work/$bin.$mode.log" | head -n 12 | sed 's/^/# /'
    tap "$([ "$rc" = 0 ] && grep -q "ct_dap $mode: done" "$work/$bin.$mode.log"; echo $?)" \
        "$bin $mode: no branch or memory access depends on a secret outside the marked decisions ($(grep -oE 'ERROR SUMMARY: [0-9]+ errors' "$work/$bin.$mode.log" | awk '{print $3}') errors)"
  done
done
marks=$(grep -n 'DPM_CT_DECLASSIFY(' sdk/src/report/*.c sdk/src/device/*.c port/tls/*.c |
        grep -v '#define' | sed -E 's/^([^:]*):[0-9]+: *DPM_CT_DECLASSIFY\(([a-z]+)\);.*$/\1 \2/' |
        sort | uniq -c | awk '{print $2 ":" $3 "x" $1}' | tr '\n' ' ')
# device_dap.c's: the label-RR task's bin-total check (each bin's pos + neg within one entry),
# whose verdict is the call's status, like dap.c's measurement check
want="port/tls/hpke.c:differx1 port/tls/hpke.c:zerox1 sdk/src/device/device_dap.c:badx1 "
want="${want}sdk/src/report/dap.c:badx1 "
[ "$marks" = "$want" ]
tap $? "the two-aggregator declassified decisions are the four reviewed ones (found: $marks)"
vgv ct_dap_nomark open "$supp"; rc=$?
tap "$([ "$rc" = 99 ] && grep -q 'Conditional jump or move depends on uninitialised value' "$work/ct_dap_nomark.open.log"; echo $?)" \
    "negative control: without the marks, memcheck reports the open's verdict ($(grep -oE 'ERROR SUMMARY: [0-9]+ errors' "$work/ct_dap_nomark.open.log" | awk '{print $3}') errors)"
vgv ct_dap_portable seal; rc=$?
tap "$([ "$rc" = 99 ] && grep -A1 'Conditional jump' "$work/ct_dap_portable.seal.log" | grep -q mbedtls_x25519_calc_secret; echo $?)" \
    "negative control: without the suppression, Everest's all-zero check is what memcheck reports"
vgv ct_dap_nomark seal "$supp"; rc=$?
tap "$([ "$rc" = 99 ] && grep -A1 'Conditional jump' "$work/ct_dap_nomark.seal.log" | grep -q 'x25519 (hpke.c'; echo $?)" \
    "negative control: without the marks, the 64-bit X25519's all-zero check is reported"
vgv ct_dap neg_branch "$supp"; rc=$?
tap "$([ "$rc" = 99 ] && grep -q 'Conditional jump or move depends on uninitialised value' "$work/ct_dap.neg_branch.log"; echo $?)" \
    "negative control: a branch on a share byte is reported, suppression file in force"
vgv ct_dap neg_table "$supp"; rc=$?
tap "$([ "$rc" = 99 ] && grep -q 'Use of uninitialised value of size' "$work/ct_dap.neg_table.log"; echo $?)" \
    "negative control: a table lookup indexed by a share byte is reported, suppression file in force"
echo "1..$n"
exit $failed
