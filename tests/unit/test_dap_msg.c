/* SPDX-License-Identifier: Apache-2.0 */
/* The aggregator-side DAP messages (host-sim/aggregator/dap_msg.h):
 *   - byte-exact encodings written by hand from the pinned draft's structure definitions
 *     (AggregationJobInitReq, AggregationJobResp, CollectionJobResp, and the CollectionJobReq
 *     and CollectionJobResp of the draft's "Collecting Results" example, whose values it gives);
 *   - a round trip of every message, lists of 0, 1 and 7 items: decode, walk, re-encode to the
 *     same bytes;
 *   - every encoding truncated at every length is refused (each decoded from a heap copy of
 *     exactly that many bytes, so a read past it is a sanitizer or valgrind error), except where
 *     the draft's framing makes the shorter body a message too (a list to the message's end cut
 *     at an item boundary: it decodes with fewer items); a trailing byte is refused; a flipped
 *     length prefix is refused; unknown enum values, extensions out of order, step 0, duplicate
 *     HPKE ids, short vectors are refused with DPM_ERR_PROTOCOL;
 *   - encoders: a short buffer is DPM_ERR_BUFFER with the size needed and the buffer untouched;
 *     values the draft forbids are DPM_ERR_PARAM. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "aggregator/dap_msg.h"
#include "dap_msg_roundtrip.h"

#define BIG 4096u

static const uint8_t RID_A[16] = {0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
                                  0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f};
static const uint8_t RID_B[16] = {0xb0, 0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7,
                                  0xb8, 0xb9, 0xba, 0xbb, 0xbc, 0xbd, 0xbe, 0xbf};
static const uint8_t RID_C[16] = {0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7,
                                  0xc8, 0xc9, 0xca, 0xcb, 0xcc, 0xcd, 0xce, 0xcf};

static dpm_span_t span(const void *p, size_t n)
{
    dpm_span_t s = {p, n};
    return s;
}

static void same_span(dpm_span_t a, const void *p, size_t n)
{
    assert_int_equal(a.len, n);
    if (n > 0) {
        assert_memory_equal(a.p, p, n);
    }
}

/* ---- media types -------------------------------------------------------------------------- */

static void media_types(void **state)
{
    (void)state;
    static const char *const names[DAP_MSG_TYPES] = {
        "hpke-config-list",         "upload-req",           "upload-errors",
        "aggregation-job-init-req", "aggregation-job-resp", "aggregation-job-continue-req",
        "aggregate-share-req",      "aggregate-share",      "collection-job-req",
        "collection-job-resp"};
    for (int i = 0; i < (int)DAP_MSG_TYPES; i++) {
        char want[96], v[128];
        snprintf(want, sizeof(want), "application/ppm-dap;message=%s", names[i]);
        assert_string_equal(dap_msg_media_type[i], want);
        assert_int_equal(dap_msg_type_of(want, strlen(want)), i);
        snprintf(v, sizeof(v), "%s;version=18", want);
        assert_int_equal(dap_msg_type_of(v, strlen(v)), i);
        snprintf(v, sizeof(v), "%sx", want);
        assert_int_equal(dap_msg_type_of(v, strlen(v)), -1);
        assert_int_equal(dap_msg_type_of(want, strlen(want) - 1), -1);
    }
    assert_int_equal(dap_msg_type_of("application/octet-stream", 24), -1);
    assert_int_equal(dap_msg_type_of(NULL, 0), -1);
}

/* ---- byte-exact encodings ----------------------------------------------------------------- */

/* AggregationJobInitReq: verification_key_id 7, agg_param empty, one extension (type 1, data
 * 0x42), one VerifyInit: report RID_A at time 0x01020304, no public extensions, public share
 * AA BB, HpkeCiphertext config 5, enc E1 E2, payload C1 C2 C3; verifier message 99. */
static const uint8_t INIT_REQ[] = {
    0x07,                                           /* verification_key_id */
    0x00, 0x00, 0x00, 0x00,                         /* agg_param<0..2^32-1> */
    0x00, 0x05, 0x00, 0x01, 0x00, 0x01, 0x42,       /* extensions<0..2^16-1> */
    0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, /* report_id */
    0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, /* */
    0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04, /* time */
    0x00, 0x00,                                     /* public_extensions */
    0x00, 0x00, 0x00, 0x02, 0xaa, 0xbb,             /* public_share<0..2^32-1> */
    0x05,                                           /* config_id */
    0x00, 0x02, 0xe1, 0xe2,                         /* enc<1..2^16-1> */
    0x00, 0x00, 0x00, 0x03, 0xc1, 0xc2, 0xc3,       /* payload<1..2^32-1> */
    0x00, 0x00, 0x00, 0x01, 0x99,                   /* VerifyInit.payload<1..2^32-1> */
};

