/* SPDX-License-Identifier: Apache-2.0 */
/* Reports: nanopb encode/decode, the mechanism fingerprint, and the collector-side check. */
#include "dpm_internal.h"

#include <pb_decode.h>
#include <pb_encode.h>

#include "dpm.pb.h"
#include "dpm/report.h"
#include "mech/fedauc_internal.h"
#include "report/report_internal.h"

/* The wire enums and the SDK's must agree value for value. */
typedef char mech_ids_match[(dpm_v1_Mechanism_TUPLE_MR == (int)DPM_MECH_ID_TUPLE_MR &&
                             dpm_v1_Mechanism_TUPLE_ML == (int)DPM_MECH_ID_TUPLE_ML &&
                             dpm_v1_Mechanism_ROC_HIST == (int)DPM_MECH_ID_ROC_HIST &&
                             dpm_v1_Mechanism_DPAUC == (int)DPM_MECH_ID_DPAUC &&
                             dpm_v1_Mechanism_USTAT_BINS == (int)DPM_MECH_ID_USTAT_BINS &&
                             dpm_v1_Mechanism_USTAT_TREE == (int)DPM_MECH_ID_USTAT_TREE &&
                             dpm_v1_Metric_PRECISION == (int)DPM_METRIC_PRECISION)
                                ? 1
                                : -1];
typedef char
    values_fit[DPM_ARRAY_LEN(((dpm_v1_TupleBody *)0)->values) >= DPM_TUPLE_MAX_METRICS ? 1 : -1];
/* The wire arrays hold at least DPM_MAX_BINS values (dpm.options bounds them to 64). */
typedef char roc_pos_fit[DPM_ARRAY_LEN(((dpm_v1_RocHistBody *)0)->pos) >= DPM_MAX_BINS ? 1 : -1];
typedef char roc_neg_fit[DPM_ARRAY_LEN(((dpm_v1_RocHistBody *)0)->neg) >= DPM_MAX_BINS ? 1 : -1];
/* dpauc's wire lists hold the build's thresholds (dpm.options bounds them to 128). */
typedef char
    dpauc_fit[DPM_ARRAY_LEN(((dpm_v1_DpaucBody *)0)->tp) >= DPM_DPAUC_MAX_THRESHOLDS ? 1 : -1];
/* dpm_report_decode zeroes the header up to the body union, which_body included. */
typedef char body_last[offsetof(dpm_v1_Report, which_body) < offsetof(dpm_v1_Report, body) &&
                               offsetof(dpm_v1_Report, body) + sizeof(((dpm_v1_Report *)0)->body) ==
                                   sizeof(dpm_v1_Report)
                           ? 1
                           : -1];
/* report.h's bound covers the tuple body too: header, 1 tag + 1 length byte, the body. */
#if DPM_MECH_TUPLE
typedef char report_fits_tuple[43u + 2u + dpm_v1_TupleBody_size <= DPM_REPORT_MAX_BYTES ? 1 : -1];
#endif
/* ... and the FedAUC body: exactly DPM_REPORT_FEDAUC_MAX at its largest. */
typedef char
    report_fits_fedauc[43u + 2u + dpm_v1_FedaucBody_size == DPM_REPORT_FEDAUC_MAX &&
                               (!DPM_MECH_FEDAUC || DPM_REPORT_FEDAUC_MAX <= DPM_REPORT_MAX_BYTES)
                           ? 1
                           : -1];

static inline int is_tuple(dpm_mech_id_t id)
{
    return id == DPM_MECH_ID_TUPLE_MR || id == DPM_MECH_ID_TUPLE_ML;
}

#if DPM_MECH_USTAT
/* The ranges dpm_report_encode accepts for an ustat_tree body (the campaign checks the rest). */
static int tree_body_ok(uint32_t label, uint32_t level, uint32_t row, uint32_t value)
{
    return label <= 1 && level >= 1 && level <= DPM_USTAT_MAX_DEPTH && (row >> level) == 0 &&
           (value >> level) == 0;
}
#endif

/* Encoding writes the Report field by field with nanopb's primitives, exactly as pb_encode
 * writes a whole dpm_v1_Report (proto3: zero scalars omitted, the fixed-length id always, the
 * oneof body always), so that only the one body's wire struct is on the stack: a dpm_v1_Report
 * holds a union of every body (about 2 KB, the dpauc lists) whatever the build. Each body kind
 * has its own entry (report/report_internal.h), so the device's report call of one kind reaches
 * that body's encoder only (make size's call graph charges it nothing else). The golden vectors
 * (tests/vectors) check the bytes. */

