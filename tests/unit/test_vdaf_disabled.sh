#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# DPM_VDAF=0 compiles the two-aggregator mode out: sdk/src/vdaf then defines nothing but the
# public dpm_prio3_* calls, each returning DPM_ERR_UNSUPPORTED (so an app still links and is told
# why), and the instance struct keeps its size (the ABI fingerprint carries DPM_VDAF). A probe
# calls every public function against such a build. DPM_VDAF_FIELD64=0 drops the Field64
# variants alone: prio3_f64.c defines nothing, their inits return DPM_ERR_UNSUPPORTED, the
# Field128 ones still work; DPM_VDAF_MULTIHOT=0 drops MultihotCountVec the same way, and a
# task of a variant left out is refused naming its switch. Negative control: the same probes
# against the default build get DPM_OK.
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
build "$work/shapes" -DDPM_VDAF_FIELD64=0 -DDPM_VDAF_MULTIHOT=0
tap $? "sdk/src/vdaf builds with DPM_VDAF_FIELD64=0 DPM_VDAF_MULTIHOT=0 (SumVec and Histogram only)"
inits=$("$work/shapes/probe" | head -n 7 | tr '\n' ' ')
tap "$([ "$inits" = "-13 -13 0 0 -13 -13 -13 " ]; echo $?)" \
    "with DPM_VDAF_MULTIHOT=0 MultihotCountVec's init returns DPM_ERR_UNSUPPORTED too (got: $inits)"
build "$work/on"
first=$("$work/on/probe" | head -n 7 | sort -u)
tap "$([ "$first" = "0" ]; echo $?)" "negative control: in the default build every instance call succeeds (got: $(echo $first))"

# A task of a variant the build left out is refused with the switch to turn on (it said "built
# without the VDAF (DPM_VDAF)" before, the wrong advice when only the variant was missing). The
# default build encodes a MultihotCountVec task; the SumVec-and-Histogram build decodes it.
cat >"$work/task.c" <<'C'
#include <stdio.h>
#include <string.h>
#include "dpm/expert/dap.h"
#include "dpm/expert/hpke.h"
/* no argument: print a MultihotCountVec task's TaskConfiguration as hex; "rr": a SumVec task's
 * with label RR (DPM_DAP_EXT_LOCAL_LABEL_RR); "dec HEX": decode it and print the status and the
 * reason */
static dpm_hpke_config_t key(uint8_t b)
{
    dpm_hpke_config_t c;
    memset(&c, 0, sizeof(c));
    c.id = b;
    c.kem_id = DPM_HPKE_KEM_X25519_SHA256;
    c.kdf_id = DPM_HPKE_KDF_HKDF_SHA256;
    c.aead_id = DPM_HPKE_AEAD_AES_128_GCM;
    memset(c.public_key, b, sizeof(c.public_key));
    return c;
}
int main(int argc, char **argv)
{
    static uint8_t buf[4096];
    const uint8_t id[DPM_DAP_TASK_ID_BYTES] = {1};
    dpm_hpke_config_t l = key(1), h = key(2);
    if (argc > 2) {
        size_t n = strlen(argv[2]) / 2;
        for (size_t i = 0; i < n; i++) sscanf(argv[2] + 2 * i, "%2hhx", &buf[i]);
        dpm_dap_task_t t;
        const char *why = "";
        dpm_status_t st = dpm_dap_task_decode(id, buf, n, &l, &h, &t, &why);
        printf("%d %s\n", (int)st, why ? why : "");
        return 0;
    }
    dpm_dap_task_t t;
    memset(&t, 0, sizeof(t));
    static const char info[] = "probe", lu[] = "https://leader.example", hu[] = "https://helper.example";
    t.task_info = (dpm_span_t){(const uint8_t *)info, 5};
    t.leader_url = (dpm_span_t){(const uint8_t *)lu, sizeof(lu) - 1};
    t.helper_url = (dpm_span_t){(const uint8_t *)hu, sizeof(hu) - 1};
    t.time_precision = 3600;
    t.min_batch_size = 100;
    t.batch_mode = DPM_DAP_BATCH_TIME_INTERVAL;
    t.dp_mechanism = DPM_DAP_DP_DISCRETE_LAPLACE;
    t.central_eps = 65536u;
    if (argc > 1) { /* rr */
        if (dpm_prio3_sumvec_init(&t.vdaf, 2, 16, 255, 4) != DPM_OK) return 1;
        t.local_eps = 65536u;
        t.local_bins = 8;
    } else if (dpm_prio3_multihot_init(&t.vdaf, 2, 12, 5, 4) != DPM_OK) return 1;
    size_t len = 0;
    dpm_status_t st = dpm_dap_task_config_encode(&t, buf, sizeof(buf), &len);
    if (st != DPM_OK) { printf("encode %d\n", (int)st); return 1; }
    for (size_t i = 0; i < len; i++) printf("%02x", buf[i]);
    printf("\n");
    return 0;
}
C
task() { # out-dir flags...: the task probe against sdk/src/report's DAP code and the VDAF
  local dir=$1; shift
  for f in sdk/src/report/dap.c sdk/src/report/hpke_config.c sdk/src/noise/grr.c \
           sdk/src/noise/xexp.c sdk/src/noise/rand.c; do
    "$CC" -std=c99 -O2 -Wall -Wextra -Werror "$@" -Isdk/include -Isdk/src/internal -Isdk/src \
      -c "$f" -o "$dir/$(basename "${f%.c}").o" || return 1
  done
  "$CC" -std=c99 "$@" -Isdk/include "$work/task.c" "$dir"/*.o -o "$dir/task"
}
task "$work/on" && task "$work/shapes" -DDPM_VDAF_FIELD64=0 -DDPM_VDAF_MULTIHOT=0 &&
  mkdir -p "$work/norr" && build "$work/norr" -DDPM_DAP_LABEL_RR=0 && task "$work/norr" -DDPM_DAP_LABEL_RR=0
tap $? "the task probe builds against the three"
hex=$("$work/on/task")
on=$("$work/on/task" dec "$hex")
shapes=$("$work/shapes/task" dec "$hex")
tap "$([ "$on" = "0 " ] &&
       [ "$shapes" = "-13 task's Prio3 variant not in this build (DPM_VDAF_FIELD64: Count, Sum; DPM_VDAF_MULTIHOT)" ]; echo $?)" \
    "a MultihotCountVec task: taken by the default build, refused naming DPM_VDAF_MULTIHOT without it (got: '$on' / '$shapes')"
# A label-RR task (issue 31's hybrid): taken by the default build, refused by name without
# DPM_DAP_LABEL_RR (make size's profile that leaves it out).
rr_hex=$("$work/on/task" rr)
on=$("$work/on/task" dec "$rr_hex")
norr=$("$work/norr/task" dec "$rr_hex")
plain=$("$work/norr/task" dec "$hex")
tap "$([ "$on" = "0 " ] && [ "$plain" = "0 " ] &&
       [ "$norr" = "-13 unknown task extension (DPM_DAP_LABEL_RR off?)" ]; echo $?)" \
    "a label-RR task: taken by the default build, refused naming DPM_DAP_LABEL_RR without it, whose other tasks still decode (got: '$on' / '$norr' / '$plain')"
echo "1..$n"
exit $failed
