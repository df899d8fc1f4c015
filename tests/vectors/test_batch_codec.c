/* SPDX-License-Identifier: Apache-2.0 */
/* The Batch / BatchResponse codec (dpm/expert/batch.h) against golden bytes.
 *
 * tests/vectors/wire/0.2.0/batch*.hex and batch_response*.hex were captured at commit 7160826
 * from the encoders the codec replaced: the body dpm_upload_flush posted (hand framing in
 * upload.c) and the answer coll_batch_response wrote (hand framing in collector/ingest/batch.c). The
 * codec must decode each one to the expected items and write it again byte for byte; sizing
 * (buf == NULL) must give the same length. Negative controls: truncations, trailing garbage,
 * wrong wire types, groups, overlong varints and counts are refused with the reason named, a
 * too small buffer is refused without a write, and a flipped byte changes the re-encoding. Run
 * from the repository root, or set WIRE_VECTORS to the vector directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/expert/batch.h"
#include "dpm/expert/report.h"
#include "wire_vectors.h"

#define DIR_0_1 "0.1.0/"
#define DIR_0_2 "0.2.0/"
#define MAXB 1024

/* dir/rel as hex: its length; a missing or bad vector fails the test (an empty one is
 * fine: batch_response.empty.hex). */
static size_t read_hex(const char *rel, uint8_t *buf, size_t cap)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", wire_vector_dir(), rel);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fail_msg("missing vector %s", path);
    }
    fclose(f);
    size_t n = wire_read_hex(rel, buf, cap);
    if (n == 0 && strcmp(rel, DIR_0_2 "batch_response.empty.hex") != 0) {
        fail_msg("bad vector %s", path);
    }
    return n;
}

/* ---- Batch --------------------------------------------------------------------------------- */

typedef struct {
    const uint8_t *rep[8];
    size_t rep_len[8];
    size_t nrep;
    uint64_t lost;
    int nlost;
} batch_items_t;

static dpm_status_t walk_batch(const uint8_t *b, size_t len, batch_items_t *out, const char **why)
{
    memset(out, 0, sizeof(*out));
    size_t pos = 0;
    for (;;) {
        dpm_batch_item_t it;
        dpm_status_t st = dpm_batch_next(b, len, &pos, &it, why);
        if (st != DPM_OK) {
            return st;
        }
        if (it.field == 0) {
            assert_int_equal(pos, len);
            return DPM_OK;
        }
        if (it.field == DPM_BATCH_FIELD_REPORT) {
            assert_true(out->nrep < 8);
            out->rep[out->nrep] = it.report;
            out->rep_len[out->nrep++] = it.report_len;
        } else {
            assert_int_equal(it.field, DPM_BATCH_FIELD_LOST);
            out->lost = it.lost;
            out->nlost++;
        }
    }
}

/* Write the items again as the uploader does (head, then the bytes; lost last) and as the
 * other writers do (dpm_batch_put_report); both, and the sizing pass, give `want`. */
static void rewrite_batch(const batch_items_t *in, const uint8_t *want, size_t want_len)
{
    uint8_t out[MAXB];
    size_t pos = 0, pos2 = 0, sized = 0;
    uint8_t out2[MAXB];
    for (size_t i = 0; i < in->nrep; i++) {
        assert_int_equal(dpm_batch_put_report_head(out, sizeof(out), &pos, in->rep_len[i]), DPM_OK);
        memcpy(out + pos, in->rep[i], in->rep_len[i]);
        pos += in->rep_len[i];
        assert_int_equal(
            dpm_batch_put_report(out2, sizeof(out2), &pos2, in->rep[i], in->rep_len[i]), DPM_OK);
        assert_int_equal(dpm_batch_put_report(NULL, 0, &sized, in->rep[i], in->rep_len[i]), DPM_OK);
        assert_int_equal(pos2, sized);
    }
    uint32_t lost = (uint32_t)in->lost;
    assert_int_equal(dpm_batch_put_lost(out, sizeof(out), &pos, lost), DPM_OK);
    assert_int_equal(dpm_batch_put_lost(out2, sizeof(out2), &pos2, lost), DPM_OK);
    assert_int_equal(dpm_batch_put_lost(NULL, 0, &sized, lost), DPM_OK);
    assert_int_equal(pos, want_len);
    assert_int_equal(pos2, want_len);
    assert_int_equal(sized, want_len);
    assert_memory_equal(out, want, want_len);
    assert_memory_equal(out2, want, want_len);
    size_t frames = dpm_batch_lost_len(lost);
    for (size_t i = 0; i < in->nrep; i++) {
        frames += dpm_batch_frame_len(in->rep_len[i]);
    }
    assert_int_equal(frames, want_len);
}

