/* SPDX-License-Identifier: Apache-2.0 */
/* FedAUC on the wire: the upload and the rank reply, whose per-example arrays stream through
 * nanopb callbacks from and into the caller's buffers (no message-sized struct, no copy), and
 * the report body. */
#include "dpm_internal.h"

#include "core/wire.h"

#include <pb_decode.h>
#include <pb_encode.h>

#include "dpm.pb.h"
#include "dpm/expert/fedauc.h"
#include "dpm/expert/mech.h"
#include "mech/fedauc_internal.h"

typedef char
    token_fits[sizeof(((dpm_v1_FedaucUpload *)0)->upload_token) == DPM_FEDAUC_TOKEN_BYTES &&
                       sizeof(((dpm_v1_FedaucRankReply *)0)->upload_token) ==
                           DPM_FEDAUC_TOKEN_BYTES &&
                       sizeof(((dpm_v1_FedaucBody *)0)->upload_token) == DPM_FEDAUC_TOKEN_BYTES
                   ? 1
                   : -1];
typedef char variants_match[(dpm_v1_Mechanism_FEDAUC_RR == (int)DPM_MECH_ID_FEDAUC_RR &&
                             dpm_v1_Mechanism_FEDAUC_LAP == (int)DPM_MECH_ID_FEDAUC_LAP &&
                             dpm_v1_FedaucVariant_FEDAUC_LOCAL_LAPLACE == (int)DPM_FEDAUC_LOCAL &&
                             dpm_v1_FedaucVariant_FEDAUC_ADAPTIVE == (int)DPM_FEDAUC_ADAPTIVE)
                                ? 1
                                : -1];

/* ---- the packed uint32 arrays --------------------------------------------------------------- */

typedef struct {
    const uint32_t *v;
    uint32_t n;
} array_out_t;

typedef struct {
    uint32_t *v32; /* one of the two */
    uint64_t *v64; /* (value << 32 | index) */
    uint32_t cap;
    uint32_t count;
} array_in_t;

