/* SPDX-License-Identifier: Apache-2.0 */
/* examples/cortex-m/firmware.c: firmware that makes one report of each kind on a bare-metal
 * Cortex-M (QEMU mps2 boards; `make cross` builds and runs it). Per report: charge the privacy
 * ledger (kept in RAM-backed storage), perturb, encode; it prints each encoded report as hex.
 *
 *   qemu-system-arm -M mps2-an386 -cpu cortex-m4 -nographic -monitor none -serial none \
 *     -semihosting-config enable=on,target=native -kernel
 * build/cortex-m/cortex-m4/cortex-m-example.elf
 *
 * The randomness here is the port's test generator: QEMU has no TRNG. A product uses its
 * board's TRNG (dpm_cm_trng(), behind a DRBG) instead; with the test generator the reports
 * have no privacy at all. Exit status: 0 when all three reports were made. */
#include <stdio.h>
#include <string.h>

#include "dpm/budget.h"
#include "dpm/port_cortex_m.h"
#include "dpm/report.h"

#define LEDGER_BYTES 1024u
#define PERIOD 0u

/* ---- the SDK calls: one report, from campaign to bytes ------------------------------------- */

/* Charge first (a crash after it can only over-count the budget), then perturb and encode. */
static dpm_status_t make_report(const dpm_campaign_t *c, dpm_ledger_t *ledger, dpm_rand_t *rand,
                                uint8_t *out, size_t cap, size_t *len)
{
    dpm_mech_t mech;
    dpm_status_t st = dpm_mech_init(&mech, c, NULL);
    if (st == DPM_OK) {
        st = dpm_ledger_charge(ledger, c->id, PERIOD, mech.eps_implemented, c->budget);
    }
    dpm_report_t report;
    if (st == DPM_OK && c->mechanism == DPM_MECH_ID_ROC_HIST) {
        /* the device's scores and labels: 8 examples */
        static const uint32_t scores[8] = {0x08000000u, 0x20000000u, 0x30000000u, 0x48000000u,
                                           0x50000000u, 0x60000000u, 0x70000000u, 0x7C000000u};
        static const int labels[8] = {0, 0, 1, 0, 1, 0, 1, 1};
        dpm_score_hist_t hist;
        st = dpm_score_hist_init(&hist, &mech.roc_hist);
        for (int i = 0; i < 8 && st == DPM_OK; i++) {
            st = dpm_score_hist_add(&hist, &mech.roc_hist, scores[i], labels[i]);
        }
        if (st == DPM_OK) {
            st = dpm_mech_report_roc_hist(&mech, rand, PERIOD, &hist, &report);
        }
    } else if (st == DPM_OK) {
        /* the device's confusion counts, its group, and the campaign's metrics on them */
        dpm_confusion_t conf = {40, 5, 50, 5};
        dpm_ratio_t values[DPM_TUPLE_MAX_METRICS];
        for (uint32_t i = 0; i < c->nmetrics && st == DPM_OK; i++) {
            st = dpm_metric_ratio(&conf, c->metrics[i], &values[i]);
        }
        if (st == DPM_OK) {
            st = dpm_mech_report_tuple(&mech, rand, PERIOD, 1u, values, &report);
        }
    }
    return st == DPM_OK ? dpm_report_encode(&report, out, cap, len) : st;
}

/* ---- the board: storage, randomness, output ------------------------------------------------ */

static void campaign(dpm_campaign_t *c, uint32_t id, dpm_mech_id_t mech)
{
    memset(c, 0, sizeof(*c));
    c->id = id;
    c->mechanism = mech;
    c->eps = DPM_EPS_ONE;         /* ε = 1 per report */
    c->budget = 4u * DPM_EPS_ONE; /* ε = 4 per period */
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

int main(void)
{
    static uint8_t ram[LEDGER_BYTES];
    dpm_cm_ram_storage_t ram_storage;
    if (dpm_cm_ram_storage_init(&ram_storage, ram, sizeof(ram)) != 0) {
        return 1;
    }
    dpm_storage_t storage = dpm_cm_ram_storage(&ram_storage);
    dpm_ledger_t ledger;
    if (dpm_ledger_open(&ledger, &storage, 0, LEDGER_BYTES) != DPM_OK) {
        printf("cortex-m example: cannot open the ledger\n");
        return 1;
    }
    dpm_cm_test_drbg_t drbg; /* NOT FOR PRODUCTION: see the top of this file */
    dpm_cm_test_drbg_seed(&drbg, 2024u);
    dpm_rng_t rng = dpm_cm_test_drbg(&drbg);
    dpm_rand_t rand;
    dpm_rand_init(&rand, &rng);

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
        uint8_t bytes[DPM_REPORT_MAX_BYTES];
        size_t len = 0;
        dpm_status_t st = make_report(&c, &ledger, &rand, bytes, sizeof(bytes), &len);
        if (st != DPM_OK) {
            printf("report %s: %s\n", kinds[k].name, dpm_strerror(st));
            failed = 1;
            continue;
        }
        dpm_eps_t spent = 0;
        (void)dpm_ledger_spent(&ledger, c.id, PERIOD, &spent);
        printf("report %s: %u bytes, ledger spent %u/65536 of %u/65536:", kinds[k].name,
               (unsigned)len, (unsigned)spent, (unsigned)c.budget);
        for (size_t i = 0; i < len; i++) {
            printf(" %02x", bytes[i]);
        }
        printf("\n");
    }
    return failed;
}
