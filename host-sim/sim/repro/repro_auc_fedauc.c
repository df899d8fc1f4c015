/* SPDX-License-Identifier: Apache-2.0 */
/* FedAUC's rows of dpm-sim repro auc_compare (see repro_auc_fedauc.h). */
#include "sim/repro/repro_auc_fedauc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpm/expert/mech.h"
#include "dpm/expert/memo.h"
#include "dpm/expert/report.h"
#include "dpm/expert/simulator.h"
#include "dpm/expert/fedauc.h"
#include "dpm/expert/noise.h"
#include "estimate/fedauc.h"
#include "sim/pop/progress.h"
#include "sim/repro/repro_fedauc.h"
#include "sim/pop/sim_rng.h"

#define Q16 65536.0
#define CONF 0.95

const char *const kAucFaName[AUC_FA_N] = {"fedauc_rr", "fedauc_lap local", "fedauc_lap global",
                                          "fedauc_lap orthogonal", "fedauc_lap adaptive"};
static const dpm_fedauc_variant_t kVariant[AUC_FA_N] = {
    DPM_FEDAUC_VARIANT_NONE, DPM_FEDAUC_LOCAL, DPM_FEDAUC_GLOBAL, DPM_FEDAUC_ORTHOGONAL,
    DPM_FEDAUC_ADAPTIVE};