static void expect_report(const batch_items_t *b, size_t i, const char *rel)
{
    uint8_t rep[MAXB];
    size_t n = read_hex(rel, rep, sizeof(rep));
    assert_true(i < b->nrep);
    assert_int_equal(b->rep_len[i], n);
    assert_memory_equal(b->rep[i], rep, n);
}

static void test_batch_golden(void **state)
{
    (void)state;
    uint8_t body[MAXB];
    batch_items_t b;
    const char *why = NULL;

    size_t n = read_hex(DIR_0_2 "batch.one.hex", body, sizeof(body));
    assert_int_equal(walk_batch(body, n, &b, &why), DPM_OK);
    assert_int_equal(b.nrep, 1);
    assert_int_equal(b.nlost, 0);
    expect_report(&b, 0, DIR_0_1 "tuple_mr.report.hex");
    rewrite_batch(&b, body, n);

    n = read_hex(DIR_0_2 "batch.three_lost.hex", body, sizeof(body));
    assert_int_equal(walk_batch(body, n, &b, &why), DPM_OK);
    assert_int_equal(b.nrep, 3);
    assert_int_equal(b.nlost, 1);
    assert_int_equal(b.lost, 300);
    expect_report(&b, 0, DIR_0_1 "tuple_mr.report.hex");
    expect_report(&b, 1, DIR_0_2 "dpauc.report.hex"); /* 201 bytes: a two-byte length */
    expect_report(&b, 2, DIR_0_1 "roc_hist.report.hex");
    rewrite_batch(&b, body, n);

    /* negative control: a changed report byte is seen in the re-encoding check */
    uint8_t other[MAXB];
    memcpy(other, body, n);
    other[n / 2] ^= 0x01;
    assert_memory_not_equal(other, body, n);
}

/* Every cut of a golden batch inside a field is refused with the framing reason, and every
 * cut between fields decodes to the fields before it. */
static void test_batch_truncated(void **state)
{
    (void)state;
    uint8_t body[MAXB];
    size_t n = read_hex(DIR_0_2 "batch.three_lost.hex", body, sizeof(body));
    size_t bounds[8], nb = 0, pos = 0;
    dpm_batch_item_t it;
    bounds[nb++] = 0;
    while (pos < n) {
        assert_int_equal(dpm_batch_next(body, n, &pos, &it, NULL), DPM_OK);
        bounds[nb++] = pos;
    }
    assert_int_equal(nb, 5); /* 3 reports and lost_reports */
    size_t refused = 0;
    for (size_t cut = 1; cut < n; cut++) {
        int between = 0;
        for (size_t k = 0; k < nb; k++) {
            between |= bounds[k] == cut;
        }
        batch_items_t b;
        const char *why = NULL;
        dpm_status_t st = walk_batch(body, cut, &b, &why);
        if (between) {
            assert_int_equal(st, DPM_OK);
            continue;
        }
        assert_int_equal(st, DPM_ERR_PROTOCOL);
        assert_non_null(why);
        assert_true(strcmp(why, "length past the end") == 0 ||
                    strcmp(why, "truncated varint") == 0);
        refused++;
    }
    assert_int_equal(refused, n - nb + 1);
}

