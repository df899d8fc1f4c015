/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: dpm-sim's CSV population reader (sim_csv_parse, `population = csv(PATH)` in
 * a scenario; sim/scenario/pop_csv.h). Whoever hands an analyst a validation set controls these
 * bytes. The first byte picks the prediction threshold (byte / 255), the rest is the file.
 * Checked beyond the sanitizers:
 *   - a refusal says why, names the source, and leaves nothing allocated (LeakSanitizer);
 *   - an accepted file is consistent: every device has rows (at most SIM_CSV_MAX_EXAMPLES) in a
 *     known group, the devices' examples tile the example arrays in order, the group counts
 *     add up, every score is in [0, 1] and its Q1.31 form is at most 2^31, and tp <= npos,
 *     fp <= nneg. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/scenario/pop_csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    double threshold = data[0] / 255.0;
    sim_csv_t d;
    char err[512];
    err[0] = '\0';
    if (sim_csv_parse((const char *)data + 1, size - 1, "fuzz.csv", threshold, &d, err,
                      sizeof(err)) != 0) {
        if (strncmp(err, "fuzz.csv", 8) != 0 || d.device != NULL || d.score != NULL) {
            abort();
        }
        return 0;
    }
    uint64_t per_group[SIM_MAX_GROUPS] = {0};
    size_t at = 0;
    if (d.ndevices == 0 || d.ngroups == 0 || d.ngroups > SIM_MAX_GROUPS) {
        abort();
    }
    for (size_t k = 0; k < d.ndevices; k++) {
        const sim_csv_device_t *dv = &d.device[k];
        uint32_t e = dv->npos + dv->nneg;
        if (dv->group >= d.ngroups || e == 0 || e > SIM_CSV_MAX_EXAMPLES || dv->first != at ||
            dv->tp > dv->npos || dv->fp > dv->nneg || e > d.group_most[dv->group]) {
            abort();
        }
        per_group[dv->group]++;
        at += e;
    }
    for (size_t i = 0; i < d.nexamples; i++) {
        if (!(d.score[i] >= 0.0 && d.score[i] <= 1.0) || d.score_q31[i] > UINT32_C(1) << 31) {
            abort();
        }
    }
    for (uint32_t g = 0; g < d.ngroups; g++) {
        if (per_group[g] != d.group_devices[g] || per_group[g] == 0) {
            abort();
        }
    }
    if (at != d.nexamples) {
        abort();
    }
    sim_csv_free(&d);
    return 0;
}
