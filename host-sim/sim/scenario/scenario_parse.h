/* SPDX-License-Identifier: Apache-2.0 */
/* The scenario file parser (format: host-sim/scenarios/README.md). Every error names the file
 * and line ("demo.scn:12: ...") and says what was expected; a misspelled section or key gets a
 * "did you mean" suggestion, a trailing comma in a list is called that. Mechanism names and
 * each mechanism's own keys come from the campaign key table the collector reads too
 * (mech/base/campaign_keys.h). What each campaign needs from its mechanism module (a population
 * it can run on, a campaign the SDK builds) is checked one room up: sim_scenario_parse and
 * sim_scenario_load (sim/devices/mechs.h) read a file with these and then check that. */
#ifndef DPM_SIM_SCENARIO_PARSE_H
#define DPM_SIM_SCENARIO_PARSE_H

#include <stddef.h>

#include "sim/scenario/scenario.h"

/* Parse text[0, len). source names it in messages ("demo.scn"). Returns 0, or -1 with
 * "SOURCE:LINE: message" in err. *out is filled either way (partially on error); its campaigns'
 * mech is left NULL (sim_scenario_parse sets it). */
int sim_scenario_read(const char *text, size_t len, const char *source, sim_scenario_t *out,
                      char *err, size_t errcap);

/* Read and parse a file (at most 1 MiB) with sim_scenario_read. Returns 0, or -1 with the
 * message in err. */
int sim_scenario_read_file(const char *path, sim_scenario_t *out, char *err, size_t errcap);

#endif /* DPM_SIM_SCENARIO_PARSE_H */
