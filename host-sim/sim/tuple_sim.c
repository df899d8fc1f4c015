/* SPDX-License-Identifier: Apache-2.0 */
/* Device farm for the tuple mechanisms (see tuple_sim.h). */
#include "sim/tuple_sim.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "mech/tuple_internal.h"

#define GOLDEN UINT64_C(0x9E3779B97F4A7C15)
#define TWO32 4294967296.0
#define Q16 65536.0

/* ---- seeded streams ---------------------------------------------------------------------- */

/* The splitmix64 output function. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Output number n (n >= 1) of splitmix64 seeded with `seed`. */
static uint64_t splitmix_at(uint64_t seed, uint64_t n)
{
    return mix64(seed + GOLDEN * n);
}

static uint64_t run_key(uint64_t base_seed, uint32_t run)
{
    return splitmix_at(base_seed, (uint64_t)run + 1u);
}

uint64_t tuple_sim_device_key(uint64_t base_seed, uint32_t run, uint64_t device)
{
    return splitmix_at(run_key(base_seed, run), device + 1u);
}

void tuple_sim_stream_init(tuple_sim_stream_t *s, uint64_t key)
{
    s->key = key;
    s->counter = 0;
}

uint64_t tuple_sim_stream_next(tuple_sim_stream_t *s)
{
    s->counter++;
    return splitmix_at(s->key, s->counter);
}

double tuple_sim_stream_unit(tuple_sim_stream_t *s)
{
    return ((double)(tuple_sim_stream_next(s) >> 11) + 0.5) * 0x1.0p-53;
}

double tuple_sim_stream_normal(tuple_sim_stream_t *s)
{
    for (;;) {
        double x = 2.0 * tuple_sim_stream_unit(s) - 1.0;
        double y = 2.0 * tuple_sim_stream_unit(s) - 1.0;
        double r2 = x * x + y * y;
        if (r2 > 0.0 && r2 < 1.0) {
            return x * sqrt(-2.0 * log(r2) / r2); /* the second normal is dropped: simpler */
        }
    }
}

/* Bytes leave little-endian, whatever the host byte order, so streams are portable. The
 * full-word stores are spelled out so the compiler merges them into one (the SDK refills 256
 * bytes per device: this loop is most of a device's cost otherwise). */
static void store_le64(uint8_t *out, uint64_t w)
{
    out[0] = (uint8_t)w;
    out[1] = (uint8_t)(w >> 8);
    out[2] = (uint8_t)(w >> 16);
    out[3] = (uint8_t)(w >> 24);
    out[4] = (uint8_t)(w >> 32);
    out[5] = (uint8_t)(w >> 40);
    out[6] = (uint8_t)(w >> 48);
    out[7] = (uint8_t)(w >> 56);
}

static int stream_fill(void *ctx, uint8_t *out, size_t len)
{
    tuple_sim_stream_t *s = ctx;
    uint64_t key = s->key, counter = s->counter;
    for (; len >= 8; len -= 8, out += 8) {
        store_le64(out, splitmix_at(key, ++counter));
    }
    if (len > 0) {
        uint64_t w = splitmix_at(key, ++counter);
        for (size_t b = 0; b < len; b++) {
            out[b] = (uint8_t)(w >> (8 * b));
        }
    }
    s->counter = counter;
    return 0;
}

dpm_rng_t tuple_sim_stream_port(tuple_sim_stream_t *s)
{
    dpm_rng_t r = {stream_fill, s};
    return r;
}

/* ---- mechanisms ---------------------------------------------------------------------------- */

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
    while (b != 0) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static void mech_reset(tuple_sim_mech_t *m, tuple_sim_mode_t mode, dpm_disp_mech_t mech,
                       uint32_t groups)
{
    memset(m, 0, sizeof(*m));
    m->mode = mode;
    m->mech = mech;
    m->groups = groups;
    m->frac_bits = DPM_FRAC_BITS;
    m->eps = m->eps1 = m->eps2 = m->k = m->eps_true = NAN;
}

static const char *mech_name(dpm_disp_mech_t mech)
{
    return mech == DPM_DISP_MR ? "M_R" : "M_L";
}

