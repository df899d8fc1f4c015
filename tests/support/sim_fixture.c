/* SPDX-License-Identifier: Apache-2.0 */
/* The simulator fixture the sim tests share (sim_fixture.h). */
#include "sim_fixture.h"

int sim_fixture_build(const char *text, size_t len, uint64_t devices, sim_scenario_t *sc,
                      sim_pop_t *pop, char *err, size_t err_cap)
{
    if (sim_scenario_parse(text, len, "t", sc, err, err_cap) != 0 ||
        sim_pop_build(sc, devices, pop, err, err_cap) != 0) {
        return -1;
    }
    return 0;
}