static void init_req_exact(void **state)
{
    (void)state;
    uint8_t buf[BIG];
    size_t n = 0, m = 0;
    static const uint8_t ext_data[] = {0x42}, ps[] = {0xaa, 0xbb}, enc[] = {0xe1, 0xe2},
                         pl[] = {0xc1, 0xc2, 0xc3}, vm[] = {0x99};
    dap_ext_t e = {1, span(ext_data, 1)};
    uint8_t ext[16];
    size_t ext_len = 0;
    assert_int_equal(dap_msg_ext_list_encode(&e, 1, ext, sizeof(ext), &ext_len), DPM_OK);
    dap_agg_job_init_req_t head = {0};
    head.verification_key_id = 7;
    head.extensions.bytes = span(ext, ext_len);
    assert_int_equal(dap_msg_agg_job_init_req_encode(&head, buf, sizeof(buf), &n), DPM_OK);
    dap_verify_init_t vi = {0};
    vi.report_share.metadata.report_id = RID_A;
    vi.report_share.metadata.time = 0x01020304u;
    vi.report_share.public_share = span(ps, 2);
    vi.report_share.share.config_id = 5;
    vi.report_share.share.enc = span(enc, 2);
    vi.report_share.share.payload = span(pl, 3);
    vi.payload = span(vm, 1);
    assert_int_equal(dap_msg_verify_init_encode(&vi, buf + n, sizeof(buf) - n, &m), DPM_OK);
    assert_int_equal(n + m, sizeof(INIT_REQ));
    assert_memory_equal(buf, INIT_REQ, sizeof(INIT_REQ));

    dap_agg_job_init_req_t d;
    const char *why = NULL;
    assert_int_equal(dap_msg_agg_job_init_req_decode(INIT_REQ, sizeof(INIT_REQ), &d, &why), DPM_OK);
    assert_int_equal(d.verification_key_id, 7);
    assert_int_equal(d.agg_param.len, 0);
    assert_int_equal(d.extensions.n, 1);
    assert_int_equal(d.verify_inits.n, 1);
    size_t pos = 0;
    dap_verify_init_t g;
    assert_int_equal(dap_msg_next_verify_init(&d.verify_inits, &pos, &g), DPM_OK);
    assert_memory_equal(g.report_share.metadata.report_id, RID_A, 16);
    assert_true(g.report_share.metadata.time == 0x01020304u);
    same_span(g.report_share.public_share, ps, 2);
    assert_int_equal(g.report_share.share.config_id, 5);
    same_span(g.report_share.share.enc, enc, 2);
    same_span(g.report_share.share.payload, pl, 3);
    same_span(g.payload, vm, 1);
    /* views into the input, not copies */
    assert_ptr_equal(g.payload.p, INIT_REQ + sizeof(INIT_REQ) - 1);
    assert_int_equal(dap_msg_next_verify_init(&d.verify_inits, &pos, &g), DPM_ERR_RANGE);
    pos = 0;
    dap_ext_t ge;
    assert_int_equal(dap_msg_next_ext(&d.extensions, &pos, &ge), DPM_OK);
    assert_int_equal(ge.type, 1);
    same_span(ge.data, ext_data, 1);
}

/* AggregationJobResp: continue (RID_A, payload P1 P2), finish (RID_B), reject (RID_C,
 * vdaf_verify_error). */
static const uint8_t RESP[] = {
    0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b,
    0x1c, 0x1d, 0x1e, 0x1f, 0x00, 0x00, 0x00, 0x00, 0x02, 0x91, 0x92, /* continue,
                                                                         payload<1..2^32-1> */
    0xb0, 0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xbb,
    0xbc, 0xbd, 0xbe, 0xbf, 0x01, /* finish */
    0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xcb,
    0xcc, 0xcd, 0xce, 0xcf, 0x02, 0x06, /* reject, vdaf_verify_error */
};

static void resp_exact(void **state)
{
    (void)state;
    static const uint8_t p[] = {0x91, 0x92};
    dap_verify_resp_t r[3] = {
        {RID_A, DAP_VERIFY_CONTINUE, {p, 2}, 0},
        {RID_B, DAP_VERIFY_FINISH, {NULL, 0}, 0},
        {RID_C, DAP_VERIFY_REJECT, {NULL, 0}, DAP_REPORT_ERROR_VDAF_VERIFY_ERROR}};
    uint8_t buf[BIG];
    size_t n = 0;
    for (int i = 0; i < 3; i++) {
        size_t m = 0;
        assert_int_equal(dap_msg_verify_resp_encode(&r[i], buf + n, sizeof(buf) - n, &m), DPM_OK);
        n += m;
    }
    assert_int_equal(n, sizeof(RESP));
    assert_memory_equal(buf, RESP, sizeof(RESP));
    dap_list_t l;
    assert_int_equal(dap_msg_agg_job_resp_decode(RESP, sizeof(RESP), &l, NULL), DPM_OK);
    assert_int_equal(l.n, 3);
    size_t pos = 0;
    for (int i = 0; i < 3; i++) {
        dap_verify_resp_t g;
        assert_int_equal(dap_msg_next_verify_resp(&l, &pos, &g), DPM_OK);
        assert_memory_equal(g.report_id, r[i].report_id, 16);
        assert_int_equal(g.type, r[i].type);
        same_span(g.payload, r[i].payload.p, r[i].payload.len);
        assert_int_equal(g.report_error, r[i].report_error);
    }
}

/* The draft's "Collecting Results" example: a CollectionJobReq of a time-interval query
 * (start 16595440 = 0xfd39f0, duration 1, agg_param empty, no extensions) and a
 * CollectionJobResp (report_count 1000, the same interval; the ciphertexts, "...", ours). */
static const uint8_t COLL_REQ[] = {
    0x01,       /* batch_mode time_interval */
    0x00, 0x10, /* config<0..2^16-1>: TimeIntervalQueryConfig */
    0x00, 0x00, 0x00, 0x00, 0x00, 0xfd, 0x39, 0xf0, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, /* agg_param */
    0x00, 0x00,                                                 /* extensions */
};
static const uint8_t COLL_RESP[] = {
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8, /* report_count */
    0x00, 0x00, 0x00, 0x00, 0x00, 0xfd, 0x39, 0xf0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x01, 0x01, 0x00, 0x01, 0xe1, 0x00, 0x00, 0x00, 0x02, 0x5a, 0x5b, /* leader: id 1, enc,
                                                                               payload */
    0x01, 0x00, 0x02, 0xe2, 0xe3, 0x00, 0x00, 0x00, 0x01, 0x6a,             /* helper */
};

