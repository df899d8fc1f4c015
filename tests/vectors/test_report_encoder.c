/* SPDX-License-Identifier: Apache-2.0 */
/* The reports' direct encoders (the header in sdk/src/report/report.c, each body's writer in
 * sdk/src/mech/<m>.c, core/wire.h below them: no nanopb) write exactly what pb_encode writes for
 * the same dpm.v1.Report: a random corpus of every kind in the build (both tuple kinds,
 * roc_hist with and without a group, dpauc, ustat_bins, ustat_tree, both FedAUC kinds), every
 * value count the build allows, every varint width of every field (0 and one- to five-byte
 * uint32, one- to ten-byte 64-bit), every zigzag width (+-1, multi-byte, INT32_MAX, INT32_MIN,
 * INT64_MIN), header fields of every width. Through the typed entry and the generic one; one
 * byte short of room, both refuse. Issue 32 item 2. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <pb_encode.h>

#include "dpm.pb.h"
#include "dpm/dpm.h"
#include "dpm/expert/fedauc.h"
#include "dpm/expert/mech.h"
#include "dpm/expert/report.h"
#include "dpm/expert/ustat.h"
#include "report/report_internal.h"

/* x86_64 runs the large corpus; the emulated targets of make cross (qemu) a smaller one of the
 * same law (their point is the byte order and word size, not the count). */
#if defined(__x86_64__)
#define CORPUS 200000u
#else
#define CORPUS 5000u
#endif

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A uint32 of a random varint width: 0, or 1 .. 5 bytes. */
static uint32_t any_u32(uint64_t *s)
{
    uint32_t width = (uint32_t)(next(s) % 6u);
    if (width == 0) {
        return 0;
    }
    uint32_t bits = 7u * width > 32u ? 32u : 7u * width;
    uint32_t lo = 1u << (7u * (width - 1u));
    uint32_t v = (uint32_t)(next(s) & (bits == 32u ? UINT32_MAX : (1u << bits) - 1u));
    return v < lo ? lo : v;
}

static int32_t any_value(uint64_t *s)
{
    static const int32_t kEdges[] = {0, 1, -1, 63, -64, 64, -65, INT32_MAX, -INT32_MAX, INT32_MIN};
    uint64_t k = next(s) % 4u;
    if (k == 0) {
        return kEdges[next(s) % (sizeof(kEdges) / sizeof(kEdges[0]))];
    }
    uint32_t bits = 1u + (uint32_t)(next(s) % 32u);
    uint32_t v = (uint32_t)next(s) & (bits == 32u ? UINT32_MAX : (1u << bits) - 1u);
    return (int32_t)v;
}

static uint64_t any_u64(uint64_t *s)
{
    uint32_t bits = (uint32_t)(next(s) % 65u);
    return bits == 0 ? 0 : bits == 64u ? next(s) : next(s) & ((UINT64_C(1) << bits) - 1u);
}

static int64_t any_i64(uint64_t *s)
{
    static const int64_t kEdges[] = {0, 1, -1, INT64_MAX, INT64_MIN, -INT64_MAX};
    if (next(s) % 5u == 0) {
        return kEdges[next(s) % (sizeof(kEdges) / sizeof(kEdges[0]))];
    }
    return (int64_t)any_u64(s);
}

static void values(uint64_t *s, int32_t *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        v[i] = any_value(s);
    }
}

/* The kinds this build holds (a build without one is refused by both encoders). */
static const dpm_mech_id_t kKinds[] = {
#if DPM_MECH_TUPLE
    DPM_MECH_ID_TUPLE_MR,   DPM_MECH_ID_TUPLE_ML,
#endif
#if DPM_MECH_ROC_HIST
    DPM_MECH_ID_ROC_HIST,
#endif
#if DPM_MECH_DPAUC
    DPM_MECH_ID_DPAUC,
#endif
#if DPM_MECH_USTAT
    DPM_MECH_ID_USTAT_BINS, DPM_MECH_ID_USTAT_TREE,
#endif
#if DPM_MECH_FEDAUC
    DPM_MECH_ID_FEDAUC_RR,  DPM_MECH_ID_FEDAUC_LAP,
#endif
};
#define NKINDS (sizeof(kKinds) / sizeof(kKinds[0]))

/* A random report of kind `mech` that dpm_report_encode accepts, and the same as a dpm_v1_Report
 * for pb_encode (filled here from the definition in dpm.proto, not by the SDK's own code). */
