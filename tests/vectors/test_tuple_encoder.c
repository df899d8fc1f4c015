/* SPDX-License-Identifier: Apache-2.0 */
/* The tuple report's fixed-layout body encoder (sdk/src/mech/tuple.c: nanopb's primitives, no
 * descriptor walk) writes exactly what pb_encode writes for the same dpm.v1.Report: a random
 * corpus over every group width (0, one- to five-byte varints), every value count (0 .. 4) and
 * every zigzag width (small, +-1, multi-byte, INT32_MAX, -INT32_MAX, INT32_MIN), both tuple
 * kinds, and header fields of every width. Issue 32 item 2. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <pb_encode.h>

#include "dpm.pb.h"
#include "dpm/report.h"
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

/* The reference: the whole message through pb_encode and the generated descriptor. */
static size_t reference(const dpm_report_t *r, uint8_t *buf, size_t cap)
{
    dpm_v1_Report msg;
    memset(&msg, 0, sizeof(msg));
    memcpy(msg.report_id, r->report_id, sizeof(msg.report_id));
    msg.campaign_id = r->campaign_id;
    msg.period = r->period;
    msg.mechanism = (dpm_v1_Mechanism)r->mechanism;
    msg.eps_q16 = r->eps;
    msg.params_hash = r->params_hash;
    msg.which_body = dpm_v1_Report_tuple_tag;
    msg.body.tuple.group = r->body.tuple.group;
    msg.body.tuple.values_count = (pb_size_t)r->body.tuple.nmetrics;
    for (uint32_t i = 0; i < r->body.tuple.nmetrics; i++) {
        msg.body.tuple.values[i] = r->body.tuple.value[i];
    }
    pb_ostream_t s = pb_ostream_from_buffer(buf, cap);
    assert_true(pb_encode(&s, dpm_v1_Report_fields, &msg));
    return s.bytes_written;
}

static void fixed_layout_equals_pb_encode(void **state)
{
    (void)state;
    uint64_t seed = UINT64_C(0x7475706c65656e63); /* fixed: "tupleenc" */
    uint32_t multi_byte_group = 0, int32_min = 0, empty = 0;
    for (uint32_t n = 0; n < CORPUS; n++) {
        dpm_report_t r;
        memset(&r, 0, sizeof(r));
        for (size_t i = 0; i < sizeof(r.report_id); i++) {
            r.report_id[i] = (uint8_t)next(&seed);
        }
        r.campaign_id = any_u32(&seed);
        r.period = any_u32(&seed);
        r.mechanism = next(&seed) & 1u ? DPM_MECH_ID_TUPLE_ML : DPM_MECH_ID_TUPLE_MR;
        r.eps = any_u32(&seed);
        r.params_hash = next(&seed) % 8u == 0 ? 0u : (uint32_t)next(&seed);
        r.body.tuple.group = any_u32(&seed);
        r.body.tuple.nmetrics = (uint32_t)(next(&seed) % (DPM_TUPLE_MAX_METRICS + 1u));
        for (uint32_t i = 0; i < r.body.tuple.nmetrics; i++) {
            r.body.tuple.value[i] = any_value(&seed);
            int32_min += r.body.tuple.value[i] == INT32_MIN;
        }
        multi_byte_group += r.body.tuple.group >= 128u;
        empty += r.body.tuple.nmetrics == 0;
        uint8_t want[DPM_REPORT_MAX_BYTES], got[DPM_REPORT_MAX_BYTES];
        size_t want_len = reference(&r, want, sizeof(want)), got_len = 0;
        assert_int_equal(dpm_report_encode_tuple(&r, got, sizeof(got), &got_len), DPM_OK);
        if (got_len != want_len || memcmp(got, want, want_len) != 0) {
            fail_msg("report %u (group %u, %u values) differs from pb_encode's", n,
                     r.body.tuple.group, r.body.tuple.nmetrics);
        }
        /* the generic entry (header direct, the body through nanopb's stream) agrees */
        got_len = 0;
        assert_int_equal(dpm_report_encode(&r, got, sizeof(got), &got_len), DPM_OK);
        if (got_len != want_len || memcmp(got, want, want_len) != 0) {
            fail_msg("report %u: dpm_report_encode differs from pb_encode's", n);
        }
        /* one byte short: refused, as pb_encode would be */
        assert_int_equal(dpm_report_encode_tuple(&r, got, want_len - 1u, &got_len),
                         DPM_ERR_BUFFER);
        assert_int_equal(dpm_report_encode(&r, got, want_len - 1u, &got_len), DPM_ERR_BUFFER);
    }
    /* the corpus reached the widths it claims */
    assert_true(multi_byte_group > CORPUS / 2u && int32_min > 0 && empty > CORPUS / 10u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fixed_layout_equals_pb_encode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
