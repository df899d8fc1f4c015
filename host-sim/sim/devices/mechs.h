/* SPDX-License-Identifier: Apache-2.0 */
/* The registry of the simulator's mechanisms (sim/devices/mech.h): each scenario campaign gets
 * its module here (sim_scenario_parse), and `dpm-sim --help` lists them. Registering a mechanism
 * is one line in mechs.c (its name and keys: mech/base/campaign_keys.c). */
#ifndef DPM_SIM_MECHS_H
#define DPM_SIM_MECHS_H

#include <stddef.h>

#include "sim/devices/mech.h"
#include "sim/scenario/scenario.h"

#define SIM_MECHS_MAX 32

/* The mechanism called `name` ("tuple_mr"), or NULL. */
const sim_mech_t *sim_mech_find(const char *name);
/* The mechanism with this wire id, or NULL. */
const sim_mech_t *sim_mech_by_id(dpm_mech_id_t id);
/* Registered mechanisms, in registration order. */
size_t sim_mech_count(void);
const sim_mech_t *sim_mech_at(size_t i);

/* A scenario file read (sim/scenario/scenario_parse.h) and then each campaign checked by its
 * mechanism module: the population it needs (metrics, bins, groups with scores, ...) and a
 * campaign the SDK builds at each of its eps. text[0, len), source names it in messages
 * ("demo.scn"). Returns 0, or -1 with "SOURCE:LINE: message" in err; *out is filled either way
 * (partially on error), with each campaign's mech set once checked. */
int sim_scenario_parse(const char *text, size_t len, const char *source, sim_scenario_t *out,
                       char *err, size_t errcap);

/* The same for a file (at most 1 MiB). */
int sim_scenario_load(const char *path, sim_scenario_t *out, char *err, size_t errcap);

#endif /* DPM_SIM_MECHS_H */
