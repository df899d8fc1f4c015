/* SPDX-License-Identifier: Apache-2.0 */
/* roc_hist examples of simulated devices (see roc_sim.h). */
#include "sim/pop/roc_sim.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/binormal.h"
#include "common/prob.h"
#include "sim/pop/parallel.h"
#include "sim/pop/progress.h"
#include "sim/pop/sim_rng.h"
#include "common/stream.h"

#define ROC_TAG UINT64_C(0x524F435F48495354) /* "ROC_HIST": keeps the example keys apart */
#define TWO31 2147483648.0
#define MAX_THREADS 16u

static double cdf_at(double x)
{
    return isinf(x) ? (x > 0 ? 1.0 : 0.0) : prob_norm_cdf(x);
}

static double sf_at(double x)
{
    return isinf(x) ? (x > 0 ? 0.0 : 1.0) : prob_norm_sf(x);
}

/* Pr[lo <= X < hi] for X ~ N(mean, 1), accurate in either tail. */
static double mass(double lo, double hi, double mean)
{
    if (!(hi > lo)) {
        return 0.0;
    }
    double a = lo - mean, b = hi - mean;
    return a > 0.0 ? fmax(sf_at(a) - sf_at(b), 0.0) : fmax(cdf_at(b) - cdf_at(a), 0.0);
}

/* One cumulative row: the bins of X ~ N(mean, 1) restricted to [lo_cut, hi_cut). */
static void cdf_row(const double *xe, uint32_t bins, double mean, double lo_cut, double hi_cut,
                    double *row)
{
    double total = 0.0;
    for (uint32_t b = 0; b < bins; b++) {
        double lo = fmax(xe[b], lo_cut), hi = fmin(xe[b + 1], hi_cut);
        total += mass(lo, hi, mean);
        row[b] = total;
    }
    for (uint32_t b = 0; b < bins; b++) {
        row[b] = total > 0.0 ? row[b] / total : 1.0;
    }
    row[bins - 1] = 1.0;
}

int sim_roc_model_init(sim_roc_model_t *m, const sim_scenario_t *sc, const sim_pop_t *pop,
                       const uint32_t *edges, uint32_t nedges)
{
    memset(m, 0, sizeof(*m));
    if (nedges < 1 || nedges > DPM_MAX_BINS - 1) {
        return -1;
    }
    m->bins = nedges + 1u;
    memcpy(m->edges, edges, nedges * sizeof(edges[0]));
    m->rep_score[0] = 0;
    for (uint32_t b = 1; b < m->bins; b++) {
        m->rep_score[b] = edges[b - 1];
    }
    m->base_key = sim_stream_key(sc->population_seed ^ ROC_TAG, 0, pop->devices);
    m->csv = pop->csv;
    for (uint32_t g = 0; g < sc->ngroups; g++) {
        const sim_group_spec_t *gs = &sc->group[g];
        sim_roc_group_t *rg = &m->group[g];
        if (gs->data && pop->csv != NULL) {
            rg->set = rg->csv = 1;
            continue;
        }
        if (!gs->scores.set) {
            continue;
        }
        binormal_t bn;
        binormal_init(&bn, gs->scores.auc, gs->scores.has_threshold ? &gs->scores.threshold : NULL);
        double mu = bn.mu, t = bn.t;
        double xe[DPM_MAX_BINS + 1];
        xe[0] = -INFINITY;
        for (uint32_t b = 1; b < m->bins; b++) {
            double q = edges[b - 1] / TWO31;
            xe[b] = q >= 1.0 ? INFINITY : t + prob_norm_quantile(q);
        }
        xe[m->bins] = INFINITY;
        rg->set = 1;
        cdf_row(xe, m->bins, mu, t, INFINITY, rg->cdf[0]);
        cdf_row(xe, m->bins, mu, -INFINITY, t, rg->cdf[1]);
        cdf_row(xe, m->bins, 0.0, t, INFINITY, rg->cdf[2]);
        cdf_row(xe, m->bins, 0.0, -INFINITY, t, rg->cdf[3]);
        double sd = gs->partition.noniid ? gs->partition.auc_sd : 0.0;
        if (sd > 0.0) {
            rg->shift = 1;
            rg->grid_cdf = malloc((size_t)SIM_ROC_GRID * 2u * m->bins * sizeof(double));
            if (rg->grid_cdf == NULL) {
                sim_roc_model_free(m);
                return -1;
            }
            int k = 0; /* the population builder's own loop, to the same floating-point z */
            for (double zz = -BINORMAL_MIX_HALF_WIDTH;
                 zz <= BINORMAL_MIX_HALF_WIDTH + 1e-9 && k < SIM_ROC_GRID;
                 zz += BINORMAL_MIX_STEP, k++) {
                double mui = mu + sd * zz, tpr = prob_norm_sf(t - mu - sd * zz);
                rg->logw[k] = -0.5 * zz * zz;
                rg->log_tpr[k] = log(tpr);
                rg->log_fnr[k] = log1p(-tpr);
                double *row = rg->grid_cdf + (size_t)k * 2u * m->bins;
                cdf_row(xe, m->bins, mui, t, INFINITY, row);
                cdf_row(xe, m->bins, mui, -INFINITY, t, row + m->bins);
            }
        }
    }
    return 0;
}