dpm_status_t tuple_sim_mech_sdk(tuple_sim_mech_t *m, dpm_disp_mech_t mech, uint32_t groups,
                                dpm_eps_t eps)
{
    static const dpm_metric_t tpr[1] = {DPM_METRIC_TPR};
    if (m == NULL || (mech != DPM_DISP_MR && mech != DPM_DISP_ML)) {
        return DPM_ERR_PARAM;
    }
    tuple_sim_mech_t next;
    mech_reset(&next, TUPLE_SIM_SDK, mech, groups);
    dpm_tuple_kind_t kind = mech == DPM_DISP_MR ? DPM_TUPLE_MR : DPM_TUPLE_ML;
    dpm_status_t st = dpm_tuple_init(&next.sdk, kind, groups, tpr, 1, eps);
    if (st != DPM_OK) {
        return st;
    }
    const dpm_tuple_t *t = &next.sdk;
    if (mech == DPM_DISP_MR) {
        st = dpm_disp_params_campaign_mr(&next.params, groups, t->group_grr.keep,
                                         t->group_grr.other, t->value.rr.keep);
    } else {
        double scale = (double)t->value.lap.scale_num / (double)t->value.lap.scale_den;
        st = dpm_disp_params_campaign_ml(&next.params, groups, t->group_grr.keep,
                                         t->group_grr.other, scale, scale, t->frac_bits);
        next.frac_bits = t->frac_bits;
        next.k = 2.0;
    }
    if (st != DPM_OK) {
        return st;
    }
    next.eps = eps / Q16;
    next.eps1 = next.params.eps1_eff;
    next.eps2 = mech == DPM_DISP_MR ? next.params.eps2_eff : t->value.lap.eps / Q16;
    next.eps_true = t->eps_implemented / Q16;
    snprintf(next.label, sizeof(next.label), "%s SDK split", mech_name(mech));
    *m = next;
    return DPM_OK;
}

/* Server parameters of a paper-mode mechanism, from its own integers. */
static dpm_status_t paper_params(tuple_sim_mech_t *m)
{
    if (m->mech == DPM_DISP_MR) {
        return dpm_disp_params_campaign_mr(&m->params, m->groups, m->group_grr.keep,
                                           m->group_grr.other, m->value_rr.keep);
    }
    double kept = (double)m->value_lap.scale_num / (double)m->value_lap.scale_den;
    double flip = (double)m->flip_num / (double)m->flip_den;
    return dpm_disp_params_campaign_ml(&m->params, m->groups, m->group_grr.keep, m->group_grr.other,
                                       kept, flip, m->frac_bits);
}

/* Flipped-report scale k / eps2 value units = k_num 2^(F+16) / (k_den eps2_q16) grid units. */
static dpm_status_t flip_scale(tuple_sim_mech_t *m, dpm_eps_t eps2, uint64_t k_num, uint64_t k_den)
{
    if (k_num == 0 || k_den == 0 || k_num > (UINT64_C(1) << 24) || k_den > (UINT64_C(1) << 24)) {
        return DPM_ERR_PARAM;
    }
    uint64_t num = k_num << (m->frac_bits + DPM_EPS_FRAC_BITS);
    uint64_t den = k_den * eps2;
    uint64_t g = gcd_u64(num, den);
    m->flip_num = num / g;
    m->flip_den = den / g;
    return m->flip_num <= DPM_DLAP_MAX_NUM ? DPM_OK : DPM_ERR_RANGE;
}

dpm_status_t tuple_sim_mech_split(tuple_sim_mech_t *m, dpm_disp_mech_t mech, uint32_t groups,
                                  dpm_eps_t eps1, dpm_eps_t eps2, uint64_t k_num, uint64_t k_den)
{
    if (m == NULL || (mech != DPM_DISP_MR && mech != DPM_DISP_ML)) {
        return DPM_ERR_PARAM;
    }
    tuple_sim_mech_t next;
    mech_reset(&next, TUPLE_SIM_PAPER, mech, groups);
    dpm_status_t st = dpm_grr_init(&next.group_grr, groups, eps1);
    if (st == DPM_OK && mech == DPM_DISP_MR) {
        st = dpm_rr_init(&next.value_rr, eps2);
    } else if (st == DPM_OK) {
        st = dpm_laplace_init(&next.value_lap, UINT64_C(2) << next.frac_bits, eps2);
        if (st == DPM_OK) {
            st = flip_scale(&next, eps2, k_num, k_den);
        }
        next.k = (double)k_num / (double)k_den;
    }
    if (st == DPM_OK) {
        st = paper_params(&next);
    }
    if (st == DPM_OK) {
        st = dpm_disp_params_true_ldp(&next.params, &next.eps_true);
    }
    if (st != DPM_OK) {
        return st;
    }
    next.eps1 = eps1 / Q16;
    next.eps2 = eps2 / Q16;
    snprintf(next.label, sizeof(next.label), "%s paper split (NOT the stated eps)",
             mech_name(mech));
    *m = next;
    return DPM_OK;
}

