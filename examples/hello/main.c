/* SPDX-License-Identifier: Apache-2.0 */
/* hello: the smallest dpmetrics app. Local examples -> confusion counts -> one charged,
 * perturbed, encoded tuple_mr report in the outbox, ready for the app to post. Only libdpm:
 * the app brings its random source (here the kernel's CSPRNG) and storage (here RAM; a real
 * device keeps the ledger in flash or a file, or its budget starts over at every boot). */
#include <stdio.h>
#include <sys/random.h>

#include <dpm/dpm.h>

static int fill(void *ctx, uint8_t *out, size_t len)
{
    (void)ctx;
    return getrandom(out, len, 0) == (ssize_t)len ? 0 : -1;
}

int main(void)
{
    static uint8_t mem[8192];
    static dpm_ram_storage_t ram;
    static dpm_device_t dev;
    dpm_device_config_t cfg = {.rng = {fill, NULL},
                               .storage = dpm_ram_storage(&ram, mem, sizeof(mem)), /* SDK lays it out */
                               .policy.defaults = {0, DPM_EPS(1), DPM_EPS(1)}}; /* ε: DPM_EPS */
    dpm_campaign_t campaign = {.id = 1, .mechanism = DPM_MECH_ID_TUPLE_MR, .eps = DPM_EPS(1),
                               .budget = DPM_EPS(1), .groups = 4, .nmetrics = 1,
                               .metrics = {DPM_METRIC_TPR}};
    const int labels[6] = {1, 1, 0, 1, 0, 0}, predictions[6] = {1, 0, 0, 1, 1, 0};
    dpm_confusion_t conf = {0, 0, 0, 0};
    for (int i = 0; i < 6; i++) {
        dpm_confusion_add(&conf, labels[i], predictions[i]);
    }
    dpm_mech_t mech;
    dpm_report_info_t info;
    dpm_status_t st = dpm_device_init(&dev, &cfg);
    if (st == DPM_OK) {
        st = dpm_device_accept_mech(&dev, &campaign, &mech, NULL);
    }
    if (st == DPM_OK) {
        st = dpm_device_report_tuple(&dev, &mech, 0, /* group */ 2, &conf, &info);
    }
    if (st != DPM_OK) { /* the device says why: which argument, which limit */
        fprintf(stderr, "hello: %s (%s)\n", dpm_device_why(&dev), dpm_strerror(st));
        return 1;
    }
    char eps[16];
    dpm_eps_format(info.eps_spent, eps, sizeof(eps));
    printf("hello: one tuple_mr report of %u bytes queued, epsilon spent %s\n", info.bytes, eps);
    return 0;
}
