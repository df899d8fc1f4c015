/* SPDX-License-Identifier: Apache-2.0 */
/* host-sim/common/edges.h: edges_print writes what the collector's campaigns file and dpm-sim's
 * scenarios read back to the same edges, in a line the collector accepts (at most 256
 * characters): "bins = B" for uniform bins (every B from 2 to DPM_MAX_BINS), the explicit list
 * otherwise. Negative control: the explicit list of 20 uniform bins is longer than 256 (what
 * `dpm-sim campaigns` wrote before, which the collector refused). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/edges.h"
#include "dpm/config.h"

/* edges_print keeps these lines short; the collector accepts up to 2048 characters a line
 * (host-sim/collector/ingest/campaigns.c), enough for 63 edges at full precision */
#define LINE_MAX_CHARS 256

/* edges_print into buf, then parsed back with the key it chose. */
static void round_trip(const uint32_t *edges, uint32_t nedges, const char *want_key)
{
    char buf[2048];
    FILE *f = fmemopen(buf, sizeof(buf), "w");
    assert_non_null(f);
    edges_print(f, edges, nedges);
    assert_int_equal(fclose(f), 0);
    size_t len = strlen(buf);
    assert_true(len > 0 && buf[len - 1] == '\n');
    buf[--len] = '\0';
    assert_true(len <= LINE_MAX_CHARS);
    assert_int_equal(strncmp(buf, want_key, strlen(want_key)), 0);
    const char *value = strchr(buf, '=') + 2;
    uint32_t back[DPM_MAX_BINS], n = 0;
    char why[128];
    int st = strncmp(buf, "bins", 4) == 0 ? edges_parse_bins(value, back, &n, why, sizeof(why))
                                          : edges_parse_list(value, back, &n, why, sizeof(why));
    assert_int_equal(st, 0);
    assert_int_equal(n, nedges);
    assert_memory_equal(back, edges, nedges * sizeof(*edges));
}

static void test_uniform_bins_print_as_bins(void **state)
{
    (void)state;
    for (uint32_t b = 2; b <= DPM_MAX_BINS; b++) {
        uint32_t e[DPM_MAX_BINS];
        edges_uniform(b, e);
        round_trip(e, b - 1, "bins = ");
    }
}

static void test_other_edges_print_as_a_list(void **state)
{
    (void)state;
    const uint32_t e[4] = {214748365u, 644245094u, 1073741824u, 1932735283u}; /* .1 .3 .5 .9 */
    round_trip(e, 4, "edges = ");
    uint32_t u[9];
    edges_uniform(10, u);
    u[4] += 1; /* one step off uniform */
    round_trip(u, 9, "edges = ");
}

static void test_negative_control_explicit_list_too_long(void **state)
{
    (void)state;
    uint32_t e[19];
    edges_uniform(20, e);
    char buf[1024];
    int n = snprintf(buf, sizeof(buf), "edges = ");
    for (uint32_t j = 0; j < 19; j++) {
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%s%.10f", j ? ", " : "",
                      e[j] / 2147483648.0);
    }
    assert_true(n > LINE_MAX_CHARS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uniform_bins_print_as_bins),
        cmocka_unit_test(test_other_edges_print_as_a_list),
        cmocka_unit_test(test_negative_control_explicit_list_too_long),
    };
    return cmocka_run_group_tests_name("edges", tests, NULL, NULL);
}
