/* SPDX-License-Identifier: Apache-2.0 */
/* FedAUC on the device (dpm/expert/fedauc.h): campaign validation and fingerprints, quantization, the
 * shuffle (a permutation that maps ranks back; uniform over all 4! orders), the upload and reply
 * on the wire, a hand-computed rank reply with ties (ranks, S, D, localP, localSum2, T), every
 * malformed or malicious reply refused with its reason and the session untouched, the noise of
 * each Laplace variant equal to the documented discrete Laplace draws, the exact adaptive split,
 * fedauc_rr's memoized flips, the report body on the wire (worst case = DPM_REPORT_FEDAUC_MAX)
 * and the collector's check of it, and the device's one-call functions: a charged report in the
 * outbox, and nothing spent, stored or drawn on any bad input. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/dpm.h"
#include "dpm/expert/budget.h"
#include "dpm/expert/fedauc.h"
#include "dpm/expert/mech.h"
#include "dpm/expert/memo.h"
#include "dpm/expert/noise.h"
#include "dpm/expert/outbox.h"
#include "dpm/expert/report.h"
#include "estimate/fedauc.h"
#include "fake_storage.h"
#include "stat_gof.h"
#include "test_receipt.h"
#include "test_figure.h"
#include "test_rng.h"

#define Q4(q) ((dpm_score_t)(q) << 27) /* a Q1.31 score whose 4-bit quantization is q */

static dpm_campaign_t fa_campaign(uint32_t id, dpm_mech_id_t mech, dpm_fedauc_variant_t v,
                                  uint32_t share_q16, uint32_t bits)
{
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = id;
    c.mechanism = mech;
    c.eps = DPM_EPS(1);
    c.budget = DPM_EPS(2);
    c.period_seconds = 86400;
    c.fedauc_variant = (uint32_t)v;
    c.fedauc_p_share_q16 = share_q16;
    c.fedauc_score_bits = bits;
    return c;
}

static dpm_mech_t fa_mech(dpm_mech_id_t mech, dpm_fedauc_variant_t v, uint32_t share_q16)
{
    dpm_campaign_t c = fa_campaign(21, mech, v, share_q16, 4);
    dpm_mech_t m;
    const char *why = "";
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_OK);
    return m;
}

/* ---- campaigns -------------------------------------------------------------------------------- */

static void test_campaigns_and_fingerprints(void **state)
{
    (void)state;
    dpm_mech_t m;
    const char *why = NULL;
    dpm_campaign_t c = fa_campaign(1, DPM_MECH_ID_FEDAUC_RR, DPM_FEDAUC_VARIANT_NONE, 0, 16);
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_OK);
    assert_int_equal(m.params.fedauc.rr.k, 2);
    assert_true(m.eps_implemented <= DPM_EPS_ONE && m.eps_implemented > DPM_EPS_ONE - 4);
    assert_int_equal(m.eps_implemented, m.params.fedauc.rr.eps_implemented);
    uint32_t seen[16];
    int nseen = 0;
    seen[nseen++] = m.params_hash;
    const dpm_fedauc_variant_t vs[4] = {DPM_FEDAUC_LOCAL, DPM_FEDAUC_GLOBAL,
                                        DPM_FEDAUC_ORTHOGONAL, DPM_FEDAUC_ADAPTIVE};
    for (int i = 0; i < 4; i++) {
        uint32_t share = vs[i] == DPM_FEDAUC_ADAPTIVE ? 0 : 32768;
        c = fa_campaign(1, DPM_MECH_ID_FEDAUC_LAP, vs[i], share, 16);
        assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_OK);
        assert_int_equal(m.eps_implemented, DPM_EPS_ONE); /* the split adds up exactly */
        assert_int_equal(m.params.fedauc.eps_p, share ? DPM_EPS_ONE / 2 : 0);
        seen[nseen++] = m.params_hash;
    }
    /* the share, score_bits and ε enter the fingerprint */
    c = fa_campaign(1, DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_LOCAL, 40000, 16);
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_OK);
    assert_int_equal(m.params.fedauc.eps_p, (uint32_t)((40000ull * DPM_EPS_ONE) >> 16));
    seen[nseen++] = m.params_hash;
    c = fa_campaign(1, DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_LOCAL, 32768, 12);
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_OK);
    seen[nseen++] = m.params_hash;
    c.eps = DPM_EPS(2);
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_OK);
    seen[nseen++] = m.params_hash;
    for (int i = 0; i < nseen; i++) {
        for (int j = 0; j < i; j++) {
            assert_int_not_equal(seen[i], seen[j]);
        }
    }
    /* the campaign crosses the wire with its FedAUC fields */
    uint8_t buf[DPM_CAMPAIGN_MAX_BYTES];
    size_t len = 0;
    dpm_campaign_t back;
    c = fa_campaign(77, DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_ORTHOGONAL, 50000, 20);
    assert_int_equal(dpm_campaign_encode(&c, buf, sizeof(buf), &len), DPM_OK);
    assert_int_equal(dpm_campaign_decode(buf, len, &back, NULL), DPM_OK);
    assert_memory_equal(&back, &c, sizeof(c));

    /* rejects, each with its reason, *m untouched */
    struct {
        dpm_campaign_t c;
        dpm_status_t st;
        const char *why;
    } bad[20];
    int nb = 0;
    bad[nb].c = fa_campaign(1, DPM_MECH_ID_FEDAUC_RR, DPM_FEDAUC_VARIANT_NONE, 0, 0);
    bad[nb].st = DPM_ERR_PARAM, bad[nb++].why = "fedauc needs score_bits in [1, 31]";
    bad[nb].c = fa_campaign(1, DPM_MECH_ID_FEDAUC_RR, DPM_FEDAUC_VARIANT_NONE, 0, 32);
    bad[nb].st = DPM_ERR_PARAM, bad[nb++].why = "fedauc needs score_bits in [1, 31]";
    bad[nb].c = fa_campaign(1, DPM_MECH_ID_FEDAUC_RR, DPM_FEDAUC_LOCAL, 0, 16);
    bad[nb].st = DPM_ERR_PARAM, bad[nb++].why = "fedauc_rr takes no variant and no share";
    bad[nb].c = fa_campaign(1, DPM_MECH_ID_FEDAUC_RR, DPM_FEDAUC_VARIANT_NONE, 100, 16);
    bad[nb].st = DPM_ERR_PARAM, bad[nb++].why = "fedauc_rr takes no variant and no share";
    bad[nb].c = fa_campaign(1, DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_VARIANT_NONE, 0, 16);
    bad[nb].st = DPM_ERR_PARAM;
    bad[nb++].why = "fedauc_lap needs a variant (local, global, orthogonal, adaptive)";
    bad[nb].c = fa_campaign(1, DPM_MECH_ID_FEDAUC_LAP, (dpm_fedauc_variant_t)5, 100, 16);
    bad[nb].st = DPM_ERR_PARAM;
    bad[nb++].why = "fedauc_lap needs a variant (local, global, orthogonal, adaptive)";
    bad[nb].c = fa_campaign(1, DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_ADAPTIVE, 100, 16);
    bad[nb].st = DPM_ERR_PARAM, bad[nb++].why = "adaptive splits epsilon per device: no share";
    bad[nb].c = fa_campaign(1, DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_LOCAL, 0, 16);
    bad[nb].st = DPM_ERR_PARAM;
    bad[nb++].why = "the share of epsilon on localP must be in (0, 1)";
    bad[nb].c = fa_campaign(1, DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_GLOBAL, 65536, 16);
    bad[nb].st = DPM_ERR_PARAM;
    bad[nb++].why = "the share of epsilon on localP must be in (0, 1)";
    bad[nb].c = fa_campaign(1, DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_LOCAL, 100, 16);
    bad[nb].c.eps = DPM_EPS_Q16(600); /* eps_p = floor(100 * 600 / 2^16) = 0 */
    bad[nb].st = DPM_ERR_PARAM, bad[nb++].why = "epsilon too small to split";
    bad[nb].c = fa_campaign(1, DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_ADAPTIVE, 0, 16);
    bad[nb].c.eps = DPM_EPS_Q16(1);
    bad[nb].st = DPM_ERR_PARAM, bad[nb++].why = "epsilon too small to split";
    bad[nb].c = fa_campaign(1, DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_LOCAL, 32768, 16);
    bad[nb].c.groups = 4;
    bad[nb].st = DPM_ERR_PARAM;
    bad[nb++].why = "groups, metrics and bin edges are not used by fedauc";
    bad[nb].c = fa_campaign(1, DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_LOCAL, 32768, 16);
    bad[nb].c.nbins = 1, bad[nb].c.bin_edges[0] = 1u << 30;
    bad[nb].st = DPM_ERR_PARAM;
    bad[nb++].why = "groups, metrics and bin edges are not used by fedauc";
    bad[nb].c = fa_campaign(1, DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_LOCAL, 32768, 16);
    bad[nb].c.budget = DPM_EPS_Q16(DPM_EPS_ONE - 1);
    bad[nb].st = DPM_ERR_BUDGET, bad[nb++].why = "budget smaller than one report";
    bad[nb].c = fa_campaign(1, DPM_MECH_ID_FEDAUC_RR, DPM_FEDAUC_VARIANT_NONE, 0, 16);
    bad[nb].c.eps = bad[nb].c.budget = DPM_EPS(30); /* e^30 + 1 > 2^32: no 32-bit RR */
    bad[nb].st = DPM_ERR_RANGE, bad[nb++].why = "epsilon too small or too large for binary RR";
    dpm_mech_t keep;
    memset(&m, 0x77, sizeof(m));
    keep = m;
    for (int i = 0; i < nb; i++) {
        why = NULL;
        assert_int_equal(dpm_mech_init(&m, &bad[i].c, &why), bad[i].st);
        assert_string_equal(why, bad[i].why);
        assert_memory_equal(&m, &keep, sizeof(m));
    }
}

/* ---- round 1 ---------------------------------------------------------------------------------- */

static void test_quantize(void **state)
{
    (void)state;
    dpm_fedauc_t f;
    assert_int_equal(dpm_fedauc_init(&f, DPM_MECH_ID_FEDAUC_RR, DPM_FEDAUC_VARIANT_NONE, 16, 0,
                                     DPM_EPS_ONE, NULL),
                     DPM_OK);
    assert_int_equal(dpm_fedauc_quantize(&f, 0), 0);
    assert_int_equal(dpm_fedauc_quantize(&f, (1u << 15) - 1), 0);
    assert_int_equal(dpm_fedauc_quantize(&f, 1u << 15), 1);
    assert_int_equal(dpm_fedauc_quantize(&f, DPM_SCORE_ONE / 2), 32768);
    assert_int_equal(dpm_fedauc_quantize(&f, DPM_SCORE_ONE - 1), 65535);
    assert_int_equal(dpm_fedauc_quantize(&f, DPM_SCORE_ONE), 65536); /* 1.0: its own value */
    f.score_bits = 31;
    assert_int_equal(dpm_fedauc_quantize(&f, 12345), 12345);
    f.score_bits = 1;
    assert_int_equal(dpm_fedauc_quantize(&f, DPM_SCORE_ONE / 2 - 1), 0);
    assert_int_equal(dpm_fedauc_quantize(&f, DPM_SCORE_ONE / 2), 1);
}

