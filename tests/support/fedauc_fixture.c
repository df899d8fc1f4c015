/* SPDX-License-Identifier: Apache-2.0 */
#include "fedauc_fixture.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_rng.h"

int fa_fix_alloc(fa_fix_t *f, uint32_t k, uint32_t m)
{
    memset(f, 0, sizeof(*f));
    f->k = k;
    f->m = m;
    f->msg_cap = DPM_FEDAUC_REPLY_MAX_BYTES(m) + DPM_FEDAUC_UPLOAD_MAX_BYTES(m, 31);
    f->start = calloc(k + 1u, sizeof(uint32_t));
    f->scores = calloc(m, sizeof(dpm_score_t));
    f->labels = calloc(m, 1);
    f->ids = calloc(m, sizeof(uint64_t));
    f->qscores = calloc(m, sizeof(uint32_t));
    f->perm = calloc(m, sizeof(uint32_t));
    f->work = calloc(m, sizeof(uint64_t));
    f->sess = calloc(k, sizeof(dpm_fedauc_session_t));
    f->rk = calloc(k, sizeof(dpm_fedauc_ranks_t));
    f->pool = calloc(m, sizeof(uint32_t));
    f->rank2 = calloc(m, sizeof(uint32_t));
    f->msg = malloc(f->msg_cap);
    if (!f->start || !f->scores || !f->labels || !f->ids || !f->qscores || !f->perm || !f->work ||
        !f->sess || !f->rk || !f->pool || !f->rank2 || !f->msg) {
        fa_fix_free(f);
        return -1;
    }
    for (uint32_t d = 0; d <= k; d++) {
        f->start[d] = (uint32_t)(((uint64_t)m * d) / k);
    }
    return 0;
}

void fa_fix_free(fa_fix_t *f)
{
    free(f->start);
    free(f->scores);
    free(f->labels);
    free(f->ids);
    free(f->qscores);
    free(f->perm);
    free(f->work);
    free(f->sess);
    free(f->rk);
    free(f->pool);
    free(f->rank2);
    free(f->msg);
    memset(f, 0, sizeof(*f));
}

static double uniform01(test_rng_t *t)
{
    return ((double)(test_rng_next(t) >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(test_rng_t *t)
{
    return sqrt(-2.0 * log(uniform01(t))) * cos(6.283185307179586 * uniform01(t));
}

/* Phi^-1 by bisection on erfc (tests only). */
static double probit(double p)
{
    double lo = -10.0, hi = 10.0;
    for (int i = 0; i < 200; i++) {
        double mid = (lo + hi) / 2.0;
        if (0.5 * erfc(-mid / sqrt(2.0)) < p) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return (lo + hi) / 2.0;
}

typedef struct {
    double latent;
    uint8_t label;
    uint64_t id;
} example_t;

static int by_latent(const void *a, const void *b)
{
    double x = ((const example_t *)a)->latent, y = ((const example_t *)b)->latent;
    return x < y ? -1 : x > y ? 1 : 0;
}

void fa_fix_binormal(fa_fix_t *f, double auc, double base_rate, fa_partition_t part,
                     uint64_t seed)
{
    test_rng_t t;
    test_rng_seed(&t, seed);
    double mu = sqrt(2.0) * probit(auc);
    example_t *ex = malloc(f->m * sizeof(example_t));
    if (ex == NULL) {
        abort();
    }
    for (uint32_t i = 0; i < f->m; i++) {
        ex[i].label = uniform01(&t) < base_rate;
        ex[i].latent = gauss(&t) + (ex[i].label ? mu : 0.0);
        ex[i].id = (test_rng_next(&t) & ~(uint64_t)0xFFFFF) | i; /* distinct */
    }
    if (part == FA_NONIID) {
        qsort(ex, f->m, sizeof(example_t), by_latent);
    }
    for (uint32_t i = 0; i < f->m; i++) {
        f->scores[i] = dpm_score_from_double(1.0 / (1.0 + exp(-ex[i].latent)));
        f->labels[i] = ex[i].label;
        f->ids[i] = ex[i].id;
    }
    free(ex);
}

dpm_fedauc_buffers_t fa_fix_buffers(const fa_fix_t *f, uint32_t d)
{
    uint32_t a = f->start[d];
    dpm_fedauc_buffers_t b = {f->qscores + a, f->perm + a, f->work + a, f->start[d + 1] - a};
    return b;
}

dpm_status_t fa_fix_rounds(fa_fix_t *f, const dpm_mech_t *m, dpm_rand_t *r)
{
    f->upload_bytes = f->reply_bytes = 0;
    for (uint32_t d = 0; d < f->k; d++) {
        uint32_t a = f->start[d], n = f->start[d + 1] - a;
        dpm_fedauc_buffers_t b = fa_fix_buffers(f, d);
        dpm_status_t st = dpm_fedauc_prepare(m, r, f->scores + a, n, &b, &f->sess[d]);
        size_t len = 0;
        if (st == DPM_OK) {
            st = dpm_fedauc_upload_encode(&f->sess[d], f->msg, f->msg_cap, &len);
        }
        dpm_fedauc_header_t h;
        if (st == DPM_OK) {
            st = dpm_fedauc_upload_decode(f->msg, len, &h, f->pool + a, n);
        }
        if (st != DPM_OK) {
            return st;
        }
        if (h.n != n || memcmp(h.token, f->sess[d].token, DPM_FEDAUC_TOKEN_BYTES) != 0) {
            return DPM_ERR_PROTOCOL;
        }
        f->upload_bytes += len;
    }
    dpm_status_t st = dpm_fa_rank2(f->pool, f->m, f->rank2, &f->mom);
    for (uint32_t d = 0; d < f->k && st == DPM_OK; d++) {
        uint32_t a = f->start[d], n = f->start[d + 1] - a;
        dpm_fedauc_header_t h;
        memset(&h, 0, sizeof(h));
        h.campaign_id = m->campaign.id;
        h.mechanism = (uint32_t)m->campaign.mechanism;
        h.params_hash = m->params_hash;
        memcpy(h.token, f->sess[d].token, DPM_FEDAUC_TOKEN_BYTES);
        h.total = f->m;
        h.n = n;
        size_t len = 0;
        st = dpm_fedauc_reply_encode(&h, f->rank2 + a, f->msg, f->msg_cap, &len);
        if (st == DPM_OK) {
            st = dpm_fedauc_accept(&f->sess[d], m, f->msg, len, f->ids + a, &f->rk[d], NULL);
        }
        f->reply_bytes += len;
    }
    return st;
}

double fa_fix_truth(const fa_fix_t *f, const dpm_mech_t *m)
{
    uint32_t *q = malloc(f->m * sizeof(uint32_t));
    if (q == NULL) {
        return NAN;
    }
    for (uint32_t i = 0; i < f->m; i++) {
        q[i] = dpm_fedauc_quantize(&m->params.fedauc, f->scores[i]);
    }
    double auc = dpm_fa_auc_exact(q, f->labels, f->m);
    free(q);
    return auc;
}
