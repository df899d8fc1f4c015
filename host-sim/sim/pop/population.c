/* SPDX-License-Identifier: Apache-2.0 */
/* Population realization (see population.h). */
#include "dpm/expert/stats.h"
#include "sim/pop/population.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/binormal.h"
#include "common/prob.h"
#include "sim/pop/sim_rng.h"

#define POP_TAG UINT64_C(0x504F50554C415445) /* "POPULATE": keeps population keys apart */

typedef struct {
    sim_block_t *b;
    size_t n, cap;
} blocks_t;

typedef struct {
    sim_rng_t rng;
    blocks_t out;
    char *err;
    size_t errcap;
} builder_t;

static int push(builder_t *bd, const sim_block_t *blk)
{
    blocks_t *v = &bd->out;
    if (v->n >= SIM_MAX_BLOCKS) {
        snprintf(bd->err, bd->errcap,
                 "population too fine: more than %u distinct device tuples (lower beta_levels "
                 "or examples, or use fewer metrics)",
                 SIM_MAX_BLOCKS);
        return -1;
    }
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 256;
        sim_block_t *nb = realloc(v->b, cap * sizeof(*nb));
        if (nb == NULL) {
            snprintf(bd->err, bd->errcap, "out of memory");
            return -1;
        }
        v->b = nb;
        v->cap = cap;
    }
    v->b[v->n++] = *blk;
    return 0;
}

void sim_pop_sizes(const sim_scenario_t *sc, uint64_t devices, uint64_t *sizes)
{
    double total = 0.0, rem[SIM_MAX_GROUPS];
    uint64_t used = 0;
    for (uint32_t g = 0; g < sc->ngroups; g++) {
        total += sc->group[g].share;
    }
    for (uint32_t g = 0; g < sc->ngroups; g++) {
        double exact = (double)devices * (sc->group[g].share / total);
        sizes[g] = (uint64_t)floor(exact);
        rem[g] = exact - floor(exact);
        used += sizes[g];
    }
    while (used < devices) { /* largest remainder first, ties to the lower index */
        uint32_t best = 0;
        for (uint32_t g = 1; g < sc->ngroups; g++) {
            best = rem[g] > rem[best] ? g : best;
        }
        sizes[best]++;
        rem[best] = -1.0;
        used++;
    }
    while (used > devices) { /* only if rounding overshot: take from the largest group */
        uint32_t big = 0;
        for (uint32_t g = 1; g < sc->ngroups; g++) {
            big = sizes[g] > sizes[big] ? g : big;
        }
        sizes[big]--;
        used--;
    }
}

/* ---- binormal groups ----------------------------------------------------------------------- */

typedef struct {
    uint32_t e;
    binormal_t b;
    double pi, concentration, auc_sd;
} group_model_t;

static void group_model_init(const sim_group_spec_t *g, group_model_t *m)
{
    m->e = g->scores.examples;
    binormal_init(&m->b, g->scores.auc, g->scores.has_threshold ? &g->scores.threshold : NULL);
    m->pi = g->scores.base_rate;
    m->concentration = g->partition.noniid ? g->partition.concentration : 0.0;
    m->auc_sd = g->partition.noniid ? g->partition.auc_sd : 0.0;
}

static void pmf_npos(const group_model_t *m, double *pmf)
{
    double e = m->e;
    for (uint32_t k = 0; k <= m->e; k++) {
        double lp = m->concentration > 0.0 ? prob_log_dbetabinom(k, e, m->pi * m->concentration,
                                                                 (1.0 - m->pi) * m->concentration)
                                           : prob_log_dbinom(k, e, m->pi);
        pmf[k] = exp(lp);
    }
}

/* Pr[tp = k | npos], a binomial, or with a feature shift a normal mixture of binomials. */
static void pmf_tp(const group_model_t *m, uint32_t npos, double *pmf)
{
    if (m->auc_sd == 0.0) {
        for (uint32_t k = 0; k <= npos; k++) {
            pmf[k] = exp(prob_log_dbinom(k, npos, m->b.tpr));
        }
        return;
    }
    double wsum = 0.0;
    for (uint32_t k = 0; k <= npos; k++) {
        pmf[k] = 0.0;
    }
    for (double z = -BINORMAL_MIX_HALF_WIDTH; z <= BINORMAL_MIX_HALF_WIDTH + 1e-9;
         z += BINORMAL_MIX_STEP) {
        double w = exp(-0.5 * z * z), tpr = prob_norm_sf(m->b.t - m->b.mu - m->auc_sd * z);
        wsum += w;
        for (uint32_t k = 0; k <= npos; k++) {
            pmf[k] += w * exp(prob_log_dbinom(k, npos, tpr));
        }
    }
    for (uint32_t k = 0; k <= npos; k++) {
        pmf[k] /= wsum;
    }
}