/* A proto3 uint32 / enum field: omitted when 0. */
static bool put_varint(pb_ostream_t *s, uint32_t tag, uint32_t v)
{
    return v == 0 || (pb_encode_tag(s, PB_WT_VARINT, tag) && pb_encode_varint(s, v));
}

/* The field numbers written by hand must be those of the generated descriptor. */
typedef char header_tags[(dpm_v1_Report_report_id_tag == 1 && dpm_v1_Report_campaign_id_tag == 2 &&
                          dpm_v1_Report_period_tag == 3 && dpm_v1_Report_mechanism_tag == 4 &&
                          dpm_v1_Report_eps_q16_tag == 5 && dpm_v1_Report_params_hash_tag == 6)
                             ? 1
                             : -1];

/* Fields 1-6 of *r. */
static DPM_NOINLINE bool put_header(pb_ostream_t *s, const dpm_report_t *r)
{
    return pb_encode_tag(s, PB_WT_STRING, dpm_v1_Report_report_id_tag) &&
           pb_encode_string(s, r->report_id, DPM_REPORT_ID_BYTES) &&
           put_varint(s, dpm_v1_Report_campaign_id_tag, r->campaign_id) &&
           put_varint(s, dpm_v1_Report_period_tag, r->period) &&
           put_varint(s, dpm_v1_Report_mechanism_tag, (uint32_t)r->mechanism) &&
           put_varint(s, dpm_v1_Report_eps_q16_tag, r->eps) &&
           (r->params_hash == 0 || (pb_encode_tag(s, PB_WT_32BIT, dpm_v1_Report_params_hash_tag) &&
                                    pb_encode_fixed32(s, &r->params_hash)));
}

#if DPM_MECH_ROC_HIST || DPM_MECH_DPAUC || DPM_MECH_USTAT || DPM_MECH_FEDAUC
/* (put_tuple writes its small body on its own) */
static bool put_body(pb_ostream_t *s, uint32_t tag, const pb_msgdesc_t *fields, const void *body)
{
    return pb_encode_tag(s, PB_WT_STRING, tag) && pb_encode_submessage(s, fields, body);
}
#endif

/* The arguments every entry needs (the body's own checks come before anything is written). */
static int args_ok(const dpm_report_t *r, const uint8_t *buf, const size_t *len)
{
    return r != NULL && buf != NULL && len != NULL;
}

/* An entry's status once it wrote the header and the body into s (written: both fitted). */
static dpm_status_t finish(const pb_ostream_t *s, bool written, size_t *len)
{
    if (!written) {
        return DPM_ERR_BUFFER;
    }
    *len = s->bytes_written;
    return DPM_OK;
}

/* One body encoder per kind, kept out of line: a report's stack holds only its own body's
 * struct. */
#if DPM_MECH_ROC_HIST
static DPM_NOINLINE bool put_roc_hist(pb_ostream_t *s, const dpm_roc_hist_report_t *h)
{
    dpm_v1_RocHistBody w = dpm_v1_RocHistBody_init_zero;
    w.group = h->group;
    w.pos_count = (pb_size_t)h->bins;
    w.neg_count = (pb_size_t)h->bins;
    memcpy(w.pos, h->pos, h->bins * sizeof(int32_t));
    memcpy(w.neg, h->neg, h->bins * sizeof(int32_t));
    return put_body(s, dpm_v1_Report_roc_hist_tag, dpm_v1_RocHistBody_fields, &w);
}

dpm_status_t dpm_report_encode_roc_hist(const dpm_report_t *r, uint8_t *buf, size_t cap,
                                        size_t *len)
{
    if (!args_ok(r, buf, len) || r->mechanism != DPM_MECH_ID_ROC_HIST ||
        r->body.roc_hist.bins < 2 || r->body.roc_hist.bins > DPM_MAX_BINS ||
        r->body.roc_hist.group >= DPM_MAX_GROUPS) {
        return DPM_ERR_PARAM;
    }
    pb_ostream_t s = pb_ostream_from_buffer(buf, cap);
    return finish(&s, put_header(&s, r) && put_roc_hist(&s, &r->body.roc_hist), len);
}
#endif

