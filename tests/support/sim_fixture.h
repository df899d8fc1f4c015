/* SPDX-License-Identifier: Apache-2.0 */
/* The simulator fixture the sim tests share: a scenario parsed from text and its population. */
#ifndef DPM_TEST_SIM_FIXTURE_H
#define DPM_TEST_SIM_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "sim/pop/population.h"
#include "sim/devices/mechs.h" /* sim_scenario_parse, sim_scenario_load */

/* Parse `text` (len bytes) into *sc and build its population of `devices` into *pop.
 * 0, or -1 with the reason in err. On failure nothing needs freeing. */
int sim_fixture_build(const char *text, size_t len, uint64_t devices, sim_scenario_t *sc,
                      sim_pop_t *pop, char *err, size_t err_cap);

#endif /* DPM_TEST_SIM_FIXTURE_H */
