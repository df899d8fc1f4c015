#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Constant time of the two-aggregator mode, checked (tests/ct/ct_dap.c, ctgrind style, as
# test_constant_time.sh does for the noise samplers): under valgrind memcheck, with the secret's
# bits marked undefined, no conditional jump or move and no memory address may depend on
#   - a measurement, in dpm_dap_measurement_check (the check the device runs before charging);
#   - an input share or the ephemeral key, in the device's HPKE seal (port/tls/hpke.c over Mbed
#     TLS 3.6: Everest X25519, HKDF-SHA256, AES-128-GCM as the host build runs it, AES-NI);
#   - an aggregator's private key, in the open;
# except at three declassification points, accepted by their source text and nowhere else: the
# measurement check's verdict, the AEAD's verdict (whether the tag authenticates), and
# Everest's all-zero check of an X25519 result (RFC 7748 §6.1, an abort). Negative controls: a
# branch on a share byte and a table lookup indexed by one must each be reported.
# Compiled here at -O2 from the sources (whatever variant of the build runs the suite), against
# the host build of Mbed TLS; on a Cortex-M, Mbed TLS's software AES uses lookup tables, which
# are constant time only on cores without a data cache (README, "Two aggregators").
set -uo pipefail
cd "$(dirname "$0")/../.."
CC=${CC:-gcc}
BUILD_DIR=${BUILD_DIR:-build}
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

command -v valgrind >/dev/null
tap $? "valgrind is installed (make deps)"
MBED="$BUILD_DIR/mbedtls/host/library/libmbedcrypto.a"
"$CC" -std=c99 -O2 -g -Wall -Wextra -Werror -D_DEFAULT_SOURCE -Isdk/include -Iport/include \
  -Isdk/src/internal -Isdk/src -isystem "$BUILD_DIR/src/mbedtls/include" \
  -isystem "$BUILD_DIR/src/mbedtls/3rdparty/everest/include" -Iport/tls/config \
  '-DMBEDTLS_CONFIG_FILE="dpm_mbedtls_host.h"' -o "$work/ct_dap" tests/ct/ct_dap.c \
  sdk/src/report/dap.c sdk/src/report/hpke_config.c sdk/src/vdaf/*.c sdk/src/core/*.c \
  port/tls/hpke.c "$MBED" -lpthread >"$work/cc.log" 2>&1
rc=$?
sed 's/^/# /' "$work/cc.log" | head -20
tap $rc "ct_dap builds with -O2 against the SDK's DAP and HPKE sources and $MBED"

vg() { # mode -> log in $work/$1.log, status in $?
  valgrind --tool=memcheck --error-exitcode=99 --expensive-definedness-checks=yes \
    --track-origins=no "$work/ct_dap" "$1" >"$work/$1.log" 2>&1
}
errors() { grep -oE 'ERROR SUMMARY: [0-9]+ errors' "$work/$1.log" | awk '{print $3}'; }
# The top frame of every secret-dependence error: "file:line", or "in:FUNCTION" for code
# without line information (Mbed TLS's library).
sites() {
  awk '/depends on uninitialised value|Use of uninitialised value/ {want = 1; next}
       want && / at 0x/ {want = 0;
         if (match($0, /\([^()]*:[0-9]+\)$/)) print substr($0, RSTART + 1, RLENGTH - 2);
         else if (match($0, /: [A-Za-z_0-9]+ \(in /)) print "in:" substr($0, RSTART + 2, RLENGTH - 6)}' \
    "$work/$1.log"
}
allowed() { # site
  case "$1" in
    in:mbedtls_x25519_calc_secret) return 0 ;;
    in:*) return 1 ;;
  esac
  local file=${1%%:*} line=${1##*:} path text
  case "$file" in
    dap.c) path=sdk/src/report/dap.c ;;
    hpke.c) path=port/tls/hpke.c ;;
    *) return 1 ;;
  esac
  text=$(sed -n "${line}p" "$path")
  case "$file" in
    dap.c) [[ $text == *'bad ? DPM_ERR_PARAM'* ]] ;;
    hpke.c) [[ $text == *'mbedtls_ct_memcmp(want, tag'* ]] ;;
  esac
}
for mode in measure seal open; do
  vg "$mode"
  total=$(errors "$mode")
  contexts=$(grep -oE 'ERROR SUMMARY: [0-9]+ errors from [0-9]+ contexts' "$work/$mode.log" | awk '{print $6}')
  # memcheck prints each error context once (one site may head several call chains)
  bad=0 good=0
  while read -r site; do
    [ -n "$site" ] || continue
    if allowed "$site"; then good=$((good + 1)); else bad=$((bad + 1)); fi
  done < <(sites "$mode")
  while read -r site; do
    [ -n "$site" ] || continue
    if allowed "$site"; then echo "# $mode: declassified check at $site"; else echo "# $mode: SECRET-DEPENDENT at $site"; fi
  done < <(sites "$mode" | sort -u)
  [ "$bad" = 0 ] || grep -E 'depends on uninitialised|uninitialised value|at 0x|by 0x' "$work/$mode.log" | head -n 16 | sed 's/^/# /'
  tap "$([ "$bad" = 0 ] && [ "$good" = "${contexts:-x}" ] && grep -q "ct_dap $mode: done" "$work/$mode.log"; echo $?)" \
      "$mode: no branch or memory access depends on the secret outside the declassified checks (memcheck: ${total:-?} errors from ${contexts:-?} contexts, $good of them declassified, $bad other)"
done
first=$(grep -n 'dpm_status_t dpm_dap_measurement_check' sdk/src/report/dap.c | cut -d: -f1)
tap "$(! allowed "dap.c:$first" && ! allowed "hpke.c:1" && ! allowed "in:mbedtls_gcm_update" && ! allowed "ct_dap.c:1"; echo $?)" \
    "negative control: the declassified checks accept no other source line or function"
vg neg_branch; rc=$?
tap "$([ "$rc" = 99 ] && grep -q 'Conditional jump or move depends on uninitialised value' "$work/neg_branch.log"; echo $?)" \
    "negative control: a branch on a share byte is reported ($(errors neg_branch) errors)"
vg neg_table; rc=$?
tap "$([ "$rc" = 99 ] && grep -q 'Use of uninitialised value of size' "$work/neg_table.log"; echo $?)" \
    "negative control: a table lookup indexed by a share byte is reported ($(errors neg_table) errors)"
echo "1..$n"
exit $failed
