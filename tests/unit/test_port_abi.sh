#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The posix and TLS port structs do not depend on the Mbed TLS configuration an app compiles
# with (their Mbed TLS contexts sit in fixed-size opaque storage), and headers that disagree
# with the library are refused at init, never written past:
#   1. an app compiles the port headers with no Mbed TLS header on its include path;
#   2. an app that compiles against another Mbed TLS configuration (Mbed TLS's default, whose
#      CTR_DRBG context is smaller than the library's: the round-one corruption) sees the same
#      struct sizes, and init, fill, reseed, a TLS handshake attempt and free leave a canary
#      after each struct intact;
#   3. headers of another release (smaller opaque storage) get -1 / DPM_ERR_PARAM at init,
#      canaries intact;
#   4. negative control: the same mismatched app that lies about its struct size is written
#      past, and the canary check sees it.
# Env: OUT, BUILD_DIR, CC.
set -uo pipefail
OUT=${OUT:-build/host}
BUILD_DIR=${BUILD_DIR:-build}
CC=${CC:-gcc}
TARGET=$(basename "$OUT" | sed 's/-.*//')
MBEDTLS_INC=$BUILD_DIR/src/mbedtls/include
MBEDTLS_LIB=$BUILD_DIR/mbedtls/$TARGET/library
LIBS=("$OUT/libdpm_posix.a" "$OUT/libdpm.a" "$MBEDTLS_LIB/libmbedtls.a" "$MBEDTLS_LIB/libmbedx509.a"
      "$MBEDTLS_LIB/libmbedcrypto.a" -lpthread)
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=abi-test \
  -keyout "$work/ca.key" -out "$work/ca.pem" 2>/dev/null || echo "# openssl failed"

cat >"$work/app.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#ifdef APP_MBEDTLS
#include "mbedtls/ctr_drbg.h" /* the app's own Mbed TLS, with ITS configuration */
#endif
#include "dpm/port_posix.h"
#include "dpm/port_tls.h"

#define CANARY 512
static struct { dpm_posix_rng_t r; unsigned char canary[CANARY]; } R;
static struct { dpm_tls_t t; unsigned char canary[CANARY]; } T;

static const char *canary(const unsigned char *c)
{
    for (int i = 0; i < CANARY; i++) if (c[i] != 0xA5) return "damaged";
    return "intact";
}
static int32_t send_fails(void *ctx, const uint8_t *b, size_t n) { (void)ctx; (void)b; (void)n; return -1; }
static int32_t recv_none(void *ctx, uint8_t *b, size_t n) { (void)ctx; (void)b; (void)n; return -1; }

int main(int argc, char **argv)
{
    memset(R.canary, 0xA5, CANARY);
    memset(T.canary, 0xA5, CANARY);
    printf("sizes: rng %zu tls %zu\n", sizeof(dpm_posix_rng_t), sizeof(dpm_tls_t));
#ifdef APP_MBEDTLS
    printf("app's mbedtls_ctr_drbg_context: %zu bytes\n", sizeof(mbedtls_ctr_drbg_context));
#endif
    int rc;
#ifdef LIB_RNG_SIZE
    if (argc > 1 && strcmp(argv[1], "lie") == 0) /* negative control: claim the library's size */
        rc = dpm_posix_rng_init_sized(&R.r, LIB_RNG_SIZE, NULL, 0);
    else
#endif
        rc = dpm_posix_rng_init(&R.r, (const uint8_t *)"abi", 3);
    if (rc == 0) {
        uint8_t buf[3000];
        dpm_rng_t rng = dpm_posix_rng(&R.r);
        rc = rng.fill(rng.ctx, buf, 100) | rng.fill(rng.ctx, buf, sizeof(buf)) |
             dpm_posix_rng_f_rng(&R.r, buf, 64) | dpm_posix_rng_reseed(&R.r) | rng.fill(rng.ctx, buf, 7);
    }
    printf("rng: %d, canary %s\n", rc, canary(R.canary));

    static uint8_t ca[4096];
    FILE *f = fopen(argv[argc - 1], "rb");
    size_t ca_len = f ? fread(ca, 1, sizeof(ca) - 1, f) : 0;
    if (f) fclose(f);
    ca[ca_len++] = 0;
    dpm_tls_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.ca = ca;
    cfg.ca_len = ca_len;
    cfg.hostname = "localhost";
    cfg.raw.send = send_fails;
    cfg.raw.recv = recv_none;
    cfg.rng = dpm_posix_rng(&R.r);
    cfg.clock = dpm_posix_clock();
    dpm_status_t st = rc == 0 ? dpm_tls_connect(&T.t, &cfg) : DPM_ERR_RNG;
    printf("tls: %s, canary %s\n", dpm_strerror(st), canary(T.canary));
    if (rc == 0) dpm_posix_rng_free(&R.r);
    printf("after free: canary %s\n", canary(R.canary));
    return 0;
}
EOF

