#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# DPM_VDAF=0 compiles the two-aggregator mode out: sdk/src/vdaf then defines nothing but the
# public dpm_prio3_* calls, each returning DPM_ERR_UNSUPPORTED (so an app still links and is told
# why), and the instance struct keeps its size (the ABI fingerprint carries DPM_VDAF). A probe
# calls every public function against such a build. DPM_VDAF_FIELD64=0 drops the Field64
# variants alone: prio3_f64.c defines nothing, their inits return DPM_ERR_UNSUPPORTED, the
# Field128 ones still work. Negative control: the same probe against the default build gets
# DPM_OK from every instance call.
set -uo pipefail
cd "$(dirname "$0")/../.."
CC=${CC:-gcc}
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/probe.c" <<'C'
#include <stdio.h>
#include "dpm/expert/vdaf.h"
int main(void)
{
    dpm_prio3_t v;
    uint8_t b[64] = {0};
    uint64_t w[8] = {0}, m = 0;
    int64_t z[8] = {0};
    dpm_prio3_shard_out_t out = {b, 64, b, 64, b, 64};
    const dpm_status_t st[] = {
        dpm_prio3_count_init(&v, 2),
        dpm_prio3_sum_init(&v, 2, 255),
        dpm_prio3_sumvec_init(&v, 2, 48, 255, 26),
        dpm_prio3_histogram_init(&v, 2, 16, 3),
        dpm_prio3_multihot_init(&v, 2, 12, 5, 4),
        dpm_prio3_sumvec_multiproof_init(&v, 2, 3, 10, 255, 9),
        dpm_prio3_higher_degree_init(&v, 2),
        dpm_prio3_shard(&v, b, 1, &m, 1, b, b, 64, &out, w, 8),
        dpm_prio3_verify_init(&v, b, b, 1, 0, b, b, 0, b, 48, b, 64, b, 64, w, 8),
        dpm_prio3_verifier_shares_to_message(&v, b, 1, b, 64, b, 32, w, 8),
        dpm_prio3_verify_next(&v, b, 8, b, 0, b, 64),
        dpm_prio3_aggregate(&v, b, 8, b, 8),
        dpm_prio3_unshard(&v, b, 16, 1, w, 8),
        dpm_prio3_add_noise(&v, b, 8, z, 1),
        dpm_prio3_unshard_signed(&v, b, 16, 1, z, 8)};
    for (unsigned i = 0; i < sizeof(st) / sizeof(st[0]); i++) {
        printf("%d\n", (int)st[i]);
    }
    return 0;
}
C
build() { # out-dir flags...
  local dir=$1; shift
  mkdir -p "$dir"
  for f in sdk/src/vdaf/*.c sdk/src/core/status.c; do
    "$CC" -std=c99 -O2 -Wall -Wextra -Werror "$@" -Isdk/include -Isdk/src/internal -Isdk/src \
      -c "$f" -o "$dir/$(basename "${f%.c}").o" || return 1
  done
  "$CC" -std=c99 "$@" -Isdk/include "$work/probe.c" "$dir"/*.o -o "$dir/probe"
}
build "$work/off" -DDPM_VDAF=0
tap $? "sdk/src/vdaf builds with DPM_VDAF=0"
defined=$(for o in "$work"/off/{aes128,keccak,xof,prio3_f64,prio3_f128}.o; do nm --defined-only "$o" | awk '$2 ~ /[TDRB]/ {print $3}'; done)
tap "$([ -z "$defined" ]; echo $?)" "with DPM_VDAF=0 only prio3.c defines symbols${defined:+ (also: $defined)}"
calls=$(nm --defined-only "$work/off/prio3.o" | awk '$2 == "T" {print $3}' | sort | tr '\n' ' ')
tap "$([ "$(echo "$calls" | wc -w)" = 15 ] && [ -z "$(echo "$calls" | tr ' ' '\n' | grep -v '^dpm_prio3_' | grep .)" ]; echo $?)" \
    "prio3.c defines the 15 public calls, nothing else ($calls)"
out=$("$work/off/probe" | sort -u)
tap "$([ "$out" = "-13" ]; echo $?)" "every call returns DPM_ERR_UNSUPPORTED (-13) (got: $(echo $out))"
build "$work/f128" -DDPM_VDAF_FIELD64=0
tap $? "sdk/src/vdaf builds with DPM_VDAF_FIELD64=0"
defined=$(nm --defined-only "$work/f128/prio3_f64.o" | awk '$2 ~ /[TDRB]/ {print $3}')
tap "$([ -z "$defined" ]; echo $?)" "with DPM_VDAF_FIELD64=0 prio3_f64.c defines nothing${defined:+ (found: $defined)}"
inits=$("$work/f128/probe" | head -n 7 | tr '\n' ' ')
# count, sum, sumvec, histogram, multihot, sumvec_multiproof, higher_degree
tap "$([ "$inits" = "-13 -13 0 0 0 -13 -13 " ]; echo $?)" \
    "with DPM_VDAF_FIELD64=0 the Field64 inits return DPM_ERR_UNSUPPORTED, the Field128 ones succeed (got: $inits)"
build "$work/on"
first=$("$work/on/probe" | head -n 7 | sort -u)
tap "$([ "$first" = "0" ]; echo $?)" "negative control: in the default build every instance call succeeds (got: $(echo $first))"
echo "1..$n"
exit $failed