static void random_report(uint64_t *s, dpm_mech_id_t mech, dpm_report_t *r, dpm_v1_Report *msg)
{
    memset(r, 0, sizeof(*r));
    memset(msg, 0, sizeof(*msg));
    for (size_t i = 0; i < sizeof(r->report_id); i++) {
        r->report_id[i] = (uint8_t)next(s);
    }
    r->campaign_id = any_u32(s);
    r->period = any_u32(s);
    r->mechanism = mech;
    r->eps = any_u32(s);
    r->params_hash = next(s) % 8u == 0 ? 0u : (uint32_t)next(s);
    memcpy(msg->report_id, r->report_id, sizeof(msg->report_id));
    msg->campaign_id = r->campaign_id;
    msg->period = r->period;
    msg->mechanism = (dpm_v1_Mechanism)r->mechanism;
    msg->eps_q16 = r->eps;
    msg->params_hash = r->params_hash;
    switch (mech) {
    case DPM_MECH_ID_TUPLE_MR:
    case DPM_MECH_ID_TUPLE_ML: {
        dpm_tuple_report_t *t = &r->body.tuple;
        t->group = any_u32(s);
        t->nmetrics = (uint32_t)(next(s) % (DPM_TUPLE_MAX_METRICS + 1u));
        values(s, t->value, t->nmetrics);
        msg->which_body = dpm_v1_Report_tuple_tag;
        msg->body.tuple.group = t->group;
        msg->body.tuple.values_count = (pb_size_t)t->nmetrics;
        memcpy(msg->body.tuple.values, t->value, t->nmetrics * sizeof(int32_t));
        break;
    }
    case DPM_MECH_ID_ROC_HIST: {
        dpm_roc_hist_report_t *h = &r->body.roc_hist;
        h->bins = 2u + (uint32_t)(next(s) % (DPM_MAX_BINS - 1u));
        h->group = next(s) % 3u == 0 ? 0u : (uint32_t)(next(s) % DPM_MAX_GROUPS);
        values(s, h->pos, h->bins);
        values(s, h->neg, h->bins);
        msg->which_body = dpm_v1_Report_roc_hist_tag;
        msg->body.roc_hist.group = h->group;
        msg->body.roc_hist.pos_count = msg->body.roc_hist.neg_count = (pb_size_t)h->bins;
        memcpy(msg->body.roc_hist.pos, h->pos, h->bins * sizeof(int32_t));
        memcpy(msg->body.roc_hist.neg, h->neg, h->bins * sizeof(int32_t));
        break;
    }
    case DPM_MECH_ID_DPAUC: {
        dpm_dpauc_report_t *d = &r->body.dpauc;
        d->n = 1u + (uint32_t)(next(s) % DPM_DPAUC_MAX_THRESHOLDS);
        values(s, d->tp, d->n);
        values(s, d->fp, d->n);
        values(s, d->tn, d->n);
        values(s, d->fn, d->n);
        msg->which_body = dpm_v1_Report_dpauc_tag;
        dpm_v1_DpaucBody *w = &msg->body.dpauc;
        w->tp_count = w->fp_count = w->tn_count = w->fn_count = (pb_size_t)d->n;
        memcpy(w->tp, d->tp, d->n * sizeof(int32_t));
        memcpy(w->fp, d->fp, d->n * sizeof(int32_t));
        memcpy(w->tn, d->tn, d->n * sizeof(int32_t));
        memcpy(w->fn, d->fn, d->n * sizeof(int32_t));
        break;
    }
    case DPM_MECH_ID_USTAT_BINS:
        r->body.ustat_bins.value = (uint32_t)(next(s) % DPM_MAX_GRR_K);
        r->body.ustat_bins.label = (uint32_t)(next(s) % 2u);
        msg->which_body = dpm_v1_Report_ustat_bins_tag;
        msg->body.ustat_bins.value = r->body.ustat_bins.value;
        msg->body.ustat_bins.label = r->body.ustat_bins.label;
        break;
    case DPM_MECH_ID_USTAT_TREE: {
        dpm_ustat_tree_report_t *u = &r->body.ustat_tree;
        u->label = (uint32_t)(next(s) % 2u);
        u->level = 1u + (uint32_t)(next(s) % DPM_USTAT_MAX_DEPTH);
        u->row = (uint32_t)(next(s) & ((1u << u->level) - 1u));
        u->value = (uint32_t)(next(s) & ((1u << u->level) - 1u));
        msg->which_body = dpm_v1_Report_ustat_tree_tag;
        msg->body.ustat_tree.label = u->label;
        msg->body.ustat_tree.level = u->level;
        msg->body.ustat_tree.row = u->row;
        msg->body.ustat_tree.value = u->value;
        break;
    }
    default: { /* FedAUC */
        dpm_fedauc_report_t *f = &r->body.fedauc;
        int zero_token = next(s) % 32u == 0; /* fixed-length bytes: written even when zero */
        for (size_t i = 0; i < sizeof(f->upload_token); i++) {
            f->upload_token[i] = zero_token || next(s) % 16u == 0 ? 0u : (uint8_t)next(s);
        }
        f->n = any_u32(s);
        f->total = any_u32(s);
        f->local_p = any_i64(s);
        f->local_sum2 = any_i64(s);
        f->t = any_i64(s);
        f->sum_rank2 = any_u64(s);
        f->sensitivity = any_u64(s);
        f->eps_p = any_u32(s);
        msg->which_body = dpm_v1_Report_fedauc_tag;
        dpm_v1_FedaucBody *w = &msg->body.fedauc;
        memcpy(w->upload_token, f->upload_token, sizeof(w->upload_token));
        w->n = f->n;
        w->total = f->total;
        w->local_p = f->local_p;
        w->local_sum2 = f->local_sum2;
        w->t = f->t;
        w->sum_rank2 = f->sum_rank2;
        w->sensitivity = f->sensitivity;
        w->eps_p_q16 = f->eps_p;
        break;
    }
    }
}