#if DPM_MECH_DPAUC
static DPM_NOINLINE bool put_dpauc(pb_ostream_t *s, const dpm_dpauc_report_t *d)
{
    dpm_v1_DpaucBody w = dpm_v1_DpaucBody_init_zero;
    w.tp_count = w.fp_count = w.tn_count = w.fn_count = (pb_size_t)d->n;
    memcpy(w.tp, d->tp, d->n * sizeof(int32_t));
    memcpy(w.fp, d->fp, d->n * sizeof(int32_t));
    memcpy(w.tn, d->tn, d->n * sizeof(int32_t));
    memcpy(w.fn, d->fn, d->n * sizeof(int32_t));
    return put_body(s, dpm_v1_Report_dpauc_tag, dpm_v1_DpaucBody_fields, &w);
}

dpm_status_t dpm_report_encode_dpauc(const dpm_report_t *r, uint8_t *buf, size_t cap, size_t *len)
{
    if (!args_ok(r, buf, len) || r->mechanism != DPM_MECH_ID_DPAUC || r->body.dpauc.n < 1 ||
        r->body.dpauc.n > DPM_DPAUC_MAX_THRESHOLDS) {
        return DPM_ERR_PARAM;
    }
    pb_ostream_t s = pb_ostream_from_buffer(buf, cap);
    return finish(&s, put_header(&s, r) && put_dpauc(&s, &r->body.dpauc), len);
}
#endif

#if DPM_MECH_USTAT
static DPM_NOINLINE bool put_ustat(pb_ostream_t *s, const dpm_report_t *r)
{
    if (r->mechanism == DPM_MECH_ID_USTAT_BINS) {
        dpm_v1_UstatBinsBody w = dpm_v1_UstatBinsBody_init_zero;
        w.value = r->body.ustat_bins.value;
        w.label = r->body.ustat_bins.label;
        return put_body(s, dpm_v1_Report_ustat_bins_tag, dpm_v1_UstatBinsBody_fields, &w);
    }
    const dpm_ustat_tree_report_t *u = &r->body.ustat_tree;
    dpm_v1_UstatTreeBody w = dpm_v1_UstatTreeBody_init_zero;
    w.label = u->label;
    w.level = u->level;
    w.row = u->row;
    w.value = u->value;
    return put_body(s, dpm_v1_Report_ustat_tree_tag, dpm_v1_UstatTreeBody_fields, &w);
}

dpm_status_t dpm_report_encode_ustat(const dpm_report_t *r, uint8_t *buf, size_t cap, size_t *len)
{
    if (!args_ok(r, buf, len)) {
        return DPM_ERR_PARAM;
    }
    const dpm_ustat_tree_report_t *u = &r->body.ustat_tree;
    int ok = r->mechanism == DPM_MECH_ID_USTAT_BINS
                 ? r->body.ustat_bins.value < DPM_MAX_GRR_K && r->body.ustat_bins.label <= 1
                 : r->mechanism == DPM_MECH_ID_USTAT_TREE &&
                       tree_body_ok(u->label, u->level, u->row, u->value);
    if (!ok) {
        return DPM_ERR_PARAM;
    }
    pb_ostream_t s = pb_ostream_from_buffer(buf, cap);
    return finish(&s, put_header(&s, r) && put_ustat(&s, r), len);
}
#endif

#if DPM_MECH_TUPLE
static DPM_NOINLINE bool put_tuple(pb_ostream_t *s, const dpm_tuple_report_t *t)
{
    dpm_v1_TupleBody w = dpm_v1_TupleBody_init_zero;
    w.group = t->group;
    w.values_count = (pb_size_t)t->nmetrics;
    for (uint32_t i = 0; i < t->nmetrics; i++) {
        w.values[i] = t->value[i];
    }
    /* The body is at most dpm_v1_TupleBody_size bytes: encoded once into a buffer that small
     * rather than twice (pb_encode_submessage's sizing pass), then written as the same
     * length-delimited field. */
    pb_byte_t body[dpm_v1_TupleBody_size];
    pb_ostream_t b = pb_ostream_from_buffer(body, sizeof(body));
    return pb_encode(&b, dpm_v1_TupleBody_fields, &w) &&
           pb_encode_tag(s, PB_WT_STRING, dpm_v1_Report_tuple_tag) &&
           pb_encode_varint(s, b.bytes_written) && pb_write(s, body, b.bytes_written);
}

dpm_status_t dpm_report_encode_tuple(const dpm_report_t *r, uint8_t *buf, size_t cap, size_t *len)
{
    if (!args_ok(r, buf, len) || !is_tuple(r->mechanism) ||
        r->body.tuple.nmetrics > DPM_TUPLE_MAX_METRICS) {
        return DPM_ERR_PARAM;
    }
    pb_ostream_t s = pb_ostream_from_buffer(buf, cap);
    return finish(&s, put_header(&s, r) && put_tuple(&s, &r->body.tuple), len);
}
#endif