typedef struct {
    uint32_t q[64], p[64];
    uint64_t w[64];
} bufs_t;

static dpm_fedauc_buffers_t bufs_of(bufs_t *b, uint32_t cap)
{
    dpm_fedauc_buffers_t x = {b->q, b->p, b->w, cap};
    return x;
}

static void test_prepare_shuffles_and_maps_back(void **state)
{
    (void)state;
    dpm_mech_t m = fa_mech(DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_LOCAL, 32768);
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &rng, 3), DPM_OK);
    const dpm_score_t scores[6] = {Q4(3), Q4(7), Q4(7), Q4(12), Q4(0), DPM_SCORE_ONE};
    static bufs_t b1, b2;
    dpm_fedauc_buffers_t bb1 = bufs_of(&b1, 64), bb2 = bufs_of(&b2, 64);
    dpm_fedauc_session_t s1, s2;
    assert_int_equal(dpm_fedauc_prepare(&m, &r, scores, 6, &bb1, &s1), DPM_OK);
    assert_int_equal(s1.state, DPM_FEDAUC_UPLOADED);
    assert_int_equal(s1.n, 6);
    assert_int_equal(s1.campaign_id, m.campaign.id);
    assert_int_equal(s1.params_hash, m.params_hash);
    int seen[6] = {0};
    for (uint32_t j = 0; j < 6; j++) {
        assert_true(b1.p[j] < 6);
        seen[b1.p[j]]++;
        assert_int_equal(b1.q[j], dpm_fedauc_quantize(&m.params.fedauc, scores[b1.p[j]]));
    }
    for (int i = 0; i < 6; i++) {
        assert_int_equal(seen[i], 1);
    }
    assert_int_equal(dpm_fedauc_prepare(&m, &r, scores, 6, &bb2, &s2), DPM_OK);
    assert_memory_not_equal(s1.token, s2.token, DPM_FEDAUC_TOKEN_BYTES);

    /* errors: *s untouched */
    dpm_fedauc_session_t keep = s1;
    const dpm_score_t above[2] = {Q4(1), DPM_SCORE_ONE + 1};
    dpm_fedauc_buffers_t small = bufs_of(&b2, 5), nobuf = bb2;
    nobuf.work = NULL;
    dpm_mech_t tuple;
    memset(&tuple, 0, sizeof(tuple));
    tuple.campaign.mechanism = DPM_MECH_ID_TUPLE_MR;
    assert_int_equal(dpm_fedauc_prepare(&m, &r, scores, 0, &bb2, &s1), DPM_ERR_UNDEFINED);
    assert_int_equal(dpm_fedauc_prepare(&m, &r, scores, 6, &small, &s1), DPM_ERR_BUFFER);
    assert_int_equal(dpm_fedauc_prepare(&m, &r, scores, 6, &nobuf, &s1), DPM_ERR_BUFFER);
    assert_int_equal(dpm_fedauc_prepare(&m, &r, above, 2, &bb2, &s1), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_prepare(&tuple, &r, scores, 6, &bb2, &s1), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_prepare(&m, NULL, scores, 6, &bb2, &s1), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_prepare(&m, &r, NULL, 6, &bb2, &s1), DPM_ERR_PARAM);
    assert_memory_equal(&s1, &keep, sizeof(keep));
    /* a failing random source */
    failing_rng_t fr;
    dpm_rng_t frng;
    dpm_rand_t fbad;
    assert_int_equal(failing_rand_init(&fbad, &fr, &frng, 1, 0), DPM_OK);
    assert_int_equal(dpm_fedauc_prepare(&m, &fbad, scores, 6, &bb2, &s1), DPM_ERR_RNG);
    assert_memory_equal(&s1, &keep, sizeof(keep));
}

/* Bad arguments to every FedAUC call: refused with the documented status, outputs untouched. */
static void test_bad_arguments_refused_untouched(void **state)
{
    (void)state;
    const char *why = NULL;
    dpm_fedauc_t f;
    memset(&f, 0x6B, sizeof(f));
    const dpm_fedauc_t f_keep = f;
    const uint32_t RR = DPM_MECH_ID_FEDAUC_RR, LAP = DPM_MECH_ID_FEDAUC_LAP;
    assert_int_equal(dpm_fedauc_init(NULL, RR, DPM_FEDAUC_VARIANT_NONE, 4, 0, DPM_EPS_ONE, &why),
                     DPM_ERR_PARAM);
    assert_string_equal(why, "null argument");
    assert_int_equal(dpm_fedauc_init(&f, RR, DPM_FEDAUC_VARIANT_NONE, 4, 0, 0, &why),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_init(&f, RR, DPM_FEDAUC_VARIANT_NONE, 4, 0, DPM_EPS_MAX_Q16 + 1,
                                     &why),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_init(&f, RR, DPM_FEDAUC_VARIANT_NONE, 0, 0, DPM_EPS_ONE, &why),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_init(&f, RR, DPM_FEDAUC_VARIANT_NONE, 32, 0, DPM_EPS_ONE, &why),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_init(&f, RR, DPM_FEDAUC_LOCAL, 4, 0, DPM_EPS_ONE, &why),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_init(&f, RR, DPM_FEDAUC_VARIANT_NONE, 4, 1, DPM_EPS_ONE, &why),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_init(&f, LAP, DPM_FEDAUC_VARIANT_NONE, 4, 0, DPM_EPS_ONE, &why),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_init(&f, LAP, DPM_FEDAUC_ADAPTIVE, 4, 32768, DPM_EPS_ONE, &why),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_init(&f, LAP, DPM_FEDAUC_ADAPTIVE, 4, 0, 1, &why), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_init(&f, LAP, DPM_FEDAUC_LOCAL, 4, 0, DPM_EPS_ONE, &why),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_init(&f, LAP, DPM_FEDAUC_LOCAL, 4, 65536, DPM_EPS_ONE, &why),
                     DPM_ERR_PARAM);
    /* a share so small that eps_p rounds to 0 (share < 1 keeps eps_s >= 1 whenever eps_p >= 1) */
    assert_int_equal(dpm_fedauc_init(&f, LAP, DPM_FEDAUC_LOCAL, 4, 1, 2, &why), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_init(&f, DPM_MECH_ID_TUPLE_MR, DPM_FEDAUC_VARIANT_NONE, 4, 0,
                                     DPM_EPS_ONE, &why),
                     DPM_ERR_PARAM);
    assert_memory_equal(&f, &f_keep, sizeof(f));
    /* positive control */
    assert_int_equal(dpm_fedauc_init(&f, LAP, DPM_FEDAUC_LOCAL, 4, 32768, DPM_EPS_ONE, &why),
                     DPM_OK);

    dpm_mech_t m = fa_mech(DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_LOCAL, 32768);
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r, no_rng;
    assert_int_equal(test_rand_init(&r, &t, &rng, 5), DPM_OK);
    no_rng = r;
    no_rng.rng = NULL;
    const dpm_score_t scores[3] = {Q4(1), Q4(9), Q4(4)};
    static bufs_t b;
    dpm_fedauc_buffers_t bb = bufs_of(&b, 64), noscores = bb, noperm = bb;
    noscores.scores = NULL;
    noperm.perm = NULL;
    dpm_fedauc_session_t s;
    memset(&s, 0x2D, sizeof(s));
    const dpm_fedauc_session_t s_keep = s;
    assert_int_equal(dpm_fedauc_prepare(NULL, &r, scores, 3, &bb, &s), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_prepare(&m, &no_rng, scores, 3, &bb, &s), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_prepare(&m, &r, scores, 3, NULL, &s), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_prepare(&m, &r, scores, 3, &bb, NULL), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_prepare(&m, &r, scores, 3, &noscores, &s), DPM_ERR_BUFFER);
    assert_int_equal(dpm_fedauc_prepare(&m, &r, scores, 3, &noperm, &s), DPM_ERR_BUFFER);
    assert_memory_equal(&s, &s_keep, sizeof(s));
    assert_int_equal(dpm_fedauc_prepare(&m, &r, scores, 3, &bb, &s), DPM_OK);

    uint8_t buf[256];
    size_t len = 0;
    assert_int_equal(dpm_fedauc_upload_encode(NULL, buf, sizeof(buf), &len), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_upload_encode(&s, NULL, sizeof(buf), &len), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_upload_encode(&s, buf, sizeof(buf), NULL), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_upload_encode(&s, buf, 0, &len), DPM_ERR_BUFFER);

    dpm_fedauc_ranks_t rk;
    memset(&rk, 0x11, sizeof(rk));
    const dpm_fedauc_ranks_t rk_keep = rk;
    assert_int_equal(dpm_fedauc_accept(NULL, &m, buf, 8, NULL, &rk, &why), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_accept(&s, NULL, buf, 8, NULL, &rk, &why), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_accept(&s, &m, NULL, 8, NULL, &rk, &why), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_accept(&s, &m, buf, 8, NULL, NULL, &why), DPM_ERR_PARAM);
    assert_memory_equal(&rk, &rk_keep, sizeof(rk));

    const uint8_t labels[3] = {1, 0, 1};
    dpm_fedauc_stats_t st;
    memset(&st, 0x33, sizeof(st));
    const dpm_fedauc_stats_t st_keep = st;
    assert_int_equal(dpm_fedauc_stats(NULL, &rk, labels, &st), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_stats(&s, &rk, NULL, &st), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_stats(&s, &rk, labels, NULL), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_stats(&s, NULL, labels, &st), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_stats(&s, &rk, labels, &st), DPM_ERR_PARAM); /* ranks of nobody */
    assert_memory_equal(&st, &st_keep, sizeof(st));

    dpm_memo_t memo;
    memset(&memo, 0, sizeof(memo)); /* not opened */
    int flip = 7;
    dpm_mech_t rr = fa_mech(DPM_MECH_ID_FEDAUC_RR, DPM_FEDAUC_VARIANT_NONE, 0);
    assert_int_equal(dpm_fedauc_rr_flip(NULL, &memo, 1, &flip), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_rr_flip(&rr, NULL, 1, &flip), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_rr_flip(&rr, &memo, 1, NULL), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_rr_flip(&rr, &memo, 1, &flip), DPM_ERR_PARAM);
    assert_int_equal(flip, 7);
}

