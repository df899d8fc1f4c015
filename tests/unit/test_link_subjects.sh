#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Tests link by subject: a test program that includes no host-sim header (the SDK's tests, as
# `make print-sdk-tests` lists them) links the SDK, the posix port, the test support and
# Mbed TLS, and neither sqlite nor libpq. Checked on the built binaries (readelf -d: no
# libsqlite3 / libpq NEEDED). Negative control: a collector test (test_collector_trust) does
# need both, so the check can see them. Env: OUT (build/host).
set -uo pipefail
OUT=${OUT:-build/host}
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
command -v readelf >/dev/null || { echo "not ok 1 - readelf not found (Debian package binutils)"; echo "1..1"; exit 1; }
db_needed() { readelf -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(libsqlite3[^]]*\|libpq[^]]*\)\]/\1/p'; }

tests=$(make -s --no-print-directory print-sdk-tests) || tests=""
count=$(printf '%s\n' "$tests" | sed '/^$/d' | wc -l)
# (39 at this commit; fewer than 30 would mean the include rule now puts SDK tests elsewhere)
tap "$([ "$count" -ge 30 ]; echo $?)" "make print-sdk-tests lists the SDK's tests ($count)"
bad=() missing=()
for t in $tests; do
  bin="$OUT/$t"
  if [ ! -x "$bin" ]; then missing+=("$t"); continue; fi
  libs=$(db_needed "$bin" | paste -sd, -)
  [ -z "$libs" ] || bad+=("$t ($libs)")
done
for b in "${missing[@]}"; do echo "# not built: $OUT/$b (make tests)"; done
for b in "${bad[@]}"; do echo "# links a database: $b"; done
tap "$([ ${#missing[@]} = 0 ]; echo $?)" "every SDK test is built"
tap "$([ ${#bad[@]} = 0 ]; echo $?)" "no SDK test needs libsqlite3 or libpq ($count checked)"
tap "$(! printf '%s\n' $tests | grep -qx 'tests/unit/test_collector_trust'; echo $?)" \
  "test_collector_trust (includes collector/ headers) is not counted as an SDK test"

# Negative control: the same check on a collector test finds both libraries.
ctl="$OUT/tests/unit/test_collector_trust"
libs=$(db_needed "$ctl" | sort | paste -sd' ' -)
tap "$(echo "$libs" | grep -q libpq && echo "$libs" | grep -q libsqlite3; echo $?)" \
  "negative control: the check sees the databases test_collector_trust needs (${libs:-none})"

echo "1..$n"
exit $failed