#if DPM_MECH_FEDAUC
static DPM_NOINLINE bool put_fedauc(pb_ostream_t *s, const dpm_fedauc_report_t *b)
{
    dpm_v1_FedaucBody w = dpm_v1_FedaucBody_init_zero;
    dpm_fedauc_body_to_wire(b, &w);
    return put_body(s, dpm_v1_Report_fedauc_tag, dpm_v1_FedaucBody_fields, &w);
}

dpm_status_t dpm_report_encode_fedauc(const dpm_report_t *r, uint8_t *buf, size_t cap, size_t *len)
{
    if (!args_ok(r, buf, len) || !dpm_fedauc_is((uint32_t)r->mechanism)) {
        return DPM_ERR_PARAM; /* every value of the body fits its field */
    }
    pb_ostream_t s = pb_ostream_from_buffer(buf, cap);
    return finish(&s, put_header(&s, r) && put_fedauc(&s, &r->body.fedauc), len);
}
#endif

dpm_status_t dpm_report_encode(const dpm_report_t *r, uint8_t *buf, size_t cap, size_t *len)
{
    if (r == NULL) {
        return DPM_ERR_PARAM;
    }
    switch (r->mechanism) {
#if DPM_MECH_ROC_HIST
    case DPM_MECH_ID_ROC_HIST: return dpm_report_encode_roc_hist(r, buf, cap, len);
#endif
#if DPM_MECH_DPAUC
    case DPM_MECH_ID_DPAUC: return dpm_report_encode_dpauc(r, buf, cap, len);
#endif
#if DPM_MECH_USTAT
    case DPM_MECH_ID_USTAT_BINS:
    case DPM_MECH_ID_USTAT_TREE: return dpm_report_encode_ustat(r, buf, cap, len);
#endif
#if DPM_MECH_TUPLE
    case DPM_MECH_ID_TUPLE_MR:
    case DPM_MECH_ID_TUPLE_ML: return dpm_report_encode_tuple(r, buf, cap, len);
#endif
#if DPM_MECH_FEDAUC
    case DPM_MECH_ID_FEDAUC_RR:
    case DPM_MECH_ID_FEDAUC_LAP: return dpm_report_encode_fedauc(r, buf, cap, len);
#endif
    default: return DPM_ERR_PARAM; /* not a mechanism of this build: nothing written */
    }
}

/* 1 if msg's body is well formed, is the kind its mechanism field names (so the union member
 * that the mechanism selects is the one filled), and this build can hold it. */
static int body_fits(const dpm_v1_Report *msg)
{
    dpm_mech_id_t id = (dpm_mech_id_t)msg->mechanism;
#if DPM_MECH_ROC_HIST
    if (msg->which_body == dpm_v1_Report_roc_hist_tag && id == DPM_MECH_ID_ROC_HIST) {
        const dpm_v1_RocHistBody *w = &msg->body.roc_hist;
        return w->pos_count == w->neg_count && w->pos_count >= 2 && w->pos_count <= DPM_MAX_BINS &&
               w->group < DPM_MAX_GROUPS;
    }
#endif
#if DPM_MECH_DPAUC
    if (msg->which_body == dpm_v1_Report_dpauc_tag && id == DPM_MECH_ID_DPAUC) {
        const dpm_v1_DpaucBody *w = &msg->body.dpauc;
        return w->tp_count >= 1 && w->tp_count <= DPM_DPAUC_MAX_THRESHOLDS &&
               w->fp_count == w->tp_count && w->tn_count == w->tp_count &&
               w->fn_count == w->tp_count;
    }
#endif
#if DPM_MECH_USTAT
    if (msg->which_body == dpm_v1_Report_ustat_bins_tag && id == DPM_MECH_ID_USTAT_BINS) {
        return msg->body.ustat_bins.value < DPM_MAX_GRR_K && msg->body.ustat_bins.label <= 1;
    }
    if (msg->which_body == dpm_v1_Report_ustat_tree_tag && id == DPM_MECH_ID_USTAT_TREE) {
        const dpm_v1_UstatTreeBody *w = &msg->body.ustat_tree;
        return tree_body_ok(w->label, w->level, w->row, w->value);
    }
#endif
#if DPM_MECH_TUPLE
    if (msg->which_body == dpm_v1_Report_tuple_tag && is_tuple(id)) {
        return msg->body.tuple.values_count <= DPM_TUPLE_MAX_METRICS;
    }
#endif
#if DPM_MECH_FEDAUC
    if (msg->which_body == dpm_v1_Report_fedauc_tag && dpm_fedauc_is((uint32_t)id)) {
        return 1; /* the token's 16 bytes are checked by the decoder (fixed length) */
    }
#endif
    return 0;
}