/* n beyond DPM_FEDAUC_MAX_EXAMPLES is refused even with buffers that large. */
static void test_prepare_refuses_too_many_examples(void **state)
{
    (void)state;
    dpm_mech_t m = fa_mech(DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_LOCAL, 32768);
    uint32_t n = DPM_FEDAUC_MAX_EXAMPLES + 1u;
    dpm_score_t *scores = calloc(n, sizeof(dpm_score_t));
    uint32_t *q = calloc(n, 4), *p = calloc(n, 4);
    uint64_t *w = calloc(n, 8);
    assert_true(scores && q && p && w);
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &rng, 3), DPM_OK);
    dpm_fedauc_buffers_t b = {q, p, w, n};
    dpm_fedauc_session_t s;
    assert_int_equal(dpm_fedauc_prepare(&m, &r, scores, n, &b, &s), DPM_ERR_RANGE);
    assert_int_equal(dpm_fedauc_prepare(&m, &r, scores, n - 1u, &b, &s), DPM_OK);
    free(scores), free(q), free(p), free(w);
}

/* Each of the 4! orders of 4 examples is equally likely: chi-square over 240,000 shuffles at
 * alpha = 1e-6 (df 23), with a biased shuffle (i.e. "swap with any position": n^n paths) as the
 * negative control. */
static int perm_index(const uint32_t *p)
{
    int idx = 0, used = 0;
    for (int i = 0; i < 4; i++) {
        int rank = 0;
        for (uint32_t v = 0; v < p[i]; v++) {
            rank += !(used & (1 << v));
        }
        idx = idx * (4 - i) + rank;
        used |= 1 << p[i];
    }
    return idx;
}

static void test_shuffle_is_uniform(void **state)
{
    (void)state;
    dpm_mech_t m = fa_mech(DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_LOCAL, 32768);
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &rng, 11), DPM_OK);
    const dpm_score_t scores[4] = {Q4(1), Q4(2), Q4(3), Q4(4)};
    static bufs_t b;
    dpm_fedauc_buffers_t bb = bufs_of(&b, 64);
    const uint32_t runs = 240000;
    uint64_t good[24] = {0}, biased[24] = {0};
    double expect[24];
    for (uint32_t i = 0; i < runs; i++) {
        dpm_fedauc_session_t s;
        assert_int_equal(dpm_fedauc_prepare(&m, &r, scores, 4, &bb, &s), DPM_OK);
        good[perm_index(b.p)]++;
        uint32_t p[4] = {0, 1, 2, 3};
        for (uint32_t k = 0; k < 4; k++) { /* the classic mistake */
            uint64_t j = 0;
            assert_int_equal(dpm_uniform(&r, 4, &j), DPM_OK);
            uint32_t x = p[k];
            p[k] = p[j];
            p[j] = x;
        }
        biased[perm_index(p)]++;
    }
    for (int i = 0; i < 24; i++) {
        expect[i] = runs / 24.0;
    }
    double pg = stat_gof_test(good, expect, 24, STAT_PEARSON).p_value;
    double pb = stat_gof_test(biased, expect, 24, STAT_PEARSON).p_value;
    print_message("# shuffle of 4: chi-square p = %.3g (biased control p = %.3g)\n", pg, pb);
    assert_true(pg > 1e-6);
    assert_true(pb < 1e-6);
}

static void test_upload_on_the_wire(void **state)
{
    (void)state;
    dpm_mech_t m = fa_mech(DPM_MECH_ID_FEDAUC_RR, DPM_FEDAUC_VARIANT_NONE, 0);
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &rng, 4), DPM_OK);
    const dpm_score_t scores[5] = {Q4(3), Q4(7), Q4(7), Q4(12), DPM_SCORE_ONE};
    static bufs_t b;
    dpm_fedauc_buffers_t bb = bufs_of(&b, 64);
    dpm_fedauc_session_t s;
    assert_int_equal(dpm_fedauc_prepare(&m, &r, scores, 5, &bb, &s), DPM_OK);
    uint8_t buf[256];
    size_t len = 0;
    assert_int_equal(dpm_fedauc_upload_encode(&s, buf, sizeof(buf), &len), DPM_OK);
    assert_true(len <= DPM_FEDAUC_UPLOAD_MAX_BYTES(5, 4));
    dpm_fedauc_header_t h;
    uint32_t got[8];
    assert_int_equal(dpm_fedauc_upload_decode(buf, len, &h, got, 8), DPM_OK);
    assert_int_equal(h.campaign_id, m.campaign.id);
    assert_int_equal(h.mechanism, DPM_MECH_ID_FEDAUC_RR);
    assert_int_equal(h.params_hash, m.params_hash);
    assert_memory_equal(h.token, s.token, DPM_FEDAUC_TOKEN_BYTES);
    assert_int_equal(h.n, 5);
    assert_memory_equal(got, b.q, 5 * sizeof(uint32_t));
    /* too small a buffer; more scores than the decoder's room; truncated bytes */
    size_t len2 = 0;
    assert_int_equal(dpm_fedauc_upload_encode(&s, buf, len - 1, &len2), DPM_ERR_BUFFER);
    assert_int_equal(dpm_fedauc_upload_decode(buf, len, &h, got, 4), DPM_ERR_PROTOCOL);
    assert_int_equal(dpm_fedauc_upload_decode(buf, len - 1, &h, got, 8), DPM_ERR_PROTOCOL);
    /* the size bound is exact for the largest values: 31-bit scores of 2^31, 5 bytes each */
    dpm_campaign_t c = fa_campaign(UINT32_MAX, DPM_MECH_ID_FEDAUC_RR, DPM_FEDAUC_VARIANT_NONE, 0, 31);
    assert_int_equal(dpm_mech_init(&m, &c, NULL), DPM_OK);
    const dpm_score_t ones[5] = {DPM_SCORE_ONE, DPM_SCORE_ONE, DPM_SCORE_ONE, DPM_SCORE_ONE,
                                 DPM_SCORE_ONE};
    assert_int_equal(dpm_fedauc_prepare(&m, &r, ones, 5, &bb, &s), DPM_OK);
    s.params_hash = 0xFFFFFFFFu;
    assert_int_equal(dpm_fedauc_upload_encode(&s, buf, sizeof(buf), &len), DPM_OK);
    print_message("# upload of 5 scores: %zu bytes (bound %u)\n", len,
                  (unsigned)DPM_FEDAUC_UPLOAD_MAX_BYTES(5, 31));
    assert_true(len <= DPM_FEDAUC_UPLOAD_MAX_BYTES(5, 31));
    assert_true(len + 5 >= DPM_FEDAUC_UPLOAD_MAX_BYTES(5, 31)); /* the length varint: 1 of 5 */
}

/* ---- round 2: a hand-computed reply ------------------------------------------------------------- */

/* Device A holds (quantized, 4 bits) scores 3, 7, 7, 12 with labels 1, 0, 1, 1; the other
 * devices 1, 7, 9, 12, 15. Pool (M = 9) sorted: 1 3 7 7 7 9 12 12 15, doubled mid-ranks:
 * 1 -> 0, 3 -> 2, 7 -> 2 + 4 = 6, 9 -> 10, 12 -> 6 + 7 = 13, 15 -> 16. So A's R = 2, 6, 6, 13:
 * S = 27, min 2, max 13, n R - S = -19, -3, -3, 25 so D = 25; localP = 3, localSum2 = 2 + 6
 * + 13 = 21, T = -19 - 3 + 25 = 3 (= n localSum2 - S localP = 84 - 81). */
static const dpm_score_t A_SCORES[4] = {Q4(3), Q4(7), Q4(7), Q4(12)};
static const uint8_t A_LABELS[4] = {1, 0, 1, 1};
static const uint64_t A_IDS[4] = {1001, 1002, 1003, 1004};
static const uint32_t A_RANKS[4] = {2, 6, 6, 13}; /* the app's order */

typedef struct {
    dpm_mech_t m;
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
    bufs_t b;
    dpm_fedauc_session_t s;
    uint8_t reply[256];
    size_t reply_len;
} dev_a_t;

/* The reply for session s with ranks given in the app's order (mapped through the permutation),
 * or in upload order (raw). */
static size_t make_reply(const dpm_mech_t *m, const dpm_fedauc_session_t *s, uint32_t total,
                         const uint32_t *ranks_app, uint32_t n, int raw, uint8_t *buf, size_t cap)
{
    uint32_t up[64];
    for (uint32_t j = 0; j < n; j++) {
        up[j] = raw || j >= s->n ? ranks_app[j] : ranks_app[s->buf.perm[j]];
    }
    dpm_fedauc_header_t h;
    memset(&h, 0, sizeof(h));
    h.campaign_id = m->campaign.id;
    h.mechanism = (uint32_t)m->campaign.mechanism;
    h.params_hash = m->params_hash;
    memcpy(h.token, s->token, DPM_FEDAUC_TOKEN_BYTES);
    h.total = total;
    h.n = n;
    size_t len = 0;
    assert_int_equal(dpm_fedauc_reply_encode(&h, up, buf, cap, &len), DPM_OK);
    return len;
}

static void dev_a_init(dev_a_t *a, dpm_mech_id_t mech, dpm_fedauc_variant_t v, uint32_t share)
{
    memset(a, 0, sizeof(*a));
    a->m = fa_mech(mech, v, share);
    assert_int_equal(test_rand_init(&a->r, &a->t, &a->rng, 17), DPM_OK);
    dpm_fedauc_buffers_t bb = bufs_of(&a->b, 64);
    assert_int_equal(dpm_fedauc_prepare(&a->m, &a->r, A_SCORES, 4, &bb, &a->s), DPM_OK);
    a->reply_len = make_reply(&a->m, &a->s, 9, A_RANKS, 4, 0, a->reply, sizeof(a->reply));
}

static void test_hand_computed_reply(void **state)
{
    (void)state;
    static dev_a_t a;
    dev_a_init(&a, DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_ORTHOGONAL, 32768);
    dpm_fedauc_ranks_t rk;
    const char *why = NULL;
    assert_int_equal(dpm_fedauc_accept(&a.s, &a.m, a.reply, a.reply_len, NULL, &rk, &why), DPM_OK);
    assert_int_equal(rk.n, 4);
    assert_int_equal(rk.total, 9);
    assert_int_equal(rk.sum_rank2, 27);
    assert_int_equal(rk.min_rank2, 2);
    assert_int_equal(rk.max_rank2, 13);
    assert_int_equal(rk.maxdev, 25);
    dpm_fedauc_stats_t st;
    assert_int_equal(dpm_fedauc_stats(&a.s, &rk, A_LABELS, &st), DPM_OK);
    assert_int_equal(st.n, 4);
    assert_int_equal(st.p, 3);
    assert_int_equal(st.sum2, 21);
    assert_int_equal(st.t, 3);
    /* all one class: a device of positives only is not an error (and T = 0: sum of n R - S) */
    const uint8_t ones[4] = {1, 1, 1, 1}, zeros[4] = {0, 0, 0, 0};
    assert_int_equal(dpm_fedauc_stats(&a.s, &rk, ones, &st), DPM_OK);
    assert_true(st.p == 4 && st.sum2 == 27 && st.t == 0);
    assert_int_equal(dpm_fedauc_stats(&a.s, &rk, zeros, &st), DPM_OK);
    assert_true(st.p == 0 && st.sum2 == 0 && st.t == 0);
    const uint8_t bad_label[4] = {1, 0, 2, 1};
    assert_int_equal(dpm_fedauc_stats(&a.s, &rk, bad_label, &st), DPM_ERR_PARAM);
}

