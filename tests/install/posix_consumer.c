/* SPDX-License-Identifier: Apache-2.0 */
/* The posix port as an app uses it from an installed tree: <dpm/port_posix.h> (no Mbed TLS
 * header needed) and the port's libraries. One charged report on a device whose random source
 * is the port's CTR_DRBG; tests/unit/test_install.sh builds it with pkg-config, CMake
 * find_package and add_subdirectory. */
#include <stdio.h>

#include <dpm/dpm.h>
#include <dpm/port_posix.h>

int main(void)
{
    static dpm_posix_rng_t drbg;
    static uint8_t mem[8192];
    static dpm_ram_storage_t ram;
    static dpm_device_t dev;
    dpm_status_t seeded = dpm_posix_rng_init(&drbg, (const uint8_t *)"install-test", 12);
    if (seeded != DPM_OK) {
        fprintf(stderr, "posix consumer: the CTR_DRBG did not seed: %s\n", dpm_strerror(seeded));
        return 1;
    }
    dpm_device_config_t cfg = {.rng = dpm_posix_rng(&drbg),
                               .clock = dpm_posix_clock(),
                               .storage = dpm_ram_storage(&ram, mem, sizeof(mem)),
                               .policy.defaults = {0, DPM_EPS(1), DPM_EPS(1)}};
    dpm_campaign_t campaign = {.id = 8, .mechanism = DPM_MECH_ID_TUPLE_MR, .eps = DPM_EPS(1),
                               .budget = DPM_EPS(1), .groups = 2, .nmetrics = 1,
                               .metrics = {DPM_METRIC_ACCURACY}};
    dpm_confusion_t conf = {3, 1, 5, 1};
    dpm_mech_t mech;
    dpm_report_info_t info;
    dpm_status_t st = dpm_device_init(&dev, &cfg);
    if (st == DPM_OK) {
        st = dpm_device_accept_mech(&dev, &campaign, &mech, NULL);
    }
    if (st == DPM_OK) {
        st = dpm_device_report_tuple(&dev, &mech, 0, 1, &conf, &info);
    }
    dpm_posix_rng_free(&drbg);
    if (st != DPM_OK) {
        fprintf(stderr, "posix consumer: %s\n", dpm_strerror(st));
        return 1;
    }
    printf("posix consumer: one report of %u bytes queued, drawn from the port's CTR_DRBG\n",
           (unsigned)info.bytes);
    return 0;
}
