/* SPDX-License-Identifier: Apache-2.0 */
/* Score bins (see edges.h). */
#include "common/edges.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/text_list.h"
#include "dpm/config.h"

#define TWO31 2147483648.0
#define VALUE_MAX 1024

void edges_uniform(uint32_t bins, uint32_t *edges)
{
    for (uint32_t i = 0; i + 1 < bins; i++) {
        edges[i] = (uint32_t)(((uint64_t)(i + 1u) << 31) / bins);
    }
}

void edges_print(FILE *f, const uint32_t *edges, uint32_t nedges)
{
    uint32_t uniform[DPM_MAX_BINS] = {0};
    int fits = nedges >= 1 && nedges < DPM_MAX_BINS;
    if (fits) {
        edges_uniform(nedges + 1u, uniform);
    }
    if (fits && memcmp(uniform, edges, nedges * sizeof(*edges)) == 0) {
        fprintf(f, "bins = %u\n", nedges + 1u);
        return;
    }
    fprintf(f, "edges = ");
    for (uint32_t j = 0; j < nedges; j++) {
        fprintf(f, "%s%.10f", j ? ", " : "", edges[j] / 2147483648.0);
    }
    fprintf(f, "\n");
}

int edges_parse_bins(const char *value, uint32_t *edges, uint32_t *nedges, char *why, size_t whycap)
{
    uint64_t b = 0;
    size_t n = strlen(value);
    for (size_t i = 0; i < n; i++) {
        if (value[i] < '0' || value[i] > '9' || i >= 3) {
            b = 0;
            break;
        }
        b = b * 10u + (uint64_t)(value[i] - '0');
    }
    if (b < 2 || b > DPM_MAX_BINS) {
        snprintf(why, whycap, "bins must be an integer in 2..%d, got '%s'", DPM_MAX_BINS, value);
        return -1;
    }
    edges_uniform((uint32_t)b, edges);
    *nedges = (uint32_t)b - 1u;
    return 0;
}

int edges_parse_list(const char *value, uint32_t *edges, uint32_t *nedges, char *why, size_t whycap)
{
    char buf[VALUE_MAX], *items[DPM_MAX_BINS], reason[96];
    if (strlen(value) >= sizeof(buf)) {
        snprintf(why, whycap, "edges: the list is too long");
        return -1;
    }
    snprintf(buf, sizeof(buf), "%s", value);
    int n = text_list_split(buf, items, DPM_MAX_BINS - 1, reason, sizeof(reason));
    if (n < 0) {
        snprintf(why, whycap, "edges: %s (1 to %d score edges in (0, 1])", reason,
                 DPM_MAX_BINS - 1);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        char *end = NULL;
        errno = 0;
        double e = text_is_decimal(items[i]) ? strtod(items[i], &end) : NAN; /* no "0x0.8" */
        if (end == items[i] || end == NULL || *end != '\0' || errno != 0 || !(e > 0.0) ||
            !(e <= 1.0)) {
            snprintf(why, whycap, "edges: '%s' is not a score in (0, 1]", items[i]);
            return -1;
        }
        edges[i] = (uint32_t)llround(e * TWO31);
        if (edges[i] == 0) {
            snprintf(why, whycap, "edges: '%s' rounds to score 0 on the Q1.31 grid", items[i]);
            return -1;
        }
        if (i > 0 && edges[i] <= edges[i - 1]) {
            snprintf(why, whycap, "edges must be strictly increasing ('%s' after '%s')", items[i],
                     items[i - 1]);
            return -1;
        }
    }
    *nedges = (uint32_t)n;
    return 0;
}