dpm_status_t tuple_sim_mech_paper(tuple_sim_mech_t *m, dpm_disp_mech_t mech, uint32_t groups,
                                  dpm_eps_t eps)
{
    double e = eps / Q16, e1, e2, k;
    dpm_status_t st = dpm_disp_split_eps(mech, DPM_DISP_SPLIT_PAPER, e, &e1, &e2, &k);
    if (st != DPM_OK || m == NULL) {
        return st != DPM_OK ? st : DPM_ERR_PARAM;
    }
    double e1_q16 = nearbyint(e1 * Q16);
    if (!(e1_q16 >= 1.0 && e1_q16 <= (double)DPM_EPS_MAX_Q16)) {
        return DPM_ERR_RANGE;
    }
    /* "M_L opt.": k = eps exactly (as eps2's own Q16 value), or k = 2/3 */
    uint64_t k_num = 2, k_den = 3;
    if (mech == DPM_DISP_ML && 3.0 * e >= 2.0) {
        k_num = eps;
        k_den = (uint64_t)1 << DPM_EPS_FRAC_BITS;
    }
    st = tuple_sim_mech_split(m, mech, groups, (dpm_eps_t)e1_q16, eps, k_num, k_den);
    if (st == DPM_OK) {
        m->eps = e;
        snprintf(m->label, sizeof(m->label), "%s paper split (NOT the stated eps)",
                 mech == DPM_DISP_MR ? "M_R opt." : "M_L opt.");
    }
    return st;
}

/* ---- one device ---------------------------------------------------------------------------- */


/* M_R with the paper's split: Harmony coin (fair if the group flipped), then binary RR. */
static dpm_status_t paper_value_mr(const tuple_sim_mech_t *m, dpm_rand_t *r, const dpm_ratio_t *x,
                                   int kept, int32_t *out)
{
    int bit = 0, reported = 0;
    dpm_status_t st = kept ? dpm_bernoulli(r, x->num, x->den, &bit) : dpm_bernoulli(r, 1, 2, &bit);
    if (st == DPM_OK) {
        st = dpm_rr_perturb(&m->value_rr, r, bit, &reported);
    }
    if (st == DPM_OK) {
        *out = 2 * reported - 1;
    }
    return st;
}

/* M_L with the paper's split: kept reports v + Lap(2 / eps2), flipped ones 0 + Lap(k / eps2). */
static dpm_status_t paper_value_ml(const tuple_sim_mech_t *m, dpm_rand_t *r, const dpm_ratio_t *x,
                                   int kept, int32_t *out)
{
    int64_t v = 0, noised = 0;
    dpm_status_t st;
    if (kept) {
        st = dpm_tuple_round_to_grid(r, x, m->frac_bits, &v);
        if (st == DPM_OK) {
            st = dpm_laplace_add(&m->value_lap, r, v, &noised);
        }
    } else {
        st = dpm_dlap_add(r, m->flip_num, m->flip_den, 0, &noised);
    }
    if (st == DPM_OK && (noised > INT32_MAX || noised < -INT32_MAX)) {
        st = DPM_ERR_RANGE;
    }
    if (st == DPM_OK) {
        *out = (int32_t)noised;
    }
    return st;
}

static dpm_status_t paper_perturb(const tuple_sim_mech_t *m, dpm_rand_t *r, uint32_t group,
                                  const dpm_ratio_t *x, dpm_tuple_report_t *out)
{
    dpm_tuple_report_t rep;
    memset(&rep, 0, sizeof(rep));
    dpm_status_t st = dpm_grr_perturb(&m->group_grr, r, group, &rep.group);
    if (st == DPM_OK) {
        int kept = rep.group == group;
        st = m->mech == DPM_DISP_MR ? paper_value_mr(m, r, x, kept, &rep.value[0])
                                    : paper_value_ml(m, r, x, kept, &rep.value[0]);
    }
    if (st == DPM_OK) {
        rep.nmetrics = 1;
        *out = rep;
    }
    return st;
}

