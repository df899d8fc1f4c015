/* SPDX-License-Identifier: Apache-2.0 */
/* "Your own data": a population read from a CSV file of labelled, scored examples
 * (`population = csv(PATH)` in a scenario; format and resampling: host-sim/sim/README.md,
 * "Your own data").
 *
 * The file: a header line naming the columns device_id, score, label, group and optionally
 * prediction, in any order (any other column is refused: a misspelled "predicton" silently
 * ignored would change every prediction); then one row per example. A device is every row with
 * its device_id (rows need not be adjacent); all of a device's rows must name the same group.
 * score is a plain decimal in [0, 1] (no NaN, Inf or hexadecimal), label and prediction 0 or 1;
 * without a prediction column an example is predicted 1 when score >= the threshold (0.5 by
 * default: the binormal populations' decision threshold lands at score 1/2). Lines are read by
 * the host's one line reader (common/text_list.h): '#' starts a comment, blank lines are
 * skipped, CRLF is accepted, quoted fields are not. Every error names the file, the 1-based line
 * and the problem. */
#ifndef DPM_SIM_POP_CSV_H
#define DPM_SIM_POP_CSV_H

#include <stddef.h>
#include <stdint.h>

#include "sim/scenario/scenario.h"

#define SIM_CSV_MAX_LINE 1024          /* characters per line, with its end */
#define SIM_CSV_MAX_EXAMPLES 10000u    /* rows per device: the simulator's example buffers */
#define SIM_CSV_MAX_BYTES (256u << 20) /* the file */
#define SIM_CSV_MAX_BYTES_TEXT "256 MiB"

typedef struct {
    uint32_t group; /* index into sim_csv_t.group */
    uint32_t first; /* its first example in score[] / score_q31[] */
    uint32_t npos;  /* examples first .. first + npos are its positives, then nneg negatives */
    uint32_t nneg;
    uint32_t tp, fp; /* positives / negatives predicted 1 */
    uint32_t line;   /* the line of its first row */
} sim_csv_device_t;

typedef struct {
    uint32_t ngroups; /* in order of first appearance */
    char group[SIM_MAX_GROUPS][SIM_NAME_MAX];
    uint64_t group_devices[SIM_MAX_GROUPS];
    uint32_t group_most[SIM_MAX_GROUPS]; /* most rows of one device of the group */
    int has_prediction;
    size_t ndevices; /* in order of their first row */
    size_t nexamples;
    sim_csv_device_t *device;
    double *score;       /* as written */
    uint32_t *score_q31; /* the score the SDK takes: round(score * 2^31) */
} sim_csv_t;

/* Parse text[0 .. len) (source names it in messages). 0, or -1 with "SOURCE:LINE: problem" (or
 * "SOURCE: problem") in err and nothing allocated. threshold in [0, 1] decides the predictions
 * when there is no prediction column. */
int sim_csv_parse(const char *text, size_t len, const char *source, double threshold,
                  sim_csv_t *out, char *err, size_t errcap);

/* Read the file at path (at most SIM_CSV_MAX_BYTES) and parse it. */
int sim_csv_read_file(const char *path, double threshold, sim_csv_t *out, char *err, size_t errcap);

void sim_csv_free(sim_csv_t *d);

#endif /* DPM_SIM_POP_CSV_H */
