#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Kconfig and the header defaults agree, option by option, and the bridge works both ways.
set -uo pipefail
PYTHON=${PYTHON:-/usr/bin/python3}
CC=${CC:-gcc}
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

opts=$(grep -E '^config DPM_' Kconfig | awk '{print $2}')
# A program that prints every option's value as the headers resolve it.
{
  echo '#include <stdio.h>'
  echo '#include "dpm/config.h"'
  echo 'int main(void) {'
  for o in $opts; do echo "  printf(\"$o=%ld\\n\", (long)($o));"; done
  echo '  return 0; }'
} >"$work/print.c"

"$PYTHON" .make/kconfig.py defconfig "$work/.config" >/dev/null &&
  "$PYTHON" .make/kconfig.py header "$work/.config" "$work/autoconf.h"
tap $? "kconfiglib parses Kconfig and writes an autoconf header"

"$CC" -Isdk/include "$work/print.c" -o "$work/plain" && "$work/plain" >"$work/plain.txt"
"$CC" -Isdk/include -include "$work/autoconf.h" "$work/print.c" -o "$work/kconf" &&
  "$work/kconf" >"$work/kconf.txt"
diff -u "$work/plain.txt" "$work/kconf.txt" | sed 's/^/# /'
tap "$(cmp -s "$work/plain.txt" "$work/kconf.txt"; echo $?)" \
  "Kconfig defaults equal the header defaults ($(wc -l <"$work/plain.txt") options)"

# Every Kconfig option is bridged in config.h (else a Kconfig change would be ignored).
missing=""
for o in $opts; do grep -q "CONFIG_$o\b" sdk/include/dpm/config.h || missing="$missing $o"; done
tap "$([ -z "$missing" ]; echo $?)" "every Kconfig option has a CONFIG_ bridge${missing:+ (missing:$missing)}"

# A non-default Kconfig value and a disabled boolean reach the macros.
sed -e 's/^CONFIG_DPM_MAX_BINS=.*/CONFIG_DPM_MAX_BINS=48/' \
    -e 's/^CONFIG_DPM_MECH_ROC_HIST=y/# CONFIG_DPM_MECH_ROC_HIST is not set/' "$work/.config" >"$work/.config2"
"$PYTHON" .make/kconfig.py header "$work/.config2" "$work/autoconf2.h"
"$CC" -Isdk/include -include "$work/autoconf2.h" "$work/print.c" -o "$work/kconf2" &&
  "$work/kconf2" >"$work/kconf2.txt"
grep -q '^DPM_MAX_BINS=48$' "$work/kconf2.txt" && grep -q '^DPM_MECH_ROC_HIST=0$' "$work/kconf2.txt"
tap $? "a Kconfig value (MAX_BINS=48) and a disabled mechanism (ROC_HIST=0) reach the build"

# The randomness buffer's default follows the mechanisms, in Kconfig as in the header: a
# tuple-only selection (no other value set) gets 64 bytes both ways, the default build 256.
printf '%s\n' '# CONFIG_DPM_MECH_ROC_HIST is not set' '# CONFIG_DPM_MECH_DPAUC is not set' \
  '# CONFIG_DPM_MECH_USTAT is not set' '# CONFIG_DPM_MECH_FEDAUC is not set' >"$work/.config3"
"$PYTHON" .make/kconfig.py header "$work/.config3" "$work/autoconf3.h"
"$CC" -Isdk/include -include "$work/autoconf3.h" "$work/print.c" -o "$work/kconf3" &&
  "$work/kconf3" >"$work/kconf3.txt"
"$CC" -Isdk/include -DDPM_MECH_ROC_HIST=0 -DDPM_MECH_DPAUC=0 -DDPM_MECH_USTAT=0 \
  -DDPM_MECH_FEDAUC=0 "$work/print.c" -o "$work/plain3" && "$work/plain3" >"$work/plain3.txt"
grep -q '^DPM_RAND_BUF_BYTES=64$' "$work/kconf3.txt" && cmp -s "$work/kconf3.txt" "$work/plain3.txt" &&
  grep -q '^DPM_RAND_BUF_BYTES=256$' "$work/plain.txt"
tap $? "tuple-only: DPM_RAND_BUF_BYTES defaults to 64 in Kconfig and the header alike (else 256)"

# A user config file overrides Kconfig, and the checks stop impossible values.
echo '#define DPM_MAX_BINS 32' >"$work/user.h"
"$CC" -Isdk/include -I"$work" -DDPM_CONFIG_FILE='"user.h"' -include "$work/autoconf2.h" \
  "$work/print.c" -o "$work/user" && "$work/user" | grep -q '^DPM_MAX_BINS=32$'