/* The typed entry of r's kind. */
static dpm_status_t encode_typed(const dpm_report_t *r, uint8_t *buf, size_t cap, size_t *len)
{
    switch (r->mechanism) {
    case DPM_MECH_ID_TUPLE_MR:
    case DPM_MECH_ID_TUPLE_ML: return dpm_report_encode_tuple(r, buf, cap, len);
    case DPM_MECH_ID_ROC_HIST: return dpm_report_encode_roc_hist(r, buf, cap, len);
    case DPM_MECH_ID_DPAUC: return dpm_report_encode_dpauc(r, buf, cap, len);
    case DPM_MECH_ID_USTAT_BINS:
    case DPM_MECH_ID_USTAT_TREE: return dpm_report_encode_ustat(r, buf, cap, len);
    default: return dpm_report_encode_fedauc(r, buf, cap, len);
    }
}

#define BUF 8192u

static void direct_encoders_equal_pb_encode(void **state)
{
    (void)state;
    uint64_t seed = UINT64_C(0x7475706c65656e63); /* fixed: "tupleenc" */
    uint32_t per_kind[NKINDS] = {0}, int32_min = 0, wide64 = 0, multi_byte_group = 0;
    static uint8_t want[BUF], got[BUF];
    static dpm_v1_Report msg;
    for (uint32_t n = 0; n < CORPUS; n++) {
        uint32_t k = (uint32_t)(next(&seed) % NKINDS);
        dpm_report_t r;
        random_report(&seed, kKinds[k], &r, &msg);
        per_kind[k]++;
        pb_ostream_t ref = pb_ostream_from_buffer(want, sizeof(want));
        assert_true(pb_encode(&ref, dpm_v1_Report_fields, &msg));
        size_t want_len = ref.bytes_written, got_len = 0;
        assert_int_equal(encode_typed(&r, got, sizeof(got), &got_len), DPM_OK);
        if (got_len != want_len || memcmp(got, want, want_len) != 0) {
            fail_msg("report %u (%s) differs from pb_encode's (%zu bytes, pb_encode %zu)", n,
                     dpm_mech_name(r.mechanism), got_len, want_len);
        }
        got_len = 0;
        assert_int_equal(dpm_report_encode(&r, got, sizeof(got), &got_len), DPM_OK);
        if (got_len != want_len || memcmp(got, want, want_len) != 0) {
            fail_msg("report %u (%s): dpm_report_encode differs from pb_encode's", n,
                     dpm_mech_name(r.mechanism));
        }
        /* one byte short: refused, as pb_encode would be */
        assert_int_equal(encode_typed(&r, got, want_len - 1u, &got_len), DPM_ERR_BUFFER);
        assert_int_equal(dpm_report_encode(&r, got, want_len - 1u, &got_len), DPM_ERR_BUFFER);
        if (r.mechanism == DPM_MECH_ID_TUPLE_MR || r.mechanism == DPM_MECH_ID_TUPLE_ML) {
            multi_byte_group += r.body.tuple.group >= 128u;
            for (uint32_t i = 0; i < r.body.tuple.nmetrics; i++) {
                int32_min += r.body.tuple.value[i] == INT32_MIN;
            }
        }
        if (r.mechanism == DPM_MECH_ID_FEDAUC_RR || r.mechanism == DPM_MECH_ID_FEDAUC_LAP) {
            wide64 += r.body.fedauc.local_p == INT64_MIN || r.body.fedauc.sum_rank2 >> 63;
        }
    }
    /* the corpus reached every kind and the widths it claims */
    for (uint32_t k = 0; k < NKINDS; k++) {
        assert_true(per_kind[k] > CORPUS / (2u * NKINDS));
    }
    assert_true(NKINDS == 0u || DPM_MECH_TUPLE == 0 || (multi_byte_group > 0 && int32_min > 0));
    assert_true(DPM_MECH_FEDAUC == 0 || wide64 > 0);
    print_message("# %u random reports of %u kinds: each byte-identical to pb_encode's\n", CORPUS,
                  (unsigned)NKINDS);
}