static void expect_batch_refused(const uint8_t *b, size_t len, const char *reason)
{
    batch_items_t items;
    const char *why = NULL;
    assert_int_equal(walk_batch(b, len, &items, &why), DPM_ERR_PROTOCOL);
    assert_non_null(why);
    assert_string_equal(why, reason);
}

static void test_batch_malformed(void **state)
{
    (void)state;
    uint8_t body[MAXB + 16];
    size_t n = read_hex(DIR_0_2 "batch.one.hex", body, MAXB);
    /* trailing garbage */
    body[n] = 0xFF;
    expect_batch_refused(body, n + 1, "truncated varint");
    body[n] = 0x0A;
    body[n + 1] = 0x05;
    expect_batch_refused(body, n + 2, "length past the end");
    /* wrong wire types of the known fields */
    static const uint8_t rep_varint[] = {0x08, 0x01};
    expect_batch_refused(rep_varint, sizeof(rep_varint), "Batch.reports has the wrong wire type");
    static const uint8_t lost_len[] = {0x12, 0x00};
    expect_batch_refused(lost_len, sizeof(lost_len), "Batch.lost_reports has the wrong wire type");
    static const uint8_t lost_i32[] = {0x15, 1, 2, 3, 4};
    expect_batch_refused(lost_i32, sizeof(lost_i32), "Batch.lost_reports has the wrong wire type");
    /* framing */
    static const uint8_t group[] = {0x0B, 0x0C};
    expect_batch_refused(group, sizeof(group), "group or undefined wire type");
    static const uint8_t wt7[] = {0x0F};
    expect_batch_refused(wt7, sizeof(wt7), "group or undefined wire type");
    static const uint8_t field0[] = {0x02, 0x00};
    expect_batch_refused(field0, sizeof(field0), "field number 0");
    static const uint8_t tag33[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x00};
    expect_batch_refused(tag33, sizeof(tag33), "tag beyond 32 bits");
    static const uint8_t v65[] = {0x10, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02};
    expect_batch_refused(v65, sizeof(v65), "varint longer than 64 bits");
    static const uint8_t v11[] = {0x10, 0x80, 0x80, 0x80, 0x80, 0x80,
                                  0x80, 0x80, 0x80, 0x80, 0x81, 0x00};
    expect_batch_refused(v11, sizeof(v11), "varint longer than 64 bits");
    static const uint8_t fixed_short[] = {0x19, 1, 2, 3};
    expect_batch_refused(fixed_short, sizeof(fixed_short), "truncated fixed-width field");
    static const uint8_t huge_len[] = {0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F};
    expect_batch_refused(huge_len, sizeof(huge_len), "length past the end");

    /* positive controls: the largest 64-bit varint, unknown fields of every valid type */
    static const uint8_t v64[] = {0x10, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01};
    batch_items_t b;
    assert_int_equal(walk_batch(v64, sizeof(v64), &b, NULL), DPM_OK);
    assert_true(b.lost == UINT64_MAX);
    static const uint8_t unknown[] = {0x78, 0x05,                         /* 15: varint */
                                      0x79, 1,    2,    3, 4, 5, 6, 7, 8, /* 15: i64 */
                                      0x7A, 0x01, 0xEE,                   /* 15: bytes */
                                      0x7D, 1,    2,    3, 4,             /* 15: i32 */
                                      0x0A, 0x00,                         /* an empty report */
                                      0x10, 0x07};
    assert_int_equal(walk_batch(unknown, sizeof(unknown), &b, NULL), DPM_OK);
    assert_int_equal(b.nrep, 1);
    assert_int_equal(b.rep_len[0], 0);
    assert_int_equal(b.lost, 7);
    assert_int_equal(walk_batch(NULL, 0, &b, NULL), DPM_OK);
    assert_int_equal(b.nrep, 0);
}

