/* SPDX-License-Identifier: Apache-2.0 */
/* Configurations, devices and aggregates, generic over the mechanism (sim/devices/mech.h): the glue
 * every mode shares. A configuration is a scenario campaign at one ε; its mechanism module does
 * the mechanism-specific work through the hooks.
 *
 * Seeds: the configuration's base seed is sim_stream_key(scenario seed, campaign, eps index);
 * device i of run r then draws from the stream sim_stream_key(base, r, i) (stream.h): any device
 * can be replayed alone, and results do not depend on the thread count. */
#ifndef DPM_SIM_CFG_H
#define DPM_SIM_CFG_H

#include <stddef.h>
#include <stdint.h>

#include "sim/devices/mech.h"

/* Configuration (campaign c, ε index e): generic fields, then the mechanism's init. 0, or -1
 * with a message in err. */
int sim_cfg_init(sim_cfg_t *cfg, const sim_scenario_t *sc, uint32_t c, uint32_t e, char *err,
                 size_t errcap);

/* After init, before running over pop: the mechanism's truth and items. 0, or -1 with a
 * message. sim_cfg_release frees what prepare allocated (safe to call twice; on copies of cfg
 * only once). */
int sim_cfg_prepare(sim_cfg_t *cfg, const sim_pop_t *pop, unsigned threads, char *err,
                    size_t errcap);
void sim_cfg_release(sim_cfg_t *cfg);

/* For a module's prepare: n items (zeroed, g = h = -1). 0, or -1 when memory runs out. */
int sim_cfg_items(sim_cfg_t *cfg, uint32_t n);

/* The name of campaign group g (the population group's name). */
const char *sim_cfg_group_name(const sim_cfg_t *cfg, uint32_t g);

/* 1 if the devices of block b report in this configuration. */
int sim_cfg_participates(const sim_cfg_t *cfg, const sim_block_t *b);

/* The key of device `device`'s stream in run `run`. */
uint64_t sim_cfg_device_key(const sim_cfg_t *cfg, uint32_t run, uint64_t device);

/* One device: its report through the mechanism's hook on its own stream, encoded into
 * buf[DPM_REPORT_MAX_BYTES]. *rep gets the report before encoding; *rng_bytes (may be NULL) the
 * port bytes the device drew. The block must participate. DPM_ERR_RANGE: the device sends
 * nothing. */
dpm_status_t sim_device_report(const sim_cfg_t *cfg, const sim_block_t *b, uint32_t run,
                               uint64_t device, dpm_report_t *rep, uint8_t *buf, size_t *len,
                               uint64_t *rng_bytes);

/* The same for a two-round mechanism in network mode (its report_rounds hook, rounds through
 * x). Round 1 returns DPM_ERR_UNDEFINED after the upload (no report). */
dpm_status_t sim_device_report_rounds(const sim_cfg_t *cfg, const sim_block_t *b, uint32_t run,
                                      uint64_t device, dpm_report_t *rep, uint8_t *buf, size_t *len,
                                      const sim_exchange_t *x);

void sim_agg_init(const sim_cfg_t *cfg, sim_agg_t *agg);
/* Add a decoded report after checking it against the campaign as the collector does
 * (dpm_mech_check_report when cfg->checked). DPM_ERR_PROTOCOL for a report the collector would
 * reject. */
dpm_status_t sim_agg_add_report(const sim_cfg_t *cfg, sim_agg_t *agg, const dpm_report_t *rep);
dpm_status_t sim_agg_merge(const sim_cfg_t *cfg, sim_agg_t *dst, const sim_agg_t *src);

/* Exact mode: run `run`'s aggregate drawn directly (the mechanism's exact hook) on the run's own
 * stream. *words (may be NULL) gets the random 64-bit words drawn. 0, or -1 on an overflow. */
int sim_exact_run(const sim_cfg_t *cfg, const sim_pop_t *pop, uint32_t run, sim_agg_t *agg,
                  uint64_t *words);

#endif /* DPM_SIM_CFG_H */