dpm_status_t tuple_sim_perturb(const tuple_sim_mech_t *m, dpm_rand_t *r, uint32_t group,
                               const dpm_ratio_t *metric, dpm_tuple_report_t *out)
{
    if (m == NULL || r == NULL || metric == NULL || out == NULL) {
        return DPM_ERR_PARAM;
    }
    if (m->mode == TUPLE_SIM_SDK) {
        return dpm_tuple_perturb(&m->sdk, r, group, metric, out);
    }
    if (group >= m->groups || metric->den == 0 || metric->num > metric->den ||
        metric->den > (UINT64_C(1) << 32)) {
        return DPM_ERR_PARAM;
    }
    return paper_perturb(m, r, group, metric, out);
}

/* One device on its own stream and its own dpm_rand_t. */
static dpm_status_t device_perturb(const tuple_sim_mech_t *m, uint64_t key,
                                   const tuple_sim_block_t *b, dpm_tuple_report_t *out)
{
    tuple_sim_stream_t stream;
    tuple_sim_stream_init(&stream, key);
    dpm_rng_t port = tuple_sim_stream_port(&stream);
    dpm_rand_t r;
    dpm_status_t st = dpm_rand_init(&r, &port);
    if (st != DPM_OK) {
        return st;
    }
    if (m->mode == TUPLE_SIM_SDK) {
        return dpm_tuple_perturb(&m->sdk, &r, b->group, &b->metric, out);
    }
    return paper_perturb(m, &r, b->group, &b->metric, out);
}

/* ---- populations ---------------------------------------------------------------------------- */

double tuple_sim_value_of(const dpm_ratio_t *metric)
{
    return 2.0 * ((double)metric->num / (double)metric->den) - 1.0;
}

dpm_ratio_t tuple_sim_metric_from_value(double v)
{
    double clamped = v < -1.0 ? -1.0 : (v > 1.0 ? 1.0 : v);
    dpm_ratio_t r;
    r.den = UINT64_C(1) << 32;
    r.num = (uint64_t)nearbyint((1.0 + clamped) / 2.0 * TWO32);
    return r;
}

static int block_ok(const tuple_sim_block_t *b, uint32_t groups)
{
    return b->group < groups && b->metric.den != 0 && b->metric.num <= b->metric.den &&
           b->metric.den <= (UINT64_C(1) << 32);
}

static int pop_ok(const tuple_sim_pop_t *pop)
{
    return pop != NULL && pop->block != NULL && pop->nblocks > 0 && pop->groups >= 2 &&
           pop->groups <= DPM_DISP_MAX_GROUPS;
}

dpm_status_t tuple_sim_pop_truth(const tuple_sim_pop_t *pop, tuple_sim_truth_t *truth)
{
    if (!pop_ok(pop) || truth == NULL) {
        return DPM_ERR_PARAM;
    }
    tuple_sim_truth_t t;
    memset(&t, 0, sizeof(t));
    for (size_t i = 0; i < pop->nblocks; i++) {
        const tuple_sim_block_t *b = &pop->block[i];
        if (!block_ok(b, pop->groups)) {
            return DPM_ERR_PARAM;
        }
        double v = tuple_sim_value_of(&b->metric), c = (double)b->count;
        t.total += b->count;
        t.n[b->group] += c;
        t.mean[b->group] += c * v;
        t.nu2[b->group] += c * v * v;
    }
    if (t.total == 0) {
        return DPM_ERR_PARAM;
    }
    for (uint32_t g = 0; g < pop->groups; g++) {
        t.mean[g] = t.n[g] > 0.0 ? t.mean[g] / t.n[g] : NAN;
        t.nu2[g] = t.n[g] > 0.0 ? t.nu2[g] / t.n[g] : NAN;
    }
    *truth = t;
    return DPM_OK;
}

/* The block holding device `device`, or NULL past the end. *start: its first device. */
static const tuple_sim_block_t *find_block(const tuple_sim_pop_t *pop, uint64_t device,
                                           size_t *block_index, uint64_t *start)
{
    uint64_t first = 0;
    for (size_t i = 0; i < pop->nblocks; i++) {
        if (device < first + pop->block[i].count) {
            *block_index = i;
            *start = first;
            return &pop->block[i];
        }
        first += pop->block[i].count;
    }
    return NULL;
}

dpm_status_t tuple_sim_device_report(const tuple_sim_mech_t *m, const tuple_sim_pop_t *pop,
                                     uint64_t base_seed, uint32_t run, uint64_t device,
                                     dpm_tuple_report_t *out)
{
    size_t block_index;
    uint64_t start;
    if (m == NULL || !pop_ok(pop) || out == NULL) {
        return DPM_ERR_PARAM;
    }
    const tuple_sim_block_t *b = find_block(pop, device, &block_index, &start);
    if (b == NULL || !block_ok(b, pop->groups)) {
        return DPM_ERR_PARAM;
    }
    return device_perturb(m, tuple_sim_device_key(base_seed, run, device), b, out);
}

