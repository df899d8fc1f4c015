#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds with fewer mechanisms, or with more dpauc thresholds, compile and behave: libdpm.a of a
# tuple-only, a tuple_mr-only (DPM_MECH_TUPLE_ML=0), a roc_hist-only and a dpauc+ustat-only
# build (each its own VARIANT, so the main
# build is untouched), and of DPM_DPAUC_MAX_THRESHOLDS=100. A probe linked against each says which
# mechanisms dpm_mech_init builds (the others: "<name> not in this build (DPM_MECH_<X>=0)"), runs the
# exact-noise tests against the tuple-only library (its 64-byte randomness buffer) and, for
# the N = 100 build, runs the device's counting on the FHAUC paper's Appendix Z Criteo file at
# N = 100 (the Eq. 2 row 0.764375) and encodes the widest report (2058 bytes = DPM_REPORT_MAX_BYTES).
# The probe's checks are the negative controls of each other: a mechanism accepted by one build
# is refused by the next. Env: OUT, BUILD_DIR, CC.
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
#include <dpm/expert/mech.h>

static const char *name[9] = {"", "roc_hist", "dpauc", "fedauc_rr", "fedauc_lap", "ustat_bins",
                              "ustat_tree", "tuple_mr", "tuple_ml"};

int main(void)
{
    for (int id = 1; id <= 8; id++) {
        dpm_campaign_t c;
        memset(&c, 0, sizeof(c));
        c.id = 1;
        c.mechanism = (dpm_mech_id_t)id;
        c.eps = c.budget = DPM_EPS(1);
        c.groups = 2;
        c.nmetrics = 1;
        c.metrics[0] = DPM_METRIC_TPR;
        c.nbins = 1;
        c.bin_edges[0] = 1u << 30;
        c.frac_bits = DPM_FRAC_BITS;
        c.nthresholds = 1;
        c.ustat_k = 2;
        c.tree_depth = 1;
        dpm_mech_t m;
        const char *why = "";
        dpm_status_t st = dpm_mech_init(&m, &c, &why);
        printf("%s: %s\n", name[id], st == DPM_OK ? "built" : why);
    }
    printf("report max %u\n", (unsigned)DPM_REPORT_MAX_BYTES);
    /* the device's report calls of a mechanism left out refuse first, naming it (a device not
     * opened: any other check would say so instead) */
    dpm_device_t dev;
    memset(&dev, 0, sizeof(dev));
    dpm_status_t st = dpm_device_report_roc_hist(&dev, NULL, 0, NULL, NULL);
    printf("device roc_hist: %s: %s\n", dpm_strerror(st), dpm_device_why(&dev));
    st = dpm_device_report_tuple(&dev, NULL, 0, 0, NULL, NULL);
    printf("device tuple: %s: %s\n", dpm_strerror(st), dpm_device_why(&dev));
    st = dpm_device_accept_campaign(&dev, (const unsigned char *)"", 0, NULL, NULL);
    printf("device accept_campaign: %s: %s\n", dpm_strerror(st), dpm_device_why(&dev));
    st = dpm_device_flush(&dev, NULL, NULL, 0, NULL);
    printf("device flush: %s: %s\n", dpm_strerror(st), dpm_device_why(&dev));
    st = dpm_device_memo_open(&dev, 0, 0, NULL);
    printf("device memo: %s: %s\n", dpm_strerror(st), dpm_device_why(&dev));
    return 0;
}
C

cat >"$work/n100.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <dpm/dpm.h>
#include <dpm/expert/mech.h>
#include <dpm/expert/report.h>

/* the FHAUC paper's Appendix Z, Criteo 10^2 (sorted by descending score) */
static const int L[100] = {1,1,1,1,1,1,1,1,0,0,1,1,0,1,0,1,0,1,1,0,1,0,0,1,0,0,0,1,0,0,1,1,0,1,1,1,
    0,1,0,1,0,0,0,0,1,1,1,0,0,1,0,1,0,1,1,1,0,1,1,0,0,1,1,0,1,0,0,1,0,0,0,0,0,1,0,0,0,0,0,0,0,0,0,1,
    0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0};