static void collection_exact(void **state)
{
    (void)state;
    uint8_t buf[BIG];
    size_t n = 0;
    dap_collection_job_req_t q = {0};
    q.query.batch_mode = DPM_DAP_BATCH_TIME_INTERVAL;
    q.query.interval.start = 16595440u;
    q.query.interval.duration = 1;
    assert_int_equal(dap_msg_collection_job_req_encode(&q, buf, sizeof(buf), &n), DPM_OK);
    assert_int_equal(n, sizeof(COLL_REQ));
    assert_memory_equal(buf, COLL_REQ, n);
    dap_collection_job_req_t dq;
    assert_int_equal(dap_msg_collection_job_req_decode(COLL_REQ, sizeof(COLL_REQ), &dq, NULL),
                     DPM_OK);
    assert_true(dq.query.interval.start == 16595440u && dq.query.interval.duration == 1u);
    assert_ptr_equal(dq.encoded.p, COLL_REQ);
    assert_int_equal(dq.encoded.len, sizeof(COLL_REQ));

    static const uint8_t le[] = {0xe1}, lp[] = {0x5a, 0x5b}, he[] = {0xe2, 0xe3}, hp[] = {0x6a};
    dap_collection_job_resp_t r = {
        1000, {16595440u, 1}, {1, {le, 1}, {lp, 2}}, {1, {he, 2}, {hp, 1}}};
    assert_int_equal(dap_msg_collection_job_resp_encode(&r, buf, sizeof(buf), &n), DPM_OK);
    assert_int_equal(n, sizeof(COLL_RESP));
    assert_memory_equal(buf, COLL_RESP, n);
    dap_collection_job_resp_t d;
    assert_int_equal(dap_msg_collection_job_resp_decode(COLL_RESP, sizeof(COLL_RESP), &d, NULL),
                     DPM_OK);
    assert_true(d.report_count == 1000u && d.interval.start == 16595440u);
    same_span(d.leader_share.payload, lp, 2);
    same_span(d.helper_share.enc, he, 2);
}

/* ---- samples of every message, for the round trips and the refusals ------------------------ */

#define MAXB 16
typedef struct {
    const char *name;
    decode_fn dec;
    uint8_t b[BIG];
    size_t n;
    size_t bounds[MAXB]; /* lengths at which a shorter body is a message too */
    size_t nbounds;
} sample_t;

static uint8_t EXTS[64];
static size_t EXTS_LEN;

static void make_exts(size_t k)
{
    static const uint8_t d[] = {1, 2, 3};
    dap_ext_t e[8];
    for (size_t i = 0; i < k; i++) {
        e[i].type = (uint16_t)(3u * i + 1u);
        e[i].data = span(d, i % 4u);
    }
    assert_int_equal(dap_msg_ext_list_encode(e, k, EXTS, sizeof(EXTS), &EXTS_LEN), DPM_OK);
}

static const uint8_t PS[] = {0xaa, 0xbb, 0xcc}, ENC[] = {0xe0, 0xe1, 0xe2, 0xe3},
                     PAY[] = {0x50, 0x51, 0x52, 0x53, 0x54}, AGGP[] = {0x0a, 0x0b};

static dap_report_share_t report_share(size_t i, size_t next)
{
    dap_report_share_t s = {0};
    make_exts(next);
    s.metadata.report_id = i % 3 == 0 ? RID_A : i % 3 == 1 ? RID_B : RID_C;
    s.metadata.time = 1659544u + i;
    s.metadata.public_ext.bytes = span(EXTS, EXTS_LEN);
    s.public_share = span(PS, i % 4u);
    s.share.config_id = (uint8_t)i;
    s.share.enc = span(ENC, 1 + i % 4u);
    s.share.payload = span(PAY, 1 + i % 5u);
    return s;
}

/* Encodes a message with k list items into s (and its item boundaries). */
static void sample_init(sample_t *s, size_t k)
{
    uint8_t ext[64];
    size_t ext_len = 0, m = 0;
    make_exts(k < 3 ? k : 3);
    memcpy(ext, EXTS, EXTS_LEN);
    ext_len = EXTS_LEN;
    dap_agg_job_init_req_t h = {0};
    h.verification_key_id = (uint8_t)k;
    h.agg_param = span(AGGP, k % 3u);
    h.extensions.bytes = span(ext, ext_len);
    s->name = "AggregationJobInitReq";
    s->dec = d_init;
    assert_int_equal(dap_msg_agg_job_init_req_encode(&h, s->b, BIG, &s->n), DPM_OK);
    s->nbounds = 0;
    s->bounds[s->nbounds++] = s->n;
    for (size_t i = 0; i < k; i++) {
        dap_verify_init_t v = {report_share(i, i % 3u), span(PAY, 1 + i % 5u)};
        assert_int_equal(dap_msg_verify_init_encode(&v, s->b + s->n, BIG - s->n, &m), DPM_OK);
        s->n += m;
        s->bounds[s->nbounds++] = s->n;
    }
}

static void sample_resp(sample_t *s, size_t k)
{
    s->name = "AggregationJobResp";
    s->dec = d_resp;
    s->n = 0;
    s->nbounds = 0;
    s->bounds[s->nbounds++] = 0;
    for (size_t i = 0; i < k; i++) {
        dap_verify_resp_t r = {i % 2 ? RID_B : RID_A, (uint8_t)(i % 3u), span(PAY, 1 + i % 5u),
                               (uint8_t)(1u + i % DAP_REPORT_ERROR_MAX)};
        size_t m = 0;
        assert_int_equal(dap_msg_verify_resp_encode(&r, s->b + s->n, BIG - s->n, &m), DPM_OK);
        s->n += m;
        s->bounds[s->nbounds++] = s->n;
    }
}

static void sample_cont(sample_t *s, size_t k)
{
    dap_agg_job_continue_req_t h = {(uint16_t)(1u + k), {{NULL, 0}, 0}};
    s->name = "AggregationJobContinueReq";
    s->dec = d_cont;
    assert_int_equal(dap_msg_agg_job_continue_req_encode(&h, s->b, BIG, &s->n), DPM_OK);
    s->nbounds = 0;
    s->bounds[s->nbounds++] = s->n;
    for (size_t i = 0; i < k; i++) {
        dap_verify_continue_t c = {i % 2 ? RID_C : RID_A, span(PAY, 1 + i % 5u)};
        size_t m = 0;
        assert_int_equal(dap_msg_verify_continue_encode(&c, s->b + s->n, BIG - s->n, &m), DPM_OK);
        s->n += m;
        s->bounds[s->nbounds++] = s->n;
    }
}

