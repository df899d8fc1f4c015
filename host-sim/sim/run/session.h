/* SPDX-License-Identifier: Apache-2.0 */
/* A simulation session: every configuration of a scenario (devices sweep x campaigns x ε
 * sweep), each run `runs` times in one mode, estimated with the server code.
 *
 *   inprocess  the device farm (farm.h): real SDK per device, encode, decode, aggregate
 *   exact      aggregate-level sampling (the mechanism's exact hook, sim_exact_run), same
 *              population and mechanism
 *   network    devices post their reports over TLS to a running collector (netmode.h); the
 *              estimates come from the same reports, aggregated locally, and the collector's
 *              estimate is checked against its own module's on them */
#ifndef DPM_SIM_SESSION_H
#define DPM_SIM_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "sim/run/farm.h"
#include "sim/devices/results.h"
#include "sim/scenario/scenario.h"

struct sim_net_opts; /* netmode.h */

typedef struct {
    sim_mode_t mode;
    unsigned threads;
    int progress;           /* draw the progress line on stderr (progress.h) */
    int quiet;              /* no per-configuration line on stdout */
    sim_report_hook_t hook; /* inprocess only; may be NULL */
    void *hook_ctx;
    const struct sim_net_opts *net; /* network mode */
} sim_run_opts_t;

typedef struct {
    sim_result_t *res;
    size_t n;
    double seconds;
    uint64_t pop_words;  /* random words the populations drew */
    int net_mismatch;    /* network mode: the collector's estimate differs from ours */
    size_t index, total; /* progress: configuration being run, of how many */
} sim_session_t;

/* Number of configurations the session will run. */
size_t sim_session_count(const sim_scenario_t *sc);

/* Run everything. 0, or -1 with a message in err. */
int sim_session_run(const sim_scenario_t *sc, const sim_run_opts_t *o, sim_session_t *out,
                    char *err, size_t errcap);
void sim_session_free(sim_session_t *s);

#endif /* DPM_SIM_SESSION_H */