/* ---- threads -------------------------------------------------------------------------------- */

typedef void *(*worker_fn)(void *);

/* Runs fn on n work items of item_size bytes: item 0 on the calling thread, the others on
 * their own threads (inline if a thread cannot be started). */
static void run_parallel(worker_fn fn, void *items, size_t item_size, unsigned n)
{
    pthread_t tid[TUPLE_SIM_MAX_THREADS];
    int started[TUPLE_SIM_MAX_THREADS] = {0};
    char *base = items;
    for (unsigned i = 1; i < n; i++) {
        started[i] = pthread_create(&tid[i], NULL, fn, base + i * item_size) == 0;
    }
    fn(base);
    for (unsigned i = 1; i < n; i++) {
        if (started[i]) {
            pthread_join(tid[i], NULL);
        } else {
            fn(base + i * item_size);
        }
    }
}

/* [lo, hi) of part i of n equal parts of [0, total). */
static void part_range(uint64_t total, unsigned i, unsigned n, uint64_t *lo, uint64_t *hi)
{
    *lo = total / n * i + (i < total % n ? i : total % n);
    *hi = *lo + total / n + (i < total % n ? 1u : 0u);
}

static unsigned clamp_threads(unsigned threads, uint64_t work)
{
    unsigned n =
        threads < 1 ? 1 : (threads > TUPLE_SIM_MAX_THREADS ? TUPLE_SIM_MAX_THREADS : threads);
    return work < n ? (unsigned)(work > 0 ? work : 1) : n;
}

/* ---- one run -------------------------------------------------------------------------------- */

typedef struct {
    const tuple_sim_mech_t *m;
    const tuple_sim_pop_t *pop;
    uint64_t key; /* of the run */
    uint64_t lo, hi;
    dpm_disp_agg_t agg;
    dpm_status_t status;
} run_part_t;

/* Devices lo .. hi - 1 of one run into the part's own aggregate. Works on locals and writes
 * the part once at the end: parts sit next to each other, and a store per device into one
 * would bounce the cache line the other thread reads (false sharing). */
static void *run_part(void *arg)
{
    run_part_t *p = arg;
    const tuple_sim_mech_t *m = p->m;
    const tuple_sim_pop_t *pop = p->pop;
    size_t bi = 0;
    uint64_t start = 0, key = p->key;
    dpm_disp_agg_t agg;
    dpm_status_t st = dpm_disp_agg_init(&agg, &m->params);
    const tuple_sim_block_t *b = find_block(pop, p->lo, &bi, &start);
    for (uint64_t i = p->lo; i < p->hi && st == DPM_OK; i++) {
        while (i >= start + b->count) {
            start += b->count;
            b = &pop->block[++bi];
        }
        dpm_tuple_report_t rep;
        st = device_perturb(m, splitmix_at(key, i + 1u), b, &rep);
        if (st == DPM_OK) {
            st = dpm_disp_agg_add(&agg, rep.group, rep.value[0]);
        }
    }
    p->agg = agg;
    p->status = st;
    return NULL;
}

static dpm_status_t check_run_args(const tuple_sim_mech_t *m, const tuple_sim_pop_t *pop,
                                   tuple_sim_truth_t *truth)
{
    if (m == NULL || m->groups != (pop != NULL ? pop->groups : 0)) {
        return DPM_ERR_PARAM;
    }
    return tuple_sim_pop_truth(pop, truth);
}

dpm_status_t tuple_sim_run(const tuple_sim_mech_t *m, const tuple_sim_pop_t *pop,
                           uint64_t base_seed, uint32_t run, unsigned threads, dpm_disp_agg_t *agg)
{
    tuple_sim_truth_t truth;
    dpm_status_t st = check_run_args(m, pop, &truth);
    if (st != DPM_OK || agg == NULL) {
        return st != DPM_OK ? st : DPM_ERR_PARAM;
    }
    unsigned n = clamp_threads(threads, truth.total);
    run_part_t part[TUPLE_SIM_MAX_THREADS];
    for (unsigned i = 0; i < n; i++) {
        part[i].m = m;
        part[i].pop = pop;
        part[i].key = run_key(base_seed, run);
        part_range(truth.total, i, n, &part[i].lo, &part[i].hi);
    }
    run_parallel(run_part, part, sizeof(part[0]), n);
    dpm_disp_agg_t total;
    st = dpm_disp_agg_init(&total, &m->params);
    for (unsigned i = 0; i < n && st == DPM_OK; i++) {
        st = part[i].status;
        if (st == DPM_OK) {
            st = dpm_disp_agg_merge(&total, &part[i].agg); /* in order: deterministic */
        }
    }
    if (st == DPM_OK) {
        *agg = total;
    }
    return st;
}

