#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# FedAUC is optional: libdpm.a builds without it (DPM_MECH_FEDAUC=0), where a fedauc campaign
# is refused as "fedauc_lap not in this build (DPM_MECH_FEDAUC=0)" and the FedAUC calls say
# DPM_ERR_UNSUPPORTED, and builds with FedAUC alone (roc_hist and tuple off), where it runs and
# the other mechanisms are refused. The default build accepting all three is the negative
# control of the probe. Each variant has its own build directory. Env: OUT, BUILD_DIR, CC.
set -uo pipefail
OUT=${OUT:-build/host}
BUILD_DIR=${BUILD_DIR:-build}
CC=${CC:-gcc}
TARGET=$(basename "$OUT" | sed 's/-.*//')
n=0 failed=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/probe.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <dpm/dpm.h>
#include <dpm/expert/fedauc.h>
#include <dpm/expert/mech.h>

static const char *try(dpm_mech_id_t id)
{
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 1;
    c.mechanism = id;
    c.eps = c.budget = DPM_EPS(1);
    if (id == DPM_MECH_ID_FEDAUC_LAP) {
        c.fedauc_variant = DPM_FEDAUC_ADAPTIVE;
        c.fedauc_score_bits = 16;
    } else if (id == DPM_MECH_ID_ROC_HIST) {
        c.nbins = 1;
        c.bin_edges[0] = 1u << 30;
    } else {
        c.groups = 2;
        c.nmetrics = 1;
        c.metrics[0] = DPM_METRIC_TPR;
    }
    dpm_mech_t m;
    const char *why = "ok";
    return dpm_mech_init(&m, &c, &why) == DPM_OK ? "ok" : why;
}

int main(void)
{
    dpm_fedauc_session_t s;
    dpm_status_t st = dpm_fedauc_prepare(NULL, NULL, NULL, 0, NULL, &s);
    printf("fedauc_lap: %s; roc_hist: %s; tuple_mr: %s; prepare: %s\n",
           try(DPM_MECH_ID_FEDAUC_LAP), try(DPM_MECH_ID_ROC_HIST), try(DPM_MECH_ID_TUPLE_MR),
           st == DPM_ERR_UNSUPPORTED ? "unsupported" : "available");
    return 0;
}
C

probe() { # VARIANT FLAGS -> the probe's line
  local variant=$1 flags=$2 vout=$BUILD_DIR/$TARGET-$1
  env -u MAKEFLAGS -u MAKELEVEL make --no-print-directory -j2 BUILD_DIR="$BUILD_DIR" \
    VARIANT="$variant" EXTRA_CFLAGS="$flags" "$vout/libdpm.a" >"$work/$variant.log" 2>&1 &&
    "$CC" ${LDFLAGS:-} -std=c99 -Wall -Werror -Isdk/include $flags "$work/probe.c" "$vout/libdpm.a" \
      -o "$work/probe-$variant" >>"$work/$variant.log" 2>&1 &&
    "$work/probe-$variant"
}

want_none="fedauc_lap: fedauc_lap not in this build (DPM_MECH_FEDAUC=0); roc_hist: ok; tuple_mr: ok; prepare: unsupported"
got=$(probe nofedauc "-DDPM_MECH_FEDAUC=0")
tap "$([ "$got" = "$want_none" ]; echo $?)" "without FedAUC (DPM_MECH_FEDAUC=0): builds; $got"
[ "$got" = "$want_none" ] || tail -5 "$work/nofedauc.log" | sed 's/^/# /'

want_only="fedauc_lap: ok; roc_hist: roc_hist not in this build (DPM_MECH_ROC_HIST=0); tuple_mr: tuple_mr not in this build (DPM_MECH_TUPLE=0); prepare: available"
got=$(probe fedonly "-DDPM_MECH_ROC_HIST=0 -DDPM_MECH_TUPLE=0")
tap "$([ "$got" = "$want_only" ]; echo $?)" "FedAUC alone (roc_hist, tuple off): builds; $got"
[ "$got" = "$want_only" ] || tail -5 "$work/fedonly.log" | sed 's/^/# /'

# Negative control: the default library accepts all three, so the probe can tell them apart.
"$CC" ${LDFLAGS:-} -std=c99 -Wall -Werror -Isdk/include "$work/probe.c" "$OUT/libdpm.a" -o "$work/probe-default" &&
  got=$("$work/probe-default")
tap "$([ "$got" = "fedauc_lap: ok; roc_hist: ok; tuple_mr: ok; prepare: available" ]; echo $?)" \
  "negative control: the default build runs every mechanism; $got"

echo "1..$n"
exit $failed