void sim_roc_model_free(sim_roc_model_t *m)
{
    for (uint32_t g = 0; g < SIM_MAX_GROUPS; g++) {
        free(m->group[g].grid_cdf);
        m->group[g].grid_cdf = NULL;
    }
}

void sim_roc_model_destroy(sim_roc_model_t **m)
{
    if (*m != NULL) {
        sim_roc_model_free(*m);
        free(*m);
        *m = NULL;
    }
}

static uint16_t draw_bin(sim_stream_t *s, const double *row, uint32_t bins)
{
    double u = sim_stream_unit(s);
    uint32_t lo = 0, hi = bins - 1; /* first b with row[b] > u; row[bins - 1] = 1 > u */
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (row[mid] > u) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return (uint16_t)lo;
}

/* The posterior weights (unnormalized) of a shifted device's grid point given (npos, tp). */
static void grid_weights(const sim_roc_group_t *rg, uint32_t tp, uint32_t fn, double *w)
{
    double top = -INFINITY;
    for (int k = 0; k < SIM_ROC_GRID; k++) {
        w[k] = rg->logw[k] + (tp ? tp * rg->log_tpr[k] : 0.0) + (fn ? fn * rg->log_fnr[k] : 0.0);
        top = fmax(top, w[k]);
    }
    for (int k = 0; k < SIM_ROC_GRID; k++) {
        w[k] = isfinite(w[k]) ? exp(w[k] - top) : 0.0;
    }
}

/* The grid point of a shifted device from its posterior given (npos, tp). */
static int draw_grid(sim_stream_t *s, const sim_roc_group_t *rg, uint32_t tp, uint32_t fn)
{
    double lp[SIM_ROC_GRID];
    grid_weights(rg, tp, fn, lp);
    double total = 0.0;
    for (int k = 0; k < SIM_ROC_GRID; k++) {
        total += lp[k];
        lp[k] = total;
    }
    double u = sim_stream_unit(s) * total;
    for (int k = 0; k < SIM_ROC_GRID; k++) {
        if (lp[k] > u) {
            return k;
        }
    }
    return SIM_ROC_GRID / 2;
}

/* The bin of a Q1.31 score: the number of edges <= it (dpm_score_bin's rule). */
static uint16_t bin_of(const sim_roc_model_t *m, uint32_t q)
{
    uint32_t lo = 0, hi = m->bins - 1u; /* edges[0 .. lo) <= q < edges[hi ..) */
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (m->edges[mid] <= q) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return (uint16_t)lo;
}

/* A csv device's examples (positives first) and their number, or NULL. */
static const uint32_t *csv_scores(const sim_roc_model_t *m, const sim_block_t *b, uint32_t *e)
{
    if (!m->group[b->group].csv || b->csv_device == 0 || m->csv == NULL) {
        return NULL;
    }
    const sim_csv_device_t *dv = &m->csv->device[b->csv_device - 1u];
    *e = dv->npos + dv->nneg;
    return m->csv->score_q31 + dv->first;
}

void sim_roc_device_bins(const sim_roc_model_t *m, const sim_block_t *b, uint64_t device,
                         uint16_t *bin)
{
    const sim_roc_group_t *rg = &m->group[b->group];
    uint32_t ne = 0;
    const uint32_t *own = csv_scores(m, b, &ne);
    if (own != NULL) {
        for (uint32_t j = 0; j < ne; j++) {
            bin[j] = bin_of(m, own[j]);
        }
        return;
    }
    sim_stream_t s;
    sim_stream_init(&s, sim_stream_key(m->base_key, 0, device));
    uint32_t tp = b->conf.tp, fn = b->conf.fn, fp = b->conf.fp, tn = b->conf.tn, B = m->bins;
    const double *pa = rg->cdf[0], *pb = rg->cdf[1];
    if (rg->shift) {
        int k = draw_grid(&s, rg, tp, fn);
        pa = rg->grid_cdf + (size_t)k * 2u * B;
        pb = pa + B;
    }
    uint32_t i = 0;
    for (uint32_t j = 0; j < tp; j++) {
        bin[i++] = draw_bin(&s, pa, B);
    }
    for (uint32_t j = 0; j < fn; j++) {
        bin[i++] = draw_bin(&s, pb, B);
    }
    for (uint32_t j = 0; j < fp; j++) {
        bin[i++] = draw_bin(&s, rg->cdf[2], B);
    }
    for (uint32_t j = 0; j < tn; j++) {
        bin[i++] = draw_bin(&s, rg->cdf[3], B);
    }
}

