/* SPDX-License-Identifier: Apache-2.0 */
/* Emits reports of every kind made by the SDK (tuple_mr, tuple_ml, roc_hist with and without
 * groups, dpauc, ustat_bins, ustat_tree, fedauc_rr, fedauc_lap) and FedAUC's round-1 messages
 * (rows with "kind": "fedauc_upload" / "fedauc_reply"), one JSON object per line: the encoded
 * bytes in hex, the body kind ("body") and the fields the SDK meant, for an independent decoder
 * to compare (test_decode.py). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dpm/expert/report.h"
#include "dpm/expert/fedauc.h"
#include "dpm/expert/mech.h"
#include "dpm/expert/noise.h"
#include "dpm/expert/ustat.h"
#include "estimate/fedauc.h"
#include "test_receipt.h"
#include "test_rng.h"

/* The mechanism of campaign c; 0, or 1 after saying why not. */
static int mech_init(dpm_mech_t *mc, const dpm_campaign_t *c)
{
    const char *why = "";
    if (dpm_mech_init(mc, c, &why) != DPM_OK) {
        fprintf(stderr, "campaign: %s\n", why);
        return 1;
    }
    return 0;
}

/* Encodes rep and prints the start of its line: the hex, the report id and the header fields
 * (the caller adds the body's fields and the closing brace). 0, or 1 if it does not encode. */
static int print_report_head(const dpm_report_t *rep)
{
    uint8_t buf[DPM_REPORT_MAX_BYTES];
    size_t len = 0;
    if (dpm_report_encode(rep, buf, sizeof(buf), &len) != DPM_OK) {
        return 1;
    }
    printf("{\"hex\": \"");
    for (size_t i = 0; i < len; i++) {
        printf("%02x", buf[i]);
    }
    printf("\", \"report_id\": \"");
    for (int i = 0; i < DPM_REPORT_ID_BYTES; i++) {
        printf("%02x", rep->report_id[i]);
    }
    printf("\", \"campaign_id\": %u, \"period\": %u, \"mechanism\": %d, "
           "\"eps_q16\": %u, \"params_hash\": %u",
           rep->campaign_id, rep->period, (int)rep->mechanism, rep->eps, rep->params_hash);
    return 0;
}

/* , "name": [v0, v1, ...] */
static void print_list(const char *name, const int32_t *v, uint32_t n)
{
    printf(", \"%s\": [", name);
    for (uint32_t i = 0; i < n; i++) {
        printf("%s%d", i ? ", " : "", v[i]);
    }
    printf("]");
}

static void print_hex(const char *key, const uint8_t *b, size_t n)
{
    printf("\"%s\": \"", key);
    for (size_t i = 0; i < n; i++) {
        printf("%02x", b[i]);
    }
    printf("\"");
}

static void print_u32s(const char *key, const uint32_t *v, uint32_t n)
{
    printf(", \"%s\": [", key);
    for (uint32_t i = 0; i < n; i++) {
        printf("%s%u", i ? ", " : "", v[i]);
    }
    printf("]");
}

/* FedAUC: every variant, devices of 1, 7 and 30 examples ranked among 10 other scores: the
 * upload, the reply and the report of each. */
