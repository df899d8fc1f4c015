/* SPDX-License-Identifier: Apache-2.0 */
/* dpm-sim repro dpauc: the DPAUC columns of the FHAUC paper's Tables 1 and 3
 * (sdk/docs/dpauc.md §Table 1, sdk/docs/dpauc.md §Table 3, sdk/docs/dpauc.md §Re-simulation,
 * sdk/docs/dpauc.md §Offline recipe) on synthetic data (see repro_dpauc.h). */
#include "sim/repro/repro_dpauc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpm/dpauc.h"
#include "estimate/dpauc.h"
#include "sim/pop/progress.h"
#include "sim/repro/repro_auc_data.h"
#include "sim/pop/sim_rng.h"
#include "common/stream.h"

#define PARTIES 15u
#define RUNS 100u
#define NSIZES 4u
#define NNS 3u
#define SDK_N 25u /* the largest N the default build's device code takes */
#define TOLERANCE 0.30
#define Q16 65536.0

/* The paper's data sets as sdk/docs/dpauc.md §The paper's data describes them: positives, negatives
 * and the exact AUC (scikit-learn) of each size; the synthetic data copy these. */
typedef struct {
    const char *table, *name, *row[NSIZES];
    uint32_t P[NSIZES], Q[NSIZES];
    double auc[NSIZES];
} dataset_t;

static const dataset_t kSets[2] = {
    {"table1",
     "Criteo",
     {"n=1e2", "n=1e3", "n=1e4", "n=4.58e5"},
     {40, 523, 4983, 229380},
     {60, 477, 5017, 229027},
     {0.765417, 0.752500, 0.746184, 0.745416}},
    {"table3",
     "Gender",
     {"n=1e2", "n=1e3", "n=1e4", "n=1e5"},
     {50, 500, 5000, 50000},
     {50, 500, 5000, 50000},
     {0.891600, 0.938588, 0.911407, 0.954052}},
};
static const uint32_t kN[NNS] = {25, 50, 100};
static const double kEps[2] = {1.0, 8.0};

/* Noise variants run beside the paper's: scale = mult N / eps. */
typedef struct {
    const char *col;
    double mult;
    dpm_dpauc_server_t server;
} variant_t;

static const variant_t kVariants[3] = {
    {"eps=1 sd A 4N/eps (published)", 4.0, DPM_DPAUC_SERVER_A},
    {"eps=1 sd B 4N/eps (published)", 4.0, DPM_DPAUC_SERVER_B},
    {"eps=1 sd B 2N/eps (tight)", 2.0, DPM_DPAUC_SERVER_B},
};

/* One party's true counts at the grid. */
typedef struct {
    uint64_t tp[DPM_DPAUC_EST_MAX_N], fp[DPM_DPAUC_EST_MAX_N], pos, neg;
} party_t;

static void party_counts(const auc_data_t *d, const uint32_t *thr, uint32_t n, party_t *parties)
{
    memset(parties, 0, PARTIES * sizeof(*parties));
    for (uint32_t i = 0; i < d->n; i++) {
        party_t *p = &parties[d->device[i]];
        uint32_t above = 0; /* thresholds the score reaches: score >= t_j for j < above */
        while (above < n && d->score[i] >= thr[above]) {
            above++;
        }
        for (uint32_t j = 0; j < above; j++) {
            (d->label[i] ? p->tp : p->fp)[j]++;
        }
        (d->label[i] ? &p->pos : &p->neg)[0]++;
    }
}


/* One run's summed reports at noise scale t: through the SDK's dpm_dpauc_perturb per party when
 * sdk (N <= the build's maximum; calibration published at eps_q16), else the sums drawn directly
 * (exact mode: each summed count is its total plus a sum of 15 discrete Laplace draws). */
