#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# libdpm.a keeps its nanopb private (sdk/proto/dpm_nanopb_rename.h): it exports no pb_ symbol,
# and an app that links its own nanopb runtime next to it links and runs, both encoders working.
set -uo pipefail
OUT=${OUT:-build/host}
BUILD_DIR=${BUILD_DIR:-build}
CC=${CC:-gcc}
NM=${NM:-nm}
NANOPB=$BUILD_DIR/src/nanopb
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Global pb_ symbols (defined or undefined) in an object or archive, one per line.
pb_symbols() { "$NM" -g "$1" 2>/dev/null | awk 'NF >= 2 && $NF ~ /^pb_/ {print $NF}' | sort -u; }

leaks=$(pb_symbols "$OUT/libdpm.a")
renamed=$("$NM" -g --defined-only "$OUT/libdpm.a" | awk '$NF ~ /^dpm_pb_/' | wc -l)
[ -z "$leaks" ] && [ "$renamed" -ge 30 ]
tap $? "libdpm.a has no global pb_ symbol ($renamed dpm_pb_ ones)${leaks:+; leaks: $(echo $leaks)}"

# The app's own nanopb: the same 0.4.7 runtime, compiled as an app would (no renaming).
for f in pb_common pb_encode pb_decode; do
  "$CC" -std=c99 -O1 -I"$NANOPB" -c "$NANOPB/$f.c" -o "$work/$f.o" || failed=1
done
ar rcs "$work/libapp_nanopb.a" "$work"/pb_*.o

# Negative control: the checker sees the symbols of a runtime that is not renamed.
[ -n "$(pb_symbols "$work/libapp_nanopb.a")" ]
tap $? "negative control: the check finds pb_ symbols in an unrenamed runtime"

cat >"$work/app.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include <pb_decode.h>
#include <pb_encode.h>
#include <dpm/dpm.h>
#include <dpm/expert/report.h>

int main(void)
{
    /* the app's nanopb: a varint and a string field, encoded and decoded */
    uint8_t buf[64];
    pb_ostream_t os = pb_ostream_from_buffer(buf, sizeof(buf));
    if (!pb_encode_varint(&os, 300) || !pb_encode_string(&os, (const pb_byte_t *)"app", 3)) return 1;
    pb_istream_t is = pb_istream_from_buffer(buf, os.bytes_written);
    uint64_t v = 0;
    if (!pb_decode_varint(&is, &v) || v != 300) return 2;

    /* libdpm's private copy: a campaign encoded and decoded */
    dpm_campaign_t c, back;
    memset(&c, 0, sizeof(c));
    c.id = 42; c.mechanism = DPM_MECH_ID_TUPLE_MR; c.eps = DPM_EPS(1); c.budget = DPM_EPS(1);
    c.groups = 2; c.nmetrics = 1; c.metrics[0] = DPM_METRIC_TPR;
    uint8_t wire[DPM_CAMPAIGN_MAX_BYTES];
    size_t len = 0;
    if (dpm_campaign_encode(&c, wire, sizeof(wire), &len) != DPM_OK ||
        dpm_campaign_decode(wire, len, &back, NULL) != DPM_OK || back.id != 42 ||
        back.groups != 2) return 3;
    printf("app nanopb: %zu bytes; libdpm: campaign of %zu bytes\n", os.bytes_written, len);
    return 0;
}
EOF
"$CC" -std=c99 -Wall -Werror -I"$NANOPB" -Isdk/include -c "$work/app.c" -o "$work/app.o" || failed=1

# --whole-archive pulls every member of libdpm.a into the link, so any pb_ symbol it still
# defined would collide with the app's ("multiple definition"); without it a clash could even
# go unnoticed, libdpm silently calling the app's nanopb.
"$CC" ${LDFLAGS:-} -o "$work/app" "$work/app.o" "$work/libapp_nanopb.a" \
  -Wl,--whole-archive "$OUT/libdpm.a" -Wl,--no-whole-archive 2>"$work/link.txt"
tap $? "an app with its own nanopb links libdpm.a whole (no duplicate symbol)"
sed 's/^/# /' "$work/link.txt" | head -5

out=$("$work/app" 2>&1)
rc=$?
echo "# $out"
[ $rc = 0 ] && [[ "$out" == "app nanopb: 6 bytes; libdpm: campaign of "* ]]
tap $? "both encoders work in one program (the app's nanopb and libdpm's)"

both=$("$NM" "$work/app" | awk '$NF == "pb_encode_varint" || $NF == "dpm_pb_encode_varint"' | wc -l)
[ "$both" = 2 ]
tap $? "the program holds both copies (pb_encode_varint and dpm_pb_encode_varint)"

# Negative control: the same whole-archive link against an unrenamed copy does clash.
ar rcs "$work/libclash.a" "$work"/pb_*.o
! "$CC" ${LDFLAGS:-} -o "$work/clash" "$work/app.o" "$work/libapp_nanopb.a" \
  -Wl,--whole-archive "$work/libclash.a" -Wl,--no-whole-archive "$OUT/libdpm.a" 2>/dev/null
tap $? "negative control: a second unrenamed nanopb fails that link"

echo "1..$n"
exit $failed
