#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A device Mbed TLS config (port/tls/config/dpm_mbedtls_$PROFILE.h; PROFILE=device, the default,
# device_lean, issue 32's TLS 1.3-only P-256 profile, or device_lean_aes, the same with
# AES-128-GCM instead of ChaCha20-Poly1305) is real, not a wish list:
#   1. Mbed TLS 3.6 builds with it alone (into $BUILD_DIR/mbedtls/$PROFILE-check; skipped when
#      the stamp shows the build is current);
#   2. the config is self-contained (includes nothing: not Mbed TLS's default, not the host one;
#      the lean profiles include the device (and lean) one only);
#   3. the libraries reference no system heap (calloc/free/malloc) and no file, socket or
#      thread function;
#   4. port/tls (+ the posix TCP/clock/rng port) compiles warning-free against it with only the
#      device header on the include path, and links into a tiny client;
#   5-6. that client completes real TLS 1.3 and TLS 1.2 sessions (handshake, echo, close_notify)
#      against openssl s_server on 127.0.0.1, inside its arena, also with a client certificate
#      (s_server -Verify 1); lean: TLS 1.3 only, and it must REFUSE a TLS 1.2-only server, a
#      server with an RSA key and a pinned RSA CA, which the device profile accepts (the
#      control that shows the refusals come from the profile); both refuse a server that asks
#      for a client certificate the client does not send (the control that -Verify is real);
#      lean: a build of port/tls's HPKE with DPM_VDAF=1 stops with the profile's #error;
#   7. the smallest arena each version needs is found by bisection (fresh process per try) and
#      stays under a budget; below it the client fails cleanly, never crashes;
#   8. an arena too small for the record buffers fails with DPM_ERR_BUFFER;
#   9. lean: the profiles read DER only (the sessions above use DER pins, certificate and key);
#      a PEM CA, and a PEM client certificate and key, are refused before the handshake with
#      the reason that says how to convert them (the device profile's sessions use PEM: the
#      control that the refusal comes from the profile).
# Library sizes and arena minima are printed as "# ..." lines. Env: OUT, BUILD_DIR, CC, NM.
# Cross use (make size measures the arena on 32-bit ARM this way): CC/NM of the target,
# MBEDTLS_CMAKE_ARGS (cmake's cross compiler settings), RUNNER (e.g. qemu-arm), DEVICE_CHECK
# (the build directory's name under $BUILD_DIR/mbedtls).
set -uo pipefail
BUILD_DIR=${BUILD_DIR:-build}
CC=${CC:-gcc}
NM=${NM:-nm}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
PROFILE=${PROFILE:-device}
CONFIG="$TOP/port/tls/config/dpm_mbedtls_$PROFILE.h"
MBEDTLS_SRC="$BUILD_DIR/src/mbedtls"
DEV="$BUILD_DIR/mbedtls/${DEVICE_CHECK:-$PROFILE-check}"
VERSIONS="1.3 1.2 1.3+cert"
[ "$PROFILE" = device ] || VERSIONS="1.3 1.3+cert" # the lean profile has no TLS 1.2
SIZE_TOOL=${NM%nm}size
ARCH=$("$CC" -dumpmachine 2>/dev/null || echo unknown)
ARENA_BUDGET=$((64 * 1024)) # a TLS 1.3 or 1.2 session must fit in this (x86-64 build)