/* Writers: a buffer one byte short is refused with nothing written; NULL arguments. */
static void test_batch_writer_bounds(void **state)
{
    (void)state;
    uint8_t rep[200], out[256];
    memset(rep, 0x5A, sizeof(rep));
    size_t need = dpm_batch_frame_len(sizeof(rep));
    assert_int_equal(need, 203);
    memset(out, 0xCC, sizeof(out));
    size_t pos = 0;
    assert_int_equal(dpm_batch_put_report(out, need - 1, &pos, rep, sizeof(rep)), DPM_ERR_BUFFER);
    assert_int_equal(pos, 0);
    assert_int_equal(out[0], 0xCC);
    assert_int_equal(dpm_batch_put_report_head(out, need - 1, &pos, sizeof(rep)), DPM_ERR_BUFFER);
    assert_int_equal(pos, 0);
    assert_int_equal(dpm_batch_put_report(out, need, &pos, rep, sizeof(rep)), DPM_OK);
    assert_int_equal(pos, need);
    pos = 5;
    assert_int_equal(dpm_batch_put_lost(out, 7, &pos, 300), DPM_ERR_BUFFER);
    assert_int_equal(pos, 5);
    assert_int_equal(dpm_batch_put_lost(out, 8, &pos, 300), DPM_OK);
    assert_int_equal(pos, 8);
    assert_int_equal(dpm_batch_lost_len(0), 0);
    assert_int_equal(dpm_batch_lost_len(UINT32_MAX), 6);
    assert_int_equal(dpm_batch_put_lost(out, 0, &pos, 0), DPM_OK); /* 0: nothing, no room needed */
    assert_int_equal(dpm_batch_put_report(out, sizeof(out), NULL, rep, 1), DPM_ERR_PARAM);
    assert_int_equal(dpm_batch_put_report(out, sizeof(out), &pos, NULL, 1), DPM_ERR_PARAM);
    pos = sizeof(out) + 1; /* a position past cap */
    assert_int_equal(dpm_batch_put_report(out, sizeof(out), &pos, rep, 1), DPM_ERR_BUFFER);
}

/* ---- BatchResponse ----------------------------------------------------------------------- */

typedef struct {
    size_t n;
    const uint8_t *id[8];
    size_t id_len[8];
    const uint8_t *reason[8];
    size_t reason_len[8];
    size_t refuse_at; /* 0: never */
} rejects_t;

static const char *collect(void *ctx, const uint8_t *id, size_t id_len, const uint8_t *reason,
                           size_t reason_len)
{
    rejects_t *r = ctx;
    if (r->n + 1 == r->refuse_at) {
        return "refused by the caller";
    }
    assert_true(r->n < 8);
    r->id[r->n] = id;
    r->id_len[r->n] = id_len;
    r->reason[r->n] = reason;
    r->reason_len[r->n++] = reason_len;
    return NULL;
}

static void rewrite_response(uint32_t acc, uint32_t dup, const rejects_t *r, const uint8_t *want,
                             size_t want_len)
{
    uint8_t out[MAXB];
    size_t pos = 0, sized = 0;
    assert_int_equal(dpm_batch_response_put_counts(out, sizeof(out), &pos, acc, dup), DPM_OK);
    assert_int_equal(dpm_batch_response_put_counts(NULL, 0, &sized, acc, dup), DPM_OK);
    for (size_t i = 0; i < r->n; i++) {
        assert_int_equal(dpm_batch_response_put_reject(out, sizeof(out), &pos, r->id[i],
                                                       r->id_len[i], (const char *)r->reason[i],
                                                       r->reason_len[i]),
                         DPM_OK);
        assert_int_equal(dpm_batch_response_put_reject(NULL, 0, &sized, r->id[i], r->id_len[i],
                                                       (const char *)r->reason[i],
                                                       r->reason_len[i]),
                         DPM_OK);
    }
    assert_int_equal(pos, want_len);
    assert_int_equal(sized, want_len);
    if (want_len > 0) {
        assert_memory_equal(out, want, want_len);
    }
}