dpm_status_t tuple_sim_estimate(const tuple_sim_mech_t *m, const tuple_sim_pop_t *pop,
                                const dpm_disp_agg_t *agg, double nu2, dpm_disp_estimate_t *est)
{
    tuple_sim_truth_t truth;
    dpm_status_t st = check_run_args(m, pop, &truth);
    if (st != DPM_OK) {
        return st;
    }
    double nu2s[DPM_DISP_MAX_GROUPS];
    for (uint32_t g = 0; g < pop->groups; g++) {
        nu2s[g] = nu2 == TUPLE_SIM_NU2_TRUE ? fmin(fmax(truth.nu2[g], 0.0), 1.0) : nu2;
        if (truth.n[g] <= 0.0) {
            return DPM_ERR_PARAM; /* dpm_disp_estimate needs every known size > 0 */
        }
    }
    return dpm_disp_estimate(&m->params, agg, truth.n, nu2s, est);
}

/* ---- many runs ------------------------------------------------------------------------------ */

typedef struct {
    const tuple_sim_mech_t *m;
    const tuple_sim_pop_t *pop;
    const tuple_sim_truth_t *truth;
    uint64_t base_seed;
    uint32_t first_run;
    uint64_t lo, hi; /* run offsets from first_run */
    double *means;
    dpm_status_t status;
} means_part_t;

static dpm_status_t one_run_means(const means_part_t *p, uint32_t run, double *means)
{
    dpm_disp_agg_t agg;
    dpm_status_t st = dpm_disp_agg_init(&agg, &p->m->params);
    uint64_t key = run_key(p->base_seed, run), device = 0;
    for (size_t bi = 0; bi < p->pop->nblocks && st == DPM_OK; bi++) {
        const tuple_sim_block_t *b = &p->pop->block[bi];
        for (uint64_t j = 0; j < b->count && st == DPM_OK; j++, device++) {
            dpm_tuple_report_t rep;
            st = device_perturb(p->m, splitmix_at(key, device + 1u), b, &rep);
            if (st == DPM_OK) {
                st = dpm_disp_agg_add(&agg, rep.group, rep.value[0]);
            }
        }
    }
    for (uint32_t g = 0; g < p->pop->groups && st == DPM_OK; g++) {
        means[g] = NAN;
        if (p->truth->n[g] > 0.0) {
            st = dpm_disp_group_mean(&p->m->params, &agg, g, p->truth->n[g], &means[g]);
        }
    }
    return st;
}

static void *means_part(void *arg)
{
    means_part_t *p = arg;
    means_part_t local = *p; /* no per-run stores next to the other thread's part */
    dpm_status_t st = DPM_OK;
    for (uint64_t j = local.lo; j < local.hi && st == DPM_OK; j++) {
        st = one_run_means(&local, local.first_run + (uint32_t)j,
                           local.means + j * local.pop->groups);
    }
    p->status = st;
    return NULL;
}

dpm_status_t tuple_sim_run_means(const tuple_sim_mech_t *m, const tuple_sim_pop_t *pop,
                                 uint64_t base_seed, uint32_t first_run, uint32_t nruns,
                                 unsigned threads, double *means)
{
    tuple_sim_truth_t truth;
    dpm_status_t st = check_run_args(m, pop, &truth);
    if (st != DPM_OK || means == NULL || nruns == 0) {
        return st != DPM_OK ? st : DPM_ERR_PARAM;
    }
    unsigned n = clamp_threads(threads, nruns);
    means_part_t part[TUPLE_SIM_MAX_THREADS];
    for (unsigned i = 0; i < n; i++) {
        part[i].m = m;
        part[i].pop = pop;
        part[i].truth = &truth;
        part[i].base_seed = base_seed;
        part[i].first_run = first_run;
        part[i].means = means;
        part_range(nruns, i, n, &part[i].lo, &part[i].hi);
    }
    run_parallel(means_part, part, sizeof(part[0]), n);
    for (unsigned i = 0; i < n && st == DPM_OK; i++) {
        st = part[i].status;
    }
    return st;
}