/* The body of msg (body_fits) into *out. */
static void body_from_wire(const dpm_v1_Report *msg, dpm_report_t *out)
{
#if DPM_MECH_ROC_HIST
    if (msg->which_body == dpm_v1_Report_roc_hist_tag) {
        const dpm_v1_RocHistBody *w = &msg->body.roc_hist;
        out->body.roc_hist.bins = w->pos_count;
        memcpy(out->body.roc_hist.pos, w->pos, w->pos_count * sizeof(int32_t));
        memcpy(out->body.roc_hist.neg, w->neg, w->pos_count * sizeof(int32_t));
        out->body.roc_hist.group = w->group;
    }
#endif
#if DPM_MECH_DPAUC
    if (msg->which_body == dpm_v1_Report_dpauc_tag) {
        const dpm_v1_DpaucBody *w = &msg->body.dpauc;
        dpm_dpauc_report_t *d = &out->body.dpauc;
        d->n = w->tp_count;
        memcpy(d->tp, w->tp, d->n * sizeof(int32_t));
        memcpy(d->fp, w->fp, d->n * sizeof(int32_t));
        memcpy(d->tn, w->tn, d->n * sizeof(int32_t));
        memcpy(d->fn, w->fn, d->n * sizeof(int32_t));
    }
#endif
#if DPM_MECH_USTAT
    if (msg->which_body == dpm_v1_Report_ustat_bins_tag) {
        out->body.ustat_bins.value = msg->body.ustat_bins.value;
        out->body.ustat_bins.label = msg->body.ustat_bins.label;
    }
    if (msg->which_body == dpm_v1_Report_ustat_tree_tag) {
        const dpm_v1_UstatTreeBody *w = &msg->body.ustat_tree;
        out->body.ustat_tree.label = w->label;
        out->body.ustat_tree.level = w->level;
        out->body.ustat_tree.row = w->row;
        out->body.ustat_tree.value = w->value;
    }
#endif
#if DPM_MECH_TUPLE
    if (msg->which_body == dpm_v1_Report_tuple_tag) {
        const dpm_v1_TupleBody *w = &msg->body.tuple;
        out->body.tuple.group = w->group;
        out->body.tuple.nmetrics = w->values_count;
        for (uint32_t i = 0; i < w->values_count; i++) {
            out->body.tuple.value[i] = w->values[i];
        }
    }
#endif
#if DPM_MECH_FEDAUC
    if (msg->which_body == dpm_v1_Report_fedauc_tag) {
        dpm_fedauc_body_from_wire(&msg->body.fedauc, &out->body.fedauc);
    }
#endif
}

dpm_status_t dpm_report_decode(const uint8_t *buf, size_t len, dpm_report_t *out)
{
    if (buf == NULL || out == NULL) {
        return DPM_ERR_PARAM;
    }
    /* The header fields start zeroed, which is every proto3 default: NOINIT skips nanopb's
     * second pass over the descriptor to set them (a sixth of a simulated device's cost, dpm-sim
     * bench). The body union (2 KB: the dpauc lists) is not zeroed here: which_body = 0 makes
     * nanopb zero the member it decodes into first (a oneof submessage whose tag differs from
     * which_body), and only that member is read below. Zeroing all of it was a tenth of a
     * simulated device's time. */
    dpm_v1_Report msg;
    memset(&msg, 0, offsetof(dpm_v1_Report, body));
    pb_istream_t in = pb_istream_from_buffer(buf, len);
    if (!pb_decode_ex(&in, dpm_v1_Report_fields, &msg, PB_DECODE_NOINIT) || in.bytes_left != 0 ||
        !body_fits(&msg)) {
        return DPM_ERR_PROTOCOL;
    }
    /* Every check is done: fill *out directly (no second report-sized copy on the stack). */
    memset(out, 0, sizeof(*out));
    memcpy(out->report_id, msg.report_id, DPM_REPORT_ID_BYTES);
    out->campaign_id = msg.campaign_id;
    out->period = msg.period;
    out->mechanism = (dpm_mech_id_t)msg.mechanism;
    out->eps = msg.eps_q16;
    out->params_hash = msg.params_hash;
    body_from_wire(&msg, out);
    return DPM_OK;
}