tap $? "DPM_CONFIG_FILE wins over Kconfig"
"$CC" -Isdk/include -DDPM_MAX_GRR_K=1 -fsyntax-only "$work/print.c" 2>"$work/err.txt"
[ $? -ne 0 ] && grep -q 'DPM_MAX_GRR_K must be' "$work/err.txt"
tap $? "an impossible value (DPM_MAX_GRR_K=1) stops the build with a clear #error"

# The TLS profile choice (issue 32): the lean profile needs the two-aggregator mode off. In
# Kconfig the choice is not offered with DPM_VDAF on; with it off, it reaches DPM_TLS_LEAN and
# the Makefile's Mbed TLS config for a bare-metal target; -D users get the #error.
"$PYTHON" - "$work/.config4" <<'PY' >"$work/choice.txt" 2>&1
import sys, kconfiglib
kc = kconfiglib.Kconfig("Kconfig", warn_to_stderr=False)
lean = kc.syms["DPM_TLS_LEAN"]
lean.set_value("y")  # refused while DPM_VDAF is y (depends on !DPM_VDAF)
with_vdaf = lean.str_value
kc.syms["DPM_VDAF"].set_value("n")
lean.set_value("y")
print(with_vdaf, lean.str_value, kc.syms["DPM_TLS_DEVICE"].str_value, kc.syms["DPM_TLS_LEAN_AES"].str_value)
kc.write_config(sys.argv[1])
PY
[ "$(cat "$work/choice.txt")" = "n y n n" ]
tap $? "Kconfig: DPM_TLS_LEAN is refused while DPM_VDAF is on, chosen once it is off ($(head -c 40 "$work/choice.txt"))"
"$PYTHON" .make/kconfig.py header "$work/.config4" "$work/autoconf4.h" &&
  "$CC" -Isdk/include -include "$work/autoconf4.h" "$work/print.c" -o "$work/kconf4" &&
  "$work/kconf4" >"$work/kconf4.txt"
grep -q '^DPM_TLS_LEAN=1$' "$work/kconf4.txt" && grep -q '^DPM_TLS_DEVICE=0$' "$work/kconf4.txt" &&
  grep -q '^DPM_TLS_LEAN=0$' "$work/plain.txt" && grep -q '^DPM_TLS_DEVICE=1$' "$work/plain.txt" &&
  grep -q '^DPM_TLS_LEAN_AES=0$' "$work/plain.txt"
tap $? "the lean choice reaches DPM_TLS_LEAN=1, DPM_TLS_DEVICE=0 (defaults: lean 0, lean_aes 0, device 1)"
mbedtls_config() { make -n -p TARGET=arm-none-eabi "$@" 2>/dev/null | sed -n "s/^MBEDTLS_CFLAGS :=.*dpm_mbedtls_\([a-z_]*\)\.h.*/\1/p" | head -n 1; }
sed 's/^CONFIG_DPM_TLS_LEAN=y$/CONFIG_DPM_TLS_LEAN_AES=y/' "$work/.config4" >"$work/.config5"
[ "$(mbedtls_config KCONFIG_CONFIG="$work/.config4")" = device_lean ] &&
  [ "$(mbedtls_config KCONFIG_CONFIG="$work/.config5")" = device_lean_aes ] &&
  [ "$(mbedtls_config KCONFIG_CONFIG="$work/.config")" = device ]
tap $? "Makefile: a bare-metal build takes dpm_mbedtls_device_lean(_aes).h with a lean choice, else device"
"$CC" -Isdk/include -DDPM_TLS_LEAN=1 -fsyntax-only "$work/print.c" 2>"$work/err.txt"
[ $? -ne 0 ] && grep -q 'lean TLS profiles (DPM_TLS_LEAN, DPM_TLS_LEAN_AES) have no X25519' "$work/err.txt"
tap $? "-DDPM_TLS_LEAN=1 with DPM_VDAF on (the default) stops the build with the reason"
"$CC" -Isdk/include -DDPM_TLS_LEAN=1 -DDPM_VDAF=0 -fsyntax-only "$work/print.c"
tap $? "control: -DDPM_TLS_LEAN=1 -DDPM_VDAF=0 compiles"
"$CC" -Isdk/include -DDPM_TLS_LEAN=1 -DDPM_TLS_LEAN_AES=1 -DDPM_VDAF=0 -fsyntax-only "$work/print.c" 2>"$work/err.txt"
[ $? -ne 0 ] && grep -q 'exactly one of DPM_TLS_DEVICE, DPM_TLS_LEAN and DPM_TLS_LEAN_AES' "$work/err.txt"
tap $? "two TLS profiles at once stop the build"

echo "1..$n"
exit $failed