static void decode_golden(const char *rel, uint32_t acc, uint32_t dup, size_t nrej, uint8_t *buf,
                          rejects_t *r)
{
    size_t n = read_hex(rel, buf, MAXB);
    uint32_t a = 99, d = 99;
    const char *why = NULL;
    memset(r, 0, sizeof(*r));
    assert_int_equal(dpm_batch_response_decode(buf, n, &a, &d, collect, r, &why), DPM_OK);
    assert_int_equal(a, acc);
    assert_int_equal(d, dup);
    assert_int_equal(r->n, nrej);
    rewrite_response(a, d, r, buf, n);
}

static void expect_reason(const rejects_t *r, size_t i, const char *text)
{
    assert_int_equal(r->reason_len[i], strlen(text));
    assert_memory_equal(r->reason[i], text, strlen(text));
}

static void test_response_golden(void **state)
{
    (void)state;
    uint8_t buf[MAXB];
    rejects_t r;
    decode_golden(DIR_0_2 "batch_response.empty.hex", 0, 0, 0, buf, &r);
    decode_golden(DIR_0_2 "batch_response.accepted.hex", 3, 0, 0, buf, &r);
    decode_golden(DIR_0_2 "batch_response.duplicates.hex", 200, 5, 0, buf, &r);
    decode_golden(DIR_0_2 "batch_response.rejects.hex", 0, 0, 3, buf, &r);
    assert_int_equal(r.id_len[0], DPM_REPORT_ID_BYTES);
    assert_int_equal(r.id[0][0], 0x01);
    assert_int_equal(r.id[1][15], 0x20);
    assert_int_equal(r.id_len[2], 0); /* a report too broken to name itself: no field 1 */
    expect_reason(&r, 0, "unknown campaign");
    expect_reason(&r, 1, "period closed");
    expect_reason(&r, 2, "malformed report");
    decode_golden(DIR_0_2 "batch_response.unlisted.hex", 0, 0, 3, buf, &r);
    assert_int_equal(r.id_len[2], 0);
    expect_reason(&r, 2, "20000 more rejects not listed");

    /* an empty reason is still written (field 2 of length 0) */
    uint8_t out[32];
    size_t pos = 0;
    assert_int_equal(dpm_batch_response_put_reject(out, sizeof(out), &pos, NULL, 0, "", 0), DPM_OK);
    static const uint8_t empty_reject[] = {0x1A, 0x02, 0x12, 0x00};
    assert_int_equal(pos, sizeof(empty_reject));
    assert_memory_equal(out, empty_reject, sizeof(empty_reject));
}

static void expect_response_refused(const uint8_t *b, size_t len, const char *reason)
{
    uint32_t a, d;
    rejects_t r;
    memset(&r, 0, sizeof(r));
    const char *why = NULL;
    assert_int_equal(dpm_batch_response_decode(b, len, &a, &d, collect, &r, &why),
                     DPM_ERR_PROTOCOL);
    assert_non_null(why);
    assert_string_equal(why, reason);
}

