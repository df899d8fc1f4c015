/* SPDX-License-Identifier: Apache-2.0 */
/* The outbox built with DPM_OUTBOX_COPY_RATIO=0 (no compaction in steps; dpm/config.h): the
 * whole bank holds pending reports, the put that finds the bank full compacts all of it in that
 * call, nothing is ever copied in steps, the order of the reports is kept and a reopen finds
 * them. This file compiles sdk/src/upload/outbox.c itself in that configuration (the library's
 * own outbox, ratio 4, is tested by test_outbox_*: its room is 58 % of a bank's log, and this
 * one must exceed 90 %). */
#define DPM_OUTBOX_COPY_RATIO 0
#include "upload/outbox.c"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fake_storage.h"
#include "test_rng.h"
#include "tuple_report.h"

#define REGION 4096u
#define EPS1 ((dpm_eps_t)65536)

static void test_one_call_compaction(void **state)
{
    (void)state;
    static uint8_t mem[REGION];
    static fake_storage_t fs;
    fake_storage_init(&fs, mem, REGION, 1);
    dpm_storage_t st = fake_storage_port(&fs);
    dpm_outbox_t ob;
    assert_int_equal(dpm_outbox_open(&ob, &st, 0, REGION), DPM_OK);
    test_rng_t t;
    test_rng_seed(&t, 9u);
    dpm_rng_t rng = test_rng_port(&t);
    dpm_rand_t rand;
    assert_int_equal(dpm_rand_init(&rand, &rng), DPM_OK);
    static uint8_t ids[256][DPM_REPORT_ID_BYTES];
    uint32_t made = 0, gone = 0, full_at = 0, switches = 0;
    uint8_t rep[DPM_REPORT_MAX_BYTES];
    while (switches < 3u && made < 256u) {
        size_t len = tuple_report_make(&rand, 1, made, EPS1, rep, ids[made]);
        if (!dpm_outbox_room(&ob, len)) {
            full_at = full_at == 0 ? ob.pending : full_at;
            uint32_t cursor = 0;
            dpm_outbox_entry_t e;
            int found = 0;
            assert_int_equal(dpm_outbox_next(&ob, &cursor, &e, &found), DPM_OK);
            assert_true(found);
            assert_memory_equal(e.report_id, ids[gone], DPM_REPORT_ID_BYTES); /* oldest first */
            assert_int_equal(dpm_outbox_remove(&ob, &e), DPM_OK);
            gone++;
            continue;
        }
        uint32_t seq = ob.seq;
        assert_int_equal(dpm_outbox_put_encoded(&ob, rep, len), DPM_OK);
        assert_false(ob.copying); /* never a step */
        switches += ob.seq != seq;
        made++;
    }
    assert_int_equal(switches, 3u);
    /* the whole log held reports: more than the stepwise room of the same bank */
    uint32_t rec =
        DPM_OUTBOX_REC_HDR + (uint32_t)tuple_report_make(&rand, 1, 0, EPS1, rep, ids[255]);
    assert_true(full_at * rec > (REGION / 2u - DPM_OUTBOX_BANK_HDR) * 9u / 10u);
    /* a reopen finds the pending reports, in order */
    assert_int_equal(dpm_outbox_open(&ob, &st, 0, REGION), DPM_OK);
    assert_int_equal(ob.pending, made - gone);
    uint32_t cursor = 0;
    for (uint32_t i = gone; i < made; i++) {
        dpm_outbox_entry_t e;
        int found = 0;
        assert_int_equal(dpm_outbox_next(&ob, &cursor, &e, &found), DPM_OK);
        assert_true(found);
        assert_memory_equal(e.report_id, ids[i], DPM_REPORT_ID_BYTES);
    }
    print_message("# DPM_OUTBOX_COPY_RATIO=0: a 2 KB bank full at %u reports, 3 one-call "
                  "compactions, order kept\n",
                  full_at);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_call_compaction),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