static void conf_metrics(sim_block_t *b)
{
    b->defined = 0;
    for (int m = 1; m <= SIM_NMETRICS; m++) {
        dpm_ratio_t r;
        b->num[m - 1] = b->den[m - 1] = 0;
        if (dpm_metric_ratio(&b->conf, (dpm_metric_t)m, &r) == DPM_OK) {
            b->num[m - 1] = (uint32_t)r.num;
            b->den[m - 1] = (uint32_t)r.den;
            b->defined |= (uint8_t)(1u << (m - 1));
        }
    }
}

static int build_binormal(builder_t *bd, const sim_group_spec_t *g, uint32_t gi, uint64_t n)
{
    group_model_t m;
    group_model_init(g, &m);
    size_t len = (size_t)m.e + 1;
    double *p_npos = malloc(len * sizeof(double)), *p_tp = malloc(len * sizeof(double));
    double *p_fp = malloc(len * sizeof(double)), *tmp = malloc(len * sizeof(double));
    uint64_t *c_npos = malloc(len * sizeof(uint64_t)), *c_tp = malloc(len * sizeof(uint64_t));
    uint64_t *c_fp = malloc(len * sizeof(uint64_t));
    int st = 0;
    if (!p_npos || !p_tp || !p_fp || !tmp || !c_npos || !c_tp || !c_fp) {
        snprintf(bd->err, bd->errcap, "out of memory");
        st = -1;
    }
    if (st == 0) {
        pmf_npos(&m, p_npos);
        sim_rng_multinomial(&bd->rng, n, p_npos, len, tmp, c_npos);
    }
    for (uint32_t npos = 0; npos <= m.e && st == 0; npos++) {
        if (c_npos[npos] == 0) {
            continue;
        }
        uint32_t nneg = m.e - npos;
        pmf_tp(&m, npos, p_tp);
        for (uint32_t k = 0; k <= nneg; k++) {
            p_fp[k] = exp(prob_log_dbinom(k, nneg, m.b.fpr));
        }
        sim_rng_multinomial(&bd->rng, c_npos[npos], p_tp, npos + 1u, tmp, c_tp);
        for (uint32_t tp = 0; tp <= npos && st == 0; tp++) {
            if (c_tp[tp] == 0) {
                continue;
            }
            sim_rng_multinomial(&bd->rng, c_tp[tp], p_fp, nneg + 1u, tmp, c_fp);
            for (uint32_t fp = 0; fp <= nneg && st == 0; fp++) {
                if (c_fp[fp] == 0) {
                    continue;
                }
                sim_block_t b;
                memset(&b, 0, sizeof(b));
                b.count = c_fp[fp];
                b.group = gi;
                b.has_conf = 1;
                b.conf.tp = tp;
                b.conf.fn = npos - tp;
                b.conf.fp = fp;
                b.conf.tn = nneg - fp;
                conf_metrics(&b);
                st = push(bd, &b);
            }
        }
    }
    free(p_npos);
    free(p_tp);
    free(p_fp);
    free(tmp);
    free(c_npos);
    free(c_tp);
    free(c_fp);
    return st;
}

/* ---- groups with metric distributions ---------------------------------------------------- */

/* Pr[k / L] of a beta(a, b) value rounded to the nearest k / L. */
static void pmf_beta(const sim_dist_t *d, uint32_t levels, double *pmf)
{
    double prev = 0.0;
    for (uint32_t k = 0; k <= levels; k++) {
        double edge = k == levels ? 1.0 : ((double)k + 0.5) / levels;
        double cdf = prob_beta_inc(d->a, d->b, edge);
        pmf[k] = fmax(cdf - prev, 0.0);
        prev = cdf;
    }
}