static int mech_of(dpm_mech_t *m, uint32_t i, double eps)
{
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 1900u + i;
    c.mechanism = i == 0 ? DPM_MECH_ID_FEDAUC_RR : DPM_MECH_ID_FEDAUC_LAP;
    c.eps = DPM_EPS_Q16((dpm_eps_t)llround(eps * Q16));
    c.budget = c.eps;
    c.period_seconds = 86400u;
    c.fedauc_variant = (uint32_t)kVariant[i];
    c.fedauc_p_share_q16 = kVariant[i] == DPM_FEDAUC_ADAPTIVE || i == 0 ? 0u : 32768u;
    c.fedauc_score_bits = 31;
    const char *why = NULL;
    if (dpm_mech_init(m, &c, &why) != DPM_OK) {
        fprintf(stderr, "dpm-sim repro: auc_compare: fedauc campaign refused: %s\n",
                why ? why : "?");
        return -1;
    }
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The server's rank of a score: (score << 32 | rank2) sorted, binary search on the score. */
static uint32_t rank_of(const uint64_t *map, uint64_t m, uint32_t score)
{
    uint64_t lo = 0, hi = m;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if ((map[mid] >> 32) < score) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < m && (map[lo] >> 32) == score ? (uint32_t)map[lo] : UINT32_MAX;
}

/* Device 0's two rounds through the SDK: bytes up (upload + report) and down (the reply), and
 * the host time of the device's calls. */
static int round_trip(const dpm_mech_t *m, const auc_data_t *d, const uint32_t *ex, uint32_t n,
                      const uint64_t *map, uint64_t key, auc_fa_acc_t *a)
{
    size_t cap = DPM_FEDAUC_UPLOAD_MAX_BYTES(n, 31u) + DPM_FEDAUC_REPLY_MAX_BYTES(n);
    dpm_fedauc_buffers_t b = {malloc(n * sizeof(uint32_t)), malloc(n * sizeof(uint32_t)),
                              malloc(n * sizeof(uint64_t)), n};
    uint32_t *sc = malloc(n * sizeof(uint32_t)), *srv = malloc(n * sizeof(uint32_t));
    uint8_t *lab = malloc(n), *buf = malloc(cap), rbuf[DPM_REPORT_MAX_BYTES];
    uint64_t *ids = malloc(n * sizeof(uint64_t));
    int rr = m->campaign.mechanism == DPM_MECH_ID_FEDAUC_RR;
    int st = b.scores && b.perm && b.work && sc && srv && lab && buf && ids ? 0 : -1;
    for (uint32_t j = 0; j < n && st == 0; j++) {
        sc[j] = d->score[ex[j]];
        lab[j] = d->label[ex[j]];
        ids[j] = j;
    }
    auc_device_rand_t dr;
    dpm_fedauc_session_t s;
    dpm_fedauc_header_t h;
    dpm_fedauc_ranks_t rk;
    dpm_receipt_issuer_t iss = DPM_RECEIPT_ISSUER_INIT;
    dpm_receipt_t rc;
    dpm_report_t rep;
    dpm_memo_t memo;
    size_t up = 0, down = 0, rlen = 0;
    const char *why = NULL;
    memset(&memo, 0, sizeof(memo));
    double t0 = sim_now();
    st |= st == 0 && (auc_device_rand(&dr, key) != 0 ||
                      dpm_fedauc_prepare(m, &dr.r, sc, n, &b, &s) != DPM_OK ||
                      dpm_fedauc_upload_encode(&s, buf, cap, &up) != DPM_OK);
    double dev1 = sim_now() - t0;
    /* the server: the ranks of the uploaded scores, in upload order */
    st |= st == 0 && (dpm_fedauc_upload_decode(buf, up, &h, srv, n) != DPM_OK || h.n != n);
    for (uint32_t j = 0; j < n && st == 0; j++) {
        srv[j] = rank_of(map, d->n, srv[j]);
        st |= srv[j] == UINT32_MAX;
    }
    h.total = d->n;
    st |= st == 0 && dpm_fedauc_reply_encode(&h, srv, buf, cap, &down) != DPM_OK;
    for (int half = 0; half < 2 && st == 0 && rr; half++) { /* the device's secret */
        uint64_t word = 0;
        st |= dpm_rand_bits(&dr.r, 64, &word) != DPM_OK;
        memcpy(memo.key + 8 * half, &word, 8);
        memo.opened = DPM_MEMO_OPENED;
    }
    t0 = sim_now();
    st |= st == 0 && (dpm_fedauc_accept(&s, m, buf, down, rr ? ids : NULL, &rk, &why) != DPM_OK ||
                      dpm_receipt_unmetered(&iss, m, 0, &rc) != DPM_OK ||
                      dpm_mech_report_fedauc(m, &dr.r, &iss, &rc, &s, &rk, lab, rr ? ids : NULL,
                                             rr ? &memo : NULL, &rep) != DPM_OK ||
                      dpm_report_encode(&rep, rbuf, sizeof(rbuf), &rlen) != DPM_OK);
    double dev2 = sim_now() - t0;
    if (st != 0) {
        fprintf(stderr, "dpm-sim repro: auc_compare: fedauc round trip failed%s%s\n",
                why ? ": " : "", why ? why : "");
    }
    a->up_bytes = (double)(up + rlen);
    a->down_bytes = (double)down;
    a->ns = 1e9 * (dev1 + dev2);
    free(b.scores);
    free(b.perm);
    free(b.work);
    free(sc);
    free(srv);
    free(lab);
    free(buf);
    free(ids);
    return st;
}

static void score(auc_fa_acc_t *a, const dpm_fa_estimate_t *e, double exact)
{
    a->sq_exact += (e->auc - exact) * (e->auc - exact);
    a->err += e->auc - exact;
    a->with_ci += 1.0;
    a->cover += e->ci_lo <= exact && exact <= e->ci_hi;
    a->runs++;
}

int auc_fedauc_rows(const auc_data_t *d, uint32_t devices, const uint32_t *start,
                    const uint32_t *idx, uint32_t runs, double eps, uint64_t key,
                    auc_fa_acc_t *acc)
{
    uint32_t *r2 = malloc((size_t)d->n * sizeof(uint32_t));
    uint64_t *map = malloc((size_t)d->n * sizeof(uint64_t));
    repro_fa_client_t *cl = calloc(devices, sizeof(*cl));
    dpm_fa_ranking_t mom;
    memset(acc, 0, AUC_FA_N * sizeof(*acc));
    int st = r2 && map && cl && dpm_fa_rank2(d->score, d->n, r2, &mom) == DPM_OK ? 0 : -1;
    double exact = st == 0 ? dpm_fa_auc_exact(d->score, d->label, d->n) : NAN;
    for (uint32_t i = 0; i < d->n && st == 0; i++) {
        map[i] = (uint64_t)d->score[i] << 32 | r2[i];
    }
    if (st == 0) {
        qsort(map, d->n, sizeof(uint64_t), cmp_u64);
    }
    for (uint32_t v = 0; v < devices && st == 0; v++) { /* each device's statistics */
        repro_fa_client_t *c = &cl[v];
        c->n = start[v + 1] - start[v];
        for (uint32_t k = start[v]; k < start[v + 1]; k++) {
            uint32_t e = idx[k], r = r2[e];
            c->p += d->label[e];
            c->sum2 += d->label[e] ? r : 0u;
            c->sum_rank2 += r;
            c->max_rank2 = r > c->max_rank2 ? r : c->max_rank2;
        }
        for (uint32_t k = start[v]; k < start[v + 1]; k++) {
            uint32_t e = idx[k];
            int64_t dev = (int64_t)((uint64_t)c->n * r2[idx[k]]) - (int64_t)c->sum_rank2;
            uint64_t ad = dev < 0 ? (uint64_t)-dev : (uint64_t)dev;
            c->maxdev = ad > c->maxdev ? ad : c->maxdev;
            c->t += d->label[e] ? dev : 0;
        }
    }
    for (uint32_t i = 0; i < AUC_FA_N && st == 0; i++) {
        dpm_mech_t m;
        dpm_fa_params_t par;
        sim_rng_t rng;
        st = mech_of(&m, i, eps) != 0 || dpm_fa_params_from_mech(&par, &m) != DPM_OK ||
             round_trip(&m, d, idx + start[0], start[1] - start[0], map,
                        sim_stream_key(key, 0xF0, i), &acc[i]) != 0;
        sim_rng_init(&rng, sim_stream_key(key, 0xF1, i));
        uint64_t below = (uint64_t)llround(par.rho * 4294967296.0); /* rr: flip iff U32 < below */
        for (uint32_t run = 0; run < runs && st == 0; run++) {
            dpm_fa_agg_t a;
            dpm_fa_agg_init(&a);
            if (i == 0) { /* every label flipped; the sums as the reports add up */
                uint64_t s2 = 0, p = 0;
                for (uint32_t e = 0; e < d->n; e++) {
                    uint64_t y = d->label[e] ^ (uint64_t)((sim_rng_u64(&rng) >> 32) < below);
                    p += y;
                    s2 += y * r2[e];
                }
                a.reports = devices;
                a.examples = d->n;
                a.total = d->n;
                a.sum2_int = s2;
                a.p = p;
            } else {
                for (uint32_t v = 0; v < devices && st == 0; v++) {
                    dpm_fedauc_report_t body;
                    sim_fa_lap_body(&m.params.fedauc, d->n, &cl[v], &rng, &body);
                    st = dpm_fa_agg_add(&a, &par, &body) == DPM_OK ? 0 : -1;
                }
            }
            dpm_fa_estimate_t e;
            if (st == 0 && dpm_fa_estimate(&par, &a, &mom, CONF, &e) == DPM_OK && e.valid) {
                score(&acc[i], &e, exact);
            }
        }
    }
    free(r2);
    free(map);
    free(cl);
    return st;
}
