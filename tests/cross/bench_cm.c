/* SPDX-License-Identifier: Apache-2.0 */
/* Device cost on a Cortex-M4 (make bench, through .make/bench.py): instructions to make one
 * report, counted under `qemu-system-arm -M mps2-an386 -icount shift=0`, where virtual time
 * advances exactly one nanosecond per instruction. SysTick counts virtual time (QEMU does not
 * model the DWT cycle counter), so ticks are converted to instructions by a calibration loop of
 * known length. One report = perturb + encode (dpm_mech_report_* then dpm_report_encode),
 * averaged over REPS reports, with randomness from the port's test generator (its own cost
 * included: ~4 instructions per random byte); the ledger charge on RAM storage is measured on
 * its own, and so is the whole one-call device path (dpm_device_report_*: checks, ledger
 * charge, perturb, encode, outbox write, all on RAM storage). Prints one bench.json metric per
 * line. */
#include <stdio.h>
#include <string.h>

#include "cm_ticks.h"
#include "dpm/dpm.h"
#include "dpm/port_cortex_m.h"
#include "dpm/expert/budget.h"
#include "dpm/expert/fedauc.h"
#include "dpm/expert/mech.h"
#include "dpm/expert/noise.h"
#include "dpm/expert/outbox.h"
#include "dpm/expert/report.h"
#include "test_receipt.h"

#define REPS 200u

static void metric(const char *name, double instructions)
{
    printf("{\"name\": \"%s\", \"value\": %.1f, \"unit\": \"instructions\", \"baseline\": null, "
           "\"ratio\": null}\n",
           name, instructions);
}

static void campaign(dpm_campaign_t *c, dpm_mech_id_t mech)
{
    memset(c, 0, sizeof(*c));
    c->id = 1;
    c->mechanism = mech;
    c->eps = DPM_EPS(1);
    c->budget = DPM_EPS(64);
    c->period_seconds = 86400u;
    if (mech == DPM_MECH_ID_ROC_HIST) {
        c->nbins = 15u; /* 16 bins */
        for (uint32_t i = 0; i < c->nbins; i++) {
            c->bin_edges[i] = (i + 1u) << 27;
        }
    } else {
        c->groups = 4u;
        c->nmetrics = 2u;
        c->metrics[0] = DPM_METRIC_TPR;
        c->metrics[1] = DPM_METRIC_FPR;
    }
}

/* The AUC family's campaigns as repro auc_compare runs them (eps 1): roc_hist at 24 uniform bins
 * with 2 groups, dpauc at N = 25 (published), ustat_bins k = 24, ustat_tree depth 5 (3 GRR
 * levels), fedauc_rr / fedauc_lap (orthogonal) at 31-bit scores. */
static void auc_campaign(dpm_campaign_t *c, dpm_mech_id_t mech)
{
    campaign(c, DPM_MECH_ID_ROC_HIST);
    c->mechanism = mech;
    if (mech == DPM_MECH_ID_ROC_HIST) {
        c->groups = 2u;
        c->nbins = 23u; /* 24 bins */
        for (uint32_t i = 0; i < c->nbins; i++) {
            c->bin_edges[i] = (uint32_t)(((uint64_t)(i + 1u) << 31) / 24u);
        }
    } else {
        c->nbins = 0;
        memset(c->bin_edges, 0, sizeof(c->bin_edges));
    }
    if (mech == DPM_MECH_ID_DPAUC) {
        c->nthresholds = 25u;
        for (uint32_t i = 0; i < 25u; i++) {
            c->thresholds[i] = (uint32_t)(((uint64_t)i << 31) / 24u);
        }
        c->calibration = DPM_DPAUC_PUBLISHED;
    } else if (mech == DPM_MECH_ID_USTAT_BINS) {
        c->ustat_k = 24u;
        c->ustat_kernel = DPM_USTAT_AUC;
    } else if (mech == DPM_MECH_ID_USTAT_TREE) {
        c->tree_depth = 5u;
        c->tree_grr_levels = 3u;
    } else if (mech == DPM_MECH_ID_FEDAUC_LAP) {
        c->fedauc_variant = DPM_FEDAUC_ORTHOGONAL;
        c->fedauc_p_share_q16 = 32768u;
    }
    if (mech == DPM_MECH_ID_FEDAUC_RR || mech == DPM_MECH_ID_FEDAUC_LAP) {
        c->fedauc_score_bits = 31u;
    }
}

#define FA_MAX 1000u /* examples of a fedauc device: 10 and 1,000 */