dpm_status_t dpm_receipt_unmetered(const dpm_mech_t *m, uint32_t period, dpm_receipt_t *rc)
{
    if (m == NULL || rc == NULL) {
        return DPM_ERR_PARAM;
    }
    rc->campaign_id = m->campaign.id;
    rc->period = period;
    rc->params_hash = m->params_hash;
    rc->eps = m->eps_implemented;
    rc->state = DPM_RECEIPT_UNMETERED;
    return DPM_OK;
}

/* 1 if rc is an unused receipt for a report of m. */
static int receipt_ok(const dpm_mech_t *m, const dpm_receipt_t *rc)
{
    return rc != NULL && (rc->state == DPM_RECEIPT_CHARGED || rc->state == DPM_RECEIPT_UNMETERED) &&
           rc->campaign_id == m->campaign.id && rc->params_hash == m->params_hash &&
           rc->eps == m->eps_implemented;
}

/* The part every report shares, after the body: st is the body's status (nothing more is drawn
 * when it failed), then the 16-byte report id (two 64-bit draws, so the order of random draws is
 * body first, then id) and the header from the mechanism; *out (the header, the body of `size`
 * bytes, zeros elsewhere) is written and the receipt used up only on success. The body is built
 * in its own struct rather than in a whole report: a report is 560 bytes (the largest body),
 * which every report of a simulated device zeroed and copied once more. */
static dpm_status_t report_finish(const dpm_mech_t *m, dpm_rand_t *r, dpm_receipt_t *rc,
                                  dpm_status_t st, const void *body, size_t size, dpm_report_t *out)
{
    uint8_t id[DPM_REPORT_ID_BYTES];
    for (int half = 0; half < 2 && st == DPM_OK; half++) {
        uint64_t w = 0;
        st = dpm_rand_bits(r, 64, &w);
        for (int i = 0; i < 8; i++) {
            id[half * 8 + i] = (uint8_t)(w >> (8 * i));
        }
    }
    if (st != DPM_OK) {
        return st;
    }
    memset(out, 0, sizeof(*out));
    memcpy(out->report_id, id, sizeof(id));
    out->campaign_id = m->campaign.id;
    out->period = rc->period;
    out->mechanism = m->campaign.mechanism;
    out->eps = m->eps_implemented;
    out->params_hash = m->params_hash;
    memcpy(&out->body, body, size);
    rc->state = 0;
    return DPM_OK;
}

dpm_status_t dpm_mech_report_tuple(const dpm_mech_t *m, dpm_rand_t *r, dpm_receipt_t *rc,
                                   uint32_t group, const dpm_ratio_t *values, dpm_report_t *out)
{
#if DPM_MECH_TUPLE
    if (m == NULL || r == NULL || out == NULL || !is_tuple(m->campaign.mechanism) ||
        !receipt_ok(m, rc)) {
        return DPM_ERR_PARAM;
    }
    dpm_tuple_report_t body;
    memset(&body, 0, sizeof(body));
    dpm_status_t st = dpm_tuple_perturb(&m->params.tuple, r, group, values, &body);
    return report_finish(m, r, rc, st, &body, sizeof(body), out);
#else
    (void)m, (void)r, (void)rc, (void)group, (void)values, (void)out;
    return DPM_ERR_UNSUPPORTED;
#endif
}

dpm_status_t dpm_mech_report_roc_hist(const dpm_mech_t *m, dpm_rand_t *r, dpm_receipt_t *rc,
                                      const dpm_score_hist_t *h, dpm_report_t *out)
{
#if DPM_MECH_ROC_HIST
    if (m == NULL || r == NULL || h == NULL || out == NULL ||
        m->campaign.mechanism != DPM_MECH_ID_ROC_HIST || !receipt_ok(m, rc)) {
        return DPM_ERR_PARAM;
    }
    dpm_roc_hist_report_t body;
    memset(&body, 0, sizeof(body));
    dpm_status_t st = dpm_roc_hist_perturb(&m->params.roc_hist, r, h, &body);
    return report_finish(m, r, rc, st, &body, sizeof(body), out);
#else
    (void)m, (void)r, (void)rc, (void)h, (void)out;
    return DPM_ERR_UNSUPPORTED;
#endif
}