n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
skip_rest() { # $1 reason, $2.. test names
  local why=$1; shift
  for t in "$@"; do n=$((n + 1)); echo "not ok $n - $t # $why"; failed=1; done
}
work=$(mktemp -d)
srv_pid=""
cleanup() {
  if [ -n "$srv_pid" ] && kill -0 "$srv_pid" 2>/dev/null; then
    kill "$srv_pid" 2>/dev/null
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$srv_pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$srv_pid" 2>/dev/null
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# ---- 1. build ----------------------------------------------------------------------------------
if [ ! -d "$MBEDTLS_SRC/library" ]; then
  echo "not ok 1 - Mbed TLS source missing at $MBEDTLS_SRC (run make deps)"; echo "1..1"; exit 1
fi
t0=$(date +%s)
# shellcheck disable=SC2086
MBEDTLS_SRC="$MBEDTLS_SRC" bash "$TOP/.make/build-mbedtls.sh" device-check "$DEV" "$CONFIG" ${MBEDTLS_CMAKE_ARGS:-} \
  >"$work/build.out" 2>&1
rc=$?
sed 's/^/# /' "$work/build.out"
tap $rc "Mbed TLS 3.6 library builds with dpm_mbedtls_$PROFILE.h alone ($(( $(date +%s) - t0 )) s)"
LIBS=("$DEV/library/libmbedtls.a" "$DEV/library/libmbedx509.a" "$DEV/library/libmbedcrypto.a")
if [ $rc -ne 0 ]; then
  skip_rest "no library" "config self-contained" "no heap/file/socket/thread references" \
    "port/tls links" "TLS 1.3 session" "TLS 1.2 session" "arena minimum"
  echo "1..$n"; exit 1
fi
for l in "${LIBS[@]}"; do
  echo "# $(basename "$l"): $(stat -c %s "$l") bytes on disk; $("$SIZE_TOOL" -t "$l" | awk 'END {printf "text %d, data %d, bss %d", $1, $2, $3}')"
done

# ---- 2. self-contained --------------------------------------------------------------------------
incs=$(grep -E '^[[:space:]]*#[[:space:]]*include' "$CONFIG" | grep -v -E '^#include "dpm_mbedtls_device(_lean)?\.h"$' || true)
tap "$([ -z "$incs" ]; echo $?)" "the $PROFILE config includes no other header${incs:+ (found: $incs)}"

# ---- 3. what the libraries need from the platform ----------------------------------------------
undef=$("$NM" -u "${LIBS[@]}" 2>/dev/null | awk 'NF == 2 {print $2}' | grep -v -E '^(mbedtls_|psa_)' | sort -u)
echo "# libc symbols the device libraries use ($ARCH build): $(echo $undef)"
bad=$(echo "$undef" | grep -E '^(malloc|calloc|realloc|free|fopen|fread|fwrite|fclose|open|socket|connect|bind|accept|send|recv|pthread_.*)$' || true)
tap "$([ -z "$bad" ]; echo $?)" "device libraries reference no heap, file, socket or thread function${bad:+ (found: $(echo $bad))}"

# ---- 4. port/tls against the device build ----------------------------------------------------------
# Only the device header on the include path: nothing can pick up the host config by accident.
mkdir -p "$work/cfg"
cp "$TOP"/port/tls/config/dpm_mbedtls_device*.h "$work/cfg/"
cat >"$work/device_client.c" <<'C'
/* Tiny device-style client: arena, posix rng + TCP, port/tls. Exit 0 ok, 3 arena exhausted,
 * 2 other failure. Does NOT call psa_crypto_init(): dpm_tls_connect() must. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include "dpm/port_posix.h"
#include "dpm/port_tls.h"

#define ARENA_MAX (128u * 1024u)
static uint8_t arena[ARENA_MAX];
static uint8_t ca[8192], cert[8192], key[8192];

/* A PEM file with its NUL counted (Mbed TLS wants it), or a DER file (name ending in .der) as
 * it is; 0 if unreadable. */
static size_t read_pem(const char *path, uint8_t *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    size_t n = f != NULL ? fread(buf, 1, cap - 1, f) : 0;
    if (f != NULL) {
        fclose(f);
    }
    size_t plen = strlen(path);
    if (n == 0 || (plen > 4 && strcmp(path + plen - 4, ".der") == 0)) {
        return n;
    }
    buf[n] = 0;
    return n + 1;
}

/* The TRNG hook the device config asks for (MBEDTLS_ENTROPY_HARDWARE_ALT). */
int mbedtls_hardware_poll(void *data, unsigned char *out, size_t len, size_t *olen);
int mbedtls_hardware_poll(void *data, unsigned char *out, size_t len, size_t *olen)
{
    (void)data;
    ssize_t n = getrandom(out, len, 0);
    if (n < 0) {
        return -1;
    }
    *olen = (size_t)n;
    return 0;
}

#if defined(OS_RNG)
/* The lean profile has no CTR_DRBG (no AES) for the posix port's generator: the TLS randoms
 * come from the OS CSPRNG directly, as a device's would from its own DRBG or TRNG. */
static int os_fill(void *ctx, uint8_t *out, size_t len)
{
    (void)ctx;
    return getrandom(out, len, 0) == (ssize_t)len ? 0 : -1;
}
#endif

static void close_tcp(void *ctx)
{
    dpm_posix_tcp_close(ctx);
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 6) {
        fprintf(stderr, "usage: device_client CA PORT ARENA_BYTES [CLIENT_CERT CLIENT_KEY] (PEM, "
                        "or DER named *.der)\n");
        return 2;
    }
    size_t arena_len = (size_t)strtoul(argv[3], NULL, 10);
    size_t ca_len = read_pem(argv[1], ca, sizeof(ca));
    size_t cert_len = argc == 6 ? read_pem(argv[4], cert, sizeof(cert)) : 0;
    size_t key_len = argc == 6 ? read_pem(argv[5], key, sizeof(key)) : 0;
    if (ca_len == 0 || (argc == 6 && (cert_len == 0 || key_len == 0)) || arena_len > ARENA_MAX ||
        dpm_tls_use_arena(arena, arena_len) != DPM_OK) {
        fprintf(stderr, "setup failed\n");
        return 2;
    }
#if defined(OS_RNG)
    dpm_rng_t rng_port = {os_fill, NULL};
#else
    dpm_posix_rng_t rng;
    if (dpm_posix_rng_init(&rng, NULL, 0) != DPM_OK) {
        fprintf(stderr, "rng failed\n");
        return 2;
    }
    dpm_rng_t rng_port = dpm_posix_rng(&rng);
#endif
    dpm_posix_tcp_t tcp;
    if (dpm_posix_tcp_connect(&tcp, "127.0.0.1", (uint16_t)atoi(argv[2]), 2000) != DPM_OK) {
        fprintf(stderr, "tcp failed\n");
        return 2;
    }
    tcp.timeout_ms = 50;
    dpm_tls_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.ca = ca;
    cfg.ca_len = ca_len;
    cfg.hostname = "localhost";
    cfg.raw = dpm_posix_tcp(&tcp);
    cfg.raw_close = close_tcp;
    cfg.rng = rng_port;
    cfg.clock = dpm_posix_clock();
    cfg.handshake_timeout_ms = 5000;
    if (cert_len > 0) { /* a device certificate, for a collector that asks for one */
        cfg.client_cert = cert;
        cfg.client_cert_len = cert_len;
        cfg.client_key = key;
        cfg.client_key_len = key_len;
    }
    static dpm_tls_t tls;
    dpm_status_t st = dpm_tls_connect(&tls, &cfg);
    if (st != DPM_OK) {
        printf("connect failed: status %d: %s (Mbed TLS -0x%04x)\n", (int)st, dpm_tls_reason(&tls),
               (unsigned)-dpm_tls_mbedtls_error(&tls));
        return st == DPM_ERR_BUFFER ? 3 : 2;
    }
    printf("%s %s\n", dpm_tls_version(&tls), dpm_tls_ciphersuite(&tls));
    dpm_transport_t tr = dpm_tls_transport(&tls);
    static const char msg[] = "hello device\n";
    size_t off = 0;
    for (int i = 0; i < 100 && off < sizeof(msg) - 1; i++) {
        int32_t k = tr.send(tr.ctx, (const uint8_t *)msg + off, sizeof(msg) - 1 - off);
        if (k < 0) {
            break;
        }
        off += (size_t)k;
    }
    char buf[64] = {0};
    size_t got = 0;
    for (int i = 0; i < 100 && strchr(buf, '\n') == NULL && got < sizeof(buf) - 1; i++) {
        int32_t k = tr.recv(tr.ctx, (uint8_t *)buf + got, sizeof(buf) - 1 - got);
        if (k < 0) {
            break;
        }
        got += (size_t)k;
    }
    int ok = strcmp(buf, "ecived olleh\n") == 0;
    st = dpm_tls_close(&tls);
    printf("echo %s, close %d\n", ok ? "ok" : "WRONG", (int)st);
    if (!ok) {
        return 2;
    }
    if (st != DPM_OK) {
        return st == DPM_ERR_BUFFER ? 3 : 2;
    }
    return 0;
}
C
flags=(-std=c99 -O2 -Wall -Wextra -Wconversion -Wshadow -Wstrict-prototypes -Wundef -Werror
       -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I"$TOP/sdk/include" -I"$TOP/port/include"
       -isystem "$MBEDTLS_SRC/include" -isystem "$MBEDTLS_SRC/3rdparty/everest/include" -I"$work/cfg" -DMBEDTLS_CONFIG_FILE="\"dpm_mbedtls_$PROFILE.h\"")