/* The FedAUC upload's scores for pb_encode: packed, as dpm.proto declares them. */
typedef struct {
    const uint32_t *v;
    uint32_t n;
} scores_t;

static bool put_scores(pb_ostream_t *stream, const pb_field_t *field, void *const *arg)
{
    const scores_t *a = (const scores_t *)*arg;
    if (a->n == 0) {
        return true;
    }
    pb_ostream_t sizing = PB_OSTREAM_SIZING;
    for (uint32_t i = 0; i < a->n; i++) {
        assert_true(pb_encode_varint(&sizing, a->v[i]));
    }
    if (!pb_encode_tag(stream, PB_WT_STRING, field->tag) ||
        !pb_encode_varint(stream, sizing.bytes_written)) {
        return false;
    }
    for (uint32_t i = 0; i < a->n; i++) {
        if (!pb_encode_varint(stream, a->v[i])) {
            return false;
        }
    }
    return true;
}

/* The device's FedAUC upload (round 1, dpm_fedauc_upload_encode), written directly too: random
 * sessions against pb_encode of the FedaucUpload message. */
static void upload_encoder_equals_pb_encode(void **state)
{
    (void)state;
    if (!DPM_MECH_FEDAUC) {
        skip(); /* a skip, never a pass: this build has no FedAUC */
    }
    uint64_t seed = UINT64_C(0x75706c6f61640a0a);
    static uint32_t scores[256];
    static uint8_t want[BUF], got[BUF];
    for (uint32_t n = 0; n < CORPUS / 20u; n++) {
        dpm_fedauc_session_t s;
        memset(&s, 0, sizeof(s));
        s.state = DPM_FEDAUC_UPLOADED;
        s.campaign_id = any_u32(&seed);
        s.params_hash = next(&seed) % 8u == 0 ? 0u : (uint32_t)next(&seed);
        s.mechanism = next(&seed) & 1u ? DPM_MECH_ID_FEDAUC_RR : DPM_MECH_ID_FEDAUC_LAP;
        s.n = (uint32_t)(next(&seed) % 257u);
        for (size_t i = 0; i < sizeof(s.token); i++) {
            s.token[i] = (uint8_t)next(&seed);
        }
        for (uint32_t i = 0; i < s.n; i++) {
            scores[i] = any_u32(&seed);
        }
        s.buf.scores = scores;
        s.buf.cap = 256u;
        dpm_v1_FedaucUpload msg = dpm_v1_FedaucUpload_init_zero;
        scores_t arr = {scores, s.n};
        msg.campaign_id = s.campaign_id;
        msg.mechanism = (dpm_v1_Mechanism)s.mechanism;
        msg.params_hash = s.params_hash;
        memcpy(msg.upload_token, s.token, sizeof(s.token));
        msg.scores.funcs.encode = put_scores;
        msg.scores.arg = &arr;
        pb_ostream_t ref = pb_ostream_from_buffer(want, sizeof(want));
        assert_true(pb_encode(&ref, dpm_v1_FedaucUpload_fields, &msg));
        size_t len = 0;
        assert_int_equal(dpm_fedauc_upload_encode(&s, got, sizeof(got), &len), DPM_OK);
        if (len != ref.bytes_written || memcmp(got, want, len) != 0) {
            fail_msg("upload %u (%u scores) differs from pb_encode's", n, s.n);
        }
        assert_int_equal(dpm_fedauc_upload_encode(&s, got, len - 1u, &len), DPM_ERR_BUFFER);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(direct_encoders_equal_pb_encode),
        cmocka_unit_test(upload_encoder_equals_pb_encode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