static void test_response_malformed(void **state)
{
    (void)state;
    uint8_t buf[MAXB + 4];
    size_t n = read_hex(DIR_0_2 "batch_response.rejects.hex", buf, MAXB);
    /* every cut inside a field is refused */
    for (size_t cut = 1; cut < n; cut++) {
        uint32_t a, d;
        rejects_t r;
        memset(&r, 0, sizeof(r));
        dpm_status_t st = dpm_batch_response_decode(buf, cut, &a, &d, collect, &r, NULL);
        int between = cut == 0x26 || cut == 0x26 + 0x23; /* after reject 1, after reject 2 */
        assert_int_equal(st, between ? DPM_OK : DPM_ERR_PROTOCOL);
    }
    buf[n] = 0x80; /* trailing garbage */
    expect_response_refused(buf, n + 1, "truncated varint");
    static const uint8_t acc_len[] = {0x0A, 0x00};
    expect_response_refused(acc_len, sizeof(acc_len),
                            "BatchResponse.accepted has the wrong wire type");
    static const uint8_t dup_i64[] = {0x11, 1, 2, 3, 4, 5, 6, 7, 8};
    expect_response_refused(dup_i64, sizeof(dup_i64),
                            "BatchResponse.duplicates has the wrong wire type");
    static const uint8_t acc_big[] = {0x08, 0x80, 0x80, 0x80, 0x80, 0x10};
    expect_response_refused(acc_big, sizeof(acc_big), "BatchResponse.accepted is too large");
    static const uint8_t dup_big[] = {0x10, 0x80, 0x80, 0x80, 0x80, 0x10};
    expect_response_refused(dup_big, sizeof(dup_big), "BatchResponse.duplicates is too large");
    static const uint8_t rej_varint[] = {0x18, 0x01};
    expect_response_refused(rej_varint, sizeof(rej_varint),
                            "BatchResponse.rejects has the wrong wire type");
    static const uint8_t id_varint[] = {0x1A, 0x02, 0x08, 0x01};
    expect_response_refused(id_varint, sizeof(id_varint),
                            "Reject.report_id has the wrong wire type");
    static const uint8_t reason_varint[] = {0x1A, 0x02, 0x10, 0x01};
    expect_response_refused(reason_varint, sizeof(reason_varint),
                            "Reject.reason has the wrong wire type");
    static const uint8_t inner_past[] = {0x1A, 0x02, 0x12, 0x05};
    expect_response_refused(inner_past, sizeof(inner_past), "length past the end");
    static const uint8_t group[] = {0x1B};
    expect_response_refused(group, sizeof(group), "group or undefined wire type");
    /* the caller's refusal is passed on */
    uint32_t a, d;
    rejects_t r;
    memset(&r, 0, sizeof(r));
    r.refuse_at = 2;
    const char *why = NULL;
    n = read_hex(DIR_0_2 "batch_response.rejects.hex", buf, MAXB);
    assert_int_equal(dpm_batch_response_decode(buf, n, &a, &d, collect, &r, &why),
                     DPM_ERR_PROTOCOL);
    assert_string_equal(why, "refused by the caller");
    assert_int_equal(r.n, 1);
    /* positive control: unknown fields skipped, last count wins */
    static const uint8_t ok[] = {0x08, 0x01, 0x78, 0x09, 0x08, 0x04, 0x1A, 0x03, 0x22, 0x01, 0x00};
    memset(&r, 0, sizeof(r));
    assert_int_equal(dpm_batch_response_decode(ok, sizeof(ok), &a, &d, collect, &r, NULL), DPM_OK);
    assert_int_equal(a, 4);
    assert_int_equal(d, 0);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.id_len[0], 0);
    assert_int_equal(r.reason_len[0], 0);
    /* writer bounds */
    uint8_t out[32]; /* 1a 15 | 0a 10 <16 bytes> | 12 01 'x': 23 bytes */
    size_t pos = 0;
    assert_int_equal(dpm_batch_response_put_reject(out, 22, &pos, buf, 16, "x", 1), DPM_ERR_BUFFER);
    assert_int_equal(pos, 0);
    assert_int_equal(dpm_batch_response_put_reject(out, 23, &pos, buf, 16, "x", 1), DPM_OK);
    assert_int_equal(pos, 23);
    pos = 0;
    assert_int_equal(dpm_batch_response_put_counts(out, 3, &pos, 300, 1), DPM_ERR_BUFFER);
    assert_int_equal(pos, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_golden),    cmocka_unit_test(test_batch_truncated),
        cmocka_unit_test(test_batch_malformed), cmocka_unit_test(test_batch_writer_bounds),
        cmocka_unit_test(test_response_golden), cmocka_unit_test(test_response_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
