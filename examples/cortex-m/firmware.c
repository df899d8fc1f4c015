/* SPDX-License-Identifier: Apache-2.0 */
/* examples/cortex-m/firmware.c: firmware that makes one report of each kind on a bare-metal
 * Cortex-M (QEMU mps2 boards; `make cross` builds and runs it) through the one-call device API:
 * each dpm_device_report_* call checks, charges the privacy ledger, perturbs, encodes and
 * queues in the outbox (both in RAM here). It then prints each queued report as hex, as an app
 * that posts the bytes itself would read them (dpm_outbox_next / dpm_outbox_read).
 *
 *   qemu-system-arm -M mps2-an386 -cpu cortex-m4 -nographic -monitor none -serial none \
 *     -semihosting-config enable=on,target=native -kernel
 * build/cortex-m/cortex-m4/cortex-m-example.elf
 *
 * The randomness here is the port's test generator: QEMU has no TRNG. A product uses its
 * board's TRNG (dpm_cm_trng(), behind a DRBG) instead; with the test generator the reports
 * have no privacy at all. RAM storage forgets the ledger at every reset: a product keeps it in
 * flash. Exit status: 0 when all three reports were made and queued. */
#include <stdio.h>
#include <string.h>

#include "dpm/dpm.h"
#include "dpm/port_cortex_m.h"
#include "dpm/expert/outbox.h"

#define STATE_BYTES 5120u /* the SDK's storage region: its layout record, ledger and outbox */
#define PERIOD 0u

static void campaign(dpm_campaign_t *c, uint32_t id, dpm_mech_id_t mech)
{
    memset(c, 0, sizeof(*c));
    c->id = id;
    c->mechanism = mech;
    c->eps = DPM_EPS(1);    /* ε = 1 per report (a plain 1 would not compile) */
    c->budget = DPM_EPS(4); /* ε = 4 per period */
    c->period_seconds = 86400u;
    if (mech == DPM_MECH_ID_ROC_HIST) {
        c->nbins = 15u; /* 15 edges: 16 bins of width 1/16 */
        for (uint32_t i = 0; i < c->nbins; i++) {
            c->bin_edges[i] = (i + 1u) << 27;
        }
    } else {
        c->groups = 4u;
        c->nmetrics = 2u;
        c->metrics[0] = DPM_METRIC_TPR;
        c->metrics[1] = DPM_METRIC_FPR;
        c->frac_bits = 16u;
    }
}

/* One report of campaign c from this device's local data, through the device API. */
static dpm_status_t report(dpm_device_t *dev, const dpm_campaign_t *c, dpm_report_info_t *info)
{
    static dpm_mech_t mech;
    dpm_status_t st = dpm_device_accept_mech(dev, c, &mech, NULL);
    if (st != DPM_OK) {
        return st;
    }
    if (c->mechanism == DPM_MECH_ID_ROC_HIST) {
        /* the device's scores and labels: 8 examples */
        static const uint32_t scores[8] = {0x08000000u, 0x20000000u, 0x30000000u, 0x48000000u,
                                           0x50000000u, 0x60000000u, 0x70000000u, 0x7C000000u};
        static const int labels[8] = {0, 0, 1, 0, 1, 0, 1, 1};
        static dpm_score_hist_t hist;
        st = dpm_score_hist_init(&hist, dpm_mech_score_bins(&mech));
        for (int i = 0; i < 8 && st == DPM_OK; i++) {
            st = dpm_score_hist_add(&hist, dpm_mech_score_bins(&mech), scores[i], labels[i]);
        }
        return st == DPM_OK ? dpm_device_report_roc_hist(dev, &mech, PERIOD, &hist, info) : st;
    }
    const dpm_confusion_t conf = {40, 5, 50, 5}; /* tp fp tn fn */
    return dpm_device_report_tuple(dev, &mech, PERIOD, 1u, &conf, info);
}

/* Print every queued report as hex. */
static void print_outbox(dpm_device_t *dev)
{
    dpm_outbox_t *ob = dpm_device_outbox(dev);
    uint32_t cursor = 0;
    int found = 1;
    while (found) {
        dpm_outbox_entry_t e;
        static uint8_t bytes[DPM_REPORT_MAX_BYTES];
        if (dpm_outbox_next(ob, &cursor, &e, &found) != DPM_OK || !found ||
            dpm_outbox_read(ob, &e, bytes, sizeof(bytes)) != DPM_OK) {
            break;
        }
        printf("queued report, %u bytes:", (unsigned)e.len);
        for (uint32_t i = 0; i < e.len; i++) {
            printf(" %02x", bytes[i]);
        }
        printf("\n");
    }
}

int main(void)
{
    static uint8_t ram[STATE_BYTES];
    static dpm_ram_storage_t ram_storage;
    static dpm_cm_test_drbg_t drbg; /* NOT FOR PRODUCTION: see the top of this file */
    static dpm_device_t dev;
    dpm_cm_test_drbg_seed(&drbg, 2024u);
    dpm_device_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.rng = dpm_cm_test_drbg(&drbg);
    cfg.storage = dpm_ram_storage(&ram_storage, ram, sizeof(ram));
    /* the whole of ram: the SDK lays out its ledger and outbox in it (dpm/device.h) */
    cfg.policy.defaults.max_eps = DPM_EPS(1);
    cfg.policy.defaults.max_budget = DPM_EPS(4);
    /* all campaigns together: at most ε = 4 per device period. This board has no clock, so
     * the device period never ends: a lifetime cap (a product passes its RTC or uptime) */
    cfg.policy.device.max_eps = DPM_EPS(4);
    dpm_status_t st = dpm_device_init(&dev, &cfg);
    if (st != DPM_OK) {
        printf("cortex-m example: %s (%s)\n", dpm_device_why(&dev), dpm_strerror(st));
        return 1;
    }
    static const struct {
        const char *name;
        dpm_mech_id_t id;
    } kinds[] = {{"tuple_mr", DPM_MECH_ID_TUPLE_MR},
                 {"tuple_ml", DPM_MECH_ID_TUPLE_ML},
                 {"roc_hist", DPM_MECH_ID_ROC_HIST}};
    int failed = 0;
    for (uint32_t k = 0; k < 3u; k++) {
        dpm_campaign_t c;
        campaign(&c, 100u + k, kinds[k].id);
        dpm_report_info_t info;
        st = report(&dev, &c, &info);
        if (st != DPM_OK) {
            printf("report %s: %s (%s)\n", kinds[k].name, dpm_device_why(&dev), dpm_strerror(st));
            failed = 1;
            continue;
        }
        printf("report %s: %u bytes, ledger spent %u/65536 of %u/65536, device %u/65536\n",
               kinds[k].name, (unsigned)info.bytes, (unsigned)info.spent_in_period,
               (unsigned)c.budget.q16, (unsigned)info.device_spent);
    }
    print_outbox(&dev);
    return failed;
}
