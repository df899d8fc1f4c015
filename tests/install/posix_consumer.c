/* SPDX-License-Identifier: Apache-2.0 */
/* The posix port as an app uses it from an installed tree: <dpm/port_posix.h> (no Mbed TLS
 * header needed) and the port's libraries. One report with the port's CTR_DRBG as the random
 * source; tests/unit/test_install.sh builds it with pkg-config and with CMake. */
#include <stdio.h>
#include <string.h>

#include <dpm/dpm.h>
#include <dpm/port_posix.h>

int main(void)
{
    dpm_posix_rng_t drbg;
    if (dpm_posix_rng_init(&drbg, (const uint8_t *)"install-test", 12) != 0) {
        fprintf(stderr, "posix consumer: the CTR_DRBG did not seed\n");
        return 1;
    }
    dpm_rng_t rng = dpm_posix_rng(&drbg);

    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 8;
    c.mechanism = DPM_MECH_ID_TUPLE_MR;
    c.eps = DPM_EPS_ONE;
    c.budget = DPM_EPS_ONE;
    c.groups = 2;
    c.nmetrics = 1;
    c.metrics[0] = DPM_METRIC_TPR;
    const dpm_ratio_t tpr = {3, 4};
    dpm_mech_t mech;
    dpm_rand_t rand;
    dpm_report_t report;
    uint8_t wire[DPM_REPORT_MAX_BYTES];
    size_t len = 0;
    dpm_status_t st = dpm_mech_init(&mech, &c, NULL);
    if (st == DPM_OK) {
        st = dpm_rand_init(&rand, &rng);
    }
    if (st == DPM_OK) {
        st = dpm_mech_report_tuple(&mech, &rand, 1, 1, &tpr, &report);
    }
    if (st == DPM_OK) {
        st = dpm_report_encode(&report, wire, sizeof(wire), &len);
    }
    dpm_posix_rng_free(&drbg);
    if (st != DPM_OK) {
        fprintf(stderr, "posix consumer: %s\n", dpm_strerror(st));
        return 1;
    }
    printf("posix consumer: report of %zu bytes from the port's CTR_DRBG\n", len);
    return 0;
}