static bool encode_array(pb_ostream_t *stream, const pb_field_t *field, void *const *arg)
{
    const array_out_t *a = (const array_out_t *)*arg;
    if (a->n == 0) {
        return true;
    }
    pb_ostream_t sizing = PB_OSTREAM_SIZING; /* the packed payload's length, by nanopb itself */
    for (uint32_t i = 0; i < a->n; i++) {
        if (!pb_encode_varint(&sizing, a->v[i])) {
            return false;
        }
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

/* Packed or not: nanopb hands a packed array as one substream, an unpacked value alone. */
static bool decode_array(pb_istream_t *stream, const pb_field_t *field, void **arg)
{
    (void)field;
    array_in_t *a = (array_in_t *)*arg;
    while (stream->bytes_left > 0) {
        uint32_t v = 0;
        if (!pb_decode_varint32(stream, &v) || a->count >= a->cap) {
            return false;
        }
        if (a->v64 != NULL) {
            a->v64[a->count] = ((uint64_t)v << 32) | a->count;
        } else {
            a->v32[a->count] = v;
        }
        a->count++;
    }
    return true;
}

/* ---- upload ------------------------------------------------------------------------------------
 */

typedef char upload_tags[dpm_v1_FedaucUpload_campaign_id_tag == 1 &&
                                 dpm_v1_FedaucUpload_mechanism_tag == 2 &&
                                 dpm_v1_FedaucUpload_params_hash_tag == 3 &&
                                 dpm_v1_FedaucUpload_upload_token_tag == 4 &&
                                 dpm_v1_FedaucUpload_scores_tag == 5
                             ? 1
                             : -1];

/* The device's upload, as pb_encode writes a FedaucUpload (zero scalars omitted, the token
 * always, the scores packed), straight into the buffer (core/wire.h): a device image links no
 * nanopb encoder. test_wire's golden uploads check the bytes. */
dpm_status_t dpm_fedauc_upload_encode(const dpm_fedauc_session_t *s, uint8_t *buf, size_t cap,
                                      size_t *len)
{
    if (s == NULL || buf == NULL || len == NULL || s->state != DPM_FEDAUC_UPLOADED ||
        s->buf.scores == NULL) {
        return DPM_ERR_PARAM;
    }
    dpm_wire_t w = dpm_wire_to(buf, cap);
    dpm_wire_uint_field(&w, dpm_v1_FedaucUpload_campaign_id_tag, s->campaign_id);
    dpm_wire_uint_field(&w, dpm_v1_FedaucUpload_mechanism_tag, (uint32_t)s->mechanism);
    dpm_wire_fixed32_field(&w, dpm_v1_FedaucUpload_params_hash_tag, s->params_hash);
    dpm_wire_fixed_bytes_field(&w, dpm_v1_FedaucUpload_upload_token_tag, s->token,
                               DPM_FEDAUC_TOKEN_BYTES);
    if (s->n > 0) {
        uint32_t payload = 0;
        for (uint32_t i = 0; i < s->n; i++) {
            payload += dpm_wire_varint_len(s->buf.scores[i]);
        }
        dpm_wire_message(&w, dpm_v1_FedaucUpload_scores_tag, payload);
        for (uint32_t i = 0; i < s->n; i++) {
            dpm_wire_varint(&w, s->buf.scores[i]);
        }
    }
    if (!w.ok) {
        return DPM_ERR_BUFFER;
    }
    *len = (size_t)(w.p - buf);
    return DPM_OK;
}

dpm_status_t dpm_fedauc_upload_decode(const uint8_t *buf, size_t len, dpm_fedauc_header_t *h,
                                      uint32_t *scores, uint32_t cap)
{
    if (buf == NULL || h == NULL || (scores == NULL && cap != 0)) {
        return DPM_ERR_PARAM;
    }
    dpm_v1_FedaucUpload msg = dpm_v1_FedaucUpload_init_zero;
    array_in_t in = {scores, NULL, cap, 0};
    msg.scores.funcs.decode = decode_array;
    msg.scores.arg = &in;
    pb_istream_t s = pb_istream_from_buffer(buf, len);
    if (!pb_decode(&s, dpm_v1_FedaucUpload_fields, &msg) || s.bytes_left != 0) {
        return DPM_ERR_PROTOCOL;
    }
    memset(h, 0, sizeof(*h));
    h->campaign_id = msg.campaign_id;
    h->mechanism = (uint32_t)msg.mechanism;
    h->params_hash = msg.params_hash;
    memcpy(h->token, msg.upload_token, DPM_FEDAUC_TOKEN_BYTES);
    h->n = in.count;
    return DPM_OK;
}

/* ---- rank reply ---------------------------------------------------------------------------------
 */

dpm_status_t dpm_fedauc_reply_encode(const dpm_fedauc_header_t *h, const uint32_t *ranks2,
                                     uint8_t *buf, size_t cap, size_t *len)
{
    if (h == NULL || buf == NULL || len == NULL || (ranks2 == NULL && h->n != 0)) {
        return DPM_ERR_PARAM;
    }
    dpm_v1_FedaucRankReply msg = dpm_v1_FedaucRankReply_init_zero;
    array_out_t ranks = {ranks2, h->n};
    msg.campaign_id = h->campaign_id;
    msg.mechanism = (dpm_v1_Mechanism)h->mechanism;
    msg.params_hash = h->params_hash;
    memcpy(msg.upload_token, h->token, DPM_FEDAUC_TOKEN_BYTES);
    msg.total = h->total;
    msg.ranks2.funcs.encode = encode_array;
    msg.ranks2.arg = &ranks;
    pb_ostream_t out = pb_ostream_from_buffer(buf, cap);
    if (!pb_encode(&out, dpm_v1_FedaucRankReply_fields, &msg)) {
        return DPM_ERR_BUFFER;
    }
    *len = out.bytes_written;
    return DPM_OK;
}

static dpm_status_t reply_decode(const uint8_t *buf, size_t len, dpm_fedauc_header_t *h,
                                 array_in_t *in)
{
    dpm_v1_FedaucRankReply msg = dpm_v1_FedaucRankReply_init_zero;
    msg.ranks2.funcs.decode = decode_array;
    msg.ranks2.arg = in;
    pb_istream_t s = pb_istream_from_buffer(buf, len);
    if (!pb_decode(&s, dpm_v1_FedaucRankReply_fields, &msg) || s.bytes_left != 0) {
        return DPM_ERR_PROTOCOL;
    }
    memset(h, 0, sizeof(*h));
    h->campaign_id = msg.campaign_id;
    h->mechanism = (uint32_t)msg.mechanism;
    h->params_hash = msg.params_hash;
    memcpy(h->token, msg.upload_token, DPM_FEDAUC_TOKEN_BYTES);
    h->total = msg.total;
    h->n = in->count;
    return DPM_OK;
}

dpm_status_t dpm_fedauc_reply_decode(const uint8_t *buf, size_t len, dpm_fedauc_header_t *h,
                                     uint32_t *ranks2, uint32_t cap)
{
    if (buf == NULL || h == NULL || (ranks2 == NULL && cap != 0)) {
        return DPM_ERR_PARAM;
    }
    array_in_t in = {ranks2, NULL, cap, 0};
    return reply_decode(buf, len, h, &in);
}

dpm_status_t dpm_fedauc_reply_decode_work(const uint8_t *buf, size_t len, dpm_fedauc_header_t *h,
                                          uint64_t *work, uint32_t cap)
{
    array_in_t in = {NULL, work, cap, 0};
    return reply_decode(buf, len, h, &in);
}

/* ---- report body ---------------------------------------------------------------------------- */

void dpm_fedauc_body_to_wire(const dpm_fedauc_report_t *b, dpm_v1_FedaucBody *w)
{
    memcpy(w->upload_token, b->upload_token, DPM_FEDAUC_TOKEN_BYTES);
    w->n = b->n;
    w->total = b->total;
    w->local_p = b->local_p;
    w->local_sum2 = b->local_sum2;
    w->t = b->t;
    w->sum_rank2 = b->sum_rank2;
    w->sensitivity = b->sensitivity;
    w->eps_p_q16 = b->eps_p;
}

void dpm_fedauc_body_from_wire(const dpm_v1_FedaucBody *w, dpm_fedauc_report_t *b)
{
    memcpy(b->upload_token, w->upload_token, DPM_FEDAUC_TOKEN_BYTES);
    b->n = w->n;
    b->total = w->total;
    b->local_p = w->local_p;
    b->local_sum2 = w->local_sum2;
    b->t = w->t;
    b->sum_rank2 = w->sum_rank2;
    b->sensitivity = w->sensitivity;
    b->eps_p = w->eps_p_q16;
}