build() { # NAME FLAGS...: compile and link the app
  local name=$1; shift
  "$CC" ${LDFLAGS:-} -std=c99 -Wall -Werror "$@" -Isdk/include -Iport/include "$work/app.c" "${LIBS[@]}" \
    -o "$work/$name" 2>"$work/$name.err"
}
run() { "$work/$1" "${@:2}" "$work/ca.pem" 2>&1 | tee "$work/$1.out" | sed "s/^/# $1: /"; }

# 1. No Mbed TLS header anywhere on the app's include path.
build plain
tap $? "an app compiles the port headers without any Mbed TLS include path"
sed 's/^/# /' "$work/plain.err" | head -5
run plain

# 2. The app includes its own Mbed TLS with the default configuration.
build other -DAPP_MBEDTLS -isystem "$MBEDTLS_INC"
tap $? "an app built against Mbed TLS's default configuration compiles"
sed 's/^/# /' "$work/other.err" | head -5
run other
app_drbg=$(awk '/mbedtls_ctr_drbg_context/ {print $3}' "$work/other.out")
cat >"$work/probe.c" <<'EOF'
#include <stdio.h>
#include "mbedtls/ctr_drbg.h"
int main(void) { printf("%zu\n", sizeof(mbedtls_ctr_drbg_context)); return 0; }
EOF
"$CC" -isystem "$MBEDTLS_INC" -Iport/tls/config "-DMBEDTLS_CONFIG_FILE=\"dpm_mbedtls_$TARGET.h\"" \
  "$work/probe.c" -o "$work/probe" && lib_drbg=$("$work/probe")
echo "# CTR_DRBG context: ${app_drbg:-?} bytes for the app's Mbed TLS config, ${lib_drbg:-?} for the library's"
[ -n "${app_drbg:-}" ] && [ -n "${lib_drbg:-}" ] && [ "$app_drbg" != "$lib_drbg" ]
tap $? "the two Mbed TLS configurations really differ (the case that corrupted memory)"
sizes_plain=$(grep '^sizes' "$work/plain.out")
[ -n "$sizes_plain" ] && [ "$sizes_plain" = "$(grep '^sizes' "$work/other.out")" ]
tap $? "the port structs have the same size either way (${sizes_plain:-no output})"
for v in plain other; do
  grep -q '^rng: 0, canary intact$' "$work/$v.out" &&
    grep -q '^tls: transport failed, canary intact$' "$work/$v.out" &&
    grep -q '^after free: canary intact$' "$work/$v.out"
  tap $? "$v: rng init/fill/reseed/free and a TLS handshake work, nothing written past the structs"
done

# 3. Headers of another release: smaller opaque storage than the library's.
mkdir -p "$work/inc/dpm"
sed 's/^#define DPM_POSIX_DRBG_BYTES .*/#define DPM_POSIX_DRBG_BYTES 256u/' \
  port/include/dpm/port_posix.h >"$work/inc/dpm/port_posix.h"
sed 's/^#define DPM_TLS_MBEDTLS_BYTES .*/#define DPM_TLS_MBEDTLS_BYTES (160u * sizeof(void *))/' \
  port/include/dpm/port_tls.h >"$work/inc/dpm/port_tls.h"
lib_rng=$(awk '/^sizes/ {print $3}' "$work/plain.out")
build mismatch -I"$work/inc" -DLIB_RNG_SIZE="${lib_rng:-0}"
tap $? "an app with mismatched port headers compiles"
run mismatch
grep -q '^rng: -1, canary intact$' "$work/mismatch.out"
tap $? "mismatched headers: dpm_posix_rng_init refuses (DPM_ERR_PARAM, -1), nothing written past the struct"
cat >"$work/tls_only.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include "dpm/port_tls.h"
static struct { dpm_tls_t t; unsigned char canary[512]; } T;
int main(void)
{
    memset(&T, 0xA5, sizeof(T));
    dpm_tls_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    dpm_status_t st = dpm_tls_connect(&T.t, &cfg);
    for (size_t i = 0; i < sizeof(T); i++) if (((unsigned char *)&T)[i] != 0xA5) return 2;
    printf("%s\n", dpm_strerror(st));
    return st == DPM_ERR_PARAM ? 0 : 1;
}
EOF
"$CC" ${LDFLAGS:-} -std=c99 -Wall -Werror -I"$work/inc" -Isdk/include -Iport/include "$work/tls_only.c" \
  "${LIBS[@]}" -o "$work/tls_only" && "$work/tls_only" >/dev/null
tap $? "mismatched headers: dpm_tls_connect refuses (DPM_ERR_PARAM) without writing the context"

# 4. Negative control: told the library's size, the library overruns the smaller struct.
run mismatch lie
grep -q '^after free: canary damaged$' "$work/mismatch.out"
tap $? "negative control: an app lying about its struct size is written past, and it shows"

echo "1..$n"
exit $failed