static int emit_fedauc(test_rng_t *t, dpm_rand_t *r)
{
    const struct {
        dpm_mech_id_t mech;
        uint32_t variant, share;
    } kinds[] = {
        {DPM_MECH_ID_FEDAUC_RR, 0, 0},
        {DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_LOCAL, 32768},
        {DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_GLOBAL, 32768},
        {DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_ORTHOGONAL, 19660},
        {DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_ADAPTIVE, 0},
    };
    const uint32_t sizes[3] = {1, 7, 30};
    for (uint32_t k = 0; k < 5; k++) {
        dpm_campaign_t c;
        memset(&c, 0, sizeof(c));
        c.id = 400u + k;
        c.mechanism = kinds[k].mech;
        dpm_eps_from_decimal("1", &c.eps.q16);
        c.budget = c.eps;
        c.fedauc_variant = kinds[k].variant;
        c.fedauc_p_share_q16 = kinds[k].share;
        c.fedauc_score_bits = 12;
        dpm_mech_t mc;
        if (mech_init(&mc, &c) != 0) {
            return 1;
        }
        for (uint32_t d = 0; d < 3; d++) {
            enum { MAXN = 30, OTHERS = 10 };
            uint32_t n = sizes[d], q[MAXN], perm[MAXN], pool[MAXN + OTHERS], rank2[MAXN + OTHERS];
            uint64_t work[MAXN], ids[MAXN];
            dpm_score_t scores[MAXN];
            uint8_t labels[MAXN], up[256], reply[256];
            for (uint32_t i = 0; i < n; i++) {
                uint64_t w = test_rng_next(t);
                scores[i] = (dpm_score_t)(w & 0x7FFFFFFFu);
                labels[i] = (uint8_t)((w >> 40) & 1u);
                ids[i] = 1000u * d + i;
            }
            dpm_fedauc_buffers_t b = {q, perm, work, MAXN};
            dpm_fedauc_session_t s;
            size_t ulen = 0, rlen = 0;
            dpm_fedauc_header_t h;
            if (dpm_fedauc_prepare(&mc, r, scores, n, &b, &s) != DPM_OK ||
                dpm_fedauc_upload_encode(&s, up, sizeof(up), &ulen) != DPM_OK ||
                dpm_fedauc_upload_decode(up, ulen, &h, pool, MAXN) != DPM_OK) {
                return 1;
            }
            printf("{\"kind\": \"fedauc_upload\", ");
            print_hex("hex", up, ulen);
            printf(", \"campaign_id\": %u, \"mechanism\": %u, \"params_hash\": %u, ", s.campaign_id,
                   s.mechanism, s.params_hash);
            print_hex("upload_token", s.token, DPM_FEDAUC_TOKEN_BYTES);
            print_u32s("scores", q, n);
            printf("}\n");
            for (uint32_t i = 0; i < OTHERS; i++) {
                pool[n + i] = (uint32_t)(test_rng_next(t) % 4097u);
            }
            h.total = n + OTHERS;
            dpm_fedauc_ranks_t rk;
            dpm_memo_t memo;
            memset(&memo, 0, sizeof(memo));
            memset(memo.key, 0x5A ^ (int)d, sizeof(memo.key));
            memo.opened = DPM_MEMO_OPENED;
            dpm_report_t rep;
            if (dpm_fa_rank2(pool, n + OTHERS, rank2, NULL) != DPM_OK ||
                dpm_fedauc_reply_encode(&h, rank2, reply, sizeof(reply), &rlen) != DPM_OK ||
                dpm_fedauc_accept(&s, &mc, reply, rlen, ids, &rk, NULL) != DPM_OK ||
                dpm_mech_report_fedauc(&mc, r, TEST_RECEIPT(&mc, d), &s, &rk, labels, ids, &memo,
                                       &rep) != DPM_OK) {
                return 1;
            }
            printf("{\"kind\": \"fedauc_reply\", ");
            print_hex("hex", reply, rlen);
            printf(", \"campaign_id\": %u, \"mechanism\": %u, \"params_hash\": %u, ", h.campaign_id,
                   h.mechanism, h.params_hash);
            print_hex("upload_token", h.token, DPM_FEDAUC_TOKEN_BYTES);
            printf(", \"total\": %u", h.total);
            print_u32s("ranks2", rank2, n);
            printf("}\n");
            const dpm_fedauc_report_t *fb = &rep.body.fedauc;
            if (print_report_head(&rep) != 0) {
                return 1;
            }
            printf(", \"body\": \"fedauc\", ");
            print_hex("upload_token", fb->upload_token, DPM_FEDAUC_TOKEN_BYTES);
            printf(", \"n\": %u, \"total\": %u, \"local_p\": %lld, \"local_sum2\": %lld, "
                   "\"t\": %lld, \"sum_rank2\": %llu, \"sensitivity\": %llu, \"eps_p_q16\": %u}\n",
                   fb->n, fb->total, (long long)fb->local_p, (long long)fb->local_sum2,
                   (long long)fb->t, (unsigned long long)fb->sum_rank2,
                   (unsigned long long)fb->sensitivity, fb->eps_p);
        }
    }
    return 0;
}

