#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A Kconfig value reaches the library itself, not only the headers: libdpm.a built from a
# .config with DPM_MAX_BINS=16 (its own VARIANT, so the main build is untouched) refuses a
# 31-bin roc_hist campaign, from a struct and from the wire, while the default build accepts
# both (the negative control: the probe can see an acceptance); installed with make install, the
# tree hands the same options to an app. Env: OUT, BUILD_DIR, CC, PYTHON.
set -uo pipefail
OUT=${OUT:-build/host}
BUILD_DIR=${BUILD_DIR:-build}
CC=${CC:-gcc}
PYTHON=${PYTHON:-/usr/bin/python3}
VARIANT=kconfig-bins16
TARGET=$(basename "$OUT" | sed 's/-.*//')
VOUT=$BUILD_DIR/$TARGET-$VARIANT
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The .config lives with the variant's build and is rewritten only when it changes, so a second
# run rebuilds nothing.
mkdir -p "$VOUT"
"$PYTHON" .make/kconfig.py defconfig "$work/defconfig" >/dev/null
sed 's/^CONFIG_DPM_MAX_BINS=.*/CONFIG_DPM_MAX_BINS=16/' "$work/defconfig" >"$work/.config"
cmp -s "$work/.config" "$VOUT/.config" || cp "$work/.config" "$VOUT/.config"
grep -q '^CONFIG_DPM_MAX_BINS=16$' "$VOUT/.config"
tap $? "a .config with CONFIG_DPM_MAX_BINS=16"

env -u MAKEFLAGS -u MAKELEVEL make --no-print-directory -j2 BUILD_DIR="$BUILD_DIR" \
  VARIANT=$VARIANT KCONFIG_CONFIG="$VOUT/.config" "$VOUT/libdpm.a" >"$work/make.log" 2>&1
tap $? "make VARIANT=$VARIANT KCONFIG_CONFIG=... builds its own libdpm.a"
sed 's/^/# /' "$work/make.log" | grep -v '  CC ' | tail -5

cat >"$work/probe.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include <dpm/dpm.h>
#include <dpm/expert/mech.h>
#include <dpm/expert/report.h>

/* 30 edges: a 31-bin roc_hist campaign (the edges that fit the struct of this build). */
static void campaign31(dpm_campaign_t *c)
{
    memset(c, 0, sizeof(*c));
    c->id = 31;
    c->mechanism = DPM_MECH_ID_ROC_HIST;
    c->eps = DPM_EPS(1);
    c->budget = DPM_EPS(1);
    c->nbins = 30;
    for (uint32_t i = 0; i < 30 && i < DPM_CAMPAIGN_MAX_EDGES; i++) {
        c->bin_edges[i] = (i + 1u) * (DPM_SCORE_ONE / 31u);
    }
    c->frac_bits = DPM_FRAC_BITS;
}

int main(int argc, char **argv)
{
    dpm_campaign_t c;
    dpm_mech_t m;
    const char *why = "";
    if (argc > 2 && strcmp(argv[1], "decode") == 0) { /* campaign bytes in hex */
        uint8_t buf[DPM_CAMPAIGN_MAX_BYTES];
        size_t len = 0;
        for (const char *p = argv[2]; p[0] && p[1] && len < sizeof(buf); p += 2) {
            unsigned v;
            sscanf(p, "%2x", &v);
            buf[len++] = (uint8_t)v;
        }
        dpm_status_t st = dpm_campaign_decode(buf, len, &c, &why);
        if (st == DPM_OK) {
            st = dpm_mech_init(&m, &c, &why);
        }
        printf("DPM_MAX_BINS %d: wire 31-bin campaign: %s (%s)\n", DPM_MAX_BINS, dpm_strerror(st), why);
        return 0;
    }
    campaign31(&c);
    if (argc > 1 && strcmp(argv[1], "encode") == 0) {
        uint8_t buf[DPM_CAMPAIGN_MAX_BYTES];
        size_t len = 0;
        if (dpm_campaign_encode(&c, buf, sizeof(buf), &len) != DPM_OK) {
            return 1;
        }
        for (size_t i = 0; i < len; i++) {
            printf("%02x", buf[i]);
        }
        printf("\n");
        return 0;
    }
    dpm_status_t st = dpm_mech_init(&m, &c, &why);
    printf("DPM_MAX_BINS %d: struct 31-bin campaign: %s (%s)\n", DPM_MAX_BINS, dpm_strerror(st), why);
    return 0;
}
EOF
# Each probe is compiled as its library was: the variant with the same autoconf header.
"$CC" ${LDFLAGS:-} -std=c99 -Wall -Werror -Isdk/include "$work/probe.c" "$OUT/libdpm.a" -o "$work/default" &&
  "$CC" ${LDFLAGS:-} -std=c99 -Wall -Werror -Isdk/include -include "$VOUT/include/dpm_autoconf.h" \
    "$work/probe.c" "$VOUT/libdpm.a" -o "$work/bins16"
tap $? "a probe builds against each library"

hex=$("$work/default" encode)
for v in default bins16; do
  "$work/$v" | tee "$work/$v.out" | sed "s/^/# $v: /"
  "$work/$v" decode "$hex" | tee -a "$work/$v.out" | sed "s/^/# $v: /"
done
grep -q '^DPM_MAX_BINS 64: struct 31-bin campaign: ok' "$work/default.out" &&
  grep -q '^DPM_MAX_BINS 64: wire 31-bin campaign: ok' "$work/default.out"
tap $? "the default libdpm.a accepts the 31-bin campaign (struct and wire)"
grep -q '^DPM_MAX_BINS 16: struct 31-bin campaign: invalid parameter (too many bins)' "$work/bins16.out"
tap $? "the DPM_MAX_BINS=16 libdpm.a refuses it from a struct (dpm_mech_init)"
grep -q '^DPM_MAX_BINS 16: wire 31-bin campaign: protocol violation (too many bins)' "$work/bins16.out"
tap $? "the DPM_MAX_BINS=16 libdpm.a refuses it from the wire (dpm_campaign_decode)"

# The same .config through make install: the installed headers carry the library's options
# (dpm/build_config.h), so an app compiled against that tree needs no -include of its own.
env -u MAKEFLAGS -u MAKELEVEL make --no-print-directory -j2 BUILD_DIR="$BUILD_DIR" \
  VARIANT=$VARIANT KCONFIG_CONFIG="$VOUT/.config" install PREFIX="$work/prefix" >"$work/install.log" 2>&1 &&
  "$CC" ${LDFLAGS:-} -std=c99 -Wall -Werror -I"$work/prefix/include" "$work/probe.c" \
    -L"$work/prefix/lib" -ldpm -o "$work/installed" &&
  "$work/installed" | tee "$work/installed.out" | sed 's/^/# installed: /'
grep -q '^DPM_MAX_BINS 16: struct 31-bin campaign: invalid parameter (too many bins)' "$work/installed.out"
tap $? "installed from that .config, the tree gives an app DPM_MAX_BINS 16 and refuses 31 bins"

echo "1..$n"
exit $failed