dpm_status_t sim_roc_device_hist(const sim_roc_model_t *m, const dpm_roc_hist_t *mech,
                                 const sim_block_t *b, uint64_t device, dpm_score_hist_t *h)
{
    uint16_t bin[10000];
    uint32_t npos = b->conf.tp + b->conf.fn, e = npos + b->conf.fp + b->conf.tn;
    if (e > sizeof(bin) / sizeof(bin[0]) || !m->group[b->group].set) {
        return DPM_ERR_PARAM;
    }
    uint32_t ne = 0;
    const uint32_t *own = csv_scores(m, b, &ne);
    if (own == NULL) {
        sim_roc_device_bins(m, b, device, bin);
    }
    dpm_status_t st = dpm_score_hist_init(h, &mech->bins);
    for (uint32_t i = 0; i < e && st == DPM_OK; i++) { /* the data's own scores, as an app */
        uint32_t score = own != NULL ? own[i] : m->rep_score[bin[i]];
        st = dpm_score_hist_add(h, &mech->bins, score, i < npos ? 1 : 0);
    }
    return st;
}

int sim_roc_write_csv(const sim_roc_model_t *m, const sim_scenario_t *sc, const sim_pop_t *pop,
                      const int *include, FILE *f)
{
    uint16_t bin[10000];
    int st = fprintf(f, "device_id,score,label,group,prediction\n") < 0 ? -1 : 0;
    for (size_t k = 0; k < pop->nblocks && st == 0; k++) {
        const sim_block_t *b = &pop->block[k];
        uint32_t tp = b->conf.tp, npos = tp + b->conf.fn, fp = b->conf.fp;
        uint32_t e = npos + fp + b->conf.tn;
        const sim_roc_group_t *rg = &m->group[b->group];
        if (!include[b->group] || !rg->set || rg->csv || e > 10000) {
            continue;
        }
        for (uint64_t i = pop->first[k]; i < pop->first[k + 1] && st == 0; i++) {
            sim_roc_device_bins(m, b, i, bin); /* tp, fn, fp, tn in this order */
            for (uint32_t j = 0; j < e && st == 0; j++) {
                int pred = j < tp || (j >= npos && j < npos + fp);
                st = fprintf(f, "%" PRIu64 ",%.10f,%d,%s,%d\n", i, m->rep_score[bin[j]] / TWO31,
                             j < npos, sc->group[b->group].name, pred) < 0
                         ? -1
                         : 0;
            }
        }
    }
    return st;
}

/* ---- truth ------------------------------------------------------------------------------ */

typedef struct {
    const sim_roc_model_t *m;
    const sim_pop_t *pop;
    const int *include;
    sim_progress_t *progress;
    uint64_t lo, hi;
    uint64_t pos[DPM_MAX_BINS], neg[DPM_MAX_BINS], devices;
} truth_part_t;

static void *truth_part(void *arg)
{
    truth_part_t *p = arg;
    uint16_t bin[10000];
    uint64_t pos[DPM_MAX_BINS] = {0}, neg[DPM_MAX_BINS] = {0}, devices = 0;
    size_t bi = 0;
    const sim_block_t *b = sim_pop_find(p->pop, p->lo, &bi);
    for (uint64_t i = p->lo; i < p->hi && b != NULL;) {
        uint64_t end = p->pop->first[bi + 1] < p->hi ? p->pop->first[bi + 1] : p->hi;
        uint32_t npos = b->conf.tp + b->conf.fn, e = npos + b->conf.fp + b->conf.tn;
        if (p->include[b->group] && p->m->group[b->group].set && e <= 10000) {
            for (; i < end; i++) {
                if ((i & 0xFFFFu) == 0xFFFFu) {
                    sim_progress_add(p->progress, 0x10000u);
                }
                sim_roc_device_bins(p->m, b, i, bin);
                for (uint32_t k = 0; k < e; k++) {
                    if (k < npos) {
                        pos[bin[k]]++;
                    } else {
                        neg[bin[k]]++;
                    }
                }
                devices++;
            }
        }
        i = end;
        if (bi + 1 < p->pop->nblocks) {
            b = &p->pop->block[++bi];
        } else {
            break;
        }
    }
    memcpy(p->pos, pos, sizeof(pos));
    memcpy(p->neg, neg, sizeof(neg));
    p->devices = devices;
    return NULL;
}