[ "$PROFILE" = device ] || flags+=(-DDPM_VDAF=0 -DOS_RNG) # no two-aggregator mode, no CTR_DRBG
srcs=("$TOP/port/tls/tls_client.c" "$TOP/port/posix/tcp.c" "$TOP/port/posix/clock.c")
[ "$PROFILE" = device ] && srcs+=("$TOP/port/posix/rng.c")
"$CC" "${flags[@]}" -o "$work/device_client" "$work/device_client.c" "${srcs[@]}" "${LIBS[@]}" \
  >"$work/cc.log" 2>&1
rc=$?
sed 's/^/# /' "$work/cc.log" | head -20
tap $rc "port/tls + posix port compile with -Wall -Wextra -Wconversion ... -Werror against the $PROFILE config and link"
if [ $rc -ne 0 ]; then
  skip_rest "no client" "TLS 1.3 session" "TLS 1.2 session" "arena minimum"
  echo "1..$n"; exit 1
fi
if [ "$PROFILE" != device ]; then
  # The two-aggregator mode's HPKE needs X25519 and AES-GCM: with DPM_VDAF=1 (the default) the
  # build must stop with the reason; with DPM_VDAF=0 it compiles (x25519 says UNSUPPORTED).
  "$CC" "${flags[@]/-DDPM_VDAF=0/-DDPM_VDAF=1}" -c "$TOP/port/tls/hpke.c" -o "$work/hpke.o" >"$work/hpke.log" 2>&1
  rc=$?
  grep -q 'error: #error "the lean TLS profiles .* DPM_VDAF=0' "$work/hpke.log"
  said=$?
  tap "$([ $rc != 0 ] && [ $said = 0 ]; echo $?)" "lean: port/tls/hpke.c with DPM_VDAF=1 stops at compile time with the profile's reason"
  "$CC" "${flags[@]}" -c "$TOP/port/tls/hpke.c" -o "$work/hpke.o"
  tap $? "control: port/tls/hpke.c with DPM_VDAF=0 compiles against the lean profile"
