/* SPDX-License-Identifier: Apache-2.0 */
/* The simulator fixture the sim tests share (sim_fixture.h). */
#include "sim_fixture.h"

#include <string.h>

int sim_fixture_build(const char *text, size_t len, uint64_t devices, sim_scenario_t *sc,
                      sim_pop_t *pop, char *err, size_t err_cap)
{
    if (sim_scenario_parse(text, len, "t", sc, err, err_cap) != 0 ||
        sim_pop_build(sc, devices, pop, err, err_cap) != 0) {
        return -1;
    }
    return 0;
}

int sim_fixture_question(sim_plan_question_t *q, dpm_disp_mech_t mech, dpm_disp_split_t split,
                         double error_metric, double confidence, dpm_disp_bound_t bound)
{
    memset(q, 0, sizeof(*q));
    if (dpm_disp_plan_init(&q->plan, mech, split, 2.0 * error_metric, confidence) != DPM_OK) {
        return -1;
    }
    q->plan.bound = bound;
    q->error = error_metric;
    q->scale_metric = 1;
    return 0;
}