static void sample_upl(sample_t *s, size_t k)
{
    s->name = "UploadErrors";
    s->dec = d_upl;
    s->n = 0;
    s->nbounds = 0;
    s->bounds[s->nbounds++] = 0;
    for (size_t i = 0; i < k; i++) {
        dap_upload_status_t u = {i % 2 ? RID_B : RID_C, (uint8_t)(1u + i % DAP_REPORT_ERROR_MAX)};
        size_t m = 0;
        assert_int_equal(dap_msg_upload_status_encode(&u, s->b + s->n, BIG - s->n, &m), DPM_OK);
        s->n += m;
        s->bounds[s->nbounds++] = s->n;
    }
}

static void sample_hpke_list(sample_t *s, size_t k)
{
    dpm_hpke_config_t c[8];
    for (size_t i = 0; i < k; i++) {
        memset(&c[i], 0, sizeof(c[i]));
        c[i].id = (uint8_t)(200u + i);
        c[i].kem_id = DPM_HPKE_KEM_X25519_SHA256;
        c[i].kdf_id = DPM_HPKE_KDF_HKDF_SHA256;
        c[i].aead_id = i % 2 ? DPM_HPKE_AEAD_CHACHA20_POLY1305 : DPM_HPKE_AEAD_AES_128_GCM;
        memset(c[i].public_key, (int)(i + 1), DPM_HPKE_NPK);
    }
    s->name = "HpkeConfigList";
    s->dec = d_hpke_list;
    s->nbounds = 0;
    assert_int_equal(dap_msg_hpke_config_list_encode(c, k, s->b, BIG, &s->n), DPM_OK);
}

static void sample_ext(sample_t *s, size_t k)
{
    make_exts(k);
    memcpy(s->b, EXTS, EXTS_LEN);
    s->n = EXTS_LEN;
    s->name = "extension list";
    s->dec = d_ext;
    /* a list's content: cut at an extension's end it is a (shorter) list */
    s->nbounds = 0;
    for (size_t pos = 0; pos <= s->n && s->nbounds < MAXB;) {
        s->bounds[s->nbounds++] = pos;
        if (pos == s->n) {
            break;
        }
        pos += 4u + (size_t)((s->b[pos + 2] << 8) | s->b[pos + 3]);
    }
}

static dap_collection_job_req_t coll_req(size_t k)
{
    dap_collection_job_req_t q = {0};
    make_exts(k);
    q.query.batch_mode = DPM_DAP_BATCH_TIME_INTERVAL;
    q.query.interval.start = 1659540u;
    q.query.interval.duration = 100u + k;
    q.agg_param = span(AGGP, k % 3u);
    q.extensions.bytes = span(EXTS, EXTS_LEN);
    return q;
}

static const uint8_t BATCH_ID[32] = {
    0x1f, 0x1e, 0x1d, 0x1c, 0x1b, 0x1a, 0x19, 0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11, 0x10,
    0x0f, 0x0e, 0x0d, 0x0c, 0x0b, 0x0a, 0x09, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0x00};
static const uint8_t CHECKSUM[32] = {0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f};

static void sample_fixed(sample_t *s, int which, size_t k)
{
    s->nbounds = 0;
    size_t *n = &s->n;
    switch (which) {
    case 0: {
        dap_hpke_ct_t c = {(uint8_t)k, span(ENC, 1 + k % 4u), span(PAY, 1 + k % 5u)};
        s->name = "HpkeCiphertext";
        s->dec = d_ct;
        assert_int_equal(dap_msg_hpke_ct_encode(&c, s->b, BIG, n), DPM_OK);
        break;
    }
    case 1: {
        dap_hpke_ct_t c = {(uint8_t)k, span(ENC, 4), span(PAY, 5)};
        s->name = "AggregateShare";
        s->dec = d_agg_share;
        assert_int_equal(dap_msg_agg_share_encode(&c, s->b, BIG, n), DPM_OK);
        break;
    }
    case 2: {
        dap_report_share_t r = report_share(k, k);
        s->name = "ReportMetadata";
        s->dec = d_md;
        assert_int_equal(dap_msg_report_metadata_encode(&r.metadata, s->b, BIG, n), DPM_OK);
        break;
    }
    case 3: {
        dap_report_share_t r = report_share(k, k);
        s->name = "ReportShare";
        s->dec = d_rs;
        assert_int_equal(dap_msg_report_share_encode(&r, s->b, BIG, n), DPM_OK);
        break;
    }
    case 4: {
        dap_batch_t b = {(uint8_t)(1u + k % 2u), {1659544u + k, 10u}, NULL};
        s->name = "Query";
        s->dec = d_query;
        assert_int_equal(dap_msg_query_encode(&b, s->b, BIG, n), DPM_OK);
        break;
    }
    case 5: {
        dap_batch_t b = {(uint8_t)(1u + k % 2u), {1659544u + k, 10u}, BATCH_ID};
        s->name = "BatchSelector";
        s->dec = d_sel;
        assert_int_equal(dap_msg_batch_selector_encode(&b, s->b, BIG, n), DPM_OK);
        break;
    }
    case 6: {
        dap_collection_job_req_t q = coll_req(k);
        s->name = "CollectionJobReq";
        s->dec = d_creq;
        assert_int_equal(dap_msg_collection_job_req_encode(&q, s->b, BIG, n), DPM_OK);
        break;
    }
    case 7: {
        dap_agg_share_req_t a = {coll_req(k), {1, {1659544u, 10u}, NULL}, 1000u + k, CHECKSUM};
        s->name = "AggregateShareReq";
        s->dec = d_sreq;
        assert_int_equal(dap_msg_agg_share_req_encode(&a, s->b, BIG, n), DPM_OK);
        break;
    }
    default: {
        dap_collection_job_resp_t r = {4000u + k,
                                       {1659547u, 10u},
                                       {1, span(ENC, 1 + k % 4u), span(PAY, 2)},
                                       {2, span(ENC, 2), span(PAY, 1 + k % 5u)}};
        s->name = "CollectionJobResp";
        s->dec = d_cresp;
        assert_int_equal(dap_msg_collection_job_resp_encode(&r, s->b, BIG, n), DPM_OK);
        break;
    }
    }
}