/* Every malformed or malicious reply is refused with its reason, and the session is unchanged
 * (a correct reply is still accepted after them). */
static void test_bad_replies_are_refused(void **state)
{
    (void)state;
    static dev_a_t a;
    dev_a_init(&a, DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_GLOBAL, 32768);
    const dpm_fedauc_session_t keep = a.s;
    struct {
        const char *what;
        uint32_t total;
        uint32_t ranks[6];
        uint32_t n;
        const char *why;
    } cases[] = {
        {"a score above the 7s ranked with them", 9, {2, 6, 6, 6}, 4,
         "equal ranks for different scores"},
        {"3 ranked above the 7s", 9, {6, 2, 2, 13}, 4, "ranks contradict the score order"},
        {"the tied 7s ranked apart", 9, {2, 6, 8, 13}, 4, "ranks contradict the score order"},
        {"no room for the tied 7s between 3 and 7", 9, {2, 4, 4, 13}, 4,
         "ranks too close for the scores between them"},
        {"a rank beyond 2 (M - 1)", 9, {2, 6, 6, 17}, 4, "rank out of range"},
        {"a rank that stays in range only for a larger M", 8, {2, 6, 6, 15}, 4,
         "rank out of range"},
        {"too few ranks", 9, {2, 6, 6}, 3, "wrong number of ranks"},
        {"M below n", 3, {0, 2, 2, 4}, 4, "total of ranked scores out of range"},
        {"M above 2^31", 0x80000001u, {2, 6, 6, 13}, 4, "total of ranked scores out of range"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint8_t buf[256];
        size_t len = make_reply(&a.m, &a.s, cases[i].total, cases[i].ranks, cases[i].n, 0, buf,
                                sizeof(buf));
        dpm_fedauc_ranks_t rk, rkeep;
        memset(&rk, 0x21, sizeof(rk));
        rkeep = rk;
        const char *why = NULL;
        dpm_status_t st = dpm_fedauc_accept(&a.s, &a.m, buf, len, NULL, &rk, &why);
        print_message("# %-45s -> %s\n", cases[i].what, why ? why : "(accepted)");
        assert_int_equal(st, DPM_ERR_PROTOCOL);
        assert_string_equal(why, cases[i].why);
        assert_memory_equal(&rk, &rkeep, sizeof(rk));
        assert_memory_equal(&a.s, &keep, sizeof(keep));
    }
    /* more ranks than uploaded scores, truncated bytes, another upload, another campaign */
    uint8_t buf[256];
    const uint32_t five[5] = {2, 6, 6, 13, 16};
    size_t len = make_reply(&a.m, &a.s, 9, five, 5, 0, buf, sizeof(buf));
    dpm_fedauc_ranks_t rk;
    const char *why = NULL;
    assert_int_equal(dpm_fedauc_accept(&a.s, &a.m, buf, len, NULL, &rk, &why), DPM_ERR_PROTOCOL);
    assert_string_equal(why, "malformed rank reply (or more ranks than uploaded scores)");
    assert_int_equal(dpm_fedauc_accept(&a.s, &a.m, a.reply, a.reply_len - 1, NULL, &rk, &why),
                     DPM_ERR_PROTOCOL);
    dpm_fedauc_session_t other = a.s;
    other.token[3] ^= 1;
    len = make_reply(&a.m, &other, 9, A_RANKS, 4, 0, buf, sizeof(buf));
    assert_int_equal(dpm_fedauc_accept(&a.s, &a.m, buf, len, NULL, &rk, &why), DPM_ERR_PROTOCOL);
    assert_string_equal(why, "rank reply for another upload");
    dpm_mech_t m2 = a.m;
    m2.campaign.id++;
    len = make_reply(&m2, &a.s, 9, A_RANKS, 4, 0, buf, sizeof(buf));
    assert_int_equal(dpm_fedauc_accept(&a.s, &a.m, buf, len, NULL, &rk, &why), DPM_ERR_PROTOCOL);
    assert_string_equal(why, "rank reply for another campaign");
    m2 = a.m;
    m2.params_hash ^= 1;
    len = make_reply(&m2, &a.s, 9, A_RANKS, 4, 0, buf, sizeof(buf));
    assert_int_equal(dpm_fedauc_accept(&a.s, &a.m, buf, len, NULL, &rk, &why), DPM_ERR_PROTOCOL);
    assert_string_equal(why, "rank reply for another campaign");
    /* a session of another campaign, an already reported session */
    dpm_mech_t m3 = fa_mech(DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_LOCAL, 32768);
    assert_int_equal(dpm_fedauc_accept(&a.s, &m3, a.reply, a.reply_len, NULL, &rk, &why),
                     DPM_ERR_PARAM);
    dpm_fedauc_session_t done = a.s;
    done.state = DPM_FEDAUC_REPORTED;
    assert_int_equal(dpm_fedauc_accept(&done, &a.m, a.reply, a.reply_len, NULL, &rk, &why),
                     DPM_ERR_PARAM);
    assert_memory_equal(&a.s, &keep, sizeof(keep));
    /* the correct reply still works */
    assert_int_equal(dpm_fedauc_accept(&a.s, &a.m, a.reply, a.reply_len, NULL, &rk, &why), DPM_OK);
    assert_int_equal(rk.sum_rank2, 27);
}

/* Tie groups at the ends of the pool: k tied own scores need R >= k - 1 and R <= 2 (M - 1) -
 * (k - 1). */
static void test_tie_groups_at_the_ends(void **state)
{
    (void)state;
    dpm_mech_t m = fa_mech(DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_LOCAL, 32768);
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &rng, 5), DPM_OK);
    static bufs_t b;
    dpm_fedauc_buffers_t bb = bufs_of(&b, 64);
    const dpm_score_t two[2] = {Q4(5), Q4(5)};
    dpm_fedauc_session_t s;
    assert_int_equal(dpm_fedauc_prepare(&m, &r, two, 2, &bb, &s), DPM_OK);
    struct {
        uint32_t total, r;
        dpm_status_t st;
        const char *why;
    } cases[] = {
        {2, 1, DPM_OK, NULL},  /* the whole pool: mid-rank of positions 0 and 1 */
        {5, 1, DPM_OK, NULL},  /* the lowest two of five */
        {5, 7, DPM_OK, NULL},  /* the highest two: 3 + 4 */
        {5, 0, DPM_ERR_PROTOCOL, "rank too low for its tied scores"},
        {5, 8, DPM_ERR_PROTOCOL, "rank too high for its tied scores"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint8_t buf[128];
        const uint32_t ranks[2] = {cases[i].r, cases[i].r};
        size_t len = make_reply(&m, &s, cases[i].total, ranks, 2, 1, buf, sizeof(buf));
        dpm_fedauc_ranks_t rk;
        const char *why = NULL;
        assert_int_equal(dpm_fedauc_accept(&s, &m, buf, len, NULL, &rk, &why), cases[i].st);
        if (cases[i].why != NULL) {
            assert_string_equal(why, cases[i].why);
        } else {
            assert_int_equal(rk.maxdev, 0);
        }
    }
    /* one example alone in the pool: rank 0 */
    assert_int_equal(dpm_fedauc_prepare(&m, &r, two, 1, &bb, &s), DPM_OK);
    uint8_t buf[128];
    const uint32_t zero[1] = {0};
    size_t len = make_reply(&m, &s, 1, zero, 1, 1, buf, sizeof(buf));
    dpm_fedauc_ranks_t rk;
    assert_int_equal(dpm_fedauc_accept(&s, &m, buf, len, NULL, &rk, NULL), DPM_OK);
    assert_true(rk.total == 1 && rk.max_rank2 == 0 && rk.maxdev == 0);
}

/* ORTHOGONAL/ADAPTIVE refuse ranks so spread that T's sensitivity D exceeds 2^40 (n = 1024
 * examples across M = 2^31 scores: D ~ 2^41), before any ε; LOCAL takes the same reply. */
static void test_too_spread_for_the_orthogonal_split(void **state)
{
    (void)state;
    const uint32_t n = 1024;
    dpm_score_t *scores = calloc(n, sizeof(dpm_score_t));
    uint32_t *ranks = calloc(n, 4), *q = calloc(n, 4), *p = calloc(n, 4);
    uint64_t *w = calloc(n, 8);
    uint8_t *buf = malloc(DPM_FEDAUC_REPLY_MAX_BYTES(n));
    assert_true(scores && ranks && q && p && w && buf);
    for (uint32_t i = 0; i < n; i++) {
        scores[i] = (dpm_score_t)i << 21; /* distinct 31-bit scores */
        ranks[i] = i * 4194300u;          /* up to 2^32 - 2: M = 2^31 */
    }
    const dpm_fedauc_variant_t vs[3] = {DPM_FEDAUC_ORTHOGONAL, DPM_FEDAUC_ADAPTIVE,
                                        DPM_FEDAUC_LOCAL};
    for (int v = 0; v < 3; v++) {
        dpm_campaign_t c = fa_campaign(9, DPM_MECH_ID_FEDAUC_LAP, vs[v],
                                       vs[v] == DPM_FEDAUC_ADAPTIVE ? 0 : 32768, 31);
        dpm_mech_t m;
        assert_int_equal(dpm_mech_init(&m, &c, NULL), DPM_OK);
        test_rng_t t;
        dpm_rng_t rng;
        dpm_rand_t r;
        assert_int_equal(test_rand_init(&r, &t, &rng, 5), DPM_OK);
        dpm_fedauc_buffers_t b = {q, p, w, n};
        dpm_fedauc_session_t s;
        assert_int_equal(dpm_fedauc_prepare(&m, &r, scores, n, &b, &s), DPM_OK);
        size_t len = 0;
        uint32_t up[1024];
        for (uint32_t j = 0; j < n; j++) {
            up[j] = ranks[p[j]];
        }
        dpm_fedauc_header_t h;
        memset(&h, 0, sizeof(h));
        h.campaign_id = m.campaign.id;
        h.mechanism = (uint32_t)m.campaign.mechanism;
        h.params_hash = m.params_hash;
        memcpy(h.token, s.token, DPM_FEDAUC_TOKEN_BYTES);
        h.total = 0x80000000u;
        h.n = n;
        assert_int_equal(
            dpm_fedauc_reply_encode(&h, up, buf, DPM_FEDAUC_REPLY_MAX_BYTES(n), &len), DPM_OK);
        dpm_fedauc_ranks_t rk;
        const char *why = NULL;
        dpm_status_t st = dpm_fedauc_accept(&s, &m, buf, len, NULL, &rk, &why);
        assert_int_equal(st, vs[v] == DPM_FEDAUC_LOCAL ? DPM_OK : DPM_ERR_RANGE);
        if (st == DPM_OK) {
            assert_true(rk.maxdev > DPM_FEDAUC_MAX_T_SENSITIVITY);
        }
    }
    free(scores), free(ranks), free(q), free(p), free(w), free(buf);
}