static const double S[100] = {0.994993,0.940589,0.933580,0.927056,0.903684,0.888003,0.875263,
    0.823443,0.818983,0.809110,0.769427,0.765066,0.760797,0.760223,0.756263,0.743706,0.742362,
    0.730861,0.725250,0.724106,0.711169,0.705652,0.697237,0.687602,0.686984,0.661591,0.654400,
    0.651815,0.649116,0.633729,0.625522,0.624893,0.624018,0.604323,0.589968,0.585703,0.584595,
    0.578299,0.577718,0.574497,0.567315,0.559579,0.559375,0.556701,0.548940,0.541241,0.535890,
    0.527129,0.521303,0.516686,0.513093,0.506097,0.494667,0.474766,0.470446,0.466003,0.460527,
    0.420445,0.416992,0.405360,0.404643,0.403106,0.390159,0.384785,0.378668,0.373641,0.371009,
    0.364850,0.364435,0.356272,0.354081,0.326535,0.326458,0.324913,0.312086,0.305172,0.300945,
    0.297170,0.281996,0.269384,0.248404,0.243237,0.235678,0.218963,0.211057,0.198629,0.197364,
    0.189273,0.186326,0.183731,0.176884,0.157227,0.157160,0.155262,0.144651,0.143977,0.142319,
    0.140131,0.139888,0.091096};

int main(void)
{
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 1;
    c.mechanism = DPM_MECH_ID_DPAUC;
    c.eps = c.budget = DPM_EPS(1);
    c.nthresholds = 100;
    /* a default build's campaign holds fewer: fill what fits, still ask for 100 */
    for (unsigned i = 0; i < 100 && i < sizeof(c.thresholds) / sizeof(c.thresholds[0]); i++) {
        c.thresholds[i] = (unsigned)(((unsigned long long)i << 31) / 99u);
    }
    dpm_mech_t m;
    if (dpm_mech_init(&m, &c, NULL) != DPM_OK) {
        printf("N = 100 refused\n");
        return 1;
    }
    dpm_dpauc_counts_t k;
    dpm_dpauc_counts_init(&k, dpm_mech_dpauc(&m));
    for (int i = 0; i < 100; i++) {
        dpm_dpauc_counts_add(&k, dpm_mech_dpauc(&m), dpm_score_from_double(S[i]), L[i]);
    }
    /* Eq. 2 over the thresholds from the highest down (integer numerator) */
    long long num = 0;
    for (int j = 99; j > 0; j--) {
        num += (long long)(k.tp[j - 1] + k.tp[j]) * (long long)(k.fp[j - 1] - k.fp[j]);
    }
    printf("Eq. 2 at N = 100: %.6f\n", (double)num / (2.0 * k.pos * k.neg));
    dpm_report_t r;
    memset(&r, 0, sizeof(r));
    memset(r.report_id, 0xFF, sizeof(r.report_id));
    r.campaign_id = r.period = r.eps = r.params_hash = 0xFFFFFFFFu;
    r.mechanism = DPM_MECH_ID_DPAUC;
    r.body.dpauc.n = 100;
    for (int i = 0; i < 100; i++) {
        r.body.dpauc.tp[i] = r.body.dpauc.tn[i] = 2147483647;
        r.body.dpauc.fp[i] = r.body.dpauc.fn[i] = -2147483647;
    }
    unsigned char buf[DPM_REPORT_MAX_BYTES];
    size_t len = 0;
    dpm_status_t st = dpm_report_encode(&r, buf, sizeof(buf), &len);
    printf("widest report: %s, %u of %u bytes\n", dpm_strerror(st), (unsigned)len,
           (unsigned)DPM_REPORT_MAX_BYTES);
    return 0;
}
C