/* FedAUC, both rounds on a device of n <= FA_MAX examples: round 1 (prepare + upload encode)
 * and round 2 (accept the rank reply + report + encode), averaged over reps; the server's reply
 * (these scores at doubled ranks 2 (j + 1) among 2,000) is made between them, not counted. */
static int fedauc_bench(dpm_mech_id_t id, uint32_t n, dpm_rand_t *rand, double per_tick,
                        const char *name1, const char *name2)
{
    static dpm_campaign_t c;
    static dpm_mech_t mech;
    static dpm_report_t report;
    static uint32_t scores[FA_MAX], up_scores[FA_MAX], perm[FA_MAX], ranks2[FA_MAX];
    static uint64_t work[FA_MAX], ids[FA_MAX];
    static uint8_t labels[FA_MAX], up[DPM_FEDAUC_UPLOAD_MAX_BYTES(FA_MAX, 31u)],
        reply[DPM_FEDAUC_REPLY_MAX_BYTES(FA_MAX)], bytes[DPM_REPORT_MAX_BYTES];
    dpm_memo_t memo;
    memset(&memo, 0, sizeof(memo));
    memset(memo.key, 0x5A, sizeof(memo.key));
    memo.opened = DPM_MEMO_OPENED;
    for (uint32_t j = 0; j < n; j++) {
        scores[j] = (j + 1u) << 21;
        labels[j] = (uint8_t)(j & 1u);
        ids[j] = j;
    }
    auc_campaign(&c, id);
    int ok = dpm_mech_init(&mech, &c, NULL) == DPM_OK;
    const dpm_fedauc_buffers_t b = {up_scores, perm, work, FA_MAX};
    long t1 = 0, t2 = 0;
    const uint32_t reps = n > 100u ? 2u : 20u; /* SysTick's 24 bits: < 4e8 instructions a run */
    for (uint32_t i = 0; i < reps && ok; i++) {
        dpm_fedauc_session_t s;
        size_t len = 0, rlen = 0, blen = 0;
        ticks_start();
        ok &= dpm_fedauc_prepare(&mech, rand, scores, n, &b, &s) == DPM_OK &&
              dpm_fedauc_upload_encode(&s, up, sizeof(up), &len) == DPM_OK;
        long t = ticks_stop();
        ok &= t > 0;
        t1 += t;
        /* the server */
        dpm_fedauc_header_t h;
        memset(&h, 0, sizeof(h));
        h.campaign_id = s.campaign_id;
        h.mechanism = s.mechanism;
        h.params_hash = s.params_hash;
        memcpy(h.token, s.token, sizeof(h.token));
        h.total = 2u * FA_MAX;
        h.n = n;
        for (uint32_t j = 0; j < n; j++) {
            ranks2[j] = 2u * (up_scores[j] >> 21);
        }
        ok &= dpm_fedauc_reply_encode(&h, ranks2, reply, sizeof(reply), &rlen) == DPM_OK;
        dpm_fedauc_ranks_t rk;
        int rr = id == DPM_MECH_ID_FEDAUC_RR;
        ticks_start();
        ok &= ok && dpm_fedauc_accept(&s, &mech, reply, rlen, rr ? ids : NULL, &rk, NULL) ==
                        DPM_OK &&
              dpm_mech_report_fedauc(&mech, rand, TEST_RECEIPT(&mech, 0), &s, &rk, labels,
                                     rr ? ids : NULL, rr ? &memo : NULL, &report) == DPM_OK &&
              dpm_report_encode(&report, bytes, sizeof(bytes), &blen) == DPM_OK;
        t = ticks_stop();
        ok &= t > 0;
        t2 += t;
    }
    if (ok) {
        metric(name1, (double)t1 * per_tick / reps);
        metric(name2, (double)t2 * per_tick / reps);
    }
    return ok;
}

/* A new device on 13 KB of RAM storage (the layout and ledger, a 12 KB outbox, erased afresh)
 * that accepted campaign c into *mech, or NULL. No clock here, so its device cap (1000) counts
 * over its whole life; a new period per report, so the campaign's budget never runs out. */