static int build_explicit(builder_t *bd, const sim_scenario_t *sc, const sim_group_spec_t *g,
                          uint32_t gi, uint64_t n)
{
    blocks_t cells = {NULL, 0, 0};
    size_t len = (size_t)sc->beta_levels + 1;
    double *pmf = malloc(len * sizeof(double)), *tmp = malloc(len * sizeof(double));
    uint64_t *cnt = malloc(len * sizeof(uint64_t));
    sim_block_t start;
    memset(&start, 0, sizeof(start));
    start.count = n;
    start.group = gi;
    blocks_t saved = bd->out;
    int st = pmf && tmp && cnt ? 0 : -1;
    bd->out = cells; /* build the cells in a scratch vector with the same push() checks */
    if (st == 0) {
        st = push(bd, &start);
    }
    for (int m = 0; m < SIM_NMETRICS && st == 0; m++) {
        const sim_dist_t *d = &g->metric[m];
        if (d->kind == SIM_DIST_NONE) {
            continue;
        }
        if (d->kind == SIM_DIST_BETA) {
            pmf_beta(d, sc->beta_levels, pmf);
        }
        blocks_t prev = bd->out;
        bd->out.b = NULL;
        bd->out.n = bd->out.cap = 0;
        for (size_t i = 0; i < prev.n && st == 0; i++) {
            sim_block_t c = prev.b[i];
            c.defined |= (uint8_t)(1u << m);
            if (d->kind == SIM_DIST_CONSTANT) {
                c.num[m] = (uint32_t)d->value.num;
                c.den[m] = (uint32_t)d->value.den;
                st = push(bd, &c);
                continue;
            }
            sim_rng_multinomial(&bd->rng, c.count, pmf, len, tmp, cnt);
            for (uint32_t k = 0; k < len && st == 0; k++) {
                if (cnt[k] > 0) {
                    c.count = cnt[k];
                    c.num[m] = k;
                    c.den[m] = sc->beta_levels;
                    st = push(bd, &c);
                }
            }
        }
        free(prev.b);
    }
    cells = bd->out;
    bd->out = saved;
    for (size_t i = 0; i < cells.n && st == 0; i++) {
        st = push(bd, &cells.b[i]);
    }
    if (pmf == NULL || tmp == NULL || cnt == NULL) {
        snprintf(bd->err, bd->errcap, "out of memory");
    }
    free(cells.b);
    free(pmf);
    free(tmp);
    free(cnt);
    return st;
}

/* ---- population = csv(...) ----------------------------------------------------------------- */

static int push_csv_device(builder_t *bd, const sim_csv_t *d, size_t k, uint32_t gi, uint64_t n)
{
    const sim_csv_device_t *dv = &d->device[k];
    sim_block_t b;
    memset(&b, 0, sizeof(b));
    b.count = n;
    b.group = gi;
    b.has_conf = 1;
    b.conf.tp = dv->tp;
    b.conf.fn = dv->npos - dv->tp;
    b.conf.fp = dv->fp;
    b.conf.tn = dv->nneg - dv->fp;
    b.csv_device = (uint32_t)k + 1u;
    conf_metrics(&b);
    return push(bd, &b);
}

/* Group gi's devices: the file's as they are (n = their number, resample 0), or n drawn with
 * replacement, uniformly (population.h). */
static int build_csv_group(builder_t *bd, const sim_csv_t *d, uint32_t gi, uint64_t n, int resample)
{
    size_t m = (size_t)d->group_devices[gi], at = 0;
    size_t *idx = malloc((m ? m : 1) * sizeof(size_t));
    double *p = resample ? malloc(m * sizeof(double)) : NULL;
    double *tmp = resample ? malloc(m * sizeof(double)) : NULL;
    uint64_t *cnt = resample ? malloc(m * sizeof(uint64_t)) : NULL;
    int st = idx == NULL || (resample && (p == NULL || tmp == NULL || cnt == NULL)) ? -1 : 0;
    if (st != 0) {
        snprintf(bd->err, bd->errcap, "out of memory");
    }
    for (size_t k = 0; k < d->ndevices && st == 0; k++) {
        if (d->device[k].group == gi) {
            idx[at++] = k;
        }
    }
    if (st == 0 && resample) {
        for (size_t j = 0; j < m; j++) {
            p[j] = 1.0 / (double)m;
        }
        sim_rng_multinomial(&bd->rng, n, p, m, tmp, cnt);
    }
    for (size_t j = 0; j < m && st == 0; j++) {
        uint64_t c = resample ? cnt[j] : 1u;
        st = c > 0 ? push_csv_device(bd, d, idx[j], gi, c) : 0;
    }
    free(idx);
    free(p);
    free(tmp);
    free(cnt);
    return st;
}

