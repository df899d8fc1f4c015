/* SPDX-License-Identifier: Apache-2.0 */
/* Encoded size of each report kind, as metrics JSON lines {"name","value","unit",...}:
 * report.<mechanism>.bytes for one metric (the common case) and .bytes_max for the largest
 * report the mechanism can produce (4 metrics, large group id, large period). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dpm/expert/report.h"
#include "dpm/expert/mech.h"
#include "dpm/expert/noise.h"
#include "test_receipt.h"
#include "test_rng.h"

static size_t encoded_size(dpm_mech_id_t mech, uint32_t nmetrics, uint32_t period,
                           dpm_rand_t *r)
{
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 1;
    c.mechanism = mech;
    c.eps = DPM_EPS(1);
    c.budget = DPM_EPS(1);
    c.groups = nmetrics == 1 ? 2 : DPM_MAX_GROUPS;
    c.nmetrics = nmetrics;
    const dpm_metric_t m[] = {DPM_METRIC_TPR, DPM_METRIC_FPR, DPM_METRIC_ACCURACY,
                              DPM_METRIC_PRECISION};
    memcpy(c.metrics, m, sizeof(m));
    c.frac_bits = DPM_FRAC_BITS;
    dpm_mech_t mc;
    if (dpm_mech_init(&mc, &c, NULL) != DPM_OK) {
        return 0;
    }
    const dpm_ratio_t v[4] = {{1, 3}, {2, 3}, {1, 1}, {0, 1}};
    size_t worst = 0;
    for (int i = 0; i < 2000; i++) { /* Laplace values vary in length: keep the largest */
        dpm_report_t rep;
        uint8_t buf[DPM_REPORT_MAX_BYTES];
        size_t len = 0;
        if (dpm_mech_report_tuple(&mc, r, TEST_RECEIPT(&mc, period), c.groups - 1, v, &rep) != DPM_OK ||
            dpm_report_encode(&rep, buf, sizeof(buf), &len) != DPM_OK) {
            return 0;
        }
        worst = len > worst ? len : worst;
    }
    return worst;
}

int main(void)
{
    test_rng_t t;
    test_rng_seed(&t, 1);
    dpm_rng_t rng = test_rng_port(&t);
    dpm_rand_t r;
    dpm_rand_init(&r, &rng);
    const struct {
        const char *name;
        dpm_mech_id_t id;
    } mechs[] = {{"tuple_mr", DPM_MECH_ID_TUPLE_MR}, {"tuple_ml", DPM_MECH_ID_TUPLE_ML}};
    for (size_t i = 0; i < 2; i++) {
        size_t one = encoded_size(mechs[i].id, 1, 30, &r);
        size_t max = encoded_size(mechs[i].id, 4, 1u << 20, &r);
        printf("{\"name\": \"report.%s.bytes\", \"value\": %zu, \"unit\": \"bytes\", "
               "\"baseline\": null, \"ratio\": null}\n",
               mechs[i].name, one);
        printf("{\"name\": \"report.%s.bytes_max\", \"value\": %zu, \"unit\": \"bytes\", "
               "\"baseline\": null, \"ratio\": null}\n",
               mechs[i].name, max);
    }
    return 0;
}
