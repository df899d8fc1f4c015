/* SPDX-License-Identifier: Apache-2.0 */
/* The registry (see mechs.h). */
#include "sim/devices/mechs.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/devices/sim_cfg.h"
#include "sim/scenario/scenario_parse.h"

/* One line per mechanism: X(name) registers `const sim_mech_t sim_mech_<name>`, defined by its
 * module sim/mech_<...>.c. */
#define SIM_MECHS(X)                                                                               \
    X(tuple_mr)                                                                                    \
    X(tuple_ml)                                                                                    \
    X(roc_hist)                                                                                    \
    X(roc_hist_groups)                                                                             \
    X(dpauc)                                                                                       \
    X(ustat_bins)                                                                                  \
    X(ustat_tree)                                                                                  \
    X(fedauc_rr)                                                                                   \
    X(fedauc_lap)                                                                                  \
    X(roc_hist_2agg)

#define DECLARE(name) extern const sim_mech_t sim_mech_##name;
SIM_MECHS(DECLARE)
#undef DECLARE

#define ENTRY(name) &sim_mech_##name,
static const sim_mech_t *const kMechs[] = {SIM_MECHS(ENTRY)};
#undef ENTRY

#define NMECHS (sizeof(kMechs) / sizeof(kMechs[0]))

const sim_mech_t *sim_mech_find(const char *name)
{
    for (size_t i = 0; i < NMECHS; i++) {
        if (strcmp(kMechs[i]->name, name) == 0) {
            return kMechs[i];
        }
    }
    return NULL;
}

const sim_mech_t *sim_mech_by_id(dpm_mech_id_t id)
{
    for (size_t i = 0; i < NMECHS; i++) {
        if (kMechs[i]->id == id) {
            return kMechs[i];
        }
    }
    return NULL;
}

size_t sim_mech_count(void)
{
    return NMECHS;
}

const sim_mech_t *sim_mech_at(size_t i)
{
    return i < NMECHS ? kMechs[i] : NULL;
}

/* "SOURCE:LINE: message", as the scenario parser words its errors. */
static int fail_at(const char *src, int line, char *err, size_t cap, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(err, cap, "%s:%d: %s", src, line, msg);
    return -1;
}

/* What the SDK itself refuses (group_eps >= eps, an eps too small for the quantized
 * thresholds, ...): the campaign is built at each of its eps as a run builds it (sim_cfg_init,
 * the mechanism's init calling the SDK), so the refusal comes here, with the line of its eps
 * and of the campaign's other keys, instead of from the run with no line at all. */
static int check_sdk(sim_scenario_t *sc, uint32_t ci, const char *src, char *err, size_t cap)
{
    const sim_campaign_spec_t *c = &sc->campaign[ci];
    sim_cfg_t *cfg = malloc(sizeof(*cfg));
    if (cfg == NULL) {
        return fail_at(src, c->line, err, cap, "out of memory");
    }
    char why[256] = "";
    uint32_t e = 0;
    for (; e < c->neps; e++) {
        int st = sim_cfg_init(cfg, sc, ci, e, why, sizeof(why));
        sim_cfg_release(cfg);
        if (st != 0) {
            break;
        }
    }
    free(cfg);
    if (e == c->neps) {
        return 0;
    }
    char keys[160] = "";
    size_t n = 0;
    for (int k = 0; k < HOST_CK_SCENARIO && n < sizeof(keys); k++) {
        if (c->keys_line[k] != 0) {
            int w = snprintf(keys + n, sizeof(keys) - n, "%s%s at line %d", n ? ", " : "; with ",
                             host_campaign_key_at(k)->key, c->keys_line[k]);
            n += w > 0 ? (size_t)w : 0;
        }
    }
    return fail_at(src, c->eps_line != 0 ? c->eps_line : c->line, err, cap, "%s%s", why, keys);
}

/* Each campaign of a scenario read without error, by its module. */
static int check_campaigns(sim_scenario_t *sc, const char *src, char *err, size_t cap)
{
    for (uint32_t i = 0; i < sc->ncampaigns; i++) {
        sim_campaign_spec_t *c = &sc->campaign[i];
        c->mech = sim_mech_find(c->campaign_mech->name);
        if (c->mech == NULL) { /* every name of campaign_keys.c has a module: never */
            return fail_at(src, c->line, err, cap, "campaign '%s': dpm-sim has no module for %s",
                           c->name, c->campaign_mech->name);
        }
        /* what the mechanism itself needs (metrics, bins, groups with scores, ...) */
        char msg[256];
        int line = c->line;
        if (c->mech->check(sc, c, &line, msg, sizeof(msg)) != 0) {
            return fail_at(src, line, err, cap, "campaign '%s' (%s): %s", c->name, c->mech->name,
                           msg);
        }
        if (check_sdk(sc, i, src, err, cap) != 0) {
            return -1;
        }
    }
    return 0;
}

int sim_scenario_parse(const char *text, size_t len, const char *source, sim_scenario_t *out,
                       char *err, size_t errcap)
{
    return sim_scenario_read(text, len, source, out, err, errcap) != 0
               ? -1
               : check_campaigns(out, source, err, errcap);
}

int sim_scenario_load(const char *path, sim_scenario_t *out, char *err, size_t errcap)
{
    return sim_scenario_read_file(path, out, err, errcap) != 0
               ? -1
               : check_campaigns(out, path, err, errcap);
}