#define NFIXED 9
#define NLISTS 6
static const size_t SIZES[] = {0, 1, 7};

/* Every sample: list messages with 0, 1, 7 items (HpkeConfigList: 1, 2, 7), fixed ones thrice. */
static size_t all_samples(sample_t *out)
{
    size_t n = 0;
    for (size_t si = 0; si < 3; si++) {
        size_t k = SIZES[si];
        sample_init(&out[n++], k);
        sample_resp(&out[n++], k);
        sample_cont(&out[n++], k);
        sample_upl(&out[n++], k);
        sample_hpke_list(&out[n++], k == 0 ? 2 : k);
        sample_ext(&out[n++], k);
        for (int w = 0; w < NFIXED; w++) {
            sample_fixed(&out[n++], w, k);
        }
    }
    return n;
}

#define NSAMPLES (3 * (NLISTS + NFIXED))

static int is_bound(const sample_t *s, size_t len)
{
    for (size_t i = 0; i < s->nbounds; i++) {
        if (s->bounds[i] == len) {
            return 1;
        }
    }
    return 0;
}

static dpm_status_t decode_copy(const sample_t *s, const uint8_t *b, size_t len, const char **why)
{
    uint8_t *c = malloc(len ? len : 1);
    assert_non_null(c);
    if (len > 0) {
        memcpy(c, b, len);
    }
    dpm_status_t st = s->dec(len ? c : NULL, len, why);
    free(c);
    return st;
}

/* Decode, re-encode: the same bytes; walk the lists: their items, then DPM_ERR_RANGE. */
/* The shared round trip (dap_msg_roundtrip.h, the fuzz target's too), then what only the
 * unit test knows: the list encoders given whole arrays, the SDK's client-side pick of an
 * HpkeConfigList, the sample's checksum. */
static void reencode(const sample_t *s)
{
    dap_rt_t rt = {s->dec, s->b, s->n};
    dap_roundtrip(&rt);
    uint8_t out[BIG];
    size_t n = 0, pos = 0, count = 0;
    if (s->dec == d_hpke_list) {
        dap_list_t l;
        dpm_hpke_config_t c[8];
        assert_int_equal(dap_msg_hpke_config_list_decode(s->b, s->n, &l, NULL), DPM_OK);
        dap_hpke_config_view_t v;
        while (dap_msg_next_hpke_config(&l, &pos, &v) == DPM_OK) {
            c[count].id = v.id;
            c[count].kem_id = v.kem_id;
            c[count].kdf_id = v.kdf_id;
            c[count].aead_id = v.aead_id;
            assert_int_equal(v.public_key.len, DPM_HPKE_NPK);
            memcpy(c[count].public_key, v.public_key.p, DPM_HPKE_NPK);
            count++;
        }
        assert_int_equal(dap_msg_hpke_config_list_encode(c, count, out, BIG, &n), DPM_OK);
        assert_int_equal(n, s->n);
        assert_memory_equal(out, s->b, n);
        dpm_hpke_config_t pick;
        assert_int_equal(dpm_hpke_config_list_select(s->b, s->n, 0, &pick, NULL), DPM_OK);
        assert_int_equal(pick.id, c[0].id);
    } else if (s->dec == d_ext) {
        dap_list_t l;
        dap_ext_t e[8];
        assert_int_equal(dap_msg_ext_list_decode(s->b, s->n, &l, NULL), DPM_OK);
        while (dap_msg_next_ext(&l, &pos, &e[count]) == DPM_OK) {
            count++;
        }
        assert_int_equal(dap_msg_ext_list_encode(e, count, out, BIG, &n), DPM_OK);
        assert_int_equal(n, s->n);
        assert_memory_equal(out, s->b, n);
    } else if (s->dec == d_creq) {
        dap_collection_job_req_t m;
        assert_int_equal(dap_msg_collection_job_req_decode(s->b, s->n, &m, NULL), DPM_OK);
        assert_int_equal(m.encoded.len, s->n);
    } else if (s->dec == d_sreq) {
        dap_agg_share_req_t m;
        assert_int_equal(dap_msg_agg_share_req_decode(s->b, s->n, &m, NULL), DPM_OK);
        assert_memory_equal(m.checksum, CHECKSUM, 32);
    }
}

static void round_trips(void **state)
{
    (void)state;
    static sample_t s[NSAMPLES];
    size_t n = all_samples(s);
    assert_int_equal(n, NSAMPLES);
    for (size_t i = 0; i < n; i++) {
        reencode(&s[i]);
    }
}

/* Every shorter length refused (or, at a list's item boundary, a message with fewer items); a
 * trailing byte refused. */