dpm_status_t dpm_mech_report_roc_hist_group(const dpm_mech_t *m, dpm_rand_t *r, dpm_receipt_t *rc,
                                            uint32_t group, const dpm_score_hist_t *h,
                                            dpm_report_t *out)
{
#if DPM_MECH_ROC_HIST
    if (m == NULL || r == NULL || h == NULL || out == NULL ||
        m->campaign.mechanism != DPM_MECH_ID_ROC_HIST || !receipt_ok(m, rc)) {
        return DPM_ERR_PARAM;
    }
    dpm_roc_hist_report_t body;
    memset(&body, 0, sizeof(body));
    dpm_status_t st = dpm_roc_hist_perturb_group(&m->params.roc_hist, r, group, h, &body);
    return report_finish(m, r, rc, st, &body, sizeof(body), out);
#else
    (void)m, (void)r, (void)rc, (void)group, (void)h, (void)out;
    return DPM_ERR_UNSUPPORTED;
#endif
}

dpm_status_t dpm_mech_report_dpauc(const dpm_mech_t *m, dpm_rand_t *r, dpm_receipt_t *rc,
                                   const dpm_dpauc_counts_t *c, dpm_report_t *out)
{
#if DPM_MECH_DPAUC
    if (m == NULL || r == NULL || c == NULL || out == NULL ||
        m->campaign.mechanism != DPM_MECH_ID_DPAUC || !receipt_ok(m, rc)) {
        return DPM_ERR_PARAM;
    }
    dpm_dpauc_report_t body;
    memset(&body, 0, sizeof(body));
    dpm_status_t st = dpm_dpauc_perturb(&m->params.dpauc, r, c, &body);
    return report_finish(m, r, rc, st, &body, sizeof(body), out);
#else
    (void)m, (void)r, (void)rc, (void)c, (void)out;
    return DPM_ERR_UNSUPPORTED;
#endif
}

dpm_status_t dpm_mech_report_ustat_bins(const dpm_mech_t *m, dpm_rand_t *r, dpm_receipt_t *rc,
                                        const dpm_ustat_example_t *ex, dpm_report_t *out)
{
#if DPM_MECH_USTAT
    if (m == NULL || r == NULL || ex == NULL || out == NULL ||
        m->campaign.mechanism != DPM_MECH_ID_USTAT_BINS || !receipt_ok(m, rc)) {
        return DPM_ERR_PARAM;
    }
    dpm_ustat_bins_report_t body;
    memset(&body, 0, sizeof(body));
    dpm_status_t st = dpm_ustat_bins_perturb(&m->params.ustat_bins, r, ex, &body);
    return report_finish(m, r, rc, st, &body, sizeof(body), out);
#else
    (void)m, (void)r, (void)rc, (void)ex, (void)out;
    return DPM_ERR_UNSUPPORTED;
#endif
}

dpm_status_t dpm_mech_report_ustat_tree(const dpm_mech_t *m, dpm_rand_t *r, dpm_receipt_t *rc,
                                        const dpm_ustat_example_t *ex, dpm_report_t *out)
{
#if DPM_MECH_USTAT
    if (m == NULL || r == NULL || ex == NULL || out == NULL ||
        m->campaign.mechanism != DPM_MECH_ID_USTAT_TREE || !receipt_ok(m, rc)) {
        return DPM_ERR_PARAM;
    }
    dpm_ustat_tree_report_t body;
    memset(&body, 0, sizeof(body));
    dpm_status_t st = dpm_ustat_tree_perturb(&m->params.ustat_tree, r, ex, &body);
    return report_finish(m, r, rc, st, &body, sizeof(body), out);
#else
    (void)m, (void)r, (void)rc, (void)ex, (void)out;
    return DPM_ERR_UNSUPPORTED;
#endif
}

dpm_status_t dpm_mech_report_fedauc(const dpm_mech_t *m, dpm_rand_t *r, dpm_receipt_t *rc,
                                    const dpm_fedauc_session_t *s, const dpm_fedauc_ranks_t *rk,
                                    const uint8_t *labels, const uint64_t *ids,
                                    const dpm_memo_t *memo, dpm_report_t *out)
{
#if DPM_MECH_FEDAUC
    if (m == NULL || r == NULL || out == NULL || !dpm_fedauc_is((uint32_t)m->campaign.mechanism) ||
        !receipt_ok(m, rc)) {
        return DPM_ERR_PARAM;
    }
    dpm_fedauc_report_t body;
    memset(&body, 0, sizeof(body));
    dpm_status_t st = dpm_fedauc_perturb(m, r, s, rk, labels, ids, memo, &body);
    return report_finish(m, r, rc, st, &body, sizeof(body), out);
#else
    (void)m, (void)r, (void)rc, (void)s, (void)rk, (void)labels, (void)ids, (void)memo, (void)out;
    return DPM_ERR_UNSUPPORTED;
#endif
}