static int one_run(const party_t *parties, const uint32_t *thr, uint32_t n, double t, int sdk,
                   uint32_t eps_q16, uint64_t key, dpm_dpauc_agg_t *a)
{
    dpm_dpauc_agg_init(a, n);
    if (sdk) {
        dpm_dpauc_t m;
        if (dpm_dpauc_init(&m, thr, n, DPM_DPAUC_PUBLISHED, eps_q16) != DPM_OK) {
            return -1;
        }
        for (uint32_t p = 0; p < PARTIES; p++) {
            dpm_dpauc_counts_t c;
            dpm_dpauc_report_t rep;
            auc_device_rand_t dr;
            memset(&c, 0, sizeof(c));
            c.n = n;
            for (uint32_t j = 0; j < n; j++) {
                c.tp[j] = (uint32_t)parties[p].tp[j];
                c.fp[j] = (uint32_t)parties[p].fp[j];
            }
            c.pos = (uint32_t)parties[p].pos;
            c.neg = (uint32_t)parties[p].neg;
            if (auc_device_rand(&dr, sim_stream_key(key, 0, p)) != 0 ||
                dpm_dpauc_perturb(&m, &dr.r, &c, &rep) != DPM_OK ||
                dpm_dpauc_agg_add(a, n, rep.tp, rep.fp, rep.tn, rep.fn) != DPM_OK) {
                return -1;
            }
        }
        return 0;
    }
    sim_rng_t rng;
    sim_rng_init(&rng, key);
    uint64_t P = 0, Q = 0, tp[DPM_DPAUC_EST_MAX_N] = {0}, fp[DPM_DPAUC_EST_MAX_N] = {0};
    for (uint32_t p = 0; p < PARTIES; p++) {
        P += parties[p].pos;
        Q += parties[p].neg;
        for (uint32_t j = 0; j < n; j++) {
            tp[j] += parties[p].tp[j];
            fp[j] += parties[p].fp[j];
        }
    }
    for (uint32_t j = 0; j < n; j++) {
        a->tp[j] = (int64_t)tp[j] + sim_rng_dlap_sum(&rng, PARTIES, t);
        a->fp[j] = (int64_t)fp[j] + sim_rng_dlap_sum(&rng, PARTIES, t);
        a->tn[j] = (int64_t)(Q - fp[j]) + sim_rng_dlap_sum(&rng, PARTIES, t);
        a->fn[j] = (int64_t)(P - tp[j]) + sim_rng_dlap_sum(&rng, PARTIES, t);
    }
    a->reports = PARTIES;
    return 0;
}

/* runs of server v at scale mult N / eps: the moments of the defined estimates. */
static int runs_of(const party_t *parties, const uint32_t *thr, uint32_t n, double eps,
                   double mult, int sdk, dpm_dpauc_server_t v, uint64_t key, uint32_t runs,
                   repro_moments_t *m)
{
    dpm_dpauc_params_t params;
    dpm_dpauc_agg_t *a = malloc(sizeof(*a));
    double t = mult * n / eps;
    int st = a != NULL && dpm_dpauc_params_init(&params, n, t) == DPM_OK ? 0 : -1;
    /* the SDK's published calibration (4N / eps') at eps' = 4 eps / mult gives scale t */
    uint32_t eps_q16 = (uint32_t)llround(4.0 * eps / mult * Q16);
    memset(m, 0, sizeof(*m));
    for (uint32_t r = 0; r < runs && st == 0; r++) {
        dpm_dpauc_estimate_t e;
        st = one_run(parties, thr, n, t, sdk, eps_q16, sim_stream_key(key, r, 0), a);
        if (st == 0 && dpm_dpauc_estimate(&params, a, v, &e) == DPM_OK && e.defined) {
            repro_moments_add(m, e.auc);
        }
    }
    free(a);
    return st;
}

static int cell(repro_t *r, const char *table, const char *row, const char *col, double ours,
                int counted)
{
    const repro_ref_t *f = repro_find_ref(r, table, row, col);
    if (f == NULL) {
        fprintf(stderr, "dpm-sim repro: no reference [%s] [%s] [%s]\n", table, row, col);
        return -1;
    }
    if (!counted) {
        return repro_own_cell(r, table, row, col, f->value, ours, REPRO_INFO,
                              "info (synthetic data: magnitude only)", 0, -1);
    }
    int match = isfinite(ours) && fabs(ours / f->value - 1.0) <= TOLERANCE;
    return repro_own_cell(r, table, row, col, f->value, ours, REPRO_PAPER,
                          "sd within +-30% of the printed sd", match, -1);
}