/* ---- round 2: the perturbations ------------------------------------------------------------------ */

/* A reference stream: the same seed as the device, the draws the header documents. */
static int64_t ref_dlap(dpm_rand_t *r, uint64_t sens, uint32_t eps_part, int64_t v)
{
    if (sens == 0) {
        return v;
    }
    uint64_t num = sens << 16, den = eps_part, a = num, b = den;
    while (b != 0) {
        uint64_t x = a % b;
        a = b;
        b = x;
    }
    int64_t out = 0;
    assert_int_equal(dpm_dlap_add(r, num / a, den / a, v, &out), DPM_OK);
    return out;
}

static void test_laplace_variants_draw_the_documented_noise(void **state)
{
    (void)state;
    const dpm_fedauc_variant_t vs[4] = {DPM_FEDAUC_LOCAL, DPM_FEDAUC_GLOBAL,
                                        DPM_FEDAUC_ORTHOGONAL, DPM_FEDAUC_ADAPTIVE};
    for (int v = 0; v < 4; v++) {
        static dev_a_t a;
        uint32_t share = vs[v] == DPM_FEDAUC_ADAPTIVE ? 0 : 20000;
        dev_a_init(&a, DPM_MECH_ID_FEDAUC_LAP, vs[v], share);
        dpm_fedauc_ranks_t rk;
        assert_int_equal(dpm_fedauc_accept(&a.s, &a.m, a.reply, a.reply_len, NULL, &rk, NULL),
                         DPM_OK);
        for (uint64_t seed = 100; seed < 110; seed++) {
            test_rng_t t1, t2;
            dpm_rng_t g1, g2;
            dpm_rand_t r1, r2;
            assert_int_equal(test_rand_init(&r1, &t1, &g1, seed), DPM_OK);
            assert_int_equal(test_rand_init(&r2, &t2, &g2, seed), DPM_OK);
            dpm_report_t rep;
            assert_int_equal(dpm_mech_report_fedauc(&a.m, &r1, TEST_RECEIPT(&a.m, 3), &a.s, &rk,
                                                    A_LABELS, NULL, NULL, &rep),
                             DPM_OK);
            const dpm_fedauc_report_t *b = &rep.body.fedauc;
            assert_memory_equal(b->upload_token, a.s.token, DPM_FEDAUC_TOKEN_BYTES);
            assert_true(b->n == 4 && b->total == 9 && b->sum_rank2 == 27);
            assert_int_equal(rep.eps, DPM_EPS_ONE);
            uint32_t eps_p;
            uint64_t sens;
            int64_t value;
            switch (vs[v]) {
            case DPM_FEDAUC_LOCAL:
                sens = 13, eps_p = (20000u * DPM_EPS_ONE) >> 16, value = 21;
                break;
            case DPM_FEDAUC_GLOBAL:
                sens = 16, eps_p = (20000u * DPM_EPS_ONE) >> 16, value = 21;
                break;
            case DPM_FEDAUC_ORTHOGONAL:
                sens = 25, eps_p = (20000u * DPM_EPS_ONE) >> 16, value = 3;
                break;
            default: /* S = 27, D = 25: β = 27^(2/3) / (27^(2/3) + 25^(2/3)) = 9 / 17.5499 */
                sens = 25, eps_p = 33608, value = 3; /* floor(0.512823 * 65536) */
                break;
            }
            assert_int_equal(b->sensitivity, sens);
            assert_int_equal(b->eps_p, eps_p);
            int64_t p = ref_dlap(&r2, 1, eps_p, 3);
            int64_t sum = ref_dlap(&r2, sens, DPM_EPS_ONE - eps_p, value);
            assert_int_equal(b->local_p, p);
            if (vs[v] == DPM_FEDAUC_LOCAL || vs[v] == DPM_FEDAUC_GLOBAL) {
                assert_int_equal(b->local_sum2, sum);
                assert_int_equal(b->t, 0);
            } else {
                assert_int_equal(b->t, sum);
                assert_int_equal(b->local_sum2, 0);
            }
            /* then the report id: two 64-bit draws */
            uint64_t id0 = 0;
            assert_int_equal(dpm_rand_bits(&r2, 64, &id0), DPM_OK);
            assert_int_equal((uint8_t)id0, rep.report_id[0]);
            assert_int_equal(dpm_rand_bits_used(&r1), dpm_rand_bits_used(&r2) + 64);
            const char *why = NULL;
            assert_int_equal(dpm_mech_check_report(&a.m, &rep, &why), DPM_OK);
        }
    }
}

/* All ranks equal (D = 0): T is 0 for every labelling, so ORTHOGONAL and ADAPTIVE put all of ε
 * on localP and send T without noise. */
static void test_equal_ranks_spend_everything_on_localp(void **state)
{
    (void)state;
    const dpm_fedauc_variant_t vs[2] = {DPM_FEDAUC_ORTHOGONAL, DPM_FEDAUC_ADAPTIVE};
    for (int v = 0; v < 2; v++) {
        dpm_mech_t m = fa_mech(DPM_MECH_ID_FEDAUC_LAP, vs[v], v == 0 ? 32768 : 0);
        test_rng_t t;
        dpm_rng_t rng;
        dpm_rand_t r;
        assert_int_equal(test_rand_init(&r, &t, &rng, 5), DPM_OK);
        static bufs_t b;
        dpm_fedauc_buffers_t bb = bufs_of(&b, 64);
        const dpm_score_t three[3] = {Q4(5), Q4(5), Q4(5)};
        dpm_fedauc_session_t s;
        assert_int_equal(dpm_fedauc_prepare(&m, &r, three, 3, &bb, &s), DPM_OK);
        const uint32_t ranks[3] = {8, 8, 8};
        uint8_t buf[128];
        size_t len = make_reply(&m, &s, 10, ranks, 3, 1, buf, sizeof(buf));
        dpm_fedauc_ranks_t rk;
        assert_int_equal(dpm_fedauc_accept(&s, &m, buf, len, NULL, &rk, NULL), DPM_OK);
        const uint8_t labels[3] = {1, 0, 1};
        dpm_report_t rep;
        assert_int_equal(dpm_mech_report_fedauc(&m, &r, TEST_RECEIPT(&m, 0), &s, &rk, labels,
                                                NULL, NULL, &rep),
                         DPM_OK);
        assert_int_equal(rep.body.fedauc.eps_p, DPM_EPS_ONE);
        assert_int_equal(rep.body.fedauc.sensitivity, 0);
        assert_int_equal(rep.body.fedauc.t, 0);
        assert_int_equal(dpm_mech_check_report(&m, &rep, NULL), DPM_OK);
    }
}

/* The adaptive split: exact integer answers, checked against the real-valued β. */
static void test_adaptive_split(void **state)
{
    (void)state;
    const dpm_eps_t e = DPM_EPS_ONE;
    assert_int_equal(dpm_fedauc_adaptive_eps_p(10, 0, e), e);        /* D = 0 */
    assert_int_equal(dpm_fedauc_adaptive_eps_p(5, 5, e), e / 2);     /* β = 1/2 */
    assert_int_equal(dpm_fedauc_adaptive_eps_p(8, 1, e), 52428);     /* β = 4/5: 52428.8 */
    assert_int_equal(dpm_fedauc_adaptive_eps_p(1, 8, e), 13107);     /* β = 1/5: 13107.2 */
    assert_int_equal(dpm_fedauc_adaptive_eps_p(27, 25, e), 33608);   /* 9 / 17.5499 = 0.512823 */
    assert_int_equal(dpm_fedauc_adaptive_eps_p(0, 5, e), 1);         /* clamped to [1, e - 1] */
    assert_int_equal(dpm_fedauc_adaptive_eps_p(UINT64_C(1) << 60, 1, e), e - 1);
    assert_int_equal(dpm_fedauc_adaptive_eps_p(5, 5, 2), 1);
    /* random S, D, ε: floor(β ε) (clamped), except within 1e-9 of an integer where a double
     * cannot tell; the exact comparison decides there */
    test_rng_t t;
    test_rng_seed(&t, 21);
    int checked = 0;
    for (int i = 0; i < 20000; i++) {
        uint64_t s = test_rng_next(&t) >> (test_rng_next(&t) % 40 + 10);
        uint64_t d = (test_rng_next(&t) >> 24) >> (test_rng_next(&t) % 40);
        dpm_eps_t eps = (dpm_eps_t)(test_rng_next(&t) % (DPM_EPS_MAX_Q16 - 2) + 2);
        if (d == 0) {
            continue;
        }
        long double ls = (long double)s, ld = (long double)d;
        long double beta = cbrtl(ls * ls) / (cbrtl(ls * ls) + cbrtl(ld * ld));
        long double x = beta * eps;
        if (fabsl(x - roundl(x)) < 1e-9L * (x + 1)) {
            continue;
        }
        long double want = floorl(x);
        if (want < 1) {
            want = 1;
        }
        if (want > eps - 1) {
            want = eps - 1;
        }
        assert_int_equal(dpm_fedauc_adaptive_eps_p(s, d, eps), (uint32_t)want);
        checked++;
    }
    print_message("# adaptive split: %d random (S, D, eps) equal floor(beta eps)\n", checked);
    assert_true(checked > 19000);
}

/* ---- fedauc_rr: memoized flips -------------------------------------------------------------- */

static void open_memo(dpm_memo_t *memo, uint64_t seed)
{
    static uint8_t mem[64];
    static fake_storage_t fs;
    static dpm_storage_t st;
    fake_storage_init(&fs, mem, sizeof(mem), 1);
    st = fake_storage_port(&fs);
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &rng, seed), DPM_OK);
    assert_int_equal(dpm_memo_open(memo, &st, 0, 64, &r), DPM_OK);
}