static void truncations_and_trailing(void **state)
{
    (void)state;
    static sample_t s[NSAMPLES];
    size_t n = all_samples(s), refused = 0, bounded = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t len = 0; len < s[i].n; len++) {
            const char *why = NULL;
            dpm_status_t st = decode_copy(&s[i], s[i].b, len, &why);
            if (is_bound(&s[i], len)) {
                assert_int_equal(st, DPM_OK);
                bounded++;
            } else {
                if (st != DPM_ERR_PROTOCOL) {
                    print_error("%s cut at %zu of %zu: %d\n", s[i].name, len, s[i].n, st);
                }
                assert_int_equal(st, DPM_ERR_PROTOCOL);
                assert_non_null(why);
                refused++;
            }
        }
        uint8_t longer[BIG + 1];
        memcpy(longer, s[i].b, s[i].n);
        for (int v = 0; v < 2; v++) {
            longer[s[i].n] = (uint8_t)(v ? 0xff : 0x00);
            const char *why = NULL;
            dpm_status_t st = decode_copy(&s[i], longer, s[i].n + 1, &why);
            assert_int_equal(st, DPM_ERR_PROTOCOL);
            assert_non_null(why);
        }
    }
    print_message("# %zu truncations refused, %zu shorter messages accepted\n", refused, bounded);
    assert_true(refused > 2000); /* the loops ran: 2,396 at this commit */
}

/* A length prefix made larger than the input is refused. */
static void flipped_length_prefixes(void **state)
{
    (void)state;
    struct {
        decode_fn dec;
        const uint8_t *b;
        size_t n, off, width;
    } cases[] = {
        {d_init, INIT_REQ, sizeof(INIT_REQ), 1, 4},  /* agg_param */
        {d_init, INIT_REQ, sizeof(INIT_REQ), 5, 2},  /* extensions */
        {d_init, INIT_REQ, sizeof(INIT_REQ), 9, 2},  /* extension_data */
        {d_init, INIT_REQ, sizeof(INIT_REQ), 36, 2}, /* public_extensions */
        {d_init, INIT_REQ, sizeof(INIT_REQ), 38, 4}, /* public_share */
        {d_init, INIT_REQ, sizeof(INIT_REQ), 45, 2}, /* enc */
        {d_init, INIT_REQ, sizeof(INIT_REQ), 49, 4}, /* payload */
        {d_init, INIT_REQ, sizeof(INIT_REQ), 56, 4}, /* VerifyInit.payload */
        {d_resp, RESP, sizeof(RESP), 17, 4},         /* continue payload */
        {d_creq, COLL_REQ, sizeof(COLL_REQ), 1, 2},  /* query config */
        {d_creq, COLL_REQ, sizeof(COLL_REQ), 19, 4}, /* agg_param */
        {d_creq, COLL_REQ, sizeof(COLL_REQ), 23, 2}, /* extensions */
        {d_cresp, COLL_RESP, sizeof(COLL_RESP), 25, 2},
        {d_cresp, COLL_RESP, sizeof(COLL_RESP), 28, 4},
        {d_cresp, COLL_RESP, sizeof(COLL_RESP), 35, 2},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint8_t b[BIG];
        memcpy(b, cases[i].b, cases[i].n);
        for (int v = 0; v < 3; v++) {
            /* all ones; the true length plus one; the low byte's top bit flipped */
            if (v == 0) {
                memset(b + cases[i].off, 0xff, cases[i].width);
            } else if (v == 1) {
                memcpy(b, cases[i].b, cases[i].n);
                b[cases[i].off + cases[i].width - 1] =
                    (uint8_t)(cases[i].b[cases[i].off + cases[i].width - 1] + 1u);
            } else {
                memcpy(b, cases[i].b, cases[i].n);
                b[cases[i].off + cases[i].width - 1] ^= 0x80u;
            }
            sample_t s = {0};
            s.dec = cases[i].dec;
            const char *why = NULL;
            assert_int_equal(decode_copy(&s, b, cases[i].n, &why), DPM_ERR_PROTOCOL);
            assert_non_null(why);
        }
    }
}

static void expect_refused(decode_fn dec, const uint8_t *b, size_t n, const char *want_reason)
{
    sample_t s = {0};
    s.dec = dec;
    const char *why = NULL;
    assert_int_equal(decode_copy(&s, b, n, &why), DPM_ERR_PROTOCOL);
    assert_non_null(why);
    if (want_reason != NULL) {
        assert_ptr_equal(why, want_reason);
    }
}