fi
echo "# $PROFILE client ($ARCH, whole program, dynamic libc): $("$SIZE_TOOL" "$work/device_client" | awk 'END {printf "text %d, data %d, bss %d (bss includes the 128 KiB arena)", $1, $2, $3}')"

# ---- 5-7. real sessions -----------------------------------------------------------------------
if ! bash "$TOP/tests/support/tls_testpki.sh" "$work/pki" >"$work/pki.log" 2>&1; then
  sed 's/^/# /' "$work/pki.log"
  skip_rest "no PKI (openssl?)" "TLS 1.3 session" "TLS 1.2 session" "arena minimum"
  echo "1..$n"; exit 1
fi

# start_server [extra s_server options]: sets srv_pid and port.
start_server() {
  local log="$work/s_server.log"
  : >"$log"
  local crt=$work/pki/${SERVER:-server}.crt key=$work/pki/${SERVER:-server}.key
  openssl s_server -accept 127.0.0.1:0 -cert "$crt" -key "$key" \
    -rev "$@" </dev/null >"$log" 2>&1 &
  srv_pid=$!
  port=""
  for _ in $(seq 1 100); do
    port=$(sed -n 's/^ACCEPT 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log" | head -n1)
    [ -n "$port" ] && return 0
    kill -0 "$srv_pid" 2>/dev/null || break
    sleep 0.05
  done
  return 1
}
stop_server() {
  [ -n "$srv_pid" ] || return 0
  kill "$srv_pid" 2>/dev/null
  for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$srv_pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$srv_pid" 2>/dev/null
  wait "$srv_pid" 2>/dev/null
  srv_pid=""
}
# The pins, client certificate and key: PEM for the device profile, DER for the lean ones
# (DER only; converted with the commands dpm_tls_reason names for a PEM input).
if [ "$PROFILE" = device ]; then
  CA_EXT=crt CLIENT_CRT=client.crt CLIENT_KEY=client.key
else
  CA_EXT=der CLIENT_CRT=client.crt.der CLIENT_KEY=client.key.der
  openssl x509 -in "$work/pki/client.crt" -outform der -out "$work/pki/$CLIENT_CRT" &&
    openssl pkey -in "$work/pki/client.key" -outform der -out "$work/pki/$CLIENT_KEY" ||
    echo "# converting the client certificate or key to DER failed"
fi
run_client() { timeout 20 ${RUNNER:-} "$work/device_client" "$work/pki/${PIN:-ca}.${CA:-$CA_EXT}" "$port" "$1" ${client_args[@]+"${client_args[@]}"}; }

# bisect: smallest arena (256-byte steps) in which a full session succeeds; echoes it, or "".
# Below it the client must fail cleanly (exit 2 or 3), never crash. Note that Mbed TLS does not
# always say "out of memory": an allocation failing inside signature verification comes back
# as an untrusted certificate. The failures seen are logged.
bisect() {
  local lo=4096 hi=$((128 * 1024)) mid out rc
  run_client $hi >"$work/bisect.out" 2>&1 || { echo ""; return; }
  while [ $((hi - lo)) -gt 256 ]; do
    mid=$(( (lo + hi) / 2 ))
    out=$(run_client $mid 2>&1); rc=$?
    if [ $rc -eq 0 ]; then hi=$mid
    elif [ $rc -eq 2 ] || [ $rc -eq 3 ]; then
      lo=$mid
      echo "# TLS $v, $mid-byte arena: $(echo "$out" | head -n1)" >>"$work/too_small.log"
    else echo "# TLS $v: client crashed (exit $rc) with a $mid-byte arena: $out" >&2; echo ""; return
    fi
  done
  echo $hi
}

declare -A minimum
# "1.3+cert": the server asks for a client certificate from the test CA (a collector with
# --device-ca) and the device presents client.crt: the arena must still fit the budget.
for v in $VERSIONS; do
  opt=(); client_args=()
  [ "$v" = 1.2 ] && opt=(-tls1_2)
  if [ "$v" = 1.3+cert ]; then
    opt=(-Verify 1 -CAfile "$work/pki/ca.crt")
    client_args=("$work/pki/$CLIENT_CRT" "$work/pki/$CLIENT_KEY")
  fi
  if ! start_server "${opt[@]}"; then
    tap 1 "TLS $v session with the device config (s_server did not start)"; continue
  fi
  out=$(run_client $((128 * 1024)) 2>&1); rc=$?
  echo "$out" | sed 's/^/# client: /'
  echo "$out" | grep -q "^TLSv${v%+cert} " && echo "$out" | grep -q "echo ok, close 0"
  tap $(( rc | $? )) "TLS $v session with the $PROFILE config: handshake, echo, close_notify"
  minimum[$v]=$(bisect)
  if [ "$v" = 1.3 ]; then
    out=$(run_client 8192 2>&1); small_rc=$?
    echo "# TLS 1.3, 8192-byte arena: $(echo "$out" | head -n1)"
  fi
  stop_server
done
sort -u "$work/too_small.log" 2>/dev/null | sed 's/ [0-9]*-byte arena:/ too-small arena:/' | sort -u | head -n 8

ok=0 msg=""
for v in $VERSIONS; do
  m=${minimum[$v]:-}
  if [ -z "$m" ]; then ok=1; msg="$msg TLS $v: not found;"; continue; fi
  echo "# smallest arena for a TLS $v session ($PROFILE config, $ARCH): $m bytes"
  [ "$m" -le "$ARENA_BUDGET" ] || { ok=1; msg="$msg TLS $v needs $m > $ARENA_BUDGET;"; }
done
tap $ok "a full session fits in <= $ARENA_BUDGET bytes of arena; smaller arenas fail cleanly${msg:+ ($msg)}"
tap "$([ "${small_rc:-0}" = 3 ]; echo $?)" "an 8 KiB arena fails with DPM_ERR_BUFFER (record buffers do not fit)"

# ---- refusals: what the lean profile drops, each accepted by the device profile -----------------
# refusal EXPECT WHAT [s_server options]: with SERVER (server cert/key name) and PIN (CA name)
# from the environment; EXPECT is "ok" (a full session) or "refused" (connect fails cleanly).
refusal() {
  local expect=$1 what=$2 out rc got; shift 2
  client_args=()
  if ! start_server "$@"; then tap 1 "$what (s_server did not start)"; return; fi
  out=$(run_client $((128 * 1024)) 2>&1); rc=$?
  stop_server
  echo "$out" | head -n 2 | sed 's/^/# client: /'
  got=refused
  [ $rc = 0 ] && got=ok
  [ $rc = 0 ] || [ $rc = 2 ] || [ $rc = 3 ] || got="crashed (exit $rc)"
  tap "$([ "$got" = "$expect" ]; echo $?)" "$PROFILE profile, $what: $got (expected $expect)"
}
lean_refuses=ok
[ "$PROFILE" = device ] || lean_refuses=refused
refusal $lean_refuses "server offering only TLS 1.2" -tls1_2
SERVER=rsa_key_server refusal $lean_refuses "server with an RSA-2048 key (CA: P-256)"
SERVER=rsa_server PIN=rsa_ca refusal $lean_refuses "pinned RSA-2048 CA (server key: P-256)"
refusal refused "server asks for a client certificate, client has none" -Verify 1 -CAfile "$work/pki/ca.crt"

# ---- 9. lean: DER only -------------------------------------------------------------------------
# pem_refused WHAT: the client (with CA and client_args set by the caller) must fail before the
# handshake with DPM_ERR_PARAM and the reason naming both conversions.
pem_refused() {
  local what=$1 out rc
  if ! start_server -Verify 1 -CAfile "$work/pki/ca.crt"; then tap 1 "$what (s_server did not start)"; return; fi
  out=$(run_client $((128 * 1024)) 2>&1); rc=$?
  stop_server
  echo "$out" | head -n 2 | sed 's/^/# client: /'
  echo "$out" | grep -q "^connect failed: status $DPM_ERR_PARAM: PEM certificate or key given, .*DER only: convert it with openssl x509 -outform der (certificates) or openssl pkey -outform der (keys) "
  local said=$?
  tap "$([ $rc = 2 ] && [ $said = 0 ]; echo $?)" "lean: $what is refused (DPM_ERR_PARAM) with the reason that says how to convert it"
}
if [ "$PROFILE" != device ]; then
  DPM_ERR_PARAM=$(sed -n 's/^ *DPM_ERR_PARAM *= *\(-\?[0-9]*\).*/\1/p' "$TOP/sdk/include/dpm/status.h")
  client_args=()
  CA=crt pem_refused "a PEM CA"
  client_args=("$work/pki/client.crt" "$work/pki/client.key")
  pem_refused "a PEM client certificate and key (DER CA)"
  client_args=("$work/pki/$CLIENT_CRT" "$work/pki/client.key")
  pem_refused "a PEM client key (DER CA and certificate)"
fi

echo "1..$n"
exit $failed