static dpm_device_t *new_device(dpm_rng_t rng, const dpm_campaign_t *c, dpm_mech_t *mech)
{
    /* the layout record's area and the ledger (3 ledger records), then an 8 KB outbox; with the
     * compaction in steps (DPM_OUTBOX_COPY_RATIO 4) it holds 42 tuple reports, and the average
     * below queues 50 into one device: 12 KB */
    static uint8_t state[3u * DPM_LEDGER_RECORD_MAX + 12288u];
    static dpm_ram_storage_t ss;
    static dpm_device_t dev;
    dpm_device_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.rng = rng;
    cfg.storage = dpm_ram_storage(&ss, state, sizeof(state));
    cfg.policy.defaults.max_eps = DPM_EPS(1);
    cfg.policy.defaults.max_budget = DPM_EPS(64);
    cfg.policy.device.max_eps = DPM_EPS(1000);
    return dpm_device_init(&dev, &cfg) == DPM_OK &&
                   dpm_device_accept_mech(&dev, c, mech, NULL) == DPM_OK
               ? &dev
               : NULL;
}

/* The one-call tuple path at every outbox fill level: a new device fills its outbox one report
 * at a time (each call timed on its own, at the fill level it finds) until it has no room, then
 * an app delivers the oldest report before each further report, until the outbox has switched
 * banks twice (the compaction in steps: the calls that copy, and the ones that switch, are
 * timed like the others). Prints every call's figure and the worst over all of them. */
static int device_path_sweep(dpm_rng_t rng, const dpm_campaign_t *c, double per_tick)
{
    static dpm_mech_t mech;
    dpm_device_t *d = new_device(rng, c, &mech);
    int ok = d != NULL;
    const dpm_confusion_t conf = {45, 5, 45, 5};
    double worst = 0, fill_worst = 0, compact_cost = 0;
    uint32_t period = 0, worst_fill = 0, switches = 0, steps = 0;
    while (ok && switches < 2u) {
        uint32_t fill = dpm_outbox_pending(&d->outbox);
        if (!dpm_outbox_room(&d->outbox, DPM_REPORT_TUPLE_MAX)) {
            /* full: the app delivers the oldest report */
            uint32_t cursor = 0;
            dpm_outbox_entry_t e;
            int found = 0;
            ok &= dpm_outbox_next(&d->outbox, &cursor, &e, &found) == DPM_OK && found &&
                  dpm_outbox_remove(&d->outbox, &e) == DPM_OK;
            continue;
        }
        uint32_t seq = d->outbox.seq;
        int copying = d->outbox.copying;
        ticks_start();
        ok &= dpm_device_report_tuple(d, &mech, period++, 1u, &conf, NULL) == DPM_OK;
        long t = ticks_stop();
        ok &= t > 0;
        double x = (double)t * per_tick;
        int switched = d->outbox.seq != seq;
        int stepped = copying || d->outbox.copying;
        switches += (uint32_t)switched;
        steps += (uint32_t)stepped;
        printf("# device_path fill %u%s: %.0f instructions\n", fill,
               switched ? " (switches banks)" : stepped ? " (copies)" : "", x);
        if (switched || stepped) {
            compact_cost = x > compact_cost ? x : compact_cost;
        } else if (x > fill_worst) {
            fill_worst = x;
            worst_fill = fill;
        }
        worst = x > worst ? x : worst;
    }
    if (ok) {
        printf("# device_path: %u calls copied, 2 bank switches; worst without copying at fill "
               "%u\n",
               steps, worst_fill);
        metric("device.cm4.tuple_mr.device_path.fill_worst.instructions", fill_worst);
        metric("device.cm4.tuple_mr.device_path.compaction.instructions", compact_cost);
        metric("device.cm4.tuple_mr.device_path.worst.instructions", worst);
    }
    return ok;
}