static dpm_status_t reject(const char **reason, const char *why)
{
    if (reason != NULL) {
        *reason = why;
    }
    return DPM_ERR_PROTOCOL;
}

dpm_status_t dpm_mech_check_report(const dpm_mech_t *m, const dpm_report_t *r, const char **reason)
{
    if (m == NULL || r == NULL) {
        return DPM_ERR_PARAM;
    }
    if (r->campaign_id != m->campaign.id) {
        return reject(reason, "campaign mismatch");
    }
    if (r->mechanism != m->campaign.mechanism) {
        return reject(reason, "mechanism mismatch");
    }
    if (r->eps != m->eps_implemented) {
        return reject(reason, "epsilon mismatch");
    }
    if (r->params_hash != m->params_hash) {
        return reject(reason, "parameter fingerprint mismatch");
    }
#if DPM_MECH_ROC_HIST
    if (m->campaign.mechanism == DPM_MECH_ID_ROC_HIST) {
        if (r->body.roc_hist.bins != m->params.roc_hist.bins.count) {
            return reject(reason, "wrong number of bins");
        }
        for (uint32_t b = 0; b < r->body.roc_hist.bins; b++) {
            if (r->body.roc_hist.pos[b] == INT32_MIN || r->body.roc_hist.neg[b] == INT32_MIN) {
                return reject(reason, "value out of range");
            }
        }
        uint32_t groups = m->params.roc_hist.groups;
        if (r->body.roc_hist.group >= (groups != 0 ? groups : 1u)) {
            return reject(reason, "group out of range");
        }
        return DPM_OK;
    }
#endif
#if DPM_MECH_DPAUC
    if (m->campaign.mechanism == DPM_MECH_ID_DPAUC) {
        const dpm_dpauc_report_t *d = &r->body.dpauc;
        if (d->n != m->params.dpauc.n) {
            return reject(reason, "wrong number of thresholds");
        }
        for (uint32_t i = 0; i < d->n; i++) {
            if (d->tp[i] == INT32_MIN || d->fp[i] == INT32_MIN || d->tn[i] == INT32_MIN ||
                d->fn[i] == INT32_MIN) {
                return reject(reason, "value out of range");
            }
        }
        return DPM_OK;
    }
#endif
#if DPM_MECH_USTAT
    if (m->campaign.mechanism == DPM_MECH_ID_USTAT_BINS) {
        const dpm_ustat_bins_t *u = &m->params.ustat_bins;
        if (r->body.ustat_bins.value >= u->grr.k) {
            return reject(reason, "value out of range");
        }
        if (r->body.ustat_bins.label > (u->kernel == DPM_USTAT_AUC ? 1u : 0u)) {
            return reject(reason, "label out of range");
        }
        return DPM_OK;
    }
    if (m->campaign.mechanism == DPM_MECH_ID_USTAT_TREE) {
        const dpm_ustat_tree_t *u = &m->params.ustat_tree;
        const dpm_ustat_tree_report_t *t = &r->body.ustat_tree;
        if (t->label > 1) {
            return reject(reason, "label out of range");
        }
        if (t->level < 1 || t->level > u->depth) {
            return reject(reason, "level out of range");
        }
        int grr = t->level <= u->grr_levels;
        if ((grr && (t->row != 0 || (t->value >> t->level) != 0)) ||
            (!grr && ((t->row >> t->level) != 0 || t->value > 1))) {
            return reject(reason, "value out of range");
        }
        return DPM_OK;
    }
#endif
#if DPM_MECH_TUPLE
    if (is_tuple(m->campaign.mechanism)) {
        const dpm_tuple_t *t = &m->params.tuple;
        if (r->body.tuple.nmetrics != t->nmetrics) {
            return reject(reason, "wrong number of values");
        }
        if (r->body.tuple.group >= t->groups) {
            return reject(reason, "group out of range");
        }
        for (uint32_t i = 0; i < r->body.tuple.nmetrics; i++) {
            int32_t v = r->body.tuple.value[i];
            if (t->kind == DPM_TUPLE_MR && v != 1 && v != -1) {
                return reject(reason, "value out of range");
            }
            if (t->kind == DPM_TUPLE_ML && v == INT32_MIN) {
                return reject(reason, "value out of range");
            }
        }
        return DPM_OK;
    }
#endif
#if DPM_MECH_FEDAUC
    if (dpm_fedauc_is((uint32_t)m->campaign.mechanism)) {
        return dpm_fedauc_check_body(m, r->eps, &r->body.fedauc, reason);
    }
#endif
    return reject(reason, "mechanism not available in this build");
}
