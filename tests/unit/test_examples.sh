#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# examples/hello, the README's first program, builds with the rest and works: it turns local
# examples into one charged, encoded report using libdpm alone (no port, no Mbed TLS); its
# posting twin examples/hello/post.c keeps to 8 dpm_* calls.
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

# examples/hello/post.c (hello that posts; run against a collector by tests/e2e/test_hello_post.py)
# makes at most 8 dpm_* calls, port glue included: every call in the file, comments stripped.
CC=${CC:-cc}
count_calls() { "$CC" -fpreprocessed -dD -E -P "$1" 2>/dev/null | grep -oE '\bdpm_[a-z0-9_]+[[:space:]]*\(' | wc -l; }
calls=$(count_calls examples/hello/post.c)
echo "# dpm_* calls in examples/hello/post.c: $calls"
tap "$([ "$calls" -ge 5 ] && [ "$calls" -le 8 ]; echo $?)" "hello-post makes at most 8 dpm_* calls ($calls)"
# Negative control: one call more is seen (a ninth call fails the check).
tmp=$(mktemp -d)
sed 's/^    return 0;$/    dpm_posix_app_close(\&app);\n    return 0;/' examples/hello/post.c >"$tmp/post.c"
more=$(count_calls "$tmp/post.c")
rm -rf "$tmp"
tap "$([ "$more" = $((calls + 1)) ]; echo $?)" "negative control: a call added to post.c is counted ($more)"
[ -x "$OUT/hello-post" ]
tap $? "hello-post is built with the examples"

echo "1..$n"
exit $failed
