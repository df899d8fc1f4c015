/* SPDX-License-Identifier: Apache-2.0 */
/* A program that uses the SDK only as an app would: <dpm/dpm.h> and libdpm, nothing from the
 * source tree. tests/unit/test_install.sh builds it against an installed tree three ways
 * (Makefile, pkg-config, CMake) and runs it: one tuple_mr mechanism from a campaign struct,
 * one report made, encoded, decoded and checked. */
#include <stdio.h>
#include <string.h>

#include <dpm/dpm.h>

/* The app's own random source. TEST ONLY: a fixed-seed xorshift, so every build of this
 * program prints the same report; a device passes a CSPRNG here (getrandom, SecRandomCopyBytes,
 * a hardware TRNG). */
static int test_fill(void *ctx, uint8_t *out, size_t len)
{
    uint64_t *s = ctx;
    for (size_t i = 0; i < len; i++) {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        out[i] = (uint8_t)(*s >> 32);
    }
    return 0;
}

static int fail(const char *what, dpm_status_t st, const char *reason)
{
    fprintf(stderr, "consumer: %s: %s%s%s\n", what, dpm_strerror(st), reason ? ": " : "",
            reason ? reason : "");
    return 1;
}

int main(void)
{
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 7;
    c.mechanism = DPM_MECH_ID_TUPLE_MR;
    c.eps = DPM_EPS_ONE;
    c.budget = 4 * DPM_EPS_ONE;
    c.period_seconds = 86400;
    c.groups = 4;
    c.nmetrics = 1;
    c.metrics[0] = DPM_METRIC_ACCURACY;

    const char *reason = NULL;
    dpm_mech_t mech;
    dpm_status_t st = dpm_mech_init(&mech, &c, &reason);
    if (st != DPM_OK) {
        return fail("campaign", st, reason);
    }

    uint64_t seed = 0x9E3779B97F4A7C15u;
    dpm_rng_t rng = {test_fill, &seed};
    dpm_rand_t rand;
    if ((st = dpm_rand_init(&rand, &rng)) != DPM_OK) {
        return fail("rand", st, NULL);
    }

    const dpm_ratio_t accuracy = {9, 10};
    dpm_report_t report, decoded;
    uint8_t wire[DPM_REPORT_MAX_BYTES];
    size_t len = 0;
    if ((st = dpm_mech_report_tuple(&mech, &rand, 1, 2, &accuracy, &report)) != DPM_OK) {
        return fail("report", st, NULL);
    }
    if ((st = dpm_report_encode(&report, wire, sizeof(wire), &len)) != DPM_OK) {
        return fail("encode", st, NULL);
    }
    if ((st = dpm_report_decode(wire, len, &decoded)) != DPM_OK) {
        return fail("decode", st, NULL);
    }
    if ((st = dpm_mech_check_report(&mech, &decoded, &reason)) != DPM_OK) {
        return fail("check", st, reason);
    }
    if (memcmp(decoded.report_id, report.report_id, DPM_REPORT_ID_BYTES) != 0 ||
        decoded.body.tuple.group != report.body.tuple.group ||
        decoded.body.tuple.value[0] != report.body.tuple.value[0]) {
        fprintf(stderr, "consumer: the decoded report differs from the one encoded\n");
        return 1;
    }
    char eps[16];
    dpm_eps_format(mech.eps_implemented, eps, sizeof(eps));
    printf("consumer: tuple_mr report of %zu bytes (group %u, value %+d, eps %s) decoded and "
           "checked\n",
           len, (unsigned)decoded.body.tuple.group, (int)decoded.body.tuple.value[0], eps);
    return 0;
}