/* Unknown enum values and what the draft declares MUST NOT. */
static void refusals(void **state)
{
    (void)state;
    uint8_t b[BIG];
    /* VerifyRespType 3; ReportError 0 (reserved) and 12 (above the registry) */
    memcpy(b, RESP, sizeof(RESP));
    b[16] = 3;
    expect_refused(d_resp, b, sizeof(RESP), NULL);
    memcpy(b, RESP, sizeof(RESP));
    b[sizeof(RESP) - 1] = 0;
    expect_refused(d_resp, b, sizeof(RESP), NULL);
    b[sizeof(RESP) - 1] = DAP_REPORT_ERROR_MAX + 1u;
    expect_refused(d_resp, b, sizeof(RESP), NULL);
    b[sizeof(RESP) - 1] = DAP_REPORT_ERROR_MAX;
    dap_list_t l;
    assert_int_equal(dap_msg_agg_job_resp_decode(b, sizeof(RESP), &l, NULL), DPM_OK);
    /* continue with an empty payload (<1..2^32-1>) */
    static const uint8_t empty_cont[] = {1,  2,  3,  4,  5,  6, 7, 8, 9, 10, 11,
                                         12, 13, 14, 15, 16, 0, 0, 0, 0, 0};
    expect_refused(d_resp, empty_cont, sizeof(empty_cont), NULL);
    /* batch mode 0 (reserved) and 3 in a query */
    memcpy(b, COLL_REQ, sizeof(COLL_REQ));
    b[0] = 0;
    expect_refused(d_creq, b, sizeof(COLL_REQ), NULL);
    b[0] = 3;
    expect_refused(d_creq, b, sizeof(COLL_REQ), NULL);
    /* leader_selected with a time-interval config: the wrong length for its mode */
    b[0] = DPM_DAP_BATCH_LEADER_SELECTED;
    expect_refused(d_creq, b, sizeof(COLL_REQ), NULL);
    /* a BatchSelector of time_interval with 32 bytes */
    static uint8_t sel[3 + 32] = {1, 0, 32};
    expect_refused(d_sel, sel, sizeof(sel), NULL);
    sel[0] = DPM_DAP_BATCH_LEADER_SELECTED;
    dap_batch_t bt;
    assert_int_equal(dap_msg_batch_selector_decode(sel, sizeof(sel), &bt, NULL), DPM_OK);
    assert_ptr_equal(bt.batch_id, sel + 3);
    /* extensions out of order (equal, then decreasing) in a job, a collection job, alone */
    static const uint8_t eq[] = {0, 2, 0, 0, 0, 2, 0, 0}, dec[] = {0, 3, 0, 0, 0, 2, 0, 0};
    expect_refused(d_ext, eq, sizeof(eq), dap_msg_reason_ext_order);
    expect_refused(d_ext, dec, sizeof(dec), dap_msg_reason_ext_order);
    uint8_t init[BIG];
    size_t n = 0;
    init[n++] = 0;
    memset(init + n, 0, 4);
    n += 4;
    init[n++] = 0;
    init[n++] = sizeof(dec);
    memcpy(init + n, dec, sizeof(dec));
    n += sizeof(dec);
    expect_refused(d_init, init, n, dap_msg_reason_ext_order);
    uint8_t creq[BIG];
    memcpy(creq, COLL_REQ, sizeof(COLL_REQ) - 2);
    n = sizeof(COLL_REQ) - 2;
    creq[n++] = 0;
    creq[n++] = sizeof(eq);
    memcpy(creq + n, eq, sizeof(eq));
    n += sizeof(eq);
    expect_refused(d_creq, creq, n, dap_msg_reason_ext_order);
    /* a report's public extensions out of order: framing accepted (a per-report error) */
    dap_report_metadata_t md = {RID_A, 1, {{dec, sizeof(dec)}, 0}};
    uint8_t mb[64];
    assert_int_equal(dap_msg_report_metadata_encode(&md, mb, sizeof(mb), &n), DPM_OK);
    assert_int_equal(dap_msg_report_metadata_decode(mb, n, &md, NULL), DPM_OK);
    assert_int_equal(md.public_ext.n, 2);
    /* continuation step 0 */
    static const uint8_t step0[] = {0, 0};
    expect_refused(d_cont, step0, sizeof(step0), NULL);
    /* UploadErrors not a multiple of 17 bytes; an unknown error */
    uint8_t up[18] = {0};
    up[16] = 1;
    expect_refused(d_upl, up, 18, NULL);
    expect_refused(d_upl, up, 16, NULL);
    up[16] = 0;
    expect_refused(d_upl, up, 17, NULL);
    /* HpkeConfigList: empty (<10..>), two entries with one id, an empty public key, 9 bytes */
    static const uint8_t empty_list[] = {0, 0};
    expect_refused(d_hpke_list, empty_list, sizeof(empty_list), NULL);
    sample_t hl;
    sample_hpke_list(&hl, 2);
    hl.b[2 + DPM_HPKE_CONFIG_BYTES] = hl.b[2];
    expect_refused(d_hpke_list, hl.b, hl.n, NULL);
    static const uint8_t nokey[] = {0, 10, 1, 0, 0x20, 0, 1, 0, 1, 0, 0, 0xaa};
    expect_refused(d_hpke_list, nokey, sizeof(nokey), NULL);
    expect_refused(d_hpke_list, nokey, sizeof(nokey) - 1, NULL);
    /* HpkeCiphertext with an empty enc or payload */
    static const uint8_t ct_noenc[] = {1, 0, 0, 0, 0, 0, 1, 0x55};
    static const uint8_t ct_nopay[] = {1, 0, 1, 0xee, 0, 0, 0, 0};
    expect_refused(d_ct, ct_noenc, sizeof(ct_noenc), NULL);
    expect_refused(d_ct, ct_nopay, sizeof(ct_nopay), NULL);
    /* NULL */
    assert_int_equal(dap_msg_agg_job_resp_decode(RESP, sizeof(RESP), NULL, NULL), DPM_ERR_PARAM);
    assert_int_equal(dap_msg_agg_job_resp_decode(NULL, 3, &l, NULL), DPM_ERR_PARAM);
}