static void test_rr_flips_are_memoized(void **state)
{
    (void)state;
    dpm_campaign_t c = fa_campaign(31, DPM_MECH_ID_FEDAUC_RR, DPM_FEDAUC_VARIANT_NONE, 0, 16);
    dpm_mech_t m, m2;
    assert_int_equal(dpm_mech_init(&m, &c, NULL), DPM_OK);
    c.id = 32;
    assert_int_equal(dpm_mech_init(&m2, &c, NULL), DPM_OK);
    dpm_memo_t memo, memo2;
    open_memo(&memo, 1);
    open_memo(&memo2, 2);
    /* the flip rate is 1 - keep / 2^32 over many ids; the same id flips the same way every
     * time; another campaign or another secret flips independently */
    const uint32_t n = 200000;
    uint32_t flips = 0, same_campaign2 = 0, same_memo2 = 0;
    for (uint64_t id = 0; id < n; id++) {
        int f1 = -1, f1b = -1, f2 = -1, f3 = -1;
        assert_int_equal(dpm_fedauc_rr_flip(&m, &memo, id * 7919u, &f1), DPM_OK);
        assert_int_equal(dpm_fedauc_rr_flip(&m, &memo, id * 7919u, &f1b), DPM_OK);
        assert_int_equal(dpm_fedauc_rr_flip(&m2, &memo, id * 7919u, &f2), DPM_OK);
        assert_int_equal(dpm_fedauc_rr_flip(&m, &memo2, id * 7919u, &f3), DPM_OK);
        assert_int_equal(f1, f1b);
        flips += (uint32_t)f1;
        same_campaign2 += (uint32_t)(f1 & f2);
        same_memo2 += (uint32_t)(f1 & f3);
    }
    double rho = (4294967296.0 - m.params.fedauc.rr.keep) / 4294967296.0;
    double sd = sqrt(n * rho * (1 - rho));
    print_message("# rr flips: %u of %u (rho = %.5f, expected %.0f +- %.0f); both campaigns %u, "
                  "both secrets %u (independent: %.0f)\n",
                  flips, n, rho, n * rho, sd, same_campaign2, same_memo2, n * rho * rho);
    assert_true(fabs(flips - n * rho) < 5.3 * sd); /* two-sided alpha 1e-7 */
    double sd2 = sqrt(n * rho * rho * (1 - rho * rho));
    assert_true(fabs(same_campaign2 - n * rho * rho) < 5.3 * sd2);
    assert_true(fabs(same_memo2 - n * rho * rho) < 5.3 * sd2);
    int f = 0;
    dpm_memo_t closed;
    memset(&closed, 0, sizeof(closed));
    assert_int_equal(dpm_fedauc_rr_flip(&m, &closed, 1, &f), DPM_ERR_PARAM);
    dpm_mech_t lap = fa_mech(DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_LOCAL, 32768);
    assert_int_equal(dpm_fedauc_rr_flip(&lap, &memo, 1, &f), DPM_ERR_PARAM);

    /* the report: the exact sums of the flipped labels; a second report of the same examples
     * (another upload, another shuffle) gives the same numbers: nothing new is released */
    static dev_a_t a;
    dev_a_init(&a, DPM_MECH_ID_FEDAUC_RR, DPM_FEDAUC_VARIANT_NONE, 0);
    dpm_fedauc_ranks_t rk;
    assert_int_equal(dpm_fedauc_accept(&a.s, &a.m, a.reply, a.reply_len, A_IDS, &rk, NULL), DPM_OK);
    int64_t want_p = 0, want_sum = 0;
    for (int i = 0; i < 4; i++) {
        int fl = 0;
        assert_int_equal(dpm_fedauc_rr_flip(&a.m, &memo, A_IDS[i], &fl), DPM_OK);
        int y = A_LABELS[i] ^ fl;
        want_p += y;
        want_sum += y * (int64_t)A_RANKS[i];
    }
    dpm_report_t rep1, rep2;
    assert_int_equal(dpm_mech_report_fedauc(&a.m, &a.r, TEST_RECEIPT(&a.m, 0), &a.s, &rk,
                                            A_LABELS, A_IDS, &memo, &rep1),
                     DPM_OK);
    assert_int_equal(rep1.body.fedauc.local_p, want_p);
    assert_int_equal(rep1.body.fedauc.local_sum2, want_sum);
    assert_int_equal(rep1.eps, a.m.eps_implemented);
    assert_int_equal(dpm_mech_check_report(&a.m, &rep1, NULL), DPM_OK);
    dpm_fedauc_buffers_t bb = bufs_of(&a.b, 64);
    assert_int_equal(dpm_fedauc_prepare(&a.m, &a.r, A_SCORES, 4, &bb, &a.s), DPM_OK);
    a.reply_len = make_reply(&a.m, &a.s, 9, A_RANKS, 4, 0, a.reply, sizeof(a.reply));
    assert_int_equal(dpm_fedauc_accept(&a.s, &a.m, a.reply, a.reply_len, A_IDS, &rk, NULL), DPM_OK);
    assert_int_equal(dpm_mech_report_fedauc(&a.m, &a.r, TEST_RECEIPT(&a.m, 1), &a.s, &rk,
                                            A_LABELS, A_IDS, &memo, &rep2),
                     DPM_OK);
    assert_int_equal(rep2.body.fedauc.local_p, rep1.body.fedauc.local_p);
    assert_int_equal(rep2.body.fedauc.local_sum2, rep1.body.fedauc.local_sum2);
    /* repeated ids are refused: two examples sharing a flip would reveal their labels' XOR */
    const uint64_t dup[4] = {1001, 1002, 1001, 1004};
    const char *why = NULL;
    assert_int_equal(dpm_fedauc_accept(&a.s, &a.m, a.reply, a.reply_len, dup, &rk, &why),
                     DPM_ERR_PARAM);
    assert_string_equal(why, "repeated example id");
    assert_int_equal(dpm_fedauc_accept(&a.s, &a.m, a.reply, a.reply_len, NULL, &rk, &why),
                     DPM_ERR_PARAM);
    assert_string_equal(why, "fedauc_rr needs the example ids");
    /* no memo, no ids: no report */
    dpm_report_t none;
    assert_int_equal(dpm_fedauc_accept(&a.s, &a.m, a.reply, a.reply_len, A_IDS, &rk, NULL), DPM_OK);
    assert_int_equal(dpm_mech_report_fedauc(&a.m, &a.r, TEST_RECEIPT(&a.m, 2), &a.s, &rk,
                                            A_LABELS, A_IDS, NULL, &none),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_mech_report_fedauc(&a.m, &a.r, TEST_RECEIPT(&a.m, 2), &a.s, &rk,
                                            A_LABELS, NULL, &memo, &none),
                     DPM_ERR_PARAM);
}

/* ---- the report on the wire and the collector's check ------------------------------------------ */

static void test_report_wire_and_check(void **state)
{
    (void)state;
    dpm_report_t r, back;
    memset(&r, 0, sizeof(r));
    memset(r.report_id, 0xAB, DPM_REPORT_ID_BYTES);
    r.campaign_id = UINT32_MAX;
    r.period = UINT32_MAX;
    r.mechanism = DPM_MECH_ID_FEDAUC_LAP;
    r.eps = UINT32_MAX;
    r.params_hash = UINT32_MAX;
    dpm_fedauc_report_t *b = &r.body.fedauc;
    memset(b->upload_token, 0xCD, DPM_FEDAUC_TOKEN_BYTES);
    b->n = b->total = UINT32_MAX;
    b->local_p = b->local_sum2 = b->t = INT64_MIN; /* zigzag: 10 bytes */
    b->sum_rank2 = b->sensitivity = UINT64_MAX;
    b->eps_p = UINT32_MAX;
    uint8_t buf[DPM_REPORT_MAX_BYTES + 8];
    size_t len = 0;
    assert_int_equal(dpm_report_encode(&r, buf, sizeof(buf), &len), DPM_OK);
    print_message("# the largest FedAUC report: %zu bytes\n", len);
    assert_int_equal(len, DPM_REPORT_FEDAUC_MAX);
    assert_int_equal(dpm_report_decode(buf, len, &back), DPM_OK);
    assert_memory_equal(&back.body.fedauc, b, sizeof(*b));
    /* a FedaucBody under a mechanism that is not FedAUC is refused, *out untouched */
    size_t at = 2 + 16 + 6 + 6; /* report_id, campaign_id, period: then the mechanism */
    assert_int_equal(buf[at], (4u << 3) | 0);
    assert_int_equal(buf[at + 1], DPM_MECH_ID_FEDAUC_LAP);
    buf[at + 1] = DPM_MECH_ID_TUPLE_MR;
    dpm_report_t keep;
    memset(&back, 0x11, sizeof(back));
    keep = back;
    assert_int_equal(dpm_report_decode(buf, len, &back), DPM_ERR_PROTOCOL);
    assert_memory_equal(&back, &keep, sizeof(back));

    /* an honest adaptive body passes; each tampered field is caught */
    static dev_a_t a;
    dev_a_init(&a, DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_ADAPTIVE, 0);
    dpm_fedauc_ranks_t rk;
    assert_int_equal(dpm_fedauc_accept(&a.s, &a.m, a.reply, a.reply_len, NULL, &rk, NULL), DPM_OK);
    dpm_report_t good;
    assert_int_equal(dpm_mech_report_fedauc(&a.m, &a.r, TEST_RECEIPT(&a.m, 0), &a.s, &rk,
                                            A_LABELS, NULL, NULL, &good),
                     DPM_OK);
    assert_int_equal(dpm_report_encode(&good, buf, sizeof(buf), &len), DPM_OK);
    assert_int_equal(dpm_report_decode(buf, len, &back), DPM_OK);
    assert_memory_equal(&back, &good, sizeof(good));
    const char *why = NULL;
    assert_int_equal(dpm_mech_check_report(&a.m, &back, &why), DPM_OK);
    struct {
        const char *why;
        int field;
    } tamper[] = {
        {"split of epsilon does not match the variant", 0},
        {"sensitivity does not match the ranks", 1},
        {"value out of range", 2},
        {"total out of range", 3},
        {"examples out of range", 4},
        {"rank sum out of range", 5},
    };
    for (size_t i = 0; i < sizeof(tamper) / sizeof(tamper[0]); i++) {
        dpm_report_t x = good;
        dpm_fedauc_report_t *xb = &x.body.fedauc;
        switch (tamper[i].field) {
        case 0: xb->eps_p += 1; break;
        case 1: xb->sensitivity = (uint64_t)1 << 41; break;
        case 2: xb->local_sum2 = 5; break;
        case 3: xb->total = xb->n - 1; break;
        case 4: xb->n = 0; break;
        default: xb->sum_rank2 = 4u * 16u + 1u; break;
        }
        why = NULL;
        assert_int_equal(dpm_mech_check_report(&a.m, &x, &why), DPM_ERR_PROTOCOL);
        assert_string_equal(why, tamper[i].why);
    }
    /* GLOBAL: the sensitivity must be 2 (M - 1); RR: statistics within [0, n], [0, S] */
    dpm_mech_t g = fa_mech(DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_GLOBAL, 32768);
    dpm_report_t x = good;
    x.params_hash = g.params_hash;
    x.body.fedauc.eps_p = g.params.fedauc.eps_p;
    x.body.fedauc.t = 0;
    x.body.fedauc.sensitivity = 15;
    assert_int_equal(dpm_mech_check_report(&g, &x, &why), DPM_ERR_PROTOCOL);
    assert_string_equal(why, "sensitivity does not match the ranks");
    x.body.fedauc.sensitivity = 16;
    assert_int_equal(dpm_mech_check_report(&g, &x, &why), DPM_OK);
    dpm_mech_t rrm = fa_mech(DPM_MECH_ID_FEDAUC_RR, DPM_FEDAUC_VARIANT_NONE, 0);
    x = good;
    x.mechanism = DPM_MECH_ID_FEDAUC_RR;
    x.params_hash = rrm.params_hash;
    x.eps = rrm.eps_implemented;
    x.body.fedauc.eps_p = 0;
    x.body.fedauc.sensitivity = 0;
    x.body.fedauc.t = 0;
    x.body.fedauc.local_p = 2;
    x.body.fedauc.local_sum2 = 27;
    assert_int_equal(dpm_mech_check_report(&rrm, &x, &why), DPM_OK);
    x.body.fedauc.local_p = 5;
    assert_int_equal(dpm_mech_check_report(&rrm, &x, &why), DPM_ERR_PROTOCOL);
    x.body.fedauc.local_p = 2;
    x.body.fedauc.local_sum2 = 28;
    assert_int_equal(dpm_mech_check_report(&rrm, &x, &why), DPM_ERR_PROTOCOL);
}

