/* SPDX-License-Identifier: Apache-2.0 */
/* Names of the scenario's metrics (see scenario.h). */
#include "sim/scenario/scenario.h"

#include <string.h>

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