build() { # VARIANT FLAGS...
  local v=$1; shift
  env -u MAKEFLAGS -u MAKELEVEL make --no-print-directory -j2 BUILD_DIR="$BUILD_DIR" VARIANT="$v" \
    EXTRA_CFLAGS="$*" "$BUILD_DIR/$TARGET-$v/libdpm.a" >"$work/$v.log" 2>&1
}

declare -A flags=(
  [mech-tuple]="-DDPM_MECH_ROC_HIST=0 -DDPM_MECH_DPAUC=0 -DDPM_MECH_USTAT=0 -DDPM_MECH_FEDAUC=0"
  [mech-roc]="-DDPM_MECH_TUPLE=0 -DDPM_MECH_DPAUC=0 -DDPM_MECH_USTAT=0 -DDPM_MECH_FEDAUC=0"
  [mech-auc]="-DDPM_MECH_TUPLE=0 -DDPM_MECH_ROC_HIST=0 -DDPM_MECH_FEDAUC=0"
  [mech-dpauc100]="-DDPM_DPAUC_MAX_THRESHOLDS=100"
  [mech-mr]="-DDPM_MECH_ROC_HIST=0 -DDPM_MECH_DPAUC=0 -DDPM_MECH_USTAT=0 -DDPM_MECH_FEDAUC=0 -DDPM_MECH_TUPLE_ML=0 -ffunction-sections -fdata-sections"
  [mech-min]="-DDPM_MECH_ROC_HIST=0 -DDPM_MECH_DPAUC=0 -DDPM_MECH_USTAT=0 -DDPM_MECH_FEDAUC=0 -DDPM_MECH_TUPLE_ML=0 -DDPM_UPLOAD=0 -ffunction-sections -fdata-sections"
)
for v in mech-tuple mech-roc mech-auc mech-dpauc100 mech-mr mech-min; do
  build "$v" ${flags[$v]}
  tap $? "make VARIANT=$v EXTRA_CFLAGS='${flags[$v]}' builds libdpm.a"
  grep -E 'error|warning' "$work/$v.log" | head -5 | sed 's/^/# /'
  "$CC" ${LDFLAGS:-} -std=c99 -Wall -Werror -Isdk/include ${flags[$v]} "$work/probe.c" \
    "$BUILD_DIR/$TARGET-$v/libdpm.a" -Wl,--gc-sections -o "$work/probe-$v" &&
    "$work/probe-$v" >"$work/$v.out"
  sed "s/^/# $v: /" "$work/$v.out"
done

# dpm_strerror(DPM_ERR_UNSUPPORTED) as the library prints it
dpm_unsupported() { sed -n 's/^device roc_hist: \([^:]*\): roc_hist not .*/\1/p' "$work/mech-tuple.out"; }
built() { grep -q "^$2: built$" "$work/$1.out"; }
# A refused mechanism is named, with the switch that would build it (dpm_mech_name's table).
absent() {
  local sw
  case $2 in roc_hist) sw=ROC_HIST ;; dpauc) sw=DPAUC ;; ustat_*) sw=USTAT ;; tuple_*) sw=TUPLE ;; *) sw=FEDAUC ;; esac
  grep -q "^$2: $2 not in this build (DPM_MECH_$sw=0)$" "$work/$1.out"
}
built mech-tuple tuple_mr && built mech-tuple tuple_ml && absent mech-tuple roc_hist &&
  absent mech-tuple dpauc && absent mech-tuple ustat_bins && absent mech-tuple ustat_tree &&
  grep -q '^report max 80$' "$work/mech-tuple.out"
tap $? "tuple-only: tuple_mr / tuple_ml built, the rest refused; largest report 80 bytes"
unsupported="$(dpm_unsupported)"
grep -q "^device roc_hist: $unsupported: roc_hist not in this build (DPM_MECH_ROC_HIST=0)$" \
  "$work/mech-tuple.out" && grep -q '^device tuple: .*not opened' "$work/mech-tuple.out"
