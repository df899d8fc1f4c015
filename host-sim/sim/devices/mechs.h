/* SPDX-License-Identifier: Apache-2.0 */
/* The registry of the simulator's mechanisms (sim/devices/mech.h): the scenario parser looks
 * campaigns' `mechanism =` up here, and `dpm-sim --help` lists them. Registering a mechanism is one
 * line in mechs.c. */
#ifndef DPM_SIM_MECHS_H
#define DPM_SIM_MECHS_H

#include <stddef.h>

#include "sim/devices/mech.h"

#define SIM_MECHS_MAX 32

/* The mechanism called `name` ("tuple_mr"), or NULL. */
const sim_mech_t *sim_mech_find(const char *name);
/* The mechanism with this wire id, or NULL. */
const sim_mech_t *sim_mech_by_id(dpm_mech_id_t id);
/* Registered mechanisms, in registration order. */
size_t sim_mech_count(void);
const sim_mech_t *sim_mech_at(size_t i);

#endif /* DPM_SIM_MECHS_H */
