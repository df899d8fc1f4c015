/* SPDX-License-Identifier: Apache-2.0 */
/* One round trip of the aggregator-side DAP messages (host-sim/aggregator/dap_msg.h), shared by
 * the unit test (tests/unit/test_dap_msg.c) and the fuzz target (tests/fuzz/fuzz_dap_msg.c):
 * every decoder as a decode_fn (d_ext .. d_cresp), and dap_roundtrip: a message its
 * decoder accepted re-encodes to exactly its bytes (the draft's encodings are canonical), each
 * list's iterator walks exactly its count of items and then answers DPM_ERR_RANGE, and every
 * view lies inside the input. Header only, host-side programs only: the includer defines
 * assert_int_equal and assert_memory_equal (cmocka's, or the fuzz target's abort()). Not
 * thread-safe (one static output buffer). */
#ifndef DPM_TEST_DAP_MSG_ROUNDTRIP_H
#define DPM_TEST_DAP_MSG_ROUNDTRIP_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator/dap_msg.h"

#define DAP_RT_BIG 65536u

typedef dpm_status_t (*decode_fn)(const uint8_t *b, size_t n, const char **why);

/* A message under check: its decoder and its bytes. */
typedef struct {
    decode_fn dec;
    const uint8_t *b;
    size_t n;
} dap_rt_t;

static void inside(const dap_rt_t *s, dpm_span_t v)
{
    if (v.len > 0 && (v.p < s->b || v.p > s->b + s->n || v.len > (size_t)(s->b + s->n - v.p))) {
        abort();
    }
}

static void be(uint8_t *p, size_t n, uint64_t v)
{
    for (size_t i = 0; i < n; i++) {
        p[i] = (uint8_t)(v >> (8u * (n - 1u - i)));
    }
}

#define WRAP(name, T, fn)                                                                          \
    static dpm_status_t name(const uint8_t *b, size_t n, const char **why)                         \
    {                                                                                              \
        T m;                                                                                       \
        return fn(b, n, &m, why);                                                                  \
    }
WRAP(d_ext, dap_list_t, dap_msg_ext_list_decode)
WRAP(d_hpke_list, dap_list_t, dap_msg_hpke_config_list_decode)
WRAP(d_ct, dap_hpke_ct_t, dap_msg_hpke_ct_decode)
WRAP(d_agg_share, dap_hpke_ct_t, dap_msg_agg_share_decode)
WRAP(d_md, dap_report_metadata_t, dap_msg_report_metadata_decode)
WRAP(d_rs, dap_report_share_t, dap_msg_report_share_decode)
WRAP(d_init, dap_agg_job_init_req_t, dap_msg_agg_job_init_req_decode)
WRAP(d_resp, dap_list_t, dap_msg_agg_job_resp_decode)
WRAP(d_cont, dap_agg_job_continue_req_t, dap_msg_agg_job_continue_req_decode)
WRAP(d_upl, dap_list_t, dap_msg_upload_errors_decode)
WRAP(d_query, dap_batch_t, dap_msg_query_decode)
WRAP(d_sel, dap_batch_t, dap_msg_batch_selector_decode)
WRAP(d_creq, dap_collection_job_req_t, dap_msg_collection_job_req_decode)
WRAP(d_sreq, dap_agg_share_req_t, dap_msg_agg_share_req_decode)
WRAP(d_cresp, dap_collection_job_resp_t, dap_msg_collection_job_resp_decode)