int main(void)
{
    ticks_start();
    spin(CM_TICKS_SPIN);
    long cal = ticks_stop();
    if (cal <= 0) {
        printf("bench: SysTick does not count (%ld)\n", cal);
        return 1;
    }
    double per_tick = 2.0 * CM_TICKS_SPIN / (double)cal;
    printf("# calibration: %u-instruction loop = %ld SysTick ticks (%.3f instructions per tick)\n",
           2u * CM_TICKS_SPIN, cal, per_tick);

    dpm_cm_test_drbg_t drbg; /* NOT FOR PRODUCTION: a benchmark */
    dpm_cm_test_drbg_seed(&drbg, 7u);
    dpm_rng_t rng = dpm_cm_test_drbg(&drbg);
    dpm_rand_t rand;
    dpm_rand_init(&rand, &rng);
    static uint8_t bytes[DPM_REPORT_MAX_BYTES];
    size_t len = 0;
    int ok = 1;

    dpm_campaign_t c;
    static dpm_mech_t mech;
    static dpm_report_t report;
    campaign(&c, DPM_MECH_ID_TUPLE_MR);
    ok &= dpm_mech_init(&mech, &c, NULL) == DPM_OK;
    const dpm_ratio_t values[2] = {{45, 50}, {5, 50}};
    ticks_start();
    for (uint32_t i = 0; i < REPS && ok; i++) {
        ok &= dpm_mech_report_tuple(&mech, &rand, TEST_RECEIPT(&mech, 0), 1u, values, &report) == DPM_OK &&
              dpm_report_encode(&report, bytes, sizeof(bytes), &len) == DPM_OK;
    }
    long t = ticks_stop();
    ok &= t > 0;
    metric("device.cm4.tuple_mr.instructions", (double)t * per_tick / REPS);

    campaign(&c, DPM_MECH_ID_ROC_HIST);
    ok &= dpm_mech_init(&mech, &c, NULL) == DPM_OK;
    static dpm_score_hist_t hist;
    ok &= dpm_score_hist_init(&hist, dpm_mech_score_bins(&mech)) == DPM_OK;
    for (uint32_t i = 0; i < 64u && ok; i++) {
        ok &= dpm_score_hist_add(&hist, dpm_mech_score_bins(&mech), i << 25, (int)(i & 1u)) == DPM_OK;
    }
    ticks_start();
    for (uint32_t i = 0; i < REPS && ok; i++) {
        ok &= dpm_mech_report_roc_hist(&mech, &rand, TEST_RECEIPT(&mech, 0), &hist, &report) == DPM_OK &&
              dpm_report_encode(&report, bytes, sizeof(bytes), &len) == DPM_OK;
    }
    t = ticks_stop();
    ok &= t > 0;
    metric("device.cm4.roc_hist16.instructions", (double)t * per_tick / REPS);

    /* The AUC family, one report each (perturb + encode), campaigns as auc_campaign says. */
    auc_campaign(&c, DPM_MECH_ID_ROC_HIST);
    c.groups = 0;
    ok &= dpm_mech_init(&mech, &c, NULL) == DPM_OK;
    static dpm_score_hist_t hist24;
    ok &= dpm_score_hist_init(&hist24, dpm_mech_score_bins(&mech)) == DPM_OK;
    for (uint32_t i = 0; i < 64u && ok; i++) {
        ok &= dpm_score_hist_add(&hist24, dpm_mech_score_bins(&mech), i << 25, (int)(i & 1u)) ==
              DPM_OK;
    }
    ticks_start();
    for (uint32_t i = 0; i < REPS && ok; i++) {
        ok &= dpm_mech_report_roc_hist(&mech, &rand, TEST_RECEIPT(&mech, 0), &hist24, &report) ==
                  DPM_OK &&
              dpm_report_encode(&report, bytes, sizeof(bytes), &len) == DPM_OK;
    }
    t = ticks_stop();
    ok &= t > 0;
    metric("device.cm4.roc_hist24.instructions", (double)t * per_tick / REPS);

    auc_campaign(&c, DPM_MECH_ID_ROC_HIST);
    ok &= dpm_mech_init(&mech, &c, NULL) == DPM_OK;
    ticks_start();
    for (uint32_t i = 0; i < REPS && ok; i++) {
        ok &= dpm_mech_report_roc_hist_group(&mech, &rand, TEST_RECEIPT(&mech, 0), i & 1u,
                                             &hist24, &report) == DPM_OK &&
              dpm_report_encode(&report, bytes, sizeof(bytes), &len) == DPM_OK;
    }
    t = ticks_stop();
    ok &= t > 0;
    metric("device.cm4.roc_hist24_groups2.instructions", (double)t * per_tick / REPS);

    auc_campaign(&c, DPM_MECH_ID_DPAUC);
    ok &= dpm_mech_init(&mech, &c, NULL) == DPM_OK;
    static dpm_dpauc_counts_t counts;
    ok &= dpm_dpauc_counts_init(&counts, dpm_mech_dpauc(&mech)) == DPM_OK;
    for (uint32_t i = 0; i < 64u && ok; i++) {
        ok &= dpm_dpauc_counts_add(&counts, dpm_mech_dpauc(&mech), i << 25, (int)(i & 1u)) ==
              DPM_OK;
    }
    ticks_start();
    for (uint32_t i = 0; i < REPS / 4u && ok; i++) { /* 100 noised counts a report: fewer reps */
        ok &= dpm_mech_report_dpauc(&mech, &rand, TEST_RECEIPT(&mech, 0), &counts, &report) ==
                  DPM_OK &&
              dpm_report_encode(&report, bytes, sizeof(bytes), &len) == DPM_OK;
    }
    t = ticks_stop();
    ok &= t > 0;
    metric("device.cm4.dpauc25.instructions", (double)t * per_tick / (REPS / 4u));

    const dpm_ustat_example_t ex = {3u << 28, 1u, 0u};
    auc_campaign(&c, DPM_MECH_ID_USTAT_BINS);
    ok &= dpm_mech_init(&mech, &c, NULL) == DPM_OK;
    ticks_start();
    for (uint32_t i = 0; i < REPS && ok; i++) {
        ok &= dpm_mech_report_ustat_bins(&mech, &rand, TEST_RECEIPT(&mech, 0), &ex, &report) ==
                  DPM_OK &&
              dpm_report_encode(&report, bytes, sizeof(bytes), &len) == DPM_OK;
    }
    t = ticks_stop();
    ok &= t > 0;
    metric("device.cm4.ustat_bins24.instructions", (double)t * per_tick / REPS);

    auc_campaign(&c, DPM_MECH_ID_USTAT_TREE);
    ok &= dpm_mech_init(&mech, &c, NULL) == DPM_OK;
    ticks_start();
    for (uint32_t i = 0; i < REPS && ok; i++) {
        ok &= dpm_mech_report_ustat_tree(&mech, &rand, TEST_RECEIPT(&mech, 0), &ex, &report) ==
                  DPM_OK &&
              dpm_report_encode(&report, bytes, sizeof(bytes), &len) == DPM_OK;
    }
    t = ticks_stop();
    ok &= t > 0;
    metric("device.cm4.ustat_tree5.instructions", (double)t * per_tick / REPS);

    ok &= fedauc_bench(DPM_MECH_ID_FEDAUC_RR, 10u, &rand, per_tick,
                       "device.cm4.fedauc_rr10.round1.instructions",
                       "device.cm4.fedauc_rr10.round2.instructions");
    ok &= fedauc_bench(DPM_MECH_ID_FEDAUC_LAP, 10u, &rand, per_tick,
                       "device.cm4.fedauc_lap10_orthogonal.round1.instructions",
                       "device.cm4.fedauc_lap10_orthogonal.round2.instructions");
    ok &= fedauc_bench(DPM_MECH_ID_FEDAUC_RR, 1000u, &rand, per_tick,
                       "device.cm4.fedauc_rr1000.round1.instructions",
                       "device.cm4.fedauc_rr1000.round2.instructions");
    ok &= fedauc_bench(DPM_MECH_ID_FEDAUC_LAP, 1000u, &rand, per_tick,
                       "device.cm4.fedauc_lap1000_orthogonal.round1.instructions",
                       "device.cm4.fedauc_lap1000_orthogonal.round2.instructions");

    static uint8_t ram[1024];
    static dpm_ram_storage_t s;
    dpm_storage_t storage = dpm_ram_storage(&s, ram, sizeof(ram));
    dpm_ledger_t ledger;
    ok &= dpm_ledger_open(&ledger, &storage, 0, sizeof(ram)) == DPM_OK;
    ticks_start();
    for (uint32_t i = 0; i < 50u && ok; i++) {
        ok &= dpm_ledger_charge(&ledger, 1, 0, DPM_EPS_ONE, 64u * DPM_EPS_ONE) == DPM_OK;
    }
    t = ticks_stop();
    ok &= t > 0;
    metric("device.cm4.ledger_charge.instructions", (double)t * per_tick / 50.0);

    /* The whole one-call path, 50 reports into an empty outbox: the average. */
    campaign(&c, DPM_MECH_ID_TUPLE_MR);
    dpm_device_t *dev = new_device(rng, &c, &mech);
    ok &= dev != NULL;
    const dpm_confusion_t conf = {45, 5, 45, 5};
    ticks_start();
    for (uint32_t i = 0; i < 50u && ok; i++) {
        ok &= dpm_device_report_tuple(dev, &mech, i, 1u, &conf, NULL) == DPM_OK;
    }
    t = ticks_stop();
    ok &= t > 0;
    metric("device.cm4.tuple_mr.device_path.instructions", (double)t * per_tick / 50.0);
    ok &= device_path_sweep(rng, &c, per_tick);
    if (!ok) {
        printf("bench: a call failed\n");
    }
    return ok ? 0 : 1;
}