static int build_csv(builder_t *bd, const sim_scenario_t *sc, sim_pop_t *pop)
{
    pop->csv = calloc(1, sizeof(*pop->csv));
    if (pop->csv == NULL) {
        snprintf(bd->err, bd->errcap, "out of memory");
        return -1;
    }
    const sim_csv_t *d = pop->csv;
    if (sim_csv_read_file(sc->data.path, sc->data.threshold, pop->csv, bd->err, bd->errcap) != 0) {
        return -1;
    }
    int same = d->ngroups == sc->ngroups && d->ndevices == sc->data.devices;
    for (uint32_t g = 0; g < d->ngroups && same; g++) {
        same = strcmp(d->group[g], sc->group[g].name) == 0;
    }
    if (!same) {
        snprintf(bd->err, bd->errcap, "%s changed since the scenario was read (read it again)",
                 sc->data.path);
        return -1;
    }
    pop->resampled = pop->devices != d->ndevices;
    for (uint32_t g = 0; g < sc->ngroups; g++) {
        if (!pop->resampled) {
            pop->group_size[g] = d->group_devices[g];
        } else if (pop->group_size[g] == 0) {
            snprintf(bd->err, bd->errcap,
                     "devices = %llu leaves group '%s' without a device (%llu of the %zu devices "
                     "of %s are in it: raise devices)",
                     (unsigned long long)pop->devices, sc->group[g].name,
                     (unsigned long long)d->group_devices[g], d->ndevices, sc->data.path);
            return -1;
        }
        if (build_csv_group(bd, d, g, pop->group_size[g], pop->resampled) != 0) {
            return -1;
        }
    }
    return 0;
}

int sim_pop_build(const sim_scenario_t *sc, uint64_t devices, sim_pop_t *pop, char *err,
                  size_t errcap)
{
    builder_t bd;
    memset(&bd, 0, sizeof(bd));
    memset(pop, 0, sizeof(*pop));
    bd.err = err;
    bd.errcap = errcap;
    sim_rng_init(&bd.rng, sim_stream_key(sc->population_seed ^ POP_TAG, 0, devices));
    pop->devices = devices;
    pop->ngroups = sc->ngroups;
    sim_pop_sizes(sc, devices, pop->group_size);
    int st = sc->data.set ? build_csv(&bd, sc, pop) : 0;
    for (uint32_t g = 0; g < sc->ngroups && st == 0 && !sc->data.set; g++) {
        const sim_group_spec_t *gs = &sc->group[g];
        if (pop->group_size[g] == 0) {
            continue;
        }
        st = gs->scores.set ? build_binormal(&bd, gs, g, pop->group_size[g])
                            : build_explicit(&bd, sc, gs, g, pop->group_size[g]);
    }
    pop->block = bd.out.b;
    pop->nblocks = bd.out.n;
    pop->words = sim_rng_words(&bd.rng);
    pop->first = st == 0 ? malloc((pop->nblocks + 1) * sizeof(uint64_t)) : NULL;
    if (st == 0 && pop->first == NULL) {
        snprintf(err, errcap, "out of memory");
        st = -1;
    }
    if (st != 0) {
        sim_pop_free(pop);
        return -1;
    }
    uint64_t at = 0;
    for (size_t i = 0; i < pop->nblocks; i++) {
        pop->first[i] = at;
        at += pop->block[i].count;
    }
    pop->first[pop->nblocks] = at;
    return 0;
}

int sim_pop_from_blocks(sim_pop_t *pop, const sim_block_t *blocks, size_t n, uint32_t ngroups,
                        char *err, size_t errcap)
{
    memset(pop, 0, sizeof(*pop));
    pop->block = malloc((n ? n : 1) * sizeof(*pop->block));
    pop->first = malloc((n + 1) * sizeof(*pop->first));
    if (pop->block == NULL || pop->first == NULL || n == 0 || ngroups > SIM_MAX_GROUPS) {
        snprintf(err, errcap, "%s", n == 0 ? "no block" : "out of memory or too many groups");
        sim_pop_free(pop);
        return -1;
    }
    pop->ngroups = ngroups;
    pop->nblocks = n;
    uint64_t at = 0;
    for (size_t i = 0; i < n; i++) {
        if (blocks[i].group >= ngroups) {
            snprintf(err, errcap, "block %zu: group %u >= %u", i, blocks[i].group, ngroups);
            sim_pop_free(pop);
            return -1;
        }
        pop->block[i] = blocks[i];
        pop->first[i] = at;
        pop->group_size[blocks[i].group] += blocks[i].count;
        at += blocks[i].count;
    }
    pop->first[n] = at;
    pop->devices = at;
    return 0;
}

void sim_pop_free(sim_pop_t *pop)
{
    if (pop->csv != NULL) {
        sim_csv_free(pop->csv);
        free(pop->csv);
        pop->csv = NULL;
    }
    free(pop->block);
    free(pop->first);
    pop->block = NULL;
    pop->first = NULL;
    pop->nblocks = 0;
}

const sim_block_t *sim_pop_find(const sim_pop_t *pop, uint64_t device, size_t *index)
{
    if (device >= pop->devices || pop->nblocks == 0) {
        return NULL;
    }
    size_t lo = 0, hi = pop->nblocks; /* first[lo] <= device < first[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (pop->first[mid] <= device) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    if (index != NULL) {
        *index = lo;
    }
    return &pop->block[lo];
}