static void encoder_refusals(void **state)
{
    (void)state;
    uint8_t buf[BIG], before[BIG];
    size_t n = 0;
    /* a short buffer: BUFFER with the size needed, nothing written; (NULL, 0) asks the size */
    dap_collection_job_req_t q = coll_req(2);
    assert_int_equal(dap_msg_collection_job_req_encode(&q, NULL, 0, &n), DPM_ERR_BUFFER);
    size_t need = n;
    memset(buf, 0x77, sizeof(buf));
    memcpy(before, buf, sizeof(buf));
    assert_int_equal(dap_msg_collection_job_req_encode(&q, buf, need - 1, &n), DPM_ERR_BUFFER);
    assert_int_equal(n, need);
    assert_memory_equal(buf, before, sizeof(buf));
    assert_int_equal(dap_msg_collection_job_req_encode(&q, buf, need, &n), DPM_OK);
    assert_int_equal(n, need);
    assert_int_equal(dap_msg_collection_job_req_encode(NULL, buf, need, &n), DPM_ERR_PARAM);
    assert_int_equal(dap_msg_collection_job_req_encode(&q, NULL, need, &n), DPM_ERR_PARAM);
    /* values the draft forbids */
    dap_verify_resp_t r = {RID_A, 3, {PAY, 1}, 0};
    assert_int_equal(dap_msg_verify_resp_encode(&r, buf, sizeof(buf), &n), DPM_ERR_PARAM);
    r.type = DAP_VERIFY_REJECT;
    assert_int_equal(dap_msg_verify_resp_encode(&r, buf, sizeof(buf), &n), DPM_ERR_PARAM);
    r.report_error = DAP_REPORT_ERROR_MAX + 1u;
    assert_int_equal(dap_msg_verify_resp_encode(&r, buf, sizeof(buf), &n), DPM_ERR_PARAM);
    r.type = DAP_VERIFY_CONTINUE;
    r.payload.len = 0;
    assert_int_equal(dap_msg_verify_resp_encode(&r, buf, sizeof(buf), &n), DPM_ERR_PARAM);
    r.report_id = NULL;
    r.type = DAP_VERIFY_FINISH;
    assert_int_equal(dap_msg_verify_resp_encode(&r, buf, sizeof(buf), &n), DPM_ERR_PARAM);
    dap_ext_t e[2] = {{5, {NULL, 0}}, {5, {NULL, 0}}};
    assert_int_equal(dap_msg_ext_list_encode(e, 2, buf, sizeof(buf), &n), DPM_ERR_PARAM);
    static const uint8_t unordered[] = {0, 3, 0, 0, 0, 2, 0, 0};
    q.extensions.bytes = span(unordered, sizeof(unordered));
    assert_int_equal(dap_msg_collection_job_req_encode(&q, buf, sizeof(buf), &n), DPM_ERR_PARAM);
    q = coll_req(0);
    q.query.batch_mode = 0;
    assert_int_equal(dap_msg_collection_job_req_encode(&q, buf, sizeof(buf), &n), DPM_ERR_PARAM);
    dap_agg_job_continue_req_t c = {0, {{NULL, 0}, 0}};
    assert_int_equal(dap_msg_agg_job_continue_req_encode(&c, buf, sizeof(buf), &n), DPM_ERR_PARAM);
    dap_hpke_ct_t ct = {1, {NULL, 0}, {PAY, 1}};
    assert_int_equal(dap_msg_hpke_ct_encode(&ct, buf, sizeof(buf), &n), DPM_ERR_PARAM);
    dap_upload_status_t u = {RID_A, 0};
    assert_int_equal(dap_msg_upload_status_encode(&u, buf, sizeof(buf), &n), DPM_ERR_PARAM);
    dap_batch_t sel = {DPM_DAP_BATCH_LEADER_SELECTED, {0, 0}, NULL};
    assert_int_equal(dap_msg_batch_selector_encode(&sel, buf, sizeof(buf), &n), DPM_ERR_PARAM);
    dpm_hpke_config_t hc[2];
    memset(hc, 0, sizeof(hc));
    for (int i = 0; i < 2; i++) {
        hc[i].id = 9;
        hc[i].kem_id = DPM_HPKE_KEM_X25519_SHA256;
        hc[i].kdf_id = DPM_HPKE_KDF_HKDF_SHA256;
        hc[i].aead_id = DPM_HPKE_AEAD_AES_128_GCM;
        hc[i].public_key[0] = 1;
    }
    assert_int_equal(dap_msg_hpke_config_list_encode(hc, 2, buf, sizeof(buf), &n), DPM_ERR_PARAM);
    assert_int_equal(dap_msg_hpke_config_list_encode(hc, 0, buf, sizeof(buf), &n), DPM_ERR_PARAM);
    hc[1].id = 10;
    assert_int_equal(dap_msg_hpke_config_list_encode(hc, 2, buf, sizeof(buf), &n), DPM_OK);
    assert_int_equal(n, 2u + 2u * DPM_HPKE_CONFIG_BYTES);
}

/* DAP_MSG_SEEDS=DIR: write every sample and the hand-written encodings as seeds of
 * tests/fuzz/fuzz_dap_msg.c (its first byte picks the decoder, in the order of its DECODERS). */
static void write_seeds(const char *dir)
{
    static const decode_fn order[] = {d_ext,   d_hpke_list, d_ct,   d_agg_share, d_md,
                                      d_rs,    d_init,      d_resp, d_cont,      d_upl,
                                      d_query, d_sel,       d_creq, d_sreq,      d_cresp};
    static sample_t s[NSAMPLES + 4];
    size_t n = all_samples(s);
    const struct {
        decode_fn dec;
        const uint8_t *b;
        size_t n;
    } exact[] = {{d_init, INIT_REQ, sizeof(INIT_REQ)},
                 {d_resp, RESP, sizeof(RESP)},
                 {d_creq, COLL_REQ, sizeof(COLL_REQ)},
                 {d_cresp, COLL_RESP, sizeof(COLL_RESP)}};
    for (size_t i = 0; i < 4; i++) {
        s[n].dec = exact[i].dec;
        memcpy(s[n].b, exact[i].b, exact[i].n);
        s[n++].n = exact[i].n;
    }
    for (size_t i = 0; i < n; i++) {
        uint8_t sel = 0;
        while (order[sel] != s[i].dec) {
            sel++;
        }
        char path[512];
        snprintf(path, sizeof(path), "%s/seed_%02u_%02zu", dir, sel, i);
        FILE *f = fopen(path, "wb");
        if (f == NULL || fwrite(&sel, 1, 1, f) != 1 || fwrite(s[i].b, 1, s[i].n, f) != s[i].n) {
            fprintf(stderr, "cannot write %s\n", path);
            exit(1);
        }
        fclose(f);
    }
}

int main(void)
{
    if (getenv("DAP_MSG_SEEDS") != NULL) {
        write_seeds(getenv("DAP_MSG_SEEDS"));
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(media_types),
        cmocka_unit_test(init_req_exact),
        cmocka_unit_test(resp_exact),
        cmocka_unit_test(collection_exact),
        cmocka_unit_test(round_trips),
        cmocka_unit_test(truncations_and_trailing),
        cmocka_unit_test(flipped_length_prefixes),
        cmocka_unit_test(refusals),
        cmocka_unit_test(encoder_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
