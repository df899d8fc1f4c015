/* SPDX-License-Identifier: Apache-2.0 */
/* K simulated devices of one FedAUC campaign, through the real SDK code of both rounds, for
 * tests/e2e/test_collector_fedauc.py (which carries the messages to the collector over TLS):
 *
 *   tool_fedauc CAMPAIGN_HEX DEVICES MAX_EXAMPLES PERIOD SEED [SILENT]
 *
 * prints "upload HEX" per device (dpm_fedauc_prepare + dpm_fedauc_upload_encode), then reads
 * one line "reply HEX" per device in the same order (the collector's rank replies), validates
 * each (dpm_fedauc_accept), prints "report HEX" (dpm_mech_report_fedauc for PERIOD,
 * dpm_report_encode), and last one JSON line: the estimate host-sim/estimate/fedauc.c makes
 * from exactly these reports and the ranking of exactly these uploads (dpm_fa_agg_add,
 * dpm_fa_rank2's moments, dpm_fa_estimate at 0.95), the same with one report's localP one
 * higher ("perturbed": the negative control of the comparison), the exact AUC of the
 * quantized scores ("truth") and the summed statistics in rank units ("sum_r", "p"). With
 * SILENT, the last SILENT devices are dropouts to be: "truth_heard" is the exact AUC of the other
 * devices' examples among themselves, "naive_heard" what their sums give when the dropouts'
 * examples below their ranks are ignored. Exit 1 with a
 * message on any failure. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpm/expert/report.h"
#include "dpm/expert/fedauc.h"
#include "dpm/expert/mech.h"
#include "estimate/fedauc.h"
#include "test_receipt.h"
#include "test_rng.h"

static int die(const char *what)
{
    fprintf(stderr, "tool_fedauc: %s\n", what);
    return 1;
}

static size_t unhex(const char *s, uint8_t *out, size_t cap)
{
    size_t n = 0;
    while (s[0] && s[1] && s[0] != '\n' && n < cap) {
        unsigned v = 0;
        if (sscanf(s, "%2x", &v) != 1) {
            break;
        }
        out[n++] = (uint8_t)v;
        s += 2;
    }
    return n;
}

static void put_hex(const char *tag, const uint8_t *b, size_t n)
{
    printf("%s ", tag);
    for (size_t i = 0; i < n; i++) {
        printf("%02x", b[i]);
    }
    printf("\n");
}

static void put_estimate(const char *key, const dpm_fa_estimate_t *e)
{
    printf("\"%s\": {\"valid\": %d, \"auc\": %.17g, \"auc_unbiased\": %.17g, \"sd\": %.17g, "
           "\"ci\": [%.17g, %.17g], \"positives\": %.17g, \"negatives\": %.17g, \"m\": %.17g}",
           key, e->valid, e->auc, e->auc_raw, e->sd, e->ci_lo, e->ci_hi, e->p, e->n, e->m);
}

int main(int argc, char **argv)
{
    if (argc != 6 && argc != 7) {
        return die("usage: tool_fedauc CAMPAIGN_HEX DEVICES MAX_EXAMPLES PERIOD SEED [SILENT]");
    }
    uint32_t silent = argc == 7 ? (uint32_t)strtoul(argv[6], NULL, 10) : 0u;
    static uint8_t cbuf[DPM_CAMPAIGN_MAX_BYTES];
    size_t clen = unhex(argv[1], cbuf, sizeof(cbuf));
    uint32_t K = (uint32_t)strtoul(argv[2], NULL, 10), maxn = (uint32_t)strtoul(argv[3], NULL, 10);
    uint32_t period = (uint32_t)strtoul(argv[4], NULL, 10);
    uint64_t seed = strtoull(argv[5], NULL, 10);
    dpm_campaign_t c;
    dpm_mech_t m;
    const char *why = "";
    if (dpm_campaign_decode(cbuf, clen, &c, &why) != DPM_OK ||
        dpm_mech_init(&m, &c, &why) != DPM_OK) {
        return die(why);
    }
    if (K == 0 || maxn == 0 || maxn > 4096 || silent >= K) {
        return die("bad DEVICES, MAX_EXAMPLES or SILENT");
    }
    size_t cap = (size_t)K * maxn;
    dpm_score_t *scores = calloc(cap, sizeof(*scores));
    uint32_t *q = calloc(cap, 4), *perm = calloc(cap, 4), *pool = calloc(cap, 4);
    uint32_t *rank2 = calloc(cap, 4), *nd = calloc(K, 4);
    uint64_t *work = calloc(cap, 8), *ids = calloc(cap, 8);
    uint8_t *labels = calloc(cap, 1), *qlab = calloc(cap, 1);
    dpm_fedauc_session_t *s = calloc(K, sizeof(*s));
    dpm_report_t *reps = calloc(K, sizeof(*reps));
    size_t msg_cap = (size_t)DPM_FEDAUC_REPLY_MAX_BYTES(maxn) + 64u;
    uint8_t *msg = malloc(msg_cap);
    char *line = malloc(2 * msg_cap + 64);
    if (!scores || !q || !perm || !pool || !rank2 || !nd || !work || !ids || !labels || !qlab ||
        !s || !reps || !msg || !line) {
        return die("out of memory");
    }
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
    if (test_rand_init(&r, &t, &rng, seed) != DPM_OK) {
        return die("rng");
    }
    /* round 1: each device's scores (positives shifted up: an AUC near 0.8), shuffled, uploaded */
    uint64_t M = 0;
    for (uint32_t d = 0; d < K; d++) {
        size_t o = (size_t)d * maxn;
        nd[d] = 1u + (uint32_t)(test_rng_next(&t) % maxn);
        for (uint32_t i = 0; i < nd[d]; i++) {
            uint64_t w = test_rng_next(&t);
            labels[o + i] = (uint8_t)((w >> 62) == 0); /* a quarter positive */
            uint32_t u = (uint32_t)(w & 0x3FFFFFFFu);  /* [0, 2^30) */
            scores[o + i] = labels[o + i] ? u + (1u << 29) : u;
            ids[o + i] = ((uint64_t)d << 32) | i;
        }
        dpm_fedauc_buffers_t b = {q + o, perm + o, work + o, maxn};
        size_t len = 0;
        if (dpm_fedauc_prepare(&m, &r, scores + o, nd[d], &b, &s[d]) != DPM_OK ||
            dpm_fedauc_upload_encode(&s[d], msg, msg_cap, &len) != DPM_OK) {
            return die("round 1");
        }
        for (uint32_t j = 0; j < nd[d]; j++) { /* the server's view: quantized, upload order */
            pool[M + j] = q[o + j];
            qlab[M + j] = labels[o + perm[o + j]];
        }
        M += nd[d];
        put_hex("upload", msg, len);
    }
    fflush(stdout);
    /* round 2: each reply validated, the report made */
    dpm_fa_params_t fp;
    dpm_fa_agg_t agg, bumped, heard; /* heard: the reports of the devices that are not silent */
    dpm_fa_agg_init(&agg);
    dpm_fa_agg_init(&bumped);
    dpm_fa_agg_init(&heard);
    if (dpm_fa_params_from_mech(&fp, &m) != DPM_OK) {
        return die("estimator parameters");
    }
    for (uint32_t d = 0; d < K; d++) {
        size_t o = (size_t)d * maxn;
        if (fgets(line, (int)(2 * msg_cap + 64), stdin) == NULL ||
            strncmp(line, "reply ", 6) != 0) {
            return die("expected 'reply HEX'");
        }
        size_t len = unhex(line + 6, msg, msg_cap);
        dpm_fedauc_ranks_t rk;
        dpm_memo_t memo;
        memset(&memo, 0, sizeof(memo));
        for (size_t i = 0; i < sizeof(memo.key); i++) {
            memo.key[i] = (uint8_t)test_rng_next(&t);
        }
        memo.opened = DPM_MEMO_OPENED;
        const uint64_t *idp = m.campaign.mechanism == DPM_MECH_ID_FEDAUC_RR ? ids + o : NULL;
        if (dpm_fedauc_accept(&s[d], &m, msg, len, idp, &rk, &why) != DPM_OK) {
            return die(why);
        }
        if (dpm_mech_report_fedauc(&m, &r, TEST_RECEIPT(&m, period), &s[d], &rk, labels + o, idp,
                                   &memo, &reps[d]) != DPM_OK ||
            dpm_report_encode(&reps[d], msg, msg_cap, &len) != DPM_OK) {
            return die("round 2");
        }
        put_hex("report", msg, len);
        dpm_fedauc_report_t b = reps[d].body.fedauc;
        if (dpm_fa_agg_add(&agg, &fp, &b) != DPM_OK) {
            return die("aggregate");
        }
        if (d < K - silent && dpm_fa_agg_add(&heard, &fp, &b) != DPM_OK) {
            return die("aggregate");
        }
        b.local_p += d == 0;
        if (dpm_fa_agg_add(&bumped, &fp, &b) != DPM_OK) {
            return die("aggregate");
        }
    }
    dpm_fa_ranking_t mom;
    dpm_fa_estimate_t e, eb;
    if (dpm_fa_rank2(pool, M, rank2, &mom) != DPM_OK ||
        dpm_fa_estimate(&fp, &agg, &mom, 0.95, &e) != DPM_OK ||
        dpm_fa_estimate(&fp, &bumped, &mom, 0.95, &eb) != DPM_OK) {
        return die("estimate");
    }
    /* the honest sums (rank units): what a report replaced by another moves */
    printf("{\"devices\": %u, \"m\": %llu, \"truth\": %.17g, \"sum_r\": %.17g, \"p\": %.17g, ", K,
           (unsigned long long)M, dpm_fa_auc_exact(pool, qlab, M),
           (double)(((long double)agg.sum2_int + agg.sum2_frac) / 2.0L), (double)agg.p);
    put_estimate("estimate", &e);
    printf(", ");
    put_estimate("perturbed", &eb);
    if (silent > 0) { /* the heard devices' examples: their AUC among themselves, and the AUC
                       * their sums give when the silent devices' examples are ignored */
        uint64_t Mh = 0;
        for (uint32_t d = 0; d < K - silent; d++) {
            Mh += nd[d];
        }
        double P = (double)heard.p, S = (double)((long double)heard.sum2_int + heard.sum2_frac) / 2;
        printf(", \"truth_heard\": %.17g, \"naive_heard\": %.17g", dpm_fa_auc_exact(pool, qlab, Mh),
               dpm_fa_auc_from_sums(S, P, (double)Mh));
    }
    printf("}\n");
    /* Freed so that LeakSanitizer (make sanitize) has nothing to report: a leak report ends
     * the process before stdio flushes, and the last lines of output would be lost. */
    free(scores);
    free(q);
    free(perm);
    free(pool);
    free(rank2);
    free(nd);
    free(work);
    free(ids);
    free(labels);
    free(qlab);
    free(s);
    free(reps);
    free(msg);
    free(line);
    return fflush(stdout) == 0 ? 0 : 1;
}