tap $? "tuple-only: the device's roc_hist call refuses first, naming roc_hist and its switch"
# The tuple-only build's 64-byte randomness buffer (DPM_RAND_BUF_BYTES's tuple-only default):
# the exact-noise tests (streams across refills, white-box Laplace vectors, enumerated
# distributions, goodness of fit) pass against that library as against the default one.
SUPPORT="tests/support/test_rng.c tests/support/stat_hist.c tests/support/stat_dlap.c
  tests/support/stat_gof.c tests/support/stat_ks.c tests/support/stat_ratio.c host-sim/common/prob.c"
"$CC" ${LDFLAGS:-} -std=c99 -O1 ${flags[mech-tuple]} -Isdk/include -Iport/include -Isdk/proto -Itests/support \
  -Ihost-sim -Isdk/src -Isdk/src/internal tests/unit/test_noise_exact.c $SUPPORT \
  "$BUILD_DIR/$TARGET-mech-tuple/libdpm.a" -lcmocka -lm -o "$work/noise-tuple" &&
  "$work/noise-tuple" >"$work/noise-tuple.out" 2>&1
st=$?
grep -E '^\[  (PASSED|FAILED) ' "$work/noise-tuple.out" | sed 's/^/# tuple-only noise: /'
[ $st = 0 ] && grep -q '^DPM_RAND_BUF_BYTES=64$' <("$CC" -E -dM ${flags[mech-tuple]} -Isdk/include \
  -include dpm/config.h -x c /dev/null | awk '/define DPM_RAND_BUF_BYTES /{print "DPM_RAND_BUF_BYTES=" $3}')
tap $? "tuple-only (DPM_RAND_BUF_BYTES 64): test_noise_exact passes against its library"
built mech-roc roc_hist && absent mech-roc tuple_mr && absent mech-roc dpauc &&
  absent mech-roc ustat_tree && grep -q '^report max 694$' "$work/mech-roc.out"
tap $? "roc_hist-only: roc_hist built, the rest refused; largest report 694 bytes"
grep -q "^device tuple: $unsupported: tuple_mr not in this build (DPM_MECH_TUPLE=0)$" \
  "$work/mech-roc.out" && grep -q '^device roc_hist: .*not opened' "$work/mech-roc.out"
tap $? "roc_hist-only: the device's tuple call refuses first, naming tuple_mr and its switch (negative control of the one above)"
built mech-auc dpauc && built mech-auc ustat_bins && built mech-auc ustat_tree &&
  absent mech-auc roc_hist && absent mech-auc tuple_ml && grep -q '^report max 554$' "$work/mech-auc.out"
tap $? "dpauc + ustat only: those built, roc_hist and tuples refused; largest report 554 bytes"
built mech-dpauc100 dpauc && built mech-dpauc100 roc_hist && grep -q '^report max 2058$' "$work/mech-dpauc100.out"
tap $? "DPM_DPAUC_MAX_THRESHOLDS=100: every mechanism; largest report 2058 bytes (dpauc)"

"$CC" ${LDFLAGS:-} -std=c99 -Wall -Werror -Isdk/include -DDPM_DPAUC_MAX_THRESHOLDS=100 "$work/n100.c" \
  "$BUILD_DIR/$TARGET-mech-dpauc100/libdpm.a" -o "$work/n100" && "$work/n100" >"$work/n100.out"
sed 's/^/# N = 100 build: /' "$work/n100.out"
grep -q '^Eq. 2 at N = 100: 0.764375$' "$work/n100.out"
tap $? "N = 100 on the device: Appendix Z Criteo's Eq. 2 row 0.764375"
grep -q '^widest report: ok, 2058 of 2058 bytes$' "$work/n100.out"
tap $? "N = 100: the widest dpauc report fills DPM_REPORT_MAX_BYTES (2058) to the byte"
# negative control of the probe: the default build refuses N = 100
"$CC" ${LDFLAGS:-} -std=c99 -Wall -Werror -Isdk/include "$work/n100.c" "$OUT/libdpm.a" -o "$work/n25" &&
  "$work/n25" >"$work/n25.out"