void sim_roc_truth_counts(const sim_roc_model_t *m, const sim_pop_t *pop, const int *include,
                          unsigned threads, sim_progress_t *progress, uint64_t *pos, uint64_t *neg,
                          uint64_t *devices)
{
    truth_part_t *part = calloc(MAX_THREADS, sizeof(*part));
    unsigned n = part != NULL ? sim_parallel_parts(threads, MAX_THREADS, pop->devices, 65536) : 1;
    truth_part_t one;
    truth_part_t *parts = part != NULL ? part : &one;
    for (unsigned i = 0; i < n; i++) {
        parts[i].m = m;
        parts[i].pop = pop;
        parts[i].include = include;
        parts[i].progress = progress;
        sim_parallel_span(pop->devices, n, i, &parts[i].lo, &parts[i].hi);
    }
    sim_parallel(truth_part, parts, sizeof(*parts), n);
    memset(pos, 0, m->bins * sizeof(uint64_t));
    memset(neg, 0, m->bins * sizeof(uint64_t));
    *devices = 0;
    for (unsigned i = 0; i < n; i++) {
        for (uint32_t b = 0; b < m->bins; b++) {
            pos[b] += parts[i].pos[b];
            neg[b] += parts[i].neg[b];
        }
        *devices += parts[i].devices;
    }
    free(part);
}

/* Adds Multinomial(n, bin masses of the cumulative row) to out (n split below 2^52, the
 * binomial sampler's range: a sum of multinomials with the same masses is one). */
static void add_multinomial(sim_rng_t *r, uint64_t n, const double *row, uint32_t bins,
                            uint64_t *out)
{
    double p[DPM_MAX_BINS], tmp[DPM_MAX_BINS];
    uint64_t c[DPM_MAX_BINS];
    for (uint32_t b = 0; b < bins; b++) {
        p[b] = row[b] - (b > 0 ? row[b - 1] : 0.0);
        p[b] = p[b] > 0.0 ? p[b] : 0.0;
    }
    while (n > 0) {
        uint64_t part = n < (UINT64_C(1) << 52) ? n : (UINT64_C(1) << 52);
        sim_rng_multinomial(r, part, p, bins, tmp, c);
        for (uint32_t b = 0; b < bins; b++) {
            out[b] += c[b];
        }
        n -= part;
    }
}

void sim_roc_truth_sample(const sim_roc_model_t *m, const sim_pop_t *pop, const int *include,
                          uint64_t key, uint64_t *pos, uint64_t *neg, uint64_t *devices)
{
    uint32_t B = m->bins;
    memset(pos, 0, B * sizeof(uint64_t));
    memset(neg, 0, B * sizeof(uint64_t));
    *devices = 0;
    for (size_t i = 0; i < pop->nblocks; i++) {
        const sim_block_t *b = &pop->block[i];
        const sim_roc_group_t *rg = &m->group[b->group];
        uint64_t c = b->count;
        uint32_t tp = b->conf.tp, fn = b->conf.fn, fp = b->conf.fp, tn = b->conf.tn;
        if (!include[b->group] || !rg->set || tp + fn + fp + tn > 10000) {
            continue; /* as sim_roc_truth_counts */
        }
        uint32_t ne = 0;
        const uint32_t *own = csv_scores(m, b, &ne);
        if (own != NULL) { /* nothing to draw: the block's devices hold the file's examples */
            for (uint32_t j = 0; j < ne; j++) {
                (j < tp + fn ? pos : neg)[bin_of(m, own[j])] += c; /* positives first */
            }
            *devices += c;
            continue;
        }
        sim_rng_t r;
        sim_rng_init(&r, sim_stream_key(key, 1, i)); /* a stream per block */
        if (rg->shift) {
            double w[SIM_ROC_GRID], tmp[SIM_ROC_GRID];
            uint64_t at[SIM_ROC_GRID];
            grid_weights(rg, tp, fn, w);
            sim_rng_multinomial(&r, c, w, SIM_ROC_GRID, tmp, at); /* devices per grid point */
            for (int k = 0; k < SIM_ROC_GRID; k++) {
                const double *row = rg->grid_cdf + (size_t)k * 2u * B;
                add_multinomial(&r, at[k] * tp, row, B, pos);
                add_multinomial(&r, at[k] * fn, row + B, B, pos);
            }
        } else {
            add_multinomial(&r, c * tp, rg->cdf[0], B, pos);
            add_multinomial(&r, c * fn, rg->cdf[1], B, pos);
        }
        add_multinomial(&r, c * fp, rg->cdf[2], B, neg);
        add_multinomial(&r, c * tn, rg->cdf[3], B, neg);
        *devices += c;
    }
}