/* Decode, re-encode: the same bytes; walk the lists: their items, then DPM_ERR_RANGE. */
static void dap_roundtrip(const dap_rt_t *s)
{
    static uint8_t out[DAP_RT_BIG];
    size_t n = 0, pos = 0, count = 0;
    dpm_status_t st;
    if (s->dec == d_init) {
        dap_agg_job_init_req_t m;
        assert_int_equal(dap_msg_agg_job_init_req_decode(s->b, s->n, &m, NULL), DPM_OK);
        assert_int_equal(dap_msg_agg_job_init_req_encode(&m, out, DAP_RT_BIG, &n), DPM_OK);
        dap_verify_init_t v;
        while ((st = dap_msg_next_verify_init(&m.verify_inits, &pos, &v)) == DPM_OK) {
            size_t k = 0;
            assert_int_equal(dap_msg_verify_init_encode(&v, out + n, DAP_RT_BIG - n, &k), DPM_OK);
            n += k;
            count++;
        }
        assert_int_equal(count, m.verify_inits.n);
    } else if (s->dec == d_resp) {
        dap_list_t l;
        assert_int_equal(dap_msg_agg_job_resp_decode(s->b, s->n, &l, NULL), DPM_OK);
        dap_verify_resp_t v;
        while ((st = dap_msg_next_verify_resp(&l, &pos, &v)) == DPM_OK) {
            size_t k = 0;
            assert_int_equal(dap_msg_verify_resp_encode(&v, out + n, DAP_RT_BIG - n, &k), DPM_OK);
            n += k;
            count++;
        }
        assert_int_equal(count, l.n);
    } else if (s->dec == d_cont) {
        dap_agg_job_continue_req_t m;
        assert_int_equal(dap_msg_agg_job_continue_req_decode(s->b, s->n, &m, NULL), DPM_OK);
        assert_int_equal(dap_msg_agg_job_continue_req_encode(&m, out, DAP_RT_BIG, &n), DPM_OK);
        dap_verify_continue_t v;
        while ((st = dap_msg_next_verify_continue(&m.verify_continues, &pos, &v)) == DPM_OK) {
            size_t k = 0;
            assert_int_equal(dap_msg_verify_continue_encode(&v, out + n, DAP_RT_BIG - n, &k),
                             DPM_OK);
            n += k;
            count++;
        }
        assert_int_equal(count, m.verify_continues.n);
    } else if (s->dec == d_upl) {
        dap_list_t l;
        assert_int_equal(dap_msg_upload_errors_decode(s->b, s->n, &l, NULL), DPM_OK);
        dap_upload_status_t v;
        while ((st = dap_msg_next_upload_status(&l, &pos, &v)) == DPM_OK) {
            size_t k = 0;
            assert_int_equal(dap_msg_upload_status_encode(&v, out + n, DAP_RT_BIG - n, &k), DPM_OK);
            n += k;
            count++;
        }
        assert_int_equal(count, l.n);
    } else if (s->dec == d_hpke_list) {
        dap_list_t l;
        assert_int_equal(dap_msg_hpke_config_list_decode(s->b, s->n, &l, NULL), DPM_OK);
        inside(s, l.bytes);
        dap_hpke_config_view_t v;
        n = 2;
        while ((st = dap_msg_next_hpke_config(&l, &pos, &v)) == DPM_OK) {
            inside(s, v.public_key);
            out[n++] = v.id;
            be(out + n, 2, v.kem_id);
            be(out + n + 2, 2, v.kdf_id);
            be(out + n + 4, 2, v.aead_id);
            be(out + n + 6, 2, v.public_key.len);
            memcpy(out + n + 8, v.public_key.p, v.public_key.len);
            n += 8 + v.public_key.len;
            count++;
        }
        be(out, 2, n - 2);
        assert_int_equal(count, l.n);
    } else if (s->dec == d_ext) {
        dap_list_t l;
        dap_ext_t e;
        assert_int_equal(dap_msg_ext_list_decode(s->b, s->n, &l, NULL), DPM_OK);
        while ((st = dap_msg_next_ext(&l, &pos, &e)) == DPM_OK) {
            size_t k = 0;
            inside(s, e.data);
            assert_int_equal(dap_msg_ext_list_encode(&e, 1, out + n, DAP_RT_BIG - n, &k), DPM_OK);
            n += k;
            count++;
        }
        assert_int_equal(count, l.n);
    } else if (s->dec == d_ct || s->dec == d_agg_share) {
        dap_hpke_ct_t m;
        if (s->dec == d_ct) {
            assert_int_equal(dap_msg_hpke_ct_decode(s->b, s->n, &m, NULL), DPM_OK);
        } else {
            assert_int_equal(dap_msg_agg_share_decode(s->b, s->n, &m, NULL), DPM_OK);
        }
        inside(s, m.enc);
        inside(s, m.payload);
        assert_int_equal(dap_msg_agg_share_encode(&m, out, DAP_RT_BIG, &n), DPM_OK);
        st = DPM_ERR_RANGE;
    } else if (s->dec == d_md) {
        dap_report_metadata_t m;
        assert_int_equal(dap_msg_report_metadata_decode(s->b, s->n, &m, NULL), DPM_OK);
        assert_int_equal(dap_msg_report_metadata_encode(&m, out, DAP_RT_BIG, &n), DPM_OK);
        st = DPM_ERR_RANGE;
    } else if (s->dec == d_rs) {
        dap_report_share_t m;
        assert_int_equal(dap_msg_report_share_decode(s->b, s->n, &m, NULL), DPM_OK);
        assert_int_equal(dap_msg_report_share_encode(&m, out, DAP_RT_BIG, &n), DPM_OK);
        st = DPM_ERR_RANGE;
    } else if (s->dec == d_query) {
        dap_batch_t m;
        assert_int_equal(dap_msg_query_decode(s->b, s->n, &m, NULL), DPM_OK);
        assert_int_equal(dap_msg_query_encode(&m, out, DAP_RT_BIG, &n), DPM_OK);
        st = DPM_ERR_RANGE;
    } else if (s->dec == d_sel) {
        dap_batch_t m;
        assert_int_equal(dap_msg_batch_selector_decode(s->b, s->n, &m, NULL), DPM_OK);
        assert_int_equal(dap_msg_batch_selector_encode(&m, out, DAP_RT_BIG, &n), DPM_OK);
        st = DPM_ERR_RANGE;
    } else if (s->dec == d_creq) {
        dap_collection_job_req_t m;
        assert_int_equal(dap_msg_collection_job_req_decode(s->b, s->n, &m, NULL), DPM_OK);
        assert_int_equal(m.encoded.len, s->n);
        assert_int_equal(dap_msg_collection_job_req_encode(&m, out, DAP_RT_BIG, &n), DPM_OK);
        st = DPM_ERR_RANGE;
    } else if (s->dec == d_sreq) {
        dap_agg_share_req_t m;
        assert_int_equal(dap_msg_agg_share_req_decode(s->b, s->n, &m, NULL), DPM_OK);
        assert_int_equal(dap_msg_agg_share_req_encode(&m, out, DAP_RT_BIG, &n), DPM_OK);
        st = DPM_ERR_RANGE;
    } else {
        dap_collection_job_resp_t m;
        assert_int_equal(dap_msg_collection_job_resp_decode(s->b, s->n, &m, NULL), DPM_OK);
        assert_int_equal(dap_msg_collection_job_resp_encode(&m, out, DAP_RT_BIG, &n), DPM_OK);
        st = DPM_ERR_RANGE;
    }
    assert_int_equal(st, DPM_ERR_RANGE);
    assert_int_equal(n, s->n);
    assert_memory_equal(out, s->b, n);
}

#endif /* DPM_TEST_DAP_MSG_ROUNDTRIP_H */