int repro_dpauc(const repro_opts_t *o, repro_t *r, double *seconds)
{
    double start = sim_now();
    uint32_t runs = RUNS; /* cheap: --quick runs them all (a 100-run sd is what is compared) */
    r->quick = o->quick;
    if (repro_load_paper(r, o->data_dir, "dpauc") != 0) {
        return -1;
    }
    repro_table(r, "small_n", "Small data: server B unusable at n = 1e2 (the paper's claim)",
                "sdk/docs/dpauc.md §Re-simulation (magnitudes)",
                "Ours at 8N/eps, server B: |mean - AUC| > 1 or sd > 1, as every n=1e2 row of "
                "Tables 1 and 3 (whose exact moments are heavy-tailed and not reproducible).");
    repro_table(r, "variants", "The server variants and calibrations at eps = 1 (sd over 100 runs)",
                "ours only (sdk/docs/dpauc.md §The benchmarked variant)",
                "Server A (Sun et al.'s code: clamp, sort, trapezoid) and B at the published "
                "scale 4N/eps (spends eps/2 for one label) and B at the tight 2N/eps (spends eps). "
                "Synthetic data as the tables; shown for comparison, not counted.");
    party_t *parties = malloc(PARTIES * sizeof(*parties));
    int st = parties != NULL ? 0 : -1;
    for (int s = 0; s < 2 && st == 0; s++) {
        const dataset_t *ds = &kSets[s];
        for (uint32_t z = 0; z < NSIZES && st == 0; z++) {
            auc_data_t d;
            uint64_t seed = sim_stream_key(0xDA0C, (uint32_t)s, z);
            if (auc_data_binormal(&d, ds->P[z], ds->Q[z], ds->auc[z], seed) != 0 ||
                auc_data_assign(&d, PARTIES, 0, seed + 1) != 0) {
                auc_data_free(&d);
                st = -1;
                break;
            }
            double truth = auc_data_exact(&d);
            for (uint32_t k = 0; k < NNS && st == 0; k++) {
                uint32_t n = kN[k], thr[DPM_DPAUC_EST_MAX_N];
                char row[64];
                snprintf(row, sizeof(row), "%s N=%u", ds->row[z], n);
                st = dpm_dpauc_linspace(n, thr) == DPM_OK ? 0 : -1;
                if (st != 0) {
                    break;
                }
                party_counts(&d, thr, n, parties);
                for (int e = 0; e < 2 && st == 0; e++) {
                    repro_moments_t m;
                    char col[64];
                    uint64_t key = sim_stream_key(seed, k, (uint64_t)e + 2);
                    st = runs_of(parties, thr, n, kEps[e], 8.0, n <= SDK_N, DPM_DPAUC_SERVER_B,
                                 key, runs, &m);
                    if (st != 0) {
                        break;
                    }
                    snprintf(col, sizeof(col), "eps=%g mean", kEps[e]);
                    st |= cell(r, ds->table, row, col, repro_moments_mean(&m), 0);
                    snprintf(col, sizeof(col), "eps=%g sd", kEps[e]);
                    st |= cell(r, ds->table, row, col, repro_moments_sd_pop(&m), z == NSIZES - 1);
                    if (z == 0) {
                        char srow[96];
                        snprintf(srow, sizeof(srow), "%s %s", ds->name, row);
                        double dev = fmax(fabs(repro_moments_mean(&m) - truth), repro_moments_sd_pop(&m));
                        snprintf(col, sizeof(col), "eps=%g max(|mean-AUC|, sd)", kEps[e]);
                        st |= repro_own_cell(r, "small_n", srow, col, 1.0, dev, REPRO_SELF,
                                             "> 1", dev > 1.0, 3);
                    }
                }
                for (int v = 0; v < 3 && st == 0; v++) {
                    repro_moments_t m;
                    char vrow[96];
                    snprintf(vrow, sizeof(vrow), "%s %s", ds->name, row);
                    st = runs_of(parties, thr, n, 1.0, kVariants[v].mult, 0,
                                 kVariants[v].server, sim_stream_key(seed, k, 10u + (uint64_t)v),
                                 runs, &m);
                    st |= st == 0 ? repro_own_cell(r, "variants", vrow, kVariants[v].col, NAN,
                                                   repro_moments_sd_pop(&m), REPRO_INFO, "info", 0, -1)
                                  : 0;
                }
            }
            if (o->progress) {
                fprintf(stderr, "  dpauc: %s %s done (%.1f s)\n", ds->name, ds->row[z],
                        sim_now() - start);
            }
            auc_data_free(&d);
        }
    }
    free(parties);
    if (st == 0) {
        st = repro_save_json(r, o->out_dir, "dpauc");
        FILE *f = repro_open_md(o->out_dir, "dpauc");
        if (f != NULL) {
            fprintf(f,
                    "# DPAUC, the FHAUC paper's baseline (Tables 1 and 3)\n\n"
                    "Generated by `dpm-sim repro dpauc` (host-sim/sim/repro/repro_dpauc.c) from "
                    "host-sim/scenarios/paper-dpauc.ref. Synthetic binormal data with each row's "
                    "class sizes and AUC "
                    "(sdk/docs/dpauc.md §Offline recipe: s = sigmoid(mu_y + z)), 15 parties "
                    "assigned uniformly at random, N linspace thresholds, %u runs. N = 25: every "
                    "party's report through the SDK's dpm_dpauc_perturb; N = 50 and 100 exceed "
                    "the default build's DPM_DPAUC_MAX_THRESHOLDS, so their sums are drawn "
                    "directly (exact mode). Ours uses scale 8N/eps, which the paper's spreads "
                    "match "
                    "(sdk/docs/dpauc.md §Re-simulation): REPRODUCTION ONLY "
                    "(the SDK's published calibration "
                    "at eps/2); the SDK ships 4N/eps (published) and 2N/eps (tight).\n\n",
                    runs);
            repro_write_sections(r, f);
            st |= fclose(f) == 0 ? 0 : -1;
        } else {
            st = -1;
        }
    }
    *seconds = sim_now() - start;
    return st;
}