/* ---- the device's one-call functions ------------------------------------------------------------ */

#define REGION 8192u
#define MEMO_OFF (REGION - 256u)

typedef struct {
    uint8_t mem[REGION];
    fake_storage_t fs;
    test_rng_t t;
    dpm_device_config_t cfg;
    dpm_device_t dev;
    dpm_memo_t memo;
} dev_fix_t;

static void dev_open(dev_fix_t *f)
{
    memset(f, 0, sizeof(*f));
    fake_storage_init(&f->fs, f->mem, REGION, 1);
    test_rng_seed(&f->t, 7);
    f->cfg.rng = test_rng_port(&f->t);
    f->cfg.storage = fake_storage_port(&f->fs);
    f->cfg.region_size = MEMO_OFF; /* the memo after the device's region */
    f->cfg.policy.defaults.max_eps = DPM_EPS(1);
    f->cfg.policy.defaults.max_budget = DPM_EPS(2);
    assert_int_equal(dpm_device_init(&f->dev, &f->cfg), DPM_OK);
    assert_int_equal(dpm_device_memo_open(&f->dev, 0, 64, &f->memo), DPM_ERR_PARAM); /* record */
    assert_int_equal(dpm_device_memo_open(&f->dev, MEMO_OFF - 16, 64, &f->memo), DPM_ERR_PARAM);
    assert_int_equal(dpm_device_memo_open(&f->dev, MEMO_OFF, 256, &f->memo), DPM_OK);
    assert_int_equal(f->memo.origin, DPM_MEMO_CREATED);
}

static dpm_eps_t spent(dev_fix_t *f, uint32_t id)
{
    dpm_eps_t s = 0xFFFFFFFFu;
    assert_int_equal(dpm_ledger_spent(dpm_device_ledger(&f->dev), id, 0, &s), DPM_OK);
    return s;
}

static void test_device_rounds(void **state)
{
    (void)state;
    const dpm_mech_id_t mechs[2] = {DPM_MECH_ID_FEDAUC_RR, DPM_MECH_ID_FEDAUC_LAP};
    for (int k = 0; k < 2; k++) {
        static dev_fix_t f;
        dev_open(&f);
        dpm_campaign_t c = fa_campaign(40 + (uint32_t)k, mechs[k],
                                       k ? DPM_FEDAUC_LOCAL : DPM_FEDAUC_VARIANT_NONE,
                                       k ? 32768 : 0, 4);
        dpm_mech_t m;
        assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &m, NULL), DPM_OK);
        static bufs_t b;
        dpm_fedauc_buffers_t bb = bufs_of(&b, 64);
        dpm_fedauc_session_t s;
        uint8_t up[128];
        size_t len = 0;
        uint64_t writes = f.fs.writes + f.fs.erases;
        assert_int_equal(dpm_device_fedauc_upload(&f.dev, &m, A_SCORES, 4, &bb, &s, up,
                                                  sizeof(up), &len),
                         DPM_OK);
        assert_int_equal(f.fs.writes + f.fs.erases, writes); /* round 1: nothing stored */
        assert_int_equal(spent(&f, c.id), 0);
        assert_int_equal(dpm_outbox_pending(dpm_device_outbox(&f.dev)), 0);
        uint8_t reply[256];
        size_t rlen = make_reply(&m, &s, 9, A_RANKS, 4, 0, reply, sizeof(reply));
        dpm_report_info_t info;
        assert_int_equal(dpm_device_report_fedauc(&f.dev, &m, 0, &s, reply, rlen, A_LABELS,
                                                  A_IDS, &f.memo, &info),
                         DPM_OK);
        assert_int_equal(s.state, DPM_FEDAUC_REPORTED);
        assert_int_equal(spent(&f, c.id), m.eps_implemented);
        assert_int_equal(info.eps_spent, m.eps_implemented);
        assert_int_equal(dpm_outbox_pending(dpm_device_outbox(&f.dev)), 1);
        print_message("# %s: upload %zu bytes, reply %zu, report %u\n",
                      k ? "fedauc_lap" : "fedauc_rr", len, rlen, (unsigned)info.bytes);
        assert_true(info.bytes <= DPM_REPORT_FEDAUC_MAX);
        /* the same upload cannot report twice; nothing more spent */
        assert_int_equal(dpm_device_report_fedauc(&f.dev, &m, 0, &s, reply, rlen, A_LABELS,
                                                  A_IDS, &f.memo, &info),
                         DPM_ERR_PARAM);
        assert_int_equal(spent(&f, c.id), m.eps_implemented);
        assert_int_equal(dpm_outbox_pending(dpm_device_outbox(&f.dev)), 1);
    }
}

/* Bad input at round 1 or 2: a clear error, and nothing spent, stored or drawn. */
static void test_device_bad_input_spends_nothing(void **state)
{
    (void)state;
    static dev_fix_t f;
    dev_open(&f);
    dpm_campaign_t c = fa_campaign(50, DPM_MECH_ID_FEDAUC_RR, DPM_FEDAUC_VARIANT_NONE, 0, 4);
    dpm_mech_t m;
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &m, NULL), DPM_OK);
    static bufs_t b;
    dpm_fedauc_buffers_t bb = bufs_of(&b, 64), small = bufs_of(&b, 3);
    dpm_fedauc_session_t s, keep;
    uint8_t up[128];
    size_t len = 0;
    /* round 1: no data, beyond the buffers, an output buffer too small */
    memset(&s, 0x42, sizeof(s));
    keep = s;
    assert_int_equal(dpm_device_fedauc_upload(&f.dev, &m, A_SCORES, 0, &bb, &s, up, sizeof(up),
                                              &len),
                     DPM_ERR_UNDEFINED);
    assert_int_equal(dpm_device_fedauc_upload(&f.dev, &m, A_SCORES, 4, &small, &s, up,
                                              sizeof(up), &len),
                     DPM_ERR_BUFFER);
    assert_int_equal(dpm_device_fedauc_upload(&f.dev, &m, A_SCORES, 4, &bb, &s, up, 20, &len),
                     DPM_ERR_BUFFER);
    assert_memory_equal(&s, &keep, sizeof(s));
    assert_int_equal(dpm_device_fedauc_upload(&f.dev, &m, A_SCORES, 4, &bb, &s, up, sizeof(up),
                                              &len),
                     DPM_OK);
    keep = s;
    uint8_t reply[256], bad[256];
    size_t rlen = make_reply(&m, &s, 9, A_RANKS, 4, 0, reply, sizeof(reply));
    const uint32_t dup_ranks[4] = {2, 6, 6, 6};
    size_t blen = make_reply(&m, &s, 9, dup_ranks, 4, 0, bad, sizeof(bad));
    dpm_fedauc_session_t other = s;
    other.token[0] ^= 1;
    uint8_t foreign[256];
    size_t flen = make_reply(&m, &other, 9, A_RANKS, 4, 0, foreign, sizeof(foreign));
    const uint8_t bad_labels[4] = {1, 0, 3, 1};
    const uint64_t dup_ids[4] = {7, 8, 7, 9};
    dpm_memo_t closed;
    memset(&closed, 0, sizeof(closed));
    struct {
        const char *what;
        const uint8_t *reply;
        size_t len;
        const uint8_t *labels;
        const uint64_t *ids;
        const dpm_memo_t *memo;
        dpm_status_t st;
    } cases[] = {
        {"ranks duplicated across different scores", bad, blen, A_LABELS, A_IDS, &f.memo,
         DPM_ERR_PROTOCOL},
        {"a reply for another upload", foreign, flen, A_LABELS, A_IDS, &f.memo, DPM_ERR_PROTOCOL},
        {"a truncated reply", reply, rlen - 2, A_LABELS, A_IDS, &f.memo, DPM_ERR_PROTOCOL},
        {"a label that is not 0 or 1", reply, rlen, bad_labels, A_IDS, &f.memo, DPM_ERR_PARAM},
        {"repeated example ids", reply, rlen, A_LABELS, dup_ids, &f.memo, DPM_ERR_PARAM},
        {"no ids", reply, rlen, A_LABELS, NULL, &f.memo, DPM_ERR_PARAM},
        {"no device secret", reply, rlen, A_LABELS, A_IDS, NULL, DPM_ERR_PARAM},
        {"an unopened device secret", reply, rlen, A_LABELS, A_IDS, &closed, DPM_ERR_PARAM},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t writes = f.fs.writes + f.fs.erases;
        uint64_t bits = dpm_rand_bits_used(&f.dev.rand);
        dpm_report_info_t info;
        memset(&info, 0x5A, sizeof(info));
        dpm_report_info_t ikeep = info;
        dpm_status_t st = dpm_device_report_fedauc(&f.dev, &m, 0, &s, cases[i].reply,
                                                   cases[i].len, cases[i].labels, cases[i].ids,
                                                   cases[i].memo, &info);
        print_message("# %-42s -> %s\n", cases[i].what, dpm_strerror(st));
        assert_int_equal(st, cases[i].st);
        assert_int_equal(f.fs.writes + f.fs.erases, writes);
        assert_int_equal(dpm_rand_bits_used(&f.dev.rand), bits);
        assert_int_equal(spent(&f, c.id), 0);
        assert_int_equal(dpm_outbox_pending(dpm_device_outbox(&f.dev)), 0);
        assert_memory_equal(&s, &keep, sizeof(s));
        assert_memory_equal(&info, &ikeep, sizeof(info));
    }
    /* a budget already spent: refused before the charge too */
    dpm_campaign_t c2 = c;
    c2.id = 51;
    c2.budget = c2.eps;
    dpm_mech_t m2;
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c2, &m2, NULL), DPM_OK);
    assert_int_equal(dpm_ledger_charge(dpm_device_ledger(&f.dev), 51, 0, m2.eps_implemented,
                                       m2.campaign.budget.q16),
                     DPM_OK);
    dpm_fedauc_session_t s2;
    assert_int_equal(dpm_device_fedauc_upload(&f.dev, &m2, A_SCORES, 4, &bb, &s2, up, sizeof(up),
                                              &len),
                     DPM_OK);
    rlen = make_reply(&m2, &s2, 9, A_RANKS, 4, 0, reply, sizeof(reply));
    assert_int_equal(dpm_device_report_fedauc(&f.dev, &m2, 0, &s2, reply, rlen, A_LABELS, A_IDS,
                                              &f.memo, NULL),
                     DPM_ERR_BUDGET);
    assert_int_equal(s2.state, DPM_FEDAUC_UPLOADED);
}

