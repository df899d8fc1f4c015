#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# DPM_CRC32_TABLE (16 or 256 entries) changes the speed and the flash of the CRC-32 behind the
# ledger's and the outbox's records, never its values: both builds of sdk/src/core/persist.c
# give the standard check value and the same CRC for 2,000 pseudo-random buffers (lengths 0 to
# 300, chained calls too). Negative controls: a table of another size stops the build with the
# config check's message, and a build whose table has one wrong entry gives other values.
set -uo pipefail
CC=${CC:-gcc}
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/crc.c" <<'C'
#include <stdio.h>
#include "core/persist.h"
int main(void)
{
    static const unsigned char check[] = "123456789";
    unsigned char buf[300];
    unsigned long x = 12345u;
    printf("check %08lx\n", (unsigned long)dpm_crc32(0, check, 9));
    for (int k = 0; k < 2000; k++) {
        size_t len = (size_t)(k % 301);
        for (size_t i = 0; i < len; i++) {
            x = x * 1103515245u + 12345u;
            buf[i] = (unsigned char)(x >> 16);
        }
        uint32_t whole = dpm_crc32(0, buf, len);
        uint32_t chained = dpm_crc32(dpm_crc32(0, buf, len / 3), buf + len / 3, len - len / 3);
        printf("%d %08lx %08lx\n", k, (unsigned long)whole, (unsigned long)chained);
    }
    return 0;
}
C
INC="-std=c99 -Wall -Werror -Wundef -Isdk/include -Isdk/src/internal -Isdk/src -Iport/include"
build() { # name CFLAGS...
  local name=$1; shift
  "$CC" $INC "$@" "$work/crc.c" sdk/src/core/persist.c -o "$work/$name" 2>"$work/$name.err" &&
    "$work/$name" >"$work/$name.txt"
}
build t16 -DDPM_CRC32_TABLE=16; tap $? "the 16-entry table builds and runs"
build t256 -DDPM_CRC32_TABLE=256; tap $? "the 256-entry table builds and runs"
grep -q '^check cbf43926$' "$work/t16.txt" && grep -q '^check cbf43926$' "$work/t256.txt"
tap $? "both give the CRC-32 check value cbf43926 for \"123456789\""
cmp -s "$work/t16.txt" "$work/t256.txt" && [ "$(wc -l <"$work/t16.txt")" = 2001 ]
tap $? "both give the same CRC for 2000 buffers, whole and chained"
grep -v '^check' "$work/t16.txt" | awk '$2 != $3 { bad = 1 } END { exit bad }'
tap $? "a CRC chained over two calls equals the CRC of the whole buffer"

build t257 -DDPM_CRC32_TABLE=257
tap "$([ $? != 0 ] && grep -q 'DPM_CRC32_TABLE must be 16' "$work/t257.err"; echo $?)" \
  "negative control: DPM_CRC32_TABLE=257 stops the build with the config check's message"
sed 's/0x77073096u,/0x77073097u,/' sdk/src/core/persist.c >"$work/broken.c"
"$CC" $INC -DDPM_CRC32_TABLE=256 "$work/crc.c" "$work/broken.c" -o "$work/broken" &&
  "$work/broken" >"$work/broken.txt"
tap "$([ $? = 0 ] && ! cmp -s "$work/t16.txt" "$work/broken.txt" && ! grep -q '^check cbf43926$' "$work/broken.txt"; echo $?)" \
  "negative control: one wrong entry in the 256-entry table changes the values"
echo "1..$n"
exit $failed