grep -q '^N = 100 refused$' "$work/n25.out"
tap $? "negative control: the default build (N <= 25) refuses a 100-threshold campaign"

# DPM_MECH_TUPLE_ML=0: tuple_mr alone, tuple_ml refused naming its own switch, and no Laplace
# sampler in the linked program (sections collected, as a firmware link does; the tuple-only
# build above links it: the negative control).
built mech-mr tuple_mr && grep -q '^tuple_ml: tuple_ml not in this build (DPM_MECH_TUPLE_ML=0)$' \
  "$work/mech-mr.out" && absent mech-mr roc_hist && grep -q '^report max 80$' "$work/mech-mr.out"
tap $? "tuple_mr-only (DPM_MECH_TUPLE_ML=0): tuple_mr built, tuple_ml refused naming DPM_MECH_TUPLE_ML"
nm "$work/probe-mech-mr" >"$work/mr.nm" && nm "$work/probe-mech-tuple" >"$work/tuple.nm" &&
  ! grep -q ' T dpm_laplace_' "$work/mr.nm" && grep -q ' T dpm_laplace_add$' "$work/tuple.nm"
tap $? "tuple_mr-only links no Laplace sampler (dpm_laplace_*); the tuple-only build does"
# DPM_UPLOAD=0 (the app posts the outbox's records, campaigns come as structs): flush and the
# campaign-bytes call refuse first with what to do instead, and the linked program has neither
# the SDK's HTTP client nor nanopb's decoder (the tuple_mr-only build above has both: the control).
grep -q "^device accept_campaign: .*: campaign bytes are not decoded in this build (DPM_UPLOAD=0): fill a dpm_campaign_t and call dpm_device_accept_mech$" "$work/mech-min.out" &&
  grep -q "^device flush: .*: the SDK's upload is not in this build (DPM_UPLOAD=0): post the records of dpm_device_outbox with your own HTTPS client$" "$work/mech-min.out" &&
  grep -q "^device flush: .*not opened" "$work/mech-mr.out" && built mech-min tuple_mr
tap $? "DPM_UPLOAD=0: dpm_device_flush and dpm_device_accept_campaign refuse first, saying what to do"
nm "$work/probe-mech-min" >"$work/min.nm" &&
  ! grep -qE ' T (dpm_http_|dpm_pb_decode|dpm_campaign_decode)' "$work/min.nm" &&
  grep -q ' T dpm_http_send_all$' "$work/mr.nm" && grep -q ' T dpm_pb_decode$' "$work/mr.nm"
tap $? "DPM_UPLOAD=0 links no HTTP client and no nanopb decoder; the tuple_mr-only build does"
# the memo (fedauc_rr's device secret) only with FedAUC: refused naming the switch, not linked
grep -q "^device memo: .*: fedauc_rr not in this build (DPM_MECH_FEDAUC=0)$" "$work/mech-mr.out" &&
  grep -q "^device memo: .*not opened\|^device memo: .*no memo" "$work/mech-dpauc100.out" &&
  ! grep -q ' T dpm_memo_open$' "$work/mr.nm" && nm "$work/probe-mech-dpauc100" | grep -c ' T dpm_memo_open$' >/dev/null
tap $? "without FedAUC, dpm_device_memo_open refuses naming DPM_MECH_FEDAUC and dpm_memo_open is not linked (a FedAUC build links it)"
printf '#include <dpm/config.h>\n' >"$work/ml-no-tuple.c"
! "$CC" -std=c99 -Isdk/include -DDPM_MECH_TUPLE=0 -DDPM_MECH_TUPLE_ML=1 -c "$work/ml-no-tuple.c" \
  -o "$work/ml-no-tuple.o" 2>"$work/ml-no-tuple.err" && grep -q 'DPM_MECH_TUPLE_ML=1 needs DPM_MECH_TUPLE=1' "$work/ml-no-tuple.err"
tap $? "DPM_MECH_TUPLE_ML=1 without DPM_MECH_TUPLE fails at compile time, saying why"

echo "1..$n"
exit $failed
