/* SPDX-License-Identifier: Apache-2.0 */
/* Score bins of a histogram campaign (roc_hist), as the host-side text formats give them: the
 * one parser of "bins = B" and "edges = e1, e2, ..." for dpm-sim scenarios and the collector's
 * campaigns file.
 *
 *   bins = B          B uniform bins on [0, 1]: edges k / B, k = 1 .. B-1, on the Q1.31 grid
 *                     (2^31 = score 1.0) rounded down; 2 <= B <= DPM_MAX_BINS
 *   edges = 0.2, 0.5  explicit edges in (0, 1], strictly increasing after rounding to Q1.31
 *                     (nearest), none rounding to 0; 1 .. DPM_MAX_BINS - 1 of them (B = edges + 1)
 *
 * Bin b holds edges[b-1] <= score < edges[b] (dpm/expert/roc_hist.h). */
#ifndef DPM_HOST_EDGES_H
#define DPM_HOST_EDGES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The edges of B uniform bins into edges[0 .. B-2] (B >= 2). */
void edges_uniform(uint32_t bins, uint32_t *edges);

/* "B" (decimal digits) into edges[DPM_MAX_BINS - 1] and *nedges = B - 1. 0, or -1 with the
 * reason in why. */
int edges_parse_bins(const char *value, uint32_t *edges, uint32_t *nedges, char *why,
                     size_t whycap);

/* "e1, e2, ..." into edges[DPM_MAX_BINS - 1] and *nedges. 0, or -1 with the reason in why. */
int edges_parse_list(const char *value, uint32_t *edges, uint32_t *nedges, char *why,
                     size_t whycap);

/* The key line a text format reads back to the same edges: "bins = B\n" when they are B uniform
 * bins (short: the collector's campaigns file takes lines of at most 256 characters, which 19
 * explicit edges already fill), else "edges = e1, ...\n" (10 decimals: the Q1.31 value comes
 * back exactly). */
void edges_print(FILE *f, const uint32_t *edges, uint32_t nedges);

#endif /* DPM_HOST_EDGES_H */
