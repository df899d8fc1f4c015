#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# examples/hello, the README's first program, builds with the rest and works: it turns local
# examples into one charged, encoded report using libdpm alone (no port, no Mbed TLS).
set -uo pipefail
OUT=${OUT:-build/host}
NM=${NM:-nm}
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }

out=$("$OUT/hello" 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
[ "$rc" = 0 ] && echo "$out" | grep -qE '^hello: one tuple_mr report of [0-9]+ bytes queued, epsilon spent 1\.000000$'
tap $? "hello makes one charged tuple_mr report"

syms=$("$NM" "$OUT/hello" | grep -cE 'mbedtls_|dpm_posix_|dpm_tls_')
tap "$([ "$syms" = 0 ]; echo $?)" "hello links libdpm alone ($syms port or Mbed TLS symbols)"
# Negative control: posix-client does use the port, and the check sees it.
syms=$("$NM" "$OUT/posix-client" | grep -cE 'mbedtls_|dpm_posix_|dpm_tls_')
tap "$([ "$syms" -gt 0 ]; echo $?)" "negative control: posix-client's port symbols are seen ($syms)"

echo "1..$n"
exit $failed