/* ---- the model's AUC ----------------------------------------------------------------------- */

typedef struct {
    double score;
    uint64_t w;
    int label;
} weighted_t;

static int by_score(const void *a, const void *b)
{
    double x = ((const weighted_t *)a)->score, y = ((const weighted_t *)b)->score;
    return (x > y) - (x < y);
}

static double csv_auc(const sim_pop_t *pop, const int *include)
{
    const sim_csv_t *d = pop->csv;
    size_t n = 0;
    for (size_t i = 0; i < pop->nblocks; i++) {
        const sim_block_t *b = &pop->block[i];
        n += include[b->group] && b->csv_device
                 ? d->device[b->csv_device - 1u].npos + d->device[b->csv_device - 1u].nneg
                 : 0u;
    }
    weighted_t *x = malloc((n ? n : 1) * sizeof(*x));
    if (x == NULL) {
        return NAN;
    }
    size_t at = 0;
    for (size_t i = 0; i < pop->nblocks; i++) {
        const sim_block_t *b = &pop->block[i];
        if (!include[b->group] || b->csv_device == 0) {
            continue;
        }
        const sim_csv_device_t *dv = &d->device[b->csv_device - 1u];
        for (uint32_t j = 0; j < dv->npos + dv->nneg; j++, at++) {
            x[at].score = d->score[dv->first + j];
            x[at].w = b->count;
            x[at].label = j < dv->npos;
        }
    }
    qsort(x, n, sizeof(*x), by_score);
    /* pairs (positive, negative) with the positive above, ties one half: sweep tie runs */
    double wins = 0.0, neg_below = 0.0, tpos = 0.0, tneg = 0.0;
    for (size_t i = 0; i < n;) {
        double p = 0.0, q = 0.0;
        size_t j = i;
        for (; j < n && x[j].score == x[i].score; j++) {
            *(x[j].label ? &p : &q) += (double)x[j].w;
        }
        wins += p * neg_below + 0.5 * p * q;
        neg_below += q;
        tpos += p;
        tneg += q;
        i = j;
    }
    free(x);
    return tpos > 0.0 && tneg > 0.0 ? wins / (tpos * tneg) : NAN;
}

double sim_roc_model_auc(const sim_scenario_t *sc, const sim_pop_t *pop, const int *include)
{
    if (sc->data.set && pop->csv != NULL) {
        return csv_auc(pop, include);
    }
    double wpos[SIM_MAX_GROUPS] = {0}, wneg[SIM_MAX_GROUPS] = {0}, tpos = 0.0, tneg = 0.0;
    double mu[SIM_MAX_GROUPS] = {0}, thr[SIM_MAX_GROUPS] = {0}, var[SIM_MAX_GROUPS] = {0};
    for (uint32_t g = 0; g < sc->ngroups; g++) {
        const sim_group_spec_t *gs = &sc->group[g];
        if (!include[g] || !gs->scores.set) {
            continue;
        }
        double e = (double)pop->group_size[g] * gs->scores.examples;
        binormal_t bn;
        binormal_init(&bn, gs->scores.auc, gs->scores.has_threshold ? &gs->scores.threshold : NULL);
        mu[g] = bn.mu;
        thr[g] = bn.t;
        double sd = gs->partition.noniid ? gs->partition.auc_sd : 0.0;
        var[g] = 2.0 + sd * sd; /* x+ - x-: N(mu, 1 + sd^2) against N(0, 1) */
        wpos[g] = e * gs->scores.base_rate;
        wneg[g] = e * (1.0 - gs->scores.base_rate);
        tpos += wpos[g];
        tneg += wneg[g];
    }
    if (!(tpos > 0.0) || !(tneg > 0.0)) {
        return NAN;
    }
    /* a positive of group g beats a negative of group h when x+ - T_g > x- - T_h */
    double auc = 0.0;
    for (uint32_t g = 0; g < sc->ngroups; g++) {
        for (uint32_t h = 0; h < sc->ngroups && wpos[g] > 0.0; h++) {
            if (wneg[h] > 0.0) {
                auc += wpos[g] / tpos * wneg[h] / tneg *
                       prob_norm_cdf((mu[g] - thr[g] + thr[h]) / sqrt(var[g]));
            }
        }
    }
    return auc;
}
