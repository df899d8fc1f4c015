/* SPDX-License-Identifier: Apache-2.0 */
/* Names in scenarios (see scenario.h). */
#include "sim/scenario/scenario.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

int sim_name_valid(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= SIM_NAME_MAX) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-' && s[i] != '.') {
            return 0;
        }
    }
    return 1;
}

static const char *const kMetricNames[SIM_NMETRICS] = {"accuracy", "tpr", "fpr", "precision"};

const char *sim_metric_name(dpm_metric_t m)
{
    return m >= DPM_METRIC_ACCURACY && m <= DPM_METRIC_PRECISION ? kMetricNames[m - 1] : NULL;
}

dpm_metric_t sim_metric_from_name(const char *s)
{
    for (int i = 0; i < SIM_NMETRICS; i++) {
        if (strcmp(s, kMetricNames[i]) == 0) {
            return (dpm_metric_t)(i + 1);
        }
    }
    return (dpm_metric_t)0;
}

void sim_scenario_start(sim_scenario_t *sc, const char *name, uint32_t runs, uint64_t seed,
                        double confidence, sim_mode_t mode)
{
    memset(sc, 0, sizeof(*sc));
    snprintf(sc->name, sizeof(sc->name), "%s", name);
    sc->ndevices = 1;
    sc->runs = runs;
    sc->seed = seed;
    sc->population_seed = 1;
    sc->confidence = confidence;
    sc->mode = mode;
}