int main(void)
{
    test_rng_t t;
    test_rng_seed(&t, 2024);
    dpm_rng_t rng = test_rng_port(&t);
    dpm_rand_t r;
    dpm_rand_init(&r, &rng);
    const dpm_metric_t metrics[] = {DPM_METRIC_TPR, DPM_METRIC_FPR, DPM_METRIC_ACCURACY,
                                    DPM_METRIC_PRECISION};
    const dpm_ratio_t values[] = {{9, 10}, {1, 5}, {3, 4}, {0, 7}};
    const char *eps_text[] = {"0.1", "1", "5"};
    for (int mech = DPM_MECH_ID_TUPLE_MR; mech <= DPM_MECH_ID_TUPLE_ML; mech++) {
        for (uint32_t m = 1; m <= 4; m++) {
            for (int e = 0; e < 3; e++) {
                dpm_campaign_t c;
                memset(&c, 0, sizeof(c));
                c.id = 100u + (uint32_t)mech * 10u + m;
                c.mechanism = (dpm_mech_id_t)mech;
                dpm_eps_from_decimal(eps_text[e], &c.eps.q16);
                c.budget = c.eps;
                c.groups = 3 + m;
                c.nmetrics = m;
                memcpy(c.metrics, metrics, sizeof(metrics));
                c.frac_bits = DPM_FRAC_BITS;
                dpm_mech_t mc;
                if (mech_init(&mc, &c) != 0) {
                    return 1;
                }
                for (uint32_t k = 0; k < 5; k++) {
                    dpm_report_t rep;
                    if (dpm_mech_report_tuple(&mc, &r, TEST_RECEIPT(&mc, 1000u * k), k % c.groups,
                                              values, &rep) != DPM_OK ||
                        print_report_head(&rep) != 0) {
                        return 1;
                    }
                    printf(", \"body\": \"tuple\", \"group\": %u, \"values\": [",
                           rep.body.tuple.group);
                    for (uint32_t i = 0; i < rep.body.tuple.nmetrics; i++) {
                        printf("%s%d", i ? ", " : "", rep.body.tuple.value[i]);
                    }
                    printf("]}\n");
                }
            }
        }
    }
    /* roc_hist: 2, 8 and 64 bins, small local histograms (noise makes some values negative),
     * without and with 4 groups */
    const uint32_t n_edges[] = {1, 7, DPM_MAX_BINS - 1};
    for (uint32_t groups = 0; groups <= 4; groups += 4) {
        for (int b = 0; b < 3; b++) {
            for (int e = 0; e < 3; e++) {
                dpm_campaign_t c;
                memset(&c, 0, sizeof(c));
                c.id = 300u + groups * 25u + (uint32_t)b * 10u + (uint32_t)e;
                c.mechanism = DPM_MECH_ID_ROC_HIST;
                dpm_eps_from_decimal(eps_text[e], &c.eps.q16);
                c.budget = c.eps;
                c.groups = groups;
                c.nbins = n_edges[b];
                for (uint32_t i = 0; i < n_edges[b]; i++) {
                    c.bin_edges[i] = (uint32_t)(((uint64_t)(i + 1) << 31) / (n_edges[b] + 1));
                }
                dpm_mech_t mc;
                if (mech_init(&mc, &c) != 0) {
                    return 1;
                }
                for (uint32_t k = 0; k < 5; k++) {
                    dpm_score_hist_t h;
                    if (dpm_score_hist_init(&h, &mc.params.roc_hist.bins) != DPM_OK) {
                        return 1;
                    }
                    for (uint32_t i = 0; i < 40u * k; i++) {
                        uint64_t w = test_rng_next(&t);
                        uint32_t score = (uint32_t)(w & 0x7FFFFFFFu);
                        if (dpm_score_hist_add(&h, &mc.params.roc_hist.bins, score,
                                               (int)((w >> 40) & 1u)) != DPM_OK) {
                            return 1;
                        }
                    }
                    dpm_report_t rep;
                    dpm_status_t st =
                        groups == 0
                            ? dpm_mech_report_roc_hist(&mc, &r, TEST_RECEIPT(&mc, 1000u * k), &h,
                                                       &rep)
                            : dpm_mech_report_roc_hist_group(&mc, &r, TEST_RECEIPT(&mc, 1000u * k),
                                                             k % groups, &h, &rep);
                    if (st != DPM_OK || print_report_head(&rep) != 0) {
                        return 1;
                    }
                    printf(", \"body\": \"roc_hist\", \"group\": %u", rep.body.roc_hist.group);
                    print_list("pos", rep.body.roc_hist.pos, rep.body.roc_hist.bins);
                    print_list("neg", rep.body.roc_hist.neg, rep.body.roc_hist.bins);
                    printf("}\n");
                }
            }
        }
    }
#if DPM_MECH_DPAUC
    /* dpauc: 2, 13 and the build's largest N thresholds, both calibrations */
    const uint32_t n_thr[] = {2, 13, DPM_DPAUC_MAX_THRESHOLDS};
    for (uint32_t cal = 0; cal <= 1; cal++) {
        for (int b = 0; b < 3; b++) {
            for (int e = 0; e < 3; e++) {
                dpm_campaign_t c;
                memset(&c, 0, sizeof(c));
                c.id = 600u + cal * 100u + (uint32_t)b * 10u + (uint32_t)e;
                c.mechanism = DPM_MECH_ID_DPAUC;
                dpm_eps_from_decimal(eps_text[e], &c.eps.q16);
                c.budget = c.eps;
                c.calibration = cal;
                c.nthresholds = n_thr[b];
                for (uint32_t i = 0; i < n_thr[b]; i++) {
                    c.thresholds[i] = (uint32_t)(((uint64_t)i << 31) / (n_thr[b] - 1u));
                }
                dpm_mech_t mc;
                if (mech_init(&mc, &c) != 0) {
                    return 1;
                }
                for (uint32_t k = 0; k < 3; k++) {
                    dpm_dpauc_counts_t cnt;
                    if (dpm_dpauc_counts_init(&cnt, &mc.params.dpauc) != DPM_OK) {
                        return 1;
                    }
                    for (uint32_t i = 0; i < 40u * k; i++) {
                        uint64_t w = test_rng_next(&t);
                        if (dpm_dpauc_counts_add(&cnt, &mc.params.dpauc,
                                                 (uint32_t)(w & 0x7FFFFFFFu),
                                                 (int)((w >> 40) & 1u)) != DPM_OK) {
                            return 1;
                        }
                    }
                    dpm_report_t rep;
                    if (dpm_mech_report_dpauc(&mc, &r, TEST_RECEIPT(&mc, k), &cnt, &rep) !=
                            DPM_OK ||
                        print_report_head(&rep) != 0) {
                        return 1;
                    }
                    const dpm_dpauc_report_t *d = &rep.body.dpauc;
                    printf(", \"body\": \"dpauc\"");
                    print_list("tp", d->tp, d->n);
                    print_list("fp", d->fp, d->n);
                    print_list("tn", d->tn, d->n);
                    print_list("fn", d->fn, d->n);
                    printf("}\n");
                }
            }
        }
    }
#endif
#if DPM_MECH_USTAT
    /* ustat_bins: the three kernels; ustat_tree: Hadamard and GRR levels, several depths */
    for (uint32_t kernel = 0; kernel <= 2; kernel++) {
        for (int e = 0; e < 3; e++) {
            dpm_campaign_t c;
            memset(&c, 0, sizeof(c));
            c.id = 800u + kernel * 10u + (uint32_t)e;
            c.mechanism = DPM_MECH_ID_USTAT_BINS;
            dpm_eps_from_decimal(eps_text[e], &c.eps.q16);
            c.budget = c.eps;
            c.ustat_kernel = kernel;
            c.ustat_k = kernel == 2 ? 16 : kernel == 1 ? DPM_MAX_GRR_K / 2 : DPM_MAX_GRR_K;
            dpm_mech_t mc;
            if (mech_init(&mc, &c) != 0) {
                return 1;
            }
            for (uint32_t k = 0; k < 5; k++) {
                uint64_t w = test_rng_next(&t);
                dpm_ustat_example_t ex = {(uint32_t)(w & 0x7FFFFFFFu),
                                          kernel == 2 ? 0 : (int)((w >> 40) & 1u),
                                          (uint32_t)(w >> 33)};
                dpm_report_t rep;
                if (dpm_mech_report_ustat_bins(&mc, &r, TEST_RECEIPT(&mc, k), &ex, &rep) !=
                        DPM_OK ||
                    print_report_head(&rep) != 0) {
                    return 1;
                }
                printf(", \"body\": \"ustat_bins\", \"value\": %u, \"label\": %u}\n",
                       rep.body.ustat_bins.value, rep.body.ustat_bins.label);
            }
        }
    }
    const uint32_t depths[] = {1, 8, DPM_USTAT_MAX_DEPTH};
    for (int b = 0; b < 3; b++) {
        for (uint32_t grr = 0; grr <= 1; grr++) {
            dpm_campaign_t c;
            memset(&c, 0, sizeof(c));
            c.id = 900u + (uint32_t)b * 10u + grr;
            c.mechanism = DPM_MECH_ID_USTAT_TREE;
            dpm_eps_from_decimal("1", &c.eps.q16);
            c.budget = c.eps;
            c.tree_depth = depths[b];
            c.tree_grr_levels = grr ? 1u : 0u;
            dpm_mech_t mc;
            if (mech_init(&mc, &c) != 0) {
                return 1;
            }
            for (uint32_t k = 0; k < 5; k++) {
                uint64_t w = test_rng_next(&t);
                dpm_ustat_example_t ex = {(uint32_t)(w & 0x7FFFFFFFu), (int)((w >> 40) & 1u), 0};
                dpm_report_t rep;
                if (dpm_mech_report_ustat_tree(&mc, &r, TEST_RECEIPT(&mc, k), &ex, &rep) !=
                        DPM_OK ||
                    print_report_head(&rep) != 0) {
                    return 1;
                }
                const dpm_ustat_tree_report_t *u = &rep.body.ustat_tree;
                printf(", \"body\": \"ustat_tree\", \"label\": %u, \"level\": %u, \"row\": %u, "
                       "\"value\": %u}\n",
                       u->label, u->level, u->row, u->value);
            }
        }
    }
#endif
    return emit_fedauc(&t, &r);
}
