/* SPDX-License-Identifier: Apache-2.0 */
/* The simulator fixture the sim tests share: a scenario parsed from text and its population,
 * and a planner's question. */
#ifndef DPM_TEST_SIM_FIXTURE_H
#define DPM_TEST_SIM_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "sim/pop/population.h"
#include "sim/devices/mechs.h" /* sim_scenario_parse, sim_scenario_load */
#include "sim/plan/plan_tuple.h"

/* Parse `text` (len bytes) into *sc and build its population of `devices` into *pop.
 * 0, or -1 with the reason in err. On failure nothing needs freeing. */
int sim_fixture_build(const char *text, size_t len, uint64_t devices, sim_scenario_t *sc,
                      sim_pop_t *pop, char *err, size_t err_cap);

/* *q: the tuple planner's question "the gap of metric error_metric at confidence c" for mech,
 * split and bound (metric scale, no devices and no eps given yet). 0, or -1 if the SDK's
 * dpm_disp_plan_init refuses it. */
int sim_fixture_question(sim_plan_question_t *q, dpm_disp_mech_t mech, dpm_disp_split_t split,
                         double error_metric, double confidence, dpm_disp_bound_t bound);

#endif /* DPM_TEST_SIM_FIXTURE_H */