/* Bytes per device on the wire at the small Criteo set's size (M = 458,407 scores quantized to
 * 16 bits, ε = 1, share 1/2): the upload, the reply and the report of each mechanism, for
 * devices of 1 to 1,000 examples (README "FedAUC"). Each within its bound macro. */
static void test_wire_sizes(void **state)
{
    (void)state;
    const uint32_t m_total = 458407;
    uint32_t *pool = malloc(m_total * 4u), *rank2 = malloc(m_total * 4u);
    assert_true(pool && rank2);
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &rng, 77), DPM_OK);
    const uint32_t sizes[4] = {1, 10, 100, 1000};
    static dpm_score_t scores[1000];
    static uint32_t q[1000], perm[1000], up_ranks[1000];
    static uint64_t w[1000], ids[1000];
    static uint8_t labels[1000], buf[8192];
    for (uint32_t i = 0; i < m_total; i++) {
        pool[i] = (uint32_t)(test_rng_next(&t) % 65537u);
    }
    assert_int_equal(dpm_fa_rank2(pool, m_total, rank2, NULL), DPM_OK);
    print_message("# n examples | upload | reply | report: rr, local, global, orthogonal, "
                  "adaptive (bytes; M = 458,407, 16-bit scores, eps 1)\n");
    for (int si = 0; si < 4; si++) {
        uint32_t n = sizes[si];
        size_t ulen = 0, rlen = 0, rep_len[5] = {0};
        for (int k = 0; k < 5; k++) {
            dpm_campaign_t c = fa_campaign(60, k ? DPM_MECH_ID_FEDAUC_LAP : DPM_MECH_ID_FEDAUC_RR,
                                           (dpm_fedauc_variant_t)k,
                                           k == 0 || k == 4 ? 0 : 32768, 16);
            dpm_mech_t m;
            assert_int_equal(dpm_mech_init(&m, &c, NULL), DPM_OK);
            for (uint32_t i = 0; i < n; i++) { /* the device holds pool entries 0 .. n - 1 */
                scores[i] = (dpm_score_t)pool[i] << 15;
                labels[i] = (uint8_t)(test_rng_next(&t) & 1u);
                ids[i] = i;
            }
            dpm_fedauc_buffers_t b = {q, perm, w, 1000};
            dpm_fedauc_session_t s;
            assert_int_equal(dpm_fedauc_prepare(&m, &r, scores, n, &b, &s), DPM_OK);
            assert_int_equal(dpm_fedauc_upload_encode(&s, buf, sizeof(buf), &ulen), DPM_OK);
            assert_true(ulen <= DPM_FEDAUC_UPLOAD_MAX_BYTES(n, 16));
            for (uint32_t j = 0; j < n; j++) {
                up_ranks[j] = rank2[perm[j]];
            }
            dpm_fedauc_header_t h;
            memset(&h, 0, sizeof(h));
            h.campaign_id = m.campaign.id;
            h.mechanism = (uint32_t)m.campaign.mechanism;
            h.params_hash = m.params_hash;
            memcpy(h.token, s.token, DPM_FEDAUC_TOKEN_BYTES);
            h.total = m_total;
            h.n = n;
            assert_int_equal(dpm_fedauc_reply_encode(&h, up_ranks, buf, sizeof(buf), &rlen), DPM_OK);
            assert_true(rlen <= DPM_FEDAUC_REPLY_MAX_BYTES(n));
            dpm_fedauc_ranks_t rk;
            assert_int_equal(dpm_fedauc_accept(&s, &m, buf, rlen, ids, &rk, NULL), DPM_OK);
            dpm_memo_t memo;
            memset(&memo, 0, sizeof(memo));
            memo.opened = DPM_MEMO_OPENED;
            dpm_report_t rep;
            assert_int_equal(dpm_mech_report_fedauc(&m, &r, TEST_RECEIPT(&m, 0), &s, &rk, labels,
                                                    ids, &memo, &rep),
                             DPM_OK);
            assert_int_equal(dpm_report_encode(&rep, buf, sizeof(buf), &rep_len[k]), DPM_OK);
            assert_true(rep_len[k] <= DPM_REPORT_FEDAUC_MAX);
        }
        print_message("# %5u | %5zu | %5zu | %zu, %zu, %zu, %zu, %zu\n", n, ulen, rlen, rep_len[0],
                      rep_len[1], rep_len[2], rep_len[3], rep_len[4]);
        static const char *const kind[5] = {"rr", "local", "global", "orthogonal", "adaptive"};
        char name[48];
        snprintf(name, sizeof(name), "wire_n%u.upload", n);
        test_figure(name, (double)ulen, "bytes");
        snprintf(name, sizeof(name), "wire_n%u.reply", n);
        test_figure(name, (double)rlen, "bytes");
        for (int k = 0; k < 5; k++) {
            snprintf(name, sizeof(name), "wire_n%u.%s", n, kind[k]);
            test_figure(name, (double)rep_len[k], "bytes");
        }
    }
    free(pool);
    free(rank2);
}

/* The wire codecs' own refusals (dpm_fedauc_accept and the collector check the values):
 * NULL arguments, an array pointer missing for a non-empty array, a buffer one byte short,
 * truncated bytes, more entries than the caller's room; and the empty array both ways. */
static void test_wire_codec_refusals(void **state)
{
    (void)state;
    dpm_fedauc_header_t h;
    memset(&h, 0, sizeof(h));
    h.campaign_id = 7;
    h.mechanism = DPM_MECH_ID_FEDAUC_RR;
    h.params_hash = 0x1234567u;
    memset(h.token, 0xA5, sizeof(h.token));
    h.total = 90;
    h.n = 3;
    const uint32_t ranks2[3] = {5, 90, 179};
    uint8_t buf[DPM_FEDAUC_REPLY_MAX_BYTES(3)], small[sizeof(buf)];
    size_t len = 0, len2 = 0;
    assert_int_equal(dpm_fedauc_reply_encode(NULL, ranks2, buf, sizeof(buf), &len), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_reply_encode(&h, NULL, buf, sizeof(buf), &len), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_reply_encode(&h, ranks2, NULL, sizeof(buf), &len), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_reply_encode(&h, ranks2, buf, sizeof(buf), NULL), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_reply_encode(&h, ranks2, buf, sizeof(buf), &len), DPM_OK);
    assert_int_equal(dpm_fedauc_reply_encode(&h, ranks2, small, len - 1u, &len2), DPM_ERR_BUFFER);
    assert_int_equal(dpm_fedauc_reply_encode(&h, ranks2, small, len, &len2), DPM_OK);
    assert_int_equal(len2, len);
    assert_memory_equal(small, buf, len);

    dpm_fedauc_header_t got;
    uint32_t out[3] = {0, 0, 0};
    assert_int_equal(dpm_fedauc_reply_decode(NULL, len, &got, out, 3), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_reply_decode(buf, len, NULL, out, 3), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_reply_decode(buf, len, &got, NULL, 3), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_reply_decode(buf, len - 1u, &got, out, 3), DPM_ERR_PROTOCOL);
    assert_int_equal(dpm_fedauc_reply_decode(buf, len, &got, out, 2), DPM_ERR_PROTOCOL);
    assert_int_equal(dpm_fedauc_reply_decode(buf, len, &got, out, 3), DPM_OK);
    assert_memory_equal(&got, &h, sizeof(h));
    assert_memory_equal(out, ranks2, sizeof(out));

    /* An empty array: no ranks pointer needed either way. */
    h.n = 0;
    assert_int_equal(dpm_fedauc_reply_encode(&h, NULL, buf, sizeof(buf), &len), DPM_OK);
    memset(&got, 0xFF, sizeof(got));
    assert_int_equal(dpm_fedauc_reply_decode(buf, len, &got, NULL, 0), DPM_OK);
    assert_memory_equal(&got, &h, sizeof(h));

    /* The upload decoder: the same argument checks, and no scores from a reply's bytes cut
     * short. */
    assert_int_equal(dpm_fedauc_upload_decode(NULL, len, &got, out, 3), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_upload_decode(buf, len, NULL, out, 3), DPM_ERR_PARAM);
    assert_int_equal(dpm_fedauc_upload_decode(buf, len, &got, NULL, 3), DPM_ERR_PARAM);
    const uint8_t cut[2] = {0x08, 0x80}; /* campaign_id: a varint that never ends */
    assert_int_equal(dpm_fedauc_upload_decode(cut, sizeof(cut), &got, out, 3), DPM_ERR_PROTOCOL);
    assert_int_equal(dpm_fedauc_upload_encode(NULL, buf, sizeof(buf), &len), DPM_ERR_PARAM);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_campaigns_and_fingerprints),
        cmocka_unit_test(test_quantize),
        cmocka_unit_test(test_prepare_shuffles_and_maps_back),
        cmocka_unit_test(test_bad_arguments_refused_untouched),
        cmocka_unit_test(test_prepare_refuses_too_many_examples),
        cmocka_unit_test(test_shuffle_is_uniform),
        cmocka_unit_test(test_upload_on_the_wire),
        cmocka_unit_test(test_hand_computed_reply),
        cmocka_unit_test(test_bad_replies_are_refused),
        cmocka_unit_test(test_tie_groups_at_the_ends),
        cmocka_unit_test(test_too_spread_for_the_orthogonal_split),
        cmocka_unit_test(test_laplace_variants_draw_the_documented_noise),
        cmocka_unit_test(test_equal_ranks_spend_everything_on_localp),
        cmocka_unit_test(test_adaptive_split),
        cmocka_unit_test(test_rr_flips_are_memoized),
        cmocka_unit_test(test_report_wire_and_check),
        cmocka_unit_test(test_device_rounds),
        cmocka_unit_test(test_device_bad_input_spends_nothing),
        cmocka_unit_test(test_wire_sizes),
        cmocka_unit_test(test_wire_codec_refusals),
    };
    return cmocka_run_group_tests_name("fedauc", tests, NULL, NULL);
}
